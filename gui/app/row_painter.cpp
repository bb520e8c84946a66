#include "row_painter.h"

#include <QChar>
#include <QPen>
#include <algorithm>

#include "c3/analyzer/metrics/names.h"
#include "theme.h"

namespace c3::gui {

using analyzer::QueueOptions;

const NameCache::Text& NameCache::get(const std::string& name, const QFontMetrics& fm,
                                      bool kernel) {
  auto& cache = kernel ? kernel_names_ : names_;
  auto it = cache.find(name);
  if (it == cache.end()) {
    if (cache.size() > 100000) cache.clear();
    Text nt;
    nt.text = QString::fromStdString(kernel ? analyzer::short_kernel_name(name) : name);
    nt.width = fm.horizontalAdvance(nt.text);
    it = cache.emplace(name, std::move(nt)).first;
  }
  return it->second;
}

void NameCache::clear() {
  names_.clear();
  kernel_names_.clear();
}

namespace {

// Items at least this wide (pixels) are drawn with a one-device-pixel gap at their end.
constexpr double kSeparatorMinPx = 4;

// A run of rectangles of one colour that touch (folded runs, mostly), filled as one: a
// zoomed-out row costs a few hundred fills, not one per device pixel.
class Runs {
 public:
  Runs(QPainter& p, double touch) : p_(p), touch_(touch) {}
  void add(const QRectF& rect, const QColor& c) {
    if (!pending_.isNull() && c == color_ && rect.left() <= pending_.right() + touch_ &&
        rect.top() == pending_.top() && rect.height() == pending_.height()) {
      pending_.setRight(std::max(pending_.right(), rect.right()));
    } else {
      flush();
      pending_ = rect;
      color_ = c;
    }
  }
  void flush() {
    if (!pending_.isNull()) p_.fillRect(pending_, color_);
    pending_ = QRectF();
  }

 private:
  QPainter& p_;
  double touch_;
  QRectF pending_;
  QColor color_;
};

}  // namespace

RowPainter::RowPainter(QPainter& p, const Timeline& tl, NameCache& names, const Frame& frame)
    : p_(p),
      tl_(tl),
      names_(names),
      pal_(frame.palette),
      fm_(frame.font),
      dark_(frame.dark),
      dpr_(frame.dpr),
      label_w_(frame.label_w),
      body_w_(frame.body_w),
      right_(frame.right) {
  const Fill hidden{hidden_color(dark_), hidden_color(dark_).darker(dark_ ? 80 : 115)},
      exposed{exposed_color(dark_), exposed_color(dark_).darker(dark_ ? 80 : 115)};
  hidden_fill_ = hidden;
  exposed_fill_ = exposed;
  queue_fill_ = dark_ ? QColor(0x6f, 0x9f, 0xd8) : QColor(0x3b, 0x6e, 0xb0);
  for (unsigned bits = 0; bits < 16; ++bits) {
    const QColor c = classes_color(static_cast<uint8_t>(bits), dark_);
    class_fill_[bits] = {c, c.darker(dark_ ? 80 : 115)};
  }
}

const RowPainter::Fill& RowPainter::range_fill(const Row& r, const LodItem& it,
                                               const Fill& depth_fill, OwnColor& own) const {
  // A folded block takes its first range's colour.
  const int64_t argb = tl_.trace().ranges[r.items[it.first]].color;
  if (argb < 0) return depth_fill;
  if (argb != own.argb) {  // once per run of one colour
    const QColor c = QColor::fromRgb(static_cast<QRgb>(argb) | 0xff000000u);
    own.fill = {c, c.darker(dark_ ? 80 : 115)};
    own.argb = argb;
  }
  return own.fill;
}

void RowPainter::paint(const Row& r, const std::vector<LodItem>& items, int y, int height,
                       int64_t selected) {
  const int iy = y + 2, ih = height - 4;
  if (r.kind == RowKind::queue) {
    paint_queue(r, items, iy, ih);
    return;
  }
  Runs runs(p_, 0.5 / dpr_);
  Runs bottom(p_, 0.5 / dpr_);  // overlap rows: the exposed part of split columns
  const bool ranges = r.kind == RowKind::nvtx;
  const std::array<Fill, 16>& by_class = class_fill_;
  const QColor nvtx = nvtx_color(r.nvtx_depth, dark_);
  const Fill depth_fill{nvtx, nvtx.darker(dark_ ? 80 : 115)};
  OwnColor own;
  for (const LodItem& it : items) {
    const double x0 = std::max(it.x0, -2.0) + label_w_;
    const double x1 = std::min(it.x1, body_w_ + 2) + label_w_;
    if (x1 < label_w_ || x0 > right_) continue;
    const size_t folded = it.count > 1 ? 1 : 0;  // folded blocks read as "dense"
    const QColor c = ranges ? range_fill(r, it, depth_fill, own)[folded]
                     : r.kind == RowKind::overlap
                         ? (it.hidden >= 1 ? hidden_fill_ : exposed_fill_)[folded]
                         : by_class[it.classes & 15u][folded];
    // An item wider than a few pixels ends a device pixel short: neighbours of one colour (back-
    // to-back kernels, consecutive ranges) stay apart instead of merging into one bar.
    const double gap = it.count == 1 && x1 - x0 > kSeparatorMinPx ? 1.0 / dpr_ : 0.0;
    // Marks (instants) are ticks three pixels wide, centred on their time.
    const QRectF rect = r.marks ? QRectF(x0 - 1, iy, 3, ih)
                                : QRectF(x0, iy, std::max(x1 - x0 - gap, 1.0 / dpr_), ih);
    if (r.kind == RowKind::overlap && it.hidden > 0 && it.hidden < 1) {
      // A folded column of hidden and exposed communication: split top (hidden) and bottom
      // (exposed) in proportion to their time, at device-pixel precision, so the row shows the
      // share of communication hidden that the numbers beside it give.
      const double split = std::round(ih * static_cast<double>(it.hidden) * dpr_) / dpr_;
      const size_t f = it.count > 1 ? 1 : 0;
      if (split > 0) runs.add(QRectF(rect.left(), iy, rect.width(), split), hidden_fill_[f]);
      if (split < ih)
        bottom.add(QRectF(rect.left(), iy + split, rect.width(), ih - split), exposed_fill_[f]);
      continue;
    }
    const bool is_selected = it.count == 1 && static_cast<int64_t>(it.first) == selected;
    const bool named = it.count == 1 && x1 - x0 > 36;
    if (!is_selected && !named) {
      runs.add(rect, c);
      continue;
    }
    runs.flush();
    bottom.flush();
    p_.fillRect(rect, c);
    if (is_selected) {
      p_.setBrush(Qt::NoBrush);
      p_.setPen(QPen(pal_.color(QPalette::Highlight), 2));
      p_.drawRect(rect.adjusted(-1, -1, 1, 1));
    }
    if (named) paint_name(r, it, c, x0, x1, iy, ih);
  }
  runs.flush();
  bottom.flush();
}

void RowPainter::paint_queue(const Row& r, const std::vector<LodItem>& items, int iy, int ih) {
  const double most = static_cast<double>(std::max<int64_t>(r.max_length, 1));
  const QueueOptions limit;
  for (const LodItem& it : items) {
    const double x0 = std::max(it.x0, -2.0) + label_w_;
    const double x1 = std::min(it.x1, body_w_ + 2) + label_w_;
    if (x1 < label_w_ || x0 > right_) continue;
    // At least a device pixel: a queue of one under a peak of a thousand still shows.
    const double h =
        std::max(std::round(ih * static_cast<double>(it.length) / most * dpr_) / dpr_, 1.0 / dpr_);
    p_.fillRect(QRectF(x0, iy + ih - h, std::max(x1 - x0, 1.0 / dpr_), h),
                it.length >= limit.limit ? exposed_fill_[0] : queue_fill_);
  }
}

void RowPainter::paint_name(const Row& r, const LodItem& it, const QColor& fill, double x0,
                            double x1, int iy, int ih) {
  const double lx = std::max(x0, label_w_) + 3;
  const int w = static_cast<int>(std::min(x1, right_) - lx - 3);
  if (w <= 12) return;
  // Names are measured once (NameCache); ones that do not fit are cut by the average character
  // width (elidedText's full layout per item is what made mid-zoom frames slow) and clipped to
  // their rectangle.
  const NameCache::Text& nt = names_.get(tl_.name(r, it.first), fm_, r.kind == RowKind::stream);
  p_.setPen(text_on(fill));
  const QString shown =
      nt.width <= w
          ? nt.text
          : nt.text.left(std::max(1, w / std::max(1, fm_.averageCharWidth()) - 1)) + QChar(0x2026);
  p_.drawText(QRectF(lx, iy, w, ih), Qt::AlignVCenter | Qt::AlignLeft, shown);
}

}  // namespace c3::gui
