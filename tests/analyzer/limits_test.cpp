// The loader's limits (analyzer/lib/src/time_limits.h, build.h): what it accepts keeps every
// length, sum and difference of the analysis in int64 and its memory bounded by the rows, whatever
// the input holds. Regressions: fuzz/regressions/trace/activity-time-overflow,
// fuzz/regressions/snapshot/activity-time-sum-overflow, fuzz/regressions/kineto/
// summary-span-out-of-range, fuzz/regressions/nsys/summary-device-limit-out-of-range; and a
// hostile correlation id that grew the link table to 1 GiB (issue 12).
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "c3/analyzer/summary/summary.h"
#include "open/build.h"
#include "time_limits.h"

using namespace c3::analyzer;

namespace {

// A trace of one process through the builder, as load_sources() makes it from `fill`.
Trace build(const std::function<void(TraceBuilder&)>& fill) {
  return load_sources({{"hostile.sqlite",
                        [&](TraceBuilder& b) {
                          Process p;
                          p.pid = 42;
                          b.process(1, p);
                          fill(b);
                        }}},
                      {});
}

}  // namespace

TEST(LinkTable, AHostileIdDoesNotGrowTheVector) {
  LinkTable t;
  t.slot(1, (int64_t{1} << 28) - 1, true) = 7;
  EXPECT_LE(t.dense_size(), size_t{1} << 20);
  EXPECT_EQ(t.find(1, (int64_t{1} << 28) - 1), 7u);
  EXPECT_EQ(t.find(1, 5), 0u);
  // Ids that came in the hash stay there once the vector reaches them: slot() and find() see
  // the same entry.
  t.slot(1, 3'000'001, true) = 9;  // beyond 2^20: the hash
  for (int64_t c = 0; c < 200'000; ++c) t.slot(1, 16 * c, true) = static_cast<uint32_t>(c % 5 + 1);
  EXPECT_GT(t.dense_size(), size_t{3'000'000});  // 200,000 entries justify 3.2M ids
  EXPECT_EQ(t.find(1, 3'000'001), 9u);
  EXPECT_EQ(t.slot(1, 3'000'001, true), 9u);
  EXPECT_EQ(t.find(1, int64_t{16} * 199'999), 199'999u % 5 + 1);
  EXPECT_EQ(t.find(1, int64_t{16} * 199'999 + 1), 0u);
  EXPECT_EQ(t.find(1, (int64_t{1} << 28) - 1), 7u);
  EXPECT_EQ(t.find(2, 3), 0u);  // another process
}

// A long run's ids start far above 0 (an importer says where: RowSink::correlations_from): the
// vector starts there, so they need no hash; an id below the start still works, through the hash.
TEST(LinkTable, IdsFromAHintedStartAreIndexedWithoutTheHash) {
  LinkTable t;
  t.starts_at(5'000'000);
  for (int64_t c = 0; c < 300'000; ++c)
    t.slot(1, 5'000'000 + c, true) = static_cast<uint32_t>(c % 7 + 1);
  EXPECT_GE(t.dense_size(), size_t{300'000});
  EXPECT_LE(t.dense_size(), size_t{2} << 20);  // from the start, not from 0
  t.slot(1, 12, true) = 5;                     // below it: the hash
  EXPECT_EQ(t.find(1, 12), 5u);
  EXPECT_EQ(t.find(1, 5'000'000 + 299'999), 299'999u % 7 + 1);
  EXPECT_EQ(t.find(1, 5'000'000 + 300'000), 0u);
  EXPECT_EQ(t.find(1, 4'999'999), 0u);
  EXPECT_EQ(t.find(2, 5'000'001), 0u);  // another process
  // A hint after the first id changes nothing (ids already placed stay where they are).
  t.starts_at(100);
  EXPECT_EQ(t.find(1, 12), 5u);
  EXPECT_EQ(t.find(1, 5'000'001), 2u);
}

TEST(LoaderLimits, ImpossibleRowsAreSkippedAndCounted) {
  const Trace t = build([](TraceBuilder& b) {
    const int32_t k = b.name("k");
    b.kernel(1, 1, 0, 7, 100, 200, k, 1);
    b.kernel(2, 1, 0, 7, -(int64_t{1} << 62), 0, k, 2);             // before -2^61
    b.kernel(3, 1, 0, 7, 300, 300 + (int64_t{1} << 50) + 1, k, 3);  // longer than 13 days
    Range g;
    g.name = "long";
    g.start = 0;
    g.end = (int64_t{1} << 50) + 1;
    b.range(1, g);
    Device d;
    d.device = 0;
    d.sm_count = -3;
    d.max_shared_per_sm = int64_t{1} << 55;
    d.memory_bandwidth = -1;
    b.device(1, d);
  });
  ASSERT_EQ(t.activities.size(), 1u);
  EXPECT_EQ(t.skipped, 3);
  EXPECT_NE(t.first_skipped.find("beyond +-2^61 ns"), std::string::npos) << t.first_skipped;
  EXPECT_TRUE(t.ranges.empty());
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].sm_count, 0);
  EXPECT_EQ(t.devices[0].max_shared_per_sm, 0);
  EXPECT_EQ(t.devices[0].memory_bandwidth, 0);
}

TEST(LoaderLimits, TimesNotOfOneRecordingAreRefused) {
  try {
    build([](TraceBuilder& b) {
      const int32_t k = b.name("k");
      b.kernel(1, 1, 0, 7, 0, 10, k, 1);
      b.kernel(2, 1, 0, 7, int64_t{1} << 51, (int64_t{1} << 51) + 10, k, 2);
    });
    FAIL() << "a process spanning 2^51 ns was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("hostile.sqlite"), std::string::npos) << m;
    EXPECT_NE(m.find("13 days"), std::string::npos) << m;
  }
  // Within the span but adding up to more than 2^50 ns: 20 overlapping kernels of 2^47 ns.
  EXPECT_THROW(build([](TraceBuilder& b) {
                 const int32_t k = b.name("k");
                 for (int i = 0; i < 20; ++i) b.kernel(i, 1, 0, i, 0, int64_t{1} << 47, k, i);
               }),
               std::invalid_argument);
  // Just within both: the summary of what loads reads back (what analyze --summary writes).
  const Trace ok = build([](TraceBuilder& b) {
    const int32_t k = b.name("k");
    for (int i = 0; i < 8; ++i) b.kernel(i, 1, 0, i, 0, int64_t{1} << 47, k, i);
  });
  SummaryOptions o;
  const std::vector<RankSummary> s = summarize(ok, o);
  EXPECT_NO_THROW(summaries_from_json(summaries_to_json(s, o), "a summary"));
}

// Process facts beyond what a summary holds are unknown (a Kineto baseTimeNanoseconds near 2^63
// made a summary that did not read back: fuzz/regressions/kineto/summary-anchor-out-of-range).
TEST(LoaderLimits, ImpossibleProcessFactsAreUnknown) {
  Trace t = load_sources({{"hostile.sqlite",
                           [](TraceBuilder& b) {
                             Process p;
                             p.pid = int64_t{1} << 62;
                             p.rank = -(int64_t{1} << 62);
                             p.world_size = 8;
                             p.anchor_trace_ns = 5;
                             p.anchor_realtime_ns = (int64_t{1} << 62) + 1;
                             b.process(1, p);
                             b.kernel(1, 1, 0, 7, 100, 200, b.name("k"), 1);
                           }}},
                         {});
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(t.processes[0].pid, 0);
  EXPECT_FALSE(t.processes[0].rank);
  EXPECT_EQ(t.processes[0].world_size, 8);
  EXPECT_EQ(t.processes[0].anchor_trace_ns, 0);
  EXPECT_EQ(t.processes[0].anchor_realtime_ns, 0);
  SummaryOptions o;
  EXPECT_NO_THROW(summaries_from_json(summaries_to_json(summarize(t, o), o), "a summary"));
}

// Issue 24: past 8,192 ranks at the per-rank bound the reduce's sums passed int64 (negative
// totals, exit 0). Every sum is checked: the reduce refuses, naming the summary and the rank.
TEST(ReduceLimits, TotalsPastInt64AreRefusedNamingTheSummary) {
  constexpr int64_t kBound = kAmountLimit;
  std::vector<std::function<void(RankSummary&)>> at_bound = {
      [](RankSummary& s) { s.kernels = kBound; },
      [](RankSummary& s) {
        s.total.span = kBound;
        s.total.time[1] = kBound;
      },
      [](RankSummary& s) {
        CollectiveStat c;
        c.op = "AllReduce";
        c.bucket = 1 << 20;
        c.count = kBound;
        c.total_ns = kBound;
        s.collectives = {c};
      },
      [](RankSummary& s) {
        StepSample st;
        st.index = 1;
        st.name = "ProfilerStep#1";
        st.end = 100;
        st.b.busy = kBound;
        s.steps = {st};
      },
      [](RankSummary& s) {
        InterferenceStat x;
        x.signature = "gemm <<<1, 1>>>";
        x.total_ns = kBound;
        s.interference = {x};
      },
  };
  SummaryOptions o;
  o.align = false;
  for (size_t k = 0; k < at_bound.size(); ++k) {
    RankSummary s;
    s.input = "job.summary.json";
    at_bound[k](s);
    std::vector<RankSummary> ranks(8191, s);
    EXPECT_NO_THROW(reduce(ranks, {"job.summary.json"}, o, false)) << k;
    ranks.resize(8193, s);
    try {
      reduce(std::move(ranks), {"job.summary.json"}, o, false);
      ADD_FAILURE() << "8,193 ranks at the bound were summed, case " << k;
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      EXPECT_EQ(
          m.rfind("'job.summary.json': adding rank 8191 (counting from 0) to the job's totals", 0),
          0u)
          << m;
      EXPECT_NE(m.find("passes int64"), std::string::npos) << m;
    }
  }
}

// Launch calls are read without their row id (a column less to decode): a skipped one is named
// by its place, and the id of the first one skipped (the message kept) is looked up then, once.
TEST(LoaderLimits, ASkippedCallIsNamedByItsRowIdLookedUpOnce) {
  std::vector<int64_t> asked;
  const Trace t = build([&asked](TraceBuilder& b) {
    b.expect_calls(true);
    const int32_t k = b.name("k"), call = b.name("cudaLaunchKernel");
    b.kernel(1, 1, 0, 7, 100, 200, k, 5);
    b.kernel(2, 1, 0, 7, 300, 400, k, 6);
    b.row_ids([&asked](int64_t place) {
      asked.push_back(place);
      return 1000 + 2 * place;  // ids with gaps
    });
    b.api_call(-1 - 0, 1, 5, 90, 95, call);    // place 0: fine
    b.api_call(-1 - 1, 1, 6, 300, 250, call);  // place 1: ends before it starts
    b.api_call(-1 - 2, 1, 6, 300, 250, call);  // place 2: counted, not named
    b.row_ids(nullptr);
  });
  EXPECT_EQ(t.skipped, 2);
  EXPECT_NE(t.first_skipped.find("api_call row 1002 "), std::string::npos) << t.first_skipped;
  EXPECT_EQ(asked, std::vector<int64_t>{1});
  ASSERT_EQ(t.activities.size(), 2u);
  EXPECT_EQ(t.activities.call_start[0], 90);
}
