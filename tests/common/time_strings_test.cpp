// UTC timestamps (c3/common/time.h) and string helpers (c3/common/strings.h).
#include <gtest/gtest.h>

#include <regex>

#include "c3/common/strings.h"
#include "c3/common/time.h"

namespace c3::common {
namespace {

TEST(Time, Iso8601Utc) {
  EXPECT_EQ(utc_iso8601(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(utc_iso8601(1'796'312'129), "2026-12-03T15:35:29Z");
  EXPECT_TRUE(
      std::regex_match(utc_now_iso8601(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
}

TEST(Strings, Split) {
  using V = std::vector<std::string>;
  EXPECT_EQ(split("gemm:8x8x8:bf16", ':'), (V{"gemm", "8x8x8", "bf16"}));
  EXPECT_EQ(split("a::b:", ':'), (V{"a", "", "b", ""}));
  EXPECT_EQ(split("", ','), V{""});
  EXPECT_EQ(split("1,2,4", ','), (V{"1", "2", "4"}));
}

TEST(Strings, ParseInt) {
  EXPECT_EQ(parse_int("1000"), 1000);
  EXPECT_EQ(parse_int("-12"), -12);
  EXPECT_EQ(parse_int("9223372036854775807"), INT64_MAX);
  for (const char* bad : {"", " 1", "1 ", "1k", "+1", "0x10", "9223372036854775808"}) {
    EXPECT_EQ(parse_int(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace c3::common
