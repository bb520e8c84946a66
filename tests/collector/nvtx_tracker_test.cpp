// NvtxTracker: NVTX semantics turned into nvtx_range rows, driven with explicit thread ids and
// timestamps.
#include "nvtx_tracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace c3::collector {
namespace {

using tracedb::NvtxRangeRow;
using Attr = NvtxAttributes;

struct Capture {
  std::mutex mu;
  std::vector<NvtxRangeRow> rows;
  std::atomic<int64_t> unclosed{0};
  std::atomic<int64_t> unmatched{0};

  NvtxTracker make() {
    return NvtxTracker(
        [this](NvtxRangeRow&& r) {
          std::lock_guard lock(mu);
          rows.push_back(std::move(r));
        },
        [this](NvtxTracker::Problem p, int64_t n) {
          (p == NvtxTracker::Problem::unclosed_range ? unclosed : unmatched) += n;
        });
  }
};

// The expected row for a range; only the columns a test names differ from these.
NvtxRangeRow row(const char* kind, const char* domain, const char* name, int64_t tid, int64_t start,
                 int64_t end, std::optional<int64_t> depth) {
  NvtxRangeRow r;
  r.thread_id = tid;
  r.kind = kind;
  r.domain = domain;
  r.name = name;
  r.start_ns = start;
  r.end_ns = end;
  r.depth = depth;
  r.closed = 1;
  return r;
}

void expect_row(const NvtxRangeRow& got, const NvtxRangeRow& want) {
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.process_id, 0);
  EXPECT_EQ(got.thread_id, want.thread_id);
  EXPECT_EQ(got.end_thread_id, want.end_thread_id);
  EXPECT_EQ(got.kind, want.kind);
  EXPECT_EQ(got.domain, want.domain);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.category, want.category);
  EXPECT_EQ(got.category_name, want.category_name);
  EXPECT_EQ(got.color, want.color);
  EXPECT_EQ(got.payload_int, want.payload_int);
  EXPECT_EQ(got.payload_double, want.payload_double);
  EXPECT_EQ(got.start_ns, want.start_ns);
  EXPECT_EQ(got.end_ns, want.end_ns);
  EXPECT_EQ(got.depth, want.depth);
  EXPECT_EQ(got.closed, want.closed);
}

TEST(NvtxTracker, NestedPushPopGivesDepthsAndExactRows) {
  Capture c;
  NvtxTracker t = c.make();
  EXPECT_EQ(t.push(NvtxTracker::kDefaultDomain, 7, 100, Attr::text("outer")), 0);
  EXPECT_EQ(t.push(NvtxTracker::kDefaultDomain, 7, 110, Attr::text("inner")), 1);
  EXPECT_EQ(t.pop(NvtxTracker::kDefaultDomain, 7, 120), 1);
  EXPECT_EQ(t.pop(NvtxTracker::kDefaultDomain, 7, 130), 0);

  ASSERT_EQ(c.rows.size(), 2u);
  expect_row(c.rows[0], row("push_pop", "default", "inner", 7, 110, 120, 1));
  expect_row(c.rows[1], row("push_pop", "default", "outer", 7, 100, 130, 0));
  EXPECT_EQ(t.stats().open_push_ranges, 0);
  EXPECT_EQ(c.unmatched, 0);
}

TEST(NvtxTracker, DepthIsPerThreadAndPerDomain) {
  Capture c;
  NvtxTracker t = c.make();
  const uint64_t lib = t.create_domain("mylib");
  EXPECT_NE(lib, NvtxTracker::kDefaultDomain);
  EXPECT_EQ(t.create_domain("mylib"), lib);
  EXPECT_EQ(t.domain_name(lib), "mylib");

  EXPECT_EQ(t.push(NvtxTracker::kDefaultDomain, 1, 10, Attr::text("a")), 0);
  EXPECT_EQ(t.push(lib, 1, 11, Attr::text("b")), 0);  // other domain: its own stack
  EXPECT_EQ(t.push(NvtxTracker::kDefaultDomain, 2, 12, Attr::text("c")), 0);  // other thread
  EXPECT_EQ(t.push(lib, 1, 13, Attr::text("d")), 1);
  // Pops interleave across domains: each pops its own domain's innermost range.
  EXPECT_EQ(t.pop(NvtxTracker::kDefaultDomain, 1, 20), 0);
  EXPECT_EQ(t.pop(lib, 1, 21), 1);
  EXPECT_EQ(t.pop(lib, 1, 22), 0);
  EXPECT_EQ(t.pop(NvtxTracker::kDefaultDomain, 2, 23), 0);

  ASSERT_EQ(c.rows.size(), 4u);
  expect_row(c.rows[0], row("push_pop", "default", "a", 1, 10, 20, 0));
  expect_row(c.rows[1], row("push_pop", "mylib", "d", 1, 13, 21, 1));
  expect_row(c.rows[2], row("push_pop", "mylib", "b", 1, 11, 22, 0));
  expect_row(c.rows[3], row("push_pop", "default", "c", 2, 12, 23, 0));
}

TEST(NvtxTracker, StartEndAcrossThreads) {
  Capture c;
  NvtxTracker t = c.make();
  const uint64_t dom = t.create_domain("io");
  uint64_t id1 = 0;
  uint64_t id2 = 0;
  std::thread starter([&] {
    id1 = t.start(NvtxTracker::kDefaultDomain, 100, 1000, Attr::text("load"));
    id2 = t.start(dom, 100, 1001, Attr::text("parse"));
  });
  starter.join();
  EXPECT_NE(id1, 0u);
  EXPECT_NE(id2, 0u);
  EXPECT_NE(id1, id2);
  EXPECT_EQ(t.stats().open_start_ranges, 2);
  std::thread ender([&] {
    EXPECT_TRUE(t.end(id2, 200, 1500));
    EXPECT_TRUE(t.end(id1, 201, 1600));
  });
  ender.join();

  ASSERT_EQ(c.rows.size(), 2u);
  auto parse = row("start_end", "io", "parse", 100, 1001, 1500, std::nullopt);
  parse.end_thread_id = 200;
  auto load = row("start_end", "default", "load", 100, 1000, 1600, std::nullopt);
  load.end_thread_id = 201;
  expect_row(c.rows[0], parse);
  expect_row(c.rows[1], load);
  EXPECT_EQ(t.stats().open_start_ranges, 0);
}

TEST(NvtxTracker, MarkHasZeroLength) {
  Capture c;
  NvtxTracker t = c.make();
  t.mark(NvtxTracker::kDefaultDomain, 3, 555, Attr::text("checkpoint"));
  ASSERT_EQ(c.rows.size(), 1u);
  expect_row(c.rows[0], row("mark", "default", "checkpoint", 3, 555, 555, std::nullopt));
}

TEST(NvtxTracker, PayloadColorAndCategoryName) {
  Capture c;
  NvtxTracker t = c.make();
  const uint64_t dom = t.create_domain("d");
  t.name_category(dom, 5, "compute");
  t.name_category(NvtxTracker::kDefaultDomain, 5, "other domain");

  Attr a = Attr::text("k");
  a.category = 5;
  a.has_color = true;
  a.argb = 0xFF00FF00u;
  a.payload = Attr::Payload::int32;
  a.payload_int = -42;
  t.mark(dom, 1, 10, a);

  Attr b = Attr::text("k2");
  b.category = 6;  // named only while the range is open: the name still applies
  b.payload = Attr::Payload::float64;
  b.payload_double = 2.5;
  t.push(dom, 1, 20, b);
  t.name_category(dom, 6, "late");
  t.pop(dom, 1, 30);

  Attr u = Attr::text("big");
  u.payload = Attr::Payload::uint64;
  u.payload_int = static_cast<int64_t>(std::numeric_limits<uint64_t>::max());  // as the glue
  t.mark(NvtxTracker::kDefaultDomain, 1, 40, u);

  Attr f = Attr::text("f");
  f.payload = Attr::Payload::float32;
  f.payload_double = static_cast<double>(0.25f);
  f.category = 9;  // never named
  t.mark(NvtxTracker::kDefaultDomain, 1, 50, f);

  ASSERT_EQ(c.rows.size(), 4u);
  auto r0 = row("mark", "d", "k", 1, 10, 10, std::nullopt);
  r0.category = 5;
  r0.category_name = "compute";
  r0.color = 0xFF00FF00LL;
  r0.payload_int = -42;
  expect_row(c.rows[0], r0);
  auto r1 = row("push_pop", "d", "k2", 1, 20, 30, 0);
  r1.category = 6;
  r1.category_name = "late";
  r1.payload_double = 2.5;
  expect_row(c.rows[1], r1);
  auto r2 = row("mark", "default", "big", 1, 40, 40, std::nullopt);
  r2.payload_int = -1;  // UINT64_MAX, wrapped
  expect_row(c.rows[2], r2);
  auto r3 = row("mark", "default", "f", 1, 50, 50, std::nullopt);
  r3.category = 9;
  r3.payload_double = 0.25;
  expect_row(c.rows[3], r3);
}

TEST(NvtxTracker, RegisteredStrings) {
  Capture c;
  NvtxTracker t = c.make();
  const uint64_t dom = t.create_domain("reg");
  const uint64_t h1 = t.register_string(dom, "step");
  const uint64_t h2 = t.register_string(dom, "other");
  EXPECT_NE(h1, 0u);
  EXPECT_NE(h1, h2);
  EXPECT_EQ(t.register_string(dom, "step"), h1);

  Attr a;
  a.message = Attr::Message::registered;
  a.registered = h1;
  t.mark(dom, 1, 1, a);
  a.registered = 999999;  // never handed out: an empty name, not a crash
  t.mark(dom, 1, 2, a);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].name, "step");
  EXPECT_EQ(c.rows[1].name, "");
}

TEST(NvtxTracker, WideStringsBecomeUtf8) {
  Capture c;
  NvtxTracker t = c.make();
  t.mark(NvtxTracker::kDefaultDomain, 1, 1, Attr::text(L"caf\u00e9 \u6f22 \U0001F600"));
  const wchar_t bad[] = {L'a', static_cast<wchar_t>(0xD800), L'b', static_cast<wchar_t>(-5), 0};
  t.mark(NvtxTracker::kDefaultDomain, 1, 2, Attr::text(bad));
  t.mark(NvtxTracker::kDefaultDomain, 1, 3, Attr::text(static_cast<const wchar_t*>(nullptr)));
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].name, "caf\xC3\xA9 \xE6\xBC\xA2 \xF0\x9F\x98\x80");
  EXPECT_EQ(c.rows[1].name,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
  EXPECT_EQ(c.rows[2].name, "");
  // UTF-16 surrogate pairs (what a 16-bit wchar_t would carry) are joined.
  const wchar_t pair[] = {static_cast<wchar_t>(0xD83D), static_cast<wchar_t>(0xDE00), 0};
  EXPECT_EQ(wide_to_utf8(pair), "\xF0\x9F\x98\x80");
}

TEST(NvtxTracker, UnmatchedPopAndEndAreCounted) {
  Capture c;
  NvtxTracker t = c.make();
  EXPECT_LT(t.pop(NvtxTracker::kDefaultDomain, 1, 10), 0);
  t.push(NvtxTracker::kDefaultDomain, 1, 11, Attr::text("x"));
  EXPECT_LT(t.pop(NvtxTracker::kDefaultDomain, 2, 12), 0);  // another thread's push
  EXPECT_LT(t.pop(t.create_domain("d"), 1, 13), 0);         // another domain's push
  EXPECT_FALSE(t.end(12345, 1, 14));
  EXPECT_FALSE(t.end(0, 1, 15));
  const uint64_t id = t.start(NvtxTracker::kDefaultDomain, 1, 16, Attr::text("s"));
  EXPECT_TRUE(t.end(id, 1, 17));
  EXPECT_FALSE(t.end(id, 1, 18));  // ended twice
  EXPECT_EQ(c.unmatched, 6);
  EXPECT_EQ(t.stats().unmatched_ends, 6);
  EXPECT_EQ(c.rows.size(), 1u);  // only the start/end range
  EXPECT_EQ(t.pop(NvtxTracker::kDefaultDomain, 1, 19), 0);
}

TEST(NvtxTracker, CloseAllEmitsOpenRangesUnclosed) {
  Capture c;
  NvtxTracker t = c.make();
  t.push(NvtxTracker::kDefaultDomain, 1, 10, Attr::text("outer"));
  t.push(NvtxTracker::kDefaultDomain, 1, 20, Attr::text("inner"));
  const uint64_t id = t.start(t.create_domain("d"), 2, 15, Attr::text("async"));
  (void)id;
  t.push(NvtxTracker::kDefaultDomain, 3, 30, Attr::text("done"));
  t.pop(NvtxTracker::kDefaultDomain, 3, 40);
  c.rows.clear();

  t.close_all(1000);
  ASSERT_EQ(c.rows.size(), 3u);  // in start order
  auto outer = row("push_pop", "default", "outer", 1, 10, 1000, 0);
  outer.closed = 0;
  auto async = row("start_end", "d", "async", 2, 15, 1000, std::nullopt);
  async.closed = 0;
  auto inner = row("push_pop", "default", "inner", 1, 20, 1000, 1);
  inner.closed = 0;
  expect_row(c.rows[0], outer);
  expect_row(c.rows[1], async);
  expect_row(c.rows[2], inner);
  EXPECT_EQ(c.unclosed, 3);
  EXPECT_EQ(t.stats().unclosed_ranges, 3);
  EXPECT_EQ(t.stats().open_push_ranges, 0);
  EXPECT_EQ(t.stats().open_start_ranges, 0);

  c.rows.clear();
  t.close_all(2000);  // nothing left
  EXPECT_TRUE(c.rows.empty());
  EXPECT_EQ(c.unclosed, 3);
}

TEST(NvtxTracker, ResetAfterForkDropsOpenRangesSilently) {
  Capture c;
  NvtxTracker t = c.make();
  const uint64_t dom = t.create_domain("kept");
  const uint64_t s = t.register_string(dom, "kept string");
  t.name_category(dom, 1, "cat");
  t.push(dom, 1, 10, Attr::text("parent push"));
  const uint64_t id = t.start(dom, 1, 11, Attr::text("parent start"));

  t.reset_after_fork();
  EXPECT_EQ(t.stats().open_push_ranges, 0);
  EXPECT_EQ(t.stats().open_start_ranges, 0);
  EXPECT_LT(t.pop(dom, 1, 20), 0);  // the parent's push is gone
  EXPECT_FALSE(t.end(id, 1, 21));
  t.close_all(100);
  EXPECT_TRUE(c.rows.empty());
  EXPECT_EQ(c.unclosed, 0);

  // Handles from before the fork still work in the child.
  Attr a;
  a.message = Attr::Message::registered;
  a.registered = s;
  a.category = 1;
  EXPECT_EQ(t.push(dom, 5, 30, a), 0);
  EXPECT_EQ(t.pop(dom, 5, 40), 0);
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].domain, "kept");
  EXPECT_EQ(c.rows[0].name, "kept string");
  EXPECT_EQ(c.rows[0].category_name, "cat");
}

TEST(NvtxTracker, DomainDestroyAndUnknownHandles) {
  Capture c;
  NvtxTracker t = c.make();
  const uint64_t dom = t.create_domain("gone");
  EXPECT_TRUE(t.destroy_domain(dom));
  EXPECT_FALSE(t.destroy_domain(NvtxTracker::kDefaultDomain));
  EXPECT_FALSE(t.destroy_domain(424242));
  EXPECT_EQ(t.create_domain("gone"), dom);  // the name keeps its handle
  t.mark(424242, 1, 1, Attr::text("x"));    // unknown handle: default domain
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_EQ(c.rows[0].domain, "default");
}

TEST(NvtxTracker, SixteenThreadsNestedPushPop) {
  constexpr int kThreads = 16;
  constexpr int kIterations = 1000;
  constexpr int kNest = 4;
  constexpr int64_t kCallsPerIteration = int64_t{2} * kNest;
  Capture c;
  NvtxTracker t = c.make();
  const uint64_t dom = t.create_domain("threads");
  std::atomic<int> wrong_returns{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const int64_t tid = 1000 + i;
      int64_t ts = 0;
      for (int it = 0; it < kIterations; ++it) {
        for (int d = 0; d < kNest; ++d) {
          // Half the threads alternate domains per level, to mix stacks on one thread.
          const uint64_t domain = (i % 2 == 1 && d % 2 == 1) ? dom : NvtxTracker::kDefaultDomain;
          const int want = (i % 2 == 1) ? d / 2 : d;
          if (t.push(domain, tid, ++ts, Attr::text("r")) != want) ++wrong_returns;
        }
        for (int d = kNest - 1; d >= 0; --d) {
          const uint64_t domain = (i % 2 == 1 && d % 2 == 1) ? dom : NvtxTracker::kDefaultDomain;
          const int want = (i % 2 == 1) ? d / 2 : d;
          if (t.pop(domain, tid, ++ts) != want) ++wrong_returns;
        }
      }
    });
  }
  for (auto& th : threads) th.join();

  EXPECT_EQ(wrong_returns, 0);
  EXPECT_EQ(c.unmatched, 0);
  ASSERT_EQ(c.rows.size(), static_cast<size_t>(kThreads * kIterations * kNest));
  // Per thread: every row's interval matches its nesting level exactly (timestamps count up
  // by one per call, so level d of iteration k spans [k*8+d+1, k*8+8-d]).
  std::map<int64_t, std::vector<const NvtxRangeRow*>> by_thread;
  for (const auto& r : c.rows) by_thread[r.thread_id].push_back(&r);
  ASSERT_EQ(by_thread.size(), static_cast<size_t>(kThreads));
  for (auto& [tid, rows] : by_thread) {
    const bool mixed = (tid - 1000) % 2 == 1;
    ASSERT_EQ(rows.size(), static_cast<size_t>(kIterations * kNest)) << "thread " << tid;
    std::map<int64_t, int> per_depth;
    for (const NvtxRangeRow* r : rows) {
      const int64_t k = (r->start_ns - 1) / kCallsPerIteration;
      const int64_t level = (r->start_ns - 1) % kCallsPerIteration;
      ASSERT_EQ(r->end_ns, (k + 1) * kCallsPerIteration - level) << "thread " << tid;
      const int64_t want_depth = mixed ? level / 2 : level;
      ASSERT_EQ(r->depth, want_depth) << "thread " << tid;
      ASSERT_EQ(r->domain, (mixed && level % 2 == 1) ? "threads" : "default");
      ++per_depth[*r->depth];
    }
    for (auto& [depth, n] : per_depth) {
      EXPECT_EQ(n, kIterations * (mixed ? 2 : 1)) << "thread " << tid << " depth " << depth;
    }
  }
}

TEST(NvtxTracker, ConcurrentStartEndAndRegistration) {
  Capture c;
  NvtxTracker t = c.make();
  constexpr int kRanges = 2000;
  std::vector<std::atomic<uint64_t>> ids(kRanges);
  std::thread starter([&] {
    for (int i = 0; i < kRanges; ++i) {
      ids[i].store(t.start(NvtxTracker::kDefaultDomain, 1, i, Attr::text("s")));
    }
  });
  std::thread ender([&] {
    for (int i = 0; i < kRanges; ++i) {
      uint64_t id = 0;
      while ((id = ids[i].load()) == 0) std::this_thread::yield();
      t.end(id, 2, kRanges + i);
    }
  });
  std::thread registrar([&] {
    for (int i = 0; i < 3000; ++i) t.register_string(t.create_domain("d"), std::to_string(i));
  });
  starter.join();
  ender.join();
  registrar.join();
  EXPECT_EQ(c.rows.size(), static_cast<size_t>(kRanges));
  EXPECT_EQ(c.unmatched, 0);
  EXPECT_EQ(t.register_string(t.create_domain("d"), "2999"),
            t.register_string(t.create_domain("d"), "2999"));
}

}  // namespace
}  // namespace c3::collector
