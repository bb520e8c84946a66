// SM partitioning with CUDA green contexts (driver API, CUDA 12.4+): the compute stream gets
// pct % of the SMs and the comm stream the rest. The entry points are looked up at run time
// through cudart (cudaGetDriverEntryPointByVersion), so the plugin neither links libcuda nor
// fails to load on an older driver; check() then reports why partitioning is unavailable.
#pragma once

#include <cuda.h>  // types and prototypes only (decltype); nothing here links libcuda
#include <cuda_runtime_api.h>

#include <string>

namespace c3::bench::cuda {

class GreenApi {
 public:
  GreenApi();  // never throws: available() and unavailable_reason() tell
  bool available() const { return reason_.empty(); }
  const std::string& unavailable_reason() const { return reason_; }

  struct Split {
    unsigned total_sms = 0, compute_sms = 0, comm_sms = 0;
  };
  // What a partition of `pct` % would give on `device` (the driver rounds the compute side up
  // to its granularity, 8 SMs on Hopper). Throws std::out_of_range when pct cannot be honoured
  // (outside 1..99, or no SM left for communication), std::runtime_error when the driver fails.
  Split plan(int device, int pct) const;

  // Throws std::runtime_error("<call>: <driver error>") unless r is CUDA_SUCCESS.
  void check(CUresult r, const char* call) const;

  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetDevResource) device_get_dev_resource = nullptr;
  decltype(&::cuDevSmResourceSplitByCount) sm_resource_split_by_count = nullptr;
  decltype(&::cuDevResourceGenerateDesc) resource_generate_desc = nullptr;
  decltype(&::cuGreenCtxCreate) green_ctx_create = nullptr;
  decltype(&::cuGreenCtxDestroy) green_ctx_destroy = nullptr;
  decltype(&::cuCtxFromGreenCtx) ctx_from_green_ctx = nullptr;
  decltype(&::cuGreenCtxStreamCreate) green_ctx_stream_create = nullptr;
  decltype(&::cuCtxPushCurrent) ctx_push_current = nullptr;
  decltype(&::cuCtxPopCurrent) ctx_pop_current = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;

 private:
  // The two halves of the split, as driver resources.
  Split split(int device, int pct, CUdevResource* compute, CUdevResource* rest) const;
  friend class GreenPartition;
  std::string reason_;
};

// Two green contexts on one device. Streams and events used with them must be created while
// their context is current (CtxScope) and destroyed before the partition.
class GreenPartition {
 public:
  GreenPartition(const GreenApi& api, int device, int pct);
  ~GreenPartition();
  GreenPartition(const GreenPartition&) = delete;
  GreenPartition& operator=(const GreenPartition&) = delete;

  CUcontext compute_ctx() const { return compute_ctx_; }
  CUcontext comm_ctx() const { return comm_ctx_; }
  // A non-blocking stream of the compute (or comm) green context with `priority`.
  cudaStream_t make_stream(bool compute, int priority) const;
  const GreenApi::Split& split() const { return split_; }
  const GreenApi& api() const { return api_; }

 private:
  const GreenApi& api_;
  CUgreenCtx compute_ = nullptr, comm_ = nullptr;
  CUcontext compute_ctx_ = nullptr, comm_ctx_ = nullptr;
  GreenApi::Split split_;
};

// Makes a (green) context current on this thread for a scope; nullptr: does nothing.
class CtxScope {
 public:
  CtxScope(const GreenApi* api, CUcontext ctx);
  ~CtxScope();
  CtxScope(const CtxScope&) = delete;
  CtxScope& operator=(const CtxScope&) = delete;

 private:
  const GreenApi* api_;
  bool pushed_ = false;
};

}  // namespace c3::bench::cuda
