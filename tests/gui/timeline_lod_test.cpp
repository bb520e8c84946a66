// The timeline's level of detail (Timeline::lod) checked against a brute-force fold, on items
// one by one, a million items, long items and random rows; and hit testing (Timeline::hit).
#include <QTest>
#include <algorithm>
#include <cmath>
#include <random>

#include "timeline_builder.h"

using namespace c3;
using namespace c3::gui;
using namespace c3::gui::testing;
using analyzer::Class;

namespace {

// The level of detail the slow way: every item from the first, in order; an item that ends at or
// before the window is skipped; one at least `min_px` wide comes out alone; otherwise every item
// starting in its pixel column is folded into one block reaching the latest end among them.
std::vector<LodItem> brute_force_lod(const Timeline& tl, const Row& r, const Viewport& v,
                                     double min_px) {
  std::vector<LodItem> out;
  const size_t n = tl.size(r);
  const double t0 = v.t0, t1 = v.t1();
  size_t k = 0;
  while (k < n) {
    const int64_t s = tl.start(r, k), e = tl.end(r, k);
    if (static_cast<double>(s) >= t1) break;
    if (static_cast<double>(e) <= t0) {
      ++k;
      continue;
    }
    const double x0 = v.x_of(s), x1 = v.x_of(e);
    if (x1 - x0 >= min_px) {
      out.push_back({x0, x1, static_cast<uint32_t>(k), 1, tl.classes(r, k)});
      ++k;
      continue;
    }
    const double col = std::floor(x0);
    const double next = v.rel_at(col + 1);
    size_t j = k;
    int64_t max_end = INT64_MIN;
    uint8_t cls = 0;
    while (j < n && (j == k || static_cast<double>(tl.start(r, j)) < next)) ++j;
    // A wide last item starting in the column is drawn on its own.
    if (j - 1 > k && v.x_of(tl.end(r, j - 1)) - v.x_of(tl.start(r, j - 1)) >= min_px) --j;
    for (size_t m = k; m < j; ++m) {
      max_end = std::max(max_end, tl.end(r, m));
      cls |= tl.classes(r, m);
    }
    out.push_back({std::max(col, x0), std::max(col + 1, v.x_of(max_end)), static_cast<uint32_t>(k),
                   static_cast<uint32_t>(j - k), cls});
    k = j;
  }
  return out;
}

bool same(const std::vector<LodItem>& a, const std::vector<LodItem>& b, QString* why) {
  if (a.size() != b.size()) {
    *why = QString("%1 items, expected %2").arg(a.size()).arg(b.size());
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].x0 != b[i].x0 || a[i].x1 != b[i].x1 || a[i].first != b[i].first ||
        a[i].count != b[i].count || a[i].classes != b[i].classes) {
      *why = QString(
                 "item %1: {%2, %3, first %4, count %5, classes %6}, expected {%7, %8, first "
                 "%9, count %10, classes %11}")
                 .arg(i)
                 .arg(a[i].x0)
                 .arg(a[i].x1)
                 .arg(a[i].first)
                 .arg(a[i].count)
                 .arg(a[i].classes)
                 .arg(b[i].x0)
                 .arg(b[i].x1)
                 .arg(b[i].first)
                 .arg(b[i].count)
                 .arg(b[i].classes);
      return false;
    }
  }
  return true;
}

}  // namespace

class TimelineLodTest : public QObject {
  Q_OBJECT

 private slots:
  void test_lod_wide_items_one_by_one();
  void test_lod_folds_a_million_items();
  void test_lod_long_items();
  void test_lod_matches_brute_force();
  void test_hit();
  void test_lod_overlap_folds_in_proportion();
  void test_queue_rows_show_each_columns_longest_queue();
};

void TimelineLodTest::test_lod_wide_items_one_by_one() {
  Builder b;
  b.process("h", 0, 1);
  for (int i = 0; i < 100; ++i)
    b.kernel(i % 2 ? "gemm" : "ncclKernel_X", int64_t{100} * i, int64_t{100} * i + 50);
  const Timeline tl(b.done());
  const Row& r = tl.row(find_row(tl, RowKind::stream));
  QCOMPARE(tl.size(r), size_t{100});
  // 10 ns per pixel: every item is 5 px wide. The window [1025, 3025) shows items 10..30.
  const Viewport v{1025, 10, 200};
  const std::vector<LodItem> items = tl.lod(r, v);
  QCOMPARE(items.size(), size_t{21});
  for (size_t j = 0; j < items.size(); ++j) {
    const size_t k = 10 + j;
    QCOMPARE(items[j].first, static_cast<uint32_t>(k));
    QCOMPARE(items[j].count, 1u);
    QCOMPARE(items[j].x0, v.x_of(static_cast<int64_t>(k) * 100));
    QCOMPARE(items[j].x1, items[j].x0 + 5);
    QCOMPARE(items[j].classes, tl.classes(r, k));
  }
  QCOMPARE(items[0].x0, -2.5);  // [1000, 1050) straddles the left edge
  QVERIFY(tl.lod(r, {20000, 10, 200}).empty());
  QVERIFY(tl.lod(r, {-5000, 10, 200}).empty());
  QVERIFY(tl.lod(tl.row(tl.roots()[0]), v).empty());  // a group paints nothing
}

void TimelineLodTest::test_lod_folds_a_million_items() {
  constexpr int kItems = 1'000'000;
  Builder b;
  b.process("h", 0, 1);
  b.t.activities.reserve(kItems);
  const int32_t n = b.name("k");
  for (int i = 0; i < kItems; ++i) {
    b.t.activities.push(int64_t{10} * i, int64_t{10} * i + 5, n, 7, 0, 0, analyzer::Kind::kernel,
                        0);
    if (i % 3 == 0) b.t.activities.cls.back() = Class::communication;
  }
  const Timeline tl(b.t);
  const Row& r = tl.row(find_row(tl, RowKind::stream));
  QCOMPARE(tl.size(r), size_t{kItems});
  // Everything in 1000 px: one block per column, 1000 items each.
  std::vector<LodItem> all = tl.lod(r, {0, 1e4, 1000});
  QCOMPARE(all.size(), size_t{1000});
  QCOMPARE(total_count(all), uint64_t{kItems});
  for (size_t c = 0; c < all.size(); ++c) {
    QCOMPARE(all[c].x0, static_cast<double>(c));
    QCOMPARE(all[c].count, 1000u);
    QCOMPARE(all[c].first, static_cast<uint32_t>(c * 1000));
    QCOMPARE(all[c].classes, static_cast<uint8_t>(0b11));  // compute and communication
  }
  // A window in the middle: [1e6, 1.1e6) holds the 10'000 items starting in it.
  const std::vector<LodItem> mid = tl.lod(r, {1e6, 100, 1000});
  QVERIFY(mid.size() <= 1000);
  QCOMPARE(total_count(mid), uint64_t{10000});
  QCOMPARE(mid.front().first, 100000u);
  // Folding below 4 px: a block per column still, never more than the width.
  const std::vector<LodItem> coarse = tl.lod(r, {1e6, 100, 1000}, 4.0);
  QVERIFY(coarse.size() <= 1000);
  QCOMPARE(total_count(coarse), uint64_t{10000});
  // Zoomed in to 3 ns per pixel the items (5 ns) come out one by one.
  const std::vector<LodItem> fine = tl.lod(r, {5e6, 3, 1000});
  QCOMPARE(fine.size(), size_t{300});
  QCOMPARE(total_count(fine), uint64_t{300});
  // At any zoom, the same as the fold done the slow way.
  std::mt19937_64 rng(7);
  for (int z = 0; z < 6; ++z) {
    const double ns_per_px = std::pow(10.0, std::uniform_real_distribution<>(-0.5, 4.5)(rng));
    const Viewport v{std::uniform_real_distribution<>(-1e5, 1e7)(rng), ns_per_px, 1200};
    QString why;
    QVERIFY2(same(tl.lod(r, v), brute_force_lod(tl, r, v, 1.0), &why), qPrintable(why));
  }
}

void TimelineLodTest::test_lod_long_items() {
  // Tiny items [10i, 10i+5) except item 300, [3000, 1e6): a long item in block 1.
  Builder b;
  b.process("h", 0, 1);
  for (int i = 0; i < 2000; ++i)
    b.kernel("k", int64_t{10} * i, i == 300 ? 1'000'000 : int64_t{10} * i + 5);
  const Timeline tl(b.done());
  const Row& r = tl.row(find_row(tl, RowKind::stream));
  QCOMPARE(r.max_duration, int64_t{997000});
  // Far from every other item, long after it started: the long item alone.
  std::vector<LodItem> items = tl.lod(r, {500000, 1, 100});
  QCOMPARE(items.size(), size_t{1});
  QCOMPARE(items[0].first, 300u);
  QCOMPARE(items[0].count, 1u);
  QVERIFY(items[0].x0 < 0 && items[0].x1 > 100);
  items = tl.lod(r, {500000, 1e4, 100});
  QCOMPARE(items.size(), size_t{1});
  QCOMPARE(items[0].first, 300u);
  // Zoomed out: column 0 folds items 0..999, and through the block maxima it reaches the long
  // item's end (x = 100); column 1 folds 1000..1999.
  items = tl.lod(r, {0, 1e4, 200});
  QCOMPARE(items.size(), size_t{2});
  QCOMPARE(items[0].count, 1000u);
  QCOMPARE(items[0].x0, 0.0);
  QCOMPARE(items[0].x1, 100.0);
  QCOMPARE(items[1].first, 1000u);
  QCOMPARE(items[1].count, 1000u);
  QCOMPARE(items[1].x1, 2.0);
  // Zero-length markers under the long item, before the window: none of them is drawn (they are
  // off-screen), and the long item still is.
  {
    Builder z;
    z.process("h", 0, 1);
    z.kernel("long", 0, 1'000'000);
    for (int i = 0; i < 50; ++i) z.kernel("marker", 1000 + 10 * i, 1000 + 10 * i);
    const Timeline tz(z.done());
    const std::vector<LodItem> zi = tz.lod(tz.row(find_row(tz, RowKind::stream)), {500000, 1, 100});
    QCOMPARE(zi.size(), size_t{1});
    QCOMPARE(zi[0].count, 1u);
  }
  QString why;
  for (const Viewport& v :
       {Viewport{0, 1e4, 200}, Viewport{500000, 1, 100}, Viewport{2990, 0.5, 50},
        Viewport{-100, 37, 1000}, Viewport{4000, 1e3, 1000}}) {
    QVERIFY2(same(tl.lod(r, v), brute_force_lod(tl, r, v, 1.0), &why), qPrintable(why));
  }
}

void TimelineLodTest::test_lod_matches_brute_force() {
  // Random items on one stream: mostly short, some long, a few very long, bursts and gaps.
  std::mt19937_64 rng(42);
  Builder b;
  b.process("h", 0, 1);
  int64_t t = 0;
  for (int i = 0; i < 20000; ++i) {
    const int kind = std::uniform_int_distribution<>(0, 99)(rng);
    t += kind < 80 ? std::uniform_int_distribution<int64_t>(0, 20)(rng)
                   : std::uniform_int_distribution<int64_t>(0, 5000)(rng);
    int64_t d = std::uniform_int_distribution<int64_t>(1, 50)(rng);
    if (kind >= 95) d = std::uniform_int_distribution<int64_t>(1000, 20000)(rng);
    if (kind == 99) d = std::uniform_int_distribution<int64_t>(100000, 1000000)(rng);
    b.kernel(kind % 3 == 0 ? "ncclKernel_X" : "gemm", t, t + d);
  }
  const Timeline tl(b.done());
  const Row& r = tl.row(find_row(tl, RowKind::stream));
  const double last = static_cast<double>(tl.last_ns());
  for (int z = 0; z < 300; ++z) {
    const double ns_per_px = std::pow(10.0, std::uniform_real_distribution<>(-2, 6)(rng));
    const int width = std::uniform_int_distribution<>(1, 2500)(rng);
    const double t0 = std::uniform_real_distribution<>(-0.1 * last, 1.05 * last)(rng);
    const double min_px = z % 3 == 0 ? 1.0 : z % 3 == 1 ? 0.5 : 3.0;
    const Viewport v{t0, ns_per_px, width};
    const std::vector<LodItem> got = tl.lod(r, v, min_px);
    QString why;
    QVERIFY2(same(got, brute_force_lod(tl, r, v, min_px), &why),
             qPrintable(QString("t0 %1, %2 ns/px, width %3, min %4: %5")
                            .arg(t0, 0, 'f', 1)
                            .arg(ns_per_px)
                            .arg(width)
                            .arg(min_px)
                            .arg(why)));
    // Never more than about a block per pixel column besides the wide items.
    size_t folded = 0;
    for (const LodItem& x : got) folded += x.count > 1;
    QVERIFY(folded <= static_cast<size_t>(width) + 1);
  }
}

void TimelineLodTest::test_hit() {
  Builder b;
  b.process("h", 0, 1);
  b.kernel("outer", 0, 1000);
  b.kernel("inner", 100, 200);
  b.kernel("a", 1500, 1600);
  b.kernel("b", 1900, 2000);
  const Timeline tl(b.done());
  const Row& r = tl.row(find_row(tl, RowKind::stream));
  QCOMPARE(tl.name(r, 1), std::string("inner"));
  QCOMPARE(tl.hit(r, 150, 0), int64_t{1});  // inside both: the innermost
  QCOMPARE(tl.hit(r, 150, 50), int64_t{1});
  QCOMPARE(tl.hit(r, 500, 0), int64_t{0});
  QCOMPARE(tl.hit(r, 1050, 100), int64_t{0});  // near the outer one's end
  QCOMPARE(tl.hit(r, 1700, 300), int64_t{2});  // closest: 100 vs 200 away
  QCOMPARE(tl.hit(r, 1850, 300), int64_t{3});  // 250 vs 50 away
  QCOMPARE(tl.hit(r, -50, 100), int64_t{0});
  QCOMPARE(tl.hit(r, 1300, 100), int64_t{-1});  // nothing within 100 ns
  QCOMPARE(tl.hit(r, 5000, 100), int64_t{-1});
  QCOMPARE(tl.hit(tl.row(tl.roots()[0]), 150, 0), int64_t{-1});
}

// Issue 24 item 4: at the zoom a trace opens with, a folded column of the overlap row was red
// if it held any exposed time (the demo trace: 0 green pixels with 15.5% hidden). Each folded
// block now carries its hidden share, and the row's green area is the share of communication
// hidden, as the numbers beside it say.
void TimelineLodTest::test_lod_overlap_folds_in_proportion() {
  Builder b;
  b.process("h", 0, 1);
  std::mt19937 rng(24);
  std::uniform_int_distribution<int64_t> len(100, 900);
  int64_t hidden = 0, comm = 0;
  constexpr int kPeriods = 4000;
  for (int i = 0; i < kPeriods; ++i) {
    const int64_t t = int64_t{1000} * i;
    // Compute [t, t + c), communication [t + 100, t + 900) on another stream: c - 100 hidden.
    const int64_t c = len(rng);
    b.kernel("gemm", t, t + c, 0, 0, 7);
    b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", t + 100, t + 900, 0, 0, 13);
    hidden += c - 100;
    comm += 800;
  }
  const Timeline tl(b.done());
  const Row& r = tl.row(find_row(tl, RowKind::overlap));
  const double want = static_cast<double>(hidden) / static_cast<double>(comm);
  QVERIFY(want > 0.3 && want < 0.7);
  // Whole-trace zooms: from ~3 to ~25 periods per pixel column (every column folded).
  for (const int width : {160, 400, 1200}) {
    const Viewport v{0, 1000.0 * kPeriods / width, width};
    const std::vector<LodItem> items = tl.lod(r, v);
    QCOMPARE(total_count(items), uint64_t{tl.size(r)});
    double green = 0, all = 0;
    size_t mixed = 0;
    for (const LodItem& x : items) {
      QVERIFY(x.hidden >= 0.0f && x.hidden <= 1.0f);
      const double w = x.x1 - x.x0;
      green += w * static_cast<double>(x.hidden);
      all += w;
      mixed += x.count > 1 && x.hidden > 0 && x.hidden < 1;
    }
    QVERIFY(mixed > items.size() / 2);
    QVERIFY2(std::abs(green / all - want) < 0.02,
             qPrintable(QString("width %1: green share %2, hidden share %3")
                            .arg(width)
                            .arg(green / all)
                            .arg(want)));
  }
  // Zoomed in, spans come one by one: all hidden or all exposed.
  for (const LodItem& x : tl.lod(r, Viewport{0, 1, 5000})) {
    QCOMPARE(x.count, 1u);
    QCOMPARE(x.hidden, r.spans[x.first].kind == OverlapKind::hidden ? 1.0f : 0.0f);
  }
}

// A queue row (launched, unfinished operations of a stream with launch calls): hidden until
// shown; at any zoom each pixel column's block is the longest queue the step function reaches in
// that column (brute force over the points), and hit finds the point holding at a time.
void TimelineLodTest::test_queue_rows_show_each_columns_longest_queue() {
  Builder b;
  b.process("h", 0, 1);
  std::mt19937_64 rng(7);
  int64_t gpu = 1000, host = 0;
  for (int burst = 0; burst < 300; ++burst) {
    const int n = 1 + static_cast<int>(rng() % 40);  // a burst of launches, then the GPU drains
    for (int k = 0; k < n; ++k) {
      host += 1 + static_cast<int64_t>(rng() % 5);
      const int64_t s = std::max(gpu, host + 2), e = s + 3 + static_cast<int64_t>(rng() % 50);
      const size_t i = b.kernel("k", s, e);
      b.t.activities.set_call(i, host - 1, host, b.name("cudaLaunchKernel"));
      gpu = e;
    }
    host = gpu + static_cast<int64_t>(rng() % 200);
  }
  b.kernel("uncalled", 0, 10, 0, 0, 9);  // stream 9 has no launch calls: no queue row
  Timeline tl(b.done());
  QCOMPARE(find_row(tl, RowKind::queue), -1);  // made when first shown
  const size_t before = tl.rows().size();
  QCOMPARE(tl.show_queues(true), size_t{1});  // stream 9 has no launch calls: no queue row
  QCOMPARE(tl.rows().size(), before + 1);
  const int qi = find_row(tl, RowKind::queue);
  QVERIFY(qi >= 0);
  const Row& q = tl.row(qi);
  QCOMPARE(q.key, int64_t{7});
  QVERIFY(!q.hidden);
  QVERIFY(q.max_length >= 10);
  QCOMPARE(q.points.back().length, int64_t{0});
  // Right under its stream row.
  std::vector<int> visible = tl.visible_rows();
  const auto at = std::find(visible.begin(), visible.end(), qi);
  QVERIFY(at != visible.end() && at != visible.begin());
  QCOMPARE(tl.row(*(at - 1)).kind, RowKind::stream);
  QCOMPARE(tl.row(*(at - 1)).key, int64_t{7});
  QCOMPARE(tl.show_queues(false), size_t{1});
  visible = tl.visible_rows();
  QVERIFY(std::find(visible.begin(), visible.end(), qi) == visible.end());
  QCOMPARE(tl.show_queues(true), size_t{1});  // made once
  QCOMPARE(tl.rows().size(), before + 1);
  const size_t n = q.points.size();
  for (const double ns_per_px : {0.25, 3.0, 40.0, 1000.0}) {
    for (const double min_px : {0.5, 1.0}) {
      const Viewport v{static_cast<double>(rng() % 20000), ns_per_px, 300};
      const std::vector<LodItem> items = tl.lod(q, v, min_px);
      for (int c = 0; c < v.width; ++c) {
        int64_t want = 0, got = 0;
        for (size_t k = 0; k + 1 < n; ++k) {
          const double x0 = v.x_of(q.points[k].at), x1 = v.x_of(q.points[k + 1].at);
          if (x0 < c + 1 && x1 > c) want = std::max(want, q.points[k].length);
        }
        for (const LodItem& it : items) {
          if (it.x0 < c + 1 && it.x1 > c) got = std::max(got, it.length);
        }
        QVERIFY2(want == got, qPrintable(QString("%1 ns/px, column %2: longest %3, drawn %4")
                                             .arg(ns_per_px)
                                             .arg(c)
                                             .arg(want)
                                             .arg(got)));
      }
    }
  }
  // hit: the point holding at t; none before the first launch returned or after the last end.
  const size_t mid = n / 2;
  QCOMPARE(tl.hit(q, q.points[mid].at, 0), static_cast<int64_t>(mid));
  QCOMPARE(tl.hit(q, q.points[mid + 1].at - 1, 0), static_cast<int64_t>(mid));
  QCOMPARE(tl.hit(q, q.points.front().at - 1, 0), int64_t{-1});
  QCOMPARE(tl.hit(q, q.points.back().at, 0), int64_t{-1});
}

QTEST_GUILESS_MAIN(TimelineLodTest)
#include "timeline_lod_test.moc"
