// What c3bench measures: compute and communication operations, the knobs of a configuration,
// and one experiment point (a Case). Backends (cuda, sim) run Cases; the shared driver sweeps
// them (nccl-tests pattern: descriptors filled in, one driver for sweeps, timing, statistics).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "c3/common/bench_knobs.h"
#include "c3/common/nccl_types.h"

namespace c3::bench {

enum class DType { fp32, fp16, bf16 };
const char* dtype_name(DType t);
int dtype_bytes(DType t);
// The NCCL data type of a c3bench dtype (cast to ncclDataType_t where nccl.h is at hand).
common::nccl::DataType nccl_datatype(DType t);

enum class ComputeKind {
  gemm,   // C = A x B, M x N x K, cuBLASLt
  triad,  // memory-bound: a[i] = b[i] + s * c[i] over `bytes` per array
  fma,    // compute-bound: a loop of FMAs sized to take about `target_ns` alone
};
const char* compute_kind_name(ComputeKind k);

struct ComputeOp {
  ComputeKind kind = ComputeKind::gemm;
  int64_t m = 0, n = 0, k = 0;  // gemm
  DType dtype = DType::bf16;    // gemm element type (triad/fma: fp32)
  int64_t bytes = 0;            // triad: bytes per array
  int64_t target_ns = 0;        // fma: target duration alone
  // "gemm:8192x8192x8192:bf16", "triad:1G", "fma:500us"
  std::string label() const;
  // Floating-point operations (gemm 2MNK, triad 2 per element; fma: as sized by the backend).
  double flops() const;
  // Chunk `i` of `k` when the schedule splits the operation (gemm: along M; triad: along bytes).
  ComputeOp chunk(int i, int k) const;
};

enum class CommKind {
  allreduce,
  allgather,
  reducescatter,
  alltoall,
  sendrecv,  // rank r sends to r+1 and receives from r-1 (a ring shift)
  dma_d2d,   // cudaMemcpyAsync device-to-device on one GPU (copy engine)
  dma_p2p,   // cudaMemcpyAsync peer-to-peer to the next GPU (copy engine)
  sm_copy,   // a copy kernel moving the same bytes as dma_d2d/dma_p2p (SMs)
};
const char* comm_kind_name(CommKind k);
bool is_collective(CommKind k);  // an NCCL operation

struct CommOp {
  CommKind kind = CommKind::allreduce;
  // Message size S as nccl-tests counts it: the user buffer of AllReduce; the total (n times the
  // per-rank) buffer of AllGather and ReduceScatter; the whole send buffer of AlltoAll; the bytes
  // sent by Send/Recv and moved by copies.
  int64_t bytes = 0;
  DType dtype = DType::fp32;
  // For copies: the peer copy goes GPU g -> g+1 (dma_p2p); sm_copy copies to the peer when
  // `peer` is true, else within the GPU.
  bool peer = false;
  std::string label() const;  // "allreduce:64M", "dma_p2p:1G"
  // Elements per rank as passed to NCCL (count argument) for `nranks` ranks.
  int64_t count(int nranks) const;
  CommOp chunk(int i, int k) const;
};

// nccl-tests bus bandwidth factor: busbw = algbw * factor (docs/metrics.md "Collective bandwidth").
double busbw_factor(CommKind k, int nranks);

struct Knobs {
  using Priority = common::StreamPriority;
  using Order = common::LaunchOrder;
  Priority priority = Priority::equal;
  Order order = Order::compute_first;
  int nchannels = 0;         // NCCL_MIN/MAX_NCHANNELS; 0: NCCL's choice
  int min_ctas = 0;          // ncclConfig_t minCTAs; 0: default
  int max_ctas = 0;          // ncclConfig_t maxCTAs; 0: default
  int sm_partition_pct = 0;  // green contexts: % of SMs for compute (the rest for comm); 0: off
  // Finer-grain schedule (FiCCO-style): the compute and the communication are each split into
  // `chunks` pieces and pipelined, the communication of chunk i waiting for the compute of chunk
  // i (a producer-consumer dependency, as when a GEMM's output is all-reduced). With
  // pipelined = false the two operations are independent (the plain C3 experiment).
  bool pipelined = false;
  int chunks = 1;             // 1 = unsplit (pipelined: the baseline, compute then communication)
  std::string label() const;  // "prio=comm_high chunks=4", "" for defaults
};

// One experiment point. A compute-only or comm-only case leaves the other side empty.
struct Case {
  int id = 0;
  std::optional<ComputeOp> compute;
  std::optional<CommOp> comm;
  Knobs knobs;
  std::string label() const;
};

// Parses "64M", "1G", "512K", "4096" (bytes; K/M/G are powers of 1024). nullopt if malformed.
std::optional<int64_t> parse_size(const std::string& s);
// "1G", "64M", "3000" ... the shortest exact spelling (c3/common/units.h, BytesStyle::compact).
std::string format_size(int64_t bytes);
// Parses durations "500us", "2ms", "1s", "100ns".
std::optional<int64_t> parse_duration_ns(const std::string& s);

// Parsers for the --compute / --comm flags; they throw std::invalid_argument with a one-line
// message naming the flag value and what is expected.
ComputeOp parse_compute(const std::string& spec);
// "allreduce:64M..1G" -> the sizes; with `factor` as nccl-tests -f (2: doubling).
std::vector<CommOp> parse_comm(const std::string& spec, int64_t factor);
// Size sweep from begin to end multiplying by factor (nccl-tests -b/-e/-f).
std::vector<int64_t> size_sweep(int64_t begin, int64_t end, int64_t factor);

}  // namespace c3::bench
