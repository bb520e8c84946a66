// Regression decisions between a baseline and a candidate run, metric by metric
// (docs/metrics.md "Regressions"): the statistical core under `c3scope compare`.
//
// Each metric has per-step samples on both sides. Its change is median(candidate) /
// median(baseline) - 1 with a 95% interval (distribution.h slowdown_interval: order statistics,
// no resampling); equality is tested with a two-sided Mann-Whitney U test, whose p-values are
// corrected across all the metrics of one comparison by Benjamini-Hochberg; a metric regresses
// when the test rejects at alpha and it is worse by more than its threshold. Too few samples, or
// runs that cannot be compared, are inconclusive with the reason named.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace c3::analyzer {

struct MannWhitney {
  double u = 0;        // U of the first sample: pairs (x, y) with x > y, ties counting one half
  double p = 1;        // two-sided p-value
  bool exact = false;  // from the exact null distribution (no ties, both sides <= kExactMax)
  static constexpr int kExactMax = 50;
};

// The two-sided Mann-Whitney U test of x against y. Exact (the null distribution of U counted
// by recurrence) when neither side holds more than kExactMax values and no value is tied across
// all of them; otherwise the normal approximation with the tie-corrected variance and a
// continuity correction. p = 1 when a side is empty.
MannWhitney mann_whitney(const std::vector<double>& x, const std::vector<double>& y);

// Benjamini-Hochberg adjusted p-values, in the order given (each the smallest false discovery
// rate at which that test would be rejected), capped at 1.
std::vector<double> benjamini_hochberg(const std::vector<double>& p);

// not_significant: the test did not reject, but the change's interval excludes no change (a
// shift the samples suggest and the corrected test cannot confirm): neither a regression nor
// "unchanged".
enum class Verdict { regression, improvement, unchanged, not_significant, inconclusive };
// For JSON: "regression", "improvement", "unchanged", "not_significant", "inconclusive".
const char* verdict_name(Verdict v);
// As reports show it: "REGRESSION" in capitals, so that it stands out; "not significant"; the
// others by name.
const char* verdict_label(Verdict v);

// One metric of a comparison.
struct MetricSamples {
  std::string name;                         // e.g. "step_time", "exposed_comm"
  bool up_is_worse = true;                  // step time, exposed time, skew: up is worse
  std::vector<double> baseline, candidate;  // per-step samples (or one whole-run total)
  double threshold = 0.05;                  // relative change that matters
  // A whole-run total (one number a side): compared by its threshold alone.
  bool total = false;
  // The change is candidate - baseline in the metric's unit (fractions, which may be near 0 or
  // negative), not relative; `threshold` is then in that unit too.
  bool absolute = false;
  // A difference of medians of at most this (in the metric's unit) is never a regression or an
  // improvement, however significant (e.g. a step's exposed memcpy going from 10 to 20 us).
  double min_delta = 0;
};

struct DecideOptions {
  double alpha = 0.01;  // significance after the Benjamini-Hochberg correction
  int min_samples = 5;  // per side, below which a metric is inconclusive
  double level = 0.95;  // of the change's interval
  // Why the runs cannot be compared (a different GPU model, GPU count, world size, versions),
  // or empty: when set, every metric is inconclusive with this reason.
  std::string incomparable;
};

struct Decision {
  std::string name;
  Verdict verdict = Verdict::inconclusive;
  double baseline_median = 0, candidate_median = 0;
  double change = 0;      // candidate / baseline - 1 (infinite when the baseline is 0), or
                          // candidate - baseline for an absolute metric
  double lo = 0, hi = 0;  // its interval (both 0 when there is none)
  double p = 1, p_adjusted = 1;
  bool tested = false;    // took part in the test (and its correction)
  bool constant = false;  // every sample on both sides is the same value: nothing to test
  double threshold = 0;
  std::string why;  // one line: what decided it
};

// Decides every metric; the correction runs over the metrics that were tested. A metric whose
// samples are all one value on both sides (0 ns of compute in a CPU-only run) is not a test: it
// is "unchanged" and stays out of the Benjamini-Hochberg correction, where it would only dilute
// the metrics that can change.
std::vector<Decision> decide(const std::vector<MetricSamples>& metrics, const DecideOptions& o);

}  // namespace c3::analyzer
