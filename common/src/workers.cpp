#include "c3/common/workers.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define C3_MALLOC_REPLACED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define C3_MALLOC_REPLACED 1
#endif
#if defined(__GLIBC__) && !defined(C3_MALLOC_REPLACED)
#include <malloc.h>
#define C3_HAVE_MALLOC_TRIM 1
#endif

#include <algorithm>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace c3::common {

void run_workers(size_t items, const std::function<void()>& worker, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const size_t copies = std::min<size_t>(threads, std::max<size_t>(items, 1));
  std::vector<std::thread> pool;
  pool.reserve(copies - 1);
  try {
    for (size_t i = 1; i < copies; ++i) pool.emplace_back(worker);
  } catch (const std::system_error&) {  // NOLINT(bugprone-empty-catch): fewer threads do it all
  }
  worker();
  for (auto& t : pool) t.join();
}

void release_free_memory() {
#ifdef C3_HAVE_MALLOC_TRIM
  static std::mutex mu;
  const std::lock_guard<std::mutex> lock(mu);
  malloc_trim(0);
#endif
}

}  // namespace c3::common
