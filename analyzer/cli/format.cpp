#include "format.h"

#include <cmath>
#include <cstdio>

#include "c3/analyzer/units.h"

namespace c3::cli {

std::string format_duration(int64_t ns) {
  return analyzer::format_duration(static_cast<double>(ns));
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
