#include "c3/analyzer/metrics/intervals.h"

#include <algorithm>

namespace c3::analyzer {

Intervals union_sorted(const Intervals& s) {
  Intervals out;
  for (const Interval& x : s) {
    if (x.end <= x.start) continue;
    if (!out.empty() && x.start <= out.back().end) {
      out.back().end = std::max(out.back().end, x.end);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

Intervals union_of(Intervals s) {
  std::sort(s.begin(), s.end(), [](const Interval& a, const Interval& b) {
    return a.start < b.start || (a.start == b.start && a.end < b.end);
  });
  return union_sorted(s);
}

int64_t length(const Intervals& merged) {
  int64_t n = 0;
  for (const Interval& x : merged) n += x.length();
  return n;
}

Intervals intersect(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t s = std::max(a[i].start, b[j].start);
    const int64_t e = std::min(a[i].end, b[j].end);
    if (s < e) out.push_back({s, e});
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

Intervals subtract(const Intervals& a, const Intervals& b) {
  Intervals out;
  size_t j = 0;
  for (const Interval& x : a) {
    int64_t cur = x.start;
    while (j < b.size() && b[j].end <= cur) ++j;
    size_t k = j;
    while (k < b.size() && b[k].start < x.end) {
      if (b[k].start > cur) out.push_back({cur, b[k].start});
      cur = std::max(cur, b[k].end);
      if (cur >= x.end) break;
      ++k;
    }
    if (cur < x.end) out.push_back({cur, x.end});
  }
  return out;
}

int64_t overlap_with(const Interval& x, const Intervals& merged) {
  if (x.end <= x.start || merged.empty()) return 0;
  // First merged interval ending after x.start.
  auto it = std::upper_bound(merged.begin(), merged.end(), x.start,
                             [](int64_t v, const Interval& m) { return v < m.end; });
  int64_t n = 0;
  for (; it != merged.end() && it->start < x.end; ++it) {
    n += std::min(it->end, x.end) - std::max(it->start, x.start);
  }
  return n;
}

Intervals clip(const Intervals& merged, const Intervals& window) {
  return intersect(merged, window);
}

}  // namespace c3::analyzer
