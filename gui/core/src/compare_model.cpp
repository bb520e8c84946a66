#include <array>
#include <cstdint>

#include "c3/gui/format.h"
#include "c3/gui/models.h"
#include "model_text.h"

namespace c3::gui {

namespace {

enum class Unit : uint8_t { duration, pct, count };

struct MetricValue {
  double value = 0;
  Unit unit = Unit::duration;
  bool absent = false;  // no value: overlap without communication ("-", not 0 %)
};

MetricValue metric_of(const Document& d, int row) {
  const analyzer::Breakdown& b = d.report.overall.b;
  const auto ns = [](int64_t v) { return MetricValue{static_cast<double>(v), Unit::duration}; };
  switch (row) {
    case CompareModel::kSpanRow:
      return ns(b.span);
    case CompareModel::kBusyRow:
      return ns(b.busy);
    case CompareModel::kIdleRow:
      return ns(b.idle);
    case CompareModel::kComputeRow:
      return ns(b.compute());
    case CompareModel::kCommunicationRow:
      return ns(b.comm());
    case CompareModel::kMemoryRow:
      return ns(b.memory());
    case CompareModel::kOverlapRow:
      return {b.overlap_pct, Unit::pct, b.comm() <= 0};
    case CompareModel::kExposedCommRow:
      return ns(b.exposed_comm);
    case CompareModel::kExposedMemcpyRow:
      return ns(b.exposed_memcpy);
    case CompareModel::kKernelsRow:
      return {static_cast<double>(d.report.kernels), Unit::count};
    case CompareModel::kMemcpysRow:
      return {static_cast<double>(d.report.memcpys), Unit::count};
    default:
      return {};
  }
}

QString format_metric(const MetricValue& m) {
  switch (m.unit) {
    case Unit::duration:
      return format_duration(m.value);
    case Unit::pct:
      return format_pct(m.value);
    case Unit::count:
      return QString::number(static_cast<long long>(m.value));
  }
  return {};
}

}  // namespace

CompareModel::CompareModel(const Document* a, const Document* b, QObject* parent)
    : TableModel({"metric", "A", "B", "difference"}, parent), a_(a), b_(b) {}

void CompareModel::set(const Document* a, const Document* b) {
  beginResetModel();
  a_ = a;
  b_ = b;
  endResetModel();
}

int CompareModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !a_ || !b_) return 0;
  return kMetricRows;
}

QVariant CompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o == Qt::Horizontal && role == Qt::ToolTipRole) {
    if (section == kA && a_) return a_->title();
    if (section == kB && b_) return b_->title();
    if (section == kDifference) return QStringLiteral("B - A");
  }
  return TableModel::headerData(section, o, role);
}

TableModel::Cell CompareModel::cell(int row, int column) const {
  static constexpr std::array<const char*, kMetricRows> kNames = {
      "span",      "busy",         "idle",           "compute", "communication", "memory",
      "overlap %", "exposed comm", "exposed memcpy", "kernels", "memcpys"};
  const MetricValue va = metric_of(*a_, row), vb = metric_of(*b_, row);
  switch (column) {
    case kMetric:
      return label_cell(QString::fromUtf8(kNames[static_cast<size_t>(row)]), row);
    case kA:
    case kB: {
      const MetricValue& v = column == kA ? va : vb;
      if (v.absent) return absent_cell(QStringLiteral("-"), QStringLiteral("no communication"));
      return number_cell(format_metric(v), v.value);
    }
    case kDifference: {
      if (va.absent || vb.absent)
        return absent_cell(QStringLiteral("-"), QStringLiteral("no communication on one side"));
      const double d = vb.value - va.value;
      QString text;
      switch (va.unit) {
        case Unit::duration:
          text = signed_duration(d);
          break;
        case Unit::pct:
          // Percentage points: a relative change of a percentage means little.
          return number_cell(signed_number(d) + QStringLiteral(" pp"), d,
                             QStringLiteral("percentage points"));
        case Unit::count:
          text = (d > 0 ? QStringLiteral("+") : QString()) +
                 QString::number(static_cast<long long>(d));
          break;
      }
      if (va.value != 0) text += QString(" (%1 %)").arg(signed_number(100 * d / va.value));
      return number_cell(text, d, QStringLiteral("B - A (relative to A)"));
    }
    default:
      return {};
  }
}

}  // namespace c3::gui
