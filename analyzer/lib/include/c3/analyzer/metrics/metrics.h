// Overlap and time breakdown (docs/metrics.md "Overlap and time breakdown", "Collective
// bandwidth"): pure functions over a loaded Trace. A scope is one device of one process, one
// process (the union over its devices), or everything (sums over processes, see `overall`).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "c3/analyzer/metrics/distribution.h"
#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

struct Scope {
  int process = -1;  // Trace::processes index, -1: every process
  int device = -1;   // device ordinal, -1: every device of the process
};

struct Breakdown {
  int64_t activities = 0;
  int64_t first = 0, last = 0;           // first start, last end (clipped to the window)
  int64_t span = 0;                      // last - first (inside the window)
  int64_t busy = 0;                      // |U(all)|
  int64_t idle = 0;                      // span - busy
  std::array<int64_t, kClasses> time{};  // |U(class)|, indexed by Class
  int64_t overlap = 0;                   // |U(comm) ∩ U(compute)|
  double overlap_pct = 0;                // 100 * overlap / |U(comm)|; 0 without communication
  int64_t exposed_comm = 0;              // |U(comm) \ U(compute)|
  int64_t exposed_memcpy = 0;            // |(U(memory) \ U(compute)) \ U(comm)|
  int64_t exposed_other = 0;             // |U(other) \ U(compute, comm, memory)|
  int64_t non_compute = 0;               // span - compute - idle
  // Kernel-type breakdown: time during which exactly this set of classes is active
  // (bit i = Class i), HTA get_gpu_kernel_breakdown.
  std::array<int64_t, 1 << kClasses> by_mask{};

  int64_t compute() const { return time[static_cast<int>(Class::compute)]; }
  int64_t comm() const { return time[static_cast<int>(Class::communication)]; }
  int64_t memory() const { return time[static_cast<int>(Class::memory)]; }
  // Adds another scope's times (overall = sum over processes); overlap_pct recomputed.
  void add(const Breakdown& o);
};

// "COMPUTATION+COMMUNICATION" style name of a class mask (HTA's kernel-type names).
std::string mask_name(int mask);

// The breakdown of one scope; `window` (merged intervals) restricts it to those times.
Breakdown breakdown(const Trace& t, Scope scope, const Intervals* window = nullptr);
// A breakdown restricted to ranges (--range, a selection in the GUI) measured over the time
// inside them: span = their length, idle = what GPU work leaves of it (not first to last
// activity, which counts the gaps between ranges and is 0 without GPU work).
void span_over(Breakdown& b, const Intervals& window);
// breakdown(t, {process, -1}, &{w}) for each window w, reading only the rows near each window
// (per device, a binary search bounded by its longest activity): steps cost their own rows, not
// the whole trace each.
std::vector<Breakdown> window_breakdowns(const Trace& t, int process,
                                         const std::vector<Interval>& windows);
// Every process's breakdown summed (span, idle, times, overlap); overlap_pct = 100 * Σoverlap /
// Σcomm. Unions across processes (or GPUs) would not mean anything, so this is a sum.
Breakdown overall(const Trace& t, const Intervals* window = nullptr);

// Per-collective overlap (Nsight Systems recipe nccl_gpu_overlap_trace): for each communication
// activity k, |k ∩ U(compute on the same device)| / dur(k).
struct CommOverlap {
  size_t activity = 0;  // Activities row
  int64_t duration = 0;
  int64_t overlapped = 0;
  double pct() const {
    return duration > 0 ? 100.0 * static_cast<double>(overlapped) / static_cast<double>(duration)
                        : 0.0;
  }
};
std::vector<CommOverlap> comm_overlap(const Trace& t, Scope scope,
                                      const Intervals* window = nullptr);

// The collective operation of a communication activity: the linked NCCL call's op, else parsed
// from an NCCL kernel name (ncclDevKernel_AllReduce_Sum_f32_RING_LL -> AllReduce,
// ncclKernel_SendRecv... -> SendRecv), else "unknown".
std::string collective_op(const Trace& t, size_t activity);

// nccl-tests bus bandwidth factor (docs/metrics.md "Collective bandwidth"); 1 for unknown ops. By
// op name (collective.op): c3/common/nccl_types.h's busbw_factor.
double busbw_factor(const std::string& op, int nranks);
// S as nccl-tests counts it from NCCL's count x size: AllGather and ReduceScatter pass the
// per-rank count, so S = bytes * nranks; the others pass the whole buffer (nccl_types.h's
// nccl_tests_bytes, by op name).
int64_t nccl_tests_size(const std::string& op, int64_t bytes, int nranks);

// The nccl-tests size bucket [bucket, 2 bucket) that holds S = `bytes`: the largest power of two
// <= bytes; 0 (unknown) when bytes <= 0. Defined for every int64: the top bucket, 2^62, holds
// every size from 2^62 to 2^63-1 (its double is past int64).
int64_t size_bucket_of(int64_t bytes);
// The end of a bucket: its double, INT64_MAX for the top bucket (2^62); 0 for 0 (unknown).
int64_t size_bucket_end(int64_t bucket);

// Collective summary by op and size bucket (powers of two: [2^k, 2^(k+1))).
struct CollectiveGroup {
  std::string op;
  int64_t bucket_lo = 0, bucket_hi = 0;  // bytes (S); 0,0 when sizes are unknown
  int64_t count = 0;
  int64_t total_ns = 0;
  double mean_overlap_pct = 0;
  double median_algbw = 0, median_busbw = 0;  // bytes/s; 0 when sizes are unknown
};
std::vector<CollectiveGroup> collective_summary(const Trace& t,
                                                const std::vector<CommOverlap>& rows);

// The same groups in the mergeable form rank summaries carry (summary.h): counts, sums and the
// bandwidths' distributions. collective_summary = collective_groups(collective_stats(...)).
struct CollectiveStat {
  std::string op;
  int64_t bucket = 0;  // bytes (S), a power of two; 0 when sizes are unknown
  int64_t count = 0, total_ns = 0;
  double overlap_pct_sum = 0;  // sum of the activities' overlap %
  Distribution algbw, busbw;   // bytes/s, activities with a known size
  Distribution duration;       // ns, every activity (summary/2; empty in older summaries)
  void merge(const CollectiveStat& o);
};
// Sorted by (op, bucket).
std::vector<CollectiveStat> collective_stats(const Trace& t, const std::vector<CommOverlap>& rows);
std::vector<CollectiveGroup> collective_groups(const std::vector<CollectiveStat>& stats);

// ---- Kernels by normalized name (what `compare` matches across runs) ----

// A kernel name with what changes between builds of the same code folded away, so that one
// kernel keeps its name across runs: NCCL's kernels become "nccl <Op>" (ncclKernel_AllReduce_
// RING_LL_Sum_float and ncclDevKernel_AllReduce_Sum_f32_RING_LL are both "nccl AllReduce"),
// template arguments become "<>", the parameter list and a leading return type ("void ") are
// dropped, and runs of spaces become one.
std::string normalized_kernel_name(std::string_view name);

// The kernels of one normalized name and class: their count, total and durations.
struct KernelStat {
  std::string name;  // normalized_kernel_name
  Class cls = Class::compute;
  int64_t count = 0, total_ns = 0;
  Distribution duration;  // ns
  void merge(const KernelStat& o);
};
// Process `process`'s kernels (those starting inside `window` when one is given), sorted by
// (name, class).
std::vector<KernelStat> kernel_stats(const Trace& t, int process,
                                     const Intervals* window = nullptr);

}  // namespace c3::analyzer
