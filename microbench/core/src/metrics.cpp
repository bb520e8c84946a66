#include "c3/bench/metrics.h"

#include <algorithm>

namespace c3::bench {

Stats stats_of(std::vector<double> samples) {
  Stats s;
  s.n = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.min = samples.front();
  s.max = samples.back();
  return s;
}

const char* scenario_name(Scenario s) {
  switch (s) {
    case Scenario::compute_long:
      return "compute-long";
    case Scenario::comm_long:
      return "comm-long";
    case Scenario::balanced:
      return "balanced";
  }
  return "?";
}

Scenario scenario_of(double t_comp, double t_comm) {
  if (t_comp > 1.15 * t_comm) return Scenario::compute_long;
  if (t_comm > 1.15 * t_comp) return Scenario::comm_long;
  return Scenario::balanced;
}

C3Metrics c3_metrics(double t_comp, double t_comm, double t_comp_c3, double t_comm_c3, double t_c3,
                     double t_serial) {
  C3Metrics m;
  m.t_comp = t_comp;
  m.t_comm = t_comm;
  m.t_comp_c3 = t_comp_c3;
  m.t_comm_c3 = t_comm_c3;
  m.t_c3 = t_c3;
  m.t_serial = t_serial;
  if (t_comp > 0) m.compute_slowdown = t_comp_c3 / t_comp - 1;
  if (t_comm > 0) m.comm_slowdown = t_comm_c3 / t_comm - 1;
  const double longest = std::max(t_comp, t_comm);
  if (longest > 0) m.ideal_speedup = (t_comp + t_comm) / longest;
  if (t_c3 > 0) m.realized_speedup = (t_comp + t_comm) / t_c3;
  if (m.ideal_speedup > 1) m.fraction_of_ideal = (m.realized_speedup - 1) / (m.ideal_speedup - 1);
  if (m.ideal_speedup > 0) m.realized_over_ideal = m.realized_speedup / m.ideal_speedup;
  m.scenario = scenario_of(t_comp, t_comm);
  return m;
}

double decomposition_loss(double sum_of_chunks_alone, double unsplit_alone) {
  return unsplit_alone > 0 ? sum_of_chunks_alone / unsplit_alone - 1 : 0;
}

double algbw(int64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds : 0;
}

}  // namespace c3::bench
