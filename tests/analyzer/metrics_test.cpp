// Golden tests for the overlap and breakdown metrics (docs/metrics.md) on small hand-built traces,
// including the edge cases: zero-length activities, identical timestamps, nested and touching
// intervals, unsorted input, one class absent, many streams, several devices per process.
#include "c3/analyzer/metrics/metrics.h"

#include <gtest/gtest.h>

#include <random>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/metrics/interference.h"
#include "c3/analyzer/report/report.h"

using namespace c3::analyzer;

namespace {

// A trace of one or more processes; activities named so that the default rules classify them.
struct Builder {
  Trace t;
  explicit Builder(int processes = 1) {
    for (int p = 0; p < processes; ++p) {
      Process pr;
      pr.pid = 100 + p;
      pr.rank = p;
      t.processes.push_back(pr);
    }
  }
  int32_t name(const std::string& n) {
    for (size_t i = 0; i < t.names.size(); ++i) {
      if (t.names[i] == n) return static_cast<int32_t>(i);
    }
    t.names.push_back(n);
    return static_cast<int32_t>(t.names.size() - 1);
  }
  Builder& kernel(const std::string& n, int64_t s, int64_t e, int device = 0, int stream = 7,
                  int process = 0) {
    t.activities.push(s, e, name(n), stream, static_cast<int16_t>(device),
                      static_cast<int16_t>(process), Kind::kernel, 0);
    return *this;
  }
  Builder& copy(int64_t s, int64_t e, int device = 0, int process = 0) {
    t.activities.push(s, e, name("Memcpy DtoD (Device -> Device)"), 9, static_cast<int16_t>(device),
                      static_cast<int16_t>(process), Kind::memcpy, 1024);
    return *this;
  }
  Trace done() {
    t.activities.sort();
    classify(t, Rules::defaults());
    return t;
  }
};

const int kC = 1 << static_cast<int>(Class::compute);
const int kN = 1 << static_cast<int>(Class::communication);
const int kM = 1 << static_cast<int>(Class::memory);

void expect_invariant(const Breakdown& b) {
  // span = compute + exposed communication + exposed memcpy + idle + exposed other
  EXPECT_EQ(b.span, b.compute() + b.exposed_comm + b.exposed_memcpy + b.idle + b.exposed_other);
  EXPECT_EQ(b.non_compute, b.span - b.compute() - b.idle);
  int64_t masks = 0;
  for (int64_t v : b.by_mask) masks += v;
  EXPECT_EQ(masks, b.busy);
}

}  // namespace

TEST(Metrics, OverlapAndBreakdown) {
  // compute [0,100) and [200,260); comm [50,150); memcpy [140,210): partly under comm and
  // compute.
  Trace t = Builder()
                .kernel("gemm", 0, 100)
                .kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 150, 0, 8)
                .copy(140, 210)
                .kernel("gemm", 200, 260)
                .done();
  const Breakdown b = breakdown(t, {0, -1});
  EXPECT_EQ(b.span, 260);
  EXPECT_EQ(b.busy, 260);
  EXPECT_EQ(b.idle, 0);
  EXPECT_EQ(b.compute(), 160);
  EXPECT_EQ(b.comm(), 100);
  EXPECT_EQ(b.memory(), 70);
  EXPECT_EQ(b.overlap, 50);
  EXPECT_DOUBLE_EQ(b.overlap_pct, 50.0);
  EXPECT_EQ(b.exposed_comm, 50);
  EXPECT_EQ(b.exposed_memcpy, 50) << "[150,200): memory neither under compute nor under comm";
  EXPECT_EQ(b.non_compute, 100);
  EXPECT_EQ(b.by_mask[kC], 50 + 50);
  EXPECT_EQ(b.by_mask[kC | kN], 50);
  EXPECT_EQ(b.by_mask[kN], 40);
  EXPECT_EQ(b.by_mask[kN | kM], 10);
  EXPECT_EQ(b.by_mask[kM], 50);
  EXPECT_EQ(b.by_mask[kC | kM], 10);
  expect_invariant(b);
  EXPECT_EQ(mask_name(kC | kN), "COMPUTATION+COMMUNICATION");
}

TEST(Metrics, IdleNestedTouchingIdenticalAndZeroLength) {
  Trace t = Builder()
                .kernel("a", 100, 200)
                .kernel("a", 100, 200)        // identical
                .kernel("b", 120, 150, 0, 8)  // nested, another stream
                .kernel("c", 200, 250, 0, 9)  // touching
                .kernel("d", 400, 400)        // zero-length: no time, not in the span
                .kernel("e", 300, 350)
                .done();
  const Breakdown b = breakdown(t, {0, -1});
  EXPECT_EQ(b.first, 100);
  EXPECT_EQ(b.last, 350);
  EXPECT_EQ(b.span, 250);
  EXPECT_EQ(b.busy, 200);
  EXPECT_EQ(b.idle, 50);
  EXPECT_EQ(b.comm(), 0);
  EXPECT_EQ(b.overlap_pct, 0.0) << "no communication: 0, not NaN";
  EXPECT_EQ(b.activities, 6);
  expect_invariant(b);
}

TEST(Metrics, UnsortedInputGivesTheSameResult) {
  Builder a, z;
  a.kernel("gemm", 0, 10).kernel("ncclKernel_X", 5, 20).kernel("gemm", 30, 40);
  z.kernel("gemm", 30, 40).kernel("ncclKernel_X", 5, 20).kernel("gemm", 0, 10);
  const Breakdown x = breakdown(a.done(), {0, -1});
  const Breakdown y = breakdown(z.done(), {0, -1});
  EXPECT_EQ(x.span, y.span);
  EXPECT_EQ(x.overlap, y.overlap);
  EXPECT_EQ(x.by_mask, y.by_mask);
}

TEST(Metrics, DevicesAndProcesses) {
  // Process 0: device 0 compute [0,100), device 1 comm [50,150); process 1: comm only.
  Trace t = Builder(2)
                .kernel("gemm", 0, 100, 0)
                .kernel("ncclDevKernel_AllGather_RING_LL", 50, 150, 1)
                .kernel("ncclDevKernel_AllGather_RING_LL", 1000, 1100, 0, 7, 1)
                .done();
  // Per device: no overlap on either device alone.
  EXPECT_EQ(breakdown(t, {0, 0}).overlap, 0);
  EXPECT_EQ(breakdown(t, {0, 1}).overlap, 0);
  // The process: unions over its devices.
  const Breakdown p0 = breakdown(t, {0, -1});
  EXPECT_EQ(p0.span, 150);
  EXPECT_EQ(p0.overlap, 50);
  // Overall: sums over processes.
  const Breakdown all = overall(t);
  EXPECT_EQ(all.span, 150 + 100);
  EXPECT_EQ(all.comm(), 200);
  EXPECT_DOUBLE_EQ(all.overlap_pct, 25.0);
  // Per-collective overlap uses compute on the same device only.
  auto c = comm_overlap(t, {0, -1});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].overlapped, 0);
  EXPECT_EQ(collective_op(t, c[0].activity), "AllGather");
}

TEST(Metrics, WindowRestrictsEverything) {
  Trace t = Builder().kernel("gemm", 0, 100).kernel("ncclKernel_AllReduce_RING", 50, 150).done();
  const Intervals w{{60, 120}};
  const Breakdown b = breakdown(t, {0, -1}, &w);
  EXPECT_EQ(b.first, 60);
  EXPECT_EQ(b.last, 120);
  EXPECT_EQ(b.span, 60);
  EXPECT_EQ(b.compute(), 40);
  EXPECT_EQ(b.comm(), 60);
  EXPECT_EQ(b.overlap, 40);
  expect_invariant(b);
  const Intervals none{{500, 600}};
  EXPECT_EQ(breakdown(t, {0, -1}, &none).span, 0);
}

TEST(Metrics, PerCollectiveOverlapAndBandwidth) {
  Builder bl;
  bl.kernel("gemm", 0, 100).kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 150);
  Trace t = bl.t;
  Collective c;
  c.op = "AllReduce";
  c.bytes = int64_t{1} << 20;
  c.nranks = 8;
  t.collectives.push_back(c);
  t.activities.collective[1] = 0;
  t.activities.sort();
  classify(t, Rules::defaults());
  auto rows = comm_overlap(t, {0, -1});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].duration, 100);
  EXPECT_EQ(rows[0].overlapped, 50);
  EXPECT_DOUBLE_EQ(rows[0].pct(), 50.0);
  auto groups = collective_summary(t, rows);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].op, "AllReduce");
  EXPECT_EQ(groups[0].bucket_lo, int64_t{1} << 20);
  EXPECT_DOUBLE_EQ(groups[0].median_algbw, (1 << 20) / 100e-9);
  EXPECT_DOUBLE_EQ(groups[0].median_busbw, (1 << 20) / 100e-9 * 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor("AllGather", 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor("SendRecv", 4), 1.0);
  EXPECT_EQ(nccl_tests_size("AllGather", 100, 8), 800) << "NCCL's AllGather count is per rank";
  EXPECT_EQ(nccl_tests_size("AllReduce", 100, 8), 100);
}

// Issue 24: the bucket of 2^62 bytes doubled past int64 (a SIGSEGV in analyze, compare and the
// GUI). Every int64 has a bucket, an end and a label.
TEST(Metrics, SizeBucketsAtTheBoundaries) {
  constexpr int64_t kTop = int64_t{1} << 62;
  for (int64_t v : {INT64_MIN, int64_t{-1}, int64_t{0}}) {
    EXPECT_EQ(size_bucket_of(v), 0) << v;
    EXPECT_EQ(size_bucket(v), "size ?") << v;
  }
  EXPECT_EQ(size_bucket_end(0), 0);
  EXPECT_EQ(size_bucket_of(1), 1);
  EXPECT_EQ(size_bucket_of(3), 2);
  EXPECT_EQ(size_bucket_of((int64_t{1} << 20) + 1), int64_t{1} << 20);
  EXPECT_EQ(size_bucket_of(kTop - 1), kTop / 2);
  EXPECT_EQ(size_bucket_of(kTop), kTop);
  EXPECT_EQ(size_bucket_of(INT64_MAX), kTop);
  EXPECT_EQ(size_bucket_end(kTop / 2), kTop);
  EXPECT_EQ(size_bucket_end(kTop), INT64_MAX);
  EXPECT_EQ(size_bucket(1), "1B..2B");
  EXPECT_EQ(size_bucket(3 << 20), "2M..4M");
  EXPECT_EQ(size_bucket(kTop - 1), "2097152T..4194304T");
  EXPECT_EQ(size_bucket(kTop), "4194304T..8388608T");
  EXPECT_EQ(size_bucket(INT64_MAX), "4194304T..8388608T");
  // A summary's kTop bucket (collective_groups) ends at INT64_MAX.
  CollectiveStat s;
  s.op = "AllReduce";
  s.bucket = kTop;
  s.count = 1;
  const std::vector<CollectiveGroup> g = collective_groups({s});
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].bucket_lo, kTop);
  EXPECT_EQ(g[0].bucket_hi, INT64_MAX);
}

TEST(Classify, DefaultRulesFilesAndLinks) {
  const Rules r = Rules::defaults();
  EXPECT_EQ(r.classify("ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)", Kind::kernel),
            Class::communication);
  EXPECT_EQ(r.classify("void ncclKernel_AllGather(...)", Kind::kernel), Class::communication);
  EXPECT_EQ(r.classify("Memcpy HtoD (Pageable -> Device)", Kind::memcpy), Class::memory);
  EXPECT_EQ(r.classify("Memset (Device)", Kind::memset), Class::memory);
  EXPECT_EQ(r.classify("hipMemcpyAsync", Kind::kernel), Class::memory) << "memory before ^hip";
  EXPECT_EQ(r.classify("sm90_xmma_gemm_bf16bf16", Kind::kernel), Class::compute);
  EXPECT_EQ(r.classify("cudaStreamSynchronize", Kind::kernel), Class::other);
  const Rules f =
      Rules::parse("# mine\ncommunication ^my_allreduce\nmemory .*copy_kernel\n", "rules.txt");
  EXPECT_EQ(f.classify("my_allreduce_kernel", Kind::kernel), Class::communication);
  EXPECT_EQ(f.classify("void at::native::copy_kernel<float>", Kind::kernel), Class::memory);
  EXPECT_EQ(f.classify("ncclDevKernel_X", Kind::kernel), Class::communication)
      << "defaults still apply";
  const Rules off = Rules::parse("default off\ncompute .*\n", "r");
  EXPECT_EQ(off.classify("ncclDevKernel_X", Kind::kernel), Class::compute);
  for (const char* bad : {"computing .*", "compute", "memory (unclosed"}) {
    try {
      Rules::parse(std::string(bad) + "\n", "rules.txt");
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("rules.txt:1"), std::string::npos) << e.what();
    }
  }
  // A kernel the collector linked to an NCCL call is communication whatever its name.
  Builder b;
  b.kernel("oneRankReduce", 0, 10);
  b.t.collectives.push_back(Collective{});
  b.t.activities.collective[0] = 0;
  Trace t = b.done();
  EXPECT_EQ(t.activities.cls[0], Class::communication);
}

TEST(Report, RangesAndJson) {
  Builder bl;
  bl.kernel("gemm", 0, 100).kernel("ncclKernel_AllReduce_RING", 50, 150).kernel("gemm", 200, 300);
  Trace t = bl.done();
  t.ranges.push_back({0, 0, "pytorch", "ProfilerStep#1", 0, 160, 0});
  t.ranges.push_back({0, 0, "pytorch", "ProfilerStep#2", 160, 320, 0});
  t.ranges.push_back({0, 0, "pytorch", "forward", 0, 50, 1});
  AnalyzeOptions o;
  o.range = "ProfilerStep#[0-9]";
  const Report r = analyze(t, {"x.sqlite"}, o);
  EXPECT_EQ(r.matching_ranges, 2);
  ASSERT_EQ(r.ranges.size(), 2u);
  EXPECT_EQ(r.ranges[0].b.overlap, 50);
  EXPECT_EQ(r.ranges[1].b.compute(), 100);
  // Issue 13: over ranges the span is the time inside them (0..320), not first to last
  // activity (0..300); idle is what the kernels leave of it.
  EXPECT_EQ(r.processes[0].b.span, 320);
  EXPECT_EQ(r.processes[0].b.idle, 320 - 250);
  EXPECT_EQ(r.ranges[1].b.span, 160);
  EXPECT_EQ(r.ranges[1].b.idle, 60);
  // No GPU work in a range: its span and idle are still its length.
  Trace cpu = Builder().done();
  cpu.processes.resize(1);
  cpu.ranges.push_back({0, 0, "pytorch", "ProfilerStep#1", 1000, 5000, 0});
  const Report rc = analyze(cpu, {"cpu.json"}, o);
  ASSERT_EQ(rc.ranges.size(), 1u);
  EXPECT_EQ(rc.ranges[0].b.span, 4000);
  EXPECT_EQ(rc.ranges[0].b.idle, 4000);
  const std::string j = to_json(r);
  for (const char* key : {"\"schema\": \"c3scope-analyze/1\"", "\"span_ns\"", "\"idle_ns\"",
                          "\"compute_ns\"", "\"comm_ns\"", "\"overlap_ns\"", "\"overlap_pct\"",
                          "\"exposed_comm_ns\"", "\"exposed_memcpy_ns\"", "\"rank\": 0"}) {
    EXPECT_NE(j.find(key), std::string::npos) << key;
  }
  AnalyzeOptions bad;
  bad.range = "([";
  EXPECT_THROW(analyze(t, {}, bad), std::invalid_argument);
  const std::string csv = collectives_csv(t, r);
  EXPECT_EQ(csv.substr(0, 10), "rank,pid,d");
  EXPECT_NE(csv.find("AllReduce"), std::string::npos);
}

// window_breakdowns (the steps' breakdowns) reads only the rows near each window; it must give
// exactly breakdown() over each window: random traces with several devices, long kernels that
// span many windows, zero-length rows and windows touching rows' ends.
TEST(Breakdown, WindowsEqualOneBreakdownPerWindow) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 30; ++trial) {
    Builder b(2);
    std::uniform_int_distribution<int64_t> at(0, 100000), len(0, 2000);
    for (int i = 0; i < 400; ++i) {
      const int64_t s = at(rng);
      const int64_t e = s + (i % 50 == 0 ? 40000 : len(rng));
      const int dev = static_cast<int>(rng() % 3);
      const int proc = static_cast<int>(rng() % 2);
      switch (rng() % 3) {
        case 0:
          b.kernel("gemm", s, e, dev, 7, proc);
          break;
        case 1:
          b.kernel("ncclDevKernel_AllReduce", s, e, dev, 8, proc);
          break;
        default:
          b.copy(s, e, dev, proc);
      }
    }
    const Trace t = b.done();
    std::vector<Interval> windows;
    for (int64_t w = 0; w < 110000; w += 7000) windows.push_back({w, w + 5000 + (w % 3) * 1000});
    windows.push_back({50000, 50000});  // empty
    for (int p = 0; p < 2; ++p) {
      const std::vector<Breakdown> got = window_breakdowns(t, p, windows);
      ASSERT_EQ(got.size(), windows.size());
      for (size_t k = 0; k < windows.size(); ++k) {
        const Intervals w{windows[k]};
        const Breakdown want = breakdown(t, {p, -1}, &w);
        EXPECT_EQ(got[k].activities, want.activities) << trial << " " << k;
        EXPECT_EQ(got[k].span, want.span);
        EXPECT_EQ(got[k].busy, want.busy);
        EXPECT_EQ(got[k].time, want.time);
        EXPECT_EQ(got[k].overlap, want.overlap);
        EXPECT_EQ(got[k].exposed_memcpy, want.exposed_memcpy);
        EXPECT_EQ(got[k].by_mask, want.by_mask);
      }
    }
  }
}
