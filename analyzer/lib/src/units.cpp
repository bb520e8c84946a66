#include "c3/analyzer/units.h"

#include <cmath>
#include <cstdio>

namespace c3::analyzer {

std::string format_duration(double ns) {
  if (!std::isfinite(ns)) return "-";
  static const char* const units[] = {"ns", "us", "ms", "s"};
  const double a = std::fabs(ns);
  int u = 0;
  double scale = 1;
  while (u < 3 && a >= 1e3 * scale) {
    ++u;
    scale *= 1e3;
  }
  double v = ns / scale;
  // Three significant digits; a value that rounds up to 1000 moves to the next unit.
  int decimals = std::fabs(v) >= 100 ? 0 : std::fabs(v) >= 10 ? 1 : 2;
  if (u == 0) decimals = 0;  // whole nanoseconds
  const double p = std::pow(10.0, decimals);
  if (u < 3 && std::fabs(std::round(v * p) / p) >= 1000) {
    ++u;
    v /= 1e3;
    decimals = 2;
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, units[u]);
  return buf;
}

}  // namespace c3::analyzer
