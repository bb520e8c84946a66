// The collector's counters, written to the trace's stats table. Ground floor: any part of the
// collector may count, from any thread, without knowing who owns the counters (the Recorder
// does, and hands a Counters& to the CUPTI session and the trace writer).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace c3::collector {

// Names in counter_name() match tracedb::known_counters().
enum class Counter {
  cupti_records,
  cupti_dropped_records,
  cupti_buffers,
  buffer_pool_exhausted,
  cupti_unknown_records,
  cupti_invalid_records,
  nvtx_events,
  nvtx_unclosed_ranges,
  nvtx_unmatched_ends,
  nccl_calls,
  queue_dropped_rows,
  collector_overhead_ns,
  writer_ns,
  flushes,
  count_,
};
const char* counter_name(Counter c);

// One relaxed atomic per counter: safe from any thread and from CUPTI's callbacks.
class Counters {
 public:
  void add(Counter c, int64_t delta = 1) {
    values_[static_cast<size_t>(c)].fetch_add(delta, std::memory_order_relaxed);
  }
  int64_t get(Counter c) const {
    return values_[static_cast<size_t>(c)].load(std::memory_order_relaxed);
  }
  // Every counter back to 0 (a forked child).
  void reset() {
    for (auto& v : values_) v.store(0);
  }

 private:
  std::atomic<int64_t> values_[static_cast<size_t>(Counter::count_)] = {};
};

}  // namespace c3::collector
