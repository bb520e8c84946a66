// The items of one timeline row, as TimelineView draws them: the level-of-detail blocks
// (Timeline::lod) filled in their colours (folded blocks darker: "dense"), touching blocks of one
// colour filled as one, names where they fit, the selected item outlined. The widget lays out
// the rows and draws their labels, the range selection and the links around them.
#pragma once

#include <QColor>
#include <QFont>
#include <QFontMetrics>
#include <QPainter>
#include <QPalette>
#include <QRectF>
#include <QString>
#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "c3/gui/timeline.h"

namespace c3::gui {

// Item names as drawn, with their width in the widget's font: measured once per distinct
// string, not once per frame (names do not change with the window). Kernels are drawn under
// their short name, as Nsight draws them (the full one is in the tooltip and the details).
class NameCache {
 public:
  struct Text {
    QString text;
    int width = 0;
  };
  const Text& get(const std::string& name, const QFontMetrics& fm, bool kernel);
  void clear();

 private:
  std::unordered_map<std::string, Text> names_;
  std::unordered_map<std::string, Text> kernel_names_;  // the same, shortened
};

// Draws rows' items for one frame; the colours are worked out once per frame, not per item
// (QColor::darker goes through HSV).
class RowPainter {
 public:
  struct Frame {
    const QPalette& palette;
    const QFont& font;
    bool dark = false;
    double dpr = 1;   // device pixels per pixel
    int label_w = 0;  // items start right of the label column
    int body_w = 0;   // the window's width in pixels (Viewport::width)
    int right = 0;    // the widget's right edge
  };
  RowPainter(QPainter& p, const Timeline& tl, NameCache& names, const Frame& frame);

  // One row's folded items in its band [y, y + height); `selected`: the items[] index of the
  // selected item when it is in this row, else -1.
  void paint(const Row& r, const std::vector<LodItem>& items, int y, int height, int64_t selected);

 private:
  // Fill colours, single [0] or folded [1].
  using Fill = std::array<QColor, 2>;
  // An NVTX range's own colour (nvtxEventAttributes_t), as Nsight draws it, kept for the run of
  // items that share it.
  struct OwnColor {
    int64_t argb = -1;
    Fill fill;
  };
  // An NVTX row's fill: the range's own colour, else the row's (by nesting depth).
  const Fill& range_fill(const Row& r, const LodItem& it, const Fill& depth_fill,
                         OwnColor& own) const;
  // A queue row: bars from the bottom, as tall as the queue is long against the row's longest
  // (at CUDA's launch-queue limit in the exposed colour: the host blocks there).
  void paint_queue(const Row& r, const std::vector<LodItem>& items, int iy, int ih);
  void paint_name(const Row& r, const LodItem& it, const QColor& fill, double x0, double x1, int iy,
                  int ih);

  QPainter& p_;
  const Timeline& tl_;
  NameCache& names_;
  const QPalette& pal_;
  QFontMetrics fm_;
  bool dark_;
  double dpr_;
  double label_w_;
  double body_w_;
  double right_;
  // By class bits: activities and collectives (the most interesting class).
  std::array<Fill, 16> class_fill_;
  // Overlap spans: hidden and exposed communication (folded columns split between them).
  Fill hidden_fill_, exposed_fill_;
  QColor queue_fill_;
};

}  // namespace c3::gui
