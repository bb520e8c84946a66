// GPU validation of c3bench's cuda backend (ctest label `gpu`): a single-GPU sweep (GEMM with a
// copy-engine copy, an SM copy and a 1-rank NCCL AllReduce; plain and chunked schedules) recorded
// with `c3scope record`. Checks the run, the NCCL calls and their links, the NVTX map from
// timeline to cases, the results tables, and the backend's event timing against CUPTI's kernel
// times. Prints "c3bench check:" lines for scripts/gpu-validate's summary.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness.h"

using namespace c3::e2e;
using c3::tracedb::Reader;

namespace {}  // namespace

TEST(GpuC3bench, CudaBackendRecordedSweep) {
  TempDir dir;
  const std::string json = dir.path() + "/results.json";
  // 3 comms x 3 schedules = 9 cases; 2 warm-up + 5 timed iterations per phase.
  RunResult r = run({c3bench_path(),
                     "--backend",
                     "cuda",
                     "--gpus",
                     "1",
                     "--compute",
                     "gemm:8192x8192x8192:bf16",
                     "--comm",
                     "dma_d2d:1G",
                     "--comm",
                     "sm_copy:1G",
                     "--comm",
                     "allreduce:384M",
                     "--schedule",
                     "independent,chunks=1,4",
                     "-w",
                     "2",
                     "-n",
                     "5",
                     "--json",
                     json},
                    dir.path(), injected(Inject::record_cli));
  std::printf("%s", r.out.c_str());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.traces.size(), 1u) << r.err;
  std::printf("trace: %s\n", r.traces[0].c_str());
  auto t = Reader::open(r.traces[0]);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'cupti_status'"), 1);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'cupti_dropped_records'"), 0);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'queue_dropped_rows'"), 0);

  // Results: every case ran, in the trace and in the JSON.
  EXPECT_EQ(text(*t, "SELECT backend || ':' || simulated FROM bench_run"), "cuda:0");
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM bench_result WHERE status = 'ok'"), 9);
  const auto doc = nlohmann::json::parse(slurp(json));
  EXPECT_FALSE(doc.at("simulated").get<bool>());
  const std::string overhead = doc.at("timing_overhead").get<std::string>();
  EXPECT_FALSE(overhead.empty());
  std::printf("c3bench check: timing overhead: %s\n", overhead.c_str());

  // NVTX: 9 case ranges and 36 phase ranges in domain c3bench, payload = case id.
  EXPECT_EQ(
      scalar(*t,
             "SELECT COUNT(*) FROM nvtx_range WHERE domain = 'c3bench' AND name LIKE 'case %' "
             "AND payload_int BETWEEN 1 AND 9"),
      9);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM nvtx_range WHERE domain = 'c3bench' AND depth = 1"),
            36);

  // NCCL: AllReduce calls in the comm-alone, concurrent and serial phases, 7 iterations each;
  // 1 + 1 + 4 chunks: 126 calls, each linked to the GPU work it enqueued, inside its case.
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM collective WHERE op = 'AllReduce'"), 126);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(DISTINCT collective_id) FROM collective_activity"), 126);
  // Any call without GPU work: where it sits (case, phase) and what ran around it.
  for (const std::string& line : column(
           *t,
           "SELECT 'seq ' || c.seq || ' bytes ' || c.bytes || ' at ' || (c.host_start_ns - (SELECT "
           "MIN(host_start_ns) FROM collective)) || ' ns in ' || IFNULL((SELECT "
           "group_concat(n.name, ' / "
           "') FROM nvtx_range n WHERE n.domain = 'c3bench' AND n.start_ns <= c.host_start_ns AND "
           "c.host_start_ns <= n.end_ns), '?') || '; copies/kernels starting within 1 ms: ' || "
           "(SELECT "
           "COUNT(*) FROM gpu_activity g WHERE g.start_ns BETWEEN c.host_start_ns AND "
           "c.host_start_ns + "
           "1000000) FROM collective c WHERE c.id NOT IN (SELECT collective_id FROM "
           "collective_activity)")) {
    std::printf("c3bench check: NCCL call without linked GPU work: %s\n", line.c_str());
  }
  const int64_t outside = scalar(
      *t,
      "SELECT COUNT(*) FROM collective_gpu g WHERE NOT EXISTS (SELECT 1 FROM nvtx_range n WHERE "
      "n.domain = 'c3bench' AND n.depth = 0 AND n.start_ns <= g.start_ns AND g.end_ns <= "
      "n.end_ns)");
  EXPECT_EQ(outside, 0);

  // The copy engine's 1 GiB copies (2 unsplit cases x 3 phases x 7 iterations) and the 4-chunk
  // case's 256 MiB copies.
  const int64_t big =
      scalar(*t, "SELECT COUNT(*) FROM memcpy WHERE copy_kind = 'D2D' AND bytes = 1073741824");
  const int64_t quarter =
      scalar(*t, "SELECT COUNT(*) FROM memcpy WHERE copy_kind = 'D2D' AND bytes = 268435456");
  std::printf("c3bench check: memcpy rows 1 GiB %lld (want 42), 256 MiB %lld (want 84)\n",
              static_cast<long long>(big), static_cast<long long>(quarter));
  EXPECT_EQ(big, 42);
  EXPECT_EQ(quarter, 84);

  // The backend's CUDA-event T_comp against CUPTI: the mean of the kernels' summed time per
  // iteration in case 1's compute-alone phase.
  const double events_ns = doc.at("results")[0].at("t_comp").at("median_ns").get<double>();
  auto q = t->query(
      "SELECT SUM(k.end_ns - k.start_ns) FROM kernel k JOIN nvtx_range n ON n.domain = 'c3bench' "
      "AND n.payload_int = 1 AND n.name LIKE 'compute alone:%' AND k.start_ns >= n.start_ns AND "
      "k.end_ns <= n.end_ns");
  ASSERT_TRUE(q.step());
  const double cupti_ns = static_cast<double>(q.i64(0)) / 7.0;
  std::printf(
      "c3bench check: GEMM 8192^3 bf16 T_comp %.1f us (CUDA events, median) vs %.1f us "
      "(CUPTI kernels, mean)\n",
      events_ns / 1e3, cupti_ns / 1e3);
  EXPECT_NEAR(cupti_ns, events_ns, 0.1 * events_ns + 20000);

  // Interference figures for the notes (not asserted: they are what the hardware does).
  for (const auto& res : doc.at("results")) {
    if (res.at("knobs").get<std::string>().empty() && res.contains("compute_slowdown")) {
      std::printf(
          "c3bench check: %s: compute slowdown %+.1f%%, comm slowdown %+.1f%%, "
          "fraction of ideal %.2f\n",
          res.at("label").get<std::string>().c_str(),
          100 * res.at("compute_slowdown").get<double>(),
          100 * res.at("comm_slowdown").get<double>(), res.at("fraction_of_ideal").get<double>());
    }
  }
}
