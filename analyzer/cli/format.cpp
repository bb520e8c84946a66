#include "format.h"

#include <cmath>
#include <cstdio>

namespace c3::cli {

std::string format_duration(int64_t ns) {
  char buf[32];
  const double a = std::fabs(static_cast<double>(ns));
  if (a < 1e3)
    std::snprintf(buf, sizeof buf, "%lld ns", static_cast<long long>(ns));
  else if (a < 1e6)
    std::snprintf(buf, sizeof buf, "%.3g us", static_cast<double>(ns) / 1e3);
  else if (a < 1e9)
    std::snprintf(buf, sizeof buf, "%.3g ms", static_cast<double>(ns) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(ns) / 1e9);
  return buf;
}

std::string format_bytes(int64_t bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace c3::cli
