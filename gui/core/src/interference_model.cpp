#include <string>
#include <vector>

#include "c3/analyzer/metrics/interference.h"
#include "c3/analyzer/metrics/names.h"
#include "c3/gui/format.h"
#include "c3/gui/models.h"
#include "model_text.h"

namespace c3::gui {

InterferenceModel::InterferenceModel(const Document* doc, QObject* parent)
    : DocumentTableModel({"operation", "class", "n alone", "n overlapped", "median alone",
                          "median overlapped", "slowdown"},
                         doc, parent) {}

void InterferenceModel::refresh() const {
  if (fresh_ && shown_doc_ == doc_ && shown_all_ == show_all_) return;
  rows_.clear();
  names_.clear();
  shown_doc_ = doc_;
  shown_all_ = show_all_;
  fresh_ = true;
  if (doc_ == nullptr) return;
  const auto& all = doc_->report.interference;
  std::vector<std::string> sigs;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!show_all_ && !all[i].verdict()) continue;
    rows_.push_back(i);
    sigs.push_back(all[i].signature);
  }
  // Long templated names cut in the middle (the launch shape at the end tells rows apart).
  for (const std::string& s : analyzer::short_signatures(sigs)) {
    const size_t shape = s.rfind(" <<<");
    const std::string name = shape == std::string::npos ? s : s.substr(0, shape);
    const std::string tail = shape == std::string::npos ? std::string() : s.substr(shape);
    names_.push_back(qs(analyzer::elide_middle(name, 70) + tail));
  }
}

void InterferenceModel::set_show_all(bool all) {
  beginResetModel();
  show_all_ = all;
  fresh_ = false;
  endResetModel();
}

int InterferenceModel::without_verdict() const {
  if (doc_ == nullptr) return 0;
  int n = 0;
  for (const auto& x : doc_->report.interference) n += x.verdict() ? 0 : 1;
  return n;
}

int InterferenceModel::rows() const {
  refresh();
  return static_cast<int>(rows_.size());
}

TableModel::Cell InterferenceModel::cell(int row, int column) const {
  refresh();
  const analyzer::InterferenceRow& x = doc_->report.interference[rows_[static_cast<size_t>(row)]];
  using PeerWait = analyzer::InterferenceRow::PeerWait;
  switch (column) {
    case kOperation:
      return text_cell(
          names_[static_cast<size_t>(row)],
          QString("%1\n%2 in all, %3 instances (%4 partly overlapped, below the threshold)")
              .arg(qs(x.signature))
              .arg(format_duration(static_cast<double>(x.total_ns)))
              .arg(x.alone + x.overlapped + x.partial)
              .arg(x.partial));
    case kClass:
      if (x.peer_wait == PeerWait::collective) {
        return text_cell(QStringLiteral("communication (incl. peer wait)"),
                         QStringLiteral("A collective's time includes waiting for the other "
                                        "ranks (see the skew table), not only interference"));
      }
      if (x.peer_wait == PeerWait::point_to_point) {
        return text_cell(QStringLiteral("point-to-point (peer wait)"),
                         QStringLiteral("Send/Recv time is mostly waiting for the peer "
                                        "(cross-rank skew): no verdict"));
      }
      return text_cell(QString::fromUtf8(analyzer::class_name(x.cls)));
    case kAlone:
      return number_cell(QString::number(x.alone), static_cast<double>(x.alone));
    case kOverlapped:
      return number_cell(QString::number(x.overlapped), static_cast<double>(x.overlapped));
    case kMedianAlone:
      if (x.alone <= 0) return absent_cell();
      return duration_cell(x.median_alone_ns);
    case kMedianOverlapped:
      if (x.overlapped <= 0) return absent_cell();
      return duration_cell(x.median_overlapped_ns);
    case kSlowdown:
      if (x.peer_wait == PeerWait::point_to_point) {
        return absent_cell(QStringLiteral("peer wait"),
                           QStringLiteral("point-to-point: the time waits for the peer"));
      }
      if (!x.enough) {
        return absent_cell(QStringLiteral("not enough samples"),
                           QStringLiteral("fewer samples alone or overlapped than required"));
      }
      return number_cell(QString("%1 % [%2 %, %3 %]")
                             .arg(signed_number(100 * x.slowdown), signed_number(100 * x.ci_low),
                                  signed_number(100 * x.ci_high)),
                         100 * x.slowdown,
                         QStringLiteral("median(overlapped) / median(alone) - 1, with its 95% "
                                        "order-statistic interval"));
    default:
      return {};
  }
}

}  // namespace c3::gui
