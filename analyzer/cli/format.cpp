#include "format.h"

#include "c3/common/units.h"

namespace c3::cli {

std::string format_duration(int64_t ns) {
  return common::format_duration(static_cast<double>(ns), common::DurationStyle::report);
}

std::string format_bytes(int64_t bytes) {
  return common::format_bytes(bytes, common::BytesStyle::one_decimal);
}

}  // namespace c3::cli
