// Invariants of the simulated node (docs/sim-model.md): an operation alone takes its roofline
// time; sharing a bottleneck slows each sharer by the same factor; resources that are not shared
// do not interfere; priorities and partitions divide SMs as documented; runs are bit-identical.
#include "c3/sim/model/engine.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "c3/sim/model/cost.h"

using namespace c3::sim::model;

namespace {

NodeSpec node(int gpus = 2) {
  return preset("h100", gpus);
}

OpDesc one(const PartDemand& d, const std::string& name = "op") {
  OpDesc o;
  o.name = name;
  o.parts.push_back(d);
  return o;
}

// Runs the ops, each on its own stream of GPU 0 (or the given streams), launched at t = 0, and
// returns each op's duration on the GPU (end - ready).
struct Timeline {
  std::vector<double> ready, end;
};

Timeline run_concurrently(const NodeSpec& n, const std::vector<OpDesc>& ops,
                          std::vector<int> priorities = {}) {
  Engine e(n);
  Timeline r;
  r.ready.resize(ops.size());
  r.end.resize(ops.size());
  std::vector<OpId> ids;
  e.on_complete([&](const CompletedOp& c) {
    r.ready[static_cast<size_t>(c.id)] = c.parts[0].ready;
    r.end[static_cast<size_t>(c.id)] = c.parts[0].end;
  });
  for (size_t i = 0; i < ops.size(); ++i) {
    int prio = priorities.empty() ? 0 : priorities[i];
    StreamId s = e.add_stream(ops[i].parts[0].gpu, prio);
    ids.push_back(e.submit(ops[i], s, 0));
  }
  e.run_until_idle();
  return r;
}

double dur(const Timeline& r, size_t i) {
  return r.end[i] - r.ready[i];
}

}  // namespace

TEST(SimEngine, AnOperationAloneTakesItsRooflineTime) {
  const NodeSpec n = node();
  const GpuSpec& g = n.gpu;
  for (const PartDemand& d :
       {gemm(g, 0, 8192, 8192, 8192, Precision::bf16), triad(g, 0, int64_t{1} << 30),
        fma_loop(g, 0, 500000), dma_copy(g, n.gpu.topology, 0, int64_t{1} << 30),
        sm_copy(g, 0, int64_t{1} << 30, 32)}) {
    Timeline r = run_concurrently(n, {one(d)});
    EXPECT_NEAR(dur(r, 0), alone_ns(g, d), 1e-6 * alone_ns(g, d));
    EXPECT_DOUBLE_EQ(r.ready[0], g.launch_latency_ns) << "starts one launch latency after launch";
  }
  // The roofline itself: a big bf16 GEMM is compute bound at the achievable tensor rate, the
  // triad memory bound at the achievable HBM bandwidth.
  const double gemm_ns = alone_ns(g, gemm(g, 0, 8192, 8192, 8192, Precision::bf16));
  EXPECT_NEAR(gemm_ns, 2.0 * 8192.0 * 8192 * 8192 / (g.bf16_flops * g.gemm_efficiency) * 1e9, 1.0);
  const double triad_ns = alone_ns(g, triad(g, 0, int64_t{1} << 30));
  EXPECT_NEAR(triad_ns, 3.0 * (1 << 30) / (g.hbm_bytes_per_s * g.hbm_efficiency) * 1e9, 1.0);
}

TEST(SimEngine, TwoIdenticalBandwidthBoundKernelsEachTakeAboutTwiceAsLong) {
  // Kernels that leave room on each SM for the other's CTAs run together and split HBM.
  const NodeSpec n = node();
  PartDemand t = triad(n.gpu, 0, int64_t{512} << 20, 0.5);
  Timeline r = run_concurrently(n, {one(t, "a"), one(t, "b")});
  const double alone = alone_ns(n.gpu, t);
  EXPECT_NEAR(dur(r, 0) / alone, 2.0, 0.02);
  EXPECT_NEAR(dur(r, 1) / alone, 2.0, 0.02);
  // Kernels that fill the SMs cannot share them: the second starts when the first ends.
  PartDemand full = triad(n.gpu, 0, int64_t{512} << 20);
  Timeline s = run_concurrently(n, {one(full, "a"), one(full, "b")});
  EXPECT_NEAR(dur(s, 0) / alone, 1.0, 0.01);
  EXPECT_NEAR(dur(s, 1) / alone, 1.0, 0.01);
  EXPECT_DOUBLE_EQ(s.ready[1], s.end[0]);
}

TEST(SimEngine, DmaCopyAndComputeBoundKernelBarelySlowEachOther) {
  const NodeSpec n = node();
  PartDemand copy = dma_copy(n.gpu, n.gpu.topology, 0, int64_t{1} << 30);
  PartDemand fma = fma_loop(n.gpu, 0, alone_ns(n.gpu, copy));
  Timeline r = run_concurrently(n, {one(fma, "fma"), one(copy, "copy")});
  EXPECT_LT(dur(r, 0) / alone_ns(n.gpu, fma), 1.02);
  EXPECT_LT(dur(r, 1) / alone_ns(n.gpu, copy), 1.02);
}

TEST(SimEngine, SmBasedCopySlowsComputeMoreThanDmaCopy) {
  // The DMA papers' point: moving the same bytes with SMs takes SMs from compute. The copy is
  // launched first, so it holds its SMs when the GEMM arrives.
  const NodeSpec n = node();
  const int64_t bytes = int64_t{1} << 30;
  PartDemand g = gemm(n.gpu, 0, 8192, 8192, 8192, Precision::bf16);
  Timeline with_dma = run_concurrently(n, {one(dma_copy(n.gpu, n.gpu.topology, 0, bytes)), one(g)});
  Timeline with_sm = run_concurrently(n, {one(sm_copy(n.gpu, 0, bytes, 32)), one(g)});
  const double alone = alone_ns(n.gpu, g);
  EXPECT_LT(dur(with_dma, 1) / alone - 1, 0.01);
  EXPECT_GT(dur(with_sm, 1) / alone - 1, 0.05);
  // A same-GPU cudaMemcpyAsync is a copy kernel on every SM: the GEMM waits for it.
  Timeline with_d2d = run_concurrently(n, {one(runtime_d2d_copy(n.gpu, 0, bytes)), one(g)});
  EXPECT_DOUBLE_EQ(with_d2d.ready[1], with_d2d.end[0]);
}

TEST(SimEngine, CollectiveHoldsSmsWhileWaitingAndEndsTogetherOnEveryRank) {
  const NodeSpec n = node(2);
  CollectiveCost ar = collective(n.gpu, n.gpu.topology, Collective::allreduce, {0, 1},
                                 int64_t{256} << 20, 0, false);
  Engine e(n);
  StreamId s0 = e.add_stream(0, 0), s1 = e.add_stream(1, 0);
  std::vector<PartTiming> parts;
  e.on_complete([&](const CompletedOp& c) { parts = c.parts; });
  OpId id = e.create(ar.desc);
  e.enqueue(id, 0, s0, 0);
  e.enqueue(id, 1, s1, 100000);  // rank 1 arrives 100 us late
  double end = e.run_until_done(id);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_DOUBLE_EQ(parts[0].end, parts[1].end);
  EXPECT_DOUBLE_EQ(end, parts[0].end);
  EXPECT_NEAR(parts[1].ready - parts[0].ready, 100000, 1e-6);
  EXPECT_NEAR(end - parts[1].ready, ar.alone_ns, 1e-6 * ar.alone_ns);
}

TEST(SimEngine, SameStreamRunsInOrderAndEventsOrderStreams) {
  const NodeSpec n = node(1);
  Engine e(n);
  StreamId a = e.add_stream(0, 0), b = e.add_stream(0, 0);
  PartDemand k = fma_loop(n.gpu, 0, 10000);
  std::vector<CompletedOp> done;
  e.on_complete([&](const CompletedOp& c) { done.push_back(c); });
  OpId first = e.submit(one(k, "first"), a, 0);
  OpId second = e.submit(one(k, "second"), a, 0);
  EventId ev = e.record(a, 0);
  e.wait(b, ev, 0);
  OpId third = e.submit(one(k, "third"), b, 0);
  e.run_until_idle();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].id, first);
  EXPECT_EQ(done[1].id, second);
  EXPECT_EQ(done[2].id, third);
  EXPECT_GE(done[1].parts[0].ready, done[0].parts[0].end);
  EXPECT_GE(done[2].parts[0].ready, done[1].parts[0].end);
  EXPECT_DOUBLE_EQ(e.event_time(ev), done[1].parts[0].end);
}

TEST(SimEngine, SmsGoByPriorityThenArrivalWithoutPreemptionAndPartitionsIsolate) {
  const NodeSpec n = node(2);
  CollectiveCost ar = collective(n.gpu, n.gpu.topology, Collective::allreduce, {0, 1},
                                 int64_t{512} << 20, 8, false);
  PartDemand g = gemm(n.gpu, 0, 16384, 8192, 8192, Precision::bf16);
  const double gemm_alone = alone_ns(n.gpu, g);
  struct Ends {
    double gemm, comm;
  };
  // The GEMM is launched at 0; the collective at `comm_at` with `comm_priority`.
  auto run = [&](int comm_priority, double comm_at, bool partition) {
    Engine e(n);
    int compute_part = -1;
    if (partition) compute_part = e.add_partition(0, n.gpu.sms - ar.desc.parts[0].sm_demand);
    StreamId sc = e.add_stream(0, 0, compute_part);
    StreamId s0 = e.add_stream(0, comm_priority), s1 = e.add_stream(1, comm_priority);
    Ends r{};
    e.on_complete(
        [&](const CompletedOp& c) { (c.desc->name == "gemm" ? r.gemm : r.comm) = c.parts[0].end; });
    e.submit(one(g, "gemm"), sc, 0);
    OpId id = e.create(ar.desc);
    e.enqueue(id, 0, s0, comm_at);
    e.enqueue(id, 1, s1, comm_at);
    e.run_until_idle();
    return r;
  };
  const double lat = n.gpu.launch_latency_ns;
  // Equal priority, launched together: the GEMM came first, takes every SM, and the
  // collective waits for it.
  Ends eq = run(0, 0, false);
  EXPECT_NEAR(eq.gemm, lat + gemm_alone, 1e-6 * gemm_alone);
  EXPECT_NEAR(eq.comm, eq.gemm + ar.alone_ns, 1e-6 * eq.comm);
  // Higher priority, launched together: the collective is served first and keeps its SMs;
  // the GEMM runs on the rest meanwhile.
  Ends hi = run(1, 0, false);
  EXPECT_NEAR(hi.comm, lat + ar.alone_ns, 1e-6 * hi.comm);
  EXPECT_GT(hi.gemm, eq.gemm);
  // Higher priority, launched once the GEMM runs: priorities do not preempt, it waits.
  Ends late = run(1, 100000, false);
  EXPECT_NEAR(late.comm, eq.comm, 1e-6 * eq.comm);
  // A partition of its own isolates the collective: both run from the start.
  Ends part = run(0, 0, true);
  EXPECT_NEAR(part.comm, lat + ar.alone_ns, 1e-6 * part.comm);
  EXPECT_GT(part.gemm, eq.gemm);
  EXPECT_LT(part.gemm, eq.comm);
}

TEST(SimEngine, ResultsAreBitIdenticalAcrossRuns) {
  auto once = [] {
    const NodeSpec n = node(4);
    Engine e(n);
    std::vector<StreamId> comp, comm;
    for (int g = 0; g < 4; ++g) {
      comp.push_back(e.add_stream(g, 0));
      comm.push_back(e.add_stream(g, 1));
    }
    std::vector<double> ends;
    e.on_complete([&](const CompletedOp& c) {
      for (const auto& p : c.parts) ends.push_back(p.end);
    });
    for (int it = 0; it < 20; ++it) {
      for (int g = 0; g < 4; ++g) {
        e.submit(one(gemm(n.gpu, g, 4096 + 128 * it, 8192, 4096, Precision::bf16)),
                 comp[static_cast<size_t>(g)], it * 1000.0);
      }
      CollectiveCost ar = collective(n.gpu, n.gpu.topology, Collective::allreduce, {0, 1, 2, 3},
                                     (int64_t{1} << 20) << (it % 8), 0, false);
      OpId id = e.create(ar.desc);
      for (int g = 0; g < 4; ++g)
        e.enqueue(id, g, comm[static_cast<size_t>(g)], it * 1000.0 + g * 7.0);
    }
    e.run_until_idle();
    return ends;
  };
  std::vector<double> a = once(), b = once();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint64_t>(a[i]), std::bit_cast<uint64_t>(b[i])) << i;
}

TEST(SimCost, CollectiveShapes) {
  const NodeSpec n = node(8);
  std::vector<int> ranks = {0, 1, 2, 3, 4, 5, 6, 7};
  const int64_t size = int64_t{1} << 30;
  auto ar = collective(n.gpu, n.gpu.topology, Collective::allreduce, ranks, size, 0, false);
  EXPECT_EQ(ar.algorithm, Algorithm::ring) << "large AllReduce: ring";
  EXPECT_DOUBLE_EQ(ar.desc.parts[0].link_out_bytes, 2.0 * 7 / 8 * size);
  auto ag = collective(n.gpu, n.gpu.topology, Collective::allgather, ranks, size, 0, false);
  EXPECT_DOUBLE_EQ(ag.desc.parts[0].link_out_bytes, 7.0 / 8 * size);
  auto small = collective(n.gpu, n.gpu.topology, Collective::allreduce, ranks, 1024, 0, false);
  EXPECT_EQ(small.algorithm, Algorithm::tree) << "latency-bound AllReduce: tree";
  auto one_rank = collective(n.gpu, n.gpu.topology, Collective::allreduce, {0}, size, 0, true);
  EXPECT_EQ(one_rank.alone_ns, 0.0);
  // Bus bandwidth of a large ring AllReduce approaches the achievable link bandwidth.
  const double busbw = static_cast<double>(size) / (ar.alone_ns * 1e-9) * 2 * 7 / 8;
  EXPECT_NEAR(busbw / n.gpu.link_total_bytes_per_s(), 1.0, 0.05);
}

// Grouped Send/Recv (issue 13): a rank's sends and receives of one group are one kernel. A ring
// shift over 4 GPUs is one op with a part per rank, each sending and receiving S; links are full
// duplex, so it takes what one direction alone takes, and it runs to the end with every part on
// one stream per GPU (issued one transfer at a time, the sends waited in a cycle).
TEST(SimCost, GroupedSendRecvIsOneKernelPerRank) {
  const NodeSpec n = node(4);
  const int64_t size = int64_t{64} << 20;
  const auto one_way =
      collective(n.gpu, n.gpu.topology, Collective::sendrecv, {0, 1}, size, 0, false);
  const auto single = point_to_point(n.gpu, n.gpu.topology, {0, 1}, {{0, 1, size}}, 0);
  ASSERT_EQ(one_way.desc.parts.size(), 2u);
  EXPECT_DOUBLE_EQ(one_way.alone_ns, single.alone_ns) << "a lone Send/Recv is one transfer";
  EXPECT_DOUBLE_EQ(one_way.desc.parts[0].link_out_bytes, static_cast<double>(size));
  EXPECT_DOUBLE_EQ(one_way.desc.parts[0].link_in_bytes, 0.0);
  EXPECT_DOUBLE_EQ(one_way.desc.parts[1].link_in_bytes, static_cast<double>(size));
  EXPECT_DOUBLE_EQ(one_way.desc.parts[1].sm_driven_bytes, 0.0);
  const std::vector<Transfer> ring = {{0, 1, size}, {1, 2, size}, {2, 3, size}, {3, 0, size}};
  const auto shift = point_to_point(n.gpu, n.gpu.topology, {0, 1, 2, 3}, ring, 0);
  ASSERT_EQ(shift.desc.parts.size(), 4u);
  for (const PartDemand& d : shift.desc.parts) {
    EXPECT_DOUBLE_EQ(d.link_out_bytes, static_cast<double>(size));
    EXPECT_DOUBLE_EQ(d.link_in_bytes, static_cast<double>(size));
    EXPECT_DOUBLE_EQ(d.hbm_bytes, 2.0 * static_cast<double>(size));
  }
  EXPECT_DOUBLE_EQ(shift.alone_ns, one_way.alone_ns);
  // In the engine: one stream per GPU, the parts enqueued in rank order; it completes on every
  // rank at once, in its alone time.
  Engine e(n);
  std::vector<PartTiming> parts;
  e.on_complete([&](const CompletedOp& c) { parts = c.parts; });
  const OpId id = e.create(shift.desc);
  for (int r = 0; r < 4; ++r) e.enqueue(id, r, e.add_stream(r, 0), 0);
  const double end = e.run_until_done(id);
  ASSERT_EQ(parts.size(), 4u);
  for (const PartTiming& p : parts) EXPECT_DOUBLE_EQ(p.end, end);
  EXPECT_NEAR(end - parts[0].ready, shift.alone_ns, 1e-6 * shift.alone_ns);
  // A send to itself is a copy within the GPU: read and written once, no link.
  const auto self = point_to_point(n.gpu, n.gpu.topology, {2}, {{0, 0, size}}, 0);
  EXPECT_DOUBLE_EQ(self.desc.parts[0].hbm_bytes, 2.0 * static_cast<double>(size));
  EXPECT_DOUBLE_EQ(self.desc.parts[0].link_out_bytes, 0.0);
  EXPECT_THROW(point_to_point(n.gpu, n.gpu.topology, {0, 1}, {{0, 2, size}}, 0),
               std::invalid_argument);
}

TEST(SimPresets, KnownAndUnknown) {
  for (const auto& name : preset_names()) {
    NodeSpec n = preset(name, 8);
    EXPECT_GT(n.gpu.sms, 0) << name;
    EXPECT_GT(alone_ns(n.gpu, gemm(n.gpu, 0, 4096, 4096, 4096, Precision::bf16)), 0) << name;
  }
  EXPECT_THROW(preset("h900", 2), std::invalid_argument);
  EXPECT_THROW(preset("h100", 0), std::invalid_argument);
}
