#include <algorithm>
#include <vector>

#include "c3/gui/format.h"
#include "c3/gui/models.h"
#include "model_text.h"

namespace c3::gui {

// ---- SummaryModel ----

SummaryModel::SummaryModel(const Document* doc, QObject* parent)
    : DocumentTableModel({"scope", "span", "idle", "compute", "communication", "overlap %",
                          "exposed comm", "exposed memcpy"},
                         doc, parent) {
  SummaryModel::document_changed();
}

int SummaryModel::rows() const {
  if (doc_->report.processes.empty()) return 0;
  return static_cast<int>(doc_->report.processes.size()) + 1;
}

void SummaryModel::document_changed() {
  order_.clear();
  if (doc_ != nullptr) order_ = by_rank(doc_->trace, doc_->report.processes);
}

TableModel::Cell SummaryModel::cell(int row, int column) const {
  const analyzer::Report& r = doc_->report;
  const bool all = static_cast<size_t>(row) == r.processes.size();
  const analyzer::ScopeReport& s =
      all ? r.overall : r.processes[ordered(order_, static_cast<size_t>(row))];
  const analyzer::Breakdown& b = s.b;
  const auto share = [&](int64_t ns) {
    return b.span > 0
               ? QString("%1 of the span")
                     .arg(format_pct(100.0 * static_cast<double>(ns) / static_cast<double>(b.span)))
               : QString();
  };
  switch (column) {
    case kScope: {
      if (all) {
        return label_cell(
            QStringLiteral("all ranks"), 1e18,
            QString("sum over %1")
                .arg(count(static_cast<int64_t>(r.processes.size()), "process", "processes")));
      }
      QString tip = process_tooltip(doc_->trace, s.process);
      tip += QString("\n%1 activities").arg(b.activities);
      return label_cell(process_label(doc_->trace, s.process), process_sort(doc_->trace, s.process),
                        tip);
    }
    case kSpan:
      return duration_cell(static_cast<double>(b.span),
                           QString("busy %1, %2 activities")
                               .arg(format_duration(static_cast<double>(b.busy)))
                               .arg(b.activities));
    case kIdle:
      return duration_cell(static_cast<double>(b.idle), share(b.idle));
    case kCompute:
      return duration_cell(static_cast<double>(b.compute()), share(b.compute()));
    case kCommunication:
      return duration_cell(
          static_cast<double>(b.comm()),
          QString("%1; memory %2")
              .arg(share(b.comm()), format_duration(static_cast<double>(b.memory()))));
    case kOverlap:
      if (b.comm() <= 0)
        return absent_cell(QStringLiteral("-"), QStringLiteral("no communication"));
      return number_cell(format_overlap(b.overlap_pct, b.comm()), b.overlap_pct,
                         QString("%1 of %2 communication hidden under compute")
                             .arg(format_duration(static_cast<double>(b.overlap)),
                                  format_duration(static_cast<double>(b.comm()))));
    case kExposedComm:
      return duration_cell(static_cast<double>(b.exposed_comm),
                           QStringLiteral("communication not under compute"));
    case kExposedMemcpy:
      return duration_cell(
          static_cast<double>(b.exposed_memcpy),
          QStringLiteral("memory activity under neither compute nor communication"));
    default:
      return {};
  }
}

// ---- SkewModel ----

SkewModel::SkewModel(const Document* doc, QObject* parent)
    : DocumentTableModel({"rank", "matched", "total wait", "straggler", "clock offset"}, doc,
                         parent) {
  SkewModel::document_changed();
}

int SkewModel::rows() const {
  return static_cast<int>(doc_->report.cross.ranks.size());
}

void SkewModel::document_changed() {
  order_.clear();
  if (doc_ != nullptr) order_ = by_rank(doc_->trace, doc_->report.cross.ranks);
}

TableModel::Cell SkewModel::cell(int row, int column) const {
  const analyzer::Trace& t = doc_->trace;
  const analyzer::RankWait& w = doc_->report.cross.ranks[ordered(order_, static_cast<size_t>(row))];
  switch (column) {
    case kRank:
      return label_cell(process_label(t, w.process), process_sort(t, w.process),
                        process_tooltip(t, w.process));
    case kMatched:
      return number_cell(QString::number(w.matched), static_cast<double>(w.matched),
                         QStringLiteral("collectives matched with other ranks"));
    case kWait:
      return duration_cell(static_cast<double>(w.wait_ns),
                           QStringLiteral("sum over matched collectives of (latest start - its "
                                          "start)"));
    case kStraggler:
      return number_cell(QString::number(w.straggler_count), static_cast<double>(w.straggler_count),
                         QStringLiteral("collectives this rank arrived at last"));
    case kClockOffset: {
      const auto& clocks = doc_->report.clocks;
      const auto it =
          std::find_if(clocks.begin(), clocks.end(),
                       [&](const analyzer::ClockOffset& c) { return c.process == w.process; });
      if (it == clocks.end())
        return absent_cell(QStringLiteral("-"), QStringLiteral("not aligned"));
      QString tip = qs(it->how);
      if (it->matched > 0) tip += QString(", from %1 collectives").arg(it->matched);
      return number_cell(
          QString("%1 (%2)").arg(signed_duration(static_cast<double>(it->offset_ns)), qs(it->how)),
          static_cast<double>(it->offset_ns), tip);
    }
    default:
      return {};
  }
}

}  // namespace c3::gui
