// A bounded, mergeable sample of non-negative values (durations, bandwidths), the form in which
// rank summaries carry interference and collective statistics (summary.h). It keeps every value
// while it holds at most kExact of them, so medians are exact on small and medium traces; past
// that it becomes a log-bucketed histogram (DDSketch, Masson, Rim and Lee, VLDB 2019) whose
// quantiles are within kRelativeError of the true ones, whatever the count. Merging two gives
// what one would hold had it seen both inputs (exactly, while the total stays exact).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace c3::analyzer {

class Distribution {
 public:
  static constexpr size_t kExact = 2048;
  static constexpr double kRelativeError = 0.005;

  void add(double v);
  void merge(const Distribution& o);

  int64_t count() const { return n_; }
  bool empty() const { return n_ == 0; }
  bool exact() const { return !sketch_; }
  // The k-th smallest value (0-based; k < count()), within kRelativeError once a sketch.
  double at_rank(int64_t k) const;
  // The median: the middle value, or the mean of the two middle values of an even count (0 when
  // empty).
  double median() const;
  // The q-quantile as the value at rank floor(q * (count - 1)) (0 when empty).
  double quantile(double q) const;

  // Distribution-free confidence interval of the median at `level` (order statistics: the
  // interval [X(j), X(n-j+1)] with the largest j whose binomial coverage 1 - 2 P(Bin(n, 1/2) < j)
  // is at least `level`). Below the count where even the sample range falls short, the range
  // is returned and `*coverage` says what it covers.
  std::pair<double, double> median_interval(double level, double* coverage = nullptr) const;

  // The stored form (summary files): exact values, or histogram bins (key, count) with the
  // count of zeros. from_parts validates and throws std::invalid_argument on a bad form.
  std::vector<double> values() const;
  std::vector<std::pair<int32_t, int64_t>> bins() const;
  int64_t zeros() const { return zeros_; }
  static Distribution from_values(const std::vector<double>& values);
  static Distribution from_bins(std::vector<std::pair<int32_t, int64_t>> bins, int64_t zeros);

  // Bytes this holds (for the summaries' size figures).
  size_t bytes() const {
    return sizeof(*this) + ints_.capacity() * sizeof(uint32_t) +
           values_.capacity() * sizeof(double) +
           bins_.capacity() * sizeof(std::pair<int32_t, int64_t>) +
           dense_.capacity() * sizeof(int64_t);
  }
  // Done adding for now: a sketch's counts move from the array add() counts in (up to 16 KiB)
  // to its bins, which hold only the keys seen. Changes no value; add() may still follow.
  void settle();

 private:
  void to_sketch();
  void sort() const;
  void widen();  // ints_ -> values_
  size_t exact_size() const { return wide_ ? values_.size() : ints_.size(); }
  bool count_dense(int32_t k);  // ++ the count of key k in dense_, when it can hold k
  // f(key, count) for each bin, in rising key order (bins_ and dense_ together), until f returns
  // false.
  template <class F>
  void for_each_bin(F&& f) const;
  template <class F>
  void for_each_exact(F&& f) const {
    if (wide_) {
      for (double v : values_) f(v);
    } else {
      for (uint32_t v : ints_) f(static_cast<double>(v));
    }
  }

  int64_t n_ = 0;
  bool sketch_ = false;
  mutable bool sorted_ = true;
  // While exact: whole numbers below 2^32 (durations in ns up to 4.29 s: the common case) in 4
  // bytes each, anything else as doubles (`wide_`).
  bool wide_ = false;
  mutable std::vector<uint32_t> ints_;
  mutable std::vector<double> values_;
  std::vector<std::pair<int32_t, int64_t>> bins_;  // once a sketch: sorted by key
  int64_t zeros_ = 0;                              // once a sketch: values <= 0
  size_t hot_ = 0;                                 // the bin add() used last
  // Once a sketch, what add() counted since settle(): the counts of the keys dense_lo_,
  // dense_lo_ + 1, ... on top of bins_ (a key is one array index away, not a search of bins_;
  // kDenseKeys keys span values a factor of 8e8 apart, wider than durations spread).
  static constexpr int64_t kDenseKeys = 2048;
  std::vector<int64_t> dense_;
  int64_t dense_lo_ = 0;
};

// The median of `v`, exactly, in linear time (selection, not a sort): the middle value, or the
// mean of the two middle values of an even count; 0 when empty.
double exact_median(std::vector<double> v);

// The `level` confidence interval of median(y) / median(x) - 1 for independent samples (Price
// and Bonett 2002: each log median's standard error from its distribution-free interval, added
// in quadrature; no resampling, so its cost does not grow with the samples). {0, 0} when a
// median or a bound is not positive.
std::pair<double, double> slowdown_interval(const Distribution& x, const Distribution& y,
                                            double level = 0.95);

}  // namespace c3::analyzer
