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
  TablePrinter p(f, info);
  p.header();
  for (const Result& r : results) p.row(r);
  p.footer(results);
  std::fclose(f);
  std::string out(buf, len);
  std::free(buf);  // NOLINT(cppcoreguidelines-no-malloc): open_memstream's buffer
  return out;
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
  EXPECT_EQ(row1.substr(row1.size() - std::string("  !c3>serial !frac<0").size()),
            "  !c3>serial !frac<0")
      << row1;
  const std::string row2 = line_of_case(out, 2);
  ASSERT_FALSE(row2.empty()) << out;
  EXPECT_EQ(row2.find('!'), std::string::npos) << row2;
  EXPECT_NE(line_of_case(out, 3).find("!c3>serial"), std::string::npos) << out;
  EXPECT_EQ(line_of_case(out, 4).find('!'), std::string::npos) << out;
  EXPECT_NE(out.find("# ! 2 cases where running both together did not pay"), std::string::npos)
      << out;
  EXPECT_NE(out.find(" note\n"), std::string::npos) << "the header names the column: " << out;
}

// Every column of the header is explained under the table, and so is '-'.
TEST(BenchTable, LegendExplainsEveryColumn) {
  const std::string out = table({measured(1, 1000, 500, 1100, 1500)});
  const size_t legend = out.find("# columns (docs/c3bench.md):\n");
  ASSERT_NE(legend, std::string::npos) << out;
  const std::string tail = out.substr(legend);
  for (const char* col :
       {"T_comp", "T_comm", "T_c3", "T_serial", "slow_cp", "slow_cm", "ideal:", "real:", "frac:",
        "r/i:", "class:", "algbw:", "busbw:", "note:", "-:", "!c3>serial:", "!frac<0:"}) {
    EXPECT_NE(tail.find(col), std::string::npos) << col << " is not explained:\n" << tail;
  }
  // No mark, no count line.
  EXPECT_EQ(out.find("did not pay"), std::string::npos) << out;
}
