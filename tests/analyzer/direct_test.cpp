// A PyTorch (Kineto) file read straight into the trace (the map's way, OpenOptions::read_once:
// no database in between, analyzer/lib/src/open/build.h) must give exactly the trace that the
// conversion into a c3scope trace and its load give: every activity, link, collective, range,
// device and process, and the same count of what could not be used.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

#include "c3/analyzer/open/open.h"
#include "shared_traces.h"

namespace fs = std::filesystem;
using namespace c3;

namespace {

fs::path traces() {
  return c3::test::shared_traces();
}

class DirectTest : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("c3-direct-" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text, bool gzip = false) {
    std::string p = (dir / name).string();
    if (gzip) {
      gzFile f = gzopen(p.c_str(), "wb");
      gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
      gzclose(f);
    } else {
      std::ofstream(p, std::ios::binary) << text;
    }
    return p;
  }
};

analyzer::OpenedTraces open(const std::string& path, bool direct, bool hta_rounding = false,
                            bool launch_calls = true) {
  analyzer::OpenOptions o;
  o.read_once = direct;
  o.hta_rounding = hta_rounding;
  o.launch_calls = launch_calls;
  return analyzer::open_traces(std::vector<std::string>{path}, o);
}

// Field by field; names compared as strings (a conversion also interns the API calls' names).
void expect_same(const analyzer::Trace& a, const analyzer::Trace& b) {
  ASSERT_EQ(a.processes.size(), b.processes.size());
  for (size_t i = 0; i < a.processes.size(); ++i) {
    const auto &p = a.processes[i], &q = b.processes[i];
    EXPECT_EQ(p.source, q.source);
    EXPECT_EQ(p.db_id, q.db_id);
    EXPECT_EQ(p.pid, q.pid);
    EXPECT_EQ(p.host, q.host);
    EXPECT_EQ(p.rank, q.rank);
    EXPECT_EQ(p.world_size, q.world_size);
    EXPECT_EQ(p.command_line, q.command_line);
    EXPECT_EQ(p.trace_clock, q.trace_clock);
    EXPECT_EQ(p.anchor_trace_ns, q.anchor_trace_ns);
    EXPECT_EQ(p.anchor_realtime_ns, q.anchor_realtime_ns);
  }
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t i = 0; i < a.devices.size(); ++i) {
    const auto &d = a.devices[i], &e = b.devices[i];
    EXPECT_EQ(d.process, e.process);
    EXPECT_EQ(d.device, e.device);
    EXPECT_EQ(d.name, e.name);
    EXPECT_EQ(d.sm_count, e.sm_count);
    EXPECT_EQ(d.max_threads_per_sm, e.max_threads_per_sm);
    EXPECT_EQ(d.max_blocks_per_sm, e.max_blocks_per_sm);
    EXPECT_EQ(d.max_registers_per_sm, e.max_registers_per_sm);
    EXPECT_EQ(d.max_shared_per_sm, e.max_shared_per_sm);
    EXPECT_EQ(d.memory_bandwidth, e.memory_bandwidth);
  }
  const auto &x = a.activities, &y = b.activities;
  ASSERT_EQ(x.size(), y.size());
  size_t differing = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool same =
        x.start[i] == y.start[i] && x.end[i] == y.end[i] &&
        a.names[static_cast<size_t>(x.name[i])] == b.names[static_cast<size_t>(y.name[i])] &&
        x.stream[i] == y.stream[i] && x.device[i] == y.device[i] && x.process[i] == y.process[i] &&
        x.kind[i] == y.kind[i] && x.cls[i] == y.cls[i] && x.bytes[i] == y.bytes[i] &&
        x.collective[i] == y.collective[i] &&
        (x.kind[i] == analyzer::Kind::kernel ? a.shape_of(i) == b.shape_of(i)
                                             : x.shape[i] == y.shape[i]);
    if (!same && differing++ < 3) ADD_FAILURE() << "activity " << i << " differs";
  }
  EXPECT_EQ(differing, 0u);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    const auto &c = a.collectives[i], &d = b.collectives[i];
    EXPECT_EQ(c.process, d.process);
    EXPECT_EQ(c.device, d.device);
    EXPECT_EQ(c.comm_id, d.comm_id);
    EXPECT_EQ(c.seq, d.seq);
    EXPECT_EQ(c.op, d.op);
    EXPECT_EQ(c.bytes, d.bytes);
    EXPECT_EQ(c.nranks, d.nranks);
    EXPECT_EQ(c.rank, d.rank);
    EXPECT_EQ(c.host_start, d.host_start);
    EXPECT_EQ(c.gpu_start, d.gpu_start);
    EXPECT_EQ(c.gpu_end, d.gpu_end);
  }
  ASSERT_EQ(a.ranges.size(), b.ranges.size());
  for (size_t i = 0; i < a.ranges.size(); ++i) {
    const auto &g = a.ranges[i], &h = b.ranges[i];
    EXPECT_EQ(g.process, h.process);
    EXPECT_EQ(g.thread, h.thread);
    EXPECT_EQ(g.domain, h.domain);
    EXPECT_EQ(g.name, h.name);
    EXPECT_EQ(g.start, h.start);
    EXPECT_EQ(g.end, h.end);
    EXPECT_EQ(g.depth, h.depth);
  }
  // Each GPU row's launch call (its times, name and thread), and what the calls gave: the host's
  // synchronizations and the streams' event waits.
  ASSERT_EQ(x.has_calls(), y.has_calls());
  if (x.has_calls()) {
    size_t calls_differing = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      auto name = [](const analyzer::Trace& t, size_t k) {
        const int32_t n = t.activities.call_name[k];
        return n >= 0 && static_cast<size_t>(n) < t.names.size() ? t.names[static_cast<size_t>(n)]
                                                                 : std::string("-");
      };
      const bool same = x.call_start[i] == y.call_start[i] && x.call_end[i] == y.call_end[i] &&
                        name(a, i) == name(b, i) &&
                        (x.call_thread.empty() ? 0 : x.call_thread[i]) ==
                            (y.call_thread.empty() ? 0 : y.call_thread[i]);
      if (!same && calls_differing++ < 3) ADD_FAILURE() << "activity " << i << "'s call differs";
    }
    EXPECT_EQ(calls_differing, 0u);
  }
  auto sync = [](const analyzer::HostSync& h) {
    return std::make_tuple(h.process, h.start, h.end, h.thread);
  };
  ASSERT_EQ(a.host_syncs.size(), b.host_syncs.size());
  for (size_t i = 0; i < a.host_syncs.size(); ++i)
    EXPECT_EQ(sync(a.host_syncs[i]), sync(b.host_syncs[i])) << "host sync " << i;
  auto wait = [](const analyzer::StreamWait& w) {
    return std::make_tuple(w.process, w.from_device, w.to_device, w.from_stream, w.to_stream,
                           w.from_start, w.to_start);
  };
  ASSERT_EQ(a.stream_waits.size(), b.stream_waits.size());
  for (size_t i = 0; i < a.stream_waits.size(); ++i)
    EXPECT_EQ(wait(a.stream_waits[i]), wait(b.stream_waits[i])) << "stream wait " << i;
  EXPECT_EQ(a.launch_delays.size(), b.launch_delays.size());
  EXPECT_EQ(a.skipped, b.skipped);
}

// Two process groups, a kernel with no args, a set, copies, CPU annotations nested and on two
// threads, a driver call, fractional timestamps and events the importer cannot use.
constexpr const char* kTrace = R"json({"schemaVersion": 1,
 "distributedInfo": {"rank": 1, "world_size": 2, "nccl_version": "2.21.5"},
 "baseTimeNanoseconds": 1700000000000000000,
 "deviceProperties": [{"id": 0, "name": "GPU X", "numSms": 132, "computeMajor": 9, "computeMinor": 0,
   "totalGlobalMem": 85899345920, "sharedMemPerBlockOptin": 232448},
   {"id": 1, "name": "GPU Y (unused)"}],
 "traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 55, "tid": 56, "ts": 990.25, "dur": 5,
   "args": {"correlation": 12, "cbid": 211}},
  {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 55, "tid": 56, "ts": 1001, "dur": 2,
   "args": {"correlation": 14}},
  {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1000.5, "dur": 100.25,
   "args": {"device": 0, "stream": 7, "correlation": 11, "grid": [132, 2, 1], "block": [256, 1, 1],
            "registers per thread": 128, "shared memory": 49152}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 8,
   "ts": 1050, "dur": 100, "args": {"device": 0, "stream": 8, "correlation": 12, "Collective name": "allreduce",
   "In msg nelems": 1024, "Group size": 2, "dtype": "Float", "Process Group Name": "0"}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(x)", "pid": 0, "tid": 9,
   "ts": 1300, "dur": 40, "args": {"device": 0, "stream": 9, "correlation": 14, "Collective name": "_allgather_base",
   "In msg nelems": "512", "Group size": 2, "dtype": "BFloat16", "Process Group Name": "tp"}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_SendRecv(x)", "pid": 0, "tid": 9, "ts": 1400, "dur": 30,
   "args": {"device": 0, "stream": 9}},
  {"ph": "X", "cat": "kernel", "name": "bare", "pid": 0, "tid": 7, "ts": 1500, "dur": 1},
  {"p\u0068": "X", "c\u0061t": "kernel", "n\u0061me": "escaped keys", "pid": 0, "ts": 1600, "dur": 1,
   "args": {"dev\u0069ce": 0, "stream": 7}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 9, "ts": 1200,
   "dur": 10, "args": {"device": 0, "stream": 9, "correlation": 13, "bytes": 4096}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0, "tid": 9, "ts": 1210,
   "dur": 3, "args": {"device": 0, "stream": 10, "bytes": 64}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 9, "ts": 1220, "dur": 2,
   "args": {"device": 0, "stream": 9, "bytes": 128}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 55, "tid": 56, "ts": 900, "dur": 500},
  {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 55, "tid": 56, "ts": 950, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#4", "pid": 55, "tid": 57, "ts": 1400, "dur": 200},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 55, "tid": 57, "ts": 1410, "dur": 20},
  {"ph": "X", "cat": "kernel", "name": "no ts", "dur": 5},
  {"ph": "X", "cat": "kernel", "name": "negative", "ts": 10, "dur": -5},
  [1, 2],
  {"ph": "i", "name": "instant", "pid": 55, "tid": 56, "ts": 5},
  {"ph": "X", "cat": "kernel", "name": "bad number", "ts": 1.2.3, "dur": 5}
 ]})json";

}  // namespace

TEST_F(DirectTest, SameTraceAsTheConversion) {
  for (const bool rounding : {false, true}) {
    SCOPED_TRACE(rounding ? "hta rounding" : "exact");
    const std::string in = write("t.json", kTrace);
    const auto direct = open(in, true, rounding);
    const auto converted = open(in, false, rounding);
    EXPECT_FALSE(direct.files.temp) << "nothing converted";
    EXPECT_TRUE(converted.files.temp);
    ASSERT_EQ(direct.process_db.size(), 1u);
    EXPECT_EQ(direct.process_db[0], "") << "no database to read details from";
    expect_same(direct.trace, converted.trace);
    EXPECT_EQ(direct.trace.first_skipped, converted.trace.first_skipped);
    EXPECT_EQ(direct.trace.skipped, 4) << direct.trace.first_skipped;
    const auto& t = direct.trace;
    ASSERT_EQ(t.activities.size(), 9u);
    size_t escaped = 0;
    for (size_t i = 0; i < t.activities.size(); ++i) {
      escaped += t.names[static_cast<size_t>(t.activities.name[i])] == "escaped keys";
    }
    EXPECT_EQ(escaped, 1u) << "keys are compared unescaped";
    ASSERT_EQ(t.collectives.size(), 3u);
    EXPECT_EQ(t.collectives[2].gpu_start, 1400000) << "the SendRecv kernel, without a correlation";
    size_t linked = 0;
    for (size_t i = 0; i < t.activities.size(); ++i) linked += t.activities.collective[i] >= 0;
    EXPECT_EQ(linked, 3u) << "kernels without a correlation id link to no one else's collective";
    EXPECT_EQ(t.collectives[0].host_start, 990250) << "the launching call's start";
    EXPECT_EQ(t.collectives[1].bytes, 1024) << "a quoted count is read, bf16 is 2 bytes";
    ASSERT_EQ(t.ranges.size(), 3u);
  }
}

// Events across the stream's 1 MiB chunks, with strings holding braces, brackets, escaped quotes
// and backslashes (the splitter must not count them), plain and gzip.
TEST_F(DirectTest, ChunkBoundariesAndEscapes) {
  std::string text = R"({"traceEvents": [)";
  const int n = 24000;
  for (int i = 0; i < n; ++i) {
    if (i > 0) text += ",\n";
    text += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 97) +
            R"( \"q\" }]{[ \\ \u00e9", "pid": 0, "tid": 1, "ts": )" +
            std::to_string(1000 + i * 10) +
            R"(, "dur": 5, "args": {"device": 0, "stream": 7, "note": "{[\"]}", "grid": [)" +
            std::to_string(1 + i % 5) + R"(, 1, 1], "block": [128, 1, 1]}})";
  }
  text += "]}";
  ASSERT_GT(text.size(), size_t{3} << 20);
  for (const bool gzip : {false, true}) {
    SCOPED_TRACE(gzip ? "gzip" : "plain");
    const std::string in = write(gzip ? "big.json.gz" : "big.json", text, gzip);
    const auto direct = open(in, true);
    const auto& t = direct.trace;
    ASSERT_EQ(t.activities.size(), static_cast<size_t>(n));
    EXPECT_EQ(t.skipped, 0) << t.first_skipped;
    EXPECT_EQ(t.names[static_cast<size_t>(t.activities.name[5])], "k5 \"q\" }]{[ \\ \xc3\xa9");
    EXPECT_EQ(t.shape_of(3).grid, 4u);
    EXPECT_EQ(t.activities.start.back(), (1000 + int64_t{n - 1} * 10) * 1000);
    expect_same(t, open(in, false).trace);
  }
}

// Numbers a hostile file may hold: times past int64 nanoseconds are unusable events (never an
// overflow), a count whose bytes overflow is unknown, launch dimensions overflowing or zero
// give the same shape both ways.
TEST_F(DirectTest, HostileNumbers) {
  const std::string in = write("hostile.json", R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ts past int64 ns", "ts": 9223372036854776, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "u64 ts", "ts": 9223372036854775808, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "end overflows", "ts": 9000000000000000, "dur": 9000000000000000},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 9e15, "dur": 9e15},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce(x)", "ts": 10, "dur": 1,
     "args": {"device": 0, "stream": 1, "In msg nelems": 9223372036854775807, "dtype": "double"}},
    {"ph": "X", "cat": "kernel", "name": "zero grid", "ts": 20, "dur": 1,
     "args": {"device": 0, "stream": 2, "grid": [4294967296, 4294967296, 0], "block": [4294967296, 4294967296, 4]}}
  ]})json");
  const auto direct = open(in, true);
  expect_same(direct.trace, open(in, false).trace);
  const auto& t = direct.trace;
  EXPECT_EQ(t.skipped, 4) << t.first_skipped;
  EXPECT_NE(t.first_skipped.find("past what int64 nanoseconds hold"), std::string::npos)
      << t.first_skipped;
  ASSERT_EQ(t.collectives.size(), 1u);
  EXPECT_EQ(t.collectives[0].bytes, 0) << "bytes that overflow are unknown";
  ASSERT_EQ(t.activities.size(), 2u);
  for (size_t i = 0; i < t.activities.size(); ++i) {
    if (t.names[static_cast<size_t>(t.activities.name[i])] != "zero grid") continue;
    EXPECT_EQ(t.shape_of(i).grid, 0u);
    EXPECT_EQ(t.shape_of(i).block, UINT32_MAX) << "saturated, not wrapped";
  }
}

// The real PyTorch traces of ../shared/traces, both ways.
TEST_F(DirectTest, RealTracesBothWays) {
  const fs::path kineto = traces() / "kineto";
  if (!fs::is_directory(kineto)) GTEST_SKIP() << kineto << " is not here";
  int seen = 0;
  for (const auto& e : fs::directory_iterator(kineto)) {
    const std::string p = e.path().string();
    if (p.find(".json") == std::string::npos) continue;
    SCOPED_TRACE(p);
    expect_same(open(p, true, true).trace, open(p, false, true).trace);
    ++seen;
  }
  EXPECT_GT(seen, 0);
}

// Nsight Systems exports are read straight into the trace too (issue 27: no scratch database on
// the map's path): the golden cases' hand-made exports (a GEMM, NCCL, copies, NVTX; rows with
// impossible times, which are rejected and counted) and the real sample of ../shared/traces give
// the trace their conversion gives, and nothing is converted.
TEST_F(DirectTest, NsightExportsBothWays) {
  std::vector<std::string> exports;
  for (const char* golden : {"nsys_export", "nsys_impossible_times"}) {
    std::ifstream f(std::string(C3_SOURCE_DIR) + "/tests/golden/" + golden + "/nsys.sql");
    std::stringstream sql;
    sql << f.rdbuf();
    ASSERT_FALSE(sql.str().empty()) << golden;
    const std::string db = (dir / (std::string(golden) + ".sqlite")).string();
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(h, sql.str().c_str(), nullptr, nullptr, &err);
    const std::string why = err != nullptr ? err : "";
    sqlite3_free(err);
    sqlite3_close(h);
    ASSERT_EQ(rc, SQLITE_OK) << why;
    exports.push_back(db);
  }
  const fs::path real = traces() / "nsys" / "pipit_saxpy_nsys.sqlite";
  if (fs::exists(real)) exports.push_back(real.string());
  for (const std::string& in : exports) {
    SCOPED_TRACE(in);
    const auto direct = open(in, true);
    const auto converted = open(in, false);
    EXPECT_FALSE(direct.files.temp) << "nothing converted";
    EXPECT_TRUE(converted.files.temp);
    EXPECT_GT(direct.trace.activities.size(), 0u);
    expect_same(direct.trace, converted.trace);
    EXPECT_EQ(direct.trace.skipped, converted.trace.skipped);
    EXPECT_EQ(direct.trace.first_skipped, converted.trace.first_skipped);
    // Without launch calls (OpenOptions::launch_calls), both ways keep none.
    const auto bare = open(in, true, false, false);
    EXPECT_FALSE(bare.trace.activities.has_calls());
    expect_same(bare.trace, open(in, false, false, false).trace);
  }
}
