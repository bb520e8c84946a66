// Byte counts and durations as c3scope prints them. One formatter each, with the style as an
// explicit parameter: each part keeps its own look (a c3bench label "64M" reads back as a flag,
// a report column "1.5 KiB", the GUI "1.50 KiB"), and every look is defined here once.
#pragma once

#include <cstdint>
#include <string>

namespace c3::common {

enum class BytesStyle {
  // Exact, in the largest power of 1024 that divides the count, up to T: "64M", "1G", "3000".
  // c3bench's labels and flags (parse_size reads them back).
  compact,
  // As compact, a plain byte count marked B: "64M", "3000B" (analyze's collective size buckets).
  compact_b,
  // As compact with IEC units and a space: "64 MiB", "3000 B" (c3bench's charts).
  exact,
  // One decimal up to PiB: "512 B", "1.5 KiB", "79.6 GiB" (c3scope info and import).
  one_decimal,
  // Three significant digits up to TiB, as three_digits prints them: "512 B", "1.50 KiB",
  // "256 MiB" (the GUI).
  three_digits,
};
std::string format_bytes(int64_t bytes, BytesStyle style);

enum class DurationStyle {
  // Three significant digits counted after rounding, so that 99.96 us is "100 us" and 999.96 us
  // "1.00 ms"; whole nanoseconds below 1 us; "-" for NaN; ASCII "us" (the analyzer's reports).
  report,
  // three_digits in ns, µs, ms or s by magnitude, whole nanoseconds below 1 µs: "950 ns",
  // "12.3 µs", "4.56 ms", "1.20 s" (the GUI).
  timeline,
};
std::string format_duration(double ns, DurationStyle style);

// `value` with 2, 1 or 0 decimals below 10, below 100 and from 100 on, then a space and `unit`:
// "4.56 ms", "12.3 GB/s", "256 MiB". Rounds as Qt's QString::arg(double, 0, 'f', n) does (a tie
// away from zero, no sign on zero), so that the GUI's text is what it was when Qt formatted it.
std::string three_digits(double value, const char* unit);

}  // namespace c3::common
