// Text shared by the table models' cells (models.h): signed numbers and durations, and a
// process's label, sort key and tooltip as every per-rank table shows them.
#pragma once

#include <QString>
#include <string>

#include "c3/analyzer/open/trace.h"

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

}  // namespace c3::gui
