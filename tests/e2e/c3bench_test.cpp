// End-to-end: c3bench's sim backend recorded through the real collector (`c3scope record`). The
// simulated node speaks CUPTI and NCCL like real hardware, so the trace must hold exactly the
// kernels, collectives, links and NVTX ranges the sweep implies, on the node's virtual clock, and
// the results tables the run appended.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "harness.h"

using namespace c3::e2e;
using c3::tracedb::Reader;

namespace {

// 3 cases (plain concurrent, pipelined k=1, pipelined k=2) x 4 phases x (1 warm-up + 2 timed).
const std::vector<std::string> kSmallSweep = {"--backend",  "sim",
                                              "--gpus",     "2",
                                              "--compute",  "gemm:4096x4096x4096:bf16",
                                              "--comm",     "allreduce:64M",
                                              "--schedule", "independent,chunks=1,2",
                                              "-w",         "1",
                                              "-n",         "2"};

std::vector<std::string> c3bench(std::vector<std::string> extra) {
  std::vector<std::string> args = {c3bench_path()};
  args.insert(args.end(), kSmallSweep.begin(), kSmallSweep.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST(C3benchSim, RecordedTraceIsCompleteAndExact) {
  TempDir dir;
  const std::string json = dir.path() + "/results.json";
  RunResult r = run(c3bench({"--json", json}), dir.path(), injected(Inject::record_cli));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("SIMULATED"), std::string::npos) << "sim output must be labelled simulated";
  EXPECT_NE(r.out.find("results added to this process's trace"), std::string::npos) << r.out;
  ASSERT_EQ(r.traces.size(), 1u) << r.err;
  auto t = Reader::open(r.traces.front());
  EXPECT_EQ(t->meta().at("clean_close"), "1");
  EXPECT_NE(text(*t, "SELECT trace_clock FROM process").find("simulated node"), std::string::npos);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'queue_dropped_rows'"), 0);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'cupti_status'"), 1);

  // Devices and communicators: 2 simulated H100s, one communicator per GPU.
  EXPECT_EQ(t->count("device"), 2);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM device WHERE sm_count = 132"), 2);
  EXPECT_EQ(t->count("communicator"), 2);

  // Kernels per case with k chunks: compute alone, concurrent and serial each launch k GEMM
  // chunks per GPU per iteration (3 iterations): 18k GEMMs; likewise 18k NCCL kernels.
  // k = 1, 1, 2: 72 of each.
  EXPECT_EQ(t->count("kernel"), 144);
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM kernel k JOIN string s ON s.id = k.name_id "
                   "WHERE s.value = 'c3sim_gemm_bf16_4096x4096x4096'"),
            36);  // 2 unsplit cases x 3 phases x 3 iterations x 2 GPUs
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM kernel k JOIN string s ON s.id = k.name_id "
                   "WHERE s.value = 'c3sim_gemm_bf16_2048x4096x4096'"),
            36);  // the k = 2 case: 3 phases x 3 iterations x 2 chunks x 2 GPUs
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM kernel k JOIN string s ON s.id = k.name_id "
                   "WHERE s.value LIKE 'ncclDevKernel_AllReduce%'"),
            72);
  // Same-stream kernels never overlap.
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM kernel a JOIN kernel b ON a.stream_id = b.stream_id "
                   "AND a.device_id = b.device_id AND a.id < b.id AND b.start_ns < a.end_ns "
                   "AND a.start_ns < b.end_ns"),
            0);

  // Collectives: one row per rank per chunk, with the chunk's size, each linked to exactly one
  // kernel on its own GPU (the group's other kernel runs on the other GPU).
  EXPECT_EQ(t->count("collective"), 72);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM collective WHERE op = 'AllReduce' AND nranks = 2"),
            72);
  EXPECT_EQ(
      column(*t, "SELECT bytes || ':' || COUNT(*) FROM collective GROUP BY bytes ORDER BY bytes"),
      (std::vector<std::string>{"33554432:36", "67108864:36"}));
  EXPECT_EQ(
      scalar(*t,
             "SELECT COUNT(*) FROM collective c WHERE (SELECT COUNT(*) FROM collective_kernel "
             "ck JOIN kernel k ON k.id = ck.kernel_id WHERE ck.collective_id = c.id AND "
             "k.device_id = c.device_id) != 1"),
      0);

  // NVTX: a range per case and per phase in domain c3bench, payload = case id.
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM nvtx_range WHERE domain = 'c3bench'"), 15);
  EXPECT_EQ(
      column(*t,
             "SELECT payload_int || ':' || name FROM nvtx_range WHERE domain = 'c3bench' "
             "AND name LIKE 'case %' ORDER BY start_ns"),
      (std::vector<std::string>{"1:case 1: gemm:4096x4096x4096:bf16 + allreduce:64M",
                                "2:case 2: gemm:4096x4096x4096:bf16 + allreduce:64M [chunks=1]",
                                "3:case 3: gemm:4096x4096x4096:bf16 + allreduce:64M [chunks=2]"}));
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM nvtx_range WHERE domain = 'c3bench' AND depth = 1"),
            12);
  EXPECT_EQ(column(*t,
                   "SELECT name FROM nvtx_range WHERE domain = 'c3bench' AND depth = 1 AND "
                   "payload_int = 3 ORDER BY start_ns"),
            (std::vector<std::string>{
                "compute alone: gemm:4096x4096x4096:bf16 + allreduce:64M [chunks=2]",
                "comm alone: gemm:4096x4096x4096:bf16 + allreduce:64M [chunks=2]",
                "concurrent: gemm:4096x4096x4096:bf16 + allreduce:64M [chunks=2]",
                "serial: gemm:4096x4096x4096:bf16 + allreduce:64M [chunks=2]"}));
  // The trace clock is one clock: every kernel runs inside the NVTX range of its case.
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM kernel k WHERE NOT EXISTS (SELECT 1 FROM nvtx_range n "
                   "WHERE n.domain = 'c3bench' AND n.depth = 0 AND n.start_ns <= k.start_ns AND "
                   "k.end_ns <= n.end_ns)"),
            0);

  // Results tables, identical to the JSON report.
  EXPECT_EQ(t->count("bench_run"), 1);
  EXPECT_EQ(text(*t, "SELECT backend || ':' || simulated || ':' || gpus FROM bench_run"),
            "sim:1:2");
  EXPECT_EQ(scalar(*t, "SELECT pid FROM bench_run"), scalar(*t, "SELECT pid FROM process"));
  ASSERT_EQ(t->count("bench_result"), 3);
  const auto doc = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(doc.at("schema"), "c3bench/1");
  EXPECT_TRUE(doc.at("simulated").get<bool>());
  ASSERT_EQ(doc.at("results").size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& res = doc.at("results")[static_cast<size_t>(i)];
    const std::string where = " FROM bench_result WHERE case_id = " + std::to_string(i + 1);
    EXPECT_EQ(text(*t, "SELECT label" + where), res.at("label").get<std::string>());
    EXPECT_EQ(text(*t, "SELECT status" + where), "ok");
    EXPECT_DOUBLE_EQ(std::stod(text(*t, "SELECT t_c3_ns" + where)),
                     res.at("t_c3").at("median_ns").get<double>());
    EXPECT_DOUBLE_EQ(std::stod(text(*t, "SELECT t_comp_ns" + where)),
                     res.at("t_comp").at("median_ns").get<double>());
  }
  RunResult info =
      run({c3scope_path(), "info", r.traces.front()}, dir.path(), injected(Inject::none));
  EXPECT_NE(info.out.find("c3bench run 1: 3 cases (3 run) on the sim backend, simulated 2 x H100"),
            std::string::npos)
      << info.out;
  // The chunked case carries its decomposition loss and FiCCO speedup over k = 1.
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM bench_result WHERE case_id = 3 AND "
                   "decomposition_loss_comm IS NOT NULL AND schedule_speedup > 0"),
            1);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM bench_result WHERE comm_slowdown IS NULL"), 2)
      << "pipelined schedules report no comm slowdown";
}

// The sim is deterministic: two runs give bit-identical results.
TEST(C3benchSim, BitIdenticalAcrossRuns) {
  TempDir dir;
  std::string docs[2];
  for (int i = 0; i < 2; ++i) {
    const std::string json = dir.path() + "/r" + std::to_string(i) + ".json";
    RunResult r = run(c3bench({"--json", json}), dir.path(), injected(Inject::none));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    docs[i] = nlohmann::json::parse(slurp(json)).at("results").dump();
  }
  EXPECT_EQ(docs[0], docs[1]);
}

// The default experiment: GEMM + AllReduce on 2 simulated GPUs, 4 sizes, with and without
// chunking; and --db writes the results tables into a new file.
TEST(C3benchSim, DefaultExperimentAndDb) {
  TempDir dir;
  const std::string db = dir.path() + "/bench.sqlite";
  RunResult r =
      run({c3bench_path(), "--backend", "sim", "--db", db}, dir.path(), injected(Inject::none));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# 20 cases run, 0 skipped (simulated)"), std::string::npos) << r.out;
  auto t = Reader::open(db);
  EXPECT_EQ(t->meta().at("source"), "c3bench");
  EXPECT_EQ(t->count("bench_result"), 20);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(DISTINCT comm_bytes) FROM bench_result"), 4);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM bench_result WHERE knobs = 'chunks=8'"), 4);
  EXPECT_EQ(
      scalar(*t, "SELECT COUNT(*) FROM bench_result WHERE busbw > 0 AND compute_slowdown >= 0"),
      20);
  // --db never overwrites.
  RunResult again =
      run({c3bench_path(), "--backend", "sim", "--db", db}, dir.path(), injected(Inject::none));
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find(db), std::string::npos) << again.err;
  EXPECT_TRUE(again.out.empty()) << "refused before running";
}

// Bad flags and impossible configurations: exit 2 and one line naming what is wrong.
TEST(C3benchSim, RejectsBadFlagsWithOneLine) {
  TempDir dir;
  struct Bad {
    std::vector<std::string> args;
    std::string needle;
    std::map<std::string, std::string> env;
  };
  const std::vector<Bad> cases = {
      {{"--backend", "tpu"}, "--backend 'tpu'", {}},
      {{"--backend", "sim", "--preset", "h900"}, "--preset 'h900'", {}},
      {{"--backend", "sim", "--gpus", "9"}, "--gpus 9", {}},
      {{"--backend", "sim", "--comm", "allreduce:12Q"}, "allreduce:12Q", {}},
      {{"--backend", "sim", "--comm", "allreduce"}, "-b/-e", {}},
      {{"--backend", "sim", "--compute", "gemm:1x2"}, "gemm:1x2", {}},
      {{"--backend", "sim", "--schedule", "chunks=0"}, "chunks=0", {}},
      {{"--backend", "sim", "--sm-partition", "150"}, "--sm-partition 150", {}},
      {{"--backend", "sim", "--ctas", "8:4"}, "--ctas '8:4'", {}},
      {{"--backend", "sim", "-n", "0"}, "-n 0", {}},
      {{"--backend", "sim", "-b", "1G", "-e", "1M"}, "-e 1M", {}},
      {{"--backend", "sim", "--compute", "none", "--comm", "none"}, "nothing to run", {}},
      {{"--backend", "sim", "--compute", "none", "--schedule", "chunks=2"}, "--schedule", {}},
      {{"--backend", "sim", "--gpus", "1", "--compute", "none", "--comm", "dma_p2p:1G"},
       "needs --gpus 2",
       {}},
      {{"--backend", "sim", "--gpus", "3", "--compute", "none", "--comm", "allgather:1000K"},
       "does not split evenly",
       {}},
      {{"--backend", "sim"}, "rank 1 of 2", {{"RANK", "1"}, {"WORLD_SIZE", "2"}}},
      {{"--backend", "sim", "--store", "file:/tmp/x"}, "--store", {}},
      {{"--backend", "sim", "--bogus"}, "--bogus", {}},
      {{"--backend", "sim", "--json", "/nonexistent/dir/r.json"}, "/nonexistent/dir", {}},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {c3bench_path()};
    args.insert(args.end(), c.args.begin(), c.args.end());
    RunOptions o = injected(Inject::none);
    o.env = c.env;
    RunResult r = run(args, dir.path(), o);
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_EQ(r.err.rfind("c3bench: ", 0), 0u) << joined << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << joined << ": " << r.err;
    EXPECT_NE(r.err.find(c.needle), std::string::npos) << joined << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << joined << ": nothing on stdout, got " << r.out;
  }
}

// Every communication op c3bench has (descriptors.h CommKind, the --comm flag) in every --mode,
// plain and pipelined, in both launch orders, on 2 and 4 simulated GPUs: each case runs (exit 0,
// status ok) and every time its mode measures is finite and positive. Regression (issue 13):
// sendrecv deadlocked the simulated node ("cudaEventSynchronize cannot finish"), because the
// simulated NCCL ran each Send and Recv of a group as its own kernel in call order, so the ring
// shift's sends waited in a cycle for receives queued behind them.
TEST(C3benchSim, EveryCommOpInEveryModeFinishesSendrecvIncluded) {
  TempDir dir;
  const std::vector<std::string> comms = {"allreduce:8M", "allgather:8M", "reducescatter:8M",
                                          "alltoall:8M",  "sendrecv:8M",  "dma_d2d:8M",
                                          "dma_p2p:8M",   "sm_copy:8M",   "sm_copy:8M:peer"};
  // The times each mode measures: alone phases always, then the concurrent and serial walls.
  const std::map<std::string, std::vector<std::string>> measured = {
      {"alone", {"t_comp", "t_comm"}},
      {"concurrent", {"t_comp", "t_comm", "t_comp_c3", "t_comm_c3", "t_c3"}},
      {"serial", {"t_comp", "t_comm", "t_serial"}},
      {"all", {"t_comp", "t_comm", "t_comp_c3", "t_comm_c3", "t_c3", "t_serial"}}};
  for (const std::string& gpus : {std::string("2"), std::string("4")}) {
    for (const auto& [mode, times] : measured) {
      std::string what = "--gpus ";
      what.append(gpus).append(" --mode ").append(mode);
      std::string json = dir.path();
      json.append("/").append(gpus).append("-").append(mode).append(".json");
      std::vector<std::string> args = {c3bench_path(), "--backend", "sim",    "--gpus", gpus,
                                       "--mode",       mode,        "--json", json};
      for (const char* a :
           {"--compute", "gemm:2048x2048x2048:bf16", "--order", "compute_first,comm_first",
            "--schedule", "independent,chunks=1,2", "-w", "1", "-n", "2"})
        args.emplace_back(a);
      for (const auto& c : comms) {
        args.emplace_back("--comm");
        args.push_back(c);
      }
      RunResult r = run(args, dir.path(), injected(Inject::none));
      ASSERT_EQ(r.exit_code, 0) << what << "\n" << r.err;
      const auto doc = nlohmann::json::parse(slurp(json));
      // 9 ops x 2 orders x 3 schedules.
      ASSERT_EQ(doc.at("results").size(), comms.size() * 2 * 3) << what;
      std::set<std::string> ops_seen;
      for (const auto& res : doc.at("results")) {
        const std::string label = what + ": " + res.at("label").get<std::string>();
        ASSERT_EQ(res.at("status"), "ok") << label << ": " << res.value("skip_reason", "");
        ops_seen.insert(res.at("comm").get<std::string>());
        for (const auto& t : times) {
          ASSERT_TRUE(res.at(t).is_object()) << label << ": no " << t;
          const double median = res.at(t).at("median_ns").get<double>();
          EXPECT_TRUE(std::isfinite(median) && median > 0) << label << ": " << t << " " << median;
          EXPECT_GT(res.at(t).at("min_ns").get<double>(), 0) << label << ": " << t;
        }
        if (res.contains("ideal_speedup")) {
          EXPECT_TRUE(std::isfinite(res.at("realized_speedup").get<double>())) << label;
          EXPECT_GE(res.at("ideal_speedup").get<double>(), 1.0) << label;
        }
      }
      EXPECT_EQ(ops_seen.size(), comms.size()) << what;
    }
  }
}

// Issue 25: a schedule whose critical path is known by construction. A pipelined schedule of two
// chunks launches compute chunk i on one stream and communication chunk i on another, the latter
// after a cudaStreamWaitEvent on an event recorded behind compute chunk i; the simulated node
// reports the record (CUDA_EVENT) and the wait (a STREAM_WAIT_EVENT synchronization) as CUPTI
// does. So on the GPU that ends the step, the path is compute chunk 0 then every communication
// chunk when communication is longer (512M AllReduces beside a small GEMM), and every compute
// chunk then the last communication chunk when compute is longer (a large GEMM beside 16M
// AllReduces). Without the event edge neither comes out: the waiting chunk would look idle.
TEST(C3benchSim, PipelinedScheduleHasTheCriticalPathItsDependenciesImply) {
  struct Case {
    std::string compute, comm;
    bool comm_long;
  };
  for (const Case& c : {Case{"gemm:4096x4096x4096:bf16", "allreduce:512M", true},
                        Case{"gemm:8192x8192x8192:bf16", "allreduce:16M", false}}) {
    SCOPED_TRACE(c.compute + " + " + c.comm);
    TempDir dir;
    RunResult r = run({c3bench_path(), "--backend", "sim", "--gpus", "2", "--compute", c.compute,
                       "--comm", c.comm, "--schedule", "chunks=2", "-w", "0", "-n", "1"},
                      dir.path(), injected(Inject::record_cli));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(r.traces.size(), 1u) << r.err;
    auto t = Reader::open(r.traces.front());
    EXPECT_EQ(scalar(*t,
                     "SELECT COUNT(*) FROM sync WHERE type = 'stream_wait_event' AND "
                     "cuda_event_id IS NOT NULL"),
              4);  // 2 chunks x 2 GPUs, in the concurrent phase
    // The concurrent phase's kernels on the GPU whose work ends last.
    const std::string in_step =
        "FROM kernel k JOIN string s ON s.id = k.name_id, nvtx_range n WHERE n.name LIKE "
        "'concurrent:%' AND k.start_ns >= n.start_ns AND k.end_ns <= n.end_ns";
    std::string latest = "SELECT k.device_id ";
    latest += in_step;
    latest += " ORDER BY k.end_ns DESC LIMIT 1";
    const int64_t gpu = scalar(*t, latest);
    // SELECT what, of the step's kernels on that GPU whose name is like `name`, then `tail`.
    auto query = [&](const char* what, const char* name, const char* tail) {
      std::string q = "SELECT ";
      q += what;
      q += ' ';
      q += in_step;
      q += " AND k.device_id = ";
      q += std::to_string(gpu);
      q += " AND s.value LIKE '";
      q += name;
      q += "' ";
      q += tail;
      return scalar(*t, q);
    };
    const char* dur = "k.end_ns - k.start_ns";
    const int64_t first_gemm = query(dur, "c3sim_gemm%", "ORDER BY k.start_ns LIMIT 1");
    const int64_t all_gemm = query("SUM(k.end_ns - k.start_ns)", "c3sim_gemm%", "");
    const int64_t last_nccl = query(dur, "nccl%", "ORDER BY k.start_ns DESC LIMIT 1");
    const int64_t all_nccl = query("SUM(k.end_ns - k.start_ns)", "nccl%", "");

    const RunResult a = c3scope({"analyze", r.traces.front(), "--step", "concurrent: ", "--json",
                                 dir.path() + "/report.json"},
                                dir);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    const auto doc = nlohmann::json::parse(slurp(dir.path() + "/report.json"));
    const auto& steps = doc.at("why").at("critical_path").at("steps");
    ASSERT_EQ(steps.size(), 1u);
    const auto& step = steps[0];
    const auto& parts = step.at("parts");
    EXPECT_EQ(step.at("path_ns").get<int64_t>(), step.at("step_ns").get<int64_t>());
    EXPECT_EQ(parts.at("compute_ns").get<int64_t>(), c.comm_long ? first_gemm : all_gemm);
    EXPECT_EQ(parts.at("communication_ns").get<int64_t>(), c.comm_long ? all_nccl : last_nccl);
  }
}
