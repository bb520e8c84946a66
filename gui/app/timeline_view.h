// The timeline widget: a label column, the overview strip and time ruler on top, and the rows
// (c3::gui::Timeline) below, painted through the level-of-detail fold so that a frame costs
// O(visible rows x pixels x log items) whatever the trace size.
//
// Mouse: wheel zooms at the cursor (Shift+wheel pans, Alt+wheel or wheel over the labels
// scrolls rows); left drag selects a time range; Shift+drag, middle or right drag pans; a click
// selects an item; double click zooms to it; dragging in the overview moves the window.
// Keys: W/S zoom in/out, A/D pan, F zoom to the selection, 0 whole trace, Esc clear, N/Shift+N next
// and previous search match.
#pragma once

#include <QAbstractScrollArea>
#include <QColor>
#include <QElapsedTimer>
#include <QImage>
#include <QString>
#include <optional>
#include <vector>

#include "c3/gui/document.h"
#include "c3/gui/timeline.h"
#include "row_painter.h"

namespace c3::gui {

// An arrow between two items (API call -> kernel, NCCL call -> collective -> kernel).
struct FlowLink {
  int from_row = -1;  // a group row stands for the host side (API or NCCL call)
  int64_t from_t = 0;
  int to_row = -1;
  int64_t to_t = 0;
  QString label;  // drawn at the host end (e.g. cudaLaunchKernel)
};

class TimelineView : public QAbstractScrollArea {
  Q_OBJECT
 public:
  explicit TimelineView(QWidget* parent = nullptr);

  void set_document(Document* doc);
  Document* document() const { return doc_; }

  // The visible window [t0, t1) in aligned trace ns (rounded to the nanosecond).
  int64_t window_start() const { return vp_.t_at(0); }
  int64_t window_end() const { return vp_.t_at(vp_.width); }
  double window_ns() const { return vp_.ns_per_px * vp_.width; }
  void set_window(int64_t t0, int64_t t1);
  void zoom_to_fit();
  void zoom_at(double factor, double body_x);
  void pan_pixels(double dx);
  void zoom_to_selection();

  // Selection of one item (row index, items[] index).
  void select(int row, int64_t item, bool center);
  int selected_row() const { return sel_row_; }
  int64_t selected_item() const { return sel_item_; }
  // Jumps to activity `a` (from a table): reveals its row, selects and centres it.
  bool select_activity(size_t a);
  void set_links(std::vector<FlowLink> links);
  void clear_selection();
  std::optional<std::pair<int64_t, int64_t>> range_selection() const;
  void set_range_selection(int64_t t0, int64_t t1);

  // The critical path overlay (View > Critical path): each step's path (Document::path) drawn
  // over the rows: its operations outlined, host and idle stretches dashed on the rank's top
  // row, consecutive pieces joined. update_path() re-reads the document's path (after an
  // analysis).
  void set_path_shown(bool on);
  bool path_shown() const { return path_shown_; }
  void update_path();
  size_t path_marks() const { return path_.size(); }  // pieces of the overlay (tests)

  // Search: rows' items are filtered (Timeline::filter) by the main window; this steps through
  // what is left, in time order from the current selection.
  bool step_match(int direction);

  // Row layout changed (collapse, hide, reorder, filter).
  void relayout();
  // Paints one frame into `p` (also used for offscreen benchmarks and screenshots).
  void paint_frame(QPainter& p, const QSize& size);
  double last_frame_ms() const { return last_frame_ms_; }
  double last_fold_ms() const { return last_fold_ms_; }  // the level-of-detail share of it
  // The time ruler's labels in the last frame, left to right (for tests).
  const std::vector<QString>& ruler_labels() const { return ruler_labels_; }
  // Vertical position of a row in the scroll area's content (-1 when not shown).
  int row_y(int row) const;
  int content_height() const;

  // The label column: at least kLabelWidth, wider to hold the longest label (relayout).
  int label_width() const { return label_w_; }
  static constexpr int kLabelWidth = 240;
  static constexpr int kMaxLabelWidth = 420;
  static constexpr int kOverviewHeight = 30;
  static constexpr int kRulerHeight = 24;
  static constexpr int kHeaderHeight = kOverviewHeight + kRulerHeight;
  static constexpr int kRowHeight = 20;
  static constexpr int kGroupHeight = 20;

 signals:
  void itemSelected(int row, qint64 item);
  void rangeSelected(qint64 t0, qint64 t1);
  void selectionCleared();
  void windowChanged();
  void rowsChanged();

 protected:
  void paintEvent(QPaintEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  bool viewportEvent(QEvent* e) override;
  void scrollContentsBy(int dx, int dy) override;

 private:
  struct Line {
    int row = 0;
    int y = 0;  // content coordinates
    int height = 0;
    int depth = 0;
  };
  enum class Drag { none, maybe_click, select, pan, overview };

  int body_width() const;
  QString row_label(const Row& r) const;
  void fit_labels();                          // label_w_ for the rows shown and the window's width
  void set_window_rel(double t0, double t1);  // window times (Viewport::t0)
  int64_t hit_slack() const;                  // ns within which a click hits an item
  // The visible row at viewport y, or -1.
  const Line* line_at(int y) const;
  void update_scrollbar();
  void clamp_window();
  void show_menu(const QPoint& pos, int row);
  QString tooltip_at(const QPoint& pos) const;

  // Painting, in stages. The rows: the lines in view, their items folded for the window, each
  // line's background and label, the items (RowPainter), the range selection over them.
  void paint_rows(QPainter& p, const QSize& size, bool dark);
  std::vector<const Line*> lines_in_view(int height) const;
  std::vector<std::vector<LodItem>> fold_rows(const std::vector<const Line*>& shown, double min_px);
  struct LineColors {
    QColor grid;
    QColor group;     // a group's background
    QColor selected;  // the background of the selected item's row
    QColor text;
  };
  LineColors line_colors(bool dark) const;
  void paint_label(QPainter& p, const Line& l, int y, int width, const LineColors& colors);
  void paint_range(QPainter& p, const QSize& size, bool dark);
  // Arrows between linked items, over the rows.
  void paint_links(QPainter& p, const QSize& size, bool dark);
  void paint_path(QPainter& p, const QSize& size, bool dark);
  int visible_y(int row) const;  // viewport y of a row's centre, following collapsed ancestors
  // The header (timeline_header.cpp): legend, overview strip, ruler.
  void paint_header(QPainter& p, const QSize& size, bool dark);
  void paint_legend(QPainter& p, bool dark);
  void paint_overview(QPainter& p, int bw, bool dark);  // bw: the body's width
  QImage overview_image(const QSize& size, double dpr, bool dark) const;
  void paint_ruler(QPainter& p, int bw);

  Document* doc_ = nullptr;
  Viewport vp_;
  std::vector<Line> lines_;
  int label_w_ = kLabelWidth;
  std::vector<int> line_of_row_;  // row -> lines_ index or -1
  int sel_row_ = -1;
  int64_t sel_item_ = -1;
  std::vector<FlowLink> links_;
  struct PathMark {
    int row = -1;              // a stream row, or the rank's top row (host and idle)
    int64_t from = 0, to = 0;  // aligned
    bool gpu = false;
    size_t step = 0;  // Document::path_step
  };
  std::vector<PathMark> path_;
  bool path_shown_ = false;
  bool has_range_ = false;
  double range_a_ = 0, range_b_ = 0;  // window times (Viewport::t0)
  std::vector<QString> ruler_labels_;
  Drag drag_ = Drag::none;
  QPoint press_pos_;
  double press_t0_ = 0;
  int press_scroll_ = 0;
  double last_frame_ms_ = 0;
  double last_fold_ms_ = 0;
  NameCache names_;
  QImage overview_cache_;
  QSize overview_key_;
  double overview_dpr_ = 0;
  const Document* overview_doc_ = nullptr;
};

}  // namespace c3::gui
