// Wall time and peak memory, as the benchmarks of perf/ measure them.
#pragma once

#include <sys/resource.h>

#include <chrono>

namespace c3::perf {

using Clock = std::chrono::steady_clock;

// Seconds from t0 to now.
inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The process's peak resident set so far, in KiB (getrusage's ru_maxrss).
inline long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace c3::perf
