#include "buffer_pool.h"

#include <gtest/gtest.h>

#include <set>

#include "c3/tracedb/schema.h"
#include "counters.h"

using namespace c3::collector;

TEST(BufferPool, BoundedAndReused) {
  BufferPool pool(1 << 20);  // 1 MiB: 4 buffers of 256 KiB
  EXPECT_EQ(pool.buffer_size(), 256u * 1024);
  EXPECT_EQ(pool.capacity(), 4u);
  std::set<uint8_t*> got;
  for (int i = 0; i < 4; ++i) {
    uint8_t* b = pool.acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
    got.insert(b);
  }
  EXPECT_EQ(pool.acquire(), nullptr) << "exhausted pool must refuse, not grow";
  pool.release(*got.begin());
  EXPECT_EQ(pool.acquire(), *got.begin());
  for (auto* b : got) pool.release(b);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(Counters, EveryCollectorCounterIsDocumented) {
  std::set<std::string> documented;
  for (const auto& c : c3::tracedb::known_counters()) documented.insert(std::string(c.name));
  for (size_t i = 0; i < static_cast<size_t>(Counter::count_); ++i) {
    std::string name = counter_name(static_cast<Counter>(i));
    EXPECT_TRUE(documented.count(name)) << name << " missing from tracedb known_counters()";
  }
  EXPECT_TRUE(documented.count("cupti_status"));
  EXPECT_TRUE(documented.count("rows_written"));
}

TEST(Counters, AddGetReset) {
  Counters counters;
  EXPECT_EQ(counters.get(Counter::nccl_calls), 0);
  counters.add(Counter::nccl_calls);
  counters.add(Counter::nccl_calls, 41);
  counters.add(Counter::writer_ns, 7);
  EXPECT_EQ(counters.get(Counter::nccl_calls), 42);
  EXPECT_EQ(counters.get(Counter::writer_ns), 7);
  EXPECT_EQ(counters.get(Counter::flushes), 0);
  counters.reset();
  EXPECT_EQ(counters.get(Counter::nccl_calls), 0);
  EXPECT_EQ(counters.get(Counter::writer_ns), 0);
}
