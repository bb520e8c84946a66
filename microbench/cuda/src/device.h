// Everything the backend keeps for one GPU: streams (per priority and SM partition), timing
// events, buffers, the cuBLASLt handle and plans, and the prepared case. All of it is used
// only from that GPU's worker thread (workers.h).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <barrier>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "c3/bench/backend.h"
#include "gemm.h"
#include "green.h"
#include "kernels.h"
#include "layout.h"

namespace c3::bench::cuda {

// One fma duration as calibrated on this GPU model.
struct FmaCalibration {
  int64_t iterations = 0;
  double achieved_ns = 0;  // median time of one launch alone
};
using FmaTable = std::map<int64_t, FmaCalibration>;  // by target_ns

// The compute and comm streams of one (priority, SM partition) configuration, with the events
// recorded on them. With a partition the streams belong to two green contexts, and every event
// is created in the context of the stream it is recorded on (the driver requires it).
struct StreamSet {
  std::unique_ptr<GreenPartition> green;
  cudaStream_t compute = nullptr, comm = nullptr;
  // Timing events: the compute op on `compute`; the comm op on `comm` (alone, concurrent) or on
  // `compute` (serial).
  cudaEvent_t comp_start = nullptr, comp_end = nullptr;
  cudaEvent_t comm_start_c = nullptr, comm_end_c = nullptr;
  cudaEvent_t comm_start = nullptr, comm_end = nullptr;
  // Pipelined schedule: comm chunk i waits for chunk_done[i] (compute context, no timing).
  std::vector<cudaEvent_t> chunk_done;
  // Partitioned concurrent phases: the wall time is taken on a primary-context stream that
  // forks both green streams and joins them. The driver documents cross-context stream waits
  // but not elapsed times between events of different contexts (they did work on an H200 with
  // driver 580), so the wall never depends on them.
  cudaStream_t anchor = nullptr;
  cudaEvent_t anchor_start = nullptr, anchor_end = nullptr;

  CUcontext compute_ctx() const { return green ? green->compute_ctx() : nullptr; }
  CUcontext comm_ctx() const { return green ? green->comm_ctx() : nullptr; }
  const GreenApi* api() const { return green ? &green->api() : nullptr; }
  ~StreamSet();
};

// Device memory that grows on demand and remembers what it was filled with.
struct Buffer {
  void* ptr = nullptr;
  size_t size = 0;
  int filled = -1;  // FillType it holds, -1: unfilled
  char* at(size_t off) const { return static_cast<char*>(ptr) + off; }
};

class DeviceState {
 public:
  // Runs on the device's worker thread (as do all the methods).
  DeviceState(int device, const GreenApi* green, bool verbose);
  ~DeviceState();
  DeviceState(const DeviceState&) = delete;
  DeviceState& operator=(const DeviceState&) = delete;

  int device() const { return device_; }
  const cudaDeviceProp& props() const { return props_; }

  // "event pair X us, empty launch+sync Y us (median of 100)".
  std::string measure_overhead();
  // Iterations for each fma target, measured alone on this GPU (a primary-context stream).
  FmaTable calibrate_fma(const std::vector<int64_t>& targets_ns);

  // prepare(), step 1: streams for the knobs and buffers for the layout (the peer buffer too).
  void allocate(const Case& c, const CaseLayout& layout);
  void* peer_recv() const { return peer_recv_.ptr; }
  // Enables access to `peer`'s memory (once) when the driver allows it.
  void enable_peer_access(int peer);
  // prepare(), step 2: plans, fills, the chunk list; synchronizes the device.
  void finish_prepare(const Case& c, const CaseLayout& layout, ncclComm_t comm, int rank,
                      int nranks, void* peer_dst, int peer_device, const FmaTable& fma);

  // One iteration of `phase` (phase.cpp). Waits at `sync` before launching so that the GPUs
  // of the process start together; `cancelled` stops the wait for completion.
  PhaseTiming run_phase(Phase phase, std::barrier<>& sync, const std::atomic<bool>& cancelled);

 private:
  using StreamKey = std::tuple<int, int>;  // (priority, sm_partition_pct)
  void teardown();
  StreamSet& streams_for(Knobs::Priority priority, int pct);
  void fill(Buffer& b, size_t bytes, FillType type);
  void release(Buffer& b);
  const GemmPlan& plan_for(const ComputeOp& op);
  double time_fma(int64_t iterations, int repeats);

  // phase.cpp
  void launch_compute(const ComputePiece& p, cudaStream_t s);
  void launch_comm(const CommPiece& p, cudaStream_t s);
  void launch_compute_all(StreamSet& ss, cudaEvent_t start, cudaEvent_t end);
  void launch_comm_all(StreamSet& ss, cudaStream_t s, CUcontext ctx, cudaEvent_t start,
                       cudaEvent_t end);
  void launch_pipelined(StreamSet& ss);
  void wait_for(cudaEvent_t e, CUcontext ctx, const GreenApi* api,
                const std::atomic<bool>& cancelled);
  double elapsed_ns(cudaEvent_t a, cudaEvent_t b, CUcontext ctx, const GreenApi* api);

  int device_;
  const GreenApi* green_;
  bool verbose_;
  cudaDeviceProp props_{};
  Occupancy occupancy_;
  int least_priority_ = 0, greatest_priority_ = 0;
  cudaStream_t util_ = nullptr;  // fills and calibration: primary context, default priority
  cublasLtHandle_t lt_ = nullptr;
  void* workspace_ = nullptr;
  float* fma_out_ = nullptr;
  std::map<StreamKey, std::unique_ptr<StreamSet>> streams_;
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, std::unique_ptr<GemmPlan>> plans_;
  std::vector<int> peers_enabled_;
  Buffer gemm_a_, gemm_b_, gemm_c_, triad_a_, triad_b_, triad_c_, send_, recv_, peer_recv_;

  // The prepared case.
  struct Prepared {
    StreamSet* streams = nullptr;
    ncclComm_t comm = nullptr;
    int rank = 0, nranks = 1;
    char* peer_dst = nullptr;
    int peer_device = -1;
    int copy_ctas = kDefaultCopyCtas;
    bool pipelined = false;
    bool comm_first = false;
    std::vector<ComputePiece> compute;
    std::vector<CommPiece> comm_pieces;
    std::vector<int64_t> fma_iterations;  // per compute piece
    std::vector<const GemmPlan*> gemm;    // per compute piece
  } prep_;
};

// Sizes in messages: "1.5 GiB".
std::string human_bytes(double bytes);

}  // namespace c3::bench::cuda
