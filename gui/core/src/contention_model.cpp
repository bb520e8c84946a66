#include <QStringList>
#include <algorithm>

#include "c3/gui/format.h"
#include "c3/gui/models.h"
#include "model_text.h"

namespace c3::gui {

ContentionModel::ContentionModel(const Document* doc, QObject* parent)
    : DocumentTableModel(
          {"device", "SM oversubscribed", "top oversubscribed kernel", "copy-engine sharing",
           "launch queueing median", "launch queueing p95", "copy bandwidth share"},
          doc, parent) {}

int ContentionModel::rows() const {
  return static_cast<int>(doc_->report.contention.size());
}

TableModel::Cell ContentionModel::cell(int row, int column) const {
  const analyzer::Trace& t = doc_->trace;
  const analyzer::Contention& c = doc_->report.contention[static_cast<size_t>(row)];
  switch (column) {
    case kDevice: {
      const analyzer::Device* d =
          t.device(static_cast<int16_t>(c.process), static_cast<int16_t>(c.device));
      QString tip = process_tooltip(t, c.process);
      if (d && !d->name.empty()) tip += QString("\n%1, %2 SMs").arg(qs(d->name)).arg(d->sm_count);
      return label_cell(QString("%1 GPU %2").arg(process_label(t, c.process)).arg(c.device),
                        process_sort(t, c.process) * 1e3 + c.device, tip);
    }
    case kOversubscribed: {
      const QString tip = QString("%1 kernels with known SM demand, %2 unknown")
                              .arg(c.kernels_with_demand)
                              .arg(c.kernels_unknown);
      if (c.kernels_with_demand == 0) return absent_cell(QStringLiteral("-"), tip);
      return duration_cell(static_cast<double>(c.oversubscribed_ns), tip);
    }
    case kTopKernel: {
      if (c.oversubscribed_kernels.empty()) return text_cell(QStringLiteral("-"));
      QStringList lines;
      lines.reserve(static_cast<qsizetype>(c.oversubscribed_kernels.size()));
      for (const auto& [name, ns] : c.oversubscribed_kernels) {
        lines << QString("%1: %2").arg(qs(name), format_duration(static_cast<double>(ns)));
      }
      return text_cell(qs(c.oversubscribed_kernels.front().first), lines.join('\n'));
    }
    case kCopySharing: {
      QStringList lines;
      lines.reserve(static_cast<qsizetype>(c.copy_overlap_by_kind.size()));
      for (const auto& [kind, ns] : c.copy_overlap_by_kind) {
        lines << QString("%1: %2").arg(qs(kind), format_duration(static_cast<double>(ns)));
      }
      return duration_cell(static_cast<double>(c.copy_overlap_ns),
                           lines.isEmpty() ? QStringLiteral("no same-direction copies ran together")
                                           : lines.join('\n'));
    }
    case kQueueMedian:
    case kQueueP95: {
      if (c.queued_kernels <= 0) {
        return absent_cell(
            QStringLiteral("-"),
            QStringLiteral("no submitted timestamps (record with --launch-latency)"));
      }
      const QString tip = QString("start - submitted over %1 kernels; max %2")
                              .arg(c.queued_kernels)
                              .arg(format_duration(c.queue_max_ns));
      return duration_cell(column == kQueueMedian ? c.queue_median_ns : c.queue_p95_ns, tip);
    }
    case kCopyShare: {
      if (c.copy_bandwidth_share.empty()) return absent_cell();
      QStringList parts;
      parts.reserve(static_cast<qsizetype>(c.copy_bandwidth_share.size()));
      double best = 0;
      for (const auto& [dir, share] : c.copy_bandwidth_share) {
        parts << QString("%1 %2").arg(qs(dir), format_pct(100 * share));
        best = std::max(best, share);
      }
      return number_cell(parts.join(QStringLiteral(", ")), 100 * best,
                         QStringLiteral("median share of the device's memory bandwidth, per "
                                        "direction"));
    }
    default:
      return {};
  }
}

}  // namespace c3::gui
