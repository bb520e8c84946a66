// The critical path of one step of a PyTorch profiler trace as Holistic Trace Analysis 0.5.0's
// critical_path_analysis builds it (docs/analyze.md "HTA's critical path"), for comparing with
// HTA: a graph of CPU operators (nested per thread), runtime calls, kernels, copies and sets,
// whose edges weigh the time between their nodes except where HTA gives them no weight (between
// top-level operators, a blocking call's own time, synchronizations), and its longest path.
// c3scope's own path (path.h) spans the step and keeps those times as host and idle; this one
// is HTA's number, reproduced from the trace's events (CPU operators included, which the trace
// tables do not keep), with HTA's rounding to whole microseconds and its quirks.
#pragma once

#include <cstdint>
#include <string>

namespace c3::analyzer {

struct HtaPath {
  std::string input;                        // the Kineto file
  std::string annotation = "ProfilerStep";  // steps: annotations whose name contains this
  int64_t instance = 0;                     // which of them (HTA's instance_id), in file order
  std::string step;                         // the chosen annotation's name, e.g. ProfilerStep#3
  double start_us = 0, end_us = 0;          // its window (whole microseconds when rounded)
  // The sum of the weights along the path (what HTA's path edges add up to), and the longest
  // distance the path was chosen by (negative weights of -1 us or less taken as 0, as HTA does
  // before networkx's dag_longest_path): they differ only where the path has a negative edge.
  double length_us = 0, longest_us = 0;
  // The path's weights by HTA's bound_by: CPU, launch delay (kernel start minus its launch
  // call's start), kernel-kernel delay on a stream, GPU compute, NCCL kernels.
  double cpu_us = 0, launch_us = 0, kernel_kernel_us = 0, compute_us = 0, communication_us = 0;
  int64_t nodes = 0, edges = 0, path_edges = 0;
  bool rounded = false;  // fractional timestamps: rounded to whole microseconds, as HTA does
  // Why HTA 0.5.0 would refuse the graph (a cycle, a synchronization edge within one stream):
  // then no length; "" otherwise.
  std::string refused;
};

// HTA's critical path of step `instance` of `annotation` in one PyTorch profiler trace (one
// rank). Throws std::invalid_argument (one line naming the file) when the file is not whole
// Kineto JSON or has no such step.
HtaPath hta_critical_path(const std::string& kineto_file, int64_t instance = 0,
                          const std::string& annotation = "ProfilerStep");

}  // namespace c3::analyzer
