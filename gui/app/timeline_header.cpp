// TimelineView's header strip, above the rows: the colour legend (over the label column), the
// overview of the whole trace with the visible window outlined, and the time ruler.
#include <QPainter>
#include <algorithm>
#include <array>

#include "c3/gui/format.h"
#include "theme.h"
#include "timeline_view.h"

namespace c3::gui {

using analyzer::Class;

void TimelineView::paint_header(QPainter& p, const QSize& size, bool dark) {
  const int w = size.width();
  p.fillRect(QRect(0, 0, w, kHeaderHeight), palette().color(QPalette::Window));
  paint_legend(p, dark);
  const int bw = w - label_w_;
  if (doc_ == nullptr || !doc_->timeline || bw <= 0) return;
  paint_overview(p, bw, dark);
  paint_ruler(p, bw);
  p.setPen(palette().color(QPalette::Mid));
  p.drawLine(0, kHeaderHeight - 1, w, kHeaderHeight - 1);
}

void TimelineView::paint_legend(QPainter& p, bool dark) {
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
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QPoint(x + 14, y + fm.ascent()), e.name);
    x += ew;
  }
  p.setFont(font());
}

void TimelineView::paint_overview(QPainter& p, int bw, bool dark) {
  // Busy share per class over the whole trace, the visible window outlined.
  const QPalette& pal = palette();
  const QRect ov(label_w_, 2, bw, kOverviewHeight - 4);
  // The strip only changes with the document, its width, the palette and the pixel ratio: drawn
  // once into a cached image.
  const double dpr = std::max(1.0, p.device() != nullptr ? p.device()->devicePixelRatioF() : 1.0);
  if (overview_cache_.isNull() || overview_key_ != QSize(bw, dark ? -1 : 1) ||
      overview_dpr_ != dpr || overview_doc_ != doc_) {
    overview_cache_ = overview_image(QSize(bw, ov.height()), dpr, dark);
    overview_key_ = QSize(bw, dark ? -1 : 1);
    overview_dpr_ = dpr;
    overview_doc_ = doc_;
  }
  p.drawImage(ov.topLeft(), overview_cache_);
  const Timeline& tl = *doc_->timeline;
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
}

QImage TimelineView::overview_image(const QSize& size, double dpr, bool dark) const {
  const int bw = size.width(), height = size.height();
  QImage img(size * dpr, QImage::Format_ARGB32_Premultiplied);
  img.setDevicePixelRatio(dpr);
  img.fill(palette().color(QPalette::Base));
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
      double y = height;
      const auto n = static_cast<double>(b1 - b0);
      const double unit = (height - 2) / 3.0;
      for (const Class c : {Class::compute, Class::memory, Class::communication}) {
        const double h = std::min(1.0, static_cast<double>(sum[static_cast<size_t>(c)]) / n) * unit;
        if (h <= 0) continue;
        ip.fillRect(QRectF(x, y - h, 1, h), class_color(c, dark));
        y -= h;
      }
    }
  }
  ip.end();
  return img;
}

void TimelineView::paint_ruler(QPainter& p, int bw) {
  // Ticks relative to the trace's start, labels in adaptive units.
  const QPalette& pal = palette();
  const int ry = kOverviewHeight;
  p.fillRect(QRect(label_w_, ry, bw, kRulerHeight), pal.color(QPalette::Window));
  p.setPen(pal.color(QPalette::WindowText));
  // Window times are already relative to the trace's first timestamp (Viewport::origin).
  const double first = vp_.rel(doc_->timeline->first_ns());
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
}

}  // namespace c3::gui
