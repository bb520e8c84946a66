#include "c3/common/time.h"

namespace c3::common {

std::string utc_iso8601(std::time_t t) {
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string utc_now_iso8601() {
  return utc_iso8601(std::time(nullptr));
}

}  // namespace c3::common
