#include "green.h"

#include <stdexcept>

namespace c3::bench::cuda {
namespace {

constexpr int kMinDriver = 12040;  // green contexts appeared in CUDA 12.4

// Each entry point is asked for in the ABI of the cuda.h we were compiled with (the prototypes
// in green.h come from it); asking for 12.4 would miss cuGreenCtxStreamCreate, which came in
// 12.5.
template <typename Fn>
bool lookup(const char* symbol, Fn* fn, std::string* reason) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  cudaError_t e =
      cudaGetDriverEntryPointByVersion(symbol, &p, CUDA_VERSION, cudaEnableDefault, &status);
  if (e != cudaSuccess || status != cudaDriverEntryPointSuccess || p == nullptr) {
    cudaGetLastError();
    if (reason->empty()) {
      *reason = std::string("the driver has no ") + symbol + " for CUDA " +
                std::to_string(CUDA_VERSION / 1000) + "." +
                std::to_string(CUDA_VERSION % 1000 / 10) +
                (e != cudaSuccess ? std::string(" (") + cudaGetErrorString(e) + ")" : "");
    }
    return false;
  }
  *fn = reinterpret_cast<Fn>(p);
  return true;
}

}  // namespace

GreenApi::GreenApi() {
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) {
    cudaGetLastError();
    reason_ = "cannot read the driver version";
    return;
  }
  if (driver < kMinDriver) {
    reason_ = "the driver supports CUDA " + std::to_string(driver / 1000) + "." +
              std::to_string(driver % 1000 / 10);
    return;
  }
  bool ok = lookup("cuDeviceGet", &device_get, &reason_) &&
            lookup("cuDeviceGetDevResource", &device_get_dev_resource, &reason_) &&
            lookup("cuDevSmResourceSplitByCount", &sm_resource_split_by_count, &reason_) &&
            lookup("cuDevResourceGenerateDesc", &resource_generate_desc, &reason_) &&
            lookup("cuGreenCtxCreate", &green_ctx_create, &reason_) &&
            lookup("cuGreenCtxDestroy", &green_ctx_destroy, &reason_) &&
            lookup("cuCtxFromGreenCtx", &ctx_from_green_ctx, &reason_) &&
            lookup("cuGreenCtxStreamCreate", &green_ctx_stream_create, &reason_) &&
            lookup("cuCtxPushCurrent", &ctx_push_current, &reason_) &&
            lookup("cuCtxPopCurrent", &ctx_pop_current, &reason_) &&
            lookup("cuGetErrorString", &get_error_string, &reason_);
  if (!ok && reason_.empty()) reason_ = "a driver entry point is missing";
}

void GreenApi::check(CUresult r, const char* call) const {
  if (r == CUDA_SUCCESS) return;
  const char* text = nullptr;
  if (get_error_string == nullptr || get_error_string(r, &text) != CUDA_SUCCESS || !text) {
    text = "unknown driver error";
  }
  throw std::runtime_error(std::string(call) + ": " + text + " (CUresult " +
                           std::to_string(static_cast<int>(r)) + ")");
}

GreenApi::Split GreenApi::split(int device, int pct, CUdevResource* compute,
                                CUdevResource* rest) const {
  if (!available()) throw std::runtime_error(reason_);
  if (pct < 1 || pct > 99) {
    throw std::out_of_range("sm_partition_pct " + std::to_string(pct) + " is not in 1..99");
  }
  CUdevice dev = 0;
  check(device_get(&dev, device), "cuDeviceGet");
  CUdevResource all{};
  check(device_get_dev_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  Split s;
  s.total_sms = all.sm.smCount;
  unsigned want = (s.total_sms * static_cast<unsigned>(pct) + 50) / 100;
  if (want == 0) want = 1;
  unsigned groups = 1;
  check(sm_resource_split_by_count(compute, &groups, &all, rest, 0, want),
        "cuDevSmResourceSplitByCount");
  if (groups != 1) {
    throw std::out_of_range("cannot give " + std::to_string(want) + " of " +
                            std::to_string(s.total_sms) + " SMs to compute");
  }
  s.compute_sms = compute->sm.smCount;
  s.comm_sms = rest->sm.smCount;
  if (s.comm_sms == 0) {
    throw std::out_of_range(std::to_string(pct) + "% of " + std::to_string(s.total_sms) +
                            " SMs rounds up to " + std::to_string(s.compute_sms) +
                            ", leaving none for communication");
  }
  return s;
}

GreenApi::Split GreenApi::plan(int device, int pct) const {
  CUdevResource compute{}, rest{};
  return split(device, pct, &compute, &rest);
}

GreenPartition::GreenPartition(const GreenApi& api, int device, int pct) : api_(api) {
  CUdevResource compute{}, rest{};
  split_ = api.split(device, pct, &compute, &rest);
  CUdevice dev = 0;
  api.check(api.device_get(&dev, device), "cuDeviceGet");
  CUdevResourceDesc compute_desc = nullptr, comm_desc = nullptr;
  api.check(api.resource_generate_desc(&compute_desc, &compute, 1), "cuDevResourceGenerateDesc");
  api.check(api.resource_generate_desc(&comm_desc, &rest, 1), "cuDevResourceGenerateDesc");
  api.check(api.green_ctx_create(&compute_, compute_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM),
            "cuGreenCtxCreate");
  try {
    api.check(api.green_ctx_create(&comm_, comm_desc, dev, CU_GREEN_CTX_DEFAULT_STREAM),
              "cuGreenCtxCreate");
    api.check(api.ctx_from_green_ctx(&compute_ctx_, compute_), "cuCtxFromGreenCtx");
    api.check(api.ctx_from_green_ctx(&comm_ctx_, comm_), "cuCtxFromGreenCtx");
  } catch (...) {
    if (comm_ != nullptr) api.green_ctx_destroy(comm_);
    api.green_ctx_destroy(compute_);
    throw;
  }
}

GreenPartition::~GreenPartition() {
  api_.green_ctx_destroy(comm_);
  api_.green_ctx_destroy(compute_);
}

cudaStream_t GreenPartition::make_stream(bool compute, int priority) const {
  CUstream s = nullptr;
  api_.check(api_.green_ctx_stream_create(&s, compute ? compute_ : comm_, CU_STREAM_NON_BLOCKING,
                                          priority),
             "cuGreenCtxStreamCreate");
  return s;
}

CtxScope::CtxScope(const GreenApi* api, CUcontext ctx) : api_(api) {
  if (api_ == nullptr || ctx == nullptr) return;
  api_->check(api_->ctx_push_current(ctx), "cuCtxPushCurrent");
  pushed_ = true;
}

CtxScope::~CtxScope() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  api_->ctx_pop_current(&popped);
}

}  // namespace c3::bench::cuda
