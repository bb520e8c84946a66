// The one driver every experiment goes through (nccl-tests pattern): build the cases of a sweep,
// run each phase with warm-up and timed iterations on a backend, wrap each case and phase in an
// NVTX range (domain "c3bench", payload = case id) so a recorded trace maps timeline regions to
// configurations, and compute the metrics.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "c3/bench/backend.h"
#include "c3/bench/descriptors.h"
#include "c3/bench/metrics.h"

namespace c3::bench {

enum class Mode { alone, concurrent, serial, all };

struct Sweep {
  std::vector<ComputeOp> computes;
  std::vector<CommOp> comms;
  std::vector<Knobs::Priority> priorities{Knobs::Priority::equal};
  std::vector<Knobs::Order> orders{Knobs::Order::compute_first};
  std::vector<int> nchannels{0};
  int min_ctas = 0;
  int max_ctas = 0;
  std::vector<int> sm_partitions{0};
  // Pipelined schedules to run (k chunks each); with `independent`, also the plain case.
  std::vector<int> chunks;
  bool independent = true;
  Mode mode = Mode::all;
  int warmup = 5;
  int iterations = 20;
};

// Every combination, in a stable order (compute, comm, knobs); ids from 1.
std::vector<Case> build_cases(const Sweep& sweep);

struct Result {
  Case c;
  std::string skip_reason;  // non-empty: not run
  int nranks = 1;
  std::optional<Stats> comp_alone, comm_alone, comp_c3, comm_c3, c3_wall, serial_wall;
  std::optional<C3Metrics> metrics;
  std::optional<double> decomposition_loss_comp, decomposition_loss_comm;
  // Pipelined schedules with k > 1: T_c3 of the k = 1 pipelined baseline (compute, then its
  // communication) over this schedule's T_c3 (FiCCO's speedup), when the sweep ran k = 1.
  std::optional<double> schedule_speedup;
  double algbw = 0, busbw = 0;  // bytes/s, communication alone
  int iterations = 0;
};

class Runner {
 public:
  Runner(Backend& backend, Sweep sweep) : backend_(backend), sweep_(std::move(sweep)) {}
  // Runs every case; `on_result` sees each as it completes (for streaming output).
  std::vector<Result> run(const std::function<void(const Result&)>& on_result);

 private:
  Stats measure(Phase phase, const Case& c, std::vector<PhaseTiming>* all);
  Result run_case(const Case& c);
  Backend& backend_;
  Sweep sweep_;
};

}  // namespace c3::bench
