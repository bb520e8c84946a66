// The rows of one process's devices, as the why/ analyses walk them (internal to the analyzer
// library): activities are sorted by (process, device, start, end), so a device's rows are
// contiguous and in start order, and the longest of them bounds how early a row that reaches
// into a window can start.
#pragma once

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

struct DeviceRows {
  int16_t device = 0;
  size_t begin = 0, end = 0;  // Activities rows
  int64_t longest = 0;        // the longest row's duration
};

inline std::vector<DeviceRows> device_rows(const Activities& a, int process) {
  std::vector<DeviceRows> out;
  const auto p = static_cast<int16_t>(process);
  const auto lo = std::lower_bound(a.process.begin(), a.process.end(), p);
  const auto hi = std::upper_bound(lo, a.process.end(), p);
  for (auto i = static_cast<size_t>(lo - a.process.begin()),
            n = static_cast<size_t>(hi - a.process.begin());
       i < n;) {
    DeviceRows d{a.device[i], i, i, 0};
    while (d.end < n && a.device[d.end] == d.device) {
      d.longest = std::max(d.longest, a.end[d.end] - a.start[d.end]);
      ++d.end;
    }
    out.push_back(d);
    i = d.end;
  }
  return out;
}

// A row clipped to a window interval.
struct Piece {
  int64_t start = 0, end = 0;
  size_t row = 0;
};

// Calls fn(piece) for each row of `d` with some time inside `w`, clipped to it, in start order
// (rows of no duration inside it are passed over, as unions pass them over).
template <class F>
void for_each_piece(const Activities& a, const DeviceRows& d, const Interval& w, F&& fn) {
  const auto first = a.start.begin() + static_cast<std::ptrdiff_t>(d.begin);
  const auto last = a.start.begin() + static_cast<std::ptrdiff_t>(d.end);
  const int64_t from = w.start < INT64_MIN + d.longest ? INT64_MIN : w.start - d.longest;
  auto it = w.start == INT64_MIN ? first : std::lower_bound(first, last, from);
  for (; it != last && *it < w.end; ++it) {
    const auto i = static_cast<size_t>(it - a.start.begin());
    const int64_t s = std::max(a.start[i], w.start), e = std::min(a.end[i], w.end);
    if (e > s) fn(Piece{s, e, i});
  }
}

// Several devices' pieces in (start, end, row) order.
inline void sort_pieces(std::vector<Piece>& v) {
  std::sort(v.begin(), v.end(), [](const Piece& x, const Piece& y) {
    if (x.start != y.start) return x.start < y.start;
    if (x.end != y.end) return x.end < y.end;
    return x.row < y.row;
  });
}

}  // namespace c3::analyzer
