// The controlled-experiment metrics of docs/metrics.md ("Interference (slowdown under
// concurrency)", "Collective bandwidth"), as pure functions over measured times.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace c3::bench {

struct Stats {
  double median = 0, min = 0, max = 0;
  int n = 0;
};
Stats stats_of(std::vector<double> samples);

enum class Scenario { compute_long, comm_long, balanced };
const char* scenario_name(Scenario s);
// compute-long if T_comp > 1.15 T_comm, comm-long if T_comm > 1.15 T_comp, else balanced.
Scenario scenario_of(double t_comp, double t_comm);

struct C3Metrics {
  double t_comp = 0, t_comm = 0;        // alone (medians)
  double t_comp_c3 = 0, t_comm_c3 = 0;  // each op's own duration while concurrent
  double t_c3 = 0;                      // concurrent wall: first launch to last completion
  double t_serial = 0;                  // one after the other
  double compute_slowdown = 0;          // T_comp,concurrent / T_comp - 1
  // Not defined for pipelined schedules: there the communication's span includes its waits for
  // the compute chunks it depends on, which is not interference (the runner clears it).
  std::optional<double> comm_slowdown;
  double ideal_speedup = 0;        // (T_comp + T_comm) / max(T_comp, T_comm)
  double realized_speedup = 0;     // (T_comp + T_comm) / T_c3
  double fraction_of_ideal = 0;    // (realized - 1) / (ideal - 1)
  double realized_over_ideal = 0;  // realized / ideal
  Scenario scenario = Scenario::balanced;
};
C3Metrics c3_metrics(double t_comp, double t_comm, double t_comp_c3, double t_comm_c3, double t_c3,
                     double t_serial);

// sum(T of the k chunks run alone) / T(unsplit op alone) - 1 (FiCCO).
double decomposition_loss(double sum_of_chunks_alone, double unsplit_alone);

// algbw = S / t (bytes/s); busbw = algbw * busbw_factor.
double algbw(int64_t bytes, double seconds);

}  // namespace c3::bench
