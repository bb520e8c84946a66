#include "c3/common/units.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace c3::common {
namespace {

constexpr const char* kIecUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
constexpr const char* kLetterUnits[] = {"", "K", "M", "G", "T"};

// `v` with `decimals` decimals, as printf's %.*f does (a tie to even).
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// `v` with `decimals` (0 to 2) decimals, as Qt does: a tie away from zero, "nan" whatever the
// sign, and no sign on a zero.
std::string fixed_as_qt(double v, int decimals) {
  if (std::isnan(v)) return "nan";
  if (v == 0) v = 0;  // -0.0
  const double scale = decimals == 0 ? 1 : decimals == 1 ? 10 : 100;
  const double x = v * scale;
  // A tie only when v * scale is exactly k + 0.5 (fma: the product without rounding); one ulp
  // away from zero, printf rounds it away too.
  if (std::isfinite(x) && std::fabs(x - std::trunc(x)) == 0.5 && std::fma(v, scale, -x) == 0)
    v = std::nextafter(v, std::copysign(std::numeric_limits<double>::infinity(), v));
  return fixed(v, decimals);
}

// The analyzer's duration format (DurationStyle::report).
std::string report_duration(double ns) {
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
  return fixed(v, decimals) + " " + units[u];
}

// The GUI's duration format (DurationStyle::timeline).
std::string timeline_duration(double ns) {
  const double a = std::fabs(ns);
  if (a < 1e3) return std::to_string(std::llround(ns)) + " ns";
  if (a < 1e6) return three_digits(ns / 1e3, "µs");
  if (a < 1e9) return three_digits(ns / 1e6, "ms");
  return three_digits(ns / 1e9, "s");
}

}  // namespace

std::string three_digits(double value, const char* unit) {
  const double a = std::fabs(value);
  const int decimals = a >= 100 ? 0 : a >= 10 ? 1 : 2;
  return fixed_as_qt(value, decimals) + " " + unit;
}

std::string format_bytes(int64_t bytes, BytesStyle style) {
  switch (style) {
    case BytesStyle::compact:
    case BytesStyle::compact_b:
    case BytesStyle::exact: {
      int u = 0;
      int64_t b = bytes;
      while (u < 4 && b >= 1024 && b % 1024 == 0) {
        b /= 1024;
        ++u;
      }
      if (style == BytesStyle::exact) return std::to_string(b) + " " + kIecUnits[u];
      if (style == BytesStyle::compact_b && u == 0) return std::to_string(b) + "B";
      return std::to_string(b) + kLetterUnits[u];
    }
    case BytesStyle::one_decimal:
    case BytesStyle::three_digits: {
      const int max_unit = style == BytesStyle::one_decimal ? 5 : 4;
      double v = static_cast<double>(bytes);
      int u = 0;
      while (std::fabs(v) >= 1024 && u < max_unit) {
        v /= 1024;
        ++u;
      }
      if (u == 0) return std::to_string(bytes) + " B";
      if (style == BytesStyle::one_decimal) return fixed(v, 1) + " " + kIecUnits[u];
      return three_digits(v, kIecUnits[u]);
    }
  }
  return std::to_string(bytes);
}

std::string format_duration(double ns, DurationStyle style) {
  switch (style) {
    case DurationStyle::report:
      return report_duration(ns);
    case DurationStyle::timeline:
      return timeline_duration(ns);
  }
  return report_duration(ns);
}

}  // namespace c3::common
