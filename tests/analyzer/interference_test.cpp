// Golden tests for interference (alone vs overlapped), contention (SM demand from occupancy,
// oversubscription, copy-engine sharing, launch queueing) and cross-rank matching, skew and
// clock alignment.
#include "c3/analyzer/metrics/interference.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "c3/analyzer/metrics/classify.h"

using namespace c3::analyzer;

namespace {

Trace base(int processes = 1) {
  Trace t;
  for (int p = 0; p < processes; ++p) {
    Process pr;
    pr.pid = 10 + p;
    pr.rank = p;
    t.processes.push_back(pr);
    Device d;
    d.process = static_cast<int16_t>(p);
    d.device = 0;
    d.sm_count = 100;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.max_registers_per_sm = 65536;
    d.max_shared_per_sm = int64_t{228} * 1024;
    d.memory_bandwidth = 1'000'000'000'000;  // 1 TB/s
    t.devices.push_back(d);
  }
  t.names = {"gemm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "Memcpy H2D", "small"};
  return t;
}

size_t kernel(Trace& t, int32_t name, int64_t s, int64_t e, uint32_t grid = 100,
              uint32_t block = 256, int process = 0, int stream = 7) {
  const size_t i =
      t.activities.push(s, e, name, stream, 0, static_cast<int16_t>(process), Kind::kernel, 0);
  KernelShape sh;
  sh.grid = grid;
  sh.block = block;
  sh.registers = 32;
  t.activities.shape[i] = t.add_shape(sh);
  return i;
}

}  // namespace

TEST(Interference, AloneVersusOverlapped) {
  Trace t = base();
  // 6 GEMMs alone (100 ns), 6 under communication (150 ns): +50%.
  int64_t at = 0;
  for (int i = 0; i < 6; ++i, at += 1000) kernel(t, 0, at, at + 100);
  for (int i = 0; i < 6; ++i, at += 1000) {
    kernel(t, 0, at, at + 150);
    kernel(t, 1, at, at + 150, 8, 512, 0, 8);  // the comm kernel covers it fully
  }
  // One GEMM only 10% overlapped: partial, in neither group.
  kernel(t, 0, at, at + 100);
  kernel(t, 1, at + 90, at + 200, 8, 512, 0, 8);
  t.activities.sort();
  classify(t, Rules::defaults());
  const auto rows = interference(t);
  const InterferenceRow* g = nullptr;
  for (const auto& r : rows) {
    if (r.signature == "gemm <<<100, 256>>>") g = &r;
  }
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->alone, 6);
  EXPECT_EQ(g->overlapped, 6);
  EXPECT_EQ(g->partial, 1);
  EXPECT_TRUE(g->enough);
  EXPECT_DOUBLE_EQ(g->median_alone_ns, 100);
  EXPECT_DOUBLE_EQ(g->median_overlapped_ns, 150);
  EXPECT_DOUBLE_EQ(g->slowdown, 0.5);
  EXPECT_DOUBLE_EQ(g->ci_low, 0.5) << "no spread: the interval is the point";
  EXPECT_DOUBLE_EQ(g->ci_high, 0.5);
  // Fewer samples than the minimum: no number.
  InterferenceOptions o;
  o.min_samples = 7;
  for (const auto& r : interference(t, o)) EXPECT_FALSE(r.enough) << r.signature;
}

TEST(Contention, OccupancyAndOversubscription) {
  Trace t = base();
  const Device& d = t.devices[0];
  // 256 threads, 32 registers: 8 blocks by threads (2048/256), by registers 65536/(32*32*8)...
  EXPECT_EQ(occupancy(d, 100, 256, 32, 0).blocks_per_sm, 8);
  EXPECT_DOUBLE_EQ(occupancy(d, 400, 256, 32, 0).sm_demand, 0.5);
  EXPECT_DOUBLE_EQ(occupancy(d, 10000, 256, 32, 0).sm_demand, 1.0);
  // 255 registers: (255*32 rounded to 256) = 8192 per warp, 8 warps fit: one 256-thread block.
  EXPECT_EQ(occupancy(d, 1, 256, 255, 0).blocks_per_sm, 1);
  // 100 KiB of shared memory per block: 2 per SM.
  EXPECT_EQ(occupancy(d, 1, 128, 32, int64_t{100} * 1024).blocks_per_sm, 2);
  EXPECT_EQ(occupancy(Device{}, 1, 128, 32, 0).sm_demand, 0.0) << "unknown device";
  // Two kernels each demanding 0.75 of the SMs overlap for 50 ns: oversubscribed 50 ns.
  kernel(t, 0, 0, 100, 600);
  kernel(t, 3, 50, 200, 600, 256, 0, 8);
  // Two H2D copies overlapping 20 ns: copy-engine sharing.
  size_t c1 = t.activities.push(300, 400, 2, 9, 0, 0, Kind::memcpy, 100'000);
  t.activities.push(380, 500, 2, 10, 0, 0, Kind::memcpy, 100'000);
  (void)c1;
  t.launch_delays = {{0, 0, 1000}, {0, 0, 3000}, {0, 0, 2000}};
  t.activities.sort();
  classify(t, Rules::defaults());
  const auto c = contention(t);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].kernels_with_demand, 2);
  EXPECT_EQ(c[0].oversubscribed_ns, 50);
  ASSERT_EQ(c[0].oversubscribed_kernels.size(), 2u);
  EXPECT_EQ(c[0].copy_overlap_ns, 20);
  ASSERT_EQ(c[0].copy_bandwidth_share.size(), 1u);
  EXPECT_EQ(c[0].copy_bandwidth_share[0].first, "H2D");
  // 100 kB in 100 ns = 1 TB/s (100%) and in 120 ns = 0.83 TB/s: median 91.7%.
  EXPECT_NEAR(c[0].copy_bandwidth_share[0].second, (1.0 + 100.0 / 120) / 2, 1e-9);
  EXPECT_EQ(c[0].queued_kernels, 3);
  EXPECT_DOUBLE_EQ(c[0].queue_median_ns, 2000);
  EXPECT_DOUBLE_EQ(c[0].queue_max_ns, 3000);
}

TEST(CrossRank, MatchSkewStragglersAndClockAlignment) {
  Trace t = base(3);
  t.processes[0].host = "a";
  t.processes[1].host = "a";  // same host as rank 0: same clock
  t.processes[2].host = "b";  // its clock is 1 ms ahead
  for (int64_t seq = 0; seq < 4; ++seq) {
    const int64_t base_ns = seq * 100'000;
    for (int p = 0; p < 3; ++p) {
      Collective c;
      c.process = static_cast<int16_t>(p);
      c.comm_id = "0xabc";
      c.seq = seq;
      c.op = "AllReduce";
      // Rank 1 arrives 5 us late each time; all end together.
      const int64_t arrive = base_ns + (p == 1 ? 5000 : 0);
      const int64_t shift = p == 2 ? 1'000'000 : 0;
      c.gpu_start = arrive + shift;
      c.gpu_end = base_ns + 20'000 + shift;
      t.collectives.push_back(c);
    }
  }
  Collective lonely;
  lonely.comm_id = "0xdef";
  lonely.seq = 0;
  lonely.gpu_start = 1;
  lonely.gpu_end = 2;
  t.collectives.push_back(lonely);
  const auto clocks = align_clocks(t);
  ASSERT_EQ(clocks.size(), 3u);
  EXPECT_EQ(clocks[0].how, "reference");
  EXPECT_EQ(clocks[1].how, "same host as the reference");
  EXPECT_EQ(clocks[2].offset_ns, -1'000'000);
  EXPECT_EQ(clocks[2].matched, 4);
  const CrossRank x = cross_rank(t);
  ASSERT_EQ(x.collectives.size(), 4u);
  EXPECT_EQ(x.unmatched, 1);
  for (const auto& m : x.collectives) {
    EXPECT_EQ(m.skew_ns, 5000);
    EXPECT_EQ(m.straggler, 1);
    EXPECT_EQ(m.ranks, 3);
  }
  ASSERT_EQ(x.ranks.size(), 3u);
  EXPECT_EQ(x.ranks[0].process, 1) << "the straggler first";
  EXPECT_EQ(x.ranks[0].straggler_count, 4);
  EXPECT_EQ(x.ranks[0].wait_ns, 0);
  for (size_t i = 1; i < 3; ++i) EXPECT_EQ(x.ranks[i].wait_ns, 4 * 5000);
}

// PyTorch traces carry epoch timestamps (~1.66e18 ns), where a double holds only every 256th
// nanosecond: the offset must still come out to the nanosecond (it was off by up to 128 ns).
TEST(CrossRank, ClockAlignmentIsExactWithEpochTimestamps) {
  Trace t = base(2);
  t.processes[0].host = "a";
  t.processes[1].host = "b";
  const int64_t epoch = 1'660'000'000'123'456'789;
  const int64_t skew = 7'000'037;  // rank 1's clock reads this much later
  for (int64_t seq = 0; seq < 5; ++seq) {
    for (int p = 0; p < 2; ++p) {
      Collective c;
      c.process = static_cast<int16_t>(p);
      c.comm_id = "0xabc";
      c.seq = seq;
      c.op = "AllReduce";
      c.gpu_start = epoch + seq * 100'003 + (p == 1 ? skew : 0);
      c.gpu_end = c.gpu_start + 20'011;
      t.collectives.push_back(c);
    }
  }
  const auto clocks = align_clocks(t);
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_EQ(clocks[1].offset_ns, -skew);
  EXPECT_EQ(clocks[1].matched, 5);
}

TEST(Contention, CopiesGroupedByHardwareChannel) {
  Trace t = base();
  // Two H2D copies overlapping 20 ns on different channels, two on channel 3 overlapping 30 ns.
  auto copy = [&](int64_t s, int64_t e, int32_t channel) {
    const size_t i = t.activities.push(s, e, 2, 9, 0, 0, Kind::memcpy, 1000);
    t.activities.shape[i] = channel;
  };
  copy(0, 100, 1);
  copy(80, 200, 2);
  copy(300, 400, 3);
  copy(370, 450, 3);
  t.activities.sort();
  classify(t, Rules::defaults());
  const auto c = contention(t);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].copy_overlap_ns, 30) << "only copies on one channel share an engine";
  ASSERT_EQ(c[0].copy_overlap_by_kind.size(), 1u);
  EXPECT_EQ(c[0].copy_overlap_by_kind[0].first, "H2D channel 3");
}

TEST(CrossRank, WallClockAnchorsWhenNoCollectiveIsShared) {
  Trace t = base(2);
  t.processes[0].host = "a";
  t.processes[1].host = "b";
  t.processes[0].anchor_trace_ns = 1000;
  t.processes[0].anchor_realtime_ns = 1'700'000'000'000'000'000;
  t.processes[1].anchor_trace_ns = 5000;
  t.processes[1].anchor_realtime_ns = 1'700'000'000'000'002'000;
  const auto clocks = align_clocks(t);
  EXPECT_EQ(clocks[1].how, "wall-clock anchors (no matched collective)");
  // realtime - trace: rank 1's clock reads 2000 - 4000 = -2000 ns relative to rank 0's.
  EXPECT_EQ(clocks[1].offset_ns, -2000);
  EXPECT_EQ(t.processes[1].offset_ns, -2000);
  // Anchors at the loader's bounds, 2^63 apart: not aligned, and no overflow (UBSan).
  const int64_t limit = int64_t{1} << 61;
  t.processes[0].anchor_trace_ns = -limit;
  t.processes[0].anchor_realtime_ns = limit;
  t.processes[1].anchor_trace_ns = limit;
  t.processes[1].anchor_realtime_ns = -limit;
  t.processes[1].offset_ns = 0;
  const auto far = align_clocks(t);
  EXPECT_EQ(far[1].offset_ns, 0);
  EXPECT_NE(far[1].how.find("not aligned"), std::string::npos) << far[1].how;
}

// Kernels oversubscribed for the same time are listed by name (issue 27: not in the order a
// hash map of name ids keeps), whatever their ids.
TEST(Contention, KernelsOfEqualOversubscribedTimeAreListedByName) {
  Trace t = base();
  t.names = {"zeta", "delta", "alpha", "mu"};
  // Four kernels demanding 0.75 of the SMs each, all running together from 0 to 100 ns.
  for (int32_t name = 0; name < 4; ++name) kernel(t, name, 0, 100, 600, 256, 0, 7 + name);
  t.activities.sort();
  classify(t, Rules::defaults());
  const auto c = contention(t);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].oversubscribed_ns, 100);
  std::vector<std::string> names;
  for (const auto& [name, ns] : c[0].oversubscribed_kernels) {
    EXPECT_EQ(ns, 100) << name;
    names.push_back(name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "delta", "mu", "zeta"}));
}
