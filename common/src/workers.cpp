#include "c3/common/workers.h"

#include <algorithm>
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

}  // namespace c3::common
