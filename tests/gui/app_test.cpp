// The real main window, offscreen, on a generated two-rank job: loading off the GUI thread,
// clock alignment across hosts, search and stepping, selection with details and flow arrows,
// range summaries, zoom and pan by keys and wheel, collapsing/hiding/reordering rows, recent
// files, bad files, and the comparison of two traces.
#include <QApplication>
#include <QFile>
#include <QFileInfo>
#include <QHeaderView>
#include <QImage>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QPainter>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QStatusBar>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "c3/analyzer/metrics/metrics.h"
#include "c3/analyzer/open/load.h"
#include "c3/analyzer/report/report.h"
#include "c3/gui/format.h"
#include "details.h"
#include "main_window.h"
#include "panels.h"
#include "synthetic.h"
#include "timeline_view.h"

using namespace c3::gui;
using c3::analyzer::Class;

namespace {

QStringList qpaths(const std::vector<std::string>& v) {
  QStringList out;
  for (const auto& s : v) out << QString::fromStdString(s);
  return out;
}

// Opens `paths` and waits for the worker to finish; returns whether it loaded.
bool open_and_wait(MainWindow& w, const QStringList& paths, bool compare = false) {
  bool finished = false, ok = false;
  auto done = [&](bool r) {
    finished = true;
    ok = r;
  };
  if (compare) {
    w.compare_with(paths, done);
  } else {
    w.open(paths, done);
  }
  for (int i = 0; i < 3000 && !finished; ++i) QTest::qWait(10);
  return finished && ok;
}

int find_row(const Timeline& tl, RowKind kind, int process) {
  for (size_t i = 0; i < tl.rows().size(); ++i) {
    if (tl.rows()[i].kind == kind && tl.rows()[i].process == process) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

class AppTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QStringList job_;
  c3::gui::testing::SyntheticJob spec_;

 private slots:
  void initTestCase() {
    qputenv("C3SCOPE_CACHE_DIR", "off");
    QCoreApplication::setOrganizationName("c3scope-tests");
    QSettings().clear();
    spec_.ranks = 2;
    spec_.steps = 6;
    spec_.layers = 4;
    job_ = qpaths(c3::gui::testing::write_synthetic_job(dir_.filePath("job").toStdString(), spec_));
  }

  void cleanupTestCase() { QSettings().clear(); }

  void opensAndAlignsRanks() {
    MainWindow w;
    w.set_quiet_errors(true);
    w.resize(1400, 900);
    w.show();
    QVERIFY(open_and_wait(w, job_));
    Document* doc = w.document();
    QVERIFY(doc != nullptr);
    QCOMPARE(doc->trace.processes.size(), size_t{2});
    const int64_t per_rank = c3::gui::testing::synthetic_activities_per_rank(spec_);
    QCOMPARE(static_cast<int64_t>(doc->trace.activities.size()), 2 * per_rank);
    // Rank 1's clock reads 7 ms later (another host): alignment by matched collective ends
    // brings it back exactly.
    const auto& p1 = doc->trace.processes[1];
    QCOMPARE(p1.offset_ns, -spec_.clock_skew_ns);
    const Timeline& tl = *doc->timeline;
    const int c0 = find_row(tl, RowKind::collectives, 0),
              c1 = find_row(tl, RowKind::collectives, 1);
    QVERIFY(c0 >= 0 && c1 >= 0);
    QCOMPARE(tl.size(tl.row(c0)), tl.size(tl.row(c1)));
    for (size_t k = 0; k < tl.size(tl.row(c0)); ++k)
      QCOMPARE(tl.end(tl.row(c0), k), tl.end(tl.row(c1), k));
    // Issue 24: with its NVTX rows open, rank 1's GPU rows were below the fold. The threads open
    // collapsed when the rows do not fit, and every GPU's rows are in view.
    TimelineView* v = w.timeline();
    int gpu_rows = 0;
    for (size_t i = 0; i < tl.rows().size(); ++i) {
      const Row& r = tl.rows()[i];
      if (r.thread) QVERIFY(!r.expanded);
      if (r.kind != RowKind::overlap && r.kind != RowKind::stream) continue;
      const int y = v->row_y(static_cast<int>(i));
      QVERIFY(y >= 0);
      QVERIFY2(
          TimelineView::kHeaderHeight + y + TimelineView::kRowHeight <= v->viewport()->height(),
          qPrintable(QString("%1 of process %2 at y %3, the view is %4 high")
                         .arg(QString::fromStdString(r.label))
                         .arg(r.process)
                         .arg(y)
                         .arg(v->viewport()->height())));
      ++gpu_rows;
    }
    QCOMPARE(gpu_rows, 8);
    for (size_t i = 0; i < tl.rows().size(); ++i)
      doc->timeline->row(static_cast<int>(i)).expanded = true;
    // Rows: host > rank > GPU > overlap + 3 streams, NCCL row, NVTX thread with two depths.
    QStringList labels;
    for (const int r : tl.visible_rows()) labels << QString::fromStdString(tl.row(r).label);
    for (const char* want : {"host node0", "host node1", "rank 0", "rank 1", "overlap", "stream 7",
                             "stream 13", "stream 20", "depth 0", "depth 1"}) {
      QVERIFY2(std::any_of(labels.begin(), labels.end(),
                           [&](const QString& l) { return l.startsWith(want); }),
               qPrintable(QString("no row %1 in %2").arg(want, labels.join(", "))));
    }
    // The slow rank is the straggler of every matched collective.
    const auto& cross = doc->report.cross;
    QCOMPARE(static_cast<int>(cross.collectives.size()), spec_.steps * spec_.layers);
    QCOMPARE(cross.ranks.front().process, 1);
    // Recent files remember the set.
    const QStringList recent = QSettings().value("files/recent").toStringList();
    QVERIFY(!recent.isEmpty());
    QVERIFY(recent.front().contains("rank0.sqlite"));
  }

  void searchFiltersAndSteps() {
    MainWindow w;
    w.set_quiet_errors(true);
    w.resize(1400, 900);
    w.show();
    QVERIFY(open_and_wait(w, job_));
    const Timeline& tl = *w.document()->timeline;
    const int64_t nccl = int64_t{2} * spec_.steps * spec_.layers;
    // Kernels named AllReduce and the NCCL calls (collectives rows) match.
    auto kept = [&w](const QString& regex, int cls, int stream) {
      return static_cast<int64_t>(w.apply_filter(regex, cls, stream)->value());
    };
    QCOMPARE(kept("allreduce", -1, -1), 2 * nccl);
    QCOMPARE(kept("allreduce", static_cast<int>(Class::compute), -1), int64_t{0});
    QCOMPARE(kept("", static_cast<int>(Class::memory), -1), int64_t{2} * spec_.steps);
    const auto bad = w.apply_filter("([", -1, -1);
    QVERIFY(!bad);
    QCOMPARE(bad.error(), QString("not a valid regular expression"));
    QCOMPARE(kept("", -1, 13), nccl);
    // Step through the matches: time never goes back, every selection matches.
    QCOMPARE(kept("gemm", -1, -1), int64_t{4} * spec_.steps * spec_.layers);
    TimelineView* v = w.timeline();
    v->zoom_to_fit();
    double last = -1e30;
    for (int i = 0; i < 20; ++i) {
      QVERIFY(v->step_match(1));
      const Row& r = tl.row(v->selected_row());
      QVERIFY(QString::fromStdString(tl.name(r, static_cast<size_t>(v->selected_item())))
                  .contains("gemm"));
      const auto s = static_cast<double>(tl.start(r, static_cast<size_t>(v->selected_item())));
      QVERIFY(s >= last);
      last = s;
    }
    const int row = v->selected_row();
    const int64_t item = v->selected_item();
    QVERIFY(v->step_match(1));
    QVERIFY(v->step_match(-1));
    QCOMPARE(v->selected_row(), row);
    QCOMPARE(v->selected_item(), item);
    const auto none = w.apply_filter("", -1, -1);
    QVERIFY(none && !none->has_value());  // no filter: no count
    QVERIFY(!w.document()->timeline->filtered());
    // Typing in the search bar filters once typing pauses, not on every keystroke.
    auto* box = w.findChild<QLineEdit*>();
    QVERIFY(box != nullptr);
    QTest::keyClicks(box, "allred");
    QVERIFY(!w.document()->timeline->filtered());
    QTRY_VERIFY_WITH_TIMEOUT(w.document()->timeline->filtered(), 2000);
    box->clear();
    QTRY_VERIFY_WITH_TIMEOUT(!w.document()->timeline->filtered(), 2000);
  }

  void selectionShowsDetailsAndLinks() {
    MainWindow w;
    w.set_quiet_errors(true);
    w.resize(1400, 900);
    w.show();
    QVERIFY(open_and_wait(w, job_));
    Document* doc = w.document();
    // The first AllReduce kernel of rank 0 (hidden under the next backward GEMM).
    size_t a = 0;
    const auto& acts = doc->trace.activities;
    while (a < acts.size() && !(acts.cls[a] == Class::communication && acts.process[a] == 0)) ++a;
    QVERIFY(a < acts.size());
    QVERIFY(w.timeline()->select_activity(a));
    const QString text = w.details()->toPlainText();
    for (const char* want :
         {"ncclDevKernel_AllReduce", "communication", "24 x 512", "cudaLaunchKernel", "AllReduce",
          "64.0 MiB", "hidden under compute", "vs median alone", "busbw", "correlation id"}) {
      QVERIFY2(text.contains(want), qPrintable(QString("details lack '%1':\n%2").arg(want, text)));
    }
    // Linked items: API call -> kernel, collective -> kernel.
    const std::vector<FlowLink> links =
        w.details()->show_item(w.timeline()->selected_row(), w.timeline()->selected_item());
    QCOMPARE(links.size(), size_t{2});
    // The collective's own details list its kernel as a link.
    const auto [crow, citem] =
        doc->timeline->find_collective(static_cast<size_t>(acts.collective[a]));
    QVERIFY(crow >= 0);
    w.timeline()->select(crow, citem, true);
    const QString ctext = w.details()->toPlainText();
    QVERIFY2(
        ctext.contains("bfloat16") && ctext.contains("sum") && ctext.contains("Linked GPU work"),
        qPrintable(ctext));
    QVERIFY(w.details()->toHtml().contains(QString("act:%1").arg(a)));
    // An NVTX range: its payload (the steps' row of rank 0: its domain "data" comes first).
    int nvtx = -1;
    for (size_t i = 0; i < doc->timeline->rows().size() && nvtx < 0; ++i) {
      const Row& r = doc->timeline->rows()[i];
      if (r.kind == RowKind::nvtx && r.process == 0 && doc->timeline->size(r) > 2 &&
          doc->timeline->name(r, 0).rfind("step ", 0) == 0) {
        nvtx = static_cast<int>(i);
      }
    }
    QVERIFY(nvtx >= 0);
    w.timeline()->select(nvtx, 2, true);
    QVERIFY2(w.details()->toPlainText().contains("payload"),
             qPrintable(w.details()->toPlainText()));
  }

  // A trace file that went away after the open: the details still show what was loaded, and
  // say that the file's own row cannot be read.
  void detailsSayWhenTheTraceFileIsGone() {
    QTemporaryDir copy;
    QStringList copied;
    for (const QString& f : job_) {
      copied << copy.filePath(QFileInfo(f).fileName());
      QVERIFY(QFile::copy(f, copied.back()));
    }
    MainWindow w;
    w.set_quiet_errors(true);
    w.resize(1400, 900);
    w.show();
    QVERIFY(open_and_wait(w, copied));
    for (const QString& f : copied) QVERIFY(QFile::remove(f));
    const auto& acts = w.document()->trace.activities;
    size_t a = 0;
    while (a < acts.size() && !(acts.cls[a] == Class::communication && acts.process[a] == 0)) ++a;
    QVERIFY(a < acts.size());
    QVERIFY(w.timeline()->select_activity(a));
    const QString text = w.details()->toPlainText();
    QVERIFY2(text.contains("ncclDevKernel_AllReduce") && text.contains("not readable: "),
             qPrintable(text));
    const auto [crow, citem] =
        w.document()->timeline->find_collective(static_cast<size_t>(acts.collective[a]));
    QVERIFY(crow >= 0);
    w.timeline()->select(crow, citem, true);
    const QString ctext = w.details()->toPlainText();
    QVERIFY2(ctext.contains("Linked GPU work") && ctext.contains("not readable: "),
             qPrintable(ctext));
  }

  // The first paint comes before the kernel shapes: the document is drawn with them pending, the
  // analysis worker reads them, and the report equals a full load's.
  void kernelShapesArriveAfterTheFirstPaint() {
    std::atomic<bool> cancel{false};
    Result<std::unique_ptr<Document>> loaded =
        load_document(job_, cancel, [](double, const QString&) {});
    QVERIFY2(loaded, qPrintable(loaded.error()));
    Document* doc = loaded->get();
    QVERIFY(!doc->shapes_ready);
    QCOMPARE(doc->trace.pending_shapes.size(), size_t{2});
    const auto& acts = doc->trace.activities;
    size_t a = 0;
    while (a < acts.size() && acts.cls[a] != Class::communication) ++a;
    QVERIFY(a < acts.size());
    QCOMPARE(doc->trace.shape_of(a).grid, 0u);  // not read yet
    Result<c3::analyzer::Report> analyzed = analyze_document(*doc, cancel);
    QVERIFY2(analyzed, qPrintable(analyzed.error()));
    const c3::analyzer::Report& report = *analyzed;
    QVERIFY(doc->shapes_ready);
    QVERIFY(doc->trace.pending_shapes.empty());
    QCOMPARE(doc->trace.shape_of(a).grid, 24u);
    QCOMPARE(doc->trace.shape_of(a).block, 512u);
    std::vector<std::string> files;
    for (const QString& f : job_) files.push_back(f.toStdString());
    c3::analyzer::Trace full = c3::analyzer::load(files);
    const c3::analyzer::Report want = c3::analyzer::analyze(full, files, {});
    QCOMPARE(report.interference.size(), want.interference.size());
    for (size_t i = 0; i < want.interference.size(); ++i) {
      QCOMPARE(report.interference[i].signature, want.interference[i].signature);
      QCOMPARE(report.interference[i].alone, want.interference[i].alone);
    }
    QCOMPARE(report.overall.b.overlap_pct, want.overall.b.overlap_pct);
    // A trace file that changes before the worker reads the shapes: an error naming it (the
    // window shows it in a dialog), never shapes read from another file.
    QTemporaryDir copy;
    QStringList copied;
    for (const QString& f : job_) {
      copied << copy.filePath(QFileInfo(f).fileName());
      QVERIFY(QFile::copy(f, copied.back()));
    }
    Result<std::unique_ptr<Document>> changed =
        load_document(copied, cancel, [](double, const QString&) {});
    QVERIFY2(changed, qPrintable(changed.error()));
    {
      QFile f(copied.back());
      QVERIFY(f.open(QIODevice::Append));
      f.write("more");
    }
    const Result<c3::analyzer::Report> none = analyze_document(**changed, cancel);
    QVERIFY2(!none, "a changed trace file was read");
    QVERIFY(!none.why().cancelled);
    QVERIFY2(none.error().contains("changed since it was opened"), qPrintable(none.error()));
    QVERIFY(!(*changed)->shapes_ready);
  }

  void rangeSummaryMatchesTheAnalyzer() {
    MainWindow w;
    w.set_quiet_errors(true);
    w.show();
    QVERIFY(open_and_wait(w, job_));
    const Document& doc = *w.document();
    const Timeline& tl = *doc.timeline;
    // The whole trace as a range gives the report's overall numbers.
    w.timeline()->set_range_selection(tl.first_ns(), tl.last_ns() + 1);
    const QString text = w.details()->toPlainText();
    QVERIFY2(text.contains(format_pct(doc.report.overall.b.overlap_pct)), qPrintable(text));
    QVERIFY(text.contains(format_duration(static_cast<double>(doc.report.overall.b.exposed_comm))));
    QVERIFY(text.contains("Top kernels"));
    QVERIFY(text.contains("sm90_xmma_gemm"));
    QVERIFY(text.contains("AllReduce"));
    // An empty stretch (before the trace) has no communication: its overlap is "-", not 0 %
    // ("all exposed"; issue 24), in total and per process.
    const QString before = range_summary_html(doc, tl.first_ns() - 1000000, tl.first_ns() - 1);
    QVERIFY2(before.contains("- (no communication)") && !before.contains(format_pct(0)),
             qPrintable(before));
    QVERIFY2(before.contains("overlap -, "), qPrintable(before));
  }

  void zoomAndPan() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(open_and_wait(w, job_));
    TimelineView* v = w.timeline();
    v->setFocus();
    v->zoom_to_fit();
    const double w0 = v->window_ns();
    QTest::keyClick(v, Qt::Key_W);
    const double w1 = v->window_ns();
    QVERIFY(std::fabs(w0 / w1 - 1.25) < 1e-6);
    QTest::keyClick(v, Qt::Key_S);
    QVERIFY(std::fabs((v->window_ns()) / w0 - 1) < 1e-6);
    for (int i = 0; i < 10; ++i) QTest::keyClick(v, Qt::Key_W);
    const int64_t t0 = v->window_start();
    QTest::keyClick(v, Qt::Key_D);
    QVERIFY(v->window_start() > t0);
    QTest::keyClick(v, Qt::Key_A);
    QVERIFY(std::fabs(static_cast<double>(v->window_start() - t0)) < 1e-3 * v->window_ns());
    // The wheel zooms at the cursor: the time under it stays put.
    const double x = v->label_width() + 300;
    const double ns_px = (v->window_ns()) / (v->viewport()->width() - v->label_width());
    const double under = static_cast<double>(v->window_start()) + 300 * ns_px;
    QWheelEvent wheel(QPointF(x, 200), v->viewport()->mapToGlobal(QPointF(x, 200)), QPoint(),
                      QPoint(0, 240), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(v->viewport(), &wheel);
    const double ns_px2 = (v->window_ns()) / (v->viewport()->width() - v->label_width());
    QVERIFY(ns_px2 < ns_px);
    QVERIFY(std::fabs(static_cast<double>(v->window_start()) + 300 * ns_px2 - under) < 2 * ns_px);
    // A left drag selects a range; F zooms to it.
    QTest::mousePress(v->viewport(), Qt::LeftButton, {}, QPoint(v->label_width() + 100, 150));
    QMouseEvent move(QEvent::MouseMove, QPointF(v->label_width() + 400, 150),
                     v->viewport()->mapToGlobal(QPointF(v->label_width() + 400, 150)), Qt::NoButton,
                     Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(v->viewport(), &move);
    QTest::mouseRelease(v->viewport(), Qt::LeftButton, {}, QPoint(v->label_width() + 400, 150));
    const auto range = v->range_selection();
    QVERIFY(range.has_value());
    QTest::keyClick(v, Qt::Key_F);
    QVERIFY(std::abs(v->window_start() - range->first) < 2);
    QVERIFY(w.details()->toPlainText().contains("Time range"));
    QTest::keyClick(v, Qt::Key_0);
    QVERIFY(v->window_ns() >= w0 * 0.99);
    // Issue 24: the ruler and the status line showed negative times (the fitted window began
    // before the trace, and panning went further). The window never starts before the trace.
    auto status = [&] {
      for (const QLabel* l : w.statusBar()->findChildren<QLabel*>())
        if (l->text().startsWith("window ")) return l->text();
      return QString();
    };
    const int64_t first = w.document()->timeline->first_ns();
    QCOMPARE(v->window_start(), first);
    QVERIFY2(!status().contains('-'), qPrintable(status()));
    for (int i = 0; i < 5; ++i) QTest::keyClick(v, Qt::Key_W);
    for (int i = 0; i < 40; ++i) QTest::keyClick(v, Qt::Key_A, Qt::ShiftModifier);
    QCOMPARE(v->window_start(), first);
    QVERIFY2(status().startsWith("window 0") && !status().contains('-'), qPrintable(status()));
    for (const QString& label : v->ruler_labels())
      QVERIFY2(!label.startsWith('-'), qPrintable(label));
    for (int i = 0; i < 20; ++i) QTest::keyClick(v, Qt::Key_S, Qt::ShiftModifier);
    QVERIFY(v->window_start() >= first);
  }

  // PyTorch and Nsight traces carry epoch timestamps (about 1.66e18 ns, where a double's step
  // is 256 ns): the view must draw such a trace exactly as the same trace near zero, at every
  // zoom, the time ruler's labels included (they vanished below about 100 ms before the view
  // counted time from the trace's start in integers).
  void epochTimestampsDrawLikeSmallOnes() {
    c3::gui::testing::SyntheticJob epoch = spec_;
    epoch.start_ns = 1'660'000'000'123'456'789;
    const QStringList shifted =
        qpaths(c3::gui::testing::write_synthetic_job(dir_.filePath("epoch").toStdString(), epoch));
    MainWindow a, b;
    for (MainWindow* w : {&a, &b}) {
      w->resize(1400, 900);
      w->show();
    }
    QVERIFY(open_and_wait(a, job_));
    QVERIFY(open_and_wait(b, shifted));
    TimelineView* va = a.timeline();
    TimelineView* vb = b.timeline();
    const int64_t fa = a.document()->timeline->first_ns(), fb = b.document()->timeline->first_ns();
    QCOMPARE(fb - fa, epoch.start_ns - spec_.start_ns);
    const int64_t span = a.document()->timeline->last_ns() - fa;
    QCOMPARE(b.document()->timeline->last_ns() - fb, span);
    const QSize size(1400, 700);
    // The whole trace, then windows down to 150 ns around its middle.
    for (const int64_t width : {int64_t{0}, int64_t{50'000'000}, int64_t{3'500'000},
                                int64_t{120'000}, int64_t{2'000}, int64_t{150}}) {
      if (width == 0) {
        va->zoom_to_fit();
        vb->zoom_to_fit();
      } else {
        const int64_t from = span / 2 - width / 2 + 333;
        va->set_window(fa + from, fa + from + width);
        vb->set_window(fb + from, fb + from + width);
      }
      QCOMPARE(vb->window_start() - fb, va->window_start() - fa);
      QImage ia(size, QImage::Format_ARGB32), ib(size, QImage::Format_ARGB32);
      {
        QPainter p(&ia);
        va->paint_frame(p, size);
      }
      {
        QPainter p(&ib);
        vb->paint_frame(p, size);
      }
      const QString at = QString("window %1 ns").arg(width);
      QVERIFY2(va->ruler_labels().size() >= 5, qPrintable(at));
      QVERIFY2(
          vb->ruler_labels() == va->ruler_labels(),
          qPrintable(at + ": " +
                     QStringList(vb->ruler_labels().begin(), vb->ruler_labels().end()).join(", ")));
      QVERIFY2(ia == ib, qPrintable(at + ": the pictures differ"));
      // The status line tells the window's ends apart at every zoom ("233 ms .. 233 ms" did not).
      QString status;
      for (const QLabel* l : b.statusBar()->findChildren<QLabel*>())
        if (l->text().startsWith("window ")) status = l->text();
      const QStringList ends = status.mid(7).split(" .. ");
      QVERIFY2(ends.size() == 2 && ends[0] != ends[1].section(' ', 0, 0) &&
                   ends[0].section(' ', 0, 0) != ends[1].section(' ', 0, 0),
               qPrintable(at + ": " + status));
    }
  }

  // Issue 13: NVTX ranges are drawn in the colour the application set (the synthetic job's
  // steps: 0xff76b900), each domain has its rows, start/end ranges rows of their own, and the
  // details name the category.
  void nvtxRowsFollowDomainsAndColours() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(open_and_wait(w, job_));
    TimelineView* v = w.timeline();
    const Timeline& tl = *w.document()->timeline;
    int steps = -1, prefetch = -1;
    for (size_t i = 0; i < tl.rows().size(); ++i) {
      const Row& r = tl.rows()[i];
      if (r.kind != RowKind::nvtx || r.process != 0) continue;
      const std::string& parent = tl.row(r.parent).label;
      if (r.label == "depth 0" && parent == "domain default") steps = static_cast<int>(i);
      if (r.label == "start/end 1" && parent == "domain data") prefetch = static_cast<int>(i);
    }
    QVERIFY(steps >= 0);
    QVERIFY(prefetch >= 0);
    QVERIFY(tl.name(tl.row(steps), 0).rfind("step ", 0) == 0);
    QVERIFY(tl.name(tl.row(prefetch), 0).rfind("prefetch batch", 0) == 0);
    for (size_t i = 0; i < tl.rows().size(); ++i)
      w.document()->timeline->row(static_cast<int>(i)).expanded = true;
    v->relayout();
    v->zoom_to_fit();
    const QSize size(1400, TimelineView::kHeaderHeight + v->content_height());
    QImage img(size, QImage::Format_ARGB32);
    {
      QPainter p(&img);
      v->paint_frame(p, size);
    }
    auto green_in_row = [&](int row) {
      const int y = TimelineView::kHeaderHeight + v->row_y(row) + TimelineView::kRowHeight / 2;
      int n = 0;
      for (int x = v->label_width(); x < size.width(); ++x)
        n += img.pixel(x, y) == qRgb(0x76, 0xb9, 0x00) ? 1 : 0;
      return n;
    };
    QVERIFY2(green_in_row(steps) > 300, qPrintable(QString::number(green_in_row(steps))));
    // Issue 13: labels were cut ("overlap (hidden / exposed co..."); the column now fits them.
    QVERIFY(v->label_width() > TimelineView::kLabelWidth);
    QVERIFY(v->label_width() <= TimelineView::kMaxLabelWidth);
    QCOMPARE(green_in_row(prefetch), 0);  // no colour set: the palette's
    v->select(prefetch, 0, false);
    const QString details = w.details()->toPlainText();
    QVERIFY2(details.contains("start_end") && details.contains("prefetch"), qPrintable(details));
  }

  void rowsCollapseHideAndMove() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(open_and_wait(w, job_));
    Timeline& tl = *w.document()->timeline;
    TimelineView* v = w.timeline();
    const int full = v->content_height();
    // Click the first process group's label: it collapses.
    int proc = -1;
    for (size_t i = 0; i < tl.rows().size() && proc < 0; ++i) {
      if (tl.rows()[i].kind == RowKind::group && tl.rows()[i].process == 0 &&
          tl.rows()[i].device < 0 && tl.row(tl.rows()[i].parent).process < 0) {
        proc = static_cast<int>(i);
      }
    }
    QVERIFY(proc >= 0);
    const int y = TimelineView::kHeaderHeight + v->row_y(proc) + 5;
    QTest::mouseClick(v->viewport(), Qt::LeftButton, {}, QPoint(20, y));
    QVERIFY(!tl.row(proc).expanded);
    QVERIFY(v->content_height() < full);
    QTest::mouseClick(v->viewport(), Qt::LeftButton, {}, QPoint(20, y));
    QCOMPARE(v->content_height(), full);
    // Hide a stream row, then move a device's rows.
    const int stream = find_row(tl, RowKind::stream, 0);
    tl.row(stream).hidden = true;
    v->relayout();
    QCOMPARE(v->row_y(stream), -1);
    QCOMPARE(v->content_height(), full - TimelineView::kRowHeight);
    tl.row(stream).hidden = false;
    const int parent = tl.row(stream).parent;
    const int first_child = tl.row(parent).children.front();
    QVERIFY(tl.move(first_child, 1));
    v->relayout();
    QVERIFY(v->row_y(first_child) > v->row_y(tl.row(parent).children.front()));
  }

  void paintsFramesOffscreenAtHighDpi() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(open_and_wait(w, job_));
    TimelineView* v = w.timeline();
    QImage img(QSize(1400, 700) * 2, QImage::Format_ARGB32_Premultiplied);
    img.setDevicePixelRatio(2);
    {
      QPainter p(&img);
      v->paint_frame(p, QSize(1400, 700));
    }
    QVERIFY(v->last_frame_ms() > 0);
    // Compute and communication colours are there, at device-pixel resolution.
    std::set<QRgb> colours;
    for (int y = 0; y < img.height(); y += 3) {
      for (int x = 0; x < img.width(); x += 3) colours.insert(img.pixel(x, y));
    }
    QVERIFY2(colours.size() > 20, qPrintable(QString::number(colours.size())));
  }

  void badFilesGiveOneSentence() {
    MainWindow w;
    w.set_quiet_errors(true);
    w.show();
    QFile f(dir_.filePath("notes.txt"));
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("this is not a trace\n");
    f.close();
    QVERIFY(!open_and_wait(w, {f.fileName()}));
    QVERIFY(!w.last_error().isEmpty());
    QVERIFY(!w.last_error().contains('\n'));
    QVERIFY2(w.last_error().contains("notes.txt"), qPrintable(w.last_error()));
    QVERIFY(!open_and_wait(w, {dir_.filePath("missing.sqlite")}));
    QVERIFY2(w.last_error().contains("missing.sqlite"), qPrintable(w.last_error()));
    // Truncated SQLite file.
    QFile t(dir_.filePath("cut.sqlite"));
    QVERIFY(t.open(QIODevice::WriteOnly));
    QFile src(job_.front());
    QVERIFY(src.open(QIODevice::ReadOnly));
    t.write(src.read(3000));
    t.close();
    QVERIFY(!open_and_wait(w, {t.fileName()}));
    QVERIFY(!w.last_error().isEmpty());
    // The window still works.
    QVERIFY(open_and_wait(w, job_));
    QVERIFY(w.document() != nullptr);
  }

  void reopensFromTheSnapshot() {
    QTemporaryDir cache;
    qputenv("C3SCOPE_CACHE_DIR", cache.path().toLocal8Bit());
    qputenv("C3SCOPE_CACHE_MIN_MB", "0");
    double overlap = 0;
    size_t activities = 0;
    {
      MainWindow w;
      w.set_quiet_errors(true);
      QVERIFY(open_and_wait(w, job_));
      QVERIFY(!w.document()->opened.from_cache);
      QVERIFY(!w.document()->opened.cache_path.empty());
      QVERIFY(QFile::exists(QString::fromStdString(w.document()->opened.cache_path)));
      overlap = w.document()->report.overall.b.overlap_pct;
      activities = w.document()->trace.activities.size();
    }
    {
      MainWindow w;
      w.set_quiet_errors(true);
      QVERIFY(open_and_wait(w, job_));
      QVERIFY(w.document()->opened.from_cache);
      QCOMPARE(w.document()->trace.activities.size(), activities);
      QCOMPARE(w.document()->report.overall.b.overlap_pct, overlap);
      QCOMPARE(w.document()->trace.processes[1].offset_ns, -spec_.clock_skew_ns);
    }
    // A changed file makes the snapshot stale: loaded from SQLite again.
    QFile::copy(job_[0], dir_.filePath("copy0.sqlite"));
    QFile::copy(job_[1], dir_.filePath("copy1.sqlite"));
    {
      MainWindow w;
      w.set_quiet_errors(true);
      QVERIFY(open_and_wait(w, {dir_.filePath("copy0.sqlite"), dir_.filePath("copy1.sqlite")}));
      QVERIFY(!w.document()->opened.from_cache);
    }
    qputenv("C3SCOPE_CACHE_DIR", "off");
    qunsetenv("C3SCOPE_CACHE_MIN_MB");
  }

  // Issue 13: a CPU-only PyTorch profile gave "0.0 % of communication hidden" and a chart
  // axis reading "0 0 0 1 1 1"; the host read "(unknown)" although the JSON names it.
  void cpuOnlyProfileSaysThereIsNoGpuActivity() {
    const QString json = dir_.filePath("cpu_only.json");
    {
      QFile f(json);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(R"({"schemaVersion": 1, "host_name": "trainer-7", "traceEvents": [)"
              R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 9, )"
              R"("tid": 9, "ts": 1660000000000000, "dur": 5000},)"
              R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 9, "tid": 9, )"
              R"("ts": 1660000000000100, "dur": 200}]})");
    }
    MainWindow w;
    w.set_quiet_errors(true);
    w.resize(1400, 900);
    w.show();
    bool analyzed = false;
    w.open({json}, [&](bool) {});
    for (int i = 0; i < 3000 && !analyzed; ++i) {
      QTest::qWait(10);
      analyzed = w.document() != nullptr && w.document()->analyzed;
    }
    QVERIFY2(analyzed, qPrintable(w.last_error()));
    const QString headline = w.panels()->headline_text();
    QVERIFY2(headline.contains("No GPU activity"), qPrintable(headline));
    QVERIFY2(!headline.contains("% of communication hidden"), qPrintable(headline));
    // Issue 24: the status bar said "overlap 0.0 %" ("all exposed") and "1 processes".
    QStringList status;
    for (const QLabel* l : w.statusBar()->findChildren<QLabel*>()) status << l->text();
    QVERIFY2(status.join('|').contains("in 1 process: overlap - (no communication)"),
             qPrintable(status.join('|')));
    QCOMPARE(w.document()->trace.processes[0].host, std::string("trainer-7"));
    QCOMPARE(w.document()->timeline->row(w.document()->timeline->roots()[0]).label,
             std::string("host trainer-7"));
  }

  // Issue 25: the Why tab (the critical path per step, idle causes), the path drawn over the
  // timeline, an activity's slack in the details, and a what-if replayed from the panel; on the
  // golden case why_critical_path_two_ranks (answers in its cmd file).
  void whyTabPathOverlaySlackAndWhatIf() {
    const QString dir = QString(C3_SOURCE_DIR) + "/tests/golden/why_critical_path_two_ranks/";
    MainWindow w;
    w.set_quiet_errors(true);
    w.resize(1400, 900);
    w.show();
    QVERIFY2(open_and_wait(w, {dir + "rank0.json", dir + "rank1.json"}),
             qPrintable(w.last_error()));
    const Document& doc = *w.document();
    const CriticalPathModel& paths = w.panels()->paths();
    QCOMPARE(paths.rowCount(), 1);
    QCOMPARE(paths.index(0, CriticalPathModel::kStepTime).data().toString(), QString("1.00 ms"));
    QCOMPARE(paths.index(0, CriticalPathModel::kCompute).data().toString(),
             QString::fromUtf8("690 \u00B5s"));
    QVERIFY2(paths.index(0, CriticalPathModel::kStraggler)
                 .data()
                 .toString()
                 .contains(QString::fromUtf8("+390 \u00B5s")),
             qPrintable(paths.index(0, CriticalPathModel::kStraggler).data().toString()));
    // all ranks, 2 ranks, and their streams
    QVERIFY(w.panels()->idle_causes().rowCount() >= 4);
    QVERIFY2(w.panels()->why_text().contains("critical path in compute"),
             qPrintable(w.panels()->why_text()));
    // The overlay: off until asked, then the path's pieces on both ranks.
    QCOMPARE(w.timeline()->path_marks(), size_t{0});
    w.path_action()->trigger();
    QVERIFY(w.timeline()->path_shown());
    QCOMPARE(w.timeline()->path_marks(), doc.path.size());
    QVERIFY(doc.path.size() >= 5);
    std::set<int> ranks;
    for (const c3::analyzer::PathSegment& seg : doc.path) ranks.insert(seg.process);
    QCOMPARE(ranks.size(), size_t{2});
    // Rank 1's gemm_fwd is on the path; rank 0's gemm_fwd (ended at 300, the AllReduce's own
    // work began at 700, when rank 1 arrived) had 400 µs to spare.
    for (size_t a = 0; a < doc.trace.activities.size(); ++a) {
      const auto n = static_cast<size_t>(doc.trace.activities.name[a]);
      if (doc.trace.names[n].find("gemm_fwd") == std::string::npos) continue;
      QVERIFY(w.timeline()->select_activity(a));
      const QString text = w.details()->toPlainText();
      const bool late = doc.trace.processes[doc.trace.activities.process[a]].rank == 1;
      QVERIFY2(text.contains(late ? QStringLiteral("on the path")
                                  : QString::fromUtf8("400 \u00B5s: it could end that much later")),
               qPrintable(text));
    }
    // A what-if from the panel: rank 1 on time gives 610 µs; a bad one says why, nothing runs.
    QVERIFY(!w.replay_what_ifs({"rank:x=on-time"}));
    bool finished = false;
    QVERIFY(w.replay_what_ifs({"rank:1=on-time"}, [&](bool) { finished = true; }));
    for (int i = 0; i < 3000 && !finished; ++i) QTest::qWait(10);
    QVERIFY(finished);
    QCOMPARE(paths.columnCount(), CriticalPathModel::kWhatIfs + 1);
    QCOMPARE(paths.index(0, CriticalPathModel::kWhatIfs).data().toString(),
             QString::fromUtf8("610 \u00B5s"));
    QVERIFY(w.timeline()->path_marks() >= 5);  // the overlay follows the new analysis
  }

  void queueRowsAndFrequentSequenceSearch() {
    // The hand-built trace of tests/golden/why_idle_launch_queue: stream 7's queue holds 5
    // operations at its longest (1088 to 1100 µs); its most frequent sequence is gemm_a > gemm_b
    // > gemm_b, whose occurrence is three kernels.
    const QString dir = QString(C3_SOURCE_DIR) + "/tests/golden/why_idle_launch_queue/";
    MainWindow w;
    w.set_quiet_errors(true);
    w.resize(1400, 900);
    w.show();
    QVERIFY2(open_and_wait(w, {dir + "trace.json"}), qPrintable(w.last_error()));
    const Timeline& tl = *w.document()->timeline;
    auto queue_row = [&] {
      for (size_t i = 0; i < tl.rows().size(); ++i) {
        if (tl.rows()[i].kind == RowKind::queue && tl.rows()[i].key == 7)
          return static_cast<int>(i);
      }
      return -1;
    };
    QCOMPARE(queue_row(), -1);  // made when View > Queue length first shows them
    w.queue_action()->trigger();
    const int queue = queue_row();
    QVERIFY(queue >= 0);
    QCOMPARE(tl.row(queue).max_length, int64_t{5});
    QVERIFY(w.timeline()->row_y(queue) >= 0);
    w.timeline()->zoom_to_fit();
    QImage img(w.timeline()->viewport()->size(), QImage::Format_ARGB32);
    QPainter p(&img);
    w.timeline()->paint_frame(p, img.size());  // the row paints (no crash, bars drawn)
    p.end();
    // The details of the queue's longest stretch.
    const Row& q = tl.row(queue);
    size_t top = 0;
    for (size_t k = 0; k < q.points.size(); ++k) {
      if (q.points[k].length > q.points[top].length) top = k;
    }
    w.timeline()->select(queue, static_cast<int64_t>(top), false);
    QVERIFY2(w.details()->toPlainText().contains("Queue length 5"),
             qPrintable(w.details()->toPlainText()));
    QVERIFY2(w.details()->toPlainText().contains(QString::fromUtf8("12.0 \u00B5s")),
             qPrintable(w.details()->toPlainText()));
    w.queue_action()->trigger();
    QVERIFY(w.timeline()->row_y(queue) < 0);

    // Sequences: the Why tab lists them, the search selects one.
    const SequencesModel& seqs = w.panels()->sequences();
    QVERIFY(seqs.rowCount() >= 3);
    QCOMPARE(seqs.index(0, SequencesModel::kKernels).data().toString(),
             QString::fromUtf8("gemm_a \u2192 gemm_b \u2192 gemm_b"));
    QVERIFY(w.select_sequence(0));
    size_t kept = 0;
    for (const Row& r : tl.rows()) {
      if (r.kind == RowKind::stream) kept += r.items.size();
    }
    QCOMPARE(kept, size_t{3});
    const Result<std::optional<size_t>> both = w.apply_filter("gemm_b", -1, -1, 0);
    QVERIFY(both && both->has_value());
    QCOMPARE(**both, size_t{2});
    QVERIFY(!w.select_sequence(1000));
    QVERIFY(w.select_sequence(-1));  // any sequence: the filter is off again
    QVERIFY(!tl.filtered());
  }

  void opensPyTorchProfilerTraces() {
    // Real Kineto traces of two ranks (../shared/traces, or $C3SCOPE_TRACES), imported on the fly.
    const QString dir = qEnvironmentVariableIsEmpty("C3SCOPE_TRACES")
                            ? QString(C3_SOURCE_DIR) + "/../shared/traces"
                            : qEnvironmentVariable("C3SCOPE_TRACES");
    const QStringList files{dir + "/kineto/hta_sampled_rank-0.json.gz",
                            dir + "/kineto/hta_sampled_rank-1.json.gz"};
    if (!QFile::exists(files[0])) QSKIP("no ../shared/traces here");
    MainWindow w;
    w.set_quiet_errors(true);
    QVERIFY2(open_and_wait(w, files), qPrintable(w.last_error()));
    const Document& doc = *w.document();
    QCOMPARE(doc.trace.processes.size(), size_t{2});
    QVERIFY(doc.trace.activities.size() > 1000);
    // The processes show what the user opened, not the temporary imports.
    QVERIFY(QString::fromStdString(doc.trace.processes[0].source)
                .endsWith("hta_sampled_rank-0.json.gz"));
    int streams = 0;
    for (const Row& r : doc.timeline->rows()) streams += r.kind == RowKind::stream ? 1 : 0;
    QVERIFY(streams >= 2);
    // Details of a kernel read the imported trace (kept while the document is open).
    QVERIFY(w.timeline()->select_activity(0));
    QVERIFY2(w.details()->toPlainText().contains("grid"), qPrintable(w.details()->toPlainText()));
    // An Nsight Systems export: 5 kernels and 15 copies (the sample's reference numbers).
    QVERIFY2(open_and_wait(w, {dir + "/nsys/pipit_saxpy_nsys.sqlite"}), qPrintable(w.last_error()));
    QCOMPARE(w.document()->trace.activities.size(), size_t{20});
    QCOMPARE(w.document()->report.kernels, int64_t{5});
    QCOMPARE(w.document()->report.memcpys, int64_t{15});
  }

  void comparesTwoTraces() {
    MainWindow w;
    w.set_quiet_errors(true);
    w.show();
    QVERIFY(open_and_wait(w, job_));
    c3::gui::testing::SyntheticJob other = spec_;
    other.ranks = 1;
    other.layers = 2;
    const QStringList b =
        qpaths(c3::gui::testing::write_synthetic_job(dir_.filePath("other").toStdString(), other));
    QVERIFY(open_and_wait(w, b, true));
    QCOMPARE(w.panels()->currentWidget(), w.panels()->compare_page());
    // Two tables: the verdicts, and the totals side by side.
    const VerdictModel& verdicts = w.panels()->verdicts();
    const QTableView* verdict_view = nullptr;
    const QTableView* totals_view = nullptr;
    for (const QTableView* v : w.panels()->compare_page()->findChildren<QTableView*>()) {
      const auto* proxy = qobject_cast<const QSortFilterProxyModel*>(v->model());
      QVERIFY(proxy != nullptr);
      (proxy->sourceModel() == &verdicts ? verdict_view : totals_view) = v;
    }
    QVERIFY(verdict_view != nullptr && totals_view != nullptr);
    QVERIFY(totals_view->model()->rowCount() > 5);
    // The verdicts: one rank against two is another world size, so nothing can be decided.
    QVERIFY(verdicts.comparison() != nullptr);
    QCOMPARE(verdict_view->model()->rowCount(), verdicts.rowCount());
    QVERIFY(verdicts.rowCount() > 0);
    QCOMPARE(verdicts.comparison()->exit_code(), 3);
    QVERIFY(verdicts.comparison()->incomparable.find("world size") != std::string::npos);
    // Issue 24: the Compare and Microbenchmarks tabs were cramped (two rows and a half of each
    // table): chosen, they grow the panels to at least half the window, and both tables keep
    // several rows.
    QTest::qWait(50);
    QVERIFY2(w.panels()->height() >= w.height() / 2,
             qPrintable(QString("%1 of %2").arg(w.panels()->height()).arg(w.height())));
    for (const QTableView* v : {verdict_view, totals_view}) {
      QVERIFY2(v->height() >= 3 * v->verticalHeader()->defaultSectionSize(),
               qPrintable(QString::number(v->height())));
    }
    // Both sides named by their files, not "2 traces".
    QVERIFY(!w.panels()->compare_page()->findChildren<QLabel*>().isEmpty());
    bool named = false;
    for (const QLabel* l : w.panels()->compare_page()->findChildren<QLabel*>())
      named = named || (l->text().contains("rank0.sqlite") && l->text().contains("B (candidate)"));
    QVERIFY(named);
  }

  // The Compare tab decides as `c3scope compare --step` does: the same job with its last rank's
  // GEMMs 30% slower is a step-time regression; changing the step pattern compares again.
  void comparisonVerdictsFollowTheStepPattern() {
    MainWindow w;
    w.set_quiet_errors(true);
    w.show();
    QVERIFY(open_and_wait(w, job_));
    c3::gui::testing::SyntheticJob slow = spec_;
    slow.slow_rank_factor = 1.3;
    const QStringList b =
        qpaths(c3::gui::testing::write_synthetic_job(dir_.filePath("slow").toStdString(), slow));
    QVERIFY(open_and_wait(w, b, true));
    const VerdictModel& verdicts = w.panels()->verdicts();
    QVERIFY(verdicts.comparison() != nullptr);
    QCOMPARE(verdicts.comparison()->baseline_steps, int64_t{0});  // no ProfilerStep#N
    w.panels()->set_compare_step("^step [0-9]+$");
    bool finished = false, ok = false;
    w.recompare([&](bool r) {
      finished = true;
      ok = r;
    });
    for (int i = 0; i < 3000 && !finished; ++i) QTest::qWait(10);
    QVERIFY(finished && ok);
    const c3::analyzer::Comparison* c = verdicts.comparison();
    QVERIFY(c != nullptr);
    QCOMPARE(c->baseline_steps, int64_t{spec_.steps});
    QCOMPARE(c->verdict(), std::string("regression"));
    const c3::analyzer::MetricResult* step = nullptr;
    for (const auto& m : c->metrics) {
      if (m.id == "step_time") step = &m;
    }
    QVERIFY(step != nullptr);
    QCOMPARE(step->d.verdict, c3::analyzer::Verdict::regression);
    QVERIFY(step->d.change > 0.05);
    // A's analysis ending after the comparison (set_document with the same document) keeps it.
    w.panels()->set_document(w.document());
    QCOMPARE(verdicts.comparison(), c);
    // A pattern that does not compile is refused before any work, and the verdicts made with the
    // previous one go.
    w.panels()->set_compare_step("([");
    finished = false;
    w.recompare([&](bool r) {
      finished = true;
      ok = r;
    });
    QVERIFY(finished && !ok);
    QVERIFY(verdicts.comparison() == nullptr);
    QVERIFY(w.last_error().contains("step pattern"));
  }
};

QTEST_MAIN(AppTest)
#include "app_test.moc"
