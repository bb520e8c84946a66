// Loading: the activity sort (runs of one stream merged, or a plain sort) gives the same order as
// a stable sort by (process, device, start, end); a deferred load (LoadOptions::
// defer_kernel_shapes) completed by load_kernel_shapes gives the same trace as a full load, and
// refuses a file that changed in between or a cancelled read without touching the trace.
#include "c3/analyzer/open/load.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "c3/analyzer/metrics/interference.h"
#include "c3/analyzer/open/cache.h"
#include "c3/analyzer/report/report.h"
#include "c3/analyzer/summary/summary.h"
#include "c3/analyzer/why/path.h"
#include "c3/tracedb/reader.h"
#include "c3/tracedb/writer.h"

namespace fs = std::filesystem;
using namespace c3::analyzer;

namespace {

// Rows of several processes, devices, streams and kinds; `runs_sorted`: each stream's rows come
// in time order (as traces do), otherwise in random order. Names record the original row.
Activities random_rows(size_t n, bool runs_sorted, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> clock(size_t{3} * 2 * 4 * 3, 0);
  Activities a;
  for (size_t i = 0; i < n; ++i) {
    const auto process = static_cast<int16_t>(rng() % 3);
    const auto device = static_cast<int16_t>(rng() % 2);
    const auto stream = static_cast<int32_t>(rng() % 4) * 7 - 1;  // -1 (no stream), 6, 13, 20
    const auto kind = static_cast<Kind>(rng() % 3);
    int64_t start = 0;
    if (runs_sorted) {
      const int lane = (stream + 1) / 7;  // 0..3
      const int run = ((process * 2 + device) * 4 + lane) * 3 + static_cast<int>(kind);
      int64_t& c = clock.at(static_cast<size_t>(run));
      c += static_cast<int64_t>(rng() % 5);  // ties happen
      start = c;
    } else {
      start = static_cast<int64_t>(rng() % 1000);
    }
    const int64_t end = start + static_cast<int64_t>(rng() % 4);
    a.push(start, end, static_cast<int32_t>(i), stream, device, process, kind,
           static_cast<int64_t>(i));
  }
  return a;
}

void expect_sorted_like_stable_sort(size_t n, bool runs_sorted, uint32_t seed) {
  Activities a = random_rows(n, runs_sorted, seed);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (a.process[x] != a.process[y]) return a.process[x] < a.process[y];
    if (a.device[x] != a.device[y]) return a.device[x] < a.device[y];
    if (a.start[x] != a.start[y]) return a.start[x] < a.start[y];
    return a.end[x] < a.end[y];
  });
  const Activities before = a;
  a.sort();
  ASSERT_EQ(a.size(), n);
  for (size_t i = 0; i < n; ++i) {
    const size_t o = order[i];
    ASSERT_EQ(a.name[i], before.name[o]) << "row " << i << " seed " << seed;
    EXPECT_EQ(a.start[i], before.start[o]);
    EXPECT_EQ(a.end[i], before.end[o]);
    EXPECT_EQ(a.stream[i], before.stream[o]);
    EXPECT_EQ(a.device[i], before.device[o]);
    EXPECT_EQ(a.process[i], before.process[o]);
    EXPECT_EQ(a.kind[i], before.kind[o]);
    EXPECT_EQ(a.bytes[i], before.bytes[o]);
  }
}

TEST(ActivitiesSort, MergedStreamRunsEqualStableSort) {
  for (uint32_t seed = 1; seed <= 20; ++seed) expect_sorted_like_stable_sort(5000, true, seed);
}

TEST(ActivitiesSort, UnsortedRowsEqualStableSort) {
  for (uint32_t seed = 1; seed <= 20; ++seed) expect_sorted_like_stable_sort(5000, false, seed);
}

TEST(ActivitiesSort, OneRunAndEmpty) {
  expect_sorted_like_stable_sort(0, true, 1);
  expect_sorted_like_stable_sort(1, true, 1);
  Activities a;
  for (int i = 5; i > 0; --i) a.push(i, i + 1, i, 7, 0, 0, Kind::kernel, 0);  // one run, reversed
  a.sort();
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a.start[i], static_cast<int64_t>(i + 1));
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("c3load-" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

// A rank's trace: kernels of several shapes on two streams (written in completion order, so not
// sorted by start), some with a submitted time, a copy, a row ending before it starts and one of
// an unknown process (both skipped).
std::string write_rank(const fs::path& dir, int rank) {
  std::string path = (dir / ("rank" + std::to_string(rank) + ".sqlite")).string();
  auto w = c3::tracedb::Writer::create(path);
  c3::tracedb::ProcessRow p;
  p.id = 1;
  p.pid = 500 + rank;
  p.host = "node";
  p.rank = rank;
  p.world_size = 2;
  p.command_line = "train";
  p.trace_clock = "CLOCK_MONOTONIC";
  w->insert(p);
  c3::tracedb::DeviceRow d;
  d.process_id = 1;
  d.name = "GPU";
  d.sm_count = 132;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.max_registers_per_sm = 65536;
  d.max_shared_memory_per_sm = 233472;
  w->insert(d);
  const int64_t gemm = w->intern("gemm_kernel");
  const int64_t nccl = w->intern("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  int64_t correlation = 0;
  auto kernel = [&](int64_t name, int stream, int64_t s, int64_t e, int64_t grid, int64_t regs,
                    std::optional<int64_t> submitted, int64_t process = 1) {
    c3::tracedb::KernelRow k;
    k.process_id = process;
    k.stream_id = stream;
    k.correlation_id = ++correlation;
    k.start_ns = s;
    k.end_ns = e;
    k.name_id = name;
    k.grid_x = grid;
    k.grid_y = 2;
    k.grid_z = 1;
    k.block_x = 128;
    k.block_y = 1;
    k.block_z = 1;
    k.registers_per_thread = regs;
    k.static_shared_bytes = 1024;
    k.dynamic_shared_bytes = int64_t{1024} * rank;
    k.submitted_ns = submitted;
    k.launch_type = "regular";
    w->insert(k);
  };
  for (int i = 0; i < 400; ++i) {
    const int64_t t = 1'000'000 + int64_t{i} * 1000;
    kernel(nccl, 13, t + 100, t + 900, 8, 96, std::nullopt);  // finishes after the GEMM
    kernel(gemm, 7, t, t + 600, 64 + (i % 3) * 64, 128 + rank, i % 2 == 0 ? t - 50 - i : t - 7);
    if (i == 17) kernel(gemm, 7, t + 10, t + 5, 1, 1, std::nullopt);      // ends before it starts
    if (i == 99) kernel(gemm, 7, t + 20, t + 30, 1, 1, std::nullopt, 9);  // no such process
  }
  c3::tracedb::MemcpyRow m;
  m.process_id = 1;
  m.stream_id = 20;
  m.start_ns = 999'000;
  m.end_ns = 999'500;
  m.copy_kind = "H2D";
  m.bytes = 1 << 20;
  m.src_kind = "pinned";
  m.dst_kind = "device";
  m.channel_id = 3;
  w->insert(m);
  w->close();
  return path;
}

std::vector<LaunchDelay> sorted_delays(std::vector<LaunchDelay> v) {
  std::sort(v.begin(), v.end(), [](const LaunchDelay& a, const LaunchDelay& b) {
    return std::tie(a.process, a.device, a.delay_ns) < std::tie(b.process, b.device, b.delay_ns);
  });
  return v;
}

TEST(DeferredLoad, CompletedEqualsFullLoad) {
  TempDir dir;
  const std::vector<std::string> files{write_rank(dir.path, 0), write_rank(dir.path, 1)};
  const Trace full = load(files);
  LoadOptions lo;
  lo.defer_kernel_shapes = true;
  Trace t = load(files, lo);
  ASSERT_EQ(t.pending_shapes.size(), 2u);
  EXPECT_EQ(t.pending_shapes[0].kernels, 800);
  EXPECT_EQ(t.pending_shapes[0].skipped.size(), 2u);
  EXPECT_TRUE(t.launch_delays.empty());
  // Everything a timeline draws is already there and the same.
  ASSERT_EQ(t.activities.size(), full.activities.size());
  EXPECT_EQ(t.activities.start, full.activities.start);
  EXPECT_EQ(t.activities.end, full.activities.end);
  EXPECT_EQ(t.activities.stream, full.activities.stream);
  EXPECT_EQ(t.activities.cls, full.activities.cls);
  EXPECT_EQ(t.activities.collective, full.activities.collective);
  EXPECT_EQ(t.skipped, full.skipped);
  EXPECT_EQ(t.first_skipped, full.first_skipped);
  for (size_t i = 0; i < t.activities.size(); ++i) {
    if (t.activities.kind[i] == Kind::kernel) {
      EXPECT_LE(t.activities.shape[i], -2);
      EXPECT_EQ(t.shape_of(i), KernelShape{});  // pending reads as no shape, never a wrong one
    }
  }
  // The metrics and snapshots refuse an incomplete trace.
  EXPECT_THROW(analyze_aligned(t, files, {}), std::logic_error);
  EXPECT_THROW(interference(t, {}), std::logic_error);
  EXPECT_FALSE(save_cache(t, "key", (dir.path / "snap.c3cache").string()));
  EXPECT_FALSE(fs::exists(dir.path / "snap.c3cache"));

  std::vector<std::pair<int64_t, int64_t>> ticks;
  lo.progress = [&](int64_t done, int64_t total) { ticks.emplace_back(done, total); };
  load_kernel_shapes(t, lo);
  EXPECT_TRUE(t.pending_shapes.empty());
  ASSERT_FALSE(ticks.empty());
  EXPECT_EQ(ticks.back(), std::make_pair(int64_t{1600}, int64_t{1600}));
  EXPECT_EQ(t.shapes.size(), full.shapes.size());
  for (size_t i = 0; i < t.activities.size(); ++i) {
    ASSERT_EQ(t.shape_of(i), full.shape_of(i)) << "row " << i;
    EXPECT_EQ(t.activities.channel(i), full.activities.channel(i));
  }
  const auto delays = sorted_delays(t.launch_delays), want = sorted_delays(full.launch_delays);
  ASSERT_EQ(delays.size(), 800u);  // 400 GEMMs per rank with a submitted time
  ASSERT_EQ(delays.size(), want.size());
  for (size_t i = 0; i < delays.size(); ++i) {
    EXPECT_EQ(delays[i].process, want[i].process);
    EXPECT_EQ(delays[i].delay_ns, want[i].delay_ns);
  }
  const auto a = interference(t, {}), b = interference(full, {});
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].signature, b[i].signature);
    EXPECT_EQ(a[i].alone, b[i].alone);
    EXPECT_EQ(a[i].overlapped, b[i].overlapped);
    EXPECT_EQ(a[i].median_alone_ns, b[i].median_alone_ns);
  }
  load_kernel_shapes(t);  // nothing left: a no-op
  EXPECT_EQ(t.shapes.size(), full.shapes.size());
}

TEST(DeferredLoad, AnalyzeCompletesTheLoad) {
  TempDir dir;
  const std::vector<std::string> files{write_rank(dir.path, 0)};
  Trace full = load(files);
  LoadOptions lo;
  lo.defer_kernel_shapes = true;
  Trace t = load(files, lo);
  const Report r = analyze(t, files, {}), want = analyze(full, files, {});
  EXPECT_TRUE(t.pending_shapes.empty());
  EXPECT_EQ(to_json(r), to_json(want));
}

TEST(DeferredLoad, ChangedFileIsRefusedAndTheTraceKept) {
  TempDir dir;
  const std::vector<std::string> files{write_rank(dir.path, 0), write_rank(dir.path, 1)};
  LoadOptions lo;
  lo.defer_kernel_shapes = true;
  Trace t = load(files, lo);
  const std::vector<int32_t> shape = t.activities.shape;
  { std::ofstream(files[1], std::ios::app) << "more"; }
  try {
    load_kernel_shapes(t);
    FAIL() << "a changed file was read";
  } catch (const c3::tracedb::ReadError& e) {
    EXPECT_NE(std::string(e.what()).find(files[1] + " changed since it was opened"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(t.pending_shapes.size(), 2u);
  EXPECT_EQ(t.activities.shape, shape);
  EXPECT_TRUE(t.shapes.empty());
  EXPECT_TRUE(t.launch_delays.empty());
}

TEST(DeferredLoad, CancelledReadLeavesTheTraceAsItWas) {
  TempDir dir;
  const std::vector<std::string> files{write_rank(dir.path, 0), write_rank(dir.path, 1)};
  LoadOptions lo;
  lo.defer_kernel_shapes = true;
  Trace t = load(files, lo);
  const std::vector<int32_t> shape = t.activities.shape;
  struct Cancelled {};
  lo.progress = [](int64_t, int64_t) { throw Cancelled{}; };
  EXPECT_THROW(load_kernel_shapes(t, lo), Cancelled);
  EXPECT_EQ(t.pending_shapes.size(), 2u);
  EXPECT_EQ(t.activities.shape, shape);
  EXPECT_TRUE(t.shapes.empty());
  // And it completes afterwards.
  load_kernel_shapes(t);
  EXPECT_TRUE(t.pending_shapes.empty());
  EXPECT_FALSE(t.shapes.empty());
}

}  // namespace

// Regression (issue 24, item 8): the loader left NVTX marks out, so the timeline showed none of
// a recording's 2,000 marks and search found none. They load as ranges of no duration; steps and
// --range windows, which need a duration, pass them over.
TEST(Load, NvtxMarksAreInstantsThatNoStepOrWindowTakes) {
  TempDir dir;
  const std::string path = (dir.path / "marks.sqlite").string();
  {
    auto w = c3::tracedb::Writer::create(path);
    c3::tracedb::ProcessRow p;
    p.id = 1;
    p.pid = 500;
    p.host = "node";
    p.command_line = "train";
    p.trace_clock = "CLOCK_MONOTONIC";
    w->insert(p);
    // One ProfilerStep range and 5 marks, one of them named like a step.
    auto range = [&](const char* kind, const std::string& name, int64_t s, int64_t e) {
      c3::tracedb::NvtxRangeRow g;
      g.process_id = 1;
      g.thread_id = 7;
      g.kind = kind;
      g.domain = "default";
      g.name = name;
      g.start_ns = s;
      g.end_ns = e;
      if (std::string(kind) == "push_pop") g.depth = 0;
      w->insert(g);
    };
    range("push_pop", "ProfilerStep#1", 1'000'000, 1'500'000);
    for (int i = 0; i < 4; ++i)
      range("mark", "checkpoint", 1'100'000 + i * 1000, 1'100'000 + i * 1000);
    range("mark", "ProfilerStep#2", 1'600'000, 1'600'000);
    w->close();
  }
  const Trace t = load({path});
  int marks = 0, ranges = 0;
  for (const Range& g : t.ranges) {
    if (g.start == g.end) {
      ++marks;
      EXPECT_FALSE(g.start_end);
    } else {
      ++ranges;
    }
  }
  EXPECT_EQ(marks, 5);
  EXPECT_EQ(ranges, 1);
  // The mark named like a step is no step.
  const auto summaries = summarize(t, {});
  ASSERT_EQ(summaries.size(), 1u);
  ASSERT_EQ(summaries[0].steps.size(), 1u);
  EXPECT_EQ(summaries[0].steps[0].name, "ProfilerStep#1");
}

// Issue 25: a stream's wait on an event recorded on another stream (the collector's sync row of
// type stream_wait_event and CUPTI's CUDA event record) becomes an edge from the recording
// stream's last operation launched before the record to the waiting stream's first one launched
// after the wait; the critical path follows it. A later record of the same event, after the wait,
// is not the one waited on.
TEST(Load, StreamWaitsJoinTheRecordingAndTheWaitingStream) {
  TempDir dir;
  const std::string path = (dir.path / "waits.sqlite").string();
  {
    auto w = c3::tracedb::Writer::create(path);
    c3::tracedb::ProcessRow p;
    p.id = 1;
    p.pid = 500;
    p.host = "node";
    p.command_line = "train";
    p.trace_clock = "CLOCK_MONOTONIC";
    w->insert(p);
    const int64_t name = w->intern("kernel");
    auto kernel = [&](int64_t correlation, int stream, int64_t s, int64_t e) {
      c3::tracedb::KernelRow k;
      k.process_id = 1;
      k.stream_id = stream;
      k.correlation_id = correlation;
      k.start_ns = s;
      k.end_ns = e;
      k.name_id = name;
      k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
      k.registers_per_thread = k.static_shared_bytes = k.dynamic_shared_bytes = 0;
      k.launch_type = "regular";
      w->insert(k);
    };
    auto record = [&](int64_t correlation, int stream) {
      c3::tracedb::CudaEventRow r;
      r.process_id = 1;
      r.stream_id = stream;
      r.correlation_id = correlation;
      r.cuda_event_id = 9;
      w->insert(r);
    };
    kernel(1, 7, 100, 300);  // A: before the record on stream 7
    kernel(2, 20, 50, 90);   // D: stream 20, launched before the wait
    record(3, 7);
    c3::tracedb::SyncRow y;
    y.process_id = 1;
    y.stream_id = 20;
    y.correlation_id = 4;
    y.start_ns = y.end_ns = 95;
    y.type = "stream_wait_event";
    y.cuda_event_id = 9;
    w->insert(y);
    kernel(5, 20, 300, 400);  // C: the first on stream 20 after the wait
    kernel(6, 7, 400, 500);   // B: stream 7, after the record
    record(7, 20);            // a later record of the event
    w->close();
  }
  const Trace t = load({path});
  ASSERT_EQ(t.stream_waits.size(), 1u);
  const StreamWait& sw = t.stream_waits[0];
  EXPECT_EQ(sw.from_stream, 7);
  EXPECT_EQ(sw.from_start, 100);
  EXPECT_EQ(sw.to_stream, 20);
  EXPECT_EQ(sw.to_start, 300);
  LoadOptions without;
  without.launch_calls = false;
  EXPECT_TRUE(load({path}, without).stream_waits.empty());
  // C's start waited for A's end: the path from 400 goes C, then A (not D, not idle).
  const std::vector<PathSegment> path_back = path_segments(t, 0, {0, 400});
  std::vector<int64_t> starts;
  for (const PathSegment& s : path_back) {
    if (s.row >= 0) starts.push_back(t.activities.start[static_cast<size_t>(s.row)]);
  }
  EXPECT_EQ(starts, (std::vector<int64_t>{300, 100}));
}
