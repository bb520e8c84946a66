#include <algorithm>

#include "c3/gui/models.h"
#include "model_text.h"

namespace c3::gui {

RowsModel::RowsModel(Timeline* timeline, QObject* parent)
    : QAbstractItemModel(parent), timeline_(timeline) {}

void RowsModel::set(Timeline* timeline) {
  beginResetModel();
  timeline_ = timeline;
  endResetModel();
}

const std::vector<int>& RowsModel::children(int row) const {
  return row < 0 ? timeline_->roots() : timeline_->row(row).children;
}

int RowsModel::row_of(const QModelIndex& index) const {
  if (!index.isValid() || !timeline_) return -1;
  return static_cast<int>(index.internalId());
}

QModelIndex RowsModel::index_of(int timeline_row, int column) const {
  if (!timeline_ || timeline_row < 0 ||
      static_cast<size_t>(timeline_row) >= timeline_->rows().size()) {
    return {};
  }
  const std::vector<int>& sib = children(timeline_->row(timeline_row).parent);
  const auto it = std::find(sib.begin(), sib.end(), timeline_row);
  if (it == sib.end()) return {};
  return createIndex(static_cast<int>(it - sib.begin()), column,
                     static_cast<quintptr>(timeline_row));
}

QModelIndex RowsModel::index(int row, int column, const QModelIndex& parent) const {
  if (!timeline_ || !hasIndex(row, column, parent)) return {};
  const std::vector<int>& kids = children(row_of(parent));
  return createIndex(row, column, static_cast<quintptr>(kids[static_cast<size_t>(row)]));
}

QModelIndex RowsModel::parent(const QModelIndex& child) const {
  if (!timeline_ || !child.isValid()) return {};
  return index_of(timeline_->row(row_of(child)).parent);
}

int RowsModel::rowCount(const QModelIndex& parent) const {
  if (!timeline_ || parent.column() > 0) return 0;
  return static_cast<int>(children(row_of(parent)).size());
}

int RowsModel::columnCount(const QModelIndex& /*parent*/) const {
  return 1;
}

QVariant RowsModel::data(const QModelIndex& index, int role) const {
  if (!timeline_ || !index.isValid()) return {};
  const Row& r = timeline_->row(row_of(index));
  switch (role) {
    case Qt::DisplayRole:
      return qs(r.label);
    case Qt::CheckStateRole:
      return static_cast<int>(r.hidden ? Qt::Unchecked : Qt::Checked);
    case Qt::ToolTipRole: {
      if (r.kind == RowKind::group) {
        return QString("%1 (%2 rows)").arg(qs(r.label)).arg(r.children.size());
      }
      return QString("%1: %2 items").arg(qs(r.label)).arg(timeline_->size(r));
    }
    default:
      return {};
  }
}

bool RowsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!timeline_ || !index.isValid() || role != Qt::CheckStateRole) return false;
  Row& r = timeline_->row(row_of(index));
  const bool hidden = value.toInt() == static_cast<int>(Qt::Unchecked);
  if (r.hidden != hidden) {
    r.hidden = hidden;
    emit dataChanged(index, index, {Qt::CheckStateRole});
    emit rowsChangedInTimeline();
  }
  return true;
}

Qt::ItemFlags RowsModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable;
}

bool RowsModel::move(const QModelIndex& index, int delta) {
  const int row = row_of(index);
  if (row < 0 || delta == 0) return false;
  const std::vector<int>& sib = children(timeline_->row(row).parent);
  const int to = index.row() + delta;
  if (to < 0 || to >= static_cast<int>(sib.size())) return false;
  const QList<QPersistentModelIndex> parents{QPersistentModelIndex(index.parent())};
  emit layoutAboutToBeChanged(parents);
  const QModelIndexList before = persistentIndexList();
  const bool moved = timeline_->move(row, delta);
  QModelIndexList after;
  after.reserve(before.size());
  for (const QModelIndex& p : before) after << index_of(row_of(p), p.column());
  changePersistentIndexList(before, after);
  emit layoutChanged(parents);
  if (moved) emit rowsChangedInTimeline();
  return moved;
}

void RowsModel::sync_children(int row) {
  const std::vector<int>& kids = children(row);
  if (kids.empty()) return;
  const QModelIndex first = index_of(kids.front()), last = index_of(kids.back());
  emit dataChanged(first, last, {Qt::CheckStateRole});
  for (int k : kids) sync_children(k);
}

void RowsModel::sync() {
  if (!timeline_) return;
  sync_children(-1);
}

}  // namespace c3::gui
