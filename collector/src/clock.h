// The collector's trace clock. All *_ns columns it writes are CLOCK_MONOTONIC nanoseconds: NVTX
// and NCCL host times are read here, and CUPTI is told to use the same clock (timestamp
// callback) or, with a CUPTI too old for that, its timestamps are shifted by a measured offset.
//
// A simulated GPU may supply the clock instead: when the CUPTI library the collector attaches to
// exports `int64_t c3scope_trace_clock_ns(void)` and `const char* c3scope_trace_clock_name(void)`
// returns a name (the simulated node is running), timestamps come from it from then on (its
// virtual clock starts at the current CLOCK_MONOTONIC, so the trace stays continuous).
// Scheduling (flush periods, timeouts) always uses steady_ns().
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

namespace c3::collector {

inline constexpr const char* kTraceClockName = "CLOCK_MONOTONIC";

inline int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

using TraceClockFn = int64_t (*)();
// Set once, by CuptiSession::start, when the CUPTI library offers a trace clock.
inline std::atomic<TraceClockFn> g_trace_clock{nullptr};
inline std::atomic<const char*> g_trace_clock_name{nullptr};

// Timestamps for the trace.
inline int64_t now_ns() {
  const TraceClockFn f = g_trace_clock.load(std::memory_order_relaxed);
  return f != nullptr ? f() : clock_ns(CLOCK_MONOTONIC);
}
// Real time, for scheduling.
inline int64_t steady_ns() {
  return clock_ns(CLOCK_MONOTONIC);
}
inline const char* trace_clock_name() {
  const char* name = g_trace_clock_name.load(std::memory_order_relaxed);
  return name != nullptr ? name : kTraceClockName;
}

// OS thread id (gettid), cached per thread; reset in a forked child.
int64_t os_tid();
void reset_tid_after_fork();

}  // namespace c3::collector
