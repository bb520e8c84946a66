// Building blocks of GPU work shared by the two drivers of the facade: the explicit-duration
// test driver (fake_work.cpp, c3/sim/gpu/fixed_time.h) and the simulated node (node.cpp,
// c3/sim/gpu/node.h). One CUDA API call (callbacks, external correlation, API record), and the
// activity records of kernels, copies and sets in the real CUDA 13 layouts.
#pragma once

#include <cupti.h>
#include <sys/types.h>
#include <unistd.h>

#include <optional>

#include "fake_cupti.h"

namespace c3::sim::gpu::cupti {

inline constexpr uint64_t kApiRealNs = 1000;  // a fake API call takes >= 1 us of real time

// What an activity record needs to know about the call that launched it.
struct CallTimes {
  uint32_t correlation = 0;
  uint64_t start = 0;
  uint64_t end = 0;
};

// One CUDA API call: fresh correlation id, ENTER/EXIT callbacks, and (at finish) the external
// correlation records and the API record, when recorded.
class ApiCall {
 public:
  // With `at`, the call happens at that (simulated) time and takes no real time; without, it
  // starts now on the fake clock and lasts at least kApiRealNs of real time.
  ApiCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const Context* ctx,
          const void* params, const char* symbol, std::optional<uint64_t> at = std::nullopt)
      : domain_(domain), cbid_(cbid), virtual_(at.has_value()) {
    mono_start_ = monotonic_ns();
    start_ = at ? *at : now_ns();
    correlation_ = next_correlation_id();
    callbacks_ = api_callback_enabled(domain, cbid);
    if (callbacks_) {
      data_.callbackSite = CUPTI_API_ENTER;
      data_.functionName = callback_name(domain, cbid);
      data_.functionParams = params;
      if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        data_.functionReturnValue = &runtime_result_;
      } else {
        data_.functionReturnValue = &driver_result_;
      }
      data_.symbolName = symbol;
      data_.context = reinterpret_cast<CUcontext>(const_cast<Context*>(ctx));
      data_.contextUid = context_id(ctx);
      data_.correlationData = &correlation_data_;
      data_.correlationId = correlation_;
      invoke_api_callback(domain_, cbid_, data_);
    }
    // Taken after the ENTER callback, so ids pushed there (and popped at EXIT) count.
    external_ = snapshot_external_ids();
  }
  ApiCall(const ApiCall&) = delete;
  ApiCall& operator=(const ApiCall&) = delete;
  ~ApiCall() = default;

  uint32_t correlation_id() const { return correlation_; }
  uint64_t start() const { return start_; }
  uint64_t end() const { return end_; }
  CallTimes times() const { return {correlation_, start_, end_}; }

  // Ends the call (at `at` in simulated time) and appends its API record and external
  // correlation records to `batch` when they are recorded.
  void finish(RecordBatch& batch, std::optional<uint64_t> at = std::nullopt) {
    if (virtual_) {
      end_ = std::max(at.value_or(start_), start_);
    } else {
      spin_until_mono(mono_start_ + kApiRealNs);
      end_ = std::max(now_ns(), start_);
    }
    if (callbacks_) {
      data_.callbackSite = CUPTI_API_EXIT;
      invoke_api_callback(domain_, cbid_, data_);
    }
    if (!api_recorded(domain_, cbid_)) return;
    // Real CUPTI contract: external correlation records exist only next to an API record.
    append_external_correlations(batch, external_, correlation_);
    CUpti_ActivityAPI rec{};
    rec.kind = domain_ == CUPTI_CB_DOMAIN_RUNTIME_API ? CUPTI_ACTIVITY_KIND_RUNTIME
                                                      : CUPTI_ACTIVITY_KIND_DRIVER;
    rec.cbid = cbid_;
    rec.start = start_;
    rec.end = end_;
    rec.processId = static_cast<uint32_t>(getpid());
    rec.threadId = static_cast<uint32_t>(gettid());  // OS thread id (see README)
    rec.correlationId = correlation_;
    rec.returnValue = 0;
    batch.append(rec);
  }

 private:
  CUpti_CallbackDomain domain_;
  CUpti_CallbackId cbid_;
  bool virtual_ = false;
  uint64_t mono_start_ = 0;
  uint64_t start_ = 0;
  uint64_t end_ = 0;
  uint32_t correlation_ = 0;
  bool callbacks_ = false;
  CUpti_CallbackData data_{};
  uint64_t correlation_data_ = 0;
  cudaError_t runtime_result_ = cudaSuccess;
  CUresult driver_result_ = CUDA_SUCCESS;
  ExternalSnapshot external_;
};

// The kind kernel records are produced as (CONCURRENT_KERNEL preferred), INVALID if neither is
// enabled.
CUpti_ActivityKind kernel_kind();
CUpti_ActivityKernel10 kernel_record(CUpti_ActivityKind kind, const Stream& s, const char* name,
                                     const unsigned (&grid)[3], const unsigned (&block)[3],
                                     int regs, int static_smem, int dynamic_smem,
                                     const Interval& iv, const CallTimes& call);

struct MemoryKinds {
  CUpti_ActivityMemoryKind src;
  CUpti_ActivityMemoryKind dst;
  cudaMemcpyKind runtime_kind;
};

MemoryKinds memory_kinds(int copy_kind);
// MEMCPY (Memcpy6) or, for CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, MEMCPY2 (MemcpyPtoP4), when enabled.
void append_copy_record(RecordBatch& batch, const Stream& s, int copy_kind, uint64_t bytes,
                        int src_device, int dst_device, const Interval& iv, uint32_t correlation);
void append_memset_record(RecordBatch& batch, const Stream& s, uint64_t bytes, uint32_t value,
                          const Interval& iv, uint32_t correlation);
// A STREAM record of a stream just created by the call `correlation`, when enabled.
void append_stream_record(RecordBatch& batch, const Stream& s, uint32_t correlation);
// A SYNCHRONIZATION record of `call` (stream CUPTI_SYNCHRONIZATION_INVALID_VALUE: none).
CUpti_ActivitySynchronization2 sync_record(CUpti_ActivitySynchronizationType type,
                                           const ApiCall& call, uint32_t context, uint32_t stream);

}  // namespace c3::sim::gpu::cupti
