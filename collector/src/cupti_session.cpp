#include "cupti_session.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <dlfcn.h>

#include <atomic>
#include <vector>

#include "clock.h"
#include "log.h"

namespace c3::collector {
namespace {

// The session's pool, counters and sink, for CUPTI's C callbacks (one CUPTI session per
// process). Counters and sink are set before the callbacks are registered; the pool after.
std::atomic<BufferPool*> g_pool{nullptr};
std::atomic<Counters*> g_counters{nullptr};
std::atomic<CuptiSession::BufferSink> g_sink{nullptr};

void count(Counter c, int64_t delta = 1) {
  g_counters.load(std::memory_order_acquire)->add(c, delta);
}

void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  int64_t t0 = now_ns();
  *max_records = 0;  // as many as fit
  BufferPool* pool = g_pool.load(std::memory_order_acquire);
  uint8_t* b = pool ? pool->acquire() : nullptr;
  if (!b) {
    // CUPTI drops the records it cannot store and counts them (cupti_dropped_records).
    *buffer = nullptr;
    *size = 0;
    count(Counter::buffer_pool_exhausted);
  } else {
    *buffer = b;
    *size = pool->buffer_size();
  }
  count(Counter::collector_overhead_ns, now_ns() - t0);
}

void CUPTIAPI on_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  int64_t t0 = now_ns();
  if (buffer) {
    count(Counter::cupti_buffers);
    // Decoding happens on the writer thread; this callback only queues the buffer.
    g_sink.load(std::memory_order_acquire)(buffer, valid);
  }
  count(Counter::collector_overhead_ns, now_ns() - t0);
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {
  // Subscribing claims CUPTI's callback slot so that a second tool learns it is taken; the
  // collector itself needs no callbacks (everything comes through activity records).
}

uint64_t CUPTIAPI trace_clock_callback() {
  return static_cast<uint64_t>(now_ns());
}

// APIs whose activity records carry the external correlation that links NCCL calls to the GPU
// work they enqueue: kernel launches, and the async copies and sets NCCL uses for some
// operations (a 1-rank AllReduce out of place is a device-to-device copy). Recorded even
// without --cuda-api, then dropped unless asked for.
constexpr CUpti_CallbackId kRuntimeLinked[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy2DAsync_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyBatchAsync_ptsz_v13000,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000,
};
constexpr CUpti_CallbackId kDriverLinked[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
};

}  // namespace

CuptiSession* CuptiSession::start(const Config& config, BufferPool* pool, Counters& counters,
                                  BufferSink sink, std::string* error, std::string* status_detail) {
  if (config.cupti_lib == "none") {
    *error = "CUPTI disabled (C3SCOPE_CUPTI_LIB=none)";
    return nullptr;
  }
  CuptiLoadResult loaded = load_cupti(config);
  if (!loaded.ok) {
    *error = loaded.error;
    return nullptr;
  }
  std::unique_ptr<CuptiSession> s(new CuptiSession());
  s->api_ = std::move(loaded.api);
  s->pool_ = pool;
  s->config_cuda_api_ = config.cuda_api;
  const CuptiApi& a = s->api_;
  std::string detail =
      "CUPTI " + std::to_string(a.version) + " from " + a.path + " (" + a.origin + ")";

  CUptiResult r =
      a.Subscribe(&s->subscriber_, reinterpret_cast<CUpti_CallbackFunc>(&on_callback), nullptr);
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
    *error =
        "another CUPTI client already owns CUPTI in this process (Nsight Systems, the "
        "PyTorch profiler or another tool); c3scope leaves it alone and records only NVTX "
        "and NCCL calls";
    return nullptr;
  }
  if (r != CUPTI_SUCCESS) {
    *error = "cuptiSubscribe failed: " + a.result_string(r) + " (" + a.path + ")";
    return nullptr;
  }

  // A simulated GPU supplies the clock itself (clock.h); from here on every timestamp, CUPTI's
  // through the callback below included, comes from it.
  if (a.TraceClock != nullptr && a.TraceClockName != nullptr && a.TraceClockName() != nullptr) {
    g_trace_clock_name.store(a.TraceClockName(), std::memory_order_release);
    g_trace_clock.store(a.TraceClock, std::memory_order_release);
    detail += std::string("; trace clock: ") + a.TraceClockName();
  }
  // The clock first: records made before the callback is registered would use CUPTI's own.
  if (a.ActivityRegisterTimestampCallback &&
      a.ActivityRegisterTimestampCallback(&trace_clock_callback) == CUPTI_SUCCESS) {
    s->clock_offset_ns_ = 0;
  } else {
    // Older CUPTI: measure the offset between its clock and ours, taking the tightest bracket.
    int64_t best_gap = INT64_MAX;
    for (int i = 0; i < 7; ++i) {
      int64_t t0 = now_ns();
      uint64_t c = 0;
      a.GetTimestamp(&c);
      int64_t t1 = now_ns();
      if (t1 - t0 < best_gap) {
        best_gap = t1 - t0;
        s->clock_offset_ns_ = static_cast<int64_t>(c) - (t0 + (t1 - t0) / 2);
      }
    }
    detail += "; no timestamp callback, clock offset measured";
  }

  // Before the callbacks can run: they count (and hand over buffers) from their first call.
  g_counters.store(&counters, std::memory_order_release);
  g_sink.store(sink, std::memory_order_release);
  r = a.ActivityRegisterCallbacks(&on_buffer_requested, &on_buffer_completed);
  if (r != CUPTI_SUCCESS) {
    a.Unsubscribe(s->subscriber_);
    *error = "cuptiActivityRegisterCallbacks failed: " + a.result_string(r);
    return nullptr;
  }
  g_pool.store(pool, std::memory_order_release);

  // Kernels are the one kind we cannot do without; the others degrade to a note in stats.
  r = a.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    a.Unsubscribe(s->subscriber_);
    *error = "cuptiActivityEnable(CONCURRENT_KERNEL) failed: " + a.result_string(r) +
             " (no usable GPU or driver?)";
    return nullptr;
  }
  const std::pair<CUpti_ActivityKind, const char*> kinds[] = {
      {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
      {CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2"},
      {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
      {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
      {CUPTI_ACTIVITY_KIND_CUDA_EVENT, "CUDA_EVENT"},
      {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION"},
      {CUPTI_ACTIVITY_KIND_DEVICE, "DEVICE"},
      {CUPTI_ACTIVITY_KIND_CONTEXT, "CONTEXT"},
      {CUPTI_ACTIVITY_KIND_STREAM, "STREAM"},
  };
  for (const auto& [kind, name] : kinds) {
    r = a.ActivityEnable(kind);
    if (r != CUPTI_SUCCESS)
      detail += std::string("; ") + name + " unavailable: " + a.result_string(r);
  }
  if (config.cuda_api) {
    for (auto kind : {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER}) {
      r = a.ActivityEnable(kind);
      if (r != CUPTI_SUCCESS) detail += "; API recording unavailable: " + a.result_string(r);
    }
  } else if (!config.nccl_link) {
    detail += "; NCCL calls not linked to GPU work (C3SCOPE_NCCL_LINK=0)";
  } else if (a.ActivityEnableRuntimeApi && a.ActivityEnableDriverApi) {
    for (auto cbid : kRuntimeLinked) a.ActivityEnableRuntimeApi(cbid, 1);
    for (auto cbid : kDriverLinked) a.ActivityEnableDriverApi(cbid, 1);
  } else {
    // No per-function control: all driver API records, discarded by the writer; they are what
    // external correlation records hang on.
    a.ActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
    detail += "; per-API enabling unavailable, driver API records used for linking only";
  }
  if (config.launch_latency) {
    if (!a.ActivityEnableLatencyTimestamps ||
        a.ActivityEnableLatencyTimestamps(1) != CUPTI_SUCCESS) {
      detail += "; launch latency timestamps unavailable";
    }
  }

  s->stream_get_ctx_ = reinterpret_cast<StreamGetCtxFn>(dlsym(RTLD_DEFAULT, "cuStreamGetCtx"));
  s->ctx_get_current_ = reinterpret_cast<CtxGetCurrentFn>(dlsym(RTLD_DEFAULT, "cuCtxGetCurrent"));
  s->get_context_id_ = reinterpret_cast<GetContextIdFn>(dlsym(a.handle, "cuptiGetContextId"));
  *status_detail = detail;
  return s.release();
}

void CuptiSession::flush(bool forced) {
  if (abandoned_) return;
  api_.ActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
}

size_t CuptiSession::take_dropped() {
  if (abandoned_) return 0;
  size_t n = 0;
  if (api_.ActivityGetNumDroppedRecords(nullptr, 0, &n) != CUPTI_SUCCESS) return 0;
  return n;
}

void CuptiSession::push_external(uint64_t id) {
  if (!abandoned_)
    api_.ActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

void CuptiSession::pop_external() {
  if (!abandoned_) {
    uint64_t last = 0;
    api_.ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
  }
}

std::optional<std::pair<uint32_t, uint32_t>> CuptiSession::resolve_stream(void* cu_stream) {
  if (abandoned_ || !api_.GetStreamIdEx) return std::nullopt;
  void* ctx = nullptr;
  if (cu_stream && stream_get_ctx_) {
    if (stream_get_ctx_(cu_stream, &ctx) != 0) ctx = nullptr;
  }
  if (!ctx && ctx_get_current_) ctx_get_current_(&ctx);
  uint32_t stream_id = 0;
  if (api_.GetStreamIdEx(static_cast<CUcontext>(ctx), static_cast<CUstream>(cu_stream), 0,
                         &stream_id) != CUPTI_SUCCESS) {
    return std::nullopt;
  }
  uint32_t context_id = 0;
  if (ctx && get_context_id_) get_context_id_(static_cast<CUcontext>(ctx), &context_id);
  return std::make_pair(stream_id, context_id);
}

std::string CuptiSession::callback_name(int domain, uint32_t cbid) const {
  const char* name = nullptr;
  if (api_.GetCallbackName &&
      api_.GetCallbackName(static_cast<CUpti_CallbackDomain>(domain), cbid, &name) ==
          CUPTI_SUCCESS &&
      name) {
    return name;
  }
  return "cbid " + std::to_string(cbid);
}

}  // namespace c3::collector
