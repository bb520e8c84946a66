#include "c3/analyzer/compare/regression.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "c3/analyzer/metrics/distribution.h"

namespace c3::analyzer {
namespace {

// The null distribution of U for sample sizes n and m with no ties: the number of orderings of
// n x's and m y's with U = k, counted by the recurrence on the largest value (an x above all m
// y's adds m pairs, a y adds none). Counts stay positive, so doubles hold them to 1e-16
// relative (C(100, 50) is about 1e29).
std::vector<double> exact_counts(int n, int m) {
  const auto width = static_cast<size_t>(int64_t{n} * m + 1);
  // layer[j][k]: orderings of i x's and j y's with U = k, for the current i.
  std::vector<std::vector<double>> prev(static_cast<size_t>(m) + 1, std::vector<double>(width)),
      cur = prev;
  for (auto& row : prev) row[0] = 1;  // i = 0: U is 0 whatever j
  for (int i = 1; i <= n; ++i) {
    cur[0][0] = 1;  // j = 0: U is 0
    for (int j = 1; j <= m; ++j) {
      auto& out = cur[static_cast<size_t>(j)];
      const auto& up = prev[static_cast<size_t>(j)];       // the largest is an x: + j pairs
      const auto& left = cur[static_cast<size_t>(j) - 1];  // the largest is a y
      const auto shift = static_cast<size_t>(j);
      const auto limit = static_cast<size_t>(int64_t{i} * j);  // the largest U of (i, j)
      for (size_t k = 0; k <= limit; ++k) {
        out[k] = left[k] + (k >= shift ? up[k - shift] : 0);
      }
    }
    std::swap(prev, cur);
  }
  return prev[static_cast<size_t>(m)];
}

double median_of(const std::vector<double>& v) {
  return exact_median(v);
}

// True when both sides hold samples and every one of them is the same value.
bool one_value(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return false;
  const double v = a.front();
  auto same = [v](double x) { return x == v; };
  return std::all_of(a.begin(), a.end(), same) && std::all_of(b.begin(), b.end(), same);
}

}  // namespace

MannWhitney mann_whitney(const std::vector<double>& x, const std::vector<double>& y) {
  MannWhitney r;
  const size_t n = x.size(), m = y.size();
  if (n == 0 || m == 0) return r;
  // Ranks of the pooled sample, ties at their average rank.
  std::vector<std::pair<double, bool>> all;  // (value, from x)
  all.reserve(n + m);
  for (double v : x) all.emplace_back(v, true);
  for (double v : y) all.emplace_back(v, false);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double rank_sum_x = 0, tie_term = 0;
  bool ties = false;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double avg = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    const auto t = static_cast<double>(j - i);
    if (j - i > 1) {
      ties = true;
      tie_term += t * t * t - t;
    }
    for (size_t k = i; k < j; ++k) {
      if (all[k].second) rank_sum_x += avg;
    }
    i = j;
  }
  const auto dn = static_cast<double>(n), dm = static_cast<double>(m);
  r.u = rank_sum_x - dn * (dn + 1) / 2;
  if (!ties && n <= static_cast<size_t>(MannWhitney::kExactMax) &&
      m <= static_cast<size_t>(MannWhitney::kExactMax)) {
    // U is a whole number without ties; the null distribution is symmetric about n m / 2.
    const auto u = static_cast<size_t>(std::llround(r.u));
    const std::vector<double> counts = exact_counts(static_cast<int>(n), static_cast<int>(m));
    double below = 0, above = 0, orderings = 0;  // P(U <= u), P(U >= u) once divided
    for (size_t k = 0; k < counts.size(); ++k) {
      orderings += counts[k];
      if (k <= u) below += counts[k];
      if (k >= u) above += counts[k];
    }
    r.p = std::min(1.0, 2 * std::min(below, above) / orderings);
    r.exact = true;
    return r;
  }
  const double total = dn + dm;
  const double mean = dn * dm / 2;
  const double var = dn * dm / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (!(var > 0)) return r;  // every value the same: no evidence of a difference
  const double z = std::max(0.0, std::fabs(r.u - mean) - 0.5) / std::sqrt(var);
  r.p = std::min(1.0, std::erfc(z / std::sqrt(2.0)));
  return r;
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p) {
  const size_t n = p.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(n, 1.0);
  double running = 1.0;
  for (size_t k = n; k-- > 0;) {
    const size_t i = order[k];
    running = std::min(running, p[i] * static_cast<double>(n) / static_cast<double>(k + 1));
    adjusted[i] = std::min(1.0, running);
  }
  return adjusted;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::regression:
      return "regression";
    case Verdict::improvement:
      return "improvement";
    case Verdict::unchanged:
      return "unchanged";
    case Verdict::not_significant:
      return "not_significant";
    case Verdict::inconclusive:
      return "inconclusive";
  }
  return "?";
}

const char* verdict_label(Verdict v) {
  switch (v) {
    case Verdict::regression:
      return "REGRESSION";
    case Verdict::not_significant:
      return "not significant";
    case Verdict::improvement:
    case Verdict::unchanged:
    case Verdict::inconclusive:
      return verdict_name(v);
  }
  return "?";
}

namespace {

std::string percent(double x) {
  if (std::isinf(x)) return x > 0 ? "+inf%" : "-inf%";
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100 * x);
  return b;
}

std::string points(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.3g", x);
  return b;
}

// Worse (true) when the change goes the metric's bad way by more than its threshold.
bool beyond(double change, double threshold, bool worse_way, bool up_is_worse) {
  const double signed_change = up_is_worse == worse_way ? change : -change;
  return signed_change > threshold;
}

// The verdict a threshold gives a change that is significant (or needs no test); a difference
// within the metric's floor is no change.
Verdict by_threshold(double change, const MetricSamples& m, bool tiny) {
  if (tiny) return Verdict::unchanged;
  if (beyond(change, m.threshold, true, m.up_is_worse)) return Verdict::regression;
  if (beyond(change, m.threshold, false, m.up_is_worse)) return Verdict::improvement;
  return Verdict::unchanged;
}

}  // namespace

std::vector<Decision> decide(const std::vector<MetricSamples>& metrics, const DecideOptions& o) {
  std::vector<Decision> out(metrics.size());
  std::vector<size_t> tested;
  std::vector<double> pvalues;
  for (size_t i = 0; i < metrics.size(); ++i) {
    const MetricSamples& m = metrics[i];
    Decision& d = out[i];
    d.name = m.name;
    d.threshold = m.threshold;
    d.baseline_median = median_of(m.baseline);
    d.candidate_median = median_of(m.candidate);
    if (m.absolute) {
      d.change = d.candidate_median - d.baseline_median;
    } else if (d.baseline_median > 0) {
      d.change = d.candidate_median / d.baseline_median - 1;
    } else if (d.candidate_median > 0) {
      d.change = std::numeric_limits<double>::infinity();
    }
    if (!o.incomparable.empty()) {
      d.why = "not comparable: " + o.incomparable;
      continue;
    }
    if (m.baseline.empty() || m.candidate.empty()) {
      d.why = std::string("no samples in the ") + (m.baseline.empty() ? "baseline" : "candidate");
      continue;
    }
    const bool tiny = std::abs(d.candidate_median - d.baseline_median) <= m.min_delta;
    if (m.total) {
      // One number a side: no test, the threshold alone decides.
      d.verdict = by_threshold(d.change, m, tiny);
      d.why = "whole-run total, threshold only: " +
              (m.absolute ? points(d.change) + " against " + points(m.threshold).substr(1)
                          : percent(d.change) + " against " + percent(m.threshold).substr(1));
      if (tiny) d.why += ", a difference within the floor";
      continue;
    }
    const auto nb = static_cast<int>(m.baseline.size()), nc = static_cast<int>(m.candidate.size());
    if (nb < o.min_samples || nc < o.min_samples) {
      d.why = "too few samples: " + std::to_string(nb) + " baseline, " + std::to_string(nc) +
              " candidate, need " + std::to_string(o.min_samples) + " a side";
      continue;
    }
    if (one_value(m.baseline, m.candidate)) {
      // Not a test: no ordering of equal values can differ, and counting it in the correction
      // would only raise every other metric's adjusted p-value.
      d.constant = true;
      d.verdict = Verdict::unchanged;
      d.why = "the same value in all " + std::to_string(nb + nc) + " samples of both runs";
      continue;
    }
    const auto interval = slowdown_interval(Distribution::from_values(m.baseline),
                                            Distribution::from_values(m.candidate), o.level);
    d.lo = interval.first;
    d.hi = interval.second;
    if (m.absolute) {
      d.lo *= d.baseline_median;
      d.hi *= d.baseline_median;
    }
    d.p = mann_whitney(m.candidate, m.baseline).p;
    d.tested = true;
    tested.push_back(i);
    pvalues.push_back(d.p);
  }
  const std::vector<double> adjusted = benjamini_hochberg(pvalues);
  for (size_t k = 0; k < tested.size(); ++k) {
    Decision& d = out[tested[k]];
    const MetricSamples& m = metrics[tested[k]];
    d.p_adjusted = adjusted[k];
    const bool significant = d.p_adjusted < o.alpha;
    char b[160];
    auto f = m.absolute ? points : percent;
    std::snprintf(b, sizeof b, "%s [%s, %s], p %.2g (adjusted %.2g, alpha %g), threshold %s",
                  f(d.change).c_str(), f(d.lo).c_str(), f(d.hi).c_str(), d.p, d.p_adjusted, o.alpha,
                  f(m.threshold).substr(1).c_str());
    d.why = b;
    const bool tiny = std::abs(d.candidate_median - d.baseline_median) <= m.min_delta;
    if (tiny && significant) d.why += ", a difference within the floor";
    // Not rejected, yet the interval leaves out "no change": say so rather than "unchanged".
    const bool excludes_zero = !tiny && (d.lo > 0 || d.hi < 0);
    d.verdict = significant     ? by_threshold(d.change, m, tiny)
                : excludes_zero ? Verdict::not_significant
                                : Verdict::unchanged;
    if (d.verdict == Verdict::not_significant)
      d.why += "; the interval excludes no change but the corrected test does not reject it";
  }
  return out;
}

}  // namespace c3::analyzer
