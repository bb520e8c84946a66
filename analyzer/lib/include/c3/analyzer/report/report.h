// `c3scope analyze`: every metric of a trace set, as one report, printed as text, JSON
// (schema "c3scope-analyze/1", docs/analyze.md) or CSV.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "c3/analyzer/metrics/interference.h"
#include "c3/analyzer/metrics/metrics.h"
#include "c3/analyzer/open/trace.h"
#include "c3/analyzer/why/hta_path.h"
#include "c3/analyzer/why/idle.h"
#include "c3/analyzer/why/launch.h"
#include "c3/analyzer/why/path_join.h"
#include "c3/analyzer/why/queue.h"
#include "c3/analyzer/why/sequences.h"

namespace c3::analyzer {

struct AnalyzeOptions {
  // Restrict every metric to time inside NVTX / PyTorch annotation ranges whose name matches
  // (RE2, anywhere in the name: pattern.h); empty: the whole timeline.
  std::string range;
  // Steps: ranges whose name matches (RE2); empty: ProfilerStep#N ranges when present, else
  // c3bench cases (summary.h).
  std::string step;
  InterferenceOptions interference;
  // What the classification and the Kineto import were (rules_text, --hta-rounding): they
  // change every number, so a summary records them and is not mixed with other ones.
  std::string classification = "default";
  bool hta_rounding = false;
  // Why the GPU waited (why/): idle causes' thresholds, launch outlier cutoffs, the queue limit.
  IdleOptions idle;
  LaunchOptions launch;
  QueueOptions queue;
  SequenceOptions sequences;
  // What-ifs replayed on each step's critical path (analyze --what-if; why/whatif.h).
  std::vector<WhatIf> what_ifs;
  // Computes them (off: the map leaves them out, as before issue 25; the benchmark's baseline).
  bool why = true;
  // Align the processes' clocks first (align_clocks); off: the offsets already in the trace.
  bool align = true;
};

struct ScopeReport {
  int process = -1;  // Trace::processes index; -1 overall
  int device = -1;   // -1: every device of the process
  Breakdown b;
  IdleCauses idle;  // the causes of b.idle (Report::why)
  // The scope's GPU activity came from c3bench's simulated node (is_simulated): its numbers are
  // the model's predictions, not measurements. Overall: any process's did.
  bool simulated = false;
};

// Whether a process ran on c3bench's simulated node (docs/sim-model.md): its trace clock is the
// node's virtual clock ("simulated node virtual clock ..."), a device is named "Simulated ...",
// or its c3bench results say so (bench_run.simulated). Facts every trace and summary carries.
bool is_simulated(const Process& p, const std::vector<Device>& devices,
                  const std::vector<BenchResult>& bench);

struct RangeReport {
  int process = 0;
  std::string name;
  int64_t start = 0, end = 0;
  Breakdown b;
};

// One step of one rank (docs/metrics.md "Steps"): its window and the breakdown of the activities
// clipped to it; the step time is end - start.
struct StepSample {
  int64_t index = 0;  // N of ProfilerStep#N; otherwise the order of the step on its rank
  std::string name;
  int64_t start = 0, end = 0;  // the rank's trace clock
  Breakdown b;
  IdleCauses idle;  // the causes of b.idle (summaries of schema 4 on)
  RankPath path;    // its critical path (why/path.h; schema 4 on)
};

// A step of the job: the same step (by index) on every rank that has it.
struct JobStep {
  int64_t index = 0;
  std::string name;
  int ranks = 0;
  int64_t step_ns = 0;  // the longest of the ranks' step times
  Breakdown mean;       // the ranks' breakdowns, averaged (each field / ranks)
  IdleCauses idle;      // the ranks' idle causes, averaged likewise
};

struct Report {
  std::vector<std::string> inputs;
  std::vector<Process> process_info;  // indexed like ScopeReport::process (labels, sources)
  int64_t skipped = 0;                // rows the loader could not use, with the first one
  std::string first_skipped;
  // Trace::cpu_collectives: CPU-side collectives seen and not analysed (from summary files of
  // schema 3 on).
  std::map<std::pair<std::string, std::string>, int64_t> cpu_collectives;
  std::vector<BenchResult> bench;
  int64_t kernels = 0, memcpys = 0, memsets = 0;
  // Every per-process list below is in rank order (rank_order: rank 2 before rank 10); the
  // process indices are still those of process_info (and of the trace).
  std::vector<int> order;              // process_info indices in rank order
  std::vector<ScopeReport> processes;  // one per process
  std::vector<ScopeReport> devices;    // one per (process, device)
  ScopeReport overall;
  std::vector<RangeReport> ranges;  // with --range: each matching range instance
  int64_t matching_ranges = 0;
  std::vector<CommOverlap> comm;  // per communication activity
  std::vector<CollectiveGroup> collectives;
  std::vector<InterferenceRow> interference;
  std::vector<Contention> contention;
  std::vector<ClockOffset> clocks;
  CrossRank cross;
  std::string step_source;                     // how steps were found; empty: no steps
  std::vector<std::vector<StepSample>> steps;  // per process (process_info index)
  std::vector<JobStep> job_steps;              // by index
  // Why (why/): whether every rank's summary has idle causes, launch statistics and queues
  // (summaries of schema 4 on, and every trace); the per-stream rows in rank order, launches
  // merged over ranks by signature.
  bool why = false;
  std::vector<StreamIdle> streams;
  std::vector<LaunchStat> launches;
  std::vector<StreamQueue> queues;
  bool launch_calls = false;  // some rank's trace carries launch calls
  // Every rank's summary kept the gaps that communication wait needs (schema 5 on).
  bool comm_wait_known = false;
  // The critical path of each job step across ranks (why/path_join.h), by step index; without
  // steps, one of the whole run (index -1, "whole run").
  std::vector<StepPath> paths;
  std::vector<WhatIf> what_ifs;
  // The thresholds they were computed with (AnalyzeOptions).
  IdleOptions idle_options;
  LaunchOptions launch_options;
  QueueOptions queue_options;
  SequenceOptions sequence_options;
  // Frequent kernel sequences of the job (the ranks' kept ones merged), most frequent first, and
  // the occurrences counted and not counted (why/sequences.h); schema 5 summaries on.
  bool sequences_known = false;
  std::vector<KernelSequence> sequences;
  int64_t sequence_occurrences = 0, sequences_uncounted = 0;
  // --hta-critical-path: HTA's critical path of one step of each PyTorch input (hta_path.h),
  // computed from the files beside the pipeline (not from summaries); empty otherwise.
  std::vector<HtaPath> hta_paths;
};

struct PrintOptions {
  bool steps = false;  // the per-step table
  bool why = false;    // idle causes per stream, launch statistics and queues (--why)
};

// Reads the kernel shapes a deferred load left pending (load_kernel_shapes), then maps every
// process to its summary and reduces them (summary.h), aligning the processes' clocks
// (Process::offset_ns is set from the alignment, for the cross-rank metrics; unless o.align is
// off). Report::comm holds the per-activity rows. Throws std::invalid_argument for a bad --range
// or --step regular expression.
Report analyze(Trace& t, const std::vector<std::string>& inputs, const AnalyzeOptions& o);
// Everything but the alignment, on a trace whose offsets are already set (read-only: safe to
// run while another thread reads the trace). Report::clocks stays empty. Throws
// std::logic_error while kernel shapes are pending (Trace::pending_shapes).
Report analyze_aligned(const Trace& t, const std::vector<std::string>& inputs,
                       const AnalyzeOptions& o);

// Puts the report's per-process lists (processes, devices, ranges, contention, c3bench results,
// clock offsets) in rank order and sets Report::order; the reduce calls it.
void order_by_rank(Report& r);

void print_text(FILE* out, const Report& r, const PrintOptions& po = {});
// One line per backend of CPU-side collectives seen (Report::cpu_collectives), saying that they
// are not analysed: "CPU-side collectives (gloo): 60 all_reduce, 2 broadcast seen; not analysed:
// ...". analyze's text report and info print them.
std::vector<std::string> cpu_collective_lines(
    const std::map<std::pair<std::string, std::string>, int64_t>& seen);
std::string to_json(const Report& r);
// The same text, written to `sink` in pieces as it is made (a report of thousands of ranks is
// never held whole).
void write_json(const Report& r, const std::function<void(std::string_view)>& sink);
// One row per communication activity (the per-collective table): the header, then rows.
std::string collectives_csv(const Trace& t, const Report& r);
std::string collectives_csv_header();
std::string collectives_csv_rows(const Trace& t, const std::vector<CommOverlap>& rows);

}  // namespace c3::analyzer
