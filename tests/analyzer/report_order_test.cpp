// Issue 24, what the analyze report says (items 5, 6, 8, 9, 23): ranks in numeric order in every
// list, no straggler for a tie, null (not 0) for ratios without a denominator and for unknown
// sizes, "simulated" for the simulated node's traces, and trace text escaped for the terminal
// and CSV.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/report/report.h"
#include "c3/common/strings.h"
#include "c3/tracedb/output_file.h"

using namespace c3::analyzer;

namespace {

// A trace of `ranks` processes listed as a folder's files sort by name (rank 0, 1, 10, 11, 2,
// ...): each runs a GEMM, then an AllReduce (a linked collective of one communicator) starting at
// `arrive(rank, seq)`, two collectives each.
template <class Arrive>
Trace job(const std::vector<int>& ranks, Arrive&& arrive) {
  Trace t;
  t.names = {"gemm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
  for (size_t p = 0; p < ranks.size(); ++p) {
    Process pr;
    pr.pid = 1000 + ranks[p];
    pr.rank = ranks[p];
    pr.host = "node" + std::to_string(ranks[p]);
    t.processes.push_back(pr);
    Device d;
    d.process = static_cast<int16_t>(p);
    t.devices.push_back(d);
    for (int64_t seq = 0; seq < 2; ++seq) {
      const int64_t base = seq * 100'000;
      const auto proc = static_cast<int16_t>(p);
      t.activities.push(base, base + 10'000, 0, 7, 0, proc, Kind::kernel, 0);
      const int64_t s = arrive(ranks[p], seq);
      const size_t i = t.activities.push(s, base + 50'000, 1, 13, 0, proc, Kind::kernel, 0);
      Collective c;
      c.process = proc;
      c.comm_id = "0xc0ffee";
      c.seq = seq;
      c.op = "AllReduce";
      c.nranks = static_cast<int>(ranks.size());
      c.rank = ranks[p];
      c.gpu_start = s;
      c.gpu_end = base + 50'000;
      t.activities.collective[i] = static_cast<int32_t>(t.collectives.size());
      t.collectives.push_back(c);
    }
  }
  t.activities.sort();
  classify(t, Rules::defaults());
  return t;
}

const std::vector<int> kStringOrder = {0, 1, 10, 11, 2, 3, 4, 5, 6, 7, 8, 9};

std::vector<int> ranks_of(const nlohmann::json& a, const char* key = "rank") {
  std::vector<int> out;
  for (const auto& x : a) out.push_back(x.at(key).get<int>());
  return out;
}

}  // namespace

// Twelve ranks given in file-name order: every per-rank list of the report, text and JSON, is in
// rank order (it was 0, 1, 10, 11, 2, ...).
TEST(ReportOrder, TwelveRanksListedByNumber) {
  Trace t = job(kStringOrder, [](int rank, int64_t seq) {
    return seq * 100'000 + 20'000 + (rank == 10 ? 3'000 : 0);  // rank 10 late each time
  });
  AnalyzeOptions o;
  o.align = false;
  const Report r = analyze(t, {"job"}, o);
  std::vector<int> want(12);
  for (int i = 0; i < 12; ++i) want[static_cast<size_t>(i)] = i;
  std::vector<int> got;
  for (const ScopeReport& s : r.processes)
    got.push_back(static_cast<int>(*r.process_info[static_cast<size_t>(s.process)].rank));
  EXPECT_EQ(got, want);
  const auto j = nlohmann::json::parse(to_json(r));
  EXPECT_EQ(ranks_of(j.at("ranks")), want);
  EXPECT_EQ(ranks_of(j.at("contention")), want);
  // The across-ranks table: the straggler first, then the others by number (equal waits).
  const std::vector<int> cross = ranks_of(j.at("cross_rank").at("ranks"));
  ASSERT_EQ(cross.size(), 12u);
  EXPECT_EQ(cross.front(), 10);
  EXPECT_EQ(std::vector<int>(cross.begin() + 1, cross.end()),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11}));
  // The text report's rows.
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  print_text(f, r);
  std::fclose(f);
  const std::string text(buf, len);
  std::free(buf);
  size_t at = 0;
  for (int i = 0; i < 12; ++i) {
    const size_t next = text.find("\nrank " + std::to_string(i) + " ", at);
    ASSERT_NE(next, std::string::npos) << "rank " << i << " after rank " << i - 1 << "\n" << text;
    at = next;
  }
  // Folders list their files in the same order.
  std::vector<std::string> names = {"r/rank10.json", "r/rank2.json", "r/rank1.json",
                                    "r/rank02.json", "r/rank.json"};
  std::sort(names.begin(), names.end(), c3::common::natural_less);
  EXPECT_EQ(names, (std::vector<std::string>{"r/rank.json", "r/rank1.json", "r/rank02.json",
                                             "r/rank2.json", "r/rank10.json"}));
}

// Ranks that start a collective together have no straggler; it named the first of them (24 of
// 36 collectives of a 4-rank job with no late rank).
TEST(ReportOrder, TiedArrivalsHaveNoStraggler) {
  // Nanosecond clocks: equal starts tie, 1 ns later is late.
  {
    Trace t = job({0, 1, 2, 3}, [](int rank, int64_t seq) {
      return seq * 100'000 + 20'001 + (seq == 1 && rank == 2 ? 1 : 0);
    });
    const CrossRank x = cross_rank(t);
    ASSERT_EQ(x.collectives.size(), 2u);
    EXPECT_EQ(x.collectives[0].straggler, -1) << "all four arrived at once";
    EXPECT_EQ(x.collectives[1].straggler, 2);
    EXPECT_EQ(x.tied, 1);
    int64_t leads = 0;
    for (const RankWait& w : x.ranks) leads += w.straggler_count;
    EXPECT_EQ(leads, 1) << "a tie is nobody's";
    AnalyzeOptions o;
    o.align = false;
    const auto j = nlohmann::json::parse(to_json(analyze(t, {"job"}, o)));
    EXPECT_TRUE(j.at("cross_rank").at("collectives")[0].at("straggler").is_null());
    EXPECT_EQ(j.at("cross_rank").at("collectives")[1].at("straggler"), "rank 2");
    EXPECT_EQ(j.at("cross_rank").at("tied"), 1);
  }
  // Whole microseconds (a PyTorch trace): 1 us apart is a tie, 2 us is not.
  {
    Trace t = job({0, 1, 2, 3}, [](int rank, int64_t seq) {
      return seq * 100'000 + 20'000 + (rank == 3 ? (seq == 0 ? 1'000 : 2'000) : 0);
    });
    const CrossRank x = cross_rank(t);
    ASSERT_EQ(x.collectives.size(), 2u);
    EXPECT_EQ(x.collectives[0].straggler, -1);
    EXPECT_EQ(x.collectives[1].straggler, 3);
    EXPECT_EQ(x.collectives[0].skew_ns, 1'000) << "the skew is still measured";
  }
}

// Overlap without communication, sizes and bandwidths without a size, launch queueing without
// queued kernels: null in JSON and empty in CSV, not 0 ("0% hidden" read as "all exposed").
TEST(ReportOrder, NoDenominatorIsNullNotZero) {
  Trace t = job({0}, [](int, int64_t seq) { return seq * 100'000 + 20'000; });
  t.collectives[0].nranks = 0;  // sizes unknown: no bytes, no rank count
  AnalyzeOptions o;
  const Report r = analyze(t, {"one"}, o);
  const auto j = nlohmann::json::parse(to_json(r));
  EXPECT_TRUE(j.at("ranks")[0].at("overlap_pct").is_number());
  const auto& c = j.at("collectives")[0];
  EXPECT_TRUE(c.at("size_min_bytes").is_null()) << c;
  EXPECT_TRUE(c.at("median_algbw_bytes_per_s").is_null()) << c;
  EXPECT_TRUE(j.at("contention")[0].at("launch_queue_median_ns").is_null());
  const std::string csv = collectives_csv(t, r);
  EXPECT_NE(csv.find(",,,,\n"), std::string::npos) << "bytes, ranks, algbw, busbw empty\n" << csv;
  // Compute only: no communication, so no overlap %.
  Trace compute;
  compute.names = {"gemm"};
  compute.processes.resize(1);
  compute.processes[0].rank = 0;
  compute.activities.push(0, 100, 0, 7, 0, 0, Kind::kernel, 0);
  compute.activities.sort();
  classify(compute, Rules::defaults());
  const auto jc = nlohmann::json::parse(to_json(analyze(compute, {"c"}, o)));
  EXPECT_TRUE(jc.at("ranks")[0].at("overlap_pct").is_null());
  EXPECT_TRUE(jc.at("overall").at("overlap_pct").is_null());
  EXPECT_FALSE(jc.at("simulated").get<bool>());
}

// A trace of c3bench's simulated node says so in the report's header and JSON.
TEST(ReportOrder, SimulatedTracesSaySo) {
  for (int fact = 0; fact < 3; ++fact) {
    Trace t = job({0, 1}, [](int, int64_t seq) { return seq * 100'000 + 20'000; });
    if (fact == 0) t.processes[1].trace_clock = "simulated node virtual clock (continues ...)";
    if (fact == 1) t.devices[1].name = "Simulated NVIDIA H100 SXM5 80GB";
    if (fact == 2) {
      BenchResult b;
      b.process = 1;
      b.simulated = true;
      b.label = "case";
      t.bench.push_back(b);
    }
    AnalyzeOptions o;
    const Report r = analyze(t, {"sim"}, o);
    const auto j = nlohmann::json::parse(to_json(r));
    EXPECT_TRUE(j.at("simulated").get<bool>()) << fact;
    EXPECT_FALSE(j.at("ranks")[0].at("simulated").get<bool>());
    EXPECT_TRUE(j.at("ranks")[1].at("simulated").get<bool>());
    char* buf = nullptr;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    print_text(f, r);
    std::fclose(f);
    const std::string text(buf, len);
    std::free(buf);
    EXPECT_NE(text.find("\nSIMULATED: rank 1 ran on c3bench's simulated node"), std::string::npos)
        << text;
  }
}

// Text from a trace reaches the terminal escaped: no escape sequence (a title change), no C1
// control, no newline (a fake line), no bidirectional override, no invalid UTF-8; other UTF-8 is
// kept.
TEST(ReportOrder, PrintableEscapesWhatATerminalObeys) {
  using c3::tracedb::printable;
  EXPECT_EQ(printable("a\x1b]0;pwned\x07z"), "a\\x1b]0;pwned\\x07z");
  EXPECT_EQ(printable("line\nfake"), "line\\nfake");
  EXPECT_EQ(printable("\xc2\x9b"
                      "2J"),
            "\\u009b2J")
      << "C1 CSI";
  EXPECT_EQ(printable("abc\xe2\x80\xae"
                      "fed"),
            "abc\\u202efed")
      << "RIGHT-TO-LEFT OVERRIDE";
  EXPECT_EQ(printable("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
  EXPECT_EQ(printable("\x9b"
                      "2J\xff\xc3"),
            "\\x9b2J\\xff\\xc3")
      << "not UTF-8";
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80") << "a surrogate";
  EXPECT_EQ(printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf") << "overlong";
  EXPECT_EQ(printable("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x9a\x80"),
            "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x9a\x80");
}

// The same names in the report's text and CSV.
TEST(ReportOrder, HostileNamesAreEscapedInTextAndCsv) {
  Trace t = job({0}, [](int, int64_t seq) { return seq * 100'000 + 20'000; });
  const std::string evil = "\x1b]0;pwned\x07\nfake line \xe2\x80\xae";
  t.processes[0].rank.reset();
  t.processes[0].host = "h" + evil;
  t.names[1] = "=ncclDevKernel_AllReduce" + evil;
  t.collectives[0].op = "All\"Reduce" + evil;
  t.collectives[1].op = t.collectives[0].op;
  AnalyzeOptions o;
  const Report r = analyze(t, {"evil"}, o);
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  print_text(f, r);
  std::fclose(f);
  const std::string text(buf, len);
  std::free(buf);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find("\xe2\x80\xae"), std::string::npos);
  EXPECT_EQ(text.find("\nfake line"), std::string::npos);
  EXPECT_NE(text.find("pid 1000@h\\x1b]0;pwned\\x07\\nfake line \\u202e"), std::string::npos)
      << text;
  const std::string csv = collectives_csv(t, r);
  EXPECT_EQ(csv.find('\x1b'), std::string::npos) << csv;
  EXPECT_EQ(csv.find("\nfake"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",\"'=ncclDevKernel_AllReduce\\x1b]0;pwned"), std::string::npos)
      << "quoted, escaped, a formula made literal\n"
      << csv;
  EXPECT_NE(csv.find(",\"All\"\"Reduce\\x1b"), std::string::npos) << csv;
  // JSON: the library escapes control characters.
  const std::string js = to_json(r);
  EXPECT_EQ(js.find('\x1b'), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(js).at("ranks")[0].at("host"), "h" + evil);
}
