// Activity state of the fake CUPTI: enabled kinds, the clock, activity buffers (request, fill,
// complete, flush), dropped-record counting and the external correlation stacks.
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "fake_cupti.h"

namespace c3::sim::gpu::cupti {
namespace {

constexpr uintptr_t kRecordAlignment = 8;

struct ActivityState {
  std::array<std::atomic<bool>, CUPTI_ACTIVITY_KIND_COUNT> kinds{};
  std::array<std::atomic<bool>, CUPTI_RUNTIME_TRACE_CBID_SIZE> runtime_cbids{};
  std::array<std::atomic<bool>, CUPTI_DRIVER_TRACE_CBID_SIZE> driver_cbids{};
  std::atomic<bool> latency{false};
  std::atomic<CUpti_TimestampCallbackFunc> timestamp_cb{nullptr};

  // Buffers. `mu` is never held while a client callback runs.
  std::mutex mu;
  std::condition_variable request_done;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  uint8_t* buffer = nullptr;
  size_t size = 0;
  size_t used = 0;
  size_t records = 0;
  size_t max_records = 0;   // 0: as many as fit
  bool requesting = false;  // one thread at a time asks the client for a buffer
  size_t dropped = 0;

  // Periodic flush (cuptiActivityFlushPeriod).
  std::mutex flush_mu;
  std::condition_variable flush_cv;
  uint32_t period_ms = 0;
  bool stop_flusher = false;
  bool flusher_started = false;
  pid_t flusher_pid = 0;
  std::thread flusher;
};

// Never destroyed: client threads and atexit handlers may still call in during exit.
ActivityState& state() {
  static auto* s = new ActivityState;
  return *s;
}

// Set while this thread runs a buffer callback: records produced from inside one are dropped
// rather than deadlocking on the buffer hand-over.
thread_local bool t_in_buffer_callback = false;

class InBufferCallback {
 public:
  InBufferCallback() : saved_(t_in_buffer_callback) { t_in_buffer_callback = true; }
  ~InBufferCallback() { t_in_buffer_callback = saved_; }
  InBufferCallback(const InBufferCallback&) = delete;
  InBufferCallback& operator=(const InBufferCallback&) = delete;

 private:
  bool saved_;
};

struct TakenBuffer {
  uint8_t* buffer = nullptr;
  size_t size = 0;
  size_t used = 0;
};

// Takes the current buffer out of the state (caller holds mu).
TakenBuffer take_current(ActivityState& s) {
  TakenBuffer t{s.buffer, s.size, s.used};
  s.buffer = nullptr;
  s.size = 0;
  s.used = 0;
  s.records = 0;
  s.max_records = 0;
  return t;
}

void deliver(CUpti_BuffersCallbackCompleteFunc completed, const TakenBuffer& t) {
  if (completed == nullptr || t.buffer == nullptr) return;
  InBufferCallback guard;
  completed(nullptr, 0, t.buffer, t.size, t.used);
}

bool fits(const ActivityState& s, const RecordBatch& batch) {
  if (s.buffer == nullptr) return false;
  if (s.used + batch.size() > s.size) return false;
  return s.max_records == 0 || s.records + batch.count() <= s.max_records;
}

thread_local std::array<std::vector<uint64_t>, CUPTI_EXTERNAL_CORRELATION_KIND_SIZE> t_external;

bool valid_external_kind(CUpti_ExternalCorrelationKind kind) {
  return kind > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID &&
         kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

void flusher_main() {
  ActivityState& s = state();
  std::unique_lock lock(s.flush_mu);
  while (!s.stop_flusher) {
    if (s.period_ms == 0) {
      s.flush_cv.wait(lock);
      continue;
    }
    const auto period = std::chrono::milliseconds(s.period_ms);
    if (s.flush_cv.wait_for(lock, period) == std::cv_status::timeout && !s.stop_flusher &&
        s.period_ms != 0) {
      lock.unlock();
      flush_all(false);
      lock.lock();
    }
  }
}

// Stops the flusher thread during static destruction, before the client's statics go away.
struct FlusherStopper {
  FlusherStopper() = default;
  FlusherStopper(const FlusherStopper&) = delete;
  FlusherStopper& operator=(const FlusherStopper&) = delete;
  ~FlusherStopper() {
    ActivityState& s = state();
    {
      std::lock_guard lock(s.flush_mu);
      s.stop_flusher = true;
    }
    s.flush_cv.notify_all();
    if (getpid() != s.flusher_pid) return;  // a forked child: the thread is not ours
    if (s.flusher.joinable() && s.flusher.get_id() != std::this_thread::get_id()) {
      s.flusher.join();
    }
  }
};

}  // namespace

// ---- clock ----------------------------------------------------------------------------------

uint64_t now_ns() {
  if (CUpti_TimestampCallbackFunc cb = state().timestamp_cb.load()) return cb();
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

void set_timestamp_callback(CUpti_TimestampCallbackFunc fn) {
  state().timestamp_cb.store(fn);
}

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

void spin_until_mono(uint64_t deadline_mono_ns) {
  while (monotonic_ns() < deadline_mono_ns) {
  }
}

// ---- kinds ----------------------------------------------------------------------------------

bool kind_enabled(CUpti_ActivityKind kind) {
  const auto k = static_cast<size_t>(kind);
  return k < CUPTI_ACTIVITY_KIND_COUNT && state().kinds[k].load(std::memory_order_relaxed);
}

bool set_kind_enabled(CUpti_ActivityKind kind, bool enabled) {
  const auto k = static_cast<size_t>(kind);
  if (k >= CUPTI_ACTIVITY_KIND_COUNT) return false;
  return state().kinds[k].exchange(enabled);
}

namespace {

// The per-cbid record switch of an API domain (runtime, else driver); nullptr out of range.
std::atomic<bool>* cbid_switch(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  ActivityState& s = state();
  const std::span<std::atomic<bool>> switches = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                                                    ? std::span<std::atomic<bool>>(s.runtime_cbids)
                                                    : std::span<std::atomic<bool>>(s.driver_cbids);
  return cbid < switches.size() ? &switches[cbid] : nullptr;
}

}  // namespace

bool set_api_cbid_recorded(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, bool enabled) {
  std::atomic<bool>* on = cbid_switch(domain, cbid);
  if (on == nullptr) return false;
  on->store(enabled);
  return true;
}

bool api_recorded(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (kind_enabled(runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER)) return true;
  const std::atomic<bool>* on = cbid_switch(domain, cbid);
  return on != nullptr && on->load();
}

void set_latency_timestamps(bool enabled) {
  state().latency.store(enabled);
}
bool latency_timestamps() {
  return state().latency.load();
}

size_t record_size(uint32_t kind) {
  struct Row {
    CUpti_ActivityKind kind;
    size_t size;
  };
  static constexpr Row kRows[] = {
      {CUPTI_ACTIVITY_KIND_MEMCPY, sizeof(CUpti_ActivityMemcpy6)},
      {CUPTI_ACTIVITY_KIND_MEMCPY2, sizeof(CUpti_ActivityMemcpyPtoP4)},
      {CUPTI_ACTIVITY_KIND_MEMSET, sizeof(CUpti_ActivityMemset4)},
      {CUPTI_ACTIVITY_KIND_KERNEL, sizeof(CUpti_ActivityKernel10)},
      {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, sizeof(CUpti_ActivityKernel10)},
      {CUPTI_ACTIVITY_KIND_DRIVER, sizeof(CUpti_ActivityAPI)},
      {CUPTI_ACTIVITY_KIND_RUNTIME, sizeof(CUpti_ActivityAPI)},
      {CUPTI_ACTIVITY_KIND_DEVICE, sizeof(CUpti_ActivityDevice5)},
      {CUPTI_ACTIVITY_KIND_CONTEXT, sizeof(CUpti_ActivityContext3)},
      {CUPTI_ACTIVITY_KIND_STREAM, sizeof(CUpti_ActivityStream)},
      {CUPTI_ACTIVITY_KIND_CUDA_EVENT, sizeof(CUpti_ActivityCudaEvent2)},
      {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, sizeof(CUpti_ActivitySynchronization2)},
      {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, sizeof(CUpti_ActivityExternalCorrelation)},
  };
  for (const Row& r : kRows) {
    if (static_cast<uint32_t>(r.kind) == kind) return r.size;
  }
  return 0;
}

// ---- buffers --------------------------------------------------------------------------------

void submit(const RecordBatch& batch) {
  if (batch.empty()) return;
  ActivityState& s = state();
  std::unique_lock lock(s.mu);
  if (t_in_buffer_callback) {
    s.dropped += batch.count();
    return;
  }
  for (;;) {
    if (fits(s, batch)) {
      std::memcpy(s.buffer + s.used, batch.data(), batch.size());
      s.used += batch.size();
      s.records += batch.count();
      return;
    }
    if (s.requesting) {  // another thread is getting a buffer; use it when it arrives
      s.request_done.wait(lock, [&s] { return !s.requesting; });
      continue;
    }
    if (s.requested == nullptr || s.completed == nullptr) {
      s.dropped += batch.count();
      return;
    }
    // This thread hands the full buffer back and asks for a new one, without the lock.
    s.requesting = true;
    const TakenBuffer full = take_current(s);
    const auto requested = s.requested;
    const auto completed = s.completed;
    lock.unlock();
    deliver(completed, full);
    uint8_t* fresh = nullptr;
    size_t size = 0;
    size_t max_records = 0;
    {
      InBufferCallback guard;
      requested(&fresh, &size, &max_records);
    }
    lock.lock();
    s.requesting = false;
    s.request_done.notify_all();
    const bool aligned = (reinterpret_cast<uintptr_t>(fresh) % kRecordAlignment) == 0;
    if (fresh == nullptr || size == 0 || !aligned) {
      s.dropped += batch.count();
      if (fresh != nullptr && size != 0) {  // unusable (misaligned): give it straight back
        lock.unlock();
        deliver(completed, TakenBuffer{fresh, size, 0});
      }
      return;
    }
    if (s.buffer != nullptr) {
      // A flush or finalize raced with us; cannot happen while `requesting` is set, but keep
      // the invariant of one current buffer.
      const TakenBuffer other = take_current(s);
      lock.unlock();
      deliver(completed, other);
      lock.lock();
    }
    s.buffer = fresh;
    s.size = size;
    s.max_records = max_records;
    if (!fits(s, batch)) {  // the batch is larger than a whole fresh buffer
      s.dropped += batch.count();
      return;
    }
  }
}

void register_buffer_callbacks(CUpti_BuffersCallbackRequestFunc requested,
                               CUpti_BuffersCallbackCompleteFunc completed) {
  ActivityState& s = state();
  std::lock_guard lock(s.mu);
  s.requested = requested;
  s.completed = completed;
}

void flush_all(bool including_empty) {
  ActivityState& s = state();
  std::unique_lock lock(s.mu);
  // A thread that is handing a full buffer back is part of this flush: wait until it is done
  // (bounded, so a client that flushes while holding a lock its callback needs cannot hang).
  if (!t_in_buffer_callback) {
    s.request_done.wait_for(lock, std::chrono::seconds(5), [&s] { return !s.requesting; });
  }
  if (s.buffer == nullptr || (s.records == 0 && !including_empty)) return;
  const TakenBuffer t = take_current(s);
  const auto completed = s.completed;
  lock.unlock();
  deliver(completed, t);
}

size_t take_dropped_count() {
  ActivityState& s = state();
  std::lock_guard lock(s.mu);
  const size_t n = s.dropped;
  s.dropped = 0;
  return n;
}

void set_flush_period_ms(uint32_t period_ms) {
  ActivityState& s = state();
  {
    std::lock_guard lock(s.flush_mu);
    s.period_ms = period_ms;
    if (period_ms != 0 && !s.flusher_started) {
      static FlusherStopper stopper;
      s.flusher_started = true;
      s.flusher_pid = getpid();
      s.flusher = std::thread(flusher_main);
    }
  }
  s.flush_cv.notify_all();
}

void reset_activity_state() {
  flush_all(true);
  ActivityState& s = state();
  {
    std::lock_guard lock(s.mu);
    s.requested = nullptr;
    s.completed = nullptr;
    s.dropped = 0;
  }
  for (auto& k : s.kinds) k.store(false);
  for (auto& c : s.runtime_cbids) c.store(false);
  for (auto& c : s.driver_cbids) c.store(false);
  s.latency.store(false);
  s.timestamp_cb.store(nullptr);
  set_flush_period_ms(0);
  for (auto& stack : t_external) stack.clear();
}

// ---- external correlation -------------------------------------------------------------------

CUptiResult push_external_id(CUpti_ExternalCorrelationKind kind, uint64_t id) {
  if (!valid_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
  t_external[static_cast<size_t>(kind)].push_back(id);
  return CUPTI_SUCCESS;
}

CUptiResult pop_external_id(CUpti_ExternalCorrelationKind kind, uint64_t* last_id) {
  if (!valid_external_kind(kind)) return CUPTI_ERROR_INVALID_PARAMETER;
  auto& stack = t_external[static_cast<size_t>(kind)];
  if (stack.empty()) return CUPTI_ERROR_QUEUE_EMPTY;
  if (last_id != nullptr) *last_id = stack.back();
  stack.pop_back();
  return CUPTI_SUCCESS;
}

ExternalSnapshot snapshot_external_ids() {
  ExternalSnapshot snap;
  for (size_t k = 0; k < t_external.size(); ++k) {
    if (!t_external[k].empty()) {
      snap.present[k] = true;
      snap.top[k] = t_external[k].back();
    }
  }
  return snap;
}

void append_external_correlations(RecordBatch& batch, const ExternalSnapshot& snapshot,
                                  uint32_t correlation_id) {
  if (!kind_enabled(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION)) return;
  for (size_t k = 0; k < snapshot.present.size(); ++k) {
    if (!snapshot.present[k]) continue;
    CUpti_ActivityExternalCorrelation rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    rec.externalKind = static_cast<CUpti_ExternalCorrelationKind>(k);
    rec.externalId = snapshot.top[k];
    rec.correlationId = correlation_id;
    rec.reserved = 0;
    batch.append(rec);
  }
}

}  // namespace c3::sim::gpu::cupti
