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
  // Three significant digits, counted after rounding (99.96 is "100", not "100.0"); a value that
  // rounds up to 1000 moves to the next unit.
  auto decimals_for = [](double x) {
    for (int d = 2; d > 0; --d) {
      const double p = std::pow(10.0, d);
      if (std::fabs(std::round(x * p) / p) < std::pow(10.0, 3 - d)) return d;
    }
    return 0;
  };
  int decimals = u == 0 ? 0 : decimals_for(v);  // whole nanoseconds
  if (u < 3 &&
      std::fabs(std::round(v * std::pow(10.0, decimals)) / std::pow(10.0, decimals)) >= 1000) {
    ++u;
    v /= 1e3;
    decimals = decimals_for(v);
  }
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, units[u]);
  return buf;
}

}  // namespace c3::analyzer
