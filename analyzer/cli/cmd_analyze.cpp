// c3scope analyze: overlap, exposed communication, time breakdown and collective tables of one
// or many traces (docs/analyze.md).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "c3/analyzer/load.h"
#include "c3/analyzer/report.h"
#include "c3/tracedb/reader.h"
#include "commands.h"

namespace c3::cli {
namespace {

// Writes `text` to `path` through a temporary file renamed into place; one-line error.
bool write_file(const std::string& flag, const std::string& path, const std::string& text) {
  const std::string tmp = path + ".partial";
  {
    std::ofstream o(tmp, std::ios::binary | std::ios::trunc);
    o << text;
    if (!o) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      error_line("analyze: " + flag + " " + path + ": cannot write (does the folder exist?)");
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    error_line("analyze: " + flag + " " + path + ": " + ec.message());
    return false;
  }
  return true;
}

}  // namespace

Action add_analyze(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("analyze",
                         "Overlap, exposed communication, time breakdown and collectives of "
                         "traces (per rank, per device and overall)");
  struct Opts {
    std::vector<std::string> inputs;
    std::string json, csv, range, rules;
    double threshold = 0.5;
    int min_samples = 5;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("traces", o->inputs, "Trace files or folders of *.sqlite traces")->required();
  cmd->add_option("--json", o->json,
                  "Write the report as JSON (schema c3scope-analyze/1) to this file");
  cmd->add_option("--csv", o->csv, "Write the per-collective table as CSV to this file");
  cmd->add_option(
      "--range", o->range,
      "Only time inside NVTX / PyTorch annotation ranges whose name matches this regular "
      "expression (e.g. 'ProfilerStep#1[0-9]'), with a table per range");
  cmd->add_option("--rules", o->rules,
                  "Classification rules file (lines 'CLASS REGEX'; docs/analyze.md)");
  return [o] {
    analyzer::LoadOptions lo;
    std::vector<std::string> files;
    try {
      if (!o->rules.empty()) lo.rules = analyzer::Rules::from_file(o->rules);
      files = analyzer::expand_inputs(o->inputs);
    } catch (const std::invalid_argument& e) {
      error_line(std::string("analyze: ") + e.what());
      return kExitUsage;
    }
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    if (tty) {
      lo.progress = [](int64_t done, int64_t total) {
        std::fprintf(stderr, "\rc3scope analyze: loading %lld of %lld GPU activities (%d%%)",
                     static_cast<long long>(done), static_cast<long long>(total),
                     total > 0 ? static_cast<int>(100 * done / total) : 100);
        std::fflush(stderr);
      };
    }
    analyzer::Trace t;
    try {
      t = analyzer::load(files, lo);
    } catch (const tracedb::ReadError& e) {
      if (tty) std::fprintf(stderr, "\r\033[K");
      error_line(std::string("analyze: ") + e.what());
      return kExitUsage;
    } catch (const std::invalid_argument& e) {
      if (tty) std::fprintf(stderr, "\r\033[K");
      error_line(std::string("analyze: ") + e.what());
      return kExitUsage;
    }
    if (lo.progress) std::fprintf(stderr, "\r\033[K");
    analyzer::AnalyzeOptions ao;
    ao.range = o->range;
    ao.interference.overlap_fraction = o->threshold;
    ao.interference.min_samples = o->min_samples;
    analyzer::Report r;
    try {
      r = analyzer::analyze(t, files, ao);
    } catch (const std::invalid_argument& e) {
      error_line(std::string("analyze: ") + e.what());
      return kExitUsage;
    }
    if (!o->range.empty() && r.matching_ranges == 0) {
      error_line("analyze: --range '" + o->range +
                 "' matches no NVTX or annotation range in these traces");
      return kExitUsage;
    }
    analyzer::print_text(stdout, t, r);
    int rc = kExitOk;
    if (!o->json.empty() && !write_file("--json", o->json, analyzer::to_json(t, r)))
      rc = kExitUsage;
    if (!o->csv.empty() && !write_file("--csv", o->csv, analyzer::collectives_csv(t, r)))
      rc = kExitUsage;
    return rc;
  };
}

}  // namespace c3::cli
