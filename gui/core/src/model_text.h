// Text shared by the table models' cells (models.h): signed numbers and durations, and a
// process's label, sort key and tooltip as every per-rank table shows them.
#pragma once

#include <QString>
#include <algorithm>
#include <string>
#include <vector>

#include "c3/analyzer/open/trace.h"
#include "c3/gui/document.h"

namespace c3::gui {

QString qs(const std::string& s);
// "+12.3" / "-4.0" / "0.0" (one decimal, explicit sign unless it rounds to zero).
QString signed_number(double v, int decimals = 1);
// "+1.20 ms", "-950 ns", "0 ns".
QString signed_duration(double ns);
QString process_label(const analyzer::Trace& t, int process);
// Ranks sort numerically; processes without a rank after them, by index.
double process_sort(const analyzer::Trace& t, int process);
QString process_tooltip(const analyzer::Trace& t, int process);

// Indices of `items` ordered as their processes' ranks (rank_order: as numbers, 2 before 10),
// whatever order the report keeps them in.
template <class T>
inline std::vector<size_t> by_rank(const analyzer::Trace& t, const std::vector<T>& items) {
  std::vector<size_t> pos(t.processes.size(), 0);
  const std::vector<int> order = rank_order(t);
  for (size_t i = 0; i < order.size(); ++i) pos[static_cast<size_t>(order[i])] = i;
  std::vector<size_t> out(items.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = i;
  std::stable_sort(out.begin(), out.end(), [&](size_t x, size_t y) {
    const auto px = static_cast<size_t>(items[x].process),
               py = static_cast<size_t>(items[y].process);
    return (px < pos.size() ? pos[px] : px) < (py < pos.size() ? pos[py] : py);
  });
  return out;
}

// Row `row`'s index in the report (as it is when the order is stale: the report changed without
// a set()).
inline size_t ordered(const std::vector<size_t>& order, size_t row) {
  return row < order.size() ? order[row] : row;
}

}  // namespace c3::gui
