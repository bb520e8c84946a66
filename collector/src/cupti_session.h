// One process's use of CUPTI: subscription, activity buffers, enabled kinds, external
// correlation for NCCL calls, clock conversion.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "buffer_pool.h"
#include "config.h"
#include "counters.h"
#include "cupti_api.h"

namespace c3::collector {

class CuptiSession {
 public:
  // Where completed buffers go (the Recorder queues them for the writer thread). Called on
  // CUPTI's threads; must not block on I/O.
  using BufferSink = void (*)(uint8_t* data, size_t valid);

  // Loads CUPTI and starts recording into buffers from `pool`; completed buffers are handed to
  // `sink`, and the buffer callbacks count into `counters` (buffers, pool exhaustion, their own
  // time). `pool` and `counters` must outlive the process's use of CUPTI. Returns nullptr and
  // sets *error (one line) when CUPTI cannot be used; *status_detail says which optional parts
  // were unavailable.
  static CuptiSession* start(const Config& config, BufferPool* pool, Counters& counters,
                             BufferSink sink, std::string* error, std::string* status_detail);

  const CuptiApi& api() const { return api_; }
  // Subtracted from CUPTI timestamps (0 when CUPTI uses our clock through the callback).
  int64_t clock_offset_ns() const { return clock_offset_ns_; }
  bool records_api_calls() const { return config_cuda_api_; }

  // Hands every buffer CUPTI holds to the buffer-completed callback (forced: partial ones too).
  void flush(bool forced);
  // Records CUPTI dropped since the last call.
  size_t take_dropped();

  // External correlation (kind CUSTOM0) around NCCL calls: kernels launched in between are
  // linked to `id` through CUPTI's external correlation records.
  void push_external(uint64_t id);
  void pop_external();

  // CUPTI's (stream id, context id) for a CUstream / cudaStream_t (nullptr: the legacy default
  // stream of the current context); nullopt when it cannot be resolved.
  std::optional<std::pair<uint32_t, uint32_t>> resolve_stream(void* cu_stream);

  // Name of a runtime/driver function from its callback id ("cbid <n>" when unknown).
  std::string callback_name(int domain, uint32_t cbid) const;

  // In a forked child CUDA and CUPTI are unusable: stop touching them.
  void abandon() { abandoned_ = true; }
  bool abandoned() const { return abandoned_; }

 private:
  CuptiSession() = default;
  CuptiApi api_;
  BufferPool* pool_ = nullptr;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  int64_t clock_offset_ns_ = 0;
  bool config_cuda_api_ = false;
  bool abandoned_ = false;
  // Driver functions used to resolve streams, looked up in the process (libcuda).
  using StreamGetCtxFn = int (*)(void*, void**);
  using CtxGetCurrentFn = int (*)(void**);
  using GetContextIdFn = CUptiResult (*)(CUcontext, uint32_t*);
  StreamGetCtxFn stream_get_ctx_ = nullptr;
  CtxGetCurrentFn ctx_get_current_ = nullptr;
  GetContextIdFn get_context_id_ = nullptr;
};

}  // namespace c3::collector
