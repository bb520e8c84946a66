// The collector's trace clock. All *_ns columns it writes are CLOCK_MONOTONIC nanoseconds: NVTX
// and NCCL host times are read here, and CUPTI is told to use the same clock (timestamp
// callback) or, with a CUPTI too old for that, its timestamps are shifted by a measured offset.
#pragma once

#include <time.h>

#include <cstdint>

namespace c3::collector {

inline constexpr const char* kTraceClockName = "CLOCK_MONOTONIC";

inline int64_t clock_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

inline int64_t now_ns() {
  return clock_ns(CLOCK_MONOTONIC);
}

// OS thread id (gettid), cached per thread; reset in a forked child.
int64_t os_tid();
void reset_tid_after_fork();

}  // namespace c3::collector
