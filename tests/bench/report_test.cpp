// c3bench's table: the legend under it and the marks on rows where running compute and
// communication together did not pay (issue 13: "concurrent slower than serial (allgather:1M:
// T_c3 1604 > T_serial 1541, real 0.95) is not flagged").
#include "c3/bench/report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace c3::bench;

namespace {

Stats at(double ns) {
  Stats s;
  s.median = s.min = s.max = ns;
  s.n = 1;
  return s;
}

// A case measured in every phase, with times in microseconds.
Result measured(int id, double comp, double comm, double c3, double serial) {
  Result r;
  r.c.id = id;
  r.c.compute = parse_compute("fma:1ms");
  r.c.comm = parse_comm("allgather:1M", 2).front();
  r.comp_alone = at(comp * 1e3);
  r.comm_alone = at(comm * 1e3);
  r.comp_c3 = at(comp * 1e3);
  r.comm_c3 = at(comm * 1e3);
  r.c3_wall = at(c3 * 1e3);
  r.serial_wall = at(serial * 1e3);
  r.metrics = c3_metrics(comp * 1e3, comm * 1e3, comp * 1e3, comm * 1e3, c3 * 1e3, serial * 1e3);
  return r;
}

// What the printer writes for `results`: header, rows, footer.
std::string table(const std::vector<Result>& results) {
  char* buf = nullptr;
  size_t len = 0;
  FILE* f = open_memstream(&buf, &len);
  RunInfo info;
  info.backend = "sim";
  info.simulated = true;
  std::vector<Case> cases;
  cases.reserve(results.size());
  for (const Result& r : results) cases.push_back(r.c);
  TablePrinter p(f, info, cases);
  p.header();
  for (const Result& r : results) p.row(r);
  p.footer(results);
  std::fclose(f);
  std::string out(buf, len);
  std::free(buf);  // NOLINT(cppcoreguidelines-no-malloc): open_memstream's buffer
  return out;
}

// The "#       case N: ..." line under case N that starts with `what` ("!" for the notes).
std::string note_of_case(const std::string& out, int id, const std::string& what = "!") {
  const std::string head = "\n#       case " + std::to_string(id) + ": " + what;
  const size_t at = out.find(head);
  if (at == std::string::npos) return "";
  return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
}

std::string line_of_case(const std::string& out, int id) {
  const std::string head =
      " " + std::string(4 - std::to_string(id).size(), ' ') + std::to_string(id) + "  ";
  const size_t at = out.find("\n" + head);
  if (at == std::string::npos) return "";
  return out.substr(at + 1, out.find('\n', at + 1) - at - 1);
}

}  // namespace

// The allgather:1M row: T_c3 1604 > T_serial 1541 (realized 0.95, fraction of ideal
// negative): marked with both notes; a case that gained is not.
TEST(BenchTable, MarksConcurrencySlowerThanSerial) {
  const Result bad = measured(1, 1400, 120, 1604, 1541);
  ASSERT_LT(bad.metrics->realized_speedup, 1);
  EXPECT_EQ(result_notes(bad), (std::vector<std::string>{"!c3>serial", "!frac<0"}));
  const Result good = measured(2, 1000, 500, 1100, 1500);
  EXPECT_TRUE(result_notes(good).empty());
  // Slower than serial but still faster than the sum alone (serial itself was quicker than the
  // two alone): only the first mark.
  const Result odd = measured(3, 1000, 500, 1450, 1400);
  EXPECT_EQ(result_notes(odd), (std::vector<std::string>{"!c3>serial"}));
  // Not measured concurrently (--mode serial): nothing to compare, no mark.
  Result serial_only = measured(4, 1000, 500, 0, 1500);
  serial_only.c3_wall.reset();
  serial_only.metrics.reset();
  EXPECT_TRUE(result_notes(serial_only).empty());

  const std::string out = table({bad, good, odd, serial_only});
  const std::string row1 = line_of_case(out, 1);
  ASSERT_FALSE(row1.empty()) << out;
  EXPECT_NE(row1.find("1604.0"), std::string::npos) << row1;
  // The marks are on the line under the row (the row itself stays within the table's width).
  EXPECT_EQ(note_of_case(out, 1),
            "#       case 1: !c3>serial !frac<0: running both together did not pay")
      << out;
  EXPECT_TRUE(note_of_case(out, 2).empty()) << out;
  EXPECT_EQ(line_of_case(out, 2).find('!'), std::string::npos) << out;
  EXPECT_NE(note_of_case(out, 3).find("!c3>serial"), std::string::npos) << out;
  EXPECT_EQ(note_of_case(out, 3).find("!frac<0"), std::string::npos) << out;
  EXPECT_TRUE(note_of_case(out, 4).empty()) << out;
  EXPECT_NE(out.find("# ! 2 cases where running both together did not pay"), std::string::npos)
      << out;
}

// Issue 24 item 26: every line of the table fits 120 columns (it was 225 wide), and no case
// loses its configuration: what every case shares is said once above the table, what varies is
// a column or a line heading its rows.
TEST(BenchTable, FitsInWidthAndKeepsEveryConfiguration) {
  auto sweep = [](const std::vector<std::string>& comms, const std::vector<Knobs>& knobs,
                  const std::vector<std::string>& computes) {
    std::vector<Result> results;
    int id = 0;
    for (const std::string& cp : computes) {
      for (const std::string& cm : comms) {
        for (const Knobs& k : knobs) {
          Result r = measured(++id, 1433.2, 207.2, 1636.4, 1636.4);
          r.c.compute = parse_compute(cp);
          r.c.comm = parse_comm(cm, 2).front();
          r.c.knobs = k;
          r.algbw = r.busbw = 323.9e9;
          results.push_back(r);
        }
      }
    }
    return results;
  };
  Knobs plain, k2, k8, many;
  k2.pipelined = k8.pipelined = true;
  k2.chunks = 2;
  k8.chunks = 8;
  many.order = Knobs::Order::comm_first;
  many.priority = Knobs::Priority::comm_high;
  many.nchannels = 16;
  many.min_ctas = 4;
  many.max_ctas = 16;
  many.sm_partition_pct = 75;
  const std::vector<std::vector<Result>> sweeps = {
      // c3bench's default experiment: a GEMM, AllReduces of 64M..512M, plain and chunked.
      sweep({"allreduce:64M", "allreduce:512M"}, {plain, k2, k8}, {"gemm:8192x8192x8192:bf16"}),
      // an nccl-tests-like size sweep, default knobs
      sweep({"allreduce:1M", "reducescatter:512M", "alltoall:1G"}, {plain},
            {"gemm:8192x8192x8192:bf16"}),
      // every part varies, with the longest knob labels
      sweep({"allgather:128M", "sm_copy:1G:peer"}, {plain, many},
            {"gemm:16384x16384x16384:fp32", "triad:1G"}),
  };
  for (const auto& results : sweeps) {
    const std::string out = table(results);
    size_t start = 0;
    while (start < out.size()) {
      const size_t end = out.find('\n', start);
      const std::string line = out.substr(start, end - start);
      EXPECT_LE(line.size(), TablePrinter::kWidth) << line << "\nin\n" << out;
      start = end == std::string::npos ? out.size() : end + 1;
    }
    for (const Result& r : results) {
      ASSERT_FALSE(line_of_case(out, r.c.id).empty()) << r.c.id << "\n" << out;
      for (const std::string& part : {r.c.compute->label(), r.c.comm->label(), r.c.knobs.label()})
        EXPECT_NE(out.find(part), std::string::npos) << part << " is not shown:\n" << out;
    }
  }
}

// Every column of the header is explained under the table, and so is '-'.
TEST(BenchTable, LegendExplainsEveryColumn) {
  const std::string out = table({measured(1, 1000, 500, 1100, 1500)});
  const size_t legend = out.find("# columns (docs/c3bench.md):\n");
  ASSERT_NE(legend, std::string::npos) << out;
  const std::string tail = out.substr(legend);
  for (const char* col :
       {"T_comp", "T_comm", "T_c3", "T_serial", "slow_cp", "slow_cm",
        "ideal:", "real:", "frac:", "r/i:", "class:", "comp-long", "algbw:", "busbw:", "note (",
        "-:", "!c3>serial:", "!frac<0:", "compute, comm, knobs:"}) {
    EXPECT_NE(tail.find(col), std::string::npos) << col << " is not explained:\n" << tail;
  }
  // No mark, no count line.
  EXPECT_EQ(out.find("did not pay"), std::string::npos) << out;
}
