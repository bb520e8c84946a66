// The timeline's rows and geometry (c3/gui/timeline.h) on hand-built traces (the level of detail
// and hit testing: timeline_lod_test.cpp); and the GUI's number formatting and ruler ticks
// (c3/gui/format.h).
#include "c3/gui/timeline.h"

#include <QTest>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <set>

#include "c3/gui/format.h"
#include "timeline_builder.h"

using namespace c3;
using namespace c3::gui;
using namespace c3::gui::testing;

using analyzer::Class;

class TimelineTest : public QObject {
  Q_OBJECT

 private slots:
  void test_rows();
  void test_overlap_row();
  void test_nvtx_domains_and_start_end_rows();
  void test_move();
  void test_visible_rows();
  void test_offset_shifts_rows();
  void test_find_and_reveal();
  void test_filter();
  void test_overview();
  void test_format();
  void test_ruler_ticks();
  void test_threads_named_by_what_they_hold();
  void test_marks_row();
  void test_ranks_and_hosts_in_number_order();
  void test_threads_collapse_to_fit();
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
                                     "thread 11 (NVTX)", "thread 12 (NVTX)"}));
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
           (std::vector<std::string>{"GPU 0: H100", "thread 21 (NVTX)", "thread 22 (NVTX app)",
                                     "thread 23 (NVTX io)"}));
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
  // Issue 24: overlap without communication is "-" (as the text report), not "0.0 %" (read:
  // all exposed); counts are singular for one ("1 ranks", "1 processes").
  QCOMPARE(format_overlap(0, 0), QString("-"));
  QCOMPARE(format_overlap(0, 1000), QString("0.0 %"));
  QCOMPARE(format_overlap(15.5, 1000), QString("15.5 %"));
  QCOMPARE(count(1, "rank", "ranks"), QString("1 rank"));
  QCOMPARE(count(2, "rank", "ranks"), QString("2 ranks"));
  QCOMPARE(count(0, "process", "processes"), QString("0 processes"));
  QCOMPARE(count(1, "process", "processes"), QString("1 process"));
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

// Issue 24 item 7: a gloo thread of a PyTorch trace was labelled "NVTX thread"; threads are named
// by what their ranges are.
void TimelineTest::test_threads_named_by_what_they_hold() {
  Builder b;
  const int p = b.process("h", 0, 10);
  b.kernel("gemm", 0, 100, p, 0, 7);
  b.range(p, 31, "gloo:all_reduce", 0, 50, 0, "pytorch");
  b.range(p, 31, "gloo:broadcast", 60, 90, 0, "pytorch");
  b.range(p, 32, "ProfilerStep#1", 0, 100, 0, "pytorch");
  b.range(p, 32, "gloo:all_reduce", 10, 20, 1, "pytorch");
  b.range(p, 33, "step", 0, 100, 0);
  const Timeline tl(b.done());
  const Row& rank = tl.row(tl.row(tl.roots()[0]).children[0]);
  QCOMPARE(labels(tl, rank.children),
           (std::vector<std::string>{"GPU 0", "thread 31 (CPU collectives)",
                                     "thread 32 (PyTorch annotations)", "thread 33 (NVTX)"}));
  for (size_t i = 1; i < rank.children.size(); ++i) QVERIFY(tl.row(rank.children[i]).thread);
  QVERIFY(!tl.row(rank.children[0]).thread);
}

// Issue 24 item 8: NVTX marks (instants) get a row of their own per thread and domain; search
// (Timeline::filter by name) finds them, and the level of detail draws every one.
void TimelineTest::test_marks_row() {
  Builder b;
  const int p = b.process("h", 0, 10);
  b.kernel("gemm", 0, 10000, p, 0, 7);
  b.range(p, 5, "step", 0, 10000, 0);
  for (int i = 0; i < 2000; ++i)
    b.range(p, 5, "checkpoint " + std::to_string(i), int64_t{5} * i, int64_t{5} * i, 0);
  Timeline tl(b.done());
  const Row& thread = tl.row(tl.row(tl.row(tl.roots()[0]).children[0]).children[1]);
  QCOMPARE(labels(tl, thread.children), (std::vector<std::string>{"depth 0", "marks"}));
  const int marks = thread.children[1];
  QVERIFY(tl.row(marks).marks);
  QCOMPARE(tl.size(tl.row(marks)), size_t{2000});
  QCOMPARE(tl.size(tl.row(thread.children[0])), size_t{1});
  QCOMPARE(total_count(tl.lod(tl.row(marks), Viewport{0, 10, 1000})), uint64_t{2000});
  const size_t kept = tl.filter([&](const Row& r, uint32_t x) {
    return r.kind == RowKind::nvtx && tl.trace().ranges[x].name.rfind("checkpoint 1", 0) == 0;
  });
  QCOMPARE(kept, size_t{1111});  // 1, 10..19, 100..199, 1000..1999
  QCOMPARE(tl.size(tl.row(marks)), size_t{1111});
}

// Issue 24 item 9: ranks are numbers (2 before 10), and hosts follow their first rank, not their
// names' string order (node10 after node2).
void TimelineTest::test_ranks_and_hosts_in_number_order() {
  Builder b;
  for (const int rank : {10, 2, 11, 3}) {
    const int p = b.process("node" + std::to_string(rank / 2 * 2), rank, 100 + rank);
    b.kernel("gemm", 0, 100, p, 0, 7);
  }
  const Timeline tl(b.done());
  QCOMPARE(labels(tl, tl.roots()), (std::vector<std::string>{"host node2", "host node10"}));
  QCOMPARE(labels(tl, tl.row(tl.roots()[0]).children),
           (std::vector<std::string>{"rank 2 (pid 102)", "rank 3 (pid 103)"}));
  QCOMPARE(labels(tl, tl.row(tl.roots()[1]).children),
           (std::vector<std::string>{"rank 10 (pid 110)", "rank 11 (pid 111)"}));
}

// Issue 24 item 27: with two ranks, rank 1's GPU rows were below the fold under rank 0's NVTX
// depth rows. When the rows do not fit, thread groups start collapsed and every GPU's overlap row
// is among the rows that fit.
void TimelineTest::test_threads_collapse_to_fit() {
  Builder b;
  for (int rank = 0; rank < 2; ++rank) {
    const int p = b.process("node" + std::to_string(rank), rank, 100 + rank);
    b.kernel("gemm", 0, 100, p, 0, 7);
    b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 50, 150, p, 0, 13);
    for (int depth = 0; depth < 7; ++depth) b.range(p, 100 + rank, "r", depth, 100 - depth, depth);
  }
  Timeline tl(b.done());
  const size_t fit = 16;
  QVERIFY(tl.visible_rows().size() > fit);
  QVERIFY(!tl.collapse_threads_to_fit(tl.visible_rows().size()));  // it fits: nothing changes
  QVERIFY(tl.collapse_threads_to_fit(fit));
  const std::vector<int> rows = tl.visible_rows();
  QVERIFY(rows.size() <= fit);
  int overlap_rows = 0;
  for (const int r : rows) overlap_rows += tl.row(r).kind == RowKind::overlap ? 1 : 0;
  QCOMPARE(overlap_rows, 2);
  for (const Row& r : tl.rows()) {
    if (r.thread) QVERIFY(!r.expanded);
  }
}

QTEST_GUILESS_MAIN(TimelineTest)
#include "timeline_test.moc"
