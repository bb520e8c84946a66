// Distribution (distribution.h): exact medians while small, a bounded sketch past that, merges
// equal to one pass, and the order-statistic interval of the slowdown with its coverage checked.
#include "c3/analyzer/metrics/distribution.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

using namespace c3::analyzer;

TEST(Distribution, ExactWhileSmall) {
  Distribution d;
  for (double v : {5.0, 1.0, 4.0, 2.0}) d.add(v);
  EXPECT_TRUE(d.exact());
  EXPECT_DOUBLE_EQ(d.median(), 3.0) << "even count: mean of the middle two";
  d.add(3.5);
  EXPECT_DOUBLE_EQ(d.median(), 3.5);
  EXPECT_DOUBLE_EQ(d.at_rank(0), 1.0);
  EXPECT_DOUBLE_EQ(d.at_rank(4), 5.0);
  EXPECT_DOUBLE_EQ(Distribution().median(), 0.0);
}

TEST(Distribution, SketchIsBoundedAndAccurate) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> ln(10, 1.5);
  Distribution d;
  std::vector<double> all;
  for (int i = 0; i < 200000; ++i) {
    const double v = ln(rng);
    d.add(v);
    all.push_back(v);
  }
  EXPECT_FALSE(d.exact());
  // (While adding, a counting array of at most 16 KiB besides the bins; settle() drops it.)
  EXPECT_LT(d.bytes(), 80u * 1024) << "bounded by the value range, not by the count";
  std::sort(all.begin(), all.end());
  const Distribution added = d;
  d.settle();
  EXPECT_LT(d.bytes(), 64u * 1024) << "bounded by the value range, not by the count";
  EXPECT_EQ(d.bins(), added.bins());
  for (double q : {0.01, 0.25, 0.5, 0.9, 0.99}) {
    const double truth = all[static_cast<size_t>(q * static_cast<double>(all.size() - 1))];
    EXPECT_NEAR(d.quantile(q) / truth, 1.0, Distribution::kRelativeError * 1.01) << q;
    EXPECT_EQ(added.quantile(q), d.quantile(q)) << q;
  }
}

// A sketch counts the keys near the others in an array and keys far from them (beyond what the
// array spans) in its bins: both kinds together give the same bins, quantiles and merges as
// values added one key at a time, however they were split between the two.
TEST(Distribution, FarKeysAndNearKeysCountTogether) {
  Distribution d, reference;
  std::map<int32_t, int64_t> counts;
  const double gamma = (1 + Distribution::kRelativeError) / (1 - Distribution::kRelativeError);
  auto key = [&](double v) {
    return static_cast<int32_t>(std::ceil(std::log(v) / std::log(gamma)));
  };
  std::mt19937_64 rng(11);
  // Values from 1e-12 to 1e15 (keys about 8,700 apart: wider than the array), plus runs near 1e3.
  std::uniform_real_distribution<double> exponent(-12, 15), near(2.9, 3.1);
  for (int i = 0; i < 30000; ++i) {
    const double v = std::pow(10.0, i % 3 == 0 ? exponent(rng) : near(rng));
    d.add(v);
    ++counts[key(v)];
  }
  ASSERT_FALSE(d.exact());
  const std::vector<std::pair<int32_t, int64_t>> expected(counts.begin(), counts.end());
  const auto bins = d.bins();
  EXPECT_EQ(bins, expected);
  Distribution settled = d;
  settled.settle();
  EXPECT_EQ(settled.bins(), bins);
  for (double q : {0.0, 0.1, 0.5, 0.66, 0.9, 1.0}) EXPECT_EQ(settled.quantile(q), d.quantile(q));
  // Merging an unsettled sketch adds its array's counts too.
  Distribution m = Distribution::from_bins({}, 0);
  m.merge(d);
  EXPECT_EQ(m.bins(), bins);
  EXPECT_EQ(m.count(), d.count());
}

// A sketch's bin of v is ceil(log(v) / log(gamma)), whatever way add() computes it (a table of
// log2 rather than std::log): checked on every integer near the bins' edges, and on values from
// 1e-9 to 1e15 (fractions, nanoseconds, whole days), each alone in a sketch so its bin is known.
TEST(Distribution, SketchBinsAreTheLogBins) {
  const double gamma = (1 + Distribution::kRelativeError) / (1 - Distribution::kRelativeError);
  auto key = [&](double v) {
    return static_cast<int32_t>(std::ceil(std::log(v) / std::log(gamma)));
  };
  std::vector<double> values;
  for (int k = -2000; k <= 7000; ++k) {  // each edge gamma^k and the numbers around it
    const double edge = std::pow(gamma, k);
    for (double v : {edge, std::nextafter(edge, 0.0), std::nextafter(edge, 1e300), std::floor(edge),
                     std::ceil(edge), std::floor(edge) + 1}) {
      if (v > 0 && std::isfinite(v)) values.push_back(v);
    }
  }
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> exponent(-9, 15);
  for (int i = 0; i < 200000; ++i) values.push_back(std::pow(10.0, exponent(rng)));
  for (double v : {1.0, 2.0, 1e-300, 5e-324, 1e300}) values.push_back(v);
  // A sketch: kExact + 1 values in one bin, then the value under test.
  Distribution base;
  for (size_t i = 0; i <= Distribution::kExact; ++i) base.add(1e300);
  ASSERT_FALSE(base.exact());
  for (double v : values) {
    Distribution d = base;
    d.add(v);
    bool found = false;
    for (const auto& [k, c] : d.bins())
      found = found || (k == key(v) && c == (v == 1e300 ? 2050 : 1));
    ASSERT_TRUE(found) << "v = " << v << ": no bin " << key(v);
  }
  // In one sketch, in rising order: each value right after its neighbours, so that add() counts
  // most by the last bin's value range; the bins must be those of the formula all the same.
  std::sort(values.begin(), values.end());
  Distribution all = base;
  std::map<int32_t, int64_t> want{{key(1e300), static_cast<int64_t>(Distribution::kExact) + 1}};
  for (double v : values) {
    all.add(v);
    ++want[key(v)];
  }
  const std::vector<std::pair<int32_t, int64_t>> expected(want.begin(), want.end());
  ASSERT_EQ(all.bins(), expected);
}

TEST(Distribution, MergeEqualsOnePass) {
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> ex(1e-3);
  for (size_t n : {size_t{100}, size_t{3000}, size_t{50000}}) {
    Distribution one, a, b;
    for (size_t i = 0; i < n; ++i) {
      const double v = ex(rng);
      one.add(v);
      (i % 3 ? a : b).add(v);
    }
    a.merge(b);
    ASSERT_EQ(a.count(), one.count());
    for (double q : {0.1, 0.5, 0.9}) EXPECT_DOUBLE_EQ(a.quantile(q), one.quantile(q)) << n;
    EXPECT_DOUBLE_EQ(a.median(), one.median()) << n;
  }
}

TEST(Distribution, StoredFormsRoundTripAndAreChecked) {
  Distribution d;
  for (int i = 0; i < 5000; ++i) d.add(i % 7 == 0 ? 0.0 : 1.0 + i);
  const Distribution back = Distribution::from_bins(d.bins(), d.zeros());
  EXPECT_EQ(back.count(), d.count());
  EXPECT_DOUBLE_EQ(back.median(), d.median());
  EXPECT_THROW(Distribution::from_bins({{3, 1}, {2, 1}}, 0), std::invalid_argument);
  EXPECT_THROW(Distribution::from_bins({{3, 0}}, 0), std::invalid_argument);
  EXPECT_THROW(Distribution::from_bins({{3, INT64_MAX}, {4, INT64_MAX}}, 0), std::invalid_argument);
  EXPECT_THROW(Distribution::from_values({1.0, -2.0}), std::invalid_argument);
  EXPECT_THROW(Distribution::from_values({std::nan("")}), std::invalid_argument);
}

TEST(Distribution, MedianIntervalOrderStatistics) {
  Distribution d;
  for (int i = 1; i <= 100; ++i) d.add(i);
  double cov = 0;
  const auto [lo, hi] = d.median_interval(0.95, &cov);
  // Bin(100, 1/2): [X(40), X(61)] covers 96.5%; [X(41), X(60)] only 94.3%.
  EXPECT_DOUBLE_EQ(lo, 40);
  EXPECT_DOUBLE_EQ(hi, 61);
  EXPECT_NEAR(cov, 0.965, 0.001);
  Distribution small;
  for (int i = 1; i <= 5; ++i) small.add(i);
  const auto [slo, shi] = small.median_interval(0.95, &cov);
  EXPECT_DOUBLE_EQ(slo, 1);
  EXPECT_DOUBLE_EQ(shi, 5);
  EXPECT_NEAR(cov, 1 - 2.0 / 32, 1e-12) << "five samples: the range covers 93.75%";
}

// The slowdown interval's coverage, checked by simulation: samples alone and overlapped from
// known distributions whose true median ratio is known; the 95% interval must contain it in
// about 95% of trials (within the simulation's own error, not far above), and shrink as samples
// grow. 6000 samples exceed Distribution::kExact: the sketch's quantization is covered too.
TEST(Distribution, SlowdownIntervalCoverage) {
  std::mt19937_64 rng(2024);
  const double truth = 0.25;  // overlapped runs 25% longer at the median
  for (int n : {20, 60, 400, 6000}) {
    const int trials = n > 1000 ? 100 : 400;
    int covered = 0;
    double width = 0;
    for (int t = 0; t < trials; ++t) {
      std::lognormal_distribution<double> alone(std::log(100e3), 0.3);
      std::lognormal_distribution<double> over(std::log(100e3 * (1 + truth)), 0.4);
      Distribution x, y;
      for (int i = 0; i < n; ++i) x.add(alone(rng));
      for (int i = 0; i < n + n / 2; ++i) y.add(over(rng));
      const auto [lo, hi] = slowdown_interval(x, y);
      ASSERT_LE(lo, hi);
      covered += lo <= truth && truth <= hi;
      width += hi - lo;
    }
    const double rate = static_cast<double>(covered) / trials;
    std::printf("%d samples: coverage %.3f, mean width %.3f\n", n, rate, width / trials);
    // 400 trials: the simulated coverage itself has a standard error of about 1.1 points.
    EXPECT_GE(rate, 0.925) << n << " samples: coverage " << rate;
    EXPECT_LE(rate, n > 1000 ? 1.0 : 0.99) << n << " samples: needlessly wide, coverage " << rate;
    EXPECT_LT(width / trials, 6.0 / std::sqrt(n)) << n << " samples: mean width " << width / trials;
  }
}

// Whole nanosecond counts are held in 4 bytes; a fraction or a huge value widens to doubles
// without changing any answer.
TEST(Distribution, NarrowAndWideValuesGiveTheSameAnswers) {
  Distribution narrow, wide, mixed;
  for (int i = 1; i <= 101; ++i) {
    narrow.add(i * 1000.0);
    wide.add(i * 1000.0 + (i == 1 ? 0.5 : 0.0));
  }
  EXPECT_LT(narrow.bytes(), wide.bytes());
  EXPECT_DOUBLE_EQ(narrow.median(), 51000.0);
  EXPECT_DOUBLE_EQ(wide.median(), 51000.0);
  EXPECT_DOUBLE_EQ(wide.at_rank(0), 1000.5);
  for (int i = 1; i <= 50; ++i) mixed.add(i * 1000.0);
  Distribution big;
  big.add(1e12);  // beyond 2^32 ns: a double
  for (int i = 51; i <= 100; ++i) big.add(i * 1000.0);
  mixed.merge(big);
  EXPECT_EQ(mixed.count(), 101);
  EXPECT_DOUBLE_EQ(mixed.at_rank(100), 1e12);
  EXPECT_DOUBLE_EQ(mixed.median(), 51000.0);
  const std::vector<double> v = mixed.values();
  EXPECT_EQ(v.size(), 101u);
  EXPECT_DOUBLE_EQ(Distribution::from_values(v).median(), 51000.0);
}
