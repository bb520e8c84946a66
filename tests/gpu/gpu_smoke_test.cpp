// GPU validation (ctest label `gpu`, run by scripts/gpu-validate on a machine with an NVIDIA GPU):
// records tests/gpu/gpu_smoke.cu with `c3scope record` and compares the trace with what the
// program measured itself: kernel counts and durations against CUDA events, copies, the NCCL
// AllReduce calls and their kernels, NVTX ranges, the named stream, the device.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "harness.h"

using namespace c3::e2e;
using c3::tracedb::Reader;

namespace {

struct Expected {
  int spin_kernels = 0;
  std::vector<std::pair<int, double>> kernels;  // (grid, CUDA-event ns)
  std::map<std::string, int64_t> values;
  std::string device_name;
};

Expected read_expectations(const std::string& path) {
  Expected e;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ss(line);
    std::string key;
    ss >> key;
    if (key == "kernel") {
      int i, grid;
      double ns;
      std::string w1, w2;
      ss >> i >> w1 >> grid >> w2 >> ns;
      e.kernels.emplace_back(grid, ns);
    } else if (key == "device_name") {
      std::getline(ss >> std::ws, e.device_name);
    } else if (key == "memcpy") {
      std::string kind;
      int64_t v;
      ss >> kind >> v;
      e.values["memcpy_" + kind] = v;
    } else {
      int64_t v = 0;
      ss >> v;
      e.values[key] = v;
    }
  }
  e.spin_kernels = static_cast<int>(e.values["spin_kernels"]);
  return e;
}

}  // namespace

TEST(Gpu, RecordedTraceMatchesWhatTheProgramMeasured) {
  TempDir dir;
  const std::string expect_file = dir.path() + "/expected.txt";
  const std::string smoke = std::string(C3_BINARY_DIR) + "/bin/c3_gpu_smoke";
  RunResult r = run({smoke, expect_file}, dir.path(), injected(Inject::record_cli));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  ASSERT_EQ(r.traces.size(), 1u) << r.err;
  Expected e = read_expectations(expect_file);
  ASSERT_EQ(e.kernels.size(), 24u);
  auto t = Reader::open(r.traces[0]);
  std::printf("trace: %s\n", r.traces[0].c_str());

  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'cupti_status'"), 1)
      << text(*t, "SELECT IFNULL(detail, '') FROM stats WHERE name = 'cupti_status'");
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'cupti_dropped_records'"), 0);
  EXPECT_EQ(text(*t, "SELECT name FROM device WHERE device_id = 0"), e.device_name);
  EXPECT_EQ(scalar(*t, "SELECT sm_count FROM device WHERE device_id = 0"), e.values["sm_count"]);

  // Kernels: count, launch order, grid, and duration against the CUDA events around each.
  const std::string spin =
      "SELECT k.grid_x, k.end_ns - k.start_ns, k.start_ns FROM kernel k JOIN string s "
      "ON s.id = k.name_id WHERE s.value LIKE 'c3_spin%' ORDER BY k.correlation_id";
  auto q = t->query(spin);
  std::vector<std::tuple<int64_t, int64_t, int64_t>> got;
  while (q.step()) got.emplace_back(q.i64(0), q.i64(1), q.i64(2));
  ASSERT_EQ(static_cast<int>(got.size()), e.spin_kernels);
  double sum_abs = 0, max_abs = 0;
  std::string diffs;
  for (size_t i = 0; i < e.kernels.size(); ++i) {
    const auto& [grid, dur, start] = got[i + 1];  // [0] is the warm-up launch
    (void)start;
    EXPECT_EQ(grid, e.kernels[i].first) << "kernel " << i;
    const double ev = e.kernels[i].second;
    const double diff = static_cast<double>(dur) - ev;
    sum_abs += std::fabs(diff);
    max_abs = std::max(max_abs, std::fabs(diff));
    if (i < 8) diffs += " " + std::to_string(static_cast<long long>(diff));
    // The events bracket the kernel on its stream, so they measure its time plus the gaps around
    // it (launch, and waiting for SMs the other stream's kernel holds): the kernel is never longer
    // (beyond timer granularity), and at most a few tens of microseconds shorter.
    EXPECT_LE(diff, 1000.0) << "kernel " << i << ": trace " << dur << " ns, CUDA events " << ev;
    EXPECT_GE(diff, -std::max(50000.0, 0.25 * ev))
        << "kernel " << i << ": trace " << dur << " ns, CUDA events " << ev;
    EXPECT_GE(dur, 20000 + 10000 * static_cast<int64_t>(i % 6)) << "kernel " << i;
  }
  const int64_t overlapping =
      scalar(*t,
             "SELECT COUNT(*) FROM kernel a JOIN kernel b ON a.stream_id < b.stream_id AND "
             "a.start_ns < b.end_ns AND b.start_ns < a.end_ns");
  std::printf(
      "GPU check: %d spin kernels; duration vs CUDA events: mean |diff| %.0f ns, max %.0f ns; "
      "%lld overlapping kernel pairs across streams\n",
      e.spin_kernels, sum_abs / static_cast<double>(e.kernels.size()), max_abs,
      static_cast<long long>(overlapping));
  std::printf("kernel minus CUDA-event durations (ns), first 8:%s\n", diffs.c_str());

  // Copies and the memset: the program's own, plus the device-to-device copy NCCL makes for the
  // plain 1-rank AllReduce.
  auto copies = [&](const std::string& kind, int64_t bytes) {
    return scalar(*t, "SELECT COUNT(*) FROM memcpy WHERE copy_kind = '" + kind +
                          "' AND bytes = " + std::to_string(bytes));
  };
  EXPECT_EQ(copies("H2D", e.values["memcpy_H2D"]), 1);
  EXPECT_EQ(copies("D2D", e.values["memcpy_D2D"]), 2);
  EXPECT_EQ(copies("D2H", e.values["memcpy_D2H"]), 1);
  EXPECT_EQ(
      scalar(*t, "SELECT COUNT(*) FROM memset WHERE bytes = " + std::to_string(e.values["memset"])),
      1);
  EXPECT_GE(scalar(*t, "SELECT COUNT(*) FROM sync WHERE type = 'stream_synchronize'"), 2);

  // The named, high-priority stream carries the memset and the NCCL work.
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM stream WHERE name = 'comm'"), 1);
  const int64_t comm_stream = scalar(*t, "SELECT stream_id FROM stream WHERE name = 'comm'");
  EXPECT_EQ(scalar(*t, "SELECT stream_id FROM memset"), comm_stream);

  // NCCL: four AllReduce calls with their arguments. On one rank the pre-multiplied sums run a
  // kernel (the two grouped calls share theirs) and the plain sum is a copy; each call is linked
  // to its GPU work, on the stream it was given.
  const std::string n = std::to_string(e.values["allreduce"]);
  const std::string half = std::to_string(e.values["allreduce"] / 2);
  EXPECT_EQ(column(*t,
                   "SELECT op || ' ' || count || ' ' || reduce_op || ' ' || rank || '/' || nranks "
                   "FROM collective ORDER BY id"),
            (std::vector<std::string>{
                "AllReduce " + n + " premulsum 0/1", "AllReduce " + half + " premulsum 0/1",
                "AllReduce " + half + " premulsum 0/1", "AllReduce " + n + " sum 0/1"}));
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM collective c WHERE c.reduce_op = 'premulsum' AND EXISTS "
                   "(SELECT 1 FROM collective_kernel ck WHERE ck.collective_id = c.id)"),
            3)
      << "every NCCL call that launched a kernel must be linked to it";
  EXPECT_EQ(
      scalar(*t,
             "SELECT COUNT(DISTINCT ck.kernel_id) FROM collective c JOIN collective_kernel ck "
             "ON ck.collective_id = c.id WHERE c.group_id IS NOT NULL"),
      scalar(*t,
             "SELECT COUNT(*) FROM collective c JOIN collective_kernel ck ON "
             "ck.collective_id = c.id WHERE c.id = (SELECT MIN(id) FROM collective WHERE "
             "group_id IS NOT NULL)"))
      << "grouped calls share the group's kernels";
  EXPECT_EQ(
      text(*t,
           "SELECT m.copy_kind || ' ' || m.bytes FROM collective c JOIN collective_activity a "
           "ON a.collective_id = c.id JOIN memcpy m ON m.id = a.row_id WHERE c.reduce_op = "
           "'sum' AND a.kind = 'memcpy'"),
      "D2D " + std::to_string(e.values["allreduce"] * 4));
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM collective c JOIN collective_gpu g ON g.collective_id = "
                   "c.id WHERE c.stream_id = " +
                       std::to_string(comm_stream) + " AND g.start_ns >= c.host_start_ns"),
            4);
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM communicator WHERE init_call = 'CommInitAll' AND end_call "
                   "= 'CommDestroy'"),
            1);
  std::printf(
      "NCCL: %lld of 4 calls linked to their GPU work: %lld kernels (%s), %lld copies\n",
      static_cast<long long>(
          scalar(*t, "SELECT COUNT(DISTINCT collective_id) FROM collective_activity")),
      static_cast<long long>(scalar(*t, "SELECT COUNT(DISTINCT kernel_id) FROM collective_kernel")),
      text(*t,
           "SELECT IFNULL(MIN(s.value), '-') FROM collective_kernel ck JOIN kernel k ON k.id = "
           "ck.kernel_id JOIN string s ON s.id = k.name_id")
          .c_str(),
      static_cast<long long>(
          scalar(*t, "SELECT COUNT(*) FROM collective_activity WHERE kind = 'memcpy'")));

  // NVTX phases (NCCL adds ranges of its own, in its own domain), and one clock for host and
  // GPU: the first measured kernel starts after the NVTX range that launched it began, and the
  // process interval holds every GPU activity.
  EXPECT_EQ(
      column(*t, "SELECT name FROM nvtx WHERE depth = 0 AND domain = 'default' ORDER BY start_ns"),
      (std::vector<std::string>{"kernels", "copies", "nccl"}));
  std::printf("NVTX domains: %s\n",
              text(*t,
                   "SELECT group_concat(domain || ' ' || n, ', ') FROM (SELECT domain, COUNT(*) "
                   "AS n FROM nvtx GROUP BY domain)")
                  .c_str());
  EXPECT_LE(scalar(*t, "SELECT start_ns FROM nvtx WHERE name = 'kernels'"), std::get<2>(got[1]));
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM gpu_activity g, process p WHERE g.start_ns < p.start_ns "
                   "OR g.end_ns > p.end_ns"),
            0);
}
