// The simulated node's engine on a million operations (issue: "the sim handles 1 million
// operations in under 5 seconds on one core"). Two workloads in the same run:
//   baseline: one stream on one GPU, one kernel at a time (no sharing: the engine's fixed cost
//             per operation);
//   C3 mix:   an 8-GPU H100 node, each GPU with a compute stream (GEMM chunks, triads) and a
//             comm stream (8-rank AllReduces, copy-engine copies), all competing for SMs, HBM,
//             links and copy engines.
// Prints operations per second for each, the mix's cost per operation relative to the baseline,
// and the time the mix needs for 1 million operations.
//
//   build/bin/c3_perf_sim [--ops N]   (default 1000000)
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "c3/sim/model/cost.h"
#include "c3/sim/model/engine.h"
#include "c3/sim/model/spec.h"
#include "cli.h"
#include "measure.h"

namespace {

using c3::perf::Clock;
using c3::perf::seconds_since;
namespace sim = c3::sim::model;

struct Result {
  int64_t ops = 0;
  double seconds = 0;
  double simulated_ns = 0;
};

// The host launches ahead of the GPUs by at most this many operations per stream, as a real
// launch queue would; the engine is advanced as launches go.
constexpr int kQueueDepth = 64;

Result baseline(int64_t ops) {
  const sim::NodeSpec spec = sim::preset("h100", 1);
  sim::Engine e(spec);
  const sim::StreamId s = e.add_stream(0, 0);
  const sim::PartDemand k = sim::triad(spec.gpu, 0, int64_t{1} << 20);
  const auto t0 = Clock::now();
  double host = 0;
  std::vector<sim::OpId> ids;
  ids.reserve(kQueueDepth);
  for (int64_t i = 0; i < ops; ++i) {
    sim::OpDesc d;
    d.name = "triad";
    d.parts = {k};
    const sim::OpId id = e.submit(std::move(d), s, host);
    host += 2000;
    if (i % kQueueDepth == kQueueDepth - 1) host = std::max(host, e.run_until_done(id));
  }
  Result r;
  r.simulated_ns = e.run_until_idle();
  r.seconds = seconds_since(t0);
  r.ops = e.completed();
  return r;
}

Result c3_mix(int64_t ops) {
  constexpr int kGpus = 8;
  const sim::NodeSpec spec = sim::preset("h100", kGpus);
  const sim::GpuSpec& g = spec.gpu;
  sim::Engine e(spec);
  std::vector<sim::StreamId> comp, comm;
  for (int gpu = 0; gpu < kGpus; ++gpu) {
    comp.push_back(e.add_stream(gpu, 0));
    comm.push_back(e.add_stream(gpu, 1));
  }
  std::vector<int> ranks(kGpus);
  for (int gpu = 0; gpu < kGpus; ++gpu) ranks[static_cast<size_t>(gpu)] = gpu;
  const auto t0 = Clock::now();
  double host = 0;
  int64_t issued = 0;
  sim::OpId last = 0;
  for (int64_t step = 0; issued < ops; ++step) {
    for (int gpu = 0; gpu < kGpus && issued < ops; ++gpu) {
      sim::OpDesc d;
      d.name = step % 4 == 3 ? "triad" : "gemm";
      d.parts = {step % 4 == 3 ? sim::triad(g, gpu, int64_t{64} << 20)
                               : sim::gemm(g, gpu, 2048, 8192, 8192, sim::Precision::bf16)};
      last = e.submit(std::move(d), comp[static_cast<size_t>(gpu)], host);
      host += 2000;
      ++issued;
    }
    if (step % 2 == 1) {
      // One collective: a part per rank, each enqueued on that GPU's comm stream.
      sim::CollectiveCost c = sim::collective(g, spec.gpu.topology, sim::Collective::allreduce,
                                              ranks, int64_t{32} << 20, 0, false);
      const sim::OpId id = e.create(std::move(c.desc));
      for (int gpu = 0; gpu < kGpus; ++gpu) {
        e.enqueue(id, gpu, comm[static_cast<size_t>(gpu)], host);
        host += 2000;
      }
      issued += kGpus;
    } else {
      for (int gpu = 0; gpu < kGpus && issued < ops; ++gpu) {
        sim::OpDesc d;
        d.name = "memcpy";
        d.parts = {sim::dma_copy(g, spec.gpu.topology, gpu, int64_t{16} << 20)};
        e.submit(std::move(d), comm[static_cast<size_t>(gpu)], host);
        host += 2000;
        ++issued;
      }
    }
    if (step % (kQueueDepth / 4) == 0) host = std::max(host, e.run_until_done(last));
  }
  Result r;
  r.simulated_ns = e.run_until_idle();
  r.seconds = seconds_since(t0);
  r.ops = issued;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t ops = 1000000;
  if (!c3::perf::parse_count_option(argc, argv, argv[0], "--ops", ops)) return 2;
  if (ops < 1000) {
    std::fprintf(stderr, "c3_perf_sim: --ops %lld: at least 1000\n", static_cast<long long>(ops));
    return 2;
  }
  const Result b = baseline(ops);
  const Result m = c3_mix(ops);
  const double b_rate = static_cast<double>(b.ops) / b.seconds;
  const double m_rate = static_cast<double>(m.ops) / m.seconds;
  std::printf(
      "baseline (1 stream, no sharing): %lld ops in %.3f s: %.0f ops/s (%.1f ms simulated)\n",
      static_cast<long long>(b.ops), b.seconds, b_rate, b.simulated_ns / 1e6);
  std::printf(
      "C3 mix (8 GPUs, GEMM/triad + AllReduce/DMA): %lld ops in %.3f s: %.0f ops/s (%.1f ms "
      "simulated)\n",
      static_cast<long long>(m.ops), m.seconds, m_rate, m.simulated_ns / 1e6);
  std::printf(
      "ratio: the C3 mix costs %.2fx the baseline per operation; 1M mixed operations take "
      "%.2f s (target < 5 s on one core)\n",
      b_rate / m_rate, 1e6 / m_rate);
  return 0;
}
