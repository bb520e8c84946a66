// Byte and duration formats (c3/common/units.h): each style as the part that uses it printed it
// before the formats were defined once; the GUI's as Qt printed them.
#include "c3/common/units.h"

#include <gtest/gtest.h>

#include <limits>

namespace c3::common {
namespace {

constexpr int64_t kKi = 1024;
constexpr int64_t kMi = kKi * kKi;
constexpr int64_t kGi = kMi * kKi;
constexpr int64_t kTi = kGi * kKi;

TEST(FormatBytes, CompactIsExactAndReadsBackAsAFlag) {
  const auto f = [](int64_t b) { return format_bytes(b, BytesStyle::compact); };
  EXPECT_EQ(f(0), "0");
  EXPECT_EQ(f(3000), "3000");
  EXPECT_EQ(f(1023), "1023");
  EXPECT_EQ(f(kKi), "1K");
  EXPECT_EQ(f(1536), "1536");  // not a whole KiB: stays exact
  EXPECT_EQ(f(64 * kMi), "64M");
  EXPECT_EQ(f(3 * kGi / 2), "1536M");
  EXPECT_EQ(f(kGi), "1G");
  EXPECT_EQ(f(kTi), "1T");
  EXPECT_EQ(f(1024 * kTi), "1024T");  // no P: c3bench's parse_size reads up to T
  EXPECT_EQ(f(-kKi), "-1024");
}

TEST(FormatBytes, CompactBMarksPlainBytes) {
  const auto f = [](int64_t b) { return format_bytes(b, BytesStyle::compact_b); };
  EXPECT_EQ(f(3000), "3000B");
  EXPECT_EQ(f(1), "1B");
  EXPECT_EQ(f(64 * kMi), "64M");
  EXPECT_EQ(f(2 * kTi), "2T");
}

TEST(FormatBytes, ExactHasIecUnits) {
  const auto f = [](int64_t b) { return format_bytes(b, BytesStyle::exact); };
  EXPECT_EQ(f(0), "0 B");
  EXPECT_EQ(f(3000), "3000 B");
  EXPECT_EQ(f(kKi), "1 KiB");
  EXPECT_EQ(f(64 * kMi), "64 MiB");
  EXPECT_EQ(f(512 * kGi), "512 GiB");
  EXPECT_EQ(f(4096 * kTi), "4096 TiB");
}

TEST(FormatBytes, OneDecimalRoundsAsPrintf) {
  const auto f = [](int64_t b) { return format_bytes(b, BytesStyle::one_decimal); };
  EXPECT_EQ(f(0), "0 B");
  EXPECT_EQ(f(512), "512 B");
  EXPECT_EQ(f(1023), "1023 B");
  EXPECT_EQ(f(kKi), "1.0 KiB");
  EXPECT_EQ(f(1536), "1.5 KiB");
  EXPECT_EQ(f(1280), "1.2 KiB");  // 1.25: a tie, to even
  EXPECT_EQ(f(1792), "1.8 KiB");  // 1.75
  EXPECT_EQ(f(85'520'809'984), "79.6 GiB");
  EXPECT_EQ(f(3 * kKi * kTi), "3.0 PiB");
  EXPECT_EQ(f(-2048), "-2.0 KiB");
}

TEST(FormatBytes, ThreeDigitsAsTheGuiShowsThem) {
  const auto f = [](int64_t b) { return format_bytes(b, BytesStyle::three_digits); };
  EXPECT_EQ(f(512), "512 B");
  EXPECT_EQ(f(1536), "1.50 KiB");
  EXPECT_EQ(f(4096), "4.00 KiB");
  EXPECT_EQ(f(1152), "1.13 KiB");            // 1.125: a tie, away from zero as Qt rounds
  EXPECT_EQ(f(10 * kKi + 256), "10.3 KiB");  // 10.25
  EXPECT_EQ(f(256 * kMi), "256 MiB");
  EXPECT_EQ(f(kGi), "1.00 GiB");
  EXPECT_EQ(f(2048 * kTi), "2048 TiB");  // TiB at most
}

TEST(FormatDuration, Report) {
  const auto f = [](double ns) { return format_duration(ns, DurationStyle::report); };
  EXPECT_EQ(f(0), "0 ns");
  EXPECT_EQ(f(950), "950 ns");
  EXPECT_EQ(f(999.6), "1.00 us");
  EXPECT_EQ(f(12'345), "12.3 us");
  EXPECT_EQ(f(39'815'000), "39.8 ms");  // issue 13: was "39815.0 us"
  EXPECT_EQ(f(-170'000), "-170 us");    // and "-170000 ns"
  EXPECT_EQ(f(999'960'000), "1.00 s");  // %.3g printed "1e+03 ms"
  EXPECT_EQ(f(123'400'000), "123 ms");
  EXPECT_EQ(f(4.2e12), "4200 s");
  EXPECT_EQ(f(99'960), "100 us");  // three digits after rounding, not "100.0"
  EXPECT_EQ(f(9'996), "10.0 us");
  EXPECT_EQ(f(1'234), "1.23 us");
  EXPECT_EQ(f(std::numeric_limits<double>::quiet_NaN()), "-");
}

TEST(FormatDuration, Timeline) {
  const auto f = [](double ns) { return format_duration(ns, DurationStyle::timeline); };
  EXPECT_EQ(f(0), "0 ns");
  EXPECT_EQ(f(950), "950 ns");
  EXPECT_EQ(f(999.5), "1000 ns");  // whole nanoseconds, a tie away from zero
  EXPECT_EQ(f(12345), "12.3 µs");
  EXPECT_EQ(f(4.56e6), "4.56 ms");
  EXPECT_EQ(f(1.2e9), "1.20 s");
  EXPECT_EQ(f(123e9), "123 s");
  EXPECT_EQ(f(-2500), "-2.50 µs");
  EXPECT_EQ(f(1125), "1.13 µs");  // 1.125: away from zero, as Qt
  EXPECT_EQ(f(-1125), "-1.13 µs");
  EXPECT_EQ(f(99'960), "100.0 µs");  // decimals chosen before rounding, unlike report
  EXPECT_EQ(f(std::numeric_limits<double>::quiet_NaN()), "nan s");
}

TEST(ThreeDigits, DecimalsByMagnitudeAndQtRounding) {
  EXPECT_EQ(three_digits(123.4, "GB/s"), "123 GB/s");
  EXPECT_EQ(three_digits(12.34, "GB/s"), "12.3 GB/s");
  EXPECT_EQ(three_digits(1.234, "MB/s"), "1.23 MB/s");
  EXPECT_EQ(three_digits(100.5, "x"), "101 x");   // printf would say "100"
  EXPECT_EQ(three_digits(2.675, "x"), "2.67 x");  // not a tie: 2.675 is 2.67499999... in binary
  EXPECT_EQ(three_digits(-0.0, "x"), "0.00 x");   // no sign on zero
  EXPECT_EQ(three_digits(-0.001, "x"), "-0.00 x");
  EXPECT_EQ(three_digits(std::numeric_limits<double>::infinity(), "x"), "inf x");
}

}  // namespace
}  // namespace c3::common
