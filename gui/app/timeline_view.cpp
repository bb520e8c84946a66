#include "timeline_view.h"

#include <QContextMenuEvent>
#include <QFontMetrics>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentMap>
#include <algorithm>
#include <cmath>
#include <map>

#include "c3/gui/format.h"
#include "theme.h"

namespace c3::gui {

namespace {

constexpr double kZoomStep = 1.25;
constexpr double kMinNsPerPx = 0.01;  // 100 pixels per nanosecond at most

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

// Rows whose items are worth folding in parallel (below this, threads cost more than they save).
constexpr size_t kParallelRows = 6;

}  // namespace

TimelineView::TimelineView(QWidget* parent) : QAbstractScrollArea(parent) {
  setFocusPolicy(Qt::StrongFocus);
  viewport()->setMouseTracking(true);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  setMinimumSize(400, 200);
  setAttribute(Qt::WA_OpaquePaintEvent);
  viewport()->setAttribute(Qt::WA_OpaquePaintEvent);
}

void TimelineView::set_document(Document* doc) {
  doc_ = doc;
  names_.clear();
  overview_cache_ = QImage();
  sel_row_ = -1;
  sel_item_ = -1;
  links_.clear();
  has_range_ = false;
  path_.clear();
  if (path_shown_) update_path();
  // Window times count from the trace's first timestamp (see Viewport).
  vp_.origin = doc_ != nullptr && doc_->timeline ? doc_->timeline->first_ns() : 0;
  vp_.t0 = 0;
  // Thread groups (NVTX, annotations) open collapsed when the rows would not fit: every rank's
  // GPU rows are then in view at the window's size (issue 24).
  if (doc_ != nullptr && doc_->timeline) {
    const int rows = (viewport()->height() - kHeaderHeight) / kRowHeight;
    doc_->timeline->collapse_threads_to_fit(static_cast<size_t>(std::max(rows, 1)));
  }
  relayout();
  zoom_to_fit();
}

int64_t TimelineView::hit_slack() const {
  return static_cast<int64_t>(std::ceil(3 * vp_.ns_per_px));  // 3 pixels
}

int TimelineView::body_width() const {
  return std::max(1, viewport()->width() - label_w_);
}

void TimelineView::relayout() {
  lines_.clear();
  line_of_row_.clear();
  if (doc_ != nullptr && doc_->timeline) {
    const Timeline& tl = *doc_->timeline;
    line_of_row_.assign(tl.rows().size(), -1);
    int y = 0;
    const std::vector<int> rows = tl.visible_rows();
    lines_.reserve(rows.size());
    for (const int r : rows) {
      int depth = 0;
      for (int p = tl.row(r).parent; p >= 0; p = tl.row(p).parent) ++depth;
      const int h = tl.row(r).kind == RowKind::group ? kGroupHeight : kRowHeight;
      line_of_row_[static_cast<size_t>(r)] = static_cast<int>(lines_.size());
      lines_.push_back({r, y, h, depth});
      y += h;
    }
  }
  fit_labels();
  update_scrollbar();
  viewport()->update();
  emit rowsChanged();
}

void TimelineView::fit_labels() {
  // The label column grows to hold the longest label in view ("GPU 0: NVIDIA H100 80GB HBM3"
  // three levels deep), up to a third of the window; longer ones are elided, whole in the tooltip.
  int want = kLabelWidth;
  if (doc_ != nullptr && doc_->timeline) {
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics fm(font()), fmb(bold);
    for (const Line& l : lines_) {
      const Row& r = doc_->timeline->row(l.row);
      const bool group = r.kind == RowKind::group;
      const QString text = row_label(r);
      want = std::max(want, 6 + l.depth * 12 + (group ? 12 : 2) +
                                (group ? fmb : fm).horizontalAdvance(text) + 8);
    }
  }
  const int cap = std::max(kLabelWidth, std::min(kMaxLabelWidth, viewport()->width() / 3));
  const int label_w = std::min(want, cap);
  if (label_w != label_w_) {
    // Keep the same time window in the new body width.
    const double span = vp_.ns_per_px * vp_.width;
    label_w_ = label_w;
    vp_.width = body_width();
    if (span > 0) vp_.ns_per_px = span / vp_.width;
    overview_cache_ = QImage();
  }
}

QString TimelineView::row_label(const Row& r) const {
  if (r.kind == RowKind::overlap) return tr("overlap (hidden / exposed comm)");
  if (r.kind == RowKind::queue)
    return tr("%1 (max %2)").arg(QString::fromStdString(r.label)).arg(r.max_length);
  return QString::fromStdString(r.label);
}

int TimelineView::content_height() const {
  return lines_.empty() ? 0 : lines_.back().y + lines_.back().height;
}

int TimelineView::row_y(int row) const {
  if (row < 0 || static_cast<size_t>(row) >= line_of_row_.size()) return -1;
  const int l = line_of_row_[static_cast<size_t>(row)];
  return l < 0 ? -1 : lines_[static_cast<size_t>(l)].y;
}

void TimelineView::update_scrollbar() {
  const int page = std::max(1, viewport()->height() - kHeaderHeight);
  verticalScrollBar()->setPageStep(page);
  verticalScrollBar()->setSingleStep(kRowHeight);
  verticalScrollBar()->setRange(0, std::max(0, content_height() - page));
}

void TimelineView::resizeEvent(QResizeEvent* e) {
  QAbstractScrollArea::resizeEvent(e);
  // Keep the same time window across resizes; the label column's cap follows the width.
  const double span = vp_.ns_per_px * vp_.width;
  fit_labels();
  vp_.width = body_width();
  if (span > 0) vp_.ns_per_px = span / vp_.width;
  update_scrollbar();
}

void TimelineView::scrollContentsBy(int /*dx*/, int /*dy*/) {
  viewport()->update();
}

void TimelineView::clamp_window() {
  if (doc_ == nullptr || !doc_->timeline) return;
  const double first = vp_.rel(doc_->timeline->first_ns());
  const double last = vp_.rel(doc_->timeline->last_ns());
  const double span = std::max(last - first, 1000.0);
  // At most the whole trace plus 10% after it, at least 100 pixels per ns; never before the
  // trace's first timestamp, so the ruler and the status line count from 0 and never show
  // negative times (issue 24).
  vp_.ns_per_px = std::clamp(vp_.ns_per_px, kMinNsPerPx, span * 1.1 / vp_.width);
  const double w = vp_.ns_per_px * vp_.width;
  vp_.t0 = std::clamp(vp_.t0, first, std::max(first, last + span * 0.1 - w));
}

void TimelineView::set_window(int64_t t0, int64_t t1) {
  set_window_rel(vp_.rel(t0), vp_.rel(t1));
}

void TimelineView::set_window_rel(double t0, double t1) {
  vp_.width = body_width();
  if (t1 <= t0) t1 = t0 + 1;
  vp_.t0 = t0;
  vp_.ns_per_px = (t1 - t0) / vp_.width;
  clamp_window();
  viewport()->update();
  emit windowChanged();
}

void TimelineView::zoom_to_fit() {
  if (doc_ == nullptr || !doc_->timeline) {
    vp_ = Viewport{0, 1000, body_width(), 0};
    viewport()->update();
    return;
  }
  const double first = vp_.rel(doc_->timeline->first_ns());
  const double last = vp_.rel(doc_->timeline->last_ns());
  const double pad = std::max((last - first) * 0.02, 10.0);
  set_window_rel(first, last + pad);
}

void TimelineView::zoom_at(double factor, double body_x) {
  const double t = vp_.rel_at(body_x);
  vp_.ns_per_px /= factor;
  clamp_window();
  vp_.t0 = t - body_x * vp_.ns_per_px;
  clamp_window();
  viewport()->update();
  emit windowChanged();
}

void TimelineView::pan_pixels(double dx) {
  vp_.t0 += dx * vp_.ns_per_px;
  clamp_window();
  viewport()->update();
  emit windowChanged();
}

void TimelineView::zoom_to_selection() {
  if (has_range_) {
    set_window_rel(std::min(range_a_, range_b_), std::max(range_a_, range_b_));
    return;
  }
  if (doc_ != nullptr && sel_row_ >= 0 && sel_item_ >= 0) {
    const Row& r = doc_->timeline->row(sel_row_);
    const double s = vp_.rel(doc_->timeline->start(r, static_cast<size_t>(sel_item_)));
    const double e = vp_.rel(doc_->timeline->end(r, static_cast<size_t>(sel_item_)));
    const double pad = std::max((e - s) * 0.25, 50.0);
    set_window_rel(s - pad, e + pad);
  }
}

void TimelineView::select(int row, int64_t item, bool center) {
  sel_row_ = row;
  sel_item_ = item;
  links_.clear();
  if (doc_ != nullptr && row >= 0 && item >= 0) {
    doc_->timeline->reveal(row);
    relayout();
    const Row& r = doc_->timeline->row(row);
    const double s = vp_.rel(doc_->timeline->start(r, static_cast<size_t>(item)));
    const double e = vp_.rel(doc_->timeline->end(r, static_cast<size_t>(item)));
    if (center) {
      // Zoom in if the item would be narrower than a few pixels, then centre it.
      if ((e - s) / vp_.ns_per_px < 4) vp_.ns_per_px = std::max(kMinNsPerPx, (e - s) / 40);
      vp_.t0 = (s + e) / 2 - vp_.ns_per_px * vp_.width / 2;
      clamp_window();
      const int y = row_y(row);
      const int page = viewport()->height() - kHeaderHeight;
      if (y < verticalScrollBar()->value() ||
          y + kRowHeight > verticalScrollBar()->value() + page) {
        verticalScrollBar()->setValue(y - page / 2);
      }
      emit windowChanged();
    }
    emit itemSelected(row, item);
  } else {
    emit selectionCleared();
  }
  viewport()->update();
}

bool TimelineView::select_activity(size_t a) {
  if (doc_ == nullptr) return false;
  const auto [row, item] = doc_->timeline->find_activity(a);
  if (row < 0) return false;
  select(row, item, true);
  return true;
}

void TimelineView::set_links(std::vector<FlowLink> links) {
  links_ = std::move(links);
  viewport()->update();
}

void TimelineView::clear_selection() {
  sel_row_ = -1;
  sel_item_ = -1;
  links_.clear();
  has_range_ = false;
  viewport()->update();
  emit selectionCleared();
}

std::optional<std::pair<int64_t, int64_t>> TimelineView::range_selection() const {
  if (!has_range_) return std::nullopt;
  return std::make_pair(vp_.origin + std::llround(std::min(range_a_, range_b_)),
                        vp_.origin + std::llround(std::max(range_a_, range_b_)));
}

void TimelineView::set_range_selection(int64_t t0, int64_t t1) {
  has_range_ = true;
  range_a_ = vp_.rel(t0);
  range_b_ = vp_.rel(t1);
  viewport()->update();
  emit rangeSelected(t0, t1);
}

bool TimelineView::step_match(int direction) {
  if (doc_ == nullptr) return false;
  const Timeline& tl = *doc_->timeline;
  // From the selected item's start (or the window's left edge), the nearest item start in the
  // given direction over every visible row (ties: row order).
  int64_t from = vp_.t_at(0);
  int from_row = -1;
  if (sel_row_ >= 0 && sel_item_ >= 0) {
    from = tl.start(tl.row(sel_row_), static_cast<size_t>(sel_item_));
    from_row = line_of_row_.empty() ? -1 : line_of_row_[static_cast<size_t>(sel_row_)];
  }
  int best_row = -1;
  int64_t best_item = -1;
  int64_t best_t = 0;
  for (size_t l = 0; l < lines_.size(); ++l) {
    const Row& r = tl.row(lines_[l].row);
    if (r.kind == RowKind::group || r.kind == RowKind::overlap || r.kind == RowKind::queue)
      continue;
    const size_t n = tl.size(r);
    if (n == 0) continue;
    // Order: (start, line). Next: the first item after (from, from_line); previous: the last
    // item before it.
    const auto l_int = static_cast<int>(l);
    auto count_before = [&](bool inclusive) {  // items with start < from (or <= from)
      size_t lo = 0, hi = n;
      while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        const int64_t s = tl.start(r, mid);
        if (inclusive ? s <= from : s < from) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo;
    };
    int64_t k = -1;
    if (direction > 0) {
      const size_t j = count_before(l_int <= from_row);
      if (j < n) k = static_cast<int64_t>(j);
    } else {
      const size_t j = count_before(l_int < from_row);
      if (j > 0) k = static_cast<int64_t>(j - 1);
    }
    if (k < 0) continue;
    const int64_t t = tl.start(r, static_cast<size_t>(k));
    // Rows are visited in line order, so ties keep the earlier line going forward and the
    // later one going back.
    if (best_row < 0 || (direction > 0 ? t < best_t : t >= best_t)) {
      best_row = lines_[l].row;
      best_item = k;
      best_t = t;
    }
  }
  if (best_row < 0) return false;
  select(best_row, best_item, true);
  return true;
}

// ---- painting ----

void TimelineView::paintEvent(QPaintEvent* /*e*/) {
  QPainter p(viewport());
  paint_frame(p, viewport()->size());
}

void TimelineView::paint_frame(QPainter& p, const QSize& size) {
  QElapsedTimer timer;
  timer.start();
  const bool dark = is_dark(palette());
  vp_.width = std::max(1, size.width() - label_w_);
  p.fillRect(QRect(QPoint(0, 0), size), palette().color(QPalette::Base));
  paint_rows(p, size, dark);
  paint_path(p, size, dark);
  paint_links(p, size, dark);
  paint_header(p, size, dark);
  last_frame_ms_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

void TimelineView::paint_rows(QPainter& p, const QSize& size, bool dark) {
  const int top = kHeaderHeight;
  const int height = size.height() - top;
  p.save();
  p.setClipRect(0, top, size.width(), height);
  if (doc_ == nullptr || !doc_->timeline) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(QRect(0, top, size.width(), height), Qt::AlignCenter,
               tr("Open a trace: File > Open, drag a file here, or c3scope-gui TRACE.sqlite"));
    p.restore();
    return;
  }
  const Timeline& tl = *doc_->timeline;
  const std::vector<const Line*> shown = lines_in_view(height);
  const double dpr = std::max(1.0, p.device() != nullptr ? p.device()->devicePixelRatioF() : 1.0);
  const std::vector<std::vector<LodItem>> lods = fold_rows(shown, 1.0 / dpr);
  const LineColors colors = line_colors(dark);
  RowPainter items(p, tl, names_,
                   {palette(), font(), dark, dpr, label_w_, vp_.width, size.width()});
  const int scroll = verticalScrollBar()->value();
  for (size_t i = 0; i < shown.size(); ++i) {
    const Line& l = *shown[i];
    const Row& r = tl.row(l.row);
    const int y = top + l.y - scroll;
    paint_label(p, l, y, size.width(), colors);
    if (r.kind != RowKind::group) {
      items.paint(r, lods[i], y, l.height, l.row == sel_row_ ? sel_item_ : -1);
    }
  }
  paint_range(p, size, dark);
  p.setPen(colors.grid);
  p.drawLine(label_w_ - 1, top, label_w_ - 1, top + height);
  p.restore();
}

std::vector<const TimelineView::Line*> TimelineView::lines_in_view(int height) const {
  const int scroll = verticalScrollBar()->value();
  auto first = std::lower_bound(lines_.begin(), lines_.end(), scroll,
                                [](const Line& l, int y) { return l.y + l.height <= y; });
  std::vector<const Line*> shown;
  for (auto it = first; it != lines_.end() && it->y < scroll + height; ++it) shown.push_back(&*it);
  return shown;
}

std::vector<std::vector<LodItem>> TimelineView::fold_rows(const std::vector<const Line*>& shown,
                                                          double min_px) {
  // Rows in parallel when they hold many items: the fold is read-only.
  const Timeline& tl = *doc_->timeline;
  std::vector<std::vector<LodItem>> lods(shown.size());
  const Viewport v = vp_;
  auto fold = [&](size_t i) {
    const Row& r = tl.row(shown[i]->row);
    if (r.kind != RowKind::group) lods[i] = tl.lod(r, v, min_px);
  };
  std::vector<size_t> idx(shown.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  size_t items = 0;
  for (const Line* l : shown) items += tl.size(tl.row(l->row));
  QElapsedTimer fold_timer;
  fold_timer.start();
  if (shown.size() >= kParallelRows && items > 100000) {
    QtConcurrent::blockingMap(idx, fold);
  } else {
    for (const size_t i : idx) fold(i);
  }
  last_fold_ms_ = static_cast<double>(fold_timer.nsecsElapsed()) / 1e6;
  return lods;
}

TimelineView::LineColors TimelineView::line_colors(bool dark) const {
  const QPalette& pal = palette();
  return {pal.color(QPalette::Mid),
          dark ? pal.color(QPalette::Base).lighter(115) : pal.color(QPalette::AlternateBase),
          pal.color(QPalette::Highlight).lighter(dark ? 60 : 185), pal.color(QPalette::Text)};
}

void TimelineView::paint_label(QPainter& p, const Line& l, int y, int width,
                               const LineColors& colors) {
  const Row& r = doc_->timeline->row(l.row);
  const bool group = r.kind == RowKind::group;
  if (group) {
    p.fillRect(QRect(0, y, width, l.height), colors.group);
  } else if (l.row == sel_row_) {
    p.fillRect(QRect(label_w_, y, width - label_w_, l.height), colors.selected);
  }
  // Label column: indentation, disclosure triangle for groups.
  const int indent = 6 + l.depth * 12;
  p.setPen(colors.text);
  QFont f = font();
  if (group) {
    f.setBold(true);
    QPolygonF tri;
    const double cx = indent + 4, cy = y + l.height / 2.0;
    if (r.expanded) {
      tri << QPointF(cx - 4, cy - 2) << QPointF(cx + 4, cy - 2) << QPointF(cx, cy + 3);
    } else {
      tri << QPointF(cx - 2, cy - 4) << QPointF(cx + 3, cy) << QPointF(cx - 2, cy + 4);
    }
    p.setRenderHint(QPainter::Antialiasing, true);
    p.setBrush(colors.text);
    p.setPen(Qt::NoPen);
    p.drawPolygon(tri);
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setPen(colors.text);
  }
  p.setFont(f);
  const int tx = indent + (group ? 12 : 2);
  p.drawText(QRect(tx, y, label_w_ - tx - 4, l.height), Qt::AlignVCenter | Qt::AlignLeft,
             QFontMetrics(f).elidedText(row_label(r), Qt::ElideRight, label_w_ - tx - 4));
  p.setFont(font());
  p.setPen(colors.grid);
  p.drawLine(0, y + l.height - 1, width, y + l.height - 1);
}

void TimelineView::paint_range(QPainter& p, const QSize& size, bool dark) {
  // Range selection: shade outside, lines at the edges.
  if (!has_range_) return;
  const QPalette& pal = palette();
  const int top = kHeaderHeight, height = size.height() - top;
  const double a = (std::min(range_a_, range_b_) - vp_.t0) / vp_.ns_per_px + label_w_;
  const double b = (std::max(range_a_, range_b_) - vp_.t0) / vp_.ns_per_px + label_w_;
  QColor shade = pal.color(QPalette::Shadow);
  shade.setAlpha(dark ? 110 : 45);
  p.fillRect(QRectF(label_w_, top, std::max(0.0, a - label_w_), height), shade);
  p.fillRect(QRectF(b, top, std::max(0.0, size.width() - b), height), shade);
  p.setPen(QPen(pal.color(QPalette::Highlight), 1));
  p.drawLine(QPointF(a, top), QPointF(a, top + height));
  p.drawLine(QPointF(b, top), QPointF(b, top + height));
}

int TimelineView::visible_y(int row) const {
  if (doc_ == nullptr) return -1;
  const Timeline& tl = *doc_->timeline;
  for (int r = row; r >= 0; r = tl.row(r).parent) {
    const int l = line_of_row_[static_cast<size_t>(r)];
    if (l >= 0) {
      const Line& line = lines_[static_cast<size_t>(l)];
      return kHeaderHeight + line.y - verticalScrollBar()->value() + line.height / 2;
    }
  }
  return -1;
}

void TimelineView::set_path_shown(bool on) {
  path_shown_ = on;
  update_path();
  viewport()->update();
}

void TimelineView::update_path() {
  path_.clear();
  if (!path_shown_ || doc_ == nullptr || !doc_->timeline || !doc_->analyzed) return;
  const Timeline& tl = *doc_->timeline;
  std::map<int, int> top;  // process -> its group row (under its host's, when there is one)
  for (size_t r = 0; r < tl.rows().size(); ++r) {
    const Row& row = tl.rows()[r];
    if (row.kind == RowKind::group && row.process >= 0) {
      top.try_emplace(row.process, static_cast<int>(r));
    }
  }
  path_.reserve(doc_->path.size());
  for (size_t k = 0; k < doc_->path.size(); ++k) {
    const analyzer::PathSegment& s = doc_->path[k];
    PathMark m;
    m.step = k < doc_->path_step.size() ? doc_->path_step[k] : 0;
    if (s.row >= 0 && s.part != analyzer::PathPart::host) {
      m.row = tl.find_activity(static_cast<size_t>(s.row)).first;
      m.gpu = m.row >= 0;
    }
    if (m.row < 0) {
      auto it = top.find(s.process);
      if (it == top.end()) continue;
      m.row = it->second;
    }
    const int64_t off = tl.row(m.row).offset;
    m.from = s.from + off;
    m.to = s.to + off;
    path_.push_back(m);
  }
}

void TimelineView::paint_path(QPainter& p, const QSize& size, bool dark) {
  if (!path_shown_ || path_.empty() || doc_ == nullptr) return;
  p.save();
  p.setClipRect(label_w_, kHeaderHeight, size.width() - label_w_, size.height() - kHeaderHeight);
  p.setRenderHint(QPainter::Antialiasing, true);
  const QColor c = dark ? QColor(255, 120, 200) : QColor(200, 0, 120);
  const double w = vp_.width;
  const QPen outline(c, 2.2), dashed(c, 2.0, Qt::DashLine), joint(c, 1.2);
  p.setBrush(Qt::NoBrush);
  const PathMark* prev = nullptr;
  double prev_x0 = 0;
  int prev_y = -1;
  for (const PathMark& m : path_) {
    const double x0 = vp_.x_of(m.from), x1 = vp_.x_of(m.to);
    const int y = visible_y(m.row);
    // Walk order runs back in time: this piece ends where the previous one (later) starts.
    if (prev != nullptr && prev->step == m.step && y >= 0 && prev_y >= 0 && y != prev_y &&
        !(std::max(x1, prev_x0) < 0 || std::min(x1, prev_x0) > w)) {
      p.setPen(joint);
      p.drawLine(QPointF(x1 + label_w_, y), QPointF(prev_x0 + label_w_, prev_y));
    }
    prev = &m;
    prev_x0 = x0;
    prev_y = y;
    if (y < 0 || x1 < 0 || x0 > w) continue;
    const double a = std::max(x0, -4.0) + label_w_, b = std::min(x1, w + 4) + label_w_;
    if (m.gpu) {
      p.setPen(outline);
      p.drawRect(QRectF(a, y - kRowHeight / 2.0 + 2, std::max(b - a, 1.5), kRowHeight - 4));
    } else {
      p.setPen(dashed);
      p.drawLine(QPointF(a, y + kRowHeight / 2.0 - 3),
                 QPointF(std::max(b, a + 1), y + kRowHeight / 2.0 - 3));
    }
  }
  p.restore();
}

void TimelineView::paint_links(QPainter& p, const QSize& size, bool dark) {
  if (links_.empty() || doc_ == nullptr) return;
  p.save();
  p.setClipRect(label_w_, kHeaderHeight, size.width() - label_w_, size.height() - kHeaderHeight);
  p.setRenderHint(QPainter::Antialiasing, true);
  const QColor c = dark ? QColor(255, 220, 120) : QColor(120, 60, 160);
  for (const FlowLink& k : links_) {
    const int y0 = visible_y(k.from_row), y1 = visible_y(k.to_row);
    if (y0 < 0 || y1 < 0) continue;
    const QPointF a(vp_.x_of(k.from_t) + label_w_, y0);
    const QPointF b(vp_.x_of(k.to_t) + label_w_,
                    y1 + (y1 > y0 ? -kRowHeight / 2 + 2 : kRowHeight / 2 - 2));
    QPainterPath path(a);
    const double dy = (b.y() - a.y()) / 2;
    path.cubicTo(QPointF(a.x(), a.y() + dy), QPointF(b.x(), b.y() - dy), b);
    p.setPen(QPen(c, 1.6));
    p.setBrush(Qt::NoBrush);
    p.drawPath(path);
    // Arrow head along the last segment.
    const double ang = std::atan2(b.y() - (b.y() - dy), b.x() - b.x() + 1e-9);
    QPolygonF head;
    head << b << b - QPointF(5 * std::cos(ang - 0.45), 5 * std::sin(ang - 0.45))
         << b - QPointF(5 * std::cos(ang + 0.45), 5 * std::sin(ang + 0.45));
    p.setBrush(c);
    p.drawPolygon(head);
    // The host end: a marker and the call's name.
    p.drawEllipse(a, 3, 3);
    if (!k.label.isEmpty()) {
      p.setPen(c);
      p.drawText(a + QPointF(6, -4), k.label);
    }
  }
  p.restore();
}

// ---- interaction ----

const TimelineView::Line* TimelineView::line_at(int y) const {
  if (y < kHeaderHeight) return nullptr;
  const int cy = y - kHeaderHeight + verticalScrollBar()->value();
  auto it = std::upper_bound(lines_.begin(), lines_.end(), cy,
                             [](int v, const Line& l) { return v < l.y; });
  if (it == lines_.begin()) return nullptr;
  --it;
  return cy < it->y + it->height ? &*it : nullptr;
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  setFocus();
  press_pos_ = e->pos();
  press_t0_ = vp_.t0;
  press_scroll_ = verticalScrollBar()->value();
  const int x = e->pos().x(), y = e->pos().y();
  if (y < kOverviewHeight && x >= label_w_ && doc_ != nullptr) {
    drag_ = Drag::overview;
    mouseMoveEvent(e);
    return;
  }
  if (x < label_w_) {
    const Line* l = line_at(y);
    if (l == nullptr || doc_ == nullptr) return;
    if (e->button() == Qt::RightButton) {
      show_menu(e->globalPosition().toPoint(), l->row);
      return;
    }
    Row& r = doc_->timeline->row(l->row);
    if (r.kind == RowKind::group) {
      r.expanded = !r.expanded;
      relayout();
    }
    return;
  }
  const bool pan = e->button() == Qt::MiddleButton || e->button() == Qt::RightButton ||
                   (e->modifiers() & Qt::ShiftModifier) != 0 || y < kHeaderHeight;
  drag_ = pan ? Drag::pan : Drag::maybe_click;
  if (pan) viewport()->setCursor(Qt::ClosedHandCursor);
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  const QPoint d = e->pos() - press_pos_;
  switch (drag_) {
    case Drag::none:
      return;
    case Drag::overview: {
      if (doc_ == nullptr) return;
      const double first = vp_.rel(doc_->timeline->first_ns());
      const double span = std::max(1.0, vp_.rel(doc_->timeline->last_ns()) - first);
      const double t = first + (e->position().x() - label_w_) / body_width() * span;
      vp_.t0 = t - vp_.ns_per_px * vp_.width / 2;
      clamp_window();
      viewport()->update();
      emit windowChanged();
      return;
    }
    case Drag::pan:
      vp_.t0 = press_t0_ - d.x() * vp_.ns_per_px;
      clamp_window();
      verticalScrollBar()->setValue(press_scroll_ - d.y());
      viewport()->update();
      emit windowChanged();
      return;
    case Drag::maybe_click:
      if (std::abs(d.x()) < 4) return;
      drag_ = Drag::select;
      has_range_ = true;
      range_a_ = vp_.rel_at(press_pos_.x() - label_w_);
      [[fallthrough]];
    case Drag::select:
      range_b_ = vp_.rel_at(std::clamp(e->position().x(), static_cast<double>(label_w_),
                                       static_cast<double>(viewport()->width())) -
                            label_w_);
      viewport()->update();
      return;
  }
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
  const Drag d = drag_;
  drag_ = Drag::none;
  viewport()->unsetCursor();
  if (d == Drag::select) {
    const auto r = range_selection();
    if (r) emit rangeSelected(r->first, r->second);
    return;
  }
  if (d != Drag::maybe_click || doc_ == nullptr) return;
  // A click: the item under the cursor (within 3 px), else clear.
  const Line* l = line_at(e->pos().y());
  has_range_ = false;
  if (l != nullptr) {
    const Row& r = doc_->timeline->row(l->row);
    const int64_t k = doc_->timeline->hit(r, vp_.t_at(e->position().x() - label_w_), hit_slack());
    if (k >= 0) {
      select(l->row, k, false);
      return;
    }
  }
  clear_selection();
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* e) {
  if (e->pos().x() < label_w_) return;
  const Line* l = line_at(e->pos().y());
  if (l == nullptr || doc_ == nullptr) return;
  const Row& r = doc_->timeline->row(l->row);
  const int64_t k = doc_->timeline->hit(r, vp_.t_at(e->position().x() - label_w_), hit_slack());
  if (k < 0) return;
  select(l->row, k, false);
  zoom_to_selection();
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  const QPointF pos = e->position();
  const double steps = e->angleDelta().y() / 120.0;
  if (pos.x() < label_w_ || (e->modifiers() & Qt::AltModifier) != 0) {
    QAbstractScrollArea::wheelEvent(e);
    return;
  }
  if ((e->modifiers() & Qt::ShiftModifier) != 0) {
    pan_pixels(-steps * 60);
  } else if (e->angleDelta().x() != 0 && e->angleDelta().y() == 0) {
    pan_pixels(-e->angleDelta().x() / 2.0);  // horizontal wheels and touchpads
  } else {
    zoom_at(std::pow(kZoomStep, steps), pos.x() - label_w_);
  }
  e->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
  const QPoint cur = viewport()->mapFromGlobal(QCursor::pos());
  const double at =
      cur.x() > label_w_ && cur.x() < viewport()->width() ? cur.x() - label_w_ : body_width() / 2.0;
  const double fast = (e->modifiers() & Qt::ShiftModifier) != 0 ? 3 : 1;
  switch (e->key()) {
    case Qt::Key_W:
      zoom_at(kZoomStep * fast, at);
      return;
    case Qt::Key_S:
      zoom_at(1 / (kZoomStep * fast), at);
      return;
    case Qt::Key_A:
      pan_pixels(-body_width() * 0.1 * fast);
      return;
    case Qt::Key_D:
      pan_pixels(body_width() * 0.1 * fast);
      return;
    case Qt::Key_F:
      zoom_to_selection();
      return;
    case Qt::Key_0:
    case Qt::Key_Home:
      zoom_to_fit();
      return;
    case Qt::Key_Escape:
      clear_selection();
      return;
    case Qt::Key_N:
      step_match((e->modifiers() & Qt::ShiftModifier) != 0 ? -1 : 1);
      return;
    default:
      QAbstractScrollArea::keyPressEvent(e);
  }
}

QString TimelineView::tooltip_at(const QPoint& pos) const {
  if (doc_ == nullptr) return {};
  if (pos.x() < label_w_) {  // a row's label, whole (it may be elided)
    const Line* l = line_at(pos.y());
    return l == nullptr ? QString() : row_label(doc_->timeline->row(l->row)).toHtmlEscaped();
  }
  const Line* l = line_at(pos.y());
  if (l == nullptr) return {};
  const Timeline& tl = *doc_->timeline;
  const Row& r = tl.row(l->row);
  const int64_t k = tl.hit(r, vp_.t_at(pos.x() - label_w_), hit_slack());
  if (k < 0) return {};
  const auto i = static_cast<size_t>(k);
  const int64_t s = tl.start(r, i), e = tl.end(r, i);
  if (r.kind == RowKind::queue) {
    return tr("<b>%n operation(s) launched, not finished</b><br>for %1 from %2 (the stream's "
              "longest: %3)",
              nullptr, static_cast<int>(std::min<int64_t>(r.points[i].length, INT32_MAX)))
        .arg(format_duration(static_cast<double>(e - s)),
             format_duration(static_cast<double>(s - tl.first_ns())))
        .arg(r.max_length);
  }
  return QString("<b>%1</b><br>%2 at %3")
      .arg(qs(tl.name(r, i)).toHtmlEscaped(), format_duration(static_cast<double>(e - s)),
           format_duration(static_cast<double>(s - tl.first_ns())));
}

bool TimelineView::viewportEvent(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* h = static_cast<QHelpEvent*>(e);
    const QString t = tooltip_at(h->pos());
    if (t.isEmpty()) {
      QToolTip::hideText();
    } else {
      QToolTip::showText(h->globalPos(), t, viewport());
    }
    return true;
  }
  return QAbstractScrollArea::viewportEvent(e);
}

void TimelineView::show_menu(const QPoint& pos, int row) {
  QMenu menu(this);
  Timeline& tl = *doc_->timeline;
  menu.addAction(tr("Hide this row"), this, [this, row, &tl] {
    tl.row(row).hidden = true;
    relayout();
  });
  menu.addAction(tr("Move up"), this, [this, row, &tl] {
    if (tl.move(row, -1)) relayout();
  });
  menu.addAction(tr("Move down"), this, [this, row, &tl] {
    if (tl.move(row, 1)) relayout();
  });
  menu.addSeparator();
  menu.addAction(tr("Show all rows"), this, [this, &tl] {
    for (size_t i = 0; i < tl.rows().size(); ++i) tl.row(static_cast<int>(i)).hidden = false;
    relayout();
  });
  menu.addAction(tr("Expand all"), this, [this, &tl] {
    for (size_t i = 0; i < tl.rows().size(); ++i) tl.row(static_cast<int>(i)).expanded = true;
    relayout();
  });
  menu.addAction(tr("Collapse NVTX and streams"), this, [this, &tl] {
    for (size_t i = 0; i < tl.rows().size(); ++i) {
      Row& r = tl.row(static_cast<int>(i));
      // Device and NVTX thread groups (their parent is a process group).
      if (r.kind == RowKind::group && r.parent >= 0 && tl.row(r.parent).process >= 0)
        r.expanded = false;
    }
    relayout();
  });
  menu.exec(pos);
}

}  // namespace c3::gui
