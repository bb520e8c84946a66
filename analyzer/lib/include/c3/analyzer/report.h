// `c3scope analyze`: every metric of a trace set, as one report, printed as text, JSON
// (schema "c3scope-analyze/1", docs/analyze.md) or CSV.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "c3/analyzer/interference.h"
#include "c3/analyzer/metrics.h"
#include "c3/analyzer/trace.h"

namespace c3::analyzer {

struct AnalyzeOptions {
  // Restrict every metric to time inside NVTX / PyTorch annotation ranges whose name matches
  // (RE2, anywhere in the name: pattern.h); empty: the whole timeline.
  std::string range;
  InterferenceOptions interference;
  // Align the processes' clocks first (align_clocks); off: the offsets already in the trace.
  bool align = true;
};

struct ScopeReport {
  int process = -1;  // Trace::processes index; -1 overall
  int device = -1;   // -1: every device of the process
  Breakdown b;
};

struct RangeReport {
  int process = 0;
  std::string name;
  int64_t start = 0, end = 0;
  Breakdown b;
};

struct Report {
  std::vector<std::string> inputs;
  int64_t kernels = 0, memcpys = 0, memsets = 0;
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
};

// Reads the kernel shapes a deferred load left pending (load_kernel_shapes), aligns the
// processes' clocks (Process::offset_ns, for the cross-rank metrics; unless o.align is off),
// then computes everything. Throws std::invalid_argument for a bad --range regular
// expression.
Report analyze(Trace& t, const std::vector<std::string>& inputs, const AnalyzeOptions& o);
// Everything but the alignment, on a trace whose offsets are already set (read-only: safe to
// run while another thread reads the trace). Report::clocks stays empty. Throws
// std::logic_error while kernel shapes are pending (Trace::pending_shapes).
Report analyze_aligned(const Trace& t, const std::vector<std::string>& inputs,
                       const AnalyzeOptions& o);

void print_text(FILE* out, const Trace& t, const Report& r);
std::string to_json(const Trace& t, const Report& r);
// One row per communication activity (the per-collective table).
std::string collectives_csv(const Trace& t, const Report& r);

}  // namespace c3::analyzer
