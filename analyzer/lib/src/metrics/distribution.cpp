#include "c3/analyzer/metrics/distribution.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>

#include "time_limits.h"

namespace c3::analyzer {
namespace {

constexpr double kGamma = (1 + Distribution::kRelativeError) / (1 - Distribution::kRelativeError);
const double kLogGamma = std::log(kGamma);

int32_t exact_key_of(double v) {
  return static_cast<int32_t>(std::ceil(std::log(v) / kLogGamma));
}

// log2(1 + j / 256), j = 0..256: log2 of a double from its exponent and this table, linear
// between entries (error below 3e-6).
const std::array<double, 257> kLog2Table = [] {
  std::array<double, 257> t{};
  for (size_t j = 0; j < t.size(); ++j) t[j] = std::log2(1 + static_cast<double>(j) / 256);
  return t;
}();
const double kKeysPerOctave = std::log(2.0) / kLogGamma;

// ceil(log(v) / log(gamma)) for v > 0, as exact_key_of computes it (a sketch adds one key per
// value: std::log was most of a launch statistic's cost). The table's estimate is at most 2e-4
// keys off, so it is the answer unless it lies within 1e-3 of a whole key, where exact_key_of
// decides.
int32_t key_of(double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  const auto biased = static_cast<int>((bits >> 52) & 0x7ff);
  if (biased == 0 || biased == 0x7ff) return exact_key_of(v);  // subnormal, inf, NaN
  const uint64_t mantissa = bits & ((uint64_t{1} << 52) - 1);
  const auto j = static_cast<size_t>(mantissa >> 44);
  const double within = static_cast<double>(mantissa & ((uint64_t{1} << 44) - 1)) * 0x1p-44;
  const double log2v =
      (biased - 1023) + kLog2Table[j] + (kLog2Table[j + 1] - kLog2Table[j]) * within;
  const double keys = log2v * kKeysPerOctave;
  const double up = std::ceil(keys);
  if (up - keys < 1e-3 || up - keys > 1 - 1e-3) return exact_key_of(v);
  return static_cast<int32_t>(up);
}

// The value a bin stands for: within kRelativeError of every value in it.
double value_of(int32_t key) {
  return 2 * std::pow(kGamma, key) / (kGamma + 1);
}

// The standard normal quantile z with P(|Z| <= z) = level: Acklam's rational approximation of
// the inverse normal CDF, refined by one Halley step on erfc (accurate to double precision).
double z_of(double level) {
  const double p = (1 + level) / 2;  // upper tail point
  if (!(p > 0.5)) return 0;
  if (p >= 1) return 40;
  static constexpr double kA[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                  -2.759285104469687e+02, 1.383577518672690e+02,
                                  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double kB[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                  -1.556989798598866e+02, 6.680131188771972e+01,
                                  -1.328068155288572e+01};
  static constexpr double kC[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                  -2.400758277161838e+00, -2.549732539343734e+00,
                                  4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double kD[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                  2.445134137142996e+00, 3.754408661907416e+00};
  double x;
  if (p <= 1 - 0.02425) {
    const double q = p - 0.5, r = q * q;
    x = (((((kA[0] * r + kA[1]) * r + kA[2]) * r + kA[3]) * r + kA[4]) * r + kA[5]) * q /
        (((((kB[0] * r + kB[1]) * r + kB[2]) * r + kB[3]) * r + kB[4]) * r + 1);
  } else {
    const double q = std::sqrt(-2 * std::log(1 - p));
    x = -(((((kC[0] * q + kC[1]) * q + kC[2]) * q + kC[3]) * q + kC[4]) * q + kC[5]) /
        ((((kD[0] * q + kD[1]) * q + kD[2]) * q + kD[3]) * q + 1);
  }
  const double e = 0.5 * std::erfc(-x / std::sqrt(2.0)) - p;
  const double u = e * std::sqrt(2 * M_PI) * std::exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

int64_t interval_rank_uncached(int64_t n, double level, double* coverage);

// The largest j (1-based) whose order-statistic interval [X(j), X(n-j+1)] covers the median
// with probability >= level; 1 (the range) when none does, with its coverage. Remembered per
// (n, level) on each thread: summaries ask for the same counts over and over.
int64_t interval_rank(int64_t n, double level, double* coverage) {
  struct Hit {
    int64_t j;
    double coverage;
  };
  thread_local std::map<std::pair<int64_t, double>, Hit> cache;
  auto it = cache.find({n, level});
  if (it == cache.end()) {
    double cov = 0;
    const int64_t j = interval_rank_uncached(n, level, &cov);
    if (cache.size() > 100000) cache.clear();
    it = cache.emplace(std::make_pair(n, level), Hit{j, cov}).first;
  }
  if (coverage) *coverage = it->second.coverage;
  return it->second.j;
}

int64_t interval_rank_uncached(int64_t n, double level, double* coverage) {
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

namespace {
bool fits_u32(double v) {
  return v >= 0 && v <= 4294967295.0 && v == std::floor(v);
}
}  // namespace

void Distribution::widen() {
  if (wide_) return;
  values_.reserve(ints_.size() + 1);
  for (uint32_t v : ints_) values_.push_back(static_cast<double>(v));
  std::vector<uint32_t>().swap(ints_);  // (not = {}: that keeps the capacity)
  wide_ = true;
}

std::vector<double> Distribution::values() const {
  std::vector<double> out;
  out.reserve(exact_size());
  for_each_exact([&](double v) { out.push_back(v); });
  return out;
}

void Distribution::add(double v) {
  ++n_;
  if (!sketch_) {
    if (!wide_ && !fits_u32(v)) widen();
    if (wide_) {
      if (sorted_ && !values_.empty() && v < values_.back()) sorted_ = false;
      values_.push_back(v);
    } else {
      const auto u = static_cast<uint32_t>(v);
      if (sorted_ && !ints_.empty() && u < ints_.back()) sorted_ = false;
      ints_.push_back(u);
    }
    if (exact_size() > kExact) to_sketch();
    return;
  }
  if (!(v > 0)) {
    ++zeros_;
    return;
  }
  const int32_t k = key_of(v);
  if (count_dense(k)) return;
  // (Keys too far from the others for dense_.) Values come in runs of one bin (a kernel's
  // durations): the last bin used is tried first.
  if (hot_ < bins_.size() && bins_[hot_].first == k) {
    ++bins_[hot_].second;
    return;
  }
  auto it = std::lower_bound(bins_.begin(), bins_.end(), std::make_pair(k, int64_t{0}));
  if (it != bins_.end() && it->first == k) {
    ++it->second;
  } else {
    it = bins_.insert(it, {k, 1});
  }
  hot_ = static_cast<size_t>(it - bins_.begin());
}

bool Distribution::count_dense(int32_t k) {
  const int64_t size = static_cast<int64_t>(dense_.size());
  const int64_t at = int64_t{k} - dense_lo_;
  if (at >= 0 && at < size) {
    ++dense_[static_cast<size_t>(at)];
    return true;
  }
  if (size == 0) {  // the first: 64 keys around it (values a factor of 1.9 apart)
    dense_.assign(64, 0);
    dense_lo_ = int64_t{k} - 32;
    ++dense_[32];
    return true;
  }
  // Grown to cover k (at least doubled, so each key is moved a bounded number of times), when
  // the keys from the lowest to the highest still fit in kDenseKeys.
  const int64_t lo = std::min(dense_lo_, int64_t{k}),
                hi = std::max(dense_lo_ + size, int64_t{k} + 1);
  if (hi - lo > kDenseKeys) return false;
  const int64_t grown = std::min(kDenseKeys, std::max(hi - lo, 2 * size));
  // The room grown goes to k's side.
  const int64_t new_lo = k < dense_lo_ ? std::max(hi - grown, int64_t{INT32_MIN}) : lo;
  std::vector<int64_t> d(static_cast<size_t>(grown), 0);
  std::copy(dense_.begin(), dense_.end(), d.begin() + (dense_lo_ - new_lo));
  dense_.swap(d);
  dense_lo_ = new_lo;
  ++dense_[static_cast<size_t>(int64_t{k} - dense_lo_)];
  return true;
}

template <class F>
void Distribution::for_each_bin(F&& f) const {
  size_t i = 0;
  const int64_t size = static_cast<int64_t>(dense_.size());
  for (int64_t j = 0; j < size; ++j) {
    const int64_t c = dense_[static_cast<size_t>(j)];
    if (c == 0) continue;
    const auto key = static_cast<int32_t>(dense_lo_ + j);
    for (; i < bins_.size() && bins_[i].first < key; ++i) {
      if (!f(bins_[i].first, bins_[i].second)) return;
    }
    if (i < bins_.size() && bins_[i].first == key) {
      if (!f(key, bins_[i++].second + c)) return;  // (both at most n_: no overflow)
    } else if (!f(key, c)) {
      return;
    }
  }
  for (; i < bins_.size(); ++i) {
    if (!f(bins_[i].first, bins_[i].second)) return;
  }
}

std::vector<std::pair<int32_t, int64_t>> Distribution::bins() const {
  if (dense_.empty()) return bins_;
  std::vector<std::pair<int32_t, int64_t>> out;
  out.reserve(bins_.size() + dense_.size());
  for_each_bin([&](int32_t k, int64_t c) {
    out.emplace_back(k, c);
    return true;
  });
  return out;
}

void Distribution::settle() {
  if (dense_.empty()) return;
  bins_ = bins();
  bins_.shrink_to_fit();
  std::vector<int64_t>().swap(dense_);
  hot_ = 0;
}

void Distribution::to_sketch() {
  std::map<int32_t, int64_t> m;
  for_each_exact([&](double v) {
    if (v > 0) {
      ++m[key_of(v)];
    } else {
      ++zeros_;
    }
  });
  bins_.assign(m.begin(), m.end());
  std::vector<double>().swap(values_);  // (not = {}: that keeps the capacity)
  std::vector<uint32_t>().swap(ints_);
  sketch_ = true;
  sorted_ = true;
}

void Distribution::merge(const Distribution& o) {
  if (o.n_ == 0) return;
  if (!sketch_ && !o.sketch_ && exact_size() + o.exact_size() <= kExact) {
    if (o.exact_size() > 0) sorted_ = false;
    if (!wide_ && !o.wide_) {
      ints_.insert(ints_.end(), o.ints_.begin(), o.ints_.end());
    } else {
      widen();
      o.for_each_exact([&](double v) { values_.push_back(v); });
    }
    checked_add(n_, o.n_);
    return;
  }
  if (!sketch_) to_sketch();
  settle();
  std::map<int32_t, int64_t> m(bins_.begin(), bins_.end());
  if (o.sketch_) {
    o.for_each_bin([&](int32_t k, int64_t c) {
      checked_add(m[k], c);
      return true;
    });
    checked_add(zeros_, o.zeros_);
  } else {
    o.for_each_exact([&](double v) {
      if (v > 0) {
        ++m[key_of(v)];
      } else {
        ++zeros_;
      }
    });
  }
  bins_.assign(m.begin(), m.end());
  checked_add(n_, o.n_);
}

void Distribution::sort() const {
  if (!sorted_) {
    std::sort(ints_.begin(), ints_.end());
    std::sort(values_.begin(), values_.end());
    sorted_ = true;
  }
}

double Distribution::at_rank(int64_t k) const {
  if (n_ == 0) return 0;
  k = std::clamp<int64_t>(k, 0, n_ - 1);
  if (!sketch_) {
    sort();
    return wide_ ? values_[static_cast<size_t>(k)]
                 : static_cast<double>(ints_[static_cast<size_t>(k)]);
  }
  if (k < zeros_) return 0;
  int64_t seen = zeros_;
  int32_t at = 0;
  for_each_bin([&](int32_t key, int64_t c) {
    at = key;
    seen += c;
    return k >= seen;  // on to the next bin while the rank lies beyond this one
  });
  return value_of(at);
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

Distribution Distribution::from_values(const std::vector<double>& values) {
  if (values.size() > kExact) {
    throw std::invalid_argument("a distribution holds at most " + std::to_string(kExact) +
                                " exact values, not " + std::to_string(values.size()));
  }
  Distribution d;
  for (double v : values) {
    if (!std::isfinite(v) || v < 0 || v > 1e300)
      throw std::invalid_argument("a distribution value is negative, not finite or beyond 1e300");
  }
  for (double v : values) d.add(v);
  return d;
}

Distribution Distribution::from_bins(std::vector<std::pair<int32_t, int64_t>> bins, int64_t zeros) {
  Distribution d;
  d.sketch_ = true;
  if (zeros < 0 || zeros > (int64_t{1} << 40))
    throw std::invalid_argument("a distribution's zero count is negative or beyond 2^40");
  d.zeros_ = zeros;
  d.n_ = zeros;
  for (size_t i = 0; i < bins.size(); ++i) {
    if (bins[i].second <= 0 || (i > 0 && bins[i].first <= bins[i - 1].first))
      throw std::invalid_argument("distribution bins must have positive counts in rising order");
    // At most 2^40 samples in one stored distribution: merging many stays far from overflow.
    if (bins[i].second > (int64_t{1} << 40) - d.n_)
      throw std::invalid_argument("distribution bin counts exceed 2^40");
    d.n_ += bins[i].second;
  }
  d.bins_ = std::move(bins);
  return d;
}

double exact_median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t n = v.size();
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (n % 2) return *mid;
  return (*std::max_element(v.begin(), mid) + *mid) / 2;
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
