// Numbers as the GUI shows them: durations with adaptive units, bytes, bandwidths (the GUI's
// styles of c3/common/units.h), and the time ruler's tick spacing.
#pragma once

#include <QString>
#include <cstdint>
#include <vector>

namespace c3::gui {

// "950 ns", "12.3 µs", "4.56 ms", "1.20 s" (three significant digits).
QString format_duration(double ns);
// "512 B", "4.00 KiB", "256 MiB", "1.00 GiB" (three significant digits).
QString format_bytes(double bytes);
// "123 GB/s" (decimal, as nccl-tests reports), "-" for 0.
QString format_bandwidth(double bytes_per_s);
// "42.1 %".
QString format_pct(double pct);
// The share of communication hidden: "42.1 %", or "-" when there was no communication (0 %
// would read "all exposed"), as the text report prints it.
QString format_overlap(double pct, int64_t comm_ns);
// "1 rank", "2 ranks", "1 process", "3 processes": a count and its noun, singular for one.
QString count(int64_t n, const char* one, const char* many);

// Ruler ticks: the smallest 1/2/5 x 10^k ns step at least `min_px` pixels apart.
struct Tick {
  double t = 0;  // ns
  bool major = false;
  QString label;  // relative to `origin`, in the step's unit; empty for minor ticks
};
double tick_step(double ns_per_px, double min_px);
std::vector<Tick> ruler_ticks(double t0, double t1, double ns_per_px, double min_px, double origin);

}  // namespace c3::gui
