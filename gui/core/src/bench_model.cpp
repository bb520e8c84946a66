#include <optional>

#include "c3/gui/models.h"
#include "model_text.h"

namespace c3::gui {

BenchModel::BenchModel(const Document* doc, QObject* parent)
    : DocumentTableModel(
          {"backend", "data", "label", "scenario", "T_comp", "T_comm", "T_c3", "compute slowdown",
           "comm slowdown", "ideal speedup", "realized speedup", "fraction of ideal"},
          doc, parent) {}

int BenchModel::rows() const {
  return static_cast<int>(doc_->trace.bench.size());
}

TableModel::Cell BenchModel::cell(int row, int column) const {
  const analyzer::BenchResult& b = doc_->trace.bench[static_cast<size_t>(row)];
  const auto pct = [](const std::optional<double>& v, const QString& tip) {
    if (!v) return absent_cell(QStringLiteral("-"), tip);
    return number_cell(signed_number(100 * *v) + QStringLiteral(" %"), 100 * *v, tip);
  };
  const auto ratio = [](const std::optional<double>& v, const QString& tip) {
    if (!v) return absent_cell(QStringLiteral("-"), tip);
    return number_cell(QString::number(*v, 'f', 2), *v, tip);
  };
  switch (column) {
    case kBackend:
      return text_cell(qs(b.backend), process_tooltip(doc_->trace, b.process));
    case kData:
      return b.simulated
                 ? text_cell(QStringLiteral("simulated"),
                             QStringLiteral("the sim backend's predictions, not measurements"))
                 : text_cell(QStringLiteral("real"), QStringLiteral("measured on GPUs"));
    case kLabel:
      return text_cell(qs(b.label), qs(b.label));
    case kScenario:
      return text_cell(qs(b.scenario));
    case kTComp:
      return duration_cell(b.t_comp, QStringLiteral("compute alone (median)"));
    case kTComm:
      return duration_cell(b.t_comm, QStringLiteral("communication alone (median)"));
    case kTC3:
      return duration_cell(b.t_c3, QStringLiteral("both concurrently (median)"));
    case kComputeSlowdown:
      return pct(b.compute_slowdown, QStringLiteral("compute's slowdown when concurrent"));
    case kCommSlowdown:
      return pct(b.comm_slowdown, QStringLiteral("communication's slowdown when concurrent"));
    case kIdealSpeedup:
      return ratio(b.ideal_speedup, QStringLiteral("(T_comp + T_comm) / max(T_comp, T_comm)"));
    case kRealizedSpeedup:
      return ratio(b.realized_speedup, QStringLiteral("(T_comp + T_comm) / T_c3"));
    case kFractionOfIdeal:
      return ratio(b.fraction_of_ideal, QStringLiteral("share of the ideal speedup realized"));
    default:
      return {};
  }
}

}  // namespace c3::gui
