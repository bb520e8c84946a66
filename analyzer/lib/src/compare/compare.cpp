// `c3scope compare` (compare.h): c3bench results as a run, and the decisions of the metrics
// that compare_metrics.cpp builds.
#include "c3/analyzer/compare/compare.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "compare_metrics.h"

namespace c3::analyzer {
namespace {

using json = nlohmann::json;

std::optional<double> opt_number(const json& o, const char* key) {
  if (!o.contains(key) || !o.at(key).is_number()) return std::nullopt;
  return o.at(key).get<double>();
}
double median_ns(const json& o, const char* key) {
  if (!o.contains(key) || !o.at(key).is_object()) return 0;
  const json& s = o.at(key);
  return s.contains("median_ns") && s.at("median_ns").is_number() ? s.at("median_ns").get<double>()
                                                                  : 0;
}

// The scope a metric belongs to, for matching derived metrics with the primary ones they are
// computed from: its selector ("rank 3", a c3bench case), "" for the job; interference
// slowdowns (whose signatures name kernels, not scopes) take any scope ("*").
std::string scope_of(const MetricResult& m) {
  if (m.group == "interference") return "*";
  const size_t open = m.id.find('[');
  return open == std::string::npos ? std::string() : m.id.substr(open);
}

// A derived metric that improved while a primary metric of its scope regressed mirrors that
// regression (a slower AllReduce raises the fraction of ideal and lowers the compute slowdown):
// it names the regression instead of counting as an improvement.
void mark_consequences(std::vector<MetricResult>* metrics) {
  for (MetricResult& m : *metrics) {
    if (!m.derived || m.d.verdict != Verdict::improvement) continue;
    const std::string scope = scope_of(m);
    const MetricResult* cause = nullptr;
    for (const MetricResult& p : *metrics) {
      if (p.derived || p.d.verdict != Verdict::regression) continue;
      if (scope != "*" && scope_of(p) != scope) continue;
      if (cause == nullptr || p.severity() > cause->severity()) cause = &p;
    }
    if (cause == nullptr) continue;
    m.consequence_of = cause->id;
    m.d.why += "; a ratio derived from metrics that regressed (" + cause->id +
               "): a consequence of that regression, not an improvement";
  }
}

}  // namespace

// ---- c3bench JSON ----

bool looks_like_bench_json(const std::string& head) {
  return head.find("\"c3bench/") != std::string::npos &&
         head.find("\"traceEvents\"") == std::string::npos;
}

JobRun run_from_bench_json(const std::string& text, const std::string& where) {
  JobRun run;
  run.name = where;
  try {
    const json j = json::parse(text);
    const std::string schema = j.at("schema").get<std::string>();
    if (schema != "c3bench/1")
      throw std::invalid_argument("schema '" + schema + "', this c3scope reads c3bench/1");
    RankSummary s;
    s.process.source = where;
    s.process.rank = j.contains("rank") && j.at("rank").is_number_integer()
                         ? std::optional<int64_t>(j.at("rank").get<int64_t>())
                         : std::nullopt;
    s.process.command_line = j.value("command_line", std::string());
    const std::string description = j.value("description", std::string());
    if (!description.empty()) s.process.versions.emplace_back("c3bench_setup", description);
    const int64_t gpus = j.value("gpus", int64_t{0});
    if (gpus < 0 || gpus > 1 << 20) throw std::invalid_argument("gpus is out of range");
    for (int64_t g = 0; g < gpus; ++g) {
      Device d;
      d.device = static_cast<int16_t>(g);
      s.devices.push_back(d);
    }
    const std::string backend = j.at("backend").get<std::string>();
    const bool simulated = j.at("simulated").get<bool>();
    for (const json& r : j.at("results")) {
      if (r.value("status", std::string()) != "ok") continue;
      BenchResult b;
      b.backend = backend;
      b.simulated = simulated;
      b.label = r.at("label").get<std::string>();
      b.scenario = r.value("scenario", std::string());
      b.t_comp = median_ns(r, "t_comp");
      b.t_comm = median_ns(r, "t_comm");
      b.t_c3 = median_ns(r, "t_c3");
      for (const BenchRatio& x : kBenchRatios) b.*x.value = opt_number(r, x.name);
      b.busbw = opt_number(r, "busbw_bytes_per_s");
      s.bench.push_back(std::move(b));
    }
    run.ranks.push_back(std::move(s));
  } catch (const json::exception& e) {
    throw std::invalid_argument(where + ": not valid c3bench JSON: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + ": not valid c3bench JSON: " + e.what());
  }
  return run;
}

// ---- The comparison ----

double MetricResult::severity() const {
  if (d.threshold <= 0 && d.change == 0) return 0;
  const double worse = up_is_worse ? d.change : -d.change;
  if (std::isinf(worse)) return worse > 0 ? 1e9 : -1e9;
  return d.threshold > 0 ? worse / d.threshold : worse * 1e9;
}

bool MetricResult::possible_regression() const {
  return d.verdict == Verdict::not_significant && severity() > 1;
}

int Comparison::regressions() const {
  return static_cast<int>(std::count_if(metrics.begin(), metrics.end(), [](const MetricResult& m) {
    return m.d.verdict == Verdict::regression;
  }));
}
int Comparison::improvements() const {
  return static_cast<int>(std::count_if(metrics.begin(), metrics.end(), [](const MetricResult& m) {
    return m.d.verdict == Verdict::improvement && m.consequence_of.empty();
  }));
}
int Comparison::consequences() const {
  return static_cast<int>(std::count_if(metrics.begin(), metrics.end(), [](const MetricResult& m) {
    return m.d.verdict == Verdict::improvement && !m.consequence_of.empty();
  }));
}
int Comparison::not_significant() const {
  return static_cast<int>(std::count_if(metrics.begin(), metrics.end(), [](const MetricResult& m) {
    return m.d.verdict == Verdict::not_significant;
  }));
}
int Comparison::inconclusive() const {
  return static_cast<int>(std::count_if(metrics.begin(), metrics.end(), [](const MetricResult& m) {
    return m.d.verdict == Verdict::inconclusive;
  }));
}
int Comparison::budgets_broken() const {
  return static_cast<int>(std::count_if(budgets.begin(), budgets.end(),
                                        [](const BudgetResult& b) { return b.checked && !b.ok; }));
}
int Comparison::budgets_unchecked() const {
  return static_cast<int>(std::count_if(budgets.begin(), budgets.end(),
                                        [](const BudgetResult& b) { return !b.checked; }));
}

int Comparison::exit_code() const {
  if (regressions() > 0 || budgets_broken() > 0) return 1;
  if (!has_baseline) return 0;
  if (!incomparable.empty()) return 3;
  bool decided = false;
  for (const MetricResult& m : metrics) {
    if (m.id == "step_time" && m.d.verdict == Verdict::inconclusive) return 3;
    if (m.d.verdict != Verdict::inconclusive) decided = true;
  }
  return decided ? 0 : 3;
}

std::string Comparison::verdict() const {
  if (regressions() > 0 || budgets_broken() > 0) return "regression";
  if (exit_code() == 3) return "inconclusive";
  if (std::any_of(metrics.begin(), metrics.end(),
                  [](const MetricResult& m) { return m.possible_regression(); }))
    return "not_significant";
  if (improvements() > 0) return "improvement";
  return "unchanged";
}

Comparison compare(const JobRun* baseline, const JobRun& candidate, const CompareOptions& o) {
  Comparison out;
  out.candidate_name = candidate.name;
  out.has_baseline = baseline != nullptr;
  if (baseline != nullptr) out.baseline_name = baseline->name;
  out.decide = o.decide;
  out.threshold = o.threshold;
  out.top = o.top;
  out.ranks_candidate = static_cast<int>(candidate.ranks.size());
  // The reduce gives job steps, totals and the clock offsets.
  const Report rc = reduce(candidate.ranks, {candidate.name}, candidate.made_with, true);
  Report rb;
  if (baseline != nullptr) {
    out.ranks_baseline = static_cast<int>(baseline->ranks.size());
    rb = reduce(baseline->ranks, {baseline->name}, baseline->made_with, true);
    out.incomparable = incomparable(*baseline, candidate);
    out.baseline_steps = static_cast<int64_t>(rb.job_steps.size());
    out.notes.push_back("baseline steps: " + (rb.step_source.empty() ? "none" : rb.step_source));
  }
  out.candidate_steps = static_cast<int64_t>(rc.job_steps.size());
  out.notes.push_back("candidate steps: " + (rc.step_source.empty() ? "none" : rc.step_source));
  if (bench_steps(candidate))
    out.notes.push_back(
        "c3bench cases are compared case by case (each case's medians), not as steps");
  std::vector<Metric> metrics =
      build_metrics(baseline, baseline != nullptr ? &rb : nullptr, candidate, rc, o, &out);
  const std::vector<double> thresholds = metric_thresholds(metrics, o.threshold, o.budgets);
  if (baseline != nullptr) {
    std::vector<MetricSamples> ms;
    std::vector<size_t> from;
    for (size_t i = 0; i < metrics.size(); ++i) {
      const Metric& m = metrics[i];
      MetricSamples s;
      s.name = m.id;
      s.up_is_worse = m.up_is_worse;
      s.baseline = m.b;
      s.candidate = m.c;
      s.threshold = thresholds[i];
      s.total = m.total;
      s.absolute = m.absolute;
      s.min_delta = m.min_delta;
      ms.push_back(std::move(s));
      from.push_back(i);
    }
    DecideOptions dopt = o.decide;
    dopt.incomparable = out.incomparable;
    const std::vector<Decision> ds = decide(ms, dopt);
    for (size_t k = 0; k < ds.size(); ++k) {
      const Metric& m = metrics[from[k]];
      MetricResult r;
      r.id = m.id;
      r.base = m.base;
      r.group = m.group;
      r.unit = m.unit;
      r.up_is_worse = m.up_is_worse;
      r.absolute = m.absolute;
      r.n_baseline = static_cast<int64_t>(m.b.size());
      r.n_candidate = static_cast<int64_t>(m.c.size());
      r.d = ds[k];
      r.detail = m.detail;
      r.derived = m.derived;
      if (m.quantile_check && r.d.verdict != Verdict::inconclusive) {
        // A p99 from the skew samples: a change counts only when the order-statistic intervals
        // of the two p99s do not overlap.
        const Metric* whole = nullptr;
        for (const Metric& x : metrics) {
          if (x.id == "skew") whole = &x;
        }
        if (whole != nullptr && !whole->b.empty()) {
          const auto ib = quantile_interval(whole->b, 0.99), ic = quantile_interval(whole->c, 0.99);
          r.d.lo = ic.first / std::max(ib.second, 1e-300) - 1;
          r.d.hi = ic.second / std::max(ib.first, 1e-300) - 1;
          const bool disjoint = ic.first > ib.second || ic.second < ib.first;
          if (!disjoint && r.d.verdict != Verdict::unchanged) {
            r.d.verdict = Verdict::unchanged;
            r.d.why += "; the two p99 intervals overlap";
          }
          r.d.why += "; p99 from " + std::to_string(whole->b.size()) + " and " +
                     std::to_string(whole->c.size()) + " matched collectives";
        }
      }
      out.metrics.push_back(std::move(r));
    }
    auto rank_of = [](Verdict v) {
      switch (v) {
        case Verdict::regression:
          return 0;
        case Verdict::inconclusive:
          return 1;
        case Verdict::not_significant:
          return 2;
        case Verdict::unchanged:
          return 3;
        case Verdict::improvement:
          return 4;
      }
      return 5;
    };
    mark_consequences(&out.metrics);
    std::stable_sort(out.metrics.begin(), out.metrics.end(),
                     [&](const MetricResult& a, const MetricResult& b) {
                       if (rank_of(a.d.verdict) != rank_of(b.d.verdict))
                         return rank_of(a.d.verdict) < rank_of(b.d.verdict);
                       return a.severity() > b.severity();
                     });
  }
  // Budgets: limits on the candidate's medians.
  if (o.budgets != nullptr) out.budgets = check_limits(metrics, *o.budgets);
  return out;
}

}  // namespace c3::analyzer
