// c3bench results as the analyzer holds them (Trace::bench): the metrics of each case and the
// configuration it ran, typed. The loader fills them from bench_result's typed columns (schema
// v3; an older trace gets them from its labels when tracedb opens it, so nothing here or above
// parses labels). The label stays for display and for matching results across traces.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "c3/common/bench_knobs.h"

namespace c3::analyzer {

// Stream priorities of a case and which operation it launches first, as c3bench names them
// (common::stream_priority_name, common::launch_order_name).
using BenchPriority = common::StreamPriority;
using BenchOrder = common::LaunchOrder;

// The configuration of one case (bench_result's C3_BENCH_CONFIG_COLUMNS).
struct BenchConfig {
  // False when it is not known: a row of an older trace whose label could not be read, or a
  // result read from a summary or from c3bench's JSON (they carry the label only).
  bool known = false;
  // The compute operation: its name as c3bench writes it ("gemm:8192x8192x8192:bf16"), kind
  // ("gemm", "triad", "fma") and size; empty names and kind: none.
  std::string compute, compute_kind, compute_dtype;
  int64_t gemm_m = 0, gemm_n = 0, gemm_k = 0;  // gemm
  int64_t compute_bytes = 0;                   // triad: bytes per array
  int64_t compute_target_ns = 0;               // fma: its time alone
  // The communication: name ("allreduce:64M"), kind ("allreduce", ..., "sm_copy") and message
  // size S as nccl-tests counts it; empty names and kind, 0 bytes: none.
  std::string comm, comm_kind, comm_dtype;  // comm_dtype: empty in older traces
  int64_t comm_bytes = 0;
  bool comm_peer = false;  // an sm_copy into the next GPU
  // The knobs.
  BenchPriority priority = BenchPriority::equal;
  BenchOrder order = BenchOrder::compute_first;
  int nchannels = 0;         // 0: NCCL's choice
  int min_ctas = 0;          // 0: default
  int max_ctas = 0;          // 0: default
  int sm_partition_pct = 0;  // % of SMs for compute (green contexts); 0: off
  bool pipelined = false;    // split into `chunks` pieces and pipelined; else independent
  int chunks = 1;            // pieces of a pipelined schedule (1: its unsplit baseline)
};

// A c3bench result row found in a trace (bench_result), for the controlled-experiment metrics.
struct BenchResult {
  int16_t process = 0;
  std::string backend;
  bool simulated = false;
  std::string label, scenario;
  BenchConfig config;
  double t_comp = 0, t_comm = 0, t_c3 = 0;  // ns, medians
  std::optional<double> compute_slowdown, comm_slowdown, ideal_speedup, realized_speedup,
      fraction_of_ideal, realized_over_ideal, decomposition_loss_comp, decomposition_loss_comm,
      schedule_speedup;
  std::optional<double> busbw;  // bytes/s, collectives with a size
};

// The ratios of a result (compute_slowdown to schedule_speedup, docs/metrics.md) in bench_result's
// column order, by the names the summary, the report and c3bench's JSON all give them (busbw is
// not among them: its name differs between those).
struct BenchRatio {
  const char* name;
  std::optional<double> BenchResult::*value;
};
inline constexpr BenchRatio kBenchRatios[] = {
    {"compute_slowdown", &BenchResult::compute_slowdown},
    {"comm_slowdown", &BenchResult::comm_slowdown},
    {"ideal_speedup", &BenchResult::ideal_speedup},
    {"realized_speedup", &BenchResult::realized_speedup},
    {"fraction_of_ideal", &BenchResult::fraction_of_ideal},
    {"realized_over_ideal", &BenchResult::realized_over_ideal},
    {"decomposition_loss_comp", &BenchResult::decomposition_loss_comp},
    {"decomposition_loss_comm", &BenchResult::decomposition_loss_comm},
    {"schedule_speedup", &BenchResult::schedule_speedup},
};

}  // namespace c3::analyzer
