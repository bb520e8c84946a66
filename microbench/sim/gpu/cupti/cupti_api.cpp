// The exported CUPTI entry points of the fake libcupti.so.13, the single subscriber and its API
// callbacks, failure injection (C3FAKE_CUPTI_FAIL) and the result/callback name tables.
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string_view>

#include "c3/sim/gpu/failure_injection.h"
#include "fake_cupti.h"

// Declared (incomplete) by cupti_callbacks.h; the subscriber handle points at one of these.
struct CUpti_Subscriber_st {
  int unused;
};

namespace c3::sim::gpu::cupti {
namespace {

// C3FAKE_CUPTI_FAIL: comma-separated CUPTI function names, or "all" (every cupti* function
// except cuptiGetResultString).
bool injected_failure(std::string_view function) {
  return failure_injected("C3FAKE_CUPTI_FAIL", function, "cuptiGetResultString");
}

std::atomic<CUpti_ActivityThreadIdType> g_thread_id_type{CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT};

bool other_subscriber_present() {
  const char* env = std::getenv("C3FAKE_CUPTI_OTHER_SUBSCRIBER");
  return env != nullptr && std::string_view(env) == "1";
}

struct SubscriberState {
  std::mutex mu;
  bool active = false;
  CUpti_Subscriber_st handle{};
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::array<std::atomic<bool>, CUPTI_RUNTIME_TRACE_CBID_SIZE> runtime{};
  std::array<std::atomic<bool>, CUPTI_DRIVER_TRACE_CBID_SIZE> driver{};
};

SubscriberState& subscriber() {
  static auto* s = new SubscriberState;
  return *s;
}

bool valid_subscriber(CUpti_SubscriberHandle handle) {
  SubscriberState& s = subscriber();
  std::lock_guard lock(s.mu);
  return s.active && handle == &s.handle;
}

bool valid_domain(CUpti_CallbackDomain domain) {
  return domain > CUPTI_CB_DOMAIN_INVALID && domain < CUPTI_CB_DOMAIN_SIZE;
}

bool valid_activity_kind(CUpti_ActivityKind kind) {
  return kind > CUPTI_ACTIVITY_KIND_INVALID && kind < CUPTI_ACTIVITY_KIND_COUNT;
}

// cuptiActivityEnableRuntimeApi / EnableDriverApi: the API records of one cbid of `domain`.
CUptiResult enable_api_records(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, uint8_t enable) {
  if (cbid == 0 || !set_api_cbid_recorded(domain, cbid, enable != 0)) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  return CUPTI_SUCCESS;
}

const char* result_name(CUptiResult result) {
  switch (result) {
    case CUPTI_SUCCESS:
      return "CUPTI_SUCCESS";
    case CUPTI_ERROR_INVALID_PARAMETER:
      return "CUPTI_ERROR_INVALID_PARAMETER";
    case CUPTI_ERROR_INVALID_DEVICE:
      return "CUPTI_ERROR_INVALID_DEVICE";
    case CUPTI_ERROR_INVALID_CONTEXT:
      return "CUPTI_ERROR_INVALID_CONTEXT";
    case CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID:
      return "CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID";
    case CUPTI_ERROR_INVALID_EVENT_ID:
      return "CUPTI_ERROR_INVALID_EVENT_ID";
    case CUPTI_ERROR_INVALID_EVENT_NAME:
      return "CUPTI_ERROR_INVALID_EVENT_NAME";
    case CUPTI_ERROR_INVALID_OPERATION:
      return "CUPTI_ERROR_INVALID_OPERATION";
    case CUPTI_ERROR_OUT_OF_MEMORY:
      return "CUPTI_ERROR_OUT_OF_MEMORY";
    case CUPTI_ERROR_HARDWARE:
      return "CUPTI_ERROR_HARDWARE";
    case CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT:
      return "CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT";
    case CUPTI_ERROR_API_NOT_IMPLEMENTED:
      return "CUPTI_ERROR_API_NOT_IMPLEMENTED";
    case CUPTI_ERROR_MAX_LIMIT_REACHED:
      return "CUPTI_ERROR_MAX_LIMIT_REACHED";
    case CUPTI_ERROR_NOT_READY:
      return "CUPTI_ERROR_NOT_READY";
    case CUPTI_ERROR_NOT_COMPATIBLE:
      return "CUPTI_ERROR_NOT_COMPATIBLE";
    case CUPTI_ERROR_NOT_INITIALIZED:
      return "CUPTI_ERROR_NOT_INITIALIZED";
    case CUPTI_ERROR_INVALID_METRIC_ID:
      return "CUPTI_ERROR_INVALID_METRIC_ID";
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return "CUPTI_ERROR_INVALID_METRIC_NAME";
    case CUPTI_ERROR_QUEUE_EMPTY:
      return "CUPTI_ERROR_QUEUE_EMPTY";
    case CUPTI_ERROR_INVALID_HANDLE:
      return "CUPTI_ERROR_INVALID_HANDLE";
    case CUPTI_ERROR_INVALID_STREAM:
      return "CUPTI_ERROR_INVALID_STREAM";
    case CUPTI_ERROR_INVALID_KIND:
      return "CUPTI_ERROR_INVALID_KIND";
    case CUPTI_ERROR_INVALID_EVENT_VALUE:
      return "CUPTI_ERROR_INVALID_EVENT_VALUE";
    case CUPTI_ERROR_DISABLED:
      return "CUPTI_ERROR_DISABLED";
    case CUPTI_ERROR_INVALID_MODULE:
      return "CUPTI_ERROR_INVALID_MODULE";
    case CUPTI_ERROR_INVALID_METRIC_VALUE:
      return "CUPTI_ERROR_INVALID_METRIC_VALUE";
    case CUPTI_ERROR_HARDWARE_BUSY:
      return "CUPTI_ERROR_HARDWARE_BUSY";
    case CUPTI_ERROR_NOT_SUPPORTED:
      return "CUPTI_ERROR_NOT_SUPPORTED";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED:
      return "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE:
      return "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE";
    case CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS:
      return "CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS";
    case CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED:
      return "CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE:
      return "CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
      return "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return "CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED";
    case CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE:
      return "CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE";
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
      return "CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
      return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES";
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return "CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED";
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return "CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED";
    case CUPTI_ERROR_INVALID_CHIP_NAME:
      return "CUPTI_ERROR_INVALID_CHIP_NAME";
    case CUPTI_ERROR_UNKNOWN:
      return "CUPTI_ERROR_UNKNOWN";
    default:
      return nullptr;
  }
}

}  // namespace

const char* callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
        return "cudaLaunchKernel_v7000";
      case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020:
        return "cudaMemcpyAsync_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000:
        return "cudaMemcpyPeerAsync_v4000";
      case CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020:
        return "cudaMemsetAsync_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020:
        return "cudaStreamSynchronize_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020:
        return "cudaDeviceSynchronize_v3020";
      case CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050:
        return "cudaStreamCreateWithPriority_v5050";
      default:
        return nullptr;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) {
    return "cuLaunchKernel";
  }
  return nullptr;
}

bool api_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  SubscriberState& s = subscriber();
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < s.runtime.size()) {
    return s.runtime[cbid].load(std::memory_order_relaxed);
  }
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < s.driver.size()) {
    return s.driver[cbid].load(std::memory_order_relaxed);
  }
  return false;
}

void invoke_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const CUpti_CallbackData& data) {
  SubscriberState& s = subscriber();
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  {
    std::lock_guard lock(s.mu);
    if (!s.active) return;
    callback = s.callback;
    userdata = s.userdata;
  }
  if (callback != nullptr) callback(userdata, domain, cbid, &data);
}

void reset_subscriber_state() {
  SubscriberState& s = subscriber();
  std::lock_guard lock(s.mu);
  s.active = false;
  s.callback = nullptr;
  s.userdata = nullptr;
  for (auto& f : s.runtime) f.store(false);
  for (auto& f : s.driver) f.store(false);
}

}  // namespace c3::sim::gpu::cupti

using namespace c3::sim::gpu::cupti;

#define C3FAKE_INJECT_FAILURE()                                 \
  do {                                                          \
    if (injected_failure(__func__)) return CUPTI_ERROR_UNKNOWN; \
  } while (false)

extern "C" {

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  C3FAKE_INJECT_FAILURE();
  if (version == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *version = CUPTI_API_VERSION;
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char** str) {
  C3FAKE_INJECT_FAILURE();
  if (str == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* name = result_name(result);
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *str = name;
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle* handle,
                                                  CUpti_CallbackFunc callback, void* userdata) {
  C3FAKE_INJECT_FAILURE();
  if (handle == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  if (other_subscriber_present()) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  SubscriberState& s = subscriber();
  std::lock_guard lock(s.mu);
  if (s.active) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  s.active = true;
  s.callback = callback;
  s.userdata = userdata;
  *handle = &s.handle;
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle handle) {
  C3FAKE_INJECT_FAILURE();
  if (!valid_subscriber(handle)) return CUPTI_ERROR_INVALID_PARAMETER;
  reset_subscriber_state();
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable,
                                                       CUpti_SubscriberHandle handle,
                                                       CUpti_CallbackDomain domain,
                                                       CUpti_CallbackId cbid) {
  C3FAKE_INJECT_FAILURE();
  if (!valid_subscriber(handle) || !valid_domain(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
  SubscriberState& s = subscriber();
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (cbid == 0 || cbid >= s.runtime.size()) return CUPTI_ERROR_INVALID_PARAMETER;
    s.runtime[cbid].store(enable != 0);
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (cbid == 0 || cbid >= s.driver.size()) return CUPTI_ERROR_INVALID_PARAMETER;
    s.driver[cbid].store(enable != 0);
  }
  // Other domains are accepted; this double never calls back for them.
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle handle,
                                                     CUpti_CallbackDomain domain) {
  C3FAKE_INJECT_FAILURE();
  if (!valid_subscriber(handle) || !valid_domain(domain)) return CUPTI_ERROR_INVALID_PARAMETER;
  SubscriberState& s = subscriber();
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    for (auto& f : s.runtime) f.store(enable != 0);
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    for (auto& f : s.driver) f.store(enable != 0);
  }
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
  C3FAKE_INJECT_FAILURE();
  if (requested == nullptr || completed == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  register_buffer_callbacks(requested, completed);
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  C3FAKE_INJECT_FAILURE();
  if (!valid_activity_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  const bool was_enabled = set_kind_enabled(kind, true);
  // Like real CUPTI, enabling DEVICE after cuInit still reports the devices.
  if (kind == CUPTI_ACTIVITY_KIND_DEVICE && !was_enabled && driver_initialized()) {
    report_devices();
  }
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  C3FAKE_INJECT_FAILURE();
  if (!valid_activity_kind(kind)) return CUPTI_ERROR_INVALID_KIND;
  set_kind_enabled(kind, false);
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid,
                                                                uint8_t enable) {
  C3FAKE_INJECT_FAILURE();
  return enable_api_records(CUPTI_CB_DOMAIN_DRIVER_API, cbid, enable);
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid,
                                                                 uint8_t enable) {
  C3FAKE_INJECT_FAILURE();
  return enable_api_records(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, enable);
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag) {
  C3FAKE_INJECT_FAILURE();
  static_cast<void>(flag);  // 0 and CUPTI_ACTIVITY_FLAG_FLUSH_FORCED both deliver partial buffers
  flush_all(false);
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer,
                                                              size_t validBufferSizeBytes,
                                                              CUpti_Activity** record) {
  C3FAKE_INJECT_FAILURE();
  if (buffer == nullptr || record == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  auto kind_at = [buffer](size_t offset) {
    uint32_t kind = 0;
    std::memcpy(&kind, buffer + offset, sizeof(kind));
    return kind;
  };
  size_t offset = 0;
  if (*record != nullptr) {
    const auto* current = reinterpret_cast<const uint8_t*>(*record);
    if (current < buffer || current >= buffer + validBufferSizeBytes) {
      return CUPTI_ERROR_INVALID_PARAMETER;
    }
    const auto current_offset = static_cast<size_t>(current - buffer);
    const size_t size = record_size(kind_at(current_offset));
    if (size == 0) return CUPTI_ERROR_INVALID_KIND;
    offset = current_offset + ((size + 7U) & ~size_t{7});
  }
  if (offset + sizeof(uint32_t) > validBufferSizeBytes) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  const size_t size = record_size(kind_at(offset));
  if (size == 0 || offset + size > validBufferSizeBytes) return CUPTI_ERROR_INVALID_KIND;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext context,
                                                                     uint32_t streamId,
                                                                     size_t* dropped) {
  C3FAKE_INJECT_FAILURE();
  static_cast<void>(streamId);
  if (dropped == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  // One global count, reported (and reset) for the NULL context only.
  *dropped = context == nullptr ? take_dropped_count() : 0;
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI
cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  C3FAKE_INJECT_FAILURE();
  return push_external_id(kind, id);
}

C3FAKE_EXPORT CUptiResult CUPTIAPI
cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t* lastId) {
  C3FAKE_INJECT_FAILURE();
  return pop_external_id(kind, lastId);
}

C3FAKE_EXPORT CUptiResult CUPTIAPI
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp) {
  C3FAKE_INJECT_FAILURE();
  set_timestamp_callback(funcTimestamp);  // NULL goes back to the default clock
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  C3FAKE_INJECT_FAILURE();
  if (timestamp == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *timestamp = now_ns();
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableLatencyTimestamps(uint8_t enable) {
  C3FAKE_INJECT_FAILURE();
  set_latency_timestamps(enable != 0);
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext context, CUstream stream,
                                                      uint8_t perThreadStream, uint32_t* streamId) {
  C3FAKE_INJECT_FAILURE();
  static_cast<void>(perThreadStream);  // the per-thread default stream is the legacy one here
  if (streamId == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  return stream_id_for(context, stream, streamId);
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                                        const char** name) {
  C3FAKE_INJECT_FAILURE();
  if (name == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  const char* found = callback_name(domain, cbid);
  if (found == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *name = found;
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushPeriod(uint32_t time) {
  C3FAKE_INJECT_FAILURE();
  set_flush_period_ms(time);
  return CUPTI_SUCCESS;
}

// Not in the brief's list but commonly called by clients: accepted, and both types report the
// OS thread id (gettid) in API records.
C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  C3FAKE_INJECT_FAILURE();
  if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT &&
      type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) {
    return CUPTI_ERROR_INVALID_PARAMETER;
  }
  g_thread_id_type.store(type);
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  C3FAKE_INJECT_FAILURE();
  if (type == nullptr) return CUPTI_ERROR_INVALID_PARAMETER;
  *type = g_thread_id_type.load();
  return CUPTI_SUCCESS;
}

C3FAKE_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void) {
  C3FAKE_INJECT_FAILURE();
  reset_activity_state();
  reset_subscriber_state();
  return CUPTI_SUCCESS;
}

}  // extern "C"
