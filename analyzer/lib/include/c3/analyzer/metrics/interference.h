// Interference, contention and cross-rank metrics (docs/metrics.md "Interference", "Contention",
// "Across ranks" in cross_rank.h): pure functions over a loaded Trace.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "c3/analyzer/metrics/cross_rank.h"  // the cross-rank metrics, once declared here
#include "c3/analyzer/metrics/distribution.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

// ---- Interference: durations alone vs overlapped, per operation class ----
struct InterferenceOptions {
  double overlap_fraction = 0.5;  // "overlapped": at least this share of the duration coincides
  int min_samples = 5;            // per side; fewer: "not enough samples"
};

struct InterferenceRow {
  std::string signature;  // kernel: "name <<<grid, block>>>"; collective: "AllReduce 1M..2M"
  Class cls = Class::compute;
  int64_t alone = 0, overlapped = 0,
          partial = 0;  // counts (partial: some overlap, below the threshold)
  double median_alone_ns = 0, median_overlapped_ns = 0;
  bool enough = false;             // both sides have min_samples
  double slowdown = 0;             // median(overlapped) / median(alone) - 1
  double ci_low = 0, ci_high = 0;  // 95% interval of the slowdown (slowdown_interval)
  int64_t total_ns = 0;            // all instances (sorting key)
  // A communication kernel's time includes waiting for the other ranks (their arrival skew),
  // which overlap with compute does not cause. Point-to-point operations (Send, Recv,
  // SendRecv) mostly wait for their one peer: they get no verdict. Collectives keep theirs,
  // labelled as including peer waits.
  enum class PeerWait : uint8_t { none, collective, point_to_point };
  PeerWait peer_wait = PeerWait::none;
  // A number to show: enough samples, and not a point-to-point wait.
  bool verdict() const { return enough && peer_wait != PeerWait::point_to_point; }
};

// The signature activity i is grouped under: "name <<<grid, block>>>" for compute kernels,
// "AllReduce 1M..2M" (op and nccl-tests size bucket) for communication, empty otherwise.
std::string interference_signature(const Trace& t, size_t i);

// "1M..2M": the nccl-tests size bucket (a power of two and its double) holding `bytes`; "size ?"
// when bytes <= 0.
std::string size_bucket(int64_t bytes);

// The samples of one signature, in the mergeable form rank summaries carry: durations alone and
// overlapped (distribution.h), the partial count and the total time.
struct InterferenceStat {
  std::string signature;
  Class cls = Class::compute;
  Distribution alone, overlapped;
  int64_t partial = 0, total_ns = 0;
  void merge(const InterferenceStat& o);
};
// Per signature, sorted by signature; of one process (Trace::processes index), or of all (-1).
std::vector<InterferenceStat> interference_stats(const Trace& t, const InterferenceOptions& o = {},
                                                 int process = -1);
// Rows from (merged) statistics: medians, the slowdown and its interval (slowdown_interval, an
// order-statistic interval: no resampling). Sorted by total time, longest first.
std::vector<InterferenceRow> interference_rows(const std::vector<InterferenceStat>& stats,
                                               const InterferenceOptions& o = {});
// Compute kernels against communication on the same device, and communication activities
// against compute: interference_rows(interference_stats(t)).
std::vector<InterferenceRow> interference(const Trace& t, const InterferenceOptions& o = {});

// ---- Contention ----
struct Occupancy {
  int blocks_per_sm = 0;  // resident blocks per SM (threads, registers, shared memory, limit)
  double sm_demand = 0;   // min(1, grid / (blocks_per_sm * SMs)); 0 when the device is unknown
};
// The CUDA occupancy rules for a kernel of `grid` blocks of `block` threads on `d`.
Occupancy occupancy(const Device& d, uint32_t grid, uint32_t block, int registers, int64_t shared);

struct Contention {
  int process = 0, device = 0;
  int64_t kernels_with_demand = 0, kernels_unknown = 0;
  int64_t oversubscribed_ns = 0;  // summed SM demand of running kernels > 1
  std::vector<std::pair<std::string, int64_t>>
      oversubscribed_kernels;   // name, time involved (top 10)
  int64_t copy_overlap_ns = 0;  // same-direction copies running together (copy-engine sharing)
  std::vector<std::pair<std::string, int64_t>> copy_overlap_by_kind;  // direction, time
  int64_t queued_kernels = 0;  // kernels with a submitted timestamp
  double queue_median_ns = 0, queue_p95_ns = 0, queue_max_ns = 0;  // start - submitted
  std::vector<std::pair<std::string, double>>
      copy_bandwidth_share;  // direction, median share of peak
};
std::vector<Contention> contention(const Trace& t);

}  // namespace c3::analyzer
