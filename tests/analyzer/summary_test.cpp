// Summary files (summary.h): a round trip keeps every number the reduce reads, and a file that
// is valid JSON but holds values out of range (a hostile or hand-edited baseline) is refused
// with one reason, never read into sums that overflow.
#include "c3/analyzer/summary/summary.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/summary/pipeline.h"
#include "c3/common/text_limits.h"

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

// A contention (bench) entry of a summary with `with` set.
nlohmann::json contention_entry(const nlohmann::json& with) {
  nlohmann::json c = {{"device", 0},
                      {"kernels_with_demand", 0},
                      {"kernels_unknown", 0},
                      {"oversubscribed_ns", 0},
                      {"oversubscribed_kernels", nlohmann::json::array()},
                      {"copy_overlap_ns", 0},
                      {"copy_overlap_by_kind", nlohmann::json::array()},
                      {"queued_kernels", 0},
                      {"queue_median_ns", 0.0},
                      {"queue_p95_ns", 0.0},
                      {"queue_max_ns", 0.0},
                      {"copy_bandwidth_share", nlohmann::json::array()}};
  c.update(with);
  return c;
}
nlohmann::json bench_entry(const nlohmann::json& with) {
  nlohmann::json b = {{"backend", "nccl"}, {"simulated", false}, {"label", "x"},
                      {"scenario", "s"},   {"t_comp", 1.0},      {"t_comm", 1.0},
                      {"t_c3", 1.0},       {"busbw", nullptr}};
  b.update(with);
  return b;
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
      // Issue 24: doubles within their meaning, strings within the caps (text_limits.h).
      {"overlap_pct_sum is out of range",
       [](auto& r) { r["collectives"][0]["overlap_pct_sum"] = -1.0; }},
      {"overlap_pct_sum is out of range",
       [](auto& r) { r["collectives"][0]["overlap_pct_sum"] = 100.0 * 20 + 1; }},
      {"queue_median_ns is out of range",
       [](auto& r) {
         r["contention"] = {contention_entry({{"queue_median_ns", -5.0}})};
       }},
      {"copy_bandwidth_share is out of range",
       [](auto& r) {
         r["contention"] = {
             contention_entry({{"copy_bandwidth_share", nlohmann::json::array({{"HtoD", -0.5}})}})};
       }},
      {"t_comp is out of range",
       [](auto& r) {
         r["bench"] = {bench_entry({{"t_comp", -1.0}})};
       }},
      {"busbw is out of range",
       [](auto& r) {
         r["bench"] = {bench_entry({{"busbw", -1.0}})};
       }},
      {"t_c3 is not a number",
       [](auto& r) {
         r["bench"] = {bench_entry({{"t_c3", "1"}})};
       }},
      {"host is longer than 4096 bytes",
       [](auto& r) { r["process"]["host"] = std::string(4097, 'h'); }},
      {"command_line is longer than 65536 bytes",
       [](auto& r) { r["process"]["command_line"] = std::string(65537, 'c'); }},
      {"name is longer than 4096 bytes",
       [](auto& r) { r["kernels"][0]["name"] = std::string(5000, 'k'); }},
      {"ops is longer than 4096 bytes", [](auto& r) { r["ops"][0] = std::string(5000, 'o'); }},
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

// Schema 3 keeps the CPU-side collectives a trace names (issue 24 item 7: analyze SUMMARY said
// nothing of a gloo job's collectives); schema 2 files read without them; a bad entry is refused.
TEST(Summary, SchemaThreeKeepsCpuCollectivesAndTwoReadsWithout) {
  Trace t = small_trace();
  t.cpu_collectives[{"gloo", "all_reduce"}] = 60;
  t.cpu_collectives[{"gloo", "broadcast"}] = 2;
  const std::string text = summaries_to_json(summarize(t, {}), {});
  const std::vector<RankSummary> now = summaries_from_json(text, "s.json");
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].cpu_collectives, t.cpu_collectives);
  nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["schema"], "c3scope-summary/5");
  j["schema"] = "c3scope-summary/2";
  j["ranks"][0]["counts"].erase("cpu_collectives");
  EXPECT_TRUE(summaries_from_json(j.dump(), "two.json")[0].cpu_collectives.empty());
  for (const char* bad : {R"(["gloo", "all_reduce"])", R"(["gloo", 3, 1])",
                          R"(["gloo", "all_reduce", -1])", R"({"gloo": 1})"}) {
    nlohmann::json k = nlohmann::json::parse(text);
    k["ranks"][0]["counts"]["cpu_collectives"] = nlohmann::json::array();
    k["ranks"][0]["counts"]["cpu_collectives"].push_back(nlohmann::json::parse(bad));
    EXPECT_THROW(summaries_from_json(k.dump(), "bad.json"), std::invalid_argument) << bad;
  }
}

// Issue 25: schema 4 keeps the why/ analyses (idle causes of the rank, its devices, streams and
// steps; launch statistics; queues) and their options; schema 3 reads without them, and the
// report says they are not there rather than showing zeros; parts that do not add up are refused.
TEST(Summary, SchemaFourKeepsIdleCausesLaunchesAndQueues) {
  Trace t = small_trace();
  for (size_t i = 0; i < t.activities.size(); ++i) {
    t.activities.set_call(i, t.activities.start[i] - 50, t.activities.start[i] - 40,
                          static_cast<int32_t>(t.names.size()));
  }
  t.names.push_back("cudaLaunchKernel");
  SummaryOptions o;
  o.idle.kernel_wait_ns = 7;
  o.idle.micro_ns = 3;
  o.launch.delay_cutoff_ns = 9;
  o.queue.limit = 2;
  const std::vector<RankSummary> made = summarize(t, o);
  ASSERT_TRUE(made[0].why);
  ASSERT_TRUE(made[0].launch_calls);
  ASSERT_FALSE(made[0].launches.empty());
  ASSERT_FALSE(made[0].queues.empty());
  const std::string text = summaries_to_json(made, o);
  SummaryOptions used;
  const std::vector<RankSummary> back = summaries_from_json(text, "s.json", &used);
  EXPECT_EQ(used.idle.kernel_wait_ns, 7);
  EXPECT_EQ(used.idle.micro_ns, 3);
  EXPECT_EQ(used.launch.delay_cutoff_ns, 9);
  EXPECT_EQ(used.queue.limit, 2);
  ASSERT_TRUE(back[0].why);
  EXPECT_EQ(back[0].idle, made[0].idle);
  EXPECT_EQ(back[0].device_idle, made[0].device_idle);
  ASSERT_EQ(back[0].stream_idle.size(), made[0].stream_idle.size());
  EXPECT_EQ(back[0].stream_idle[0].causes, made[0].stream_idle[0].causes);
  ASSERT_EQ(back[0].launches.size(), made[0].launches.size());
  EXPECT_EQ(back[0].launches[0].delay_ns, made[0].launches[0].delay_ns);
  EXPECT_EQ(back[0].launches[0].delay.count(), made[0].launches[0].delay.count());
  ASSERT_EQ(back[0].queues.size(), made[0].queues.size());
  EXPECT_EQ(back[0].queues[0].max, made[0].queues[0].max);
  ASSERT_EQ(back[0].steps.size(), made[0].steps.size());
  EXPECT_EQ(back[0].steps[0].idle, made[0].steps[0].idle);
  // The same report from the summary as from the trace.
  const Report direct = reduce(made, {"t"}, o);
  const Report again = reduce(back, {"t"}, o);
  EXPECT_TRUE(direct.why);
  EXPECT_EQ(to_json(direct), to_json(again));
  // Schema 3: no why block; the report says so.
  nlohmann::json j = nlohmann::json::parse(text);
  j["schema"] = "c3scope-summary/3";
  j["ranks"][0].erase("why");
  for (auto& st : j["ranks"][0]["steps"]["samples"]) st.erase("idle");
  const std::vector<RankSummary> old = summaries_from_json(j.dump(), "three.json");
  EXPECT_FALSE(old[0].why);
  EXPECT_FALSE(reduce(old, {"t"}, o).why);
  // Parts that do not add up to idle are refused.
  nlohmann::json k = nlohmann::json::parse(text);
  k["ranks"][0]["why"]["idle"]["other"] = k["ranks"][0]["why"]["idle"]["other"].get<int64_t>() + 1;
  EXPECT_THROW(summaries_from_json(k.dump(), "bad.json"), std::invalid_argument);
}

// Issue 25: communication wait. Rank 1's AllReduces start 20 ns after rank 0's, so each gap of
// rank 0's collective stream (90 to 130 of every 100) is waited out before the last rank arrived
// (at 150): all 40 ns move from other to comm_wait, from traces and from schema 5 summaries alike;
// a schema 4 summary has no gaps, and the report says so.
TEST(Summary, SchemaFiveKeepsCommGapsAndFourReadsWithout) {
  Trace t0 = small_trace();
  Trace t1 = small_trace();
  t1.processes[0].rank = 1;
  t1.processes[0].pid = 8;
  for (size_t i = 0; i < t1.activities.size(); ++i) {
    if (t1.activities.collective[i] < 0) continue;
    t1.activities.start[i] += 20;
    t1.activities.end[i] += 20;
  }
  for (Collective& c : t1.collectives) {
    c.gpu_start += 20;
    c.gpu_end += 20;
  }
  t1.activities.sort();
  SummaryOptions o;
  o.idle.kernel_wait_ns = 7;
  std::vector<RankSummary> made = summarize(t0, o);
  made.push_back(summarize(t1, o)[0]);
  ASSERT_TRUE(made[0].comm_gaps_known);
  ASSERT_FALSE(made[0].comm_gaps.empty());
  const Report direct = reduce(made, {"r0", "r1"}, o);
  EXPECT_TRUE(direct.comm_wait_known);
  // Rank 1's gaps (110 to 150) wait 20 ns each for rank 0 (it arrives at 130): the rest is its
  // own lateness.
  std::map<int, int64_t> waited;
  for (const StreamIdle& x : direct.streams) {
    const IdleCauses& c = x.causes;
    EXPECT_EQ(c.host_wait + c.kernel_wait + c.other + c.comm_wait, c.idle);
    if (x.stream == 8) waited[x.process] = c.comm_wait;
  }
  EXPECT_EQ(waited[0], 19 * 40);
  EXPECT_EQ(waited[1], 19 * 20);
  const std::string text = summaries_to_json(made, o);
  const std::vector<RankSummary> back = summaries_from_json(text, "s.json");
  EXPECT_EQ(back[0].comm_gaps, made[0].comm_gaps);
  EXPECT_EQ(to_json(reduce(back, {"r0", "r1"}, o)), to_json(direct));
  // Schema 4: no gaps; comm wait is not known, and stays in other.
  nlohmann::json j = nlohmann::json::parse(text);
  j["schema"] = "c3scope-summary/4";
  for (auto& r : j["ranks"]) r["why"].erase("comm_gaps");
  const std::vector<RankSummary> read_four = summaries_from_json(j.dump(), "four.json");
  const Report four = reduce(read_four, {"r0", "r1"}, o);
  EXPECT_FALSE(four.comm_wait_known);
  for (const StreamIdle& x : four.streams) EXPECT_EQ(x.causes.comm_wait, 0);
  // Written again (c3scope-mpi sends summaries as summary JSON), it still has no gaps known.
  const std::vector<RankSummary> again =
      summaries_from_json(summaries_to_json(read_four, o), "again.json");
  ASSERT_EQ(again.size(), 2u);
  EXPECT_FALSE(again[0].comm_gaps_known);
  EXPECT_FALSE(reduce(again, {"r0", "r1"}, o).comm_wait_known);
  // A gap naming a communicator or step the summary lacks is refused.
  for (const char* bad : {"[0, 0, 8, -1, 5, 0, 90, 130]", "[3, 0, 8, 99, 0, 0, 90, 130]",
                          "[2, 0, 8, -1, 0, 0, 130, 90]", "[9, 0, 8, -1, 0, 0, 90, 130]"}) {
    nlohmann::json k = nlohmann::json::parse(text);
    k["ranks"][0]["why"]["comm_gaps"].push_back(nlohmann::json::parse(bad));
    EXPECT_THROW(summaries_from_json(k.dump(), "bad.json"), std::invalid_argument) << bad;
  }
}

// A ProfilerStep#N past the summaries' index limit (2^61) keeps its order index: N =
// 2^63-1 made a summary that did not read back (found by fuzz/corpus/kineto/boundary_values.json).
TEST(Summary, HugeStepNumbersReadBack) {
  Trace t = small_trace();
  t.ranges[1].name = "ProfilerStep#9223372036854775807";
  const std::string text = summaries_to_json(summarize(t, {}), {});
  const std::vector<RankSummary> back = summaries_from_json(text, "s.json");
  ASSERT_EQ(back[0].steps.size(), 2u);
  EXPECT_EQ(back[0].steps[0].index, 3);
  EXPECT_EQ(back[0].steps[1].index, 1);
}

// Issue 24: what JSON cannot say (inf) is refused too, and so are the options' doubles.
TEST(Summary, NonFiniteNumbersAndBadOptionsAreRefused) {
  const std::string text = summaries_to_json(summarize(small_trace(), {}), {});
  nlohmann::json j = nlohmann::json::parse(text);
  j["ranks"][0]["collectives"][0]["overlap_pct_sum"] = 12345.5;
  std::string inf = j.dump();
  const size_t at = inf.find("12345.5");
  ASSERT_NE(at, std::string::npos);
  inf.replace(at, 7, "1e999");
  EXPECT_THROW(summaries_from_json(inf, "inf.json"), std::invalid_argument);
  j = nlohmann::json::parse(text);
  j["options"]["overlap_fraction"] = 1.5;
  SummaryOptions made;
  try {
    summaries_from_json(j.dump(), "opt.json", &made);
    ADD_FAILURE() << "an overlap fraction of 1.5 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("overlap_fraction is out of range"), std::string::npos)
        << e.what();
  }
}

// Issue 24: a 70 KB gzip summary with a 50 MB host name took 16 s and 4.5 GB and wrote a 1.15 GB
// report. Strings past the caps are refused on read (one line naming the file and the field);
// what analyze --summary writes is cut to the caps, so it always reads back.
TEST(Summary, LongStringsAreCappedOnWriteAndRefusedOnRead) {
  Trace t = small_trace();
  t.processes[0].host = std::string(3 << 20, 'h');
  t.processes[0].command_line = std::string(100000, 'c');
  // Not UTF-8: each byte becomes U+FFFD (3 bytes) when written, still within the cap.
  t.names[0] = std::string(5000, '\xff');
  const std::string text = summaries_to_json(summarize(t, {}), {});
  EXPECT_LT(text.size(), size_t{200000});
  const std::vector<RankSummary> back = summaries_from_json(text, "s.json");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].process.host, std::string(c3::common::kNameLimit, 'h'));
  EXPECT_EQ(back[0].process.command_line.size(), c3::common::kCommandLineLimit);
  for (const KernelStat& k : back[0].kernel_stats) EXPECT_LE(k.name.size(), c3::common::kNameLimit);

  // A gzip summary holding a multi-MB host name: refused at once, naming file and field.
  nlohmann::json j = nlohmann::json::parse(summaries_to_json(summarize(small_trace(), {}), {}));
  j["ranks"][0]["process"]["host"] = std::string(8 << 20, 'h');
  const std::string path = testing::TempDir() + "/long_host.summary.json.gz";
  {
    std::ofstream f(path, std::ios::binary);
    f << gzip_bytes(j.dump());
  }
  try {
    read_summary_file(path);
    ADD_FAILURE() << "an 8 MB host name was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m.substr(0, 300);
    EXPECT_NE(m.find("host is longer than 4096 bytes"), std::string::npos) << m.substr(0, 300);
    EXPECT_LT(m.size(), size_t{1000});
  }
  std::remove(path.c_str());
}

// Padding and nesting bombs (found by scripts/hostile-campaign): a 500 KB gzip of 512 MiB of
// spaces reached a 2 GB peak, a 48 KB one of 50 M '[' took 3.6 GB and 20 s. Whitespace outside
// strings is dropped as the file is read (strings keep theirs, escaped quotes included), and
// nesting past 32 levels is refused at once with one line.
TEST(Summary, PaddingIsDroppedAndDeepNestingRefused) {
  Trace t = small_trace();
  t.processes[0].host = "a \"b\"\t c\\ ";
  const std::string text = summaries_to_json(summarize(t, {}), {});
  nlohmann::json j = nlohmann::json::parse(text);
  const std::string pretty = j.dump(4);  // spaces and newlines between every token
  const std::string path = testing::TempDir() + "/padded.summary.json.gz";
  {
    std::ofstream f(path, std::ios::binary);
    f << gzip_bytes(pretty + std::string(4 << 20, ' '));
  }
  const std::vector<RankSummary> back = read_summary_file(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].process.host, t.processes[0].host) << "whitespace inside strings is kept";
  EXPECT_EQ(summaries_to_json(back, {}), text);
  std::remove(path.c_str());

  const std::string deep = R"({"schema": "c3scope-summary/3", "ranks": )" +
                           std::string(1 << 20, '[') + std::string(1 << 20, ']') + "}";
  try {
    summaries_from_json(deep, "deep.json");
    ADD_FAILURE() << "a million levels of nesting were accepted";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("deep.json: not a valid c3scope summary: nested 33+ levels deep"),
              std::string::npos)
        << m;
  }
  // Brackets inside strings are not nesting.
  nlohmann::json k = j;
  k["ranks"][0]["process"]["host"] = std::string(1000, '[');
  EXPECT_NO_THROW(summaries_from_json(k.dump(), "brackets.json"));
}
