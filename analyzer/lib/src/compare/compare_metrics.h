// The metrics of a comparison before they are decided (internal to the analyzer library).
// compare_metrics.cpp builds them from two runs' summaries, compare_budgets.cpp applies a
// budgets file's thresholds and limits to them, and compare.cpp decides them (regression.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "c3/analyzer/compare/compare.h"
#include "c3/analyzer/report/report.h"

namespace c3::analyzer {

// One metric's samples on both sides, before the decision.
struct Metric {
  std::string id, base, group, unit;
  bool up_is_worse = true, absolute = false, total = false;
  double min_delta = 0;
  std::vector<double> b, c;  // samples; `b` empty without a baseline
  std::string detail;
  bool quantile_check = false;  // a p99: decided only when its intervals are disjoint
  bool derived = false;         // a ratio of other metrics (MetricResult::derived)
};

// True when a run's steps are c3bench cases (compared case by case, not as steps).
bool bench_steps(const JobRun& r);

// What the runs differ in that makes their numbers incomparable ("; " between reasons), or
// empty.
std::string incomparable(const JobRun& b, const JobRun& c);

// Every metric of the comparison; `b` and `rb` null: the candidate's only (for budgets). `rb`
// and `rc` are the runs' reduced reports (job steps, totals, clock offsets). `out` gets the
// explained step time, notes and what only one side has.
std::vector<Metric> build_metrics(const JobRun* b, const Report* rb, const JobRun& c,
                                  const Report& rc, const CompareOptions& o, Comparison* out);

// The distribution-free 95% interval of the q-quantile of `v` (order statistics).
std::pair<double, double> quantile_interval(std::vector<double> v, double q);

// Each metric's threshold: `fallback`, then the budget file's threshold lines in their order.
std::vector<double> metric_thresholds(const std::vector<Metric>& metrics, double fallback,
                                      const Budgets* budgets);

// The budget file's limits, each checked on the candidate's median of the metric it names.
std::vector<BudgetResult> check_limits(const std::vector<Metric>& metrics, const Budgets& budgets);

}  // namespace c3::analyzer
