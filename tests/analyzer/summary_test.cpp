// Summary files (summary.h): a round trip keeps every number the reduce reads, and a file that
// is valid JSON but holds values out of range (a hostile or hand-edited baseline) is refused
// with one reason, never read into sums that overflow.
#include "c3/analyzer/summary.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "c3/analyzer/classify.h"

using namespace c3::analyzer;

namespace {

Trace small_trace() {
  Trace t;
  Process p;
  p.pid = 7;
  p.rank = 0;
  p.host = "node0";
  t.processes.push_back(p);
  t.names = {"gemm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
  Collective c;
  c.comm_id = "c0";
  c.op = "AllReduce";
  c.bytes = 1 << 20;
  c.nranks = 2;
  for (int64_t k = 0; k < 20; ++k) {
    t.activities.push(k * 100, k * 100 + 60, 0, 7, 0, 0, Kind::kernel, 0);
    const size_t i = t.activities.push(k * 100 + 30, k * 100 + 90, 1, 8, 0, 0, Kind::kernel, 0);
    c.seq = k;
    c.gpu_start = k * 100 + 30;
    c.gpu_end = k * 100 + 90;
    t.activities.collective[i] = static_cast<int32_t>(t.collectives.size());
    t.collectives.push_back(c);
  }
  t.ranges.push_back({0, 1, "pytorch", "ProfilerStep#3", 0, 1000, 0});
  t.ranges.push_back({0, 1, "pytorch", "ProfilerStep#4", 1000, 2000, 0});
  t.activities.sort();
  classify(t, Rules::defaults());
  return t;
}

std::string mutate(const std::string& text, const std::function<void(nlohmann::json&)>& f) {
  nlohmann::json j = nlohmann::json::parse(text);
  f(j["ranks"][0]);
  return j.dump();
}

}  // namespace

TEST(Summary, RoundTripKeepsTheReport) {
  const Trace t = small_trace();
  const std::vector<RankSummary> s = summarize(t, {});
  const std::string text = summaries_to_json(s, {});
  const std::vector<RankSummary> back = summaries_from_json(text, "s.json");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].calls.records, s[0].calls.records);
  ASSERT_EQ(back[0].steps.size(), 2u);
  EXPECT_EQ(back[0].steps[1].index, 4);
  const Report a = reduce(s, {"x"}, {}), b = reduce(back, {"x"}, {});
  EXPECT_EQ(to_json(a), to_json(b));
  EXPECT_EQ(summaries_to_json(back, {}), text) << "written again, the same bytes";
}

TEST(Summary, ValuesOutOfRangeAreRefused) {
  const std::string text = summaries_to_json(summarize(small_trace(), {}), {});
  struct Bad {
    const char* why;
    std::function<void(nlohmann::json&)> edit;
  };
  const std::vector<Bad> bad = {
      {"kernels is not a whole number", [](auto& r) { r["counts"]["kernels"] = 1.5; }},
      {"kernels is out of range", [](auto& r) { r["counts"]["kernels"] = uint64_t{1} << 63; }},
      {"span is out of range", [](auto& r) { r["total"]["span"] = int64_t{1} << 55; }},
      {"time must hold 4 numbers",
       [](auto& r) {
         r["total"]["time"] = {1, 2};
       }},
      {"start_ns is out of range",
       [](auto& r) { r["steps"]["samples"][0]["start_ns"] = INT64_MIN; }},
      {"a step ends before it starts", [](auto& r) { r["steps"]["samples"][0]["end_ns"] = -5; }},
      {"bucket_bytes is not a power of two",
       [](auto& r) { r["collectives"][0]["bucket_bytes"] = 3000; }},
      {"bin count is out of range",
       [](auto& r) {
         r["collectives"][0]["busbw"] = {{"bins", {{1, int64_t{1} << 62}}}, {"zeros", 0}};
       }},
      {"records: a sequence number, size or time out of range",
       [](auto& r) { r["records"]["gpu_start_ns"][0] = INT64_MAX; }},
      {"records: columns of different lengths", [](auto& r) { r["records"]["op"].push_back(0); }},
  };
  for (const Bad& b : bad) {
    try {
      summaries_from_json(mutate(text, b.edit), "base.json");
      ADD_FAILURE() << "accepted: " << b.why;
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind("base.json: not a valid c3scope summary: ", 0), 0u) << m;
      EXPECT_NE(m.find(b.why), std::string::npos) << m;
    }
  }
}

TEST(Summary, SchemaOneFilesAreReadWithoutWhatTwoAdded) {
  Trace t = small_trace();
  t.processes[0].versions = {{"nccl", "2.17.1"}};
  const std::string text = summaries_to_json(summarize(t, {}), {});
  const std::vector<RankSummary> now = summaries_from_json(text, "s.json");
  ASSERT_FALSE(now[0].kernel_stats.empty());
  EXPECT_EQ(now[0].kernel_stats[0].count, 20);
  EXPECT_EQ(now[0].process.versions, t.processes[0].versions);
  EXPECT_EQ(now[0].collectives[0].duration.count(), 20);
  nlohmann::json j = nlohmann::json::parse(text);
  j["schema"] = "c3scope-summary/1";
  auto& r = j["ranks"][0];
  r.erase("kernels");
  r["process"].erase("versions");
  for (auto& c : r["collectives"]) c.erase("duration_ns");
  const std::vector<RankSummary> old = summaries_from_json(j.dump(), "old.json");
  ASSERT_EQ(old.size(), 1u);
  EXPECT_TRUE(old[0].kernel_stats.empty());
  EXPECT_TRUE(old[0].process.versions.empty());
  EXPECT_TRUE(old[0].collectives[0].duration.empty());
  EXPECT_EQ(old[0].steps.size(), now[0].steps.size());
}
