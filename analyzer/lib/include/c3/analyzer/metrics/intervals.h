// Interval algebra on half-open [start, end) nanosecond intervals (docs/metrics.md notation U(S)).
// Inputs are lists of intervals; "merged" lists are sorted, disjoint and non-touching, which is
// what union_of produces and what every other function takes.
#pragma once

#include <cstdint>
#include <vector>

namespace c3::analyzer {

struct Interval {
  int64_t start = 0, end = 0;
  int64_t length() const { return end > start ? end - start : 0; }
  bool operator==(const Interval&) const = default;
};
using Intervals = std::vector<Interval>;

// U(S): sorted, merged; zero-length and reversed intervals dropped. Sorts its input.
Intervals union_of(Intervals s);
// Union of inputs already sorted by start (no sort).
Intervals union_sorted(const Intervals& s);
int64_t length(const Intervals& merged);
Intervals intersect(const Intervals& a, const Intervals& b);
Intervals subtract(const Intervals& a, const Intervals& b);
// |x ∩ U| for one interval against a merged list (binary search, then a short walk).
int64_t overlap_with(const Interval& x, const Intervals& merged);
// Clips each interval of a merged list to `window` (merged too).
Intervals clip(const Intervals& merged, const Intervals& window);

}  // namespace c3::analyzer
