// One duration formatter for every report (units.h): three significant digits, the unit by
// magnitude, no exponent, rounding that carries into the next unit.
#include "c3/analyzer/units.h"

#include <gtest/gtest.h>

#include <limits>

namespace c3::analyzer {
namespace {

TEST(Units, FormatDuration) {
  EXPECT_EQ(format_duration(0), "0 ns");
  EXPECT_EQ(format_duration(950), "950 ns");
  EXPECT_EQ(format_duration(999.6), "1.00 us");
  EXPECT_EQ(format_duration(12'345), "12.3 us");
  EXPECT_EQ(format_duration(39'815'000), "39.8 ms");  // issue 13: was "39815.0 us"
  EXPECT_EQ(format_duration(-170'000), "-170 us");    // and "-170000 ns"
  EXPECT_EQ(format_duration(999'960'000), "1.00 s");  // %.3g printed "1e+03 ms"
  EXPECT_EQ(format_duration(123'400'000), "123 ms");
  EXPECT_EQ(format_duration(4.2e12), "4200 s");
  EXPECT_EQ(format_duration(99'960), "100 us");  // three digits after rounding, not "100.0"
  EXPECT_EQ(format_duration(9'996), "10.0 us");
  EXPECT_EQ(format_duration(1'234), "1.23 us");
  EXPECT_EQ(format_duration(std::numeric_limits<double>::quiet_NaN()), "-");
}

}  // namespace
}  // namespace c3::analyzer
