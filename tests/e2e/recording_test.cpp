// End-to-end: the real collector injected into real processes that drive the CUPTI and NCCL test
// doubles; the rows in the trace are checked exactly.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

using namespace c3::e2e;
using c3::tracedb::Reader;

namespace {

std::unique_ptr<Reader> only_trace(const RunResult& r) {
  EXPECT_EQ(r.traces.size(), 1u) << r.err;
  if (r.traces.empty()) return nullptr;
  return Reader::open(r.traces.front());
}

}  // namespace

TEST(Recording, BasicJobUnderLdPreload) {
  TempDir dir;
  RunResult plain = run({job_path(), "basic"}, dir.path(), injected(Inject::none));
  ASSERT_EQ(plain.exit_code, 0);
  RunResult r = run({job_path(), "basic"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, plain.out) << "the job's stdout must not change";
  auto t = only_trace(r);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->meta().at("clean_close"), "1");
  EXPECT_EQ(t->meta().at("source"), "collector");

  // The job's last line says what the trace holds (issue 13: it said "(983 rows)", counting
  // strings, stats and every other table).
  EXPECT_NE(r.err.find("(4 kernels, 3 copies, 1 set"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(" rows)"), std::string::npos) << r.err;
  // Kernels: 3 GEMMs on the compute stream (13), one reduce on the comm stream (14).
  EXPECT_EQ(t->count("kernel"), 4);
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM kernel k JOIN string s ON s.id = k.name_id "
                   "WHERE s.value = 'void gemm<128>(float*, float*)' AND k.stream_id = 13 "
                   "AND k.end_ns - k.start_ns = 20000 AND k.grid_x = 128 AND k.block_x = 256 "
                   "AND k.registers_per_thread = 32"),
            3);
  EXPECT_EQ(
      text(*t, "SELECT s.value FROM kernel k JOIN string s ON s.id = k.mangled_name_id LIMIT 1"),
      "_Z4gemmILi128EEvPfS0_");
  EXPECT_EQ(
      scalar(*t,
             "SELECT COUNT(*) FROM kernel k JOIN string s ON s.id = k.name_id "
             "WHERE s.value = 'reduce_kernel' AND k.stream_id = 14 AND k.mangled_name_id IS NULL"),
      1);
  // Same-stream kernels never overlap; they run in launch order.
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM kernel a JOIN kernel b ON a.stream_id = b.stream_id "
                   "AND a.id < b.id AND b.start_ns < a.end_ns"),
            0);
  // Copies and the set.
  EXPECT_EQ(column(*t,
                   "SELECT copy_kind || ':' || bytes || ':' || (end_ns - start_ns) FROM memcpy "
                   "ORDER BY correlation_id"),
            (std::vector<std::string>{"H2D:1048576:8000", "D2H:65536:3000", "D2D:16777216:5000"}));
  EXPECT_EQ(
      scalar(*t, "SELECT COUNT(*) FROM memset WHERE bytes = 4096 AND end_ns - start_ns = 1000"), 1);
  EXPECT_EQ(column(*t, "SELECT type FROM sync ORDER BY start_ns"),
            (std::vector<std::string>{"stream_synchronize", "context_synchronize"}));
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM sync WHERE device_id = 0"), 2);
  // Streams: priority, flags, and the NVTX name.
  EXPECT_EQ(text(*t, "SELECT name FROM stream WHERE stream_id = 14"), "comm stream");
  EXPECT_EQ(scalar(*t, "SELECT priority FROM stream WHERE stream_id = 14"), -1);
  EXPECT_EQ(text(*t, "SELECT flags FROM stream WHERE stream_id = 13"), "non_blocking");
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM stream WHERE stream_id = 14"), 1);
  // Device facts for occupancy.
  EXPECT_EQ(scalar(*t, "SELECT sm_count FROM device WHERE device_id = 0"), 132);
  EXPECT_EQ(scalar(*t, "SELECT max_threads_per_sm FROM device WHERE device_id = 0"), 2048);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM context WHERE device_id = 0"), 1);
  // NVTX: nesting and the mark.
  EXPECT_EQ(
      column(*t,
             "SELECT name || ':' || kind || ':' || IFNULL(depth, 'null') FROM nvtx_range ORDER BY "
             "start_ns"),
      (std::vector<std::string>{"step:push_pop:0", "forward:push_pop:1", "checkpoint:mark:null"}));
  EXPECT_EQ(
      scalar(*t,
             "SELECT COUNT(*) FROM nvtx a JOIN nvtx b ON a.name = 'step' AND b.name = 'forward' "
             "AND b.start_ns >= a.start_ns AND b.end_ns <= a.end_ns"),
      1);
  // One clock: every GPU activity lies inside the process's traced interval, and each kernel
  // starts after the NVTX range that launched it began (launch latency is 1 us in the double).
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM gpu_activity g, process p WHERE g.start_ns < p.start_ns "
                   "OR g.end_ns > p.end_ns"),
            0);
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM kernel k, nvtx n WHERE n.name = 'forward' AND k.start_ns "
                   "< n.start_ns"),
            0);
  // Process facts.
  EXPECT_EQ(text(*t, "SELECT trace_clock FROM process"), "CLOCK_MONOTONIC");
  EXPECT_NE(text(*t, "SELECT command_line FROM process").find("c3_gpu_job basic"),
            std::string::npos);
  EXPECT_GT(scalar(*t, "SELECT anchor_end_realtime_ns - anchor_start_realtime_ns FROM process"), 0);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'cupti_status'"), 1);
  EXPECT_EQ(t->count("api_call"), 0) << "API calls only with --cuda-api";
}

TEST(Recording, CudaInjectionAloneRecordsGpuActivity) {
  TempDir dir;
  RunResult r = run({job_path(), "basic"}, dir.path(), injected(Inject::cuda_injection));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = only_trace(r);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->count("kernel"), 4);
  EXPECT_EQ(t->count("memcpy"), 3);
  // NVTX needs NVTX_INJECTION64_PATH (c3scope record and LD_PRELOAD set it).
  EXPECT_EQ(t->count("nvtx_range"), 0);
}

TEST(Recording, CudaApiCallsWhenAsked) {
  TempDir dir;
  RunResult r = run({job_path(), "basic"}, dir.path(), with_env({{"C3SCOPE_CUDA_API", "1"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = only_trace(r);
  ASSERT_TRUE(t);
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM api_call a JOIN string s ON s.id = a.name_id "
                   "WHERE s.value = 'cudaLaunchKernel_v7000' AND a.api = 'runtime'"),
            4);
  // Every kernel's launch call is there, with the same correlation id, and precedes it.
  EXPECT_EQ(
      scalar(*t,
             "SELECT COUNT(*) FROM kernel k JOIN api_call a ON a.correlation_id = k.correlation_id "
             "WHERE a.start_ns <= k.start_ns"),
      4);
}

TEST(Recording, PeerToPeerCopy) {
  TempDir dir;
  RunResult r = run({job_path(), "p2p"}, dir.path(), with_env({{"C3FAKE_DEVICES", "2"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = only_trace(r);
  ASSERT_TRUE(t);
  EXPECT_EQ(text(*t,
                 "SELECT copy_kind || ' ' || src_device_id || '->' || dst_device_id || ' ' || "
                 "bytes FROM memcpy"),
            "P2P 0->1 4194304");
  EXPECT_EQ(t->count("device"), 2);
}

TEST(Recording, NcclCollectivesWithArgumentsAndKernelLinks) {
  TempDir dir;
  RunResult r = run({job_path(), "nccl"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = only_trace(r);
  ASSERT_TRUE(t);
  EXPECT_EQ(column(*t,
                   "SELECT op || ' ' || datatype || ' ' || count || ' ' || bytes || ' ' || "
                   "IFNULL(reduce_op, '-') || ' root=' || IFNULL(root, '-') || ' peer=' || "
                   "IFNULL(peer, '-') || ' seq=' || seq || ' rank=' || rank || '/' || nranks "
                   "FROM collective ORDER BY id"),
            (std::vector<std::string>{
                "AllReduce float32 1048576 4194304 sum root=- peer=- seq=0 rank=0/2",
                "Broadcast bfloat16 1000 2000 - root=1 peer=- seq=1 rank=0/2",
                "AllGather float16 4096 8192 - root=- peer=- seq=2 rank=0/2",
                "Send int32 256 1024 - root=- peer=1 seq=0 rank=0/2",
                "Recv int32 256 1024 - root=- peer=1 seq=0 rank=0/2",
                "Send int32 128 512 - root=- peer=1 seq=1 rank=0/2",
                // The fake NCCL's split keeps the parent's rank and size.
                "ReduceScatter float32 512 2048 max root=- peer=- seq=0 rank=0/2",
            }));
  // Grouped calls share one group and one external id; single calls have their own.
  EXPECT_EQ(
      scalar(*t, "SELECT COUNT(DISTINCT group_id) FROM collective WHERE group_id IS NOT NULL"), 1);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM collective WHERE group_id IS NOT NULL"), 3);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(DISTINCT external_id) FROM collective"), 5);
  // Every call is linked to exactly one kernel; the group's three calls to the same one.
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM collective c WHERE (SELECT COUNT(*) FROM "
                   "collective_kernel ck WHERE ck.collective_id = c.id) = 1"),
            7);
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(DISTINCT ck.kernel_id) FROM collective c JOIN collective_kernel "
                   "ck ON ck.collective_id = c.id WHERE c.group_id IS NOT NULL"),
            1);
  EXPECT_EQ(
      text(*t,
           "SELECT s.value FROM collective c JOIN collective_kernel ck ON ck.collective_id = c.id "
           "JOIN kernel k ON k.id = ck.kernel_id JOIN string s ON s.id = k.name_id WHERE c.op = "
           "'AllReduce'")
          .rfind("ncclDevKernel_AllReduce", 0),
      0u);
  // The kernel runs on the stream the call was given, after the call was made.
  EXPECT_EQ(
      scalar(*t,
             "SELECT COUNT(*) FROM collective c JOIN collective_gpu g ON g.collective_id = c.id "
             "WHERE g.start_ns >= c.host_start_ns AND c.stream_id = 13"),
      7);
  // Communicators: one id on every rank (hash of the unique id), the split one derived from it.
  EXPECT_EQ(
      column(*t,
             "SELECT init_call || ' ' || rank || '/' || nranks || ' ' || IFNULL(end_call, '-') "
             "FROM communicator ORDER BY id"),
      (std::vector<std::string>{"CommInitRank 0/2 CommFinalize", "CommSplit 0/2 CommDestroy"}));
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM communicator c2 JOIN communicator c1 ON c2.parent_comm_id "
                   "= c1.comm_id"),
            1);
  EXPECT_EQ(
      scalar(*t, "SELECT COUNT(*) FROM collective c JOIN communicator m ON m.comm_id = c.comm_id"),
      7);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'nccl_calls'"), 14);
}

TEST(Recording, NcclCommIdIsTheSameForEveryRank) {
  // Two processes given the same unique id (as two ranks would be) record the same comm_id.
  TempDir dir;
  RunResult a = run({job_path(), "nccl"}, dir.path());
  RunResult b = run({job_path(), "nccl"}, dir.path());
  ASSERT_EQ(a.exit_code, 0);
  ASSERT_EQ(b.exit_code, 0);
  ASSERT_EQ(b.traces.size(), 2u);
  auto t1 = Reader::open(b.traces[0]);
  auto t2 = Reader::open(b.traces[1]);
  const std::string q = "SELECT comm_id FROM communicator WHERE init_call = 'CommInitRank'";
  EXPECT_EQ(text(*t1, q), text(*t2, q));
  EXPECT_EQ(text(*t1, q).size(), 16u);
}

TEST(Recording, SixteenThreads) {
  TempDir dir;
  RunResult r = run({job_path(), "threads", "16", "100"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = only_trace(r);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->count("kernel"), 1600);
  EXPECT_EQ(t->count("nvtx_range"), 3200);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(DISTINCT thread_id) FROM nvtx_range"), 16);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM nvtx_range WHERE name = 'inner' AND depth = 1"), 1600);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM nvtx_range WHERE name LIKE 'worker%' AND depth = 0"),
            1600);
  // Each inner range nests in an outer range of its own thread.
  EXPECT_EQ(scalar(*t,
                   "SELECT COUNT(*) FROM nvtx_range i WHERE i.name = 'inner' AND NOT EXISTS ("
                   "SELECT 1 FROM nvtx_range o WHERE o.thread_id = i.thread_id AND o.depth = 0 "
                   "AND o.start_ns <= i.start_ns AND o.end_ns >= i.end_ns)"),
            0);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(DISTINCT stream_id) FROM kernel"), 16);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'queue_dropped_rows'"), 0);
}

TEST(Recording, NvtxWithoutCuda) {
  TempDir dir;
  RunResult r = run({job_path(), "nvtx-only"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = only_trace(r);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->count("nvtx_range"), 2);
  EXPECT_EQ(t->count("kernel"), 0);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'cupti_status'"), 0);
}

TEST(Recording, NoTraceForProcessesThatRecordNothing) {
  TempDir dir;
  RunResult r = run({"/bin/true"}, dir.path());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(r.traces.empty());
  EXPECT_EQ(r.err, "");
}

TEST(Recording, NcclLinkingCanBeTurnedOff) {
  TempDir dir;
  RunResult r = run({job_path(), "nccl"}, dir.path(), with_env({{"C3SCOPE_NCCL_LINK", "0"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto t = only_trace(r);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->count("collective"), 7);
  EXPECT_EQ(t->count("external_correlation"), 0);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM collective_activity"), 0);
  EXPECT_NE(
      text(*t, "SELECT detail FROM stats WHERE name = 'cupti_status'").find("C3SCOPE_NCCL_LINK=0"),
      std::string::npos);
}

// `c3scope record` replaced the C3SCOPE_OUTPUT and C3SCOPE_LOG the user exported: flag >
// environment > default.
TEST(Recording, CliKeepsTheUsersEnvironmentWithoutFlags) {
  TempDir dir;
  auto env_of = [&](const std::vector<std::string>& flags,
                    const std::map<std::string, std::string>& env) {
    std::vector<std::string> args = {c3scope_path(), "record"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "/usr/bin/env"});
    std::map<std::string, std::string> e = env;
    // Under ASan the runtime comes before the (instrumented) collector record preloads.
    if (const std::string asan = C3_ASAN_RUNTIME; !asan.empty()) e["LD_PRELOAD"] = asan;
    RunOptions o = with_env(e);
    o.inject = Inject::none;
    return "\n" + run(args, dir.path(), o).out;
  };
  const std::string mine = dir.path() + "/mine/%p.sqlite";
  std::string out = env_of({}, {{"C3SCOPE_OUTPUT", mine}, {"C3SCOPE_LOG", "quiet"}});
  EXPECT_NE(out.find("\nC3SCOPE_OUTPUT=" + mine + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nC3SCOPE_LOG=quiet\n"), std::string::npos) << out;
  out = env_of({"-o", dir.path() + "/flag/", "--log", "debug"},
               {{"C3SCOPE_OUTPUT", mine}, {"C3SCOPE_LOG", "quiet"}});
  EXPECT_NE(out.find("\nC3SCOPE_OUTPUT=" + dir.path() + "/flag/c3scope-%h-%p.sqlite\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\nC3SCOPE_LOG=debug\n"), std::string::npos) << out;
  out = env_of({}, {});
  EXPECT_NE(out.find("\nC3SCOPE_OUTPUT=c3scope-%h-%p.sqlite\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nC3SCOPE_LOG=warn\n"), std::string::npos) << out;
}
