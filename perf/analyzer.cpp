// Overlap + breakdown + per-collective metrics over 10 million activities (issue 4's target:
// under 3 s on one core), then the whole per-trace analysis (the pipeline's map and reduce), and
// the peak memory of it all (issue 10's target: at most 64 bytes per activity, peak RSS; the trace
// is freed before the reduce, as the pipeline frees each trace after its map), with the peak
// after each phase. The
// baseline in the same run is one streaming pass over the same columns (the least any metric must
// do); the ratio says how much the interval sweeps cost on top of it.
//
//   build/bin/c3_perf_analyzer [--activities N]   (default 10000000)
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/metrics/metrics.h"
#include "c3/analyzer/open/trace.h"
#include "c3/analyzer/summary/summary.h"
#include "c3/common/workers.h"
#include "cli.h"
#include "measure.h"

namespace {

using c3::perf::Clock;
using c3::perf::peak_rss_kb;
using c3::perf::seconds_since;
using namespace c3::analyzer;

// A training-like timeline per process: compute kernels back to back on one stream with small
// gaps, a collective on another stream under part of them, occasional copies.
Trace make_trace(int64_t n, int processes) {
  Trace t;
  for (int p = 0; p < processes; ++p) {
    Process pr;
    pr.pid = 1000 + p;
    pr.rank = p;
    t.processes.push_back(pr);
    Device d;
    d.process = static_cast<int16_t>(p);
    d.sm_count = 132;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.max_registers_per_sm = 65536;
    d.max_shared_per_sm = int64_t{228} * 1024;
    t.devices.push_back(d);
  }
  for (int i = 0; i < 190; ++i)
    t.names.push_back("void compute_kernel_" + std::to_string(i) + "<float>(float*)");
  for (const char* op : {"AllReduce", "AllGather", "ReduceScatter", "SendRecv"}) {
    t.names.push_back(std::string("ncclDevKernel_") + op +
                      "_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
  }
  t.names.push_back("Memcpy H2D");
  const auto comm_name = static_cast<int32_t>(t.names.size() - 5);
  const auto copy_name = static_cast<int32_t>(t.names.size() - 1);
  for (int i = 0; i < 64; ++i) {
    Collective c;
    c.op = i % 2 ? "AllReduce" : "AllGather";
    c.bytes = int64_t{1} << (16 + i % 12);
    c.nranks = 8;
    t.collectives.push_back(c);
  }
  for (int i = 0; i < 32; ++i)
    t.shapes.push_back({static_cast<uint32_t>(132 * (i + 1)), 256, 64, 0});
  t.activities.reserve(static_cast<size_t>(n));
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> dur(1000, 200000), gap(0, 5000);
  std::uniform_int_distribution<int32_t> name(0, 189);
  const int64_t per = n / processes;
  for (int p = 0; p < processes; ++p) {
    int64_t now = 0, comm_free = 0;
    for (int64_t k = 0; k < per; ++k) {
      const int r = static_cast<int>(k % 10);
      if (r < 7) {  // compute
        const int64_t d = dur(rng);
        const size_t i = t.activities.push(now, now + d, name(rng), 7, 0, static_cast<int16_t>(p),
                                           Kind::kernel, 0);
        t.activities.shape[i] = static_cast<int32_t>(k % 32);
        now += d + gap(rng);
      } else if (r < 9) {  // communication, overlapping the compute stream
        const int64_t s = std::max(now - dur(rng) / 2, comm_free), d = dur(rng) * 2;
        const size_t i = t.activities.push(s, s + d, comm_name + static_cast<int32_t>(k % 4), 8, 0,
                                           static_cast<int16_t>(p), Kind::kernel, 0);
        t.activities.collective[i] = static_cast<int32_t>(k % 64);
        comm_free = s + d;
      } else {  // a copy
        const int64_t d = dur(rng) / 4;
        t.activities.push(now, now + d, copy_name, 9, 0, static_cast<int16_t>(p), Kind::memcpy,
                          1 << 20);
      }
    }
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 10'000'000;
  if (!c3::perf::parse_count_option(argc, argv, argv[0], "--activities", n)) return 2;
  if (n < 1000) {
    std::fprintf(stderr, "c3_perf_analyzer: --activities must be at least 1000\n");
    return 2;
  }
  const long rss0 = peak_rss_kb();
  auto t0 = Clock::now();
  Trace t = make_trace(n, 8);
  const double gen = seconds_since(t0);
  long phase_peak[5] = {};  // after generating, sorting, the metrics, the map, the reduce
  phase_peak[0] = peak_rss_kb();
  t0 = Clock::now();
  t.activities.sort();
  classify(t, Rules::defaults());
  const double prep = seconds_since(t0);
  phase_peak[1] = peak_rss_kb();

  // Baseline: one pass over the columns, summing durations by class.
  t0 = Clock::now();
  int64_t sums[kClasses] = {};
  const Activities& a = t.activities;
  for (size_t i = 0; i < a.size(); ++i)
    sums[static_cast<size_t>(a.cls[i])] += a.end[i] - a.start[i];
  const double base = seconds_since(t0);

  // The metrics.
  t0 = Clock::now();
  const Breakdown all = overall(t);
  auto comm = comm_overlap(t, {-1, -1});
  const auto groups = collective_summary(t, comm);
  const double metrics = seconds_since(t0);
  phase_peak[2] = peak_rss_kb();
  const size_t comm_rows = comm.size();
  comm = {};  // the map below makes its own, a rank at a time
  // What `c3scope analyze` does per trace (the map: every summary number, interference and
  // contention included), then the reduce.
  t0 = Clock::now();
  const std::vector<RankSummary> ranks = summarize(t, {});
  const double map = seconds_since(t0);
  phase_peak[3] = peak_rss_kb();
  // As the pipeline does (pipeline.cpp map_input), the trace goes before the reduce: only the
  // summaries are left.
  const size_t activities = t.activities.size(), processes = t.processes.size();
  t = Trace{};
  c3::common::release_free_memory();
  t0 = Clock::now();
  const Report rep = reduce(ranks, {"generated"}, {});
  const double red = seconds_since(t0);
  const long rss1 = peak_rss_kb();
  phase_peak[4] = rss1;

  const double per_activity =
      static_cast<double>(rss1 - rss0) * 1024.0 / static_cast<double>(activities);
  std::printf(
      "%zu activities in %zu processes (generated in %.2f s; sorted and classified in %.2f s)\n",
      activities, processes, gen, prep);
  std::printf("baseline (one pass summing durations by class): %.3f s (checksum %lld)\n", base,
              static_cast<long long>(sums[0]) + static_cast<long long>(sums[1]));
  std::printf(
      "overlap + breakdown + per-collective metrics: %.3f s (%.1fM activities/s; overlap %.2f%%, "
      "%zu "
      "communication activities in %zu groups)\n",
      metrics, static_cast<double>(activities) / metrics / 1e6, all.overlap_pct, comm_rows,
      groups.size());
  std::printf(
      "ratio: the metrics cost %.1fx the baseline pass; target < 3 s for 10M activities: %s\n",
      metrics / base, metrics < 3.0 * static_cast<double>(n) / 1e7 ? "met" : "NOT met");
  std::printf(
      "the map (summarize: breakdowns, collectives, interference, contention per rank): %.3f s; "
      "reduce %.3f s (%zu interference rows)\n",
      map, red, rep.interference.size());
  std::printf(
      "memory: columns %zu bytes/activity; peak RSS grew %.1f MB = %.1f bytes/activity (target <= "
      "64)\n",
      Activities::bytes_per_row(), static_cast<double>(rss1 - rss0) / 1024.0, per_activity);
  const char* phases[5] = {"generated", "sorted", "metrics", "map", "reduce"};
  std::printf("peak RSS growth (MB) after:");
  for (int k = 0; k < 5; ++k)
    std::printf(" %s %.1f", phases[k], static_cast<double>(phase_peak[k] - rss0) / 1024.0);
  std::printf("\n");
  return 0;
}
