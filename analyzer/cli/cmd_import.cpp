// c3scope import: PyTorch profiler (Kineto JSON) and Nsight Systems SQLite exports into a trace.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "c3/importer/importer.h"
#include "c3/tracedb/writer.h"
#include "commands.h"
#include "format.h"
#include "output.h"

namespace c3::cli {

Action add_import(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "import",
      "Convert PyTorch profiler (Kineto JSON, .json or .json.gz) or Nsight Systems SQLite "
      "exports into one c3scope trace");
  auto inputs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("inputs", *inputs, "Trace files (one per rank)")->required();
  cmd->add_option("-o,--output", *out, "The trace to write (an existing file only with --force)")
      ->required();
  auto opts = std::make_shared<importer::Options>();
  add_force_flag(cmd, opts->force);
  cmd->add_flag("--salvage", opts->salvage,
                "A damaged or truncated .json.gz: import the events before the damage (with a "
                "warning saying how much was kept) instead of failing");
  cmd->add_flag(
      "--hta-rounding", opts->hta_rounding,
      "Kineto files with fractional-microsecond timestamps: round each GPU activity's start up "
      "and end down to whole microseconds, as Holistic Trace Analysis does (to reproduce its "
      "numbers); by default timestamps keep nanoseconds");
  return [inputs, out, opts] {
    // SIGINT/SIGTERM remove the temporary trace before the process ends.
    tracedb::install_output_cleanup();
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    const auto t0 = std::chrono::steady_clock::now();
    importer::Progress progress;
    if (tty) {
      progress = [](int64_t done, int64_t total) {
        if (total > 0) {
          std::fprintf(stderr, "\rc3scope import: %3d%%", static_cast<int>(100 * done / total));
        } else {
          std::fprintf(stderr, "\rc3scope import: %lld rows", static_cast<long long>(done));
        }
        std::fflush(stderr);
      };
    }
    importer::Stats st;
    try {
      st = importer::import_files(*inputs, *out, *opts, progress);
    } catch (const std::invalid_argument& e) {
      if (tty) std::fprintf(stderr, "\r\033[K");
      error_line(std::string("import: ") + e.what());
      return kExitUsage;
    } catch (const tracedb::WriteError& e) {
      if (tty) std::fprintf(stderr, "\r\033[K");
      error_line(std::string("import: ") + e.what());
      return kExitUsage;
    } catch (const tracedb::OutputError& e) {
      if (tty) std::fprintf(stderr, "\r\033[K");
      error_line(std::string("import: ") + e.what());
      return kExitUsage;
    }
    if (tty) std::fprintf(stderr, "\r\033[K");
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "imported " << inputs->size() << " file(s) into " << *out << ": " << st.processes
              << " process(es), " << st.kernels << " kernels, " << st.memcpys << " memcpy, "
              << st.memsets << " memset, " << st.api_calls << " API calls, " << st.ranges
              << " ranges, " << st.collectives << " collectives (" << st.events << " events, "
              << format_bytes(st.input_bytes) << " in "
              << format_duration(static_cast<int64_t>(secs * 1e9)) << ")\n";
    if (st.rounded) std::cout << "timestamps rounded to whole microseconds (--hta-rounding)\n";
    if (!st.salvaged.empty()) std::cout << "warning: --salvage: " << st.salvaged << "\n";
    if (st.malformed > 0) {
      // Each event once: under its reason (import_malformed_<reason>), or as a row rejected
      // for its times (import_rejected_<table>, below).
      std::string by;
      for (const auto& [reason, n] : st.malformed_by)
        by += (by.empty() ? "" : ", ") + std::to_string(n) + " " + reason;
      int64_t rejected = 0;
      for (const auto& [table, n] : st.rejected) rejected += n;
      if (rejected > 0)
        by += (by.empty() ? "" : ", ") + std::to_string(rejected) + " with impossible times";
      std::cout << "warning: " << st.malformed
                << " malformed event(s) skipped (stats import_malformed): " << by
                << "; the first: " << st.first_malformed << "\n";
    }
    for (const auto& [table, n] : st.rejected) {
      std::cout << "warning: of those, " << n << " " << table
                << " row(s) with impossible times rejected (stats import_rejected_" << table
                << "); the first: " << st.first_rejected.at(table) << "\n";
    }
    if (st.cpu_ops_not_kept > 0) {
      std::cout << "note: " << st.cpu_ops_not_kept
                << " PyTorch CPU op(s) (cpu_op, python_function) not kept: the trace has no table "
                   "for them (stats import_cpu_ops_not_kept)\n";
    }
    return kExitOk;
  };
}

}  // namespace c3::cli
