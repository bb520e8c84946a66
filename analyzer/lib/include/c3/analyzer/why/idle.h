// Why the GPU was idle (docs/metrics.md "Why a step takes as long as it does", idle causes):
// each gap in a scope's GPU work is put down to the host (the next activity's launch call
// started after the previous work ended), to launch overhead between back-to-back work (a
// short gap), or to something else; the parts add up to the scope's idle time. Per stream this
// is HTA's get_idle_time_breakdown (docs/analyze.md "Idle causes" says where it differs); per
// device, process and step the same rule runs over the union of the scope's streams, so the
// causes add up to Breakdown::idle.
#pragma once

#include <cstdint>
#include <vector>

#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/metrics/metrics.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

struct IdleOptions {
  // A gap the host did not cause is kernel wait when shorter than this (HTA's
  // consecutive_kernel_delay, 30 in its timestamps' unit, microseconds for PyTorch traces).
  int64_t kernel_wait_ns = 30'000;
  // TraceLens' split of idle into micro idle (gaps shorter than this) and macro idle (the
  // rest); 0: no split.
  int64_t micro_ns = 0;
};

struct IdleCauses {
  int64_t gaps = 0;         // gaps between GPU work
  int64_t idle = 0;         // their total: host_wait + kernel_wait + other + comm_wait
  int64_t host_wait = 0;    // the next activity's launch call started after the gap began
  int64_t kernel_wait = 0;  // else, gaps shorter than IdleOptions::kernel_wait_ns
  int64_t other = 0;        // the rest (dependencies, synchronization, ...)
  // Of the rest, the time before the last other rank arrived at the collective that ended the
  // gap (cross-rank: the reduce fills it in from CommGap records; 0 in a single rank's map).
  int64_t comm_wait = 0;
  int64_t micro = 0, macro = 0;  // with IdleOptions::micro_ns: micro + macro = idle
  void add(const IdleCauses& o);
  bool operator==(const IdleCauses&) const = default;
};

// A gap put down to "other" that ended at a row of a collective with a communicator and a
// sequence number: the reduce, which knows when the collective's other ranks arrived, moves the
// part of the gap before the last of them from other to comm_wait (the collective could not
// have ended earlier had this rank's work come sooner).
struct CollectiveGap {
  int32_t collective = 0;  // Trace::collectives index
  int64_t from = 0, to = 0;
  size_t row = 0;  // the row that ended it
};

// One stream of one device: its activities and the causes of the gaps between them.
struct StreamIdle {
  int process = 0;  // Trace::processes index
  int16_t device = 0;
  int32_t stream = -1;
  int64_t activities = 0;
  IdleCauses causes;
};

// Per stream of process `process` (every device), sorted by (device, stream); `window` (merged
// intervals) restricts each to the time inside it (activities clipped; gaps inside each window
// interval only).
// `gaps`, when given, receives the CollectiveGap of each stream's gaps.
std::vector<StreamIdle> stream_idle(const Trace& t, int process, const IdleOptions& o,
                                    const Intervals* window = nullptr,
                                    std::vector<CollectiveGap>* gaps = nullptr);

// The idle causes of a scope (a process, or one of its devices): over the union of its
// activities, so that idle equals breakdown(t, scope, window).idle without a window or with one
// interval.
IdleCauses idle_causes(const Trace& t, Scope scope, const IdleOptions& o,
                       const Intervals* window = nullptr,
                       std::vector<CollectiveGap>* gaps = nullptr);

// idle_causes(t, {process, -1}, o, &{w}) for each window w, reading only the rows near each one
// (as window_breakdowns).
// `gaps`, when given, receives each window's CollectiveGap records (gaps[k] for windows[k]).
std::vector<IdleCauses> window_idle_causes(const Trace& t, int process,
                                           const std::vector<Interval>& windows,
                                           const IdleOptions& o,
                                           std::vector<std::vector<CollectiveGap>>* gaps = nullptr);

}  // namespace c3::analyzer
