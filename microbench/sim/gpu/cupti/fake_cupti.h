// Internal interface between the parts of the fake CUPTI/GPU library (libcupti.so.13 double):
//   activity_buffers.cpp  activity state, clock, record batches, buffers, flush, drops
//   cupti_api.cpp         the exported cupti* functions, subscriber and callbacks
//   fake_driver.cpp       devices, contexts, streams and the cu* driver functions
//   fake_work.cpp         API calls and GPU work (launch, memcpy, memset, synchronize)
#pragma once

#include <cupti.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#define C3FAKE_EXPORT __attribute__((visibility("default")))

namespace c3::sim::gpu::cupti {

// ---- clock ----------------------------------------------------------------------------------
// The fake clock: the registered CUPTI timestamp callback, else CLOCK_REALTIME in ns.
uint64_t now_ns();
void set_timestamp_callback(CUpti_TimestampCallbackFunc fn);
// Real time for pacing the fake API calls (never reported).
uint64_t monotonic_ns();
// Busy-waits until CLOCK_MONOTONIC reaches the deadline.
void spin_until_mono(uint64_t deadline_mono_ns);

// ---- activity kinds ------------------------------------------------------------------------
bool kind_enabled(CUpti_ActivityKind kind);
// Returns the previous state. Kinds outside (INVALID, COUNT) are rejected by the caller.
bool set_kind_enabled(CUpti_ActivityKind kind, bool enabled);
// Per-cbid API activity (cuptiActivityEnableRuntimeApi / EnableDriverApi) of the runtime or the
// driver domain; a call's API record is written when its cbid or its whole kind is enabled. The
// setter returns false for a cbid outside the domain's range.
bool set_api_cbid_recorded(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, bool enabled);
bool api_recorded(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
void set_latency_timestamps(bool enabled);
bool latency_timestamps();
// Size of the record struct for a kind this double produces; 0 for any other kind.
size_t record_size(uint32_t kind);

// ---- record batches ------------------------------------------------------------------------
// Records that must land next to each other in one buffer (external correlation records, the
// API record and the activity record of one call). Each record is 8-byte aligned.
class RecordBatch {
 public:
  template <typename T>
  void append(const T& record) {
    static_assert(std::is_trivially_copyable_v<T>);
    constexpr size_t kSize = (sizeof(T) + 7U) & ~size_t{7};
    if (used_ + kSize > sizeof(storage_)) return;  // cannot happen with the records we build
    std::memcpy(bytes() + used_, &record, sizeof(T));
    used_ += kSize;
    ++count_;
  }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(storage_.data()); }
  size_t size() const { return used_; }
  size_t count() const { return count_; }
  bool empty() const { return count_ == 0; }

 private:
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(storage_.data()); }
  std::array<uint64_t, 160> storage_{};
  size_t used_ = 0;
  size_t count_ = 0;
};

// Copies the batch into the current activity buffer, requesting/completing buffers through
// the client's callbacks as needed (never while holding the internal lock). Records that find
// no buffer are dropped and counted.
void submit(const RecordBatch& batch);

// ---- buffers -------------------------------------------------------------------------------
void register_buffer_callbacks(CUpti_BuffersCallbackRequestFunc requested,
                               CUpti_BuffersCallbackCompleteFunc completed);
// Delivers the current buffer if it holds records. With `including_empty`, an empty current
// buffer is handed back too (validSize 0), as at cuptiFinalize.
void flush_all(bool including_empty);
size_t take_dropped_count();
void set_flush_period_ms(uint32_t period_ms);
// cuptiFinalize: flush, return buffers, forget callbacks, disable all kinds, reset counters.
void reset_activity_state();

// ---- external correlation ------------------------------------------------------------------
CUptiResult push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id);
CUptiResult pop_external_id(CUpti_ExternalCorrelationKind kind, uint64_t* last_id);
// Snapshot of the calling thread's stack tops, taken while the API call is in flight.
struct ExternalSnapshot {
  std::array<uint64_t, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE> top{};
  std::array<bool, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE> present{};
};
ExternalSnapshot snapshot_external_ids();
// Appends one CUpti_ActivityExternalCorrelation per kind present in the snapshot (if the
// EXTERNAL_CORRELATION kind is enabled).
void append_external_correlations(RecordBatch& batch, const ExternalSnapshot& snapshot,
                                  uint32_t correlation_id);

// ---- callbacks (cupti_api.cpp) -------------------------------------------------------------
bool api_callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
void invoke_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                         const CUpti_CallbackData& data);
void reset_subscriber_state();
// The CUPTI name of a cbid this double emits ("cudaLaunchKernel_v7000", "cuLaunchKernel"), or
// nullptr.
const char* callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

// ---- driver (fake_driver.cpp) --------------------------------------------------------------
// What the DEVICE and CONTEXT records say about each device.
struct DeviceProfile {
  std::string name = "C3Fake H100";  // "<name> <index>" in the records
  int sms = 132;
  uint64_t memory_bytes = 80ULL << 30;
  uint64_t bandwidth_kb_per_s = 3352320000ULL;  // as CUPTI reports it
  uint32_t l2_bytes = 50U << 20;
  uint32_t clock_khz = 1980000;
  uint32_t copy_engines = 3;
  uint32_t max_warps_per_sm = 64;
  uint32_t max_blocks_per_sm = 32;
  uint32_t shared_bytes_per_sm = 233472;
  uint32_t registers_per_sm = 65536;
  uint32_t cc_major = 9;
  uint32_t cc_minor = 0;
};
inline constexpr int kMaxDevices = 8;
// Sets the device count and profile; only before initialization (returns false after).
bool configure_devices(int count, const DeviceProfile& profile);
const DeviceProfile& device_profile();
struct Context;
struct Stream;
void ensure_initialized();
bool init_started();        // cuInit has been entered (InitializeInjection may be running)
bool driver_initialized();  // cuInit has finished
int device_count();
int current_device();
Context* context_for(int device);  // creates it (and reports it) on first use
uint32_t context_id(const Context* ctx);
int context_device(const Context* ctx);
// NULL, CU_STREAM_LEGACY and CU_STREAM_PER_THREAD mean the current device's default stream.
Stream* resolve_stream(const void* handle);
Stream* null_stream(int device);
// Registers a new stream of `device` (ids 13, 14, ...); nullptr for an invalid device.
Stream* new_stream(int device, int priority, bool non_blocking);
// Emits the DEVICE records (if the kind is enabled); called at cuInit and on enable.
void report_devices();
// cuptiGetStreamIdEx.
CUptiResult stream_id_for(CUcontext ctx, CUstream stream, uint32_t* id);

struct Stream {
  int device = 0;
  uint32_t id = 0;
  int priority = 0;
  bool non_blocking = false;
  bool is_null = false;
  Context* ctx = nullptr;
  // End of the last GPU work on this stream (fake clock); guarded by the driver's stream lock.
  uint64_t last_end = 0;
};

// Reserves [start, end) on the stream: start = max(earliest, stream's last end).
struct Interval {
  uint64_t start;
  uint64_t end;
};
Interval schedule_on(Stream* stream, uint64_t earliest, uint64_t duration_ns);
uint64_t stream_last_end(Stream* stream);
uint64_t device_last_end(int device);

// Process-wide correlation ids, starting at 1.
uint32_t next_correlation_id();
const char* intern(const char* s);

}  // namespace c3::sim::gpu::cupti
