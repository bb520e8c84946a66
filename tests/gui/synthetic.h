// A training-like multi-rank job written as c3scope trace files (one per rank), for the GUI's
// tests, screenshots and benchmark: per step a forward pass of GEMMs, a backward pass whose
// AllReduce per layer overlaps the next layer's GEMM (the last one exposed), an optimizer, a
// host-to-device copy, NVTX ranges (step > forward/backward/optimizer, steps coloured as the
// application asked, with payloads; overlapping start/end "prefetch" ranges in a domain "data"),
// the API call of every launch and the NCCL calls linked to their kernels. Ranks compute at
// slightly different speeds, so collectives show skew and a straggler; each rank after the first
// runs on its own host with its own clock offset, so the view must align them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace c3::gui::testing {

struct SyntheticJob {
  int ranks = 2;
  int steps = 12;
  int layers = 6;
  // Short kernels (norms, attention, elementwise) per layer in the forward and again in the
  // backward pass, between the GEMMs: real steps launch many more kernels than collectives.
  int small_kernels = 0;
  bool api_calls = true;              // one api_call row per launch (the benchmark leaves them out)
  int64_t clock_skew_ns = 7'000'000;  // rank r's clock reads r * this later than rank 0's
  double slow_rank_factor = 1.08;     // the last rank's GEMMs take this much longer
  // Parallel groups (issue 27's job of many communicators). Ranks are laid out tensor-parallel
  // fastest: rank = tp + tensor_parallel * (dp + data_parallel * stage). With tensor_parallel >
  // 1, each forward GEMM is followed by an AllReduce on the rank's tensor-parallel communicator;
  // the backward gradient AllReduces run on its data-parallel communicator (every rank when both
  // are 1: the one communicator of the default job); with pipeline_parallel > 1, each step ends
  // with an AllReduce of the tied embeddings on its pipeline communicator (every stage).
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  // Ranks per host: a host's ranks share its clock (and clock skew), as on a real node.
  int ranks_per_host = 1;
  // Trace clock at the first step (rank 0). PyTorch and Nsight traces carry epoch timestamps
  // (about 1.7e18 ns), where a double no longer holds every nanosecond.
  int64_t start_ns = 1'000'000'000;
};

// Writes rank files dir/rank<R>.sqlite; returns their paths. Throws on write errors.
std::vector<std::string> write_synthetic_job(const std::string& dir, const SyntheticJob& job);

// GPU activities (kernels + copies) one rank file holds.
int64_t synthetic_activities_per_rank(const SyntheticJob& job);

}  // namespace c3::gui::testing
