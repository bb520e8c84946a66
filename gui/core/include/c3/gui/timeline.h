// The timeline's rows and its level of detail, with no widget in sight (tested headless).
//
// Rows: host > process (rank) > device > stream rows (kernels, copies, sets) and an overlap row
// per device (communication hidden under compute vs exposed), a collectives row per
// communicator of each process, NVTX rows per thread and nesting depth, and a queue row per
// stream with launch calls (its launched, unfinished operations over time; made when View >
// Queue length first shows them). Groups collapse; rows can be hidden and reordered among their
// siblings.
//
// Level of detail: a row's items are sorted by start; painting a window binary-searches its
// first item and folds every run of items narrower than a pixel into one counted block, jumping
// over the folded items with a galloping search; a segment tree of item ends and classes
// summarizes each folded run (so long items stay visible). The work per row and frame is
// O(pixels x log items), never O(items).
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "c3/analyzer/open/trace.h"
#include "c3/analyzer/why/queue.h"

namespace c3::gui {

enum class RowKind : uint8_t { group, stream, overlap, collectives, nvtx, queue };

// An overlap row's span kinds.
enum class OverlapKind : uint8_t { hidden = 0, exposed = 1 };

// What a row shows (for tooltips, selection and painting).
enum class ItemKind : uint8_t { activity, collective, range, span };

struct Row {
  RowKind kind = RowKind::group;
  std::string label;
  int parent = -1;
  std::vector<int> children;
  bool expanded = true;
  bool hidden = false;
  bool thread = false;  // a thread's group of NVTX / annotation rows
  bool marks = false;   // an NVTX row of instants (marks), drawn as ticks
  int process = -1;
  int device = -1;
  int64_t key = 0;  // stream id, thread id, or communicator index
  // Clock alignment: added to every timestamp of the row (its process's offset from the
  // analyzer's align_clocks), so that several ranks line up in one view.
  int64_t offset = 0;
  int nvtx_depth = 0;
  // Items sorted by start: activity rows (stream), collective indices (collectives), range
  // indices (nvtx); overlap rows keep their spans.
  std::vector<uint32_t> items;
  std::vector<uint32_t> all_items;  // while a filter is on: every item (items holds the kept ones)
  struct Span {
    int64_t start = 0, end = 0;
    OverlapKind kind = OverlapKind::hidden;
  };
  std::vector<Span> spans;
  // Queue rows: the stream's queue length as a step function (why/queue.h: from each point's
  // time to the next one's it holds that length; the last is back at 0), its longest, and the
  // longest over each kLeaf points as an implicit segment tree (as tree_max_end below), so a
  // pixel column finds the longest queue it covers in O(log n).
  std::vector<analyzer::QueuePoint> points;
  int64_t max_length = 0;
  std::vector<int64_t> tree_max_length;
  // Overlap rows: hidden and exposed nanoseconds of spans [0, k) (k = 0..spans.size()), so a
  // folded run of spans tells its hidden share in O(1) (spans are disjoint).
  std::vector<int64_t> hidden_prefix, exposed_prefix;
  // Stream, collectives and NVTX rows: each item's start and end (aligned) and class bits, in
  // item order. The fold reads them contiguously instead of through the trace's columns (a
  // stream's items are scattered among every stream's activities: a cache miss each).
  std::vector<int64_t> item_start, item_end;
  std::vector<uint8_t> item_classes;
  int64_t max_duration = 0;  // longest item, to find the first visible one
  // Max end and class bits of the items, kLeaf items per leaf, as an implicit segment tree
  // (leaves at [leaves, 2 * leaves)): any run of items is summarized in O(log n), so a pixel
  // column costs the same whether it folds ten items or a million.
  size_t leaves = 0;
  std::vector<int64_t> leaf_start;  // start of each leaf's first item (a contiguous search space)
  // Max end of the items of leaves 0..i: rising, so a binary search finds the first leaf that
  // reaches a window's start however long the row's longest item is.
  std::vector<int64_t> leaf_reach;
  std::vector<int64_t> tree_max_end;
  std::vector<uint8_t> tree_classes;
};

inline constexpr size_t kLeaf = 8;

// The visible window: time at x = 0, nanoseconds per pixel, width in pixels. Window times are
// doubles counted from `origin` (the trace's first timestamp): PyTorch and Nsight traces carry
// epoch timestamps near 1.7e18 ns, where a double's step is 256 ns, so absolute times go through
// integer subtraction first and every double stays small and exact to well below a nanosecond.
struct Viewport {
  double t0 = 0;  // ns after origin
  double ns_per_px = 1;
  int width = 1;
  int64_t origin = 0;
  // An absolute trace time as window time (exact: the subtraction is in integers).
  double rel(int64_t t) const {
    int64_t d = 0;
    if (__builtin_sub_overflow(t, origin, &d))  // only sentinels get this far apart
      return static_cast<double>(t) - static_cast<double>(origin);
    return static_cast<double>(d);
  }
  double x_of(int64_t t) const { return (rel(t) - t0) / ns_per_px; }
  // Window time at pixel x, and the absolute trace time there (rounded to the nanosecond).
  double rel_at(double x) const { return t0 + x * ns_per_px; }
  int64_t t_at(double x) const { return origin + static_cast<int64_t>(std::llround(rel_at(x))); }
  double t1() const { return t0 + ns_per_px * width; }
};

// One thing to paint: a single item (count 1) or a folded block of `count` items.
struct LodItem {
  double x0 = 0, x1 = 0;
  uint32_t first = 0;  // items[] index of the (first) item
  uint32_t count = 1;
  uint8_t classes = 0;  // class bits (1 << analyzer::Class); overlap rows: 1 << OverlapKind
  // Overlap rows: the share of the block's communication time that was hidden (0..1; a single
  // span 1 or 0), so a folded pixel column is drawn hidden:exposed in proportion rather than red
  // for any exposed sliver. Other rows: 0.
  float hidden = 0;
  // Queue rows: the longest queue in the block (items are the step function's points).
  int64_t length = 0;
};

class Timeline {
 public:
  // Builds every row from a loaded trace (its activities sorted as the analyzer sorts them;
  // Process::offset_ns, set by analyzer::analyze / align_clocks, shifts each process's rows).
  explicit Timeline(const analyzer::Trace& trace);

  const analyzer::Trace& trace() const { return *trace_; }
  const std::vector<Row>& rows() const { return rows_; }
  Row& row(int i) { return rows_[static_cast<size_t>(i)]; }
  const Row& row(int i) const { return rows_[static_cast<size_t>(i)]; }
  const std::vector<int>& roots() const { return roots_; }

  // Rows in display order: depth-first over expanded groups, hidden rows left out.
  std::vector<int> visible_rows() const;
  // Moves row `i` by `delta` places among its siblings (reordering); false if it cannot move.
  bool move(int i, int delta);

  int64_t first_ns() const { return first_; }
  int64_t last_ns() const { return last_; }

  // Start/end of item k of a row (activities, collectives' GPU spans, ranges, overlap spans; a
  // queue row's point k holds from its time to the next point's).
  int64_t start(const Row& r, size_t k) const;
  int64_t end(const Row& r, size_t k) const;
  uint8_t classes(const Row& r, size_t k) const;
  size_t size(const Row& r) const {
    return r.kind == RowKind::overlap ? r.spans.size()
           : r.kind == RowKind::queue ? r.points.size()
                                      : r.items.size();
  }
  std::string name(const Row& r, size_t k) const;
  // The row showing activity `a` (a stream row) and its items[] index, or {-1, -1}.
  std::pair<int, int64_t> find_activity(size_t a) const;
  // The collectives row and index of collective `c`, or {-1, -1}.
  std::pair<int, int64_t> find_collective(size_t c) const;
  // Shows or hides every queue row (View > Queue length); the rows there are. The rows are made
  // when first shown (16 bytes per queue change, about two per launch: nothing until asked).
  size_t show_queues(bool on);
  // Filtering (search by name, class, stream): keeps the items of stream, collectives and NVTX
  // rows for which keep(row, trace index) holds (activity, collective or range index); the
  // other items are set aside until clear_filter(). Returns the items kept.
  size_t filter(const std::function<bool(const Row&, uint32_t)>& keep);
  void clear_filter();
  bool filtered() const { return filtered_; }
  // Makes row i visible: expands its ancestors and un-hides it.
  void reveal(int i);
  // Collapses every thread group (NVTX / annotation rows) when the visible rows are more than
  // `max_rows`, so every rank's GPU rows fit a window that shows that many (issue 24: with two
  // ranks, rank 1's GPU rows were below the fold under rank 0's NVTX depth rows). Returns
  // whether it collapsed any.
  bool collapse_threads_to_fit(size_t max_rows);

  // What to paint for a row in a viewport (folded below `min_px` pixels).
  std::vector<LodItem> lod(const Row& r, const Viewport& v, double min_px = 1.0) const;
  // The item of a row under trace time t (within `slack` ns), or -1.
  int64_t hit(const Row& r, int64_t t, int64_t slack) const;

  // Time each class ran in `buckets` equal slices of the whole trace, as a share of the slice,
  // summed over streams and GPUs (the overview strip divides by the GPUs).
  std::vector<std::array<float, analyzer::kClasses>> overview(int buckets) const;

 private:
  void build();
  std::vector<Row> build_process(int p, size_t begin, size_t end,
                                 const std::vector<uint32_t>& colls,
                                 const std::vector<uint32_t>& ranges) const;
  void finish(Row& r) const;
  int add(Row r);
  void build_queues();

  const analyzer::Trace* trace_;
  std::vector<Row> rows_;
  std::vector<int> roots_;
  int64_t first_ = 0, last_ = 0;
  bool filtered_ = false;
  bool queues_built_ = false;
};

}  // namespace c3::gui
