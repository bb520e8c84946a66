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
#include <array>
#include <cmath>

#include "c3/analyzer/names.h"
#include "c3/gui/format.h"
#include "theme.h"

namespace c3::gui {

using analyzer::Class;

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

const TimelineView::NameText& TimelineView::name_text(const std::string& name,
                                                      const QFontMetrics& fm, bool kernel) {
  auto& cache = kernel ? kernel_names_ : names_;
  auto it = cache.find(name);
  if (it == cache.end()) {
    if (cache.size() > 100000) cache.clear();
    NameText nt;
    // Kernels under their short name, as Nsight draws them (the full one in the tooltip and the
    // details).
    nt.text = QString::fromStdString(kernel ? analyzer::short_kernel_name(name) : name);
    nt.width = fm.horizontalAdvance(nt.text);
    it = cache.emplace(name, std::move(nt)).first;
  }
  return it->second;
}

void TimelineView::set_document(Document* doc) {
  doc_ = doc;
  names_.clear();
  kernel_names_.clear();
  overview_cache_ = QImage();
  sel_row_ = -1;
  sel_item_ = -1;
  links_.clear();
  has_range_ = false;
  // Window times count from the trace's first timestamp (see Viewport).
  vp_.origin = doc_ != nullptr && doc_->timeline ? doc_->timeline->first_ns() : 0;
  vp_.t0 = 0;
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
  // At most the whole trace plus 10% on each side, at least 100 pixels per ns.
  vp_.ns_per_px = std::clamp(vp_.ns_per_px, kMinNsPerPx, span * 1.2 / vp_.width);
  const double w = vp_.ns_per_px * vp_.width;
  vp_.t0 =
      std::clamp(vp_.t0, first - span * 0.1, std::max(first - span * 0.1, last + span * 0.1 - w));
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
  const double pad = std::max((last - first) * 0.01, 10.0);
  set_window_rel(first - pad, last + pad);
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
    if (r.kind == RowKind::group || r.kind == RowKind::overlap) continue;
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
  paint_links(p, size, dark);
  paint_header(p, size, dark);
  last_frame_ms_ = static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

void TimelineView::paint_rows(QPainter& p, const QSize& size, bool dark) {
  const QPalette& pal = palette();
  const int top = kHeaderHeight;
  const int scroll = verticalScrollBar()->value();
  const int height = size.height() - top;
  p.save();
  p.setClipRect(0, top, size.width(), height);
  if (doc_ == nullptr || !doc_->timeline) {
    p.setPen(pal.color(QPalette::PlaceholderText));
    p.drawText(QRect(0, top, size.width(), height), Qt::AlignCenter,
               tr("Open a trace: File > Open, drag a file here, or c3scope-gui TRACE.sqlite"));
    p.restore();
    return;
  }
  const Timeline& tl = *doc_->timeline;
  // The lines in view.
  auto first = std::lower_bound(lines_.begin(), lines_.end(), scroll,
                                [](const Line& l, int y) { return l.y + l.height <= y; });
  std::vector<const Line*> shown;
  for (auto it = first; it != lines_.end() && it->y < scroll + height; ++it) shown.push_back(&*it);
  // Fold each row's items for this window (rows in parallel: the fold is read-only).
  const double dpr = std::max(1.0, p.device() != nullptr ? p.device()->devicePixelRatioF() : 1.0);
  const double min_px = 1.0 / dpr;  // fold below one device pixel
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

  const QFontMetrics fm(font());
  const int label_w = label_w_;
  const QColor grid = pal.color(QPalette::Mid);
  const QColor alt =
      dark ? pal.color(QPalette::Base).lighter(115) : pal.color(QPalette::AlternateBase);
  const QColor text = pal.color(QPalette::Text);
  // Item colours by class bits, single [0] or folded [1] (darker: "dense"), worked out once per
  // frame rather than per item (QColor::darker goes through HSV).
  std::array<std::array<QColor, 2>, 16> class_fill;
  for (unsigned bits = 0; bits < 16; ++bits) {
    const QColor c = classes_color(static_cast<uint8_t>(bits), dark);
    class_fill[bits] = {c, c.darker(dark ? 80 : 115)};
  }
  const std::array<QColor, 2> hidden_fill{hidden_color(dark),
                                          hidden_color(dark).darker(dark ? 80 : 115)},
      exposed_fill{exposed_color(dark), exposed_color(dark).darker(dark ? 80 : 115)};
  for (size_t i = 0; i < shown.size(); ++i) {
    const Line& l = *shown[i];
    const Row& r = tl.row(l.row);
    const int y = top + l.y - scroll;
    const QRect row_rect(label_w, y, size.width() - label_w, l.height);
    if (r.kind == RowKind::group) {
      p.fillRect(QRect(0, y, size.width(), l.height), alt);
    } else if (l.row == sel_row_) {
      p.fillRect(row_rect, pal.color(QPalette::Highlight).lighter(dark ? 60 : 185));
    }
    // Label column: indentation, disclosure triangle for groups.
    const int indent = 6 + l.depth * 12;
    p.setPen(text);
    QFont f = font();
    if (r.kind == RowKind::group) {
      f.setBold(true);
      QPolygonF tri;
      const double cx = indent + 4, cy = y + l.height / 2.0;
      if (r.expanded) {
        tri << QPointF(cx - 4, cy - 2) << QPointF(cx + 4, cy - 2) << QPointF(cx, cy + 3);
      } else {
        tri << QPointF(cx - 2, cy - 4) << QPointF(cx + 3, cy) << QPointF(cx - 2, cy + 4);
      }
      p.setRenderHint(QPainter::Antialiasing, true);
      p.setBrush(text);
      p.setPen(Qt::NoPen);
      p.drawPolygon(tri);
      p.setRenderHint(QPainter::Antialiasing, false);
      p.setPen(text);
    }
    p.setFont(f);
    const int tx = indent + (r.kind == RowKind::group ? 12 : 2);
    const QString label = row_label(r);
    p.drawText(QRect(tx, y, label_w - tx - 4, l.height), Qt::AlignVCenter | Qt::AlignLeft,
               QFontMetrics(f).elidedText(label, Qt::ElideRight, label_w - tx - 4));
    p.setFont(font());
    p.setPen(grid);
    p.drawLine(0, y + l.height - 1, size.width(), y + l.height - 1);
    if (r.kind == RowKind::group) continue;
    // Items. Neighbouring rectangles of one colour that touch (folded runs, mostly) are drawn
    // as one: a zoomed-out row costs a few hundred fills, not one per device pixel.
    const int iy = y + 2, ih = l.height - 4;
    const double right = size.width();
    const double touch = 0.5 / dpr;
    QRectF pending;
    QColor pending_color;
    const QColor nvtx = nvtx_color(r.nvtx_depth, dark);
    const std::array<QColor, 2> nvtx_fill{nvtx, nvtx.darker(dark ? 80 : 115)};
    int64_t own_argb = -1;
    std::array<QColor, 2> own_fill;
    auto flush = [&] {
      if (!pending.isNull()) p.fillRect(pending, pending_color);
      pending = QRectF();
    };
    for (const LodItem& it : lods[i]) {
      const double x0 = std::max(it.x0, -2.0) + label_w;
      const double x1 = std::min(it.x1, static_cast<double>(vp_.width) + 2) + label_w;
      if (x1 < label_w || x0 > right) continue;
      const size_t folded = it.count > 1 ? 1 : 0;  // folded blocks read as "dense"
      QColor c = r.kind == RowKind::overlap
                     ? ((it.classes & (1u << static_cast<unsigned>(OverlapKind::exposed))) != 0
                            ? exposed_fill[folded]
                            : hidden_fill[folded])
                 : r.kind == RowKind::nvtx ? nvtx_fill[folded]
                                           : class_fill[it.classes & 15u][folded];
      if (r.kind == RowKind::nvtx) {
        // The colour the application gave the range (nvtxEventAttributes_t), as Nsight draws
        // it; a folded block takes its first range's.
        const int64_t argb = tl.trace().ranges[r.items[it.first]].color;
        if (argb >= 0) {
          if (argb != own_argb) {  // QColor::darker goes through HSV: once per colour run
            const QColor own = QColor::fromRgb(static_cast<QRgb>(argb) | 0xff000000u);
            own_fill = {own, own.darker(dark ? 80 : 115)};
            own_argb = argb;
          }
          c = own_fill[folded];
        }
      }
      const QRectF rect(x0, iy, std::max(x1 - x0, 1.0 / dpr), ih);
      const bool selected =
          l.row == sel_row_ && it.count == 1 && static_cast<int64_t>(it.first) == sel_item_;
      const bool named = it.count == 1 && x1 - x0 > 36;
      if (!selected && !named) {
        if (!pending.isNull() && c == pending_color && rect.left() <= pending.right() + touch) {
          pending.setRight(std::max(pending.right(), rect.right()));
        } else {
          flush();
          pending = rect;
          pending_color = c;
        }
        continue;
      }
      flush();
      p.fillRect(rect, c);
      if (selected) {
        p.setBrush(Qt::NoBrush);
        p.setPen(QPen(pal.color(QPalette::Highlight), 2));
        p.drawRect(rect.adjusted(-1, -1, 1, 1));
      }
      if (named) {
        const double lx = std::max(x0, static_cast<double>(label_w)) + 3;
        const int w = static_cast<int>(std::min(x1, right) - lx - 3);
        if (w > 12) {
          // Names are measured once per frame-independent string; ones that do not fit are cut
          // by the average character width (elidedText's full layout per item is what made
          // mid-zoom frames slow) and clipped to their rectangle.
          const NameText& nt = name_text(tl.name(r, it.first), fm, r.kind == RowKind::stream);
          p.setPen(text_on(c));
          const QString shown_text =
              nt.width <= w
                  ? nt.text
                  : nt.text.left(std::max(1, w / std::max(1, fm.averageCharWidth()) - 1)) +
                        QChar(0x2026);
          p.drawText(QRectF(lx, iy, w, ih), Qt::AlignVCenter | Qt::AlignLeft, shown_text);
        }
      }
    }
    flush();
  }
  // Range selection: shade outside, lines at the edges.
  if (has_range_) {
    const double a = (std::min(range_a_, range_b_) - vp_.t0) / vp_.ns_per_px + label_w;
    const double b = (std::max(range_a_, range_b_) - vp_.t0) / vp_.ns_per_px + label_w;
    QColor shade = pal.color(QPalette::Shadow);
    shade.setAlpha(dark ? 110 : 45);
    p.fillRect(QRectF(label_w, top, std::max(0.0, a - label_w), height), shade);
    p.fillRect(QRectF(b, top, std::max(0.0, size.width() - b), height), shade);
    p.setPen(QPen(pal.color(QPalette::Highlight), 1));
    p.drawLine(QPointF(a, top), QPointF(a, top + height));
    p.drawLine(QPointF(b, top), QPointF(b, top + height));
  }
  p.setPen(grid);
  p.drawLine(label_w - 1, top, label_w - 1, top + height);
  p.restore();
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

void TimelineView::paint_header(QPainter& p, const QSize& size, bool dark) {
  const QPalette& pal = palette();
  const int w = size.width();
  p.fillRect(QRect(0, 0, w, kHeaderHeight), pal.color(QPalette::Window));
  // Legend in the corner above the labels.
  {
    struct Entry {
      QColor c;
      QString name;
    };
    const Entry entries[] = {{class_color(Class::compute, dark), tr("compute")},
                             {class_color(Class::communication, dark), tr("comm")},
                             {class_color(Class::memory, dark), tr("memory")},
                             {class_color(Class::other, dark), tr("other")},
                             {hidden_color(dark), tr("hidden comm")},
                             {exposed_color(dark), tr("exposed comm")}};
    QFont f = font();
    f.setPointSizeF(f.pointSizeF() * 0.85);
    p.setFont(f);
    const QFontMetrics fm(f);
    int x = 6, y = 4;
    for (const Entry& e : entries) {
      const int ew = 14 + fm.horizontalAdvance(e.name) + 8;
      if (x + ew > label_w_ - 4) {
        x = 6;
        y += fm.height() + 2;
      }
      p.fillRect(QRect(x, y + 2, 10, fm.height() - 4), e.c);
      p.setPen(pal.color(QPalette::WindowText));
      p.drawText(QPoint(x + 14, y + fm.ascent()), e.name);
      x += ew;
    }
    p.setFont(font());
  }
  const int bw = w - label_w_;
  if (doc_ == nullptr || !doc_->timeline || bw <= 0) return;
  const Timeline& tl = *doc_->timeline;
  // Overview strip: busy share per class over the whole trace, the visible window outlined.
  const QRect ov(label_w_, 2, bw, kOverviewHeight - 4);
  // The strip only changes with the document, its width, the palette and the pixel ratio: drawn
  // once into a cached image.
  const double dpr = std::max(1.0, p.device() != nullptr ? p.device()->devicePixelRatioF() : 1.0);
  if (overview_cache_.isNull() || overview_key_ != QSize(bw, dark ? -1 : 1) ||
      overview_dpr_ != dpr || overview_doc_ != doc_) {
    QImage img(QSize(bw, ov.height()) * dpr, QImage::Format_ARGB32_Premultiplied);
    img.setDevicePixelRatio(dpr);
    img.fill(pal.color(QPalette::Base));
    QPainter ip(&img);
    const auto& buckets = doc_->overview;
    if (!buckets.empty()) {
      const double per_px = static_cast<double>(buckets.size()) / bw;
      for (int x = 0; x < bw; ++x) {
        const auto b0 = static_cast<size_t>(x * per_px);
        const auto b1 = std::max(b0 + 1, static_cast<size_t>((x + 1) * per_px));
        std::array<float, analyzer::kClasses> sum{};
        for (size_t b = b0; b < b1 && b < buckets.size(); ++b) {
          for (size_t c = 0; c < sum.size(); ++c) sum[c] += buckets[b][c];
        }
        // Stack compute (bottom), memory, communication (top), heights by busy share of the GPUs.
        double y = ov.height();
        const auto n = static_cast<double>(b1 - b0);
        const double unit = (ov.height() - 2) / 3.0;
        for (const Class c : {Class::compute, Class::memory, Class::communication}) {
          const double h =
              std::min(1.0, static_cast<double>(sum[static_cast<size_t>(c)]) / n) * unit;
          if (h <= 0) continue;
          ip.fillRect(QRectF(x, y - h, 1, h), class_color(c, dark));
          y -= h;
        }
      }
    }
    ip.end();
    overview_cache_ = std::move(img);
    overview_key_ = QSize(bw, dark ? -1 : 1);
    overview_dpr_ = dpr;
    overview_doc_ = doc_;
  }
  p.drawImage(ov.topLeft(), overview_cache_);
  const double first = vp_.rel(tl.first_ns());
  const double span = std::max(1.0, vp_.rel(tl.last_ns()) - first);
  const double wx0 = ov.left() + (vp_.t0 - first) / span * bw;
  const double wx1 = ov.left() + (vp_.t1() - first) / span * bw;
  QColor win = pal.color(QPalette::Highlight);
  win.setAlpha(60);
  p.fillRect(QRectF(wx0, ov.top(), std::max(2.0, wx1 - wx0), ov.height()), win);
  p.setPen(QPen(pal.color(QPalette::Highlight), 1));
  p.drawRect(QRectF(wx0, ov.top(), std::max(2.0, wx1 - wx0), ov.height() - 1));
  p.setPen(pal.color(QPalette::Mid));
  p.drawRect(ov.adjusted(0, 0, -1, -1));

  // Ruler: ticks relative to the trace's start, labels in adaptive units.
  const int ry = kOverviewHeight;
  p.fillRect(QRect(label_w_, ry, bw, kRulerHeight), pal.color(QPalette::Window));
  p.setPen(pal.color(QPalette::WindowText));
  // Window times are already relative to the trace's first timestamp (Viewport::origin).
  const std::vector<Tick> ticks = ruler_ticks(vp_.t0, vp_.t1(), vp_.ns_per_px, 90, first);
  ruler_labels_.clear();
  for (const Tick& t : ticks) {
    const double x = (t.t - vp_.t0) / vp_.ns_per_px + label_w_;
    if (x < label_w_) continue;
    p.drawLine(QPointF(x, ry + kRulerHeight - (t.major ? 10 : 4)),
               QPointF(x, ry + kRulerHeight - 1));
    if (t.major) {
      p.drawText(QPointF(x + 3, ry + 12), t.label);
      ruler_labels_.push_back(t.label);
    }
  }
  // The window's width, right-aligned.
  const QString width_label = tr("window %1").arg(format_duration(vp_.ns_per_px * bw));
  p.drawText(QRect(0, ry, label_w_ - 6, kRulerHeight), Qt::AlignVCenter | Qt::AlignRight,
             width_label);
  p.setPen(pal.color(QPalette::Mid));
  p.drawLine(0, kHeaderHeight - 1, w, kHeaderHeight - 1);
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
