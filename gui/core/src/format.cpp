#include "c3/gui/format.h"

#include <cmath>

#include "c3/common/units.h"

namespace c3::gui {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

QString format_duration(double ns) {
  return qs(common::format_duration(ns, common::DurationStyle::timeline));
}

QString format_bytes(double bytes) {
  // Callers pass whole byte counts held in doubles.
  return qs(common::format_bytes(std::llround(bytes), common::BytesStyle::three_digits));
}

QString format_bandwidth(double bytes_per_s) {
  if (bytes_per_s <= 0) return "-";
  if (bytes_per_s >= 1e9) return qs(common::three_digits(bytes_per_s / 1e9, "GB/s"));
  if (bytes_per_s >= 1e6) return qs(common::three_digits(bytes_per_s / 1e6, "MB/s"));
  return qs(common::three_digits(bytes_per_s / 1e3, "kB/s"));
}

QString format_pct(double pct) {
  return QString("%1 %").arg(pct, 0, 'f', 1);
}

QString format_overlap(double pct, int64_t comm_ns) {
  return comm_ns > 0 ? format_pct(pct) : QStringLiteral("-");
}

QString count(int64_t n, const char* one, const char* many) {
  return QString("%1 %2").arg(n).arg(QString::fromUtf8(n == 1 ? one : many));
}

double tick_step(double ns_per_px, double min_px) {
  const double want = std::max(ns_per_px * min_px, 1.0);
  double step = std::pow(10.0, std::floor(std::log10(want)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (step * m >= want) return step * m;
  }
  return step * 10;
}

std::vector<Tick> ruler_ticks(double t0, double t1, double ns_per_px, double min_px,
                              double origin) {
  std::vector<Tick> out;
  const double minor = tick_step(ns_per_px, min_px / 5);
  const double major = tick_step(ns_per_px, min_px);
  if (!(t1 > t0) || minor <= 0) return out;
  // The unit follows the largest label in view (35.8 ms, not 35800 µs), with the decimals
  // that tell neighbouring major ticks apart.
  const double reach = std::max(std::fabs(t0 - origin), std::fabs(t1 - origin));
  double unit = 1;
  const char* name = "ns";
  if (reach >= 1e9) {
    unit = 1e9;
    name = "s";
  } else if (reach >= 1e6) {
    unit = 1e6;
    name = "ms";
  } else if (reach >= 1e3) {
    unit = 1e3;
    name = "µs";
  }
  const double stepu = major / unit;
  const int decimals =
      stepu >= 1 ? 0 : std::min(6, static_cast<int>(std::ceil(-std::log10(stepu) - 1e-9)));
  // Tick i sits at (i0 + i) * minor after the origin, each computed afresh (no running sum).
  const double i0 = std::ceil((t0 - origin) / minor);
  for (double i = 0; out.size() < 10000; ++i) {
    const double rel = (i0 + i) * minor;
    const double t = rel + origin;
    if (t > t1) break;
    Tick k;
    k.t = t;
    const double q = rel / major;
    k.major = std::fabs(q - std::round(q)) < 1e-6;
    if (k.major) {
      const double v = std::round(q) * major / unit;
      k.label = QString("%1 %2").arg(v, 0, 'f', decimals).arg(QString::fromUtf8(name));
    }
    out.push_back(k);
  }
  return out;
}

}  // namespace c3::gui
