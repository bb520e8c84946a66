// c3scope analyze: overlap, exposed communication, time breakdown, steps and collective tables of
// traces of any format and of summaries (docs/analyze.md), through the analyzer's pipeline:
// open each input, map it to rank summaries, reduce.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <tuple>

#include "c3/analyzer/metrics/pattern.h"
#include "c3/analyzer/summary/distributed.h"
#include "c3/analyzer/summary/pipeline.h"
#include "c3/analyzer/why/hta_path.h"
#include "c3/analyzer/why/whatif.h"
#include "commands.h"
#include "output.h"
#include "trace_flags.h"

namespace c3::cli {
namespace {

// C3SCOPE_MPI_STATS=FILE: how each process's part went, as JSON (perf/scale, docs/scale.md).
void write_mpi_stats(const analyzer::DistributedResult& res) {
  const char* path = std::getenv("C3SCOPE_MPI_STATS");
  if (path == nullptr || *path == '\0') return;
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    error_line("analyze: warning: C3SCOPE_MPI_STATS: cannot write '" + std::string(path) + "'");
    return;
  }
  // Process 0's peak with its outputs written (the report's JSON is made then).
  long long final_kb = 0;
  if (FILE* st = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, st) != nullptr) {
      if (std::strncmp(line, "VmHWM:", 6) == 0) final_kb = std::atoll(line + 6);
    }
    std::fclose(st);
  }
  std::fprintf(f,
               "{\"processes\": %zu, \"reduce_s\": %.6f, \"reduce_kb\": %lld, \"receive_s\": %.6f, "
               "\"report_s\": %.6f, \"process_0_final_peak_kb\": %lld, \"per_process\": [",
               res.stats.size(), res.reduce_s, static_cast<long long>(res.reduce_kb), res.receive_s,
               res.report_s, final_kb);
  for (size_t i = 0; i < res.stats.size(); ++i) {
    const analyzer::ProcessStats& x = res.stats[i];
    std::fprintf(f,
                 "%s{\"map_s\": %.6f, \"cross_s\": %.6f, \"paths_s\": %.6f, \"peak_kb\": %lld, "
                 "\"inputs\": %lld, \"records\": %lld}",
                 i == 0 ? "" : ", ", x.map_s, x.cross_s, x.paths_s,
                 static_cast<long long>(x.peak_kb), static_cast<long long>(x.inputs),
                 static_cast<long long>(x.records));
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

std::string host_name() {
  char h[256] = {};
  if (::gethostname(h, sizeof h - 1) != 0) return "unknown";
  return h;
}

}  // namespace

Action add_analyze(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "analyze",
      "Overlap, exposed communication, time breakdown, steps and collectives of traces "
      "(c3scope, PyTorch profiler, Nsight Systems) or summaries: per rank, per device and overall");
  struct Opts {
    std::vector<std::string> inputs;
    std::string json, csv, range, step, summary, local;
    std::vector<std::string> what_if;
    double threshold = 0.5;
    int min_samples = 5;
    double kernel_wait_us = 30, micro_idle_us = 0, runtime_cutoff_us = 50, delay_cutoff_us = 100;
    int64_t queue_limit = 1024;
    int sequence_length = 3;
    bool steps = false, force = false, salvage = false, why = false, hta_path = false;
    int64_t hta_step = 0;
    TraceFlags trace;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("inputs", o->inputs,
                  "Traces (c3scope, PyTorch profiler JSON, Nsight Systems SQLite exports), folders "
                  "of them, or summary files (--summary)");
  cmd->add_option("--local", o->local,
                  "Under c3scope-mpi: the traces are in this folder on each node, each process "
                  "reading its own node's (docs/scale.md); instead of inputs");
  cmd->add_option("--json", o->json,
                  "Write the report as JSON (schema c3scope-analyze/1) to this file");
  cmd->add_option("--csv", o->csv, "Write the per-collective table as CSV to this file");
  cmd->add_option("--summary", o->summary,
                  "Write the rank summaries (schema c3scope-summary/5; a CI baseline, and an "
                  "input of analyze) to this file, gzip-compressed when it ends in .gz");
  cmd->add_option(
      "--range", o->range,
      "Only time inside NVTX / PyTorch annotation ranges whose name matches this regular "
      "expression (RE2, e.g. 'ProfilerStep#1[0-9]'), with a table per range");
  cmd->add_option("--step", o->step,
                  "Steps are the NVTX / annotation ranges whose name matches this regular "
                  "expression (default: ProfilerStep#N, else c3bench cases)");
  cmd->add_flag("--steps", o->steps, "Print the per-step table");
  auto* threshold =
      cmd->add_option(
             "--overlap-threshold", o->threshold,
             "Interference: the share of an operation's duration under the other kind that "
             "counts as overlapped")
          ->capture_default_str()
          ->check(CLI::Range(0.0, 1.0));
  auto* min_samples =
      cmd->add_option("--min-samples", o->min_samples,
                      "Interference: fewer samples alone or overlapped than this give no slowdown")
          ->capture_default_str()
          ->check(CLI::Range(1, 1 << 30));
  cmd->add_flag("--why", o->why,
                "Also print idle causes per stream, launch statistics per kernel and queue "
                "length per stream");
  // Thresholds in microseconds, as HTA's (its defaults); kept in summaries like the others.
  constexpr double kMaxUs = 1e12;  // 11.6 days: every threshold in ns stays within int64 sums
  std::vector<CLI::Option*> why_flags = {
      cmd->add_option("--kernel-wait-us", o->kernel_wait_us,
                      "Idle causes: a gap the host did not cause is kernel wait when shorter "
                      "than this (HTA's consecutive_kernel_delay)")
          ->capture_default_str()
          ->check(CLI::Range(0.0, kMaxUs)),
      cmd->add_option("--micro-idle-us", o->micro_idle_us,
                      "Idle causes: also split idle into micro (gaps shorter than this) and "
                      "macro idle, as TraceLens does; 0: no split")
          ->capture_default_str()
          ->check(CLI::Range(0.0, kMaxUs)),
      cmd->add_option("--runtime-cutoff-us", o->runtime_cutoff_us,
                      "Launch statistics: launch calls longer than this are runtime outliers")
          ->capture_default_str()
          ->check(CLI::Range(0.0, kMaxUs)),
      cmd->add_option("--delay-cutoff-us", o->delay_cutoff_us,
                      "Launch statistics: launch delays longer than this are delay outliers")
          ->capture_default_str()
          ->check(CLI::Range(0.0, kMaxUs)),
      cmd->add_option("--queue-limit", o->queue_limit,
                      "Queue length: the per-stream launch queue's limit, time at or above which "
                      "counts as blocked on a full queue")
          ->capture_default_str()
          ->check(CLI::Range(int64_t{1}, int64_t{1} << 40)),
      cmd->add_option("--sequence-length", o->sequence_length,
                      "Frequent kernel sequences: kernels per sequence (2 to 8)")
          ->capture_default_str()
          ->check(CLI::Range(2, analyzer::kMaxSequenceLength))};
  why_flags.push_back(
      cmd->add_option("--what-if", o->what_if,
                      "Replay each step's critical path with a change and print the step time it "
                      "gives (repeatable, up to 16): compute=-30%, comm=hidden, host=-50%, "
                      "kernel:REGEX=-50%, nccl:AllReduce=-50%, rank:5=on-time (docs/analyze.md "
                      "\"What-if\")"));
  auto* hta_path =
      cmd->add_flag("--hta-critical-path", o->hta_path,
                    "Also compute, for each PyTorch profiler input, the critical path of one "
                    "ProfilerStep as Holistic Trace Analysis 0.5.0's critical_path_analysis builds "
                    "it (its length and parts; for comparing with HTA: docs/analyze.md)");
  cmd->add_option("--hta-step", o->hta_step,
                  "--hta-critical-path: which ProfilerStep annotation, counted from 0 in file "
                  "order (HTA's instance_id)")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))
      ->needs(hta_path);
  add_trace_flags(cmd, o->trace);
  cmd->add_flag("--salvage", o->salvage,
                "A damaged or truncated .json.gz: analyze the events before the damage (counted "
                "as skipped) instead of failing");
  add_force_flag(cmd, o->force);
  return [o, threshold, min_samples, why_flags] {
    analyzer::PipelineOptions po;
    std::vector<analyzer::Input> inputs;
    std::vector<std::string> notes;
    // Under c3scope-mpi every process runs this; process 0 alone resolves shared inputs, opens
    // the outputs and prints.
    analyzer::Comm* comm = g_comm;
    const bool root = comm == nullptr || comm->rank() == 0;
    const bool local = !o->local.empty();
    std::string failure;
    try {
      if (o->inputs.empty() == o->local.empty()) {
        throw std::invalid_argument(
            local ? "--local names each node's folder of traces: give it instead of inputs, not "
                    "with them"
                  : "give the traces, folders or summary files to analyze");
      }
      apply_trace_flags(o->trace, po);
      // Bad patterns are found before any input is read.
      if (!o->range.empty()) analyzer::Pattern::compile(o->range, "--range");
      if (!o->step.empty()) analyzer::Pattern::compile(o->step, "--step");
      if (o->what_if.size() > 16) throw std::invalid_argument("at most 16 --what-if");
      for (const std::string& w : o->what_if)
        po.analyze.what_ifs.push_back(analyzer::parse_what_if(w));
      if (local && o->hta_path) {
        throw std::invalid_argument(
            "--hta-critical-path reads every input on process 0, --local's are on each node: "
            "give the files as inputs (on a shared file system), or leave the flag out");
      }
      if (root && !local) inputs = analyzer::resolve_inputs(o->inputs, &notes);
      if (local) {
        // A node without the folder, or with nothing in it, has no share (the others do).
        std::error_code ec;
        bool empty = !std::filesystem::is_directory(o->local, ec);
        if (!empty) {
          empty = true;
          for (const auto& e : std::filesystem::directory_iterator(o->local, ec)) {
            if (e.is_regular_file(ec)) {
              empty = false;
              break;
            }
          }
        }
        try {
          if (!empty) inputs = analyzer::resolve_inputs({o->local}, &notes);
        } catch (const std::exception& e) {
          throw std::invalid_argument(comm != nullptr ? "on host " + host_name() + ": " + e.what()
                                                      : std::string(e.what()));
        }
        if (empty && comm == nullptr)
          throw std::invalid_argument("--local '" + o->local + "' is not a folder with files");
      }
      if (o->hta_path) {
        for (const analyzer::Input& in : inputs) {
          if (in.format != analyzer::InputFormat::kineto) {
            throw std::invalid_argument("--hta-critical-path reads PyTorch profiler traces; '" +
                                        in.path + "' is a " +
                                        analyzer::input_format_name(in.format) +
                                        " (leave the flag out, or give "
                                        "PyTorch profiler JSON files only)");
          }
        }
      }
    } catch (const std::exception& e) {
      failure = std::string("analyze: ") + e.what();
    }
    if (failed_anywhere(comm, failure)) return kExitUsage;
    for (const std::string& n : notes) error_line("analyze: warning: " + n);
    po.open.salvage = o->salvage;
    // Ctrl-C / SIGTERM stop the map at the next check; the temporary conversions and the
    // partial outputs are removed on the way out. Installed before any output is opened, so no
    // signal finds a temporary that nothing removes.
    po.open.cancel = stop_on_signals();
    // Outputs are opened (as temporaries) before the work, so a refused path fails at once.
    tracedb::OutputRules rules;
    rules.force = o->force;
    rules.inputs = o->inputs;
    for (const auto& in : inputs) rules.inputs.push_back(in.path);
    if (!o->trace.rules.empty()) rules.inputs.push_back(o->trace.rules);
    // Refused together when two name one file; committed together at the end.
    std::unique_ptr<tracedb::OutputSet> outputs;
    if (root) {
      outputs = open_outputs(
          "analyze", {{"--json", o->json}, {"--summary", o->summary}, {"--csv", o->csv}}, rules);
    }
    if (comm != nullptr ? comm->any(root && !outputs) : !outputs) return kExitUsage;
    tracedb::OutputFile* json_out = root ? outputs->file("--json") : nullptr;
    tracedb::OutputFile* summary_out = root ? outputs->file("--summary") : nullptr;
    tracedb::OutputFile* csv = root ? outputs->file("--csv") : nullptr;
    po.analyze.range = o->range;
    po.analyze.step = o->step;
    po.analyze.interference.overlap_fraction = o->threshold;
    po.analyze.interference.min_samples = o->min_samples;
    // A summary input's options fill those not given (map_inputs).
    po.given.range = !o->range.empty();
    po.given.step = !o->step.empty();
    po.given.overlap_fraction = threshold->count() > 0;
    po.given.min_samples = min_samples->count() > 0;
    auto ns = [](double us) { return static_cast<int64_t>(std::llround(us * 1e3)); };
    po.analyze.idle.kernel_wait_ns = ns(o->kernel_wait_us);
    po.analyze.idle.micro_ns = ns(o->micro_idle_us);
    po.analyze.launch.runtime_cutoff_ns = ns(o->runtime_cutoff_us);
    po.analyze.launch.delay_cutoff_ns = ns(o->delay_cutoff_us);
    po.analyze.queue.limit = o->queue_limit;
    po.analyze.sequences.length = o->sequence_length;
    po.given.kernel_wait = why_flags[0]->count() > 0;
    po.given.micro_idle = why_flags[1]->count() > 0;
    po.given.runtime_cutoff = why_flags[2]->count() > 0;
    po.given.delay_cutoff = why_flags[3]->count() > 0;
    po.given.queue_limit = why_flags[4]->count() > 0;
    po.given.sequence_length = why_flags[5]->count() > 0;
    po.given.what_if = why_flags[6]->count() > 0;
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    if (tty && inputs.size() > 1 && comm == nullptr) {
      po.progress = [](size_t done, size_t total, const std::string&) {
        std::fprintf(stderr, "\rc3scope analyze: %zu of %zu inputs mapped", done, total);
        std::fflush(stderr);
      };
    }
    if (csv) {
      csv->write(analyzer::collectives_csv_header());
      po.csv = [csv](const std::string& rows) { csv->write(rows); };
    }
    std::string summary_text;
    std::optional<analyzer::Report> report;
    std::optional<analyzer::DistributedResult> stats;  // C3SCOPE_MPI_STATS, once written
    if (comm != nullptr) {
      // Each process maps its share; process 0 reduces (docs/scale.md).
      analyzer::DistributedResult res;
      try {
        const analyzer::Deal deal = analyzer::deal_inputs(*comm, inputs, local, host_name());
        if (deal.inputs.empty()) {  // the same on every process
          error_line("analyze: --local '" + o->local +
                     "': no process found a trace or a summary in its folder");
          return kExitUsage;
        }
        if (root) inputs = deal.inputs;
        res = analyzer::run_distributed(*comm, deal, po, {!o->csv.empty(), !o->summary.empty()});
      } catch (const std::exception& e) {
        // Its own: the other processes may be waiting for it.
        comm->fail(std::string("analyze: ") + e.what());
        error_line(std::string("analyze: ") + e.what());
        return kExitUsage;
      }
      if (!res.ok) {
        if (res.error.empty()) {
          error_line("analyze: interrupted; nothing was written");
          return 130;
        }
        error_line("analyze: " + res.error);
        return kExitUsage;
      }
      if (!root) return kExitOk;
      po.analyze = res.used;
      if (csv) csv->write(res.csv);
      std::string().swap(res.csv);  // written: not kept with the stats
      summary_text = std::move(res.summary);
      if (summary_out && o->summary.ends_with(".gz"))
        summary_text = analyzer::gzip_bytes(summary_text);
      report = std::move(*res.report);
      res.report.reset();
      stats = std::move(res);
    }
    std::vector<analyzer::RankSummary> summaries;
    if (!report) {
      try {
        summaries = analyzer::map_inputs(inputs, po, &po.analyze);
      } catch (const analyzer::Cancelled&) {
        if (po.progress) std::fprintf(stderr, "\r\033[K");
        error_line("analyze: interrupted; nothing was written");
        return 130;
      } catch (const std::exception& e) {
        if (po.progress) std::fprintf(stderr, "\r\033[K");
        error_line(std::string("analyze: ") + e.what());
        return kExitUsage;
      }
    }
    if (po.progress) std::fprintf(stderr, "\r\033[K");
    if (!report) {
      // The summary file is made before the reduce takes the summaries' steps over.
      if (summary_out) {
        summary_text = analyzer::summaries_to_json(summaries, po.analyze);
        if (o->summary.ends_with(".gz")) summary_text = analyzer::gzip_bytes(summary_text);
      }
      report = analyzer::reduce(std::move(summaries), analyzer::input_names(inputs), po.analyze,
                                po.analyze.align);
    }
    analyzer::Report& r = *report;
    if (o->hta_path) {
      try {
        for (const analyzer::Input& in : inputs)
          r.hta_paths.push_back(analyzer::hta_critical_path(in.path, o->hta_step));
      } catch (const std::exception& e) {
        error_line(std::string("analyze: --hta-critical-path: ") + e.what() +
                   "; nothing was written");
        return kExitUsage;
      }
    }
    if (po.open.cancel->load()) {  // a signal after the map: nothing is written either
      error_line("analyze: interrupted; nothing was written");
      return 130;
    }
    if (!o->range.empty() && r.matching_ranges == 0) {
      error_line("analyze: --range '" + o->range +
                 "' matches no NVTX or annotation range in these traces");
      return kExitUsage;
    }
    if (!o->step.empty() && r.job_steps.empty()) {
      error_line("analyze: --step '" + o->step +
                 "' matches no NVTX or annotation range in these traces");
      return kExitUsage;
    }
    analyzer::PrintOptions print;
    print.steps = o->steps;
    print.why = o->why;
    // The text report only when no output file is standard output (--json /dev/stdout | jq).
    if (!outputs->to_stdout()) analyzer::print_text(stdout, r, print);
    if (json_out) analyzer::write_json(r, [&](std::string_view piece) { json_out->write(piece); });
    if (summary_out) summary_out->write(summary_text);
    const int rc = commit_outputs("analyze", *outputs) ? kExitOk : kExitUsage;
    if (stats) write_mpi_stats(*stats);
    return rc;
  };
}

}  // namespace c3::cli
