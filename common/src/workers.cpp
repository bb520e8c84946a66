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
#include <atomic>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace c3::common {

namespace {

unsigned hardware_threads() {
  return std::max(1u, std::thread::hardware_concurrency());
}

// Threads started by run_workers and run_on_free_threads and not yet joined (or taken for them).
std::atomic<unsigned> g_started{0};

// Runs `worker` on this thread and on `extra` more, whose places in g_started are already taken;
// gives those back once they have returned.
void run_copies(size_t extra, const std::function<void()>& worker) {
  std::vector<std::thread> pool;
  pool.reserve(extra);
  try {
    for (size_t i = 0; i < extra; ++i) pool.emplace_back(worker);
  } catch (const std::system_error&) {  // NOLINT(bugprone-empty-catch): fewer threads do it all
  }
  worker();
  for (auto& t : pool) t.join();
  g_started -= static_cast<unsigned>(extra);
}

}  // namespace

void run_workers(size_t items, const std::function<void()>& worker, unsigned threads) {
  if (threads == 0) threads = hardware_threads();
  const size_t copies = std::min<size_t>(threads, std::max<size_t>(items, 1));
  g_started += static_cast<unsigned>(copies - 1);
  run_copies(copies - 1, worker);
}

void run_on_free_threads(size_t items, const std::function<void()>& worker, unsigned threads) {
  const unsigned cap = hardware_threads() - 1;  // the process's first thread is busy
  const size_t want = std::min<size_t>(threads == 0 ? cap : threads - 1, items > 0 ? items - 1 : 0);
  unsigned started = g_started.load();
  unsigned take = 0;
  do {
    take = started >= cap ? 0 : static_cast<unsigned>(std::min<size_t>(want, cap - started));
  } while (take > 0 && !g_started.compare_exchange_weak(started, started + take));
  run_copies(take, worker);
}

void release_free_memory() {
#ifdef C3_HAVE_MALLOC_TRIM
  static std::mutex mu;
  const std::lock_guard<std::mutex> lock(mu);
  malloc_trim(0);
#endif
}

}  // namespace c3::common
