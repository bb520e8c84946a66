// What each operation demands of a simulated GPU (docs/sim-model.md, "Operations"): the
// physical quantities (FLOPs, bytes through HBM, links and copy engines, SMs occupied) from which
// the engine derives its time alone and under sharing. Pure functions of the spec.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "c3/common/nccl_types.h"
#include "c3/sim/model/engine.h"
#include "c3/sim/model/spec.h"

namespace c3::sim::model {

enum class Precision { fp32, fp16, bf16 };
double peak_flops(const GpuSpec& g, Precision p);

// Kernels (one part, on `gpu`).
PartDemand gemm(const GpuSpec& g, int gpu, int64_t m, int64_t n, int64_t k, Precision p);
// occupancy: the fraction of each SM its CTAs take (c3bench's triad fills the SMs: 1).
PartDemand triad(const GpuSpec& g, int gpu, int64_t bytes_per_array, double occupancy = 1.0);
PartDemand fma_loop(const GpuSpec& g, int gpu, double target_ns);
// A copy kernel: `ctas` CTAs of kCopyThreads threads (one per SM) moving `bytes` within `gpu`,
// or to `peer_gpu` over the links.
inline constexpr int kCopyThreads = 512;
PartDemand sm_copy(const GpuSpec& g, int gpu, int64_t bytes, int ctas, int peer_gpu = -1);
// What a same-GPU cudaMemcpyAsync (device to device) costs: CUDA runs it as a copy kernel on
// every SM, not on a copy engine (measured on an H200: docs/validation.md).
PartDemand runtime_d2d_copy(const GpuSpec& g, int gpu, int64_t bytes);

// Copy-engine transfers (peer-to-peer and host copies; a same-GPU copy is runtime_d2d_copy).
PartDemand dma_copy(const GpuSpec& g, Topology t, int gpu, int64_t bytes, int peer_gpu = -1);
enum class HostDirection { h2d, d2h };
PartDemand host_copy(const GpuSpec& g, int gpu, int64_t bytes, HostDirection d);

// NCCL's operations and their names, as every part spells them (c3/common/nccl_types.h). The
// model costs AllReduce, AllGather, ReduceScatter, AlltoAll, Broadcast, Reduce and SendRecv.
using Collective = common::nccl::Collective;
using common::nccl::collective_name;
enum class Algorithm { ring, tree };

// A collective over `ranks` (GPU ids in rank order) with message size `bytes` as nccl-tests
// counts it (busbw_factor applies), `channels` CTAs per rank (0: the platform default). One
// part per rank, each CTA a kNcclThreads-thread block. The algorithm is the faster of ring and
// tree alone (what NCCL's tuner does for AllReduce); other collectives use rings. A 1-rank
// collective is NCCL's cudaMemcpyAsync (runtime_d2d_copy) when `in_place` is false, else
// nothing. Send/Recv takes exactly two ranks, sender first: the
// sender's part sends, the receiver's part receives (point_to_point with one transfer).
inline constexpr int kNcclThreads = 512;  // NCCL_NTHREADS default (Simple protocol)
struct CollectiveCost {
  OpDesc desc;
  Algorithm algorithm = Algorithm::ring;
  double alone_ns = 0;  // on an idle node
};
CollectiveCost collective(const GpuSpec& g, Topology t, Collective c, const std::vector<int>& ranks,
                          int64_t bytes, int channels, bool in_place);

// Grouped Send/Recv: NCCL runs all of a rank's Send and Recv calls of one group as one kernel
// that moves them at once (a ring shift's send to the next rank and receive from the previous
// one progress together). One part per entry of `ranks` (GPU ids); each transfer names its
// sender and receiver by index into `ranks` (the same index twice: a copy within that GPU).
// Each part's links carry what it sends and receives, its HBM what it reads and writes, its
// channels push what it sends; on a mesh each peer has its one link. Latency: one step.
struct Transfer {
  int from = 0;
  int to = 0;
  int64_t bytes = 0;
};
CollectiveCost point_to_point(const GpuSpec& g, Topology t, const std::vector<int>& ranks,
                              const std::vector<Transfer>& transfers, int channels);

// Time of a single-part op alone on an idle GPU (what the engine yields with nothing else
// running); used by tests and the docs.
double alone_ns(const GpuSpec& g, const PartDemand& d, double latency_ns = 0);

}  // namespace c3::sim::model
