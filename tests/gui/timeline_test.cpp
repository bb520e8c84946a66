// The timeline's rows, geometry and level of detail (c3/gui/timeline.h) on hand-built traces,
// with the level of detail checked against a brute-force fold; and the GUI's number formatting
// and ruler ticks (c3/gui/format.h).
#include "c3/gui/timeline.h"

#include <QTest>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <set>

#include "c3/analyzer/classify.h"
#include "c3/gui/format.h"

using namespace c3;
using namespace c3::gui;

namespace {

using analyzer::Class;

// A trace built by hand: processes, devices, activities, collectives, NVTX ranges.
struct Builder {
  analyzer::Trace t;

  int process(const std::string& host, std::optional<int64_t> rank, int64_t pid) {
    analyzer::Process p;
    p.host = host;
    p.rank = rank;
    p.pid = pid;
    t.processes.push_back(p);
    return static_cast<int>(t.processes.size() - 1);
  }
  void device(int process, int device, const std::string& name) {
    analyzer::Device d;
    d.process = static_cast<int16_t>(process);
    d.device = static_cast<int16_t>(device);
    d.name = name;
    t.devices.push_back(d);
  }
  int32_t name(const std::string& n) {
    for (size_t i = 0; i < t.names.size(); ++i) {
      if (t.names[i] == n) return static_cast<int32_t>(i);
    }
    t.names.push_back(n);
    return static_cast<int32_t>(t.names.size() - 1);
  }
  size_t kernel(const std::string& n, int64_t s, int64_t e, int process = 0, int device = 0,
                int stream = 7, int32_t collective = -1) {
    const size_t i = t.activities.push(s, e, name(n), stream, static_cast<int16_t>(device),
                                       static_cast<int16_t>(process), analyzer::Kind::kernel, 0);
    t.activities.collective[i] = collective;
    return i;
  }
  void copy(int64_t s, int64_t e, int process = 0, int device = 0, int stream = 9) {
    t.activities.push(s, e, name("Memcpy HtoD (Host -> Device)"), stream,
                      static_cast<int16_t>(device), static_cast<int16_t>(process),
                      analyzer::Kind::memcpy, 4096);
  }
  int32_t collective(int process, const std::string& comm, int64_t s, int64_t e) {
    analyzer::Collective c;
    c.process = static_cast<int16_t>(process);
    c.comm_id = comm;
    c.op = "AllReduce";
    c.gpu_start = s;
    c.gpu_end = e;
    t.collectives.push_back(c);
    return static_cast<int32_t>(t.collectives.size() - 1);
  }
  void range(int process, int64_t thread, const std::string& n, int64_t s, int64_t e, int depth,
             const std::string& domain = "default") {
    t.ranges.push_back({static_cast<int16_t>(process), thread, domain, n, s, e, depth});
  }
  void start_end(int process, int64_t thread, const std::string& n, int64_t s, int64_t e,
                 const std::string& domain) {
    analyzer::Range g{static_cast<int16_t>(process), thread, domain, n, s, e, 0};
    g.start_end = true;
    t.ranges.push_back(g);
  }
  analyzer::Trace& done() {
    t.activities.sort();
    analyzer::classify(t, analyzer::Rules::defaults());
    return t;
  }
};

std::vector<std::string> labels(const Timeline& tl, const std::vector<int>& rows) {
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (int r : rows) out.push_back(tl.row(r).label);
  return out;
}

int find_row(const Timeline& tl, RowKind kind, int process = -1) {
  for (size_t i = 0; i < tl.rows().size(); ++i) {
    const Row& r = tl.rows()[i];
    if (r.kind == kind && (process < 0 || r.process == process)) return static_cast<int>(i);
  }
  return -1;
}

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

uint64_t total_count(const std::vector<LodItem>& items) {
  uint64_t n = 0;
  for (const LodItem& x : items) n += x.count;
  return n;
}

}  // namespace

class TimelineTest : public QObject {
  Q_OBJECT

 private slots:
  void test_rows();
  void test_overlap_row();
  void test_nvtx_domains_and_start_end_rows();
  void test_lod_wide_items_one_by_one();
  void test_lod_folds_a_million_items();
  void test_lod_long_items();
  void test_lod_matches_brute_force();
  void test_hit();
  void test_move();
  void test_visible_rows();
  void test_offset_shifts_rows();
  void test_find_and_reveal();
  void test_filter();
  void test_overview();
  void test_format();
  void test_ruler_ticks();
};

void TimelineTest::test_rows() {
  Builder b;
  const int p0 = b.process("h1", 1, 11);
  const int p1 = b.process("h1", 0, 10);
  const int p2 = b.process("h2", 2, 12);
  b.device(p0, 0, "H100");
  const int32_t c0 = b.collective(p0, "commA", 50, 150);
  b.collective(p0, "commB", 200, 300);
  b.collective(p0, "commB", 400, 500);
  b.collective(p0, "commA", -1, -1);  // no GPU work linked: not shown
  b.kernel("gemm", 0, 100, p0, 0, 7);
  b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 150, p0, 0, 3, c0);
  b.kernel("gemm", 0, 10, p0, 1, 5);
  b.kernel("gemm", 0, 100, p1, 0, 7);
  b.kernel("gemm", 0, 100, p2, 0, 7);
  b.copy(100, 200, p2, 0, -1);
  b.range(p0, 11, "step", 0, 300, 0);
  b.range(p0, 11, "forward", 0, 100, 1);
  b.range(p0, 11, "backward", 100, 200, 1);
  b.range(p0, 12, "loader", 0, 50, 0);
  const Timeline tl(b.done());

  QCOMPARE(labels(tl, tl.roots()), (std::vector<std::string>{"host h1", "host h2"}));
  const Row& h1 = tl.row(tl.roots()[0]);
  QCOMPARE(labels(tl, h1.children),
           (std::vector<std::string>{"rank 0 (pid 10)", "rank 1 (pid 11)"}));
  QCOMPARE(tl.row(h1.children[0]).process, p1);
  const Row& rank1 = tl.row(h1.children[1]);
  QCOMPARE(rank1.process, p0);
  QCOMPARE(labels(tl, rank1.children),
           (std::vector<std::string>{"GPU 0: H100", "GPU 1", "NCCL commA", "NCCL commB",
                                     "NVTX thread 11", "NVTX thread 12"}));
  const Row& gpu0 = tl.row(rank1.children[0]);
  QCOMPARE(gpu0.kind, RowKind::group);
  QCOMPARE(gpu0.device, 0);
  QCOMPARE(labels(tl, gpu0.children),
           (std::vector<std::string>{"overlap", "stream 3", "stream 7"}));
  QCOMPARE(tl.row(gpu0.children[0]).kind, RowKind::overlap);
  const Row& s3 = tl.row(gpu0.children[1]);
  QCOMPARE(s3.kind, RowKind::stream);
  QCOMPARE(s3.key, int64_t{3});
  QCOMPARE(s3.items.size(), size_t{1});
  QCOMPARE(tl.name(s3, 0), std::string("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  QCOMPARE(tl.classes(s3, 0),
           static_cast<uint8_t>(1u << static_cast<unsigned>(Class::communication)));
  QCOMPARE(labels(tl, tl.row(rank1.children[1]).children),
           (std::vector<std::string>{"overlap", "stream 5"}));
  // One collectives row per communicator, holding its calls with GPU work.
  const Row& comm_a = tl.row(rank1.children[2]);
  QCOMPARE(comm_a.kind, RowKind::collectives);
  QCOMPARE(comm_a.items, (std::vector<uint32_t>{0}));
  const Row& comm_b = tl.row(rank1.children[3]);
  QCOMPARE(comm_b.items, (std::vector<uint32_t>{1, 2}));
  QCOMPARE(tl.start(comm_b, 1), int64_t{400});
  QCOMPARE(tl.end(comm_b, 1), int64_t{500});
  QCOMPARE(tl.name(comm_b, 0), std::string("AllReduce"));
  // NVTX: a group per thread, a row per depth.
  const Row& th11 = tl.row(rank1.children[4]);
  QCOMPARE(th11.kind, RowKind::group);
  QCOMPARE(th11.key, int64_t{11});
  QCOMPARE(labels(tl, th11.children), (std::vector<std::string>{"depth 0", "depth 1"}));
  const Row& d1 = tl.row(th11.children[1]);
  QCOMPARE(d1.kind, RowKind::nvtx);
  QCOMPARE(d1.nvtx_depth, 1);
  QCOMPARE(tl.size(d1), size_t{2});
  QCOMPARE(tl.name(d1, 0), std::string("forward"));
  QCOMPARE(tl.name(d1, 1), std::string("backward"));
  QCOMPARE(tl.row(rank1.children[5]).children.size(), size_t{1});
  // Host h2: an activity without a stream.
  const Row& rank2 = tl.row(tl.row(tl.roots()[1]).children[0]);
  QCOMPARE(rank2.process, p2);
  QCOMPARE(labels(tl, tl.row(rank2.children[0]).children),
           (std::vector<std::string>{"overlap", "no stream", "stream 7"}));
  // Parents and children agree; every row is reached once.
  std::set<int> reached;
  std::vector<int> stack(tl.roots().begin(), tl.roots().end());
  while (!stack.empty()) {
    const int r = stack.back();
    stack.pop_back();
    QVERIFY(reached.insert(r).second);
    for (int c : tl.row(r).children) {
      QCOMPARE(tl.row(c).parent, r);
      stack.push_back(c);
    }
  }
  QCOMPARE(reached.size(), tl.rows().size());
  QCOMPARE(tl.first_ns(), int64_t{0});
  QCOMPARE(tl.last_ns(), int64_t{300});
}

void TimelineTest::test_overlap_row() {
  Builder b;
  b.process("h", 0, 1);
  // compute [0,100) [200,300) on stream 7 and [280,400) on stream 9 (union [200,400)), and
  // [610,700); communication [50,250), [500,600), [620,640); a copy (neither).
  b.kernel("gemm", 0, 100);
  b.kernel("gemm", 200, 300);
  b.kernel("gemm", 280, 400, 0, 0, 9);
  b.kernel("gemm", 610, 700);
  b.kernel("ncclKernel_AllReduce", 50, 250, 0, 0, 8);
  b.kernel("ncclKernel_AllReduce", 500, 600, 0, 0, 8);
  b.kernel("ncclKernel_AllReduce", 620, 640, 0, 0, 8);
  b.copy(240, 560);
  const Timeline tl(b.done());
  const int o = find_row(tl, RowKind::overlap);
  QVERIFY(o >= 0);
  const Row& r = tl.row(o);
  struct Want {
    int64_t s, e;
    OverlapKind kind;
  };
  const std::vector<Want> want = {{50, 100, OverlapKind::hidden},
                                  {100, 200, OverlapKind::exposed},
                                  {200, 250, OverlapKind::hidden},
                                  {500, 600, OverlapKind::exposed},
                                  {620, 640, OverlapKind::hidden}};
  QCOMPARE(tl.size(r), want.size());
  int64_t hidden = 0, exposed = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    QCOMPARE(tl.start(r, k), want[k].s);
    QCOMPARE(tl.end(r, k), want[k].e);
    QCOMPARE(r.spans[k].kind, want[k].kind);
    QCOMPARE(tl.classes(r, k), static_cast<uint8_t>(1u << static_cast<unsigned>(want[k].kind)));
    (want[k].kind == OverlapKind::hidden ? hidden : exposed) += want[k].e - want[k].s;
  }
  QCOMPARE(tl.name(r, 0), std::string("hidden communication"));
  QCOMPARE(tl.name(r, 1), std::string("exposed communication"));
  // Hidden + exposed = communication time (its union).
  QCOMPARE(hidden, int64_t{50 + 50 + 20});
  QCOMPARE(hidden + exposed, int64_t{200 + 100 + 20});
  // Painted at 10 ns per pixel: five spans, each wide enough to come out alone.
  const std::vector<LodItem> items = tl.lod(r, {0, 10, 100});
  QCOMPARE(items.size(), size_t{5});
  QCOMPARE(items[1].x0, 10.0);
  QCOMPARE(items[1].x1, 20.0);
  QCOMPARE(items[1].classes,
           static_cast<uint8_t>(1u << static_cast<unsigned>(OverlapKind::exposed)));
  // Zoomed out, an exposed sliver [1000, 1001) and the hidden span after it [1001, 3000) start in
  // one pixel column (50 ns per pixel): the sliver is a block of that column, the long hidden
  // span keeps its own colour (folded together, the row would read "exposed" for 40 pixels).
  Builder z;
  z.process("h", 0, 1);
  z.kernel("gemm", 1001, 3000);
  z.kernel("ncclKernel_AllReduce", 1000, 3000, 0, 0, 8);
  const Timeline tz(z.done());
  const Row& zr = tz.row(find_row(tz, RowKind::overlap));
  QCOMPARE(tz.size(zr), size_t{2});
  const std::vector<LodItem> zi = tz.lod(zr, {0, 50, 100});
  QCOMPARE(zi.size(), size_t{2});
  QCOMPARE(zi[0].classes, static_cast<uint8_t>(1u << static_cast<unsigned>(OverlapKind::exposed)));
  QCOMPARE(zi[0].x1, 21.0);
  QCOMPARE(zi[1].count, 1u);
  QCOMPARE(zi[1].classes, static_cast<uint8_t>(1u << static_cast<unsigned>(OverlapKind::hidden)));
  QCOMPARE(zi[1].x1, 60.0);
}

// Issue 13: depth-0 ranges of two domains shared a row (domain app's `iter` hidden under the
// default domain's outer range), and start/end ranges shared rows with push/pop ones. As in
// Nsight Systems: each domain its rows under the thread, start/end ranges on rows of their own.
void TimelineTest::test_nvtx_domains_and_start_end_rows() {
  Builder b;
  const int p = b.process("h", 0, 10);
  b.device(p, 0, "H100");
  b.kernel("gemm", 0, 100, p, 0, 7);
  b.range(p, 21, "default_outer", 0, 500, 0);
  b.range(p, 21, "iter", 100, 200, 0, "app");
  b.start_end(p, 21, "A", 0, 300, "app");
  b.start_end(p, 21, "B", 100, 400, "app");  // overlaps A: a second row
  b.start_end(p, 21, "C", 350, 600, "app");  // A's row is free again at 300
  b.range(p, 22, "load", 0, 50, 0, "app");
  for (int i = 0; i < 40; ++i) b.start_end(p, 23, "overlapping", i, 1000 + i, "io");
  const Timeline tl(b.done());
  const Row& rank = tl.row(tl.row(tl.roots()[0]).children[0]);
  QCOMPARE(labels(tl, rank.children),
           (std::vector<std::string>{"GPU 0: H100", "NVTX thread 21", "NVTX thread 22 (app)",
                                     "NVTX thread 23 (io)"}));
  const Row& th21 = tl.row(rank.children[1]);
  QCOMPARE(labels(tl, th21.children), (std::vector<std::string>{"domain app", "domain default"}));
  const Row& app = tl.row(th21.children[0]);
  QCOMPARE(app.kind, RowKind::group);
  QCOMPARE(labels(tl, app.children),
           (std::vector<std::string>{"depth 0", "start/end 1", "start/end 2"}));
  auto names = [&](int row) {
    std::vector<std::string> out;
    for (size_t k = 0; k < tl.size(tl.row(row)); ++k) out.push_back(tl.name(tl.row(row), k));
    return out;
  };
  QCOMPARE(names(app.children[0]), (std::vector<std::string>{"iter"}));
  QCOMPARE(names(app.children[1]), (std::vector<std::string>{"A", "C"}));
  QCOMPARE(names(app.children[2]), (std::vector<std::string>{"B"}));
  const Row& def = tl.row(th21.children[1]);
  QCOMPARE(labels(tl, def.children), (std::vector<std::string>{"depth 0"}));
  QCOMPARE(names(def.children[0]), (std::vector<std::string>{"default_outer"}));
  // One domain on a thread: no domain group, its name in the thread's label.
  QCOMPARE(labels(tl, tl.row(rank.children[2]).children), (std::vector<std::string>{"depth 0"}));
  // 40 start/end ranges all overlapping: at most 32 rows, every range on one of them, each
  // row's items in start order.
  const Row& th23 = tl.row(rank.children[3]);
  QCOMPARE(th23.children.size(), size_t{32});
  size_t total = 0;
  for (const int c : th23.children) {
    const Row& r = tl.row(c);
    QCOMPARE(r.kind, RowKind::nvtx);
    total += tl.size(r);
    for (size_t k = 1; k < tl.size(r); ++k) QVERIFY(tl.start(r, k - 1) <= tl.start(r, k));
  }
  QCOMPARE(total, size_t{40});
}

void TimelineTest::test_lod_wide_items_one_by_one() {
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

void TimelineTest::test_lod_folds_a_million_items() {
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

void TimelineTest::test_lod_long_items() {
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

void TimelineTest::test_lod_matches_brute_force() {
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

void TimelineTest::test_hit() {
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

void TimelineTest::test_move() {
  Builder b;
  b.process("h1", 0, 1);
  b.process("h2", 1, 2);
  for (int s : {1, 2, 3, 4}) b.kernel("gemm", 0, 10, 0, 0, s);
  b.kernel("gemm", 0, 10, 1);
  Timeline tl(b.done());
  const int gpu = tl.row(find_row(tl, RowKind::stream, 0)).parent;
  auto order = [&] { return labels(tl, tl.row(gpu).children); };
  QCOMPARE(order(),
           (std::vector<std::string>{"overlap", "stream 1", "stream 2", "stream 3", "stream 4"}));
  const int s3 = tl.row(gpu).children[3];
  QVERIFY(tl.move(s3, -1));
  QCOMPARE(order(),
           (std::vector<std::string>{"overlap", "stream 1", "stream 3", "stream 2", "stream 4"}));
  QVERIFY(tl.move(s3, 1));
  QVERIFY(tl.move(s3, 1));
  QCOMPARE(order(),
           (std::vector<std::string>{"overlap", "stream 1", "stream 2", "stream 4", "stream 3"}));
  QVERIFY(!tl.move(s3, 1));  // already last
  QVERIFY(!tl.move(tl.row(gpu).children[0], -1));
  QCOMPARE(order(),
           (std::vector<std::string>{"overlap", "stream 1", "stream 2", "stream 4", "stream 3"}));
  // Moving by more than one place shifts the row; the others keep their order.
  QVERIFY(tl.move(tl.row(gpu).children[1], 2));
  QCOMPARE(order(),
           (std::vector<std::string>{"overlap", "stream 2", "stream 4", "stream 1", "stream 3"}));
  QVERIFY(tl.move(tl.row(gpu).children[4], -3));
  QCOMPARE(order(),
           (std::vector<std::string>{"overlap", "stream 3", "stream 2", "stream 4", "stream 1"}));
  // Roots move too, and the display order follows.
  QCOMPARE(labels(tl, tl.roots()), (std::vector<std::string>{"host h1", "host h2"}));
  QVERIFY(tl.move(tl.roots()[1], -1));
  QCOMPARE(labels(tl, tl.roots()), (std::vector<std::string>{"host h2", "host h1"}));
  QCOMPARE(tl.visible_rows().front(), tl.roots()[0]);
  QCOMPARE(tl.row(tl.visible_rows()[1]).label, std::string("rank 1 (pid 2)"));
}

void TimelineTest::test_visible_rows() {
  Builder b;
  b.process("h", 0, 1);
  b.kernel("gemm", 0, 10, 0, 0, 1);
  b.kernel("gemm", 0, 10, 0, 0, 2);
  b.kernel("gemm", 0, 10, 0, 1, 1);
  b.range(0, 5, "step", 0, 10, 0);
  Timeline tl(b.done());
  // All expanded: every row, parents before their children, siblings in order (depth first).
  std::vector<int> v = tl.visible_rows();
  QCOMPARE(v.size(), tl.rows().size());
  std::vector<int> dfs;
  std::function<void(int)> walk = [&](int r) {
    dfs.push_back(r);
    for (int c : tl.row(r).children) walk(c);
  };
  for (int r : tl.roots()) walk(r);
  QCOMPARE(v, dfs);
  // A collapsed group shows, its rows do not.
  const int gpu0 = tl.row(find_row(tl, RowKind::stream)).parent;
  tl.row(gpu0).expanded = false;
  v = tl.visible_rows();
  QVERIFY(std::find(v.begin(), v.end(), gpu0) != v.end());
  QCOMPARE(v.size(), tl.rows().size() - 3);  // overlap, stream 1, stream 2
  for (int c : tl.row(gpu0).children) QVERIFY(std::find(v.begin(), v.end(), c) == v.end());
  // A hidden row goes with its rows, collapsed or not.
  tl.row(gpu0).expanded = true;
  tl.row(gpu0).hidden = true;
  v = tl.visible_rows();
  QCOMPARE(v.size(), tl.rows().size() - 4);
  QVERIFY(std::find(v.begin(), v.end(), gpu0) == v.end());
  tl.row(gpu0).hidden = false;
  const int nvtx = find_row(tl, RowKind::nvtx);
  tl.row(nvtx).hidden = true;
  v = tl.visible_rows();
  QCOMPARE(v.size(), tl.rows().size() - 1);
  QVERIFY(std::find(v.begin(), v.end(), tl.row(nvtx).parent) != v.end());
  // Collapsing the process leaves the host and the process.
  tl.row(tl.roots()[0]).expanded = true;
  tl.row(tl.row(tl.roots()[0]).children[0]).expanded = false;
  QCOMPARE(tl.visible_rows().size(), size_t{2});
}

void TimelineTest::test_offset_shifts_rows() {
  Builder b;
  b.process("h1", 0, 1);
  b.process("h2", 1, 2);
  const int32_t c = b.collective(1, "comm", 100, 200);
  b.kernel("gemm", 0, 150, 0);
  b.kernel("gemm", 0, 150, 1);
  b.kernel("ncclKernel_AllReduce", 100, 200, 1, 0, 8, c);
  b.range(1, 9, "step", 0, 300, 0);
  analyzer::Trace& t = b.done();
  t.processes[1].offset_ns = 1000;
  const Timeline tl(t);
  const Row& r0 = tl.row(find_row(tl, RowKind::stream, 0));
  const Row& r1 = tl.row(find_row(tl, RowKind::stream, 1));
  QCOMPARE(r0.offset, int64_t{0});
  QCOMPARE(r1.offset, int64_t{1000});
  QCOMPARE(tl.start(r0, 0), int64_t{0});
  QCOMPARE(tl.start(r1, 0), int64_t{1000});
  QCOMPARE(tl.end(r1, 0), int64_t{1150});
  const Row& ov = tl.row(find_row(tl, RowKind::overlap, 1));
  QCOMPARE(tl.start(ov, 0), int64_t{1100});  // hidden [100,150) + 1000
  QCOMPARE(tl.end(ov, 0), int64_t{1150});
  const Row& comm = tl.row(find_row(tl, RowKind::collectives, 1));
  QCOMPARE(tl.start(comm, 0), int64_t{1100});
  QCOMPARE(tl.end(comm, 0), int64_t{1200});
  const Row& nvtx = tl.row(find_row(tl, RowKind::nvtx, 1));
  QCOMPARE(tl.end(nvtx, 0), int64_t{1300});
  QCOMPARE(tl.first_ns(), int64_t{0});
  QCOMPARE(tl.last_ns(), int64_t{1300});
  // Painting and hit testing use the shifted times.
  const std::vector<LodItem> items = tl.lod(r1, {1000, 1, 500});
  QCOMPARE(items.size(), size_t{1});
  QCOMPARE(items[0].x0, 0.0);
  QCOMPARE(items[0].x1, 150.0);
  QCOMPARE(tl.hit(r1, 1050, 0), int64_t{0});
  QCOMPARE(tl.hit(r1, 50, 0), int64_t{-1});
  // The overview is over the aligned span.
  const auto buckets = tl.overview(13);
  double compute = 0;
  for (const auto& x : buckets)
    compute += static_cast<double>(x[static_cast<size_t>(Class::compute)]);
  QVERIFY(std::fabs(compute * 1300.0 / 13 - 300) < 1e-3);
}

void TimelineTest::test_find_and_reveal() {
  Builder b;
  b.process("h", 0, 1);
  b.process("h", 1, 2);
  const int32_t c0 = b.collective(0, "comm", 20, 40);
  const int32_t c1 = b.collective(1, "comm", 25, 45);
  const int32_t c2 = b.collective(1, "comm", -1, -1);
  for (int i = 0; i < 5; ++i) {
    b.kernel("gemm", int64_t{100} * i, int64_t{100} * i + 50, 0, 0, 7 + i % 2);
    b.kernel("gemm", int64_t{100} * i + 10, int64_t{100} * i + 40, 1, i % 2, 7);
  }
  b.kernel("ncclKernel_AllReduce", 20, 40, 0, 0, 3, c0);
  b.kernel("ncclKernel_AllReduce", 25, 45, 1, 0, 3, c1);
  const analyzer::Trace& t = b.done();
  Timeline tl(t);
  for (size_t a = 0; a < t.activities.size(); ++a) {
    const auto [row, k] = tl.find_activity(a);
    QVERIFY(row >= 0 && k >= 0);
    const Row& r = tl.row(row);
    QCOMPARE(r.kind, RowKind::stream);
    QCOMPARE(r.items[static_cast<size_t>(k)], static_cast<uint32_t>(a));
    QCOMPARE(r.process, static_cast<int>(t.activities.process[a]));
    QCOMPARE(r.device, static_cast<int>(t.activities.device[a]));
    QCOMPARE(r.key, static_cast<int64_t>(t.activities.stream[a]));
    QCOMPARE(tl.start(r, static_cast<size_t>(k)), t.activities.start[a]);
  }
  QCOMPARE(tl.find_activity(t.activities.size()), (std::pair<int, int64_t>{-1, -1}));
  for (const int32_t c : {c0, c1}) {
    const auto [row, k] = tl.find_collective(static_cast<size_t>(c));
    QVERIFY(row >= 0);
    QCOMPARE(tl.row(row).kind, RowKind::collectives);
    QCOMPARE(tl.row(row).items[static_cast<size_t>(k)], static_cast<uint32_t>(c));
    QCOMPARE(tl.row(row).process, static_cast<int>(t.collectives[static_cast<size_t>(c)].process));
  }
  QCOMPARE(tl.find_collective(static_cast<size_t>(c2)), (std::pair<int, int64_t>{-1, -1}));
  // reveal: un-hides the row and every ancestor, and expands them.
  const int row = tl.find_activity(t.activities.size() - 1).first;
  tl.row(row).hidden = true;
  const int gpu = tl.row(row).parent;
  tl.row(gpu).expanded = false;
  const int process = tl.row(gpu).parent;
  tl.row(process).hidden = true;
  tl.row(tl.row(process).parent).expanded = false;
  auto visible = [&] {
    const std::vector<int> v = tl.visible_rows();
    return std::find(v.begin(), v.end(), row) != v.end();
  };
  QVERIFY(!visible());
  tl.reveal(row);
  QVERIFY(visible());
  QVERIFY(!tl.row(row).hidden && !tl.row(process).hidden);
  QVERIFY(tl.row(gpu).expanded);
}

void TimelineTest::test_filter() {
  Builder b;
  b.process("h", 0, 1);
  for (int i = 0; i < 600; ++i)
    b.kernel(i % 4 ? "gemm" : "ncclKernel_AllReduce", int64_t{10} * i, int64_t{10} * i + 5);
  analyzer::Trace& t = b.done();
  Timeline tl(t);
  const int ri = find_row(tl, RowKind::stream);
  const size_t kept = tl.filter(
      [&](const Row&, uint32_t a) { return t.activities.cls[a] == Class::communication; });
  QCOMPARE(kept, size_t{150});
  QVERIFY(tl.filtered());
  const Row& r = tl.row(ri);
  QCOMPARE(tl.size(r), size_t{150});
  QCOMPARE(tl.name(r, 0), std::string("ncclKernel_AllReduce"));
  const std::vector<LodItem> all = tl.lod(r, {0, 1000, 10});
  QCOMPARE(total_count(all), uint64_t{150});
  for (const LodItem& x : all) {
    QCOMPARE(x.classes, static_cast<uint8_t>(1u << static_cast<unsigned>(Class::communication)));
  }
  // Filtering again filters every item, not the kept ones.
  QCOMPARE(tl.filter([](const Row&, uint32_t) { return true; }), size_t{600});
  tl.clear_filter();
  QVERIFY(!tl.filtered());
  QCOMPARE(tl.size(tl.row(ri)), size_t{600});
  QCOMPARE(total_count(tl.lod(tl.row(ri), {0, 1000, 10})), uint64_t{600});
}

void TimelineTest::test_overview() {
  Builder b;
  b.process("h", 0, 1);
  b.kernel("gemm", 0, 100);
  b.kernel("gemm", 300, 700);
  b.kernel("ncclKernel_AllReduce", 100, 250, 0, 0, 8);
  b.copy(800, 1000);
  const Timeline tl(b.done());
  QCOMPARE(tl.last_ns() - tl.first_ns(), int64_t{1000});
  for (int n : {1, 7, 10, 1000, 3000}) {
    const auto buckets = tl.overview(n);
    QCOMPARE(buckets.size(), static_cast<size_t>(n));
    const double per = 1000.0 / n;
    std::array<double, analyzer::kClasses> sum{};
    for (const auto& x : buckets) {
      for (size_t c = 0; c < sum.size(); ++c) {
        QVERIFY(x[c] >= 0 && x[c] <= 1.0f + 1e-4f);
        sum[c] += static_cast<double>(x[c]) * per;
      }
    }
    QVERIFY2(std::fabs(sum[static_cast<size_t>(Class::compute)] - 500) < 0.05,
             qPrintable(QString::number(n)));
    QVERIFY(std::fabs(sum[static_cast<size_t>(Class::communication)] - 150) < 0.05);
    QVERIFY(std::fabs(sum[static_cast<size_t>(Class::memory)] - 200) < 0.05);
    QCOMPARE(sum[static_cast<size_t>(Class::other)], 0.0);
  }
  // Ten buckets of 100 ns: the second is all communication, the ninth and tenth all memory.
  const auto ten = tl.overview(10);
  QCOMPARE(ten[0][static_cast<size_t>(Class::compute)], 1.0f);
  QCOMPARE(ten[1][static_cast<size_t>(Class::communication)], 1.0f);
  QCOMPARE(ten[2][static_cast<size_t>(Class::communication)], 0.5f);
  QCOMPARE(ten[2][static_cast<size_t>(Class::compute)], 0.0f);
  QCOMPARE(ten[9][static_cast<size_t>(Class::memory)], 1.0f);
  QCOMPARE(ten[7][static_cast<size_t>(Class::memory)], 0.0f);
}

void TimelineTest::test_format() {
  QCOMPARE(format_duration(0), QString("0 ns"));
  QCOMPARE(format_duration(950), QString("950 ns"));
  QCOMPARE(format_duration(12345), QString("12.3 µs"));
  QCOMPARE(format_duration(4.56e6), QString("4.56 ms"));
  QCOMPARE(format_duration(1.2e9), QString("1.20 s"));
  QCOMPARE(format_duration(123e9), QString("123 s"));
  QCOMPARE(format_duration(-2500), QString("-2.50 µs"));
  QCOMPARE(format_bytes(512), QString("512 B"));
  QCOMPARE(format_bytes(1536), QString("1.50 KiB"));
  QCOMPARE(format_bytes(4096), QString("4.00 KiB"));
  QCOMPARE(format_bytes(256.0 * 1024 * 1024), QString("256 MiB"));
  QCOMPARE(format_bytes(1024.0 * 1024 * 1024), QString("1.00 GiB"));
  QCOMPARE(format_bandwidth(0), QString("-"));
  QCOMPARE(format_bandwidth(123e9), QString("123 GB/s"));
  QCOMPARE(format_bandwidth(1.5e6), QString("1.50 MB/s"));
  QCOMPARE(format_bandwidth(2e3), QString("2.00 kB/s"));
  QCOMPARE(format_pct(42.123), QString("42.1 %"));
  QCOMPARE(format_pct(0), QString("0.0 %"));
  QCOMPARE(tick_step(1000, 50), 5e4);
  QCOMPARE(tick_step(1, 50), 50.0);
  QCOMPARE(tick_step(3, 50), 200.0);
  QCOMPARE(tick_step(0.01, 50), 1.0);
}

void TimelineTest::test_ruler_ticks() {
  // 900 µs over 1000 px, labels at least 50 px apart: major ticks every 50 µs, minor every 10 µs.
  std::vector<Tick> ticks = ruler_ticks(0, 9e5, 900, 50, 0);
  QCOMPARE(ticks.size(), size_t{91});
  std::vector<QString> majors;
  for (const Tick& k : ticks) {
    QCOMPARE(k.major, !k.label.isEmpty());
    if (k.major) majors.push_back(k.label);
  }
  QCOMPARE(majors.size(), size_t{19});
  QCOMPARE(majors[0], QString("0 µs"));
  QCOMPARE(majors[1], QString("50 µs"));
  QCOMPARE(majors.back(), QString("900 µs"));
  QCOMPARE(ticks[5].t, 5e4);
  QVERIFY(ticks[5].major);
  // Relative to an origin.
  ticks = ruler_ticks(0, 9e5, 900, 50, 12345);
  QCOMPARE(ticks.front().t, 2345.0);
  QCOMPARE(ticks[1].t, 12345.0);
  QCOMPARE(ticks[1].label, QString("0 µs"));
  // At every zoom: ticks in the window and in order, minor ticks >= min_px / 5 apart, labels on
  // the major ones only, >= min_px apart and all different.
  std::mt19937_64 rng(3);
  for (int z = 0; z < 300; ++z) {
    const double ns_per_px = std::pow(10.0, std::uniform_real_distribution<>(-2, 9)(rng));
    const double min_px = std::uniform_real_distribution<>(20, 150)(rng);
    const double width = std::uniform_real_distribution<>(100, 3000)(rng);
    const double origin = std::round(std::uniform_real_distribution<>(0, 1e12)(rng));
    const double t0 =
        origin + std::round(std::uniform_real_distribution<>(-1e3, 1e6)(rng) * ns_per_px);
    const double t1 = t0 + width * ns_per_px;
    ticks = ruler_ticks(t0, t1, ns_per_px, min_px, origin);
    const QString where = QString("%1 ns/px, min %2 px").arg(ns_per_px).arg(min_px);
    QVERIFY2(!ticks.empty(), qPrintable(where));
    const Tick* last_major = nullptr;
    std::set<QString> seen;
    for (size_t i = 0; i < ticks.size(); ++i) {
      const Tick& k = ticks[i];
      QVERIFY2(k.t >= t0 && k.t <= t1, qPrintable(where));
      QCOMPARE(k.major, !k.label.isEmpty());
      if (i > 0) {
        QVERIFY2((k.t - ticks[i - 1].t) / ns_per_px >= min_px / 5 - 1e-9, qPrintable(where));
      }
      if (k.major) {
        if (last_major)
          QVERIFY2((k.t - last_major->t) / ns_per_px >= min_px - 1e-9, qPrintable(where));
        QVERIFY2(seen.insert(k.label).second, qPrintable(where + ": " + k.label));
        last_major = &k;
      }
    }
    // A window of at least two major steps has a labelled tick.
    if (width * ns_per_px >= 2 * tick_step(ns_per_px, min_px))
      QVERIFY2(!seen.empty(), qPrintable(where));
  }
}

QTEST_GUILESS_MAIN(TimelineTest)
#include "timeline_test.moc"
