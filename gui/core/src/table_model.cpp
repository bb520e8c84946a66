#include <cmath>
#include <limits>
#include <utility>

#include "c3/gui/format.h"
#include "c3/gui/models.h"
#include "model_text.h"

namespace c3::gui {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

QString signed_number(double v, int decimals) {
  const double scale = std::pow(10.0, decimals);
  if (std::round(v * scale) == 0) return QString::number(0.0, 'f', decimals);
  return (v > 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', decimals);
}

QString signed_duration(double ns) {
  if (ns == 0) return format_duration(0);
  return (ns > 0 ? QStringLiteral("+") : QString()) + format_duration(ns);
}

QString process_label(const analyzer::Trace& t, int process) {
  if (process < 0 || static_cast<size_t>(process) >= t.processes.size()) return QStringLiteral("?");
  return qs(t.processes[static_cast<size_t>(process)].label());
}

double process_sort(const analyzer::Trace& t, int process) {
  if (process < 0 || static_cast<size_t>(process) >= t.processes.size()) return -1;
  const analyzer::Process& p = t.processes[static_cast<size_t>(process)];
  return p.rank ? static_cast<double>(*p.rank) : 1e12 + process;
}

QString process_tooltip(const analyzer::Trace& t, int process) {
  if (process < 0 || static_cast<size_t>(process) >= t.processes.size()) return {};
  const analyzer::Process& p = t.processes[static_cast<size_t>(process)];
  QString tip = QString("pid %1").arg(p.pid);
  if (!p.host.empty()) tip += QString(" on %1").arg(qs(p.host));
  if (!p.source.empty()) tip += QString("\n%1").arg(qs(p.source));
  return tip;
}

// ---- TableModel ----

TableModel::TableModel(QStringList headers, QObject* parent)
    : QAbstractTableModel(parent), headers_(std::move(headers)) {}

int TableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(headers_.size());
}

QVariant TableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o == Qt::Horizontal && role == Qt::DisplayRole && section >= 0 && section < headers_.size()) {
    return headers_[section];
  }
  return QAbstractTableModel::headerData(section, o, role);
}

QVariant TableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.parent().isValid() || index.row() >= rowCount() ||
      index.column() >= columnCount()) {
    return {};
  }
  switch (role) {
    case Qt::DisplayRole:
      return cell(index.row(), index.column()).text;
    case kSortRole:
      return cell(index.row(), index.column()).sort;
    case Qt::TextAlignmentRole: {
      const Qt::Alignment align =
          (cell(index.row(), index.column()).right ? Qt::AlignRight : Qt::AlignLeft) |
          Qt::AlignVCenter;
      return align.toInt();
    }
    case Qt::ToolTipRole: {
      const Cell c = cell(index.row(), index.column());
      if (c.tooltip.isEmpty()) return {};
      return c.tooltip;
    }
    default:
      return extra(index.row(), role);
  }
}

TableModel::Cell TableModel::text_cell(const QString& text, const QString& tooltip) {
  return {text, text, tooltip, false};
}

TableModel::Cell TableModel::label_cell(const QString& text, double sort, const QString& tooltip) {
  return {text, sort, tooltip, false};
}

TableModel::Cell TableModel::number_cell(const QString& text, double sort, const QString& tooltip) {
  return {text, sort, tooltip, true};
}

TableModel::Cell TableModel::duration_cell(double ns, const QString& tooltip) {
  return {format_duration(ns), ns, tooltip, true};
}

TableModel::Cell TableModel::absent_cell(const QString& text, const QString& tooltip) {
  return {text, -std::numeric_limits<double>::infinity(), tooltip, true};
}

int DocumentTableModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !doc_) return 0;
  return rows();
}

void DocumentTableModel::set(const Document* doc) {
  beginResetModel();
  doc_ = doc;
  document_changed();
  endResetModel();
}

}  // namespace c3::gui
