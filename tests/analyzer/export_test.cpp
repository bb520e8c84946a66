// The Perfetto export's flow arrows: every arrow starts inside a slice on its own track and ends
// inside a slice on its own track, and an NCCL call's arrow ends on its own GPU's kernel.
// Regression (issue 13: "2,100 of 9,600 flow ends on GPU 1's communication stream sit where no
// slice exists"): the calls of one ncclGroupStart/End share one external id, so the group's
// work spans every GPU it drives, and each call's arrow ended at the group's first kernel start
// (another GPU's) on its own GPU's track. (One such step, exported exactly: the golden case
// tests/golden/c3scope_grouped_nccl.)
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "c3/exporter/perfetto.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/writer.h"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("c3_export_test-" + std::to_string(getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

constexpr int64_t kThread = 4242;
constexpr int64_t kGroups = 40;

// One process driving two GPUs from one thread, as a single-process multi-GPU job (and c3bench's
// sim backend) does: per step, a grouped AllReduce over both GPUs (GPU 1's kernel starts after
// GPU 0's), a grouped Send/Recv ring shift (GPU 0's kernel starts after GPU 1's), a lone
// AllReduce on GPU 0, a call whose stream did not resolve (on GPU 1), and a GEMM per GPU. Each
// launch has its API call. Returns the expected GPU of each NCCL call, by host start.
std::map<int64_t, int64_t> write_trace(const std::string& path) {
  std::map<int64_t, int64_t> call_device;
  auto w = c3::tracedb::Writer::create(path);
  c3::tracedb::ProcessRow p;
  p.id = 1;
  p.pid = 777;
  p.host = "node";
  p.command_line = "job";
  p.trace_clock = "CLOCK_MONOTONIC";
  w->insert(p);
  const int64_t comm_stream[2] = {13, 15}, compute_stream[2] = {7, 8};
  for (int64_t dev = 0; dev < 2; ++dev) {
    c3::tracedb::DeviceRow d;
    d.process_id = 1;
    d.device_id = dev;
    d.name = "GPU";
    d.sm_count = 132;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.max_registers_per_sm = 65536;
    d.max_shared_memory_per_sm = 233472;
    w->insert(d);
    for (int64_t s : {comm_stream[dev], compute_stream[dev]}) {
      c3::tracedb::StreamRow st;
      st.process_id = 1;
      st.device_id = dev;
      st.stream_id = s;
      w->insert(st);
    }
  }
  const int64_t launch = w->intern("cudaLaunchKernel");
  const int64_t gemm = w->intern("gemm");
  const int64_t allreduce = w->intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  const int64_t sendrecv = w->intern("ncclDevKernel_SendRecv");
  int64_t correlation = 0, external = 0, host = 1'000'000;
  // A kernel on (dev, stream) over [start, end), launched by an API call now; returns its
  // correlation id.
  auto kernel = [&](int64_t name, int64_t dev, int64_t stream, int64_t start, int64_t end) {
    c3::tracedb::ApiCallRow a;
    a.process_id = 1;
    a.thread_id = kThread;
    a.api = "runtime";
    a.cbid = 211;
    a.name_id = launch;
    a.correlation_id = ++correlation;
    a.start_ns = host;
    a.end_ns = host + 5;
    w->insert(a);
    host += 10;
    c3::tracedb::KernelRow k;
    k.process_id = 1;
    k.device_id = dev;
    k.stream_id = stream;
    k.correlation_id = correlation;
    k.start_ns = start;
    k.end_ns = end;
    k.name_id = name;
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = k.block_y = k.block_z = 1;
    k.registers_per_thread = 32;
    k.launch_type = "regular";
    w->insert(k);
    return correlation;
  };
  auto link = [&](int64_t ext, int64_t corr) {
    c3::tracedb::ExternalCorrelationRow e;
    e.process_id = 1;
    e.external_kind = "custom0";
    e.external_id = ext;
    e.correlation_id = corr;
    w->insert(e);
  };
  auto call = [&](const std::string& op, int64_t dev, std::optional<int64_t> stream, int64_t ext,
                  std::optional<int64_t> group, int64_t peer = -1) {
    c3::tracedb::CollectiveRow c;
    c.process_id = 1;
    c.thread_id = kThread;
    c.device_id = dev;
    c.stream_id = stream;
    c.stream_handle = 0x1000 + dev;
    c.comm_id = "comm";
    c.comm_handle = 0x2000 + dev;
    c.rank = dev;
    c.nranks = 2;
    c.op = op;
    c.datatype = "float32";
    c.count = 1024;
    c.bytes = 4096;
    if (peer >= 0) c.peer = peer;
    c.group_id = group;
    c.external_id = ext;
    c.host_start_ns = host;
    c.host_end_ns = host + 3;
    call_device[host] = dev;
    host += 10;
    w->insert(c);
  };
  for (int64_t i = 0; i < kGroups; ++i) {
    const int64_t t = 10'000'000 + i * 100'000;
    // Grouped AllReduce: the calls, then the launches at ncclGroupEnd; GPU 1 starts later.
    const int64_t ar = ++external;
    call("AllReduce", 0, comm_stream[0], ar, i);
    call("AllReduce", 1, comm_stream[1], ar, i);
    link(ar, kernel(allreduce, 0, comm_stream[0], t + 1000, t + 9000));
    link(ar, kernel(allreduce, 1, comm_stream[1], t + 4000, t + 9000));
    // A grouped ring shift: each rank sends to and receives from the other; GPU 0 starts later.
    const int64_t sr = ++external;
    for (int64_t dev = 0; dev < 2; ++dev) {
      call("Send", dev, comm_stream[dev], sr, kGroups + i, 1 - dev);
      call("Recv", dev, comm_stream[dev], sr, kGroups + i, 1 - dev);
    }
    link(sr, kernel(sendrecv, 0, comm_stream[0], t + 14000, t + 20000));
    link(sr, kernel(sendrecv, 1, comm_stream[1], t + 10000, t + 20000));
    // A lone AllReduce on GPU 0 and a call on GPU 1 whose stream did not resolve, in one group
    // with GPU 1's work on its compute stream only.
    const int64_t lone = ++external;
    call("AllReduce", 0, comm_stream[0], lone, std::nullopt);
    link(lone, kernel(allreduce, 0, comm_stream[0], t + 21000, t + 22000));
    const int64_t unresolved = ++external;
    call("AllReduce", 1, std::nullopt, unresolved, 2 * kGroups + i);
    link(unresolved, kernel(allreduce, 1, compute_stream[1], t + 23000, t + 24000));
    // Compute, overlapping GPU 1's AllReduce start above (a slice elsewhere on that GPU).
    kernel(gemm, 0, compute_stream[0], t, t + 30000);
    kernel(gemm, 1, compute_stream[1], t + 500, t + 2000);
  }
  w->close();
  return call_device;
}

int64_t ns(const nlohmann::json& ts) {
  return std::llround(ts.get<double>() * 1000);
}

}  // namespace

TEST(PerfettoExport, GroupedNcclCallsFlowToTheirOwnGpusKernelNotTheGroupsFirst) {
  TempDir dir;
  const std::string db = (dir.path / "job.sqlite").string();
  const std::string out = (dir.path / "job.json").string();
  const std::map<int64_t, int64_t> call_device = write_trace(db);
  {
    c3::tracedb::OutputFile file("-o", out, {false, {db}, false});
    const c3::exporter::ExportStats st = c3::exporter::export_perfetto(db, file);
    // Every NCCL call has work on its GPU: one arrow each; one per launch too.
    EXPECT_EQ(st.flows, static_cast<int64_t>(call_device.size()) + kGroups * 8);
  }
  std::ifstream in(out);
  const auto doc = nlohmann::json::parse(in);
  using Track = std::pair<int64_t, int64_t>;  // (pid, tid)
  std::map<Track, std::vector<std::pair<int64_t, int64_t>>> slices;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") != "X") continue;
    const int64_t start = ns(e.at("ts"));
    slices[{e.at("pid"), e.at("tid")}].emplace_back(start, start + ns(e.at("dur")));
  }
  auto inside = [&](const nlohmann::json& e) {
    const auto it = slices.find({e.at("pid"), e.at("tid")});
    if (it == slices.end()) return false;
    const int64_t ts = ns(e.at("ts"));
    return std::any_of(it->second.begin(), it->second.end(),
                       [&](const auto& s) { return s.first <= ts && ts <= s.second; });
  };
  std::map<int64_t, int> starts, ends;       // flow id -> count
  std::map<int64_t, int64_t> nccl_start_ts;  // NCCL flow id -> its call's host start
  int nccl_ends = 0;
  for (const auto& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph != "s" && ph != "f") continue;
    const int64_t id = e.at("id");
    EXPECT_TRUE(inside(e)) << "flow " << ph << " " << e.dump() << " is not inside a slice of its "
                           << "track";
    (ph == "s" ? starts : ends)[id]++;
    if (e.at("cat") == "nccl" && ph == "s") nccl_start_ts[id] = ns(e.at("ts"));
  }
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") != "f" || e.at("cat") != "nccl") continue;
    ++nccl_ends;
    const int64_t id = e.at("id");
    ASSERT_TRUE(nccl_start_ts.count(id)) << e.dump();
    // On its own GPU: the GPU tracks of process row 1 are pids 1001000 + device.
    EXPECT_EQ(e.at("pid").get<int64_t>(), 1001000 + call_device.at(nccl_start_ts.at(id)))
        << e.dump();
  }
  EXPECT_EQ(nccl_ends, static_cast<int>(call_device.size()));
  // One start and one end per arrow.
  EXPECT_EQ(starts.size(), ends.size());
  for (const auto& [id, n] : starts) {
    EXPECT_EQ(n, 1) << id;
    EXPECT_EQ(ends[id], 1) << "flow " << id << " has " << ends[id] << " ends";
  }
}
