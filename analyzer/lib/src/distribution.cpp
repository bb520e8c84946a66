#include "c3/analyzer/distribution.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <string>

namespace c3::analyzer {
namespace {

constexpr double kGamma = (1 + Distribution::kRelativeError) / (1 - Distribution::kRelativeError);
const double kLogGamma = std::log(kGamma);

int32_t key_of(double v) {
  return static_cast<int32_t>(std::ceil(std::log(v) / kLogGamma));
}

// The value a bin stands for: within kRelativeError of every value in it.
double value_of(int32_t key) {
  return 2 * std::pow(kGamma, key) / (kGamma + 1);
}

// The standard normal quantile z with P(|Z| <= z) = level (bisection on erfc).
double z_of(double level) {
  double lo = 0, hi = 40;
  for (int it = 0; it < 200; ++it) {
    const double mid = (lo + hi) / 2;
    (std::erfc(mid / std::sqrt(2.0)) > 1 - level ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The largest j (1-based) whose order-statistic interval [X(j), X(n-j+1)] covers the median
// with probability >= level; 1 (the range) when none does, with its coverage.
int64_t interval_rank(int64_t n, double level, double* coverage) {
  if (n <= 0) {
    if (coverage) *coverage = 0;
    return 0;
  }
  if (n > 4096) {
    // Normal approximation of Bin(n, 1/2).
    const double nd = static_cast<double>(n);
    const auto j = static_cast<int64_t>(std::floor((nd - z_of(level) * std::sqrt(nd)) / 2));
    if (coverage) *coverage = level;
    return std::max<int64_t>(j, 1);
  }
  // Exact: F(i) = P(Bin(n, 1/2) <= i), summed in log space.
  const double nd = static_cast<double>(n);
  const double base = std::lgamma(nd + 1) - nd * std::log(2.0);
  double cdf = 0;
  int64_t j = 1;
  double cov = 1;
  for (int64_t i = 0; 2 * (i + 1) <= n; ++i) {
    const double id = static_cast<double>(i);
    cdf += std::exp(base - std::lgamma(id + 1) - std::lgamma(nd - id + 1));
    const double c = 1 - 2 * cdf;  // coverage of j = i + 1
    if (i == 0) cov = c;
    if (c < level) break;
    j = i + 1;
    cov = c;
  }
  if (coverage) *coverage = cov;
  return j;
}

}  // namespace

void Distribution::add(double v) {
  ++n_;
  if (!sketch_) {
    if (sorted_ && !values_.empty() && v < values_.back()) sorted_ = false;
    values_.push_back(v);
    if (values_.size() > kExact) to_sketch();
    return;
  }
  if (!(v > 0)) {
    ++zeros_;
    return;
  }
  const int32_t k = key_of(v);
  auto it = std::lower_bound(bins_.begin(), bins_.end(), std::make_pair(k, int64_t{0}));
  if (it != bins_.end() && it->first == k) {
    ++it->second;
  } else {
    bins_.insert(it, {k, 1});
  }
}

void Distribution::to_sketch() {
  std::map<int32_t, int64_t> m;
  for (double v : values_) {
    if (v > 0) {
      ++m[key_of(v)];
    } else {
      ++zeros_;
    }
  }
  bins_.assign(m.begin(), m.end());
  values_ = {};
  sketch_ = true;
  sorted_ = true;
}

void Distribution::merge(const Distribution& o) {
  if (o.n_ == 0) return;
  if (!sketch_ && !o.sketch_ && values_.size() + o.values_.size() <= kExact) {
    if (!o.values_.empty()) sorted_ = false;
    values_.insert(values_.end(), o.values_.begin(), o.values_.end());
    n_ += o.n_;
    return;
  }
  if (!sketch_) to_sketch();
  std::map<int32_t, int64_t> m(bins_.begin(), bins_.end());
  if (o.sketch_) {
    for (const auto& [k, c] : o.bins_) m[k] += c;
    zeros_ += o.zeros_;
  } else {
    for (double v : o.values_) {
      if (v > 0) {
        ++m[key_of(v)];
      } else {
        ++zeros_;
      }
    }
  }
  bins_.assign(m.begin(), m.end());
  n_ += o.n_;
}

void Distribution::sort() const {
  if (!sorted_) {
    std::sort(values_.begin(), values_.end());
    sorted_ = true;
  }
}

double Distribution::at_rank(int64_t k) const {
  if (n_ == 0) return 0;
  k = std::clamp<int64_t>(k, 0, n_ - 1);
  if (!sketch_) {
    sort();
    return values_[static_cast<size_t>(k)];
  }
  if (k < zeros_) return 0;
  int64_t seen = zeros_;
  for (const auto& [key, c] : bins_) {
    seen += c;
    if (k < seen) return value_of(key);
  }
  return value_of(bins_.back().first);
}

double Distribution::median() const {
  if (n_ == 0) return 0;
  if (n_ % 2) return at_rank(n_ / 2);
  return (at_rank(n_ / 2 - 1) + at_rank(n_ / 2)) / 2;
}

double Distribution::quantile(double q) const {
  if (n_ == 0) return 0;
  return at_rank(static_cast<int64_t>(q * static_cast<double>(n_ - 1)));
}

std::pair<double, double> Distribution::median_interval(double level, double* coverage) const {
  const int64_t j = interval_rank(n_, level, coverage);
  if (j == 0) return {0, 0};
  return {at_rank(j - 1), at_rank(n_ - j)};
}

Distribution Distribution::from_values(std::vector<double> values) {
  if (values.size() > kExact) {
    throw std::invalid_argument("a distribution holds at most " + std::to_string(kExact) +
                                " exact values, not " + std::to_string(values.size()));
  }
  Distribution d;
  for (double v : values) {
    if (!std::isfinite(v) || v < 0)
      throw std::invalid_argument("a distribution value is negative or not finite");
  }
  d.n_ = static_cast<int64_t>(values.size());
  d.values_ = std::move(values);
  d.sorted_ = std::is_sorted(d.values_.begin(), d.values_.end());
  return d;
}

Distribution Distribution::from_bins(std::vector<std::pair<int32_t, int64_t>> bins, int64_t zeros) {
  Distribution d;
  d.sketch_ = true;
  if (zeros < 0) throw std::invalid_argument("a distribution's zero count is negative");
  d.zeros_ = zeros;
  d.n_ = zeros;
  for (size_t i = 0; i < bins.size(); ++i) {
    if (bins[i].second <= 0 || (i > 0 && bins[i].first <= bins[i - 1].first))
      throw std::invalid_argument("distribution bins must have positive counts in rising order");
    if (bins[i].second > INT64_MAX / 2 - d.n_)
      throw std::invalid_argument("distribution bin counts overflow");
    d.n_ += bins[i].second;
  }
  d.bins_ = std::move(bins);
  return d;
}

std::pair<double, double> slowdown_interval(const Distribution& x, const Distribution& y,
                                            double level) {
  // Price and Bonett (2002): the standard error of a log median from its distribution-free
  // interval [X(j), X(n-j+1)] of coverage c is (ln X(n-j+1) - ln X(j)) / (2 z_c); the log of a
  // ratio of independent medians then has the two errors added in quadrature.
  auto log_se = [](const Distribution& d, double* ok) {
    double cov = 0;
    const auto [lo, hi] = d.median_interval(0.95, &cov);
    if (!(lo > 0) || !(hi > 0) || cov <= 0) {
      *ok = 0;
      return 0.0;
    }
    return (std::log(hi) - std::log(lo)) / (2 * z_of(cov));
  };
  double ok = 1;
  const double sx = log_se(x, &ok), sy = log_se(y, &ok);
  const double mx = x.median(), my = y.median();
  if (ok == 0 || !(mx > 0) || !(my > 0)) return {0, 0};
  const double centre = std::log(my / mx);
  // A sketch's values are within kRelativeError of the true ones: widen by that much per side.
  const double quantized = (x.exact() ? 0 : std::log1p(Distribution::kRelativeError)) +
                           (y.exact() ? 0 : std::log1p(Distribution::kRelativeError));
  const double half = z_of(level) * std::sqrt(sx * sx + sy * sy) + quantized;
  return {std::exp(centre - half) - 1, std::exp(centre + half) - 1};
}

}  // namespace c3::analyzer
