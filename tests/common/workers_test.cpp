// Work spread over threads (c3/common/workers.h): every item is taken once, by at most the
// threads asked for, and the call returns only when every copy of the worker has.
#include "c3/common/workers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace c3::common {
namespace {

// The items a run of `threads` copies took, and the threads that took them.
struct Taken {
  std::vector<int> count;
  std::set<std::thread::id> threads;
};

Taken take_all(size_t items, unsigned threads) {
  Taken t;
  t.count.assign(items, 0);
  std::atomic<size_t> next{0};
  std::mutex mu;
  run_workers(
      items,
      [&] {
        for (size_t i = next++; i < items; i = next++) {
          const std::lock_guard<std::mutex> lock(mu);
          ++t.count[i];
          t.threads.insert(std::this_thread::get_id());
        }
      },
      threads);
  return t;
}

TEST(Workers, EveryItemIsTakenOnce) {
  for (unsigned threads : {0u, 1u, 3u, 8u}) {
    const Taken t = take_all(1000, threads);
    for (size_t i = 0; i < t.count.size(); ++i) {
      ASSERT_EQ(t.count[i], 1) << i << " " << threads;
    }
    if (threads > 0) {
      EXPECT_LE(t.threads.size(), threads);
    }
  }
}

TEST(Workers, OneThreadIsTheCallersAndNoItemsStillRunsOnce) {
  const Taken one = take_all(50, 1);
  ASSERT_EQ(one.threads.size(), 1u);
  EXPECT_EQ(*one.threads.begin(), std::this_thread::get_id());
  int calls = 0;
  run_workers(
      0, [&] { ++calls; }, 4);
  EXPECT_EQ(calls, 1) << "no items: the caller's copy only, which finds nothing to do";
}

TEST(Workers, NeverMoreCopiesThanItems) {
  std::atomic<int> calls{0};
  run_workers(
      2, [&] { ++calls; }, 16);
  EXPECT_EQ(calls.load(), 2);
}

// Nested work (a summary's parts inside the map of inputs) takes only threads that are free: with
// every hardware thread running a copy of the outer work, each nested call runs on its caller.
TEST(Workers, NestedWorkRunsOnItsCallerWhenNoThreadIsFree) {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<size_t> next{0};
  std::mutex mu;
  int nested = 0, elsewhere = 0;
  run_workers(
      hw,
      [&] {
        for (size_t i = next++; i < hw; i = next++) {
          const std::thread::id caller = std::this_thread::get_id();
          std::atomic<size_t> item{0};
          run_on_free_threads(50, [&] {
            for (size_t k = item++; k < 50; k = item++) {
              const std::lock_guard<std::mutex> lock(mu);
              ++nested;
              if (std::this_thread::get_id() != caller) ++elsewhere;
            }
          });
        }
      },
      hw);
  EXPECT_EQ(nested, static_cast<int>(hw) * 50);
  EXPECT_EQ(elsewhere, 0);
}

// Alone, it takes every item once, on at most the threads asked for.
TEST(Workers, FreeThreadsTakeEveryItemOnce) {
  std::vector<int> count(1000, 0);
  std::set<std::thread::id> threads;
  std::atomic<size_t> next{0};
  std::mutex mu;
  run_on_free_threads(
      count.size(),
      [&] {
        for (size_t i = next++; i < count.size(); i = next++) {
          const std::lock_guard<std::mutex> lock(mu);
          ++count[i];
          threads.insert(std::this_thread::get_id());
        }
      },
      2);
  for (size_t i = 0; i < count.size(); ++i) ASSERT_EQ(count[i], 1) << i;
  EXPECT_LE(threads.size(), 2u);
}

}  // namespace
}  // namespace c3::common
