// BenchCharts: the charts built from typed results, from a recorded trace and from the same trace
// in the older schema (labels only, migrated on open), the empty state, and a rendering check
// (headless: QT_QPA_PLATFORM=offscreen). The labels' parsing is tested where it lives
// (tests/tracedb/bench_label_test.cpp, tests/bench/columns_test.cpp).
#include "bench_charts.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineSeries>
#include <QProcess>
#include <QSet>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "c3/analyzer/open/load.h"
#include "tracedb/old_schema.h"

namespace {

void headless_environment() {
  // ctest sets these; a direct run of the binary gets the same.
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  const char* fonts = "/usr/share/fonts/truetype/dejavu";
  if (qEnvironmentVariableIsEmpty("QT_QPA_FONTDIR") && QFile::exists(QString::fromLatin1(fonts)))
    qputenv("QT_QPA_FONTDIR", fonts);
}
Q_CONSTRUCTOR_FUNCTION(headless_environment)

using c3::analyzer::BenchConfig;
using c3::analyzer::BenchPriority;
using c3::analyzer::BenchResult;
using c3::gui::BenchCharts;

constexpr int64_t kMiB = int64_t{1} << 20;
const char* const kEmptyText =
    "No c3bench results in these traces (record `c3scope record -- c3bench ...` to get some).";

// A case's configuration, as c3bench writes it into bench_result's typed columns.
BenchConfig config(const std::string& compute, const std::string& comm_kind, int64_t bytes) {
  BenchConfig c;
  c.known = true;
  c.compute = compute;
  c.compute_kind = compute.substr(0, compute.find(':'));
  c.comm_kind = comm_kind;
  c.comm_bytes = bytes;
  return c;
}

BenchConfig gemm_allreduce(int64_t bytes) {
  return config("gemm:8192x8192x8192:bf16", "allreduce", bytes);
}

BenchConfig pipelined(BenchConfig c, int chunks) {
  c.pipelined = true;
  c.chunks = chunks;
  return c;
}

struct Spec {
  BenchConfig config;
  double ideal = 1.5, realized = 1.2, comp_slow = 0.05, comm_slow = 0.5;
  std::optional<double> schedule;
  bool simulated = true;
  std::string backend = "sim";
};

Spec spec(BenchConfig config, double ideal = 1.5, double realized = 1.2, double comp_slow = 0.05,
          double comm_slow = 0.5) {
  Spec s;
  s.config = std::move(config);
  s.ideal = ideal;
  s.realized = realized;
  s.comp_slow = comp_slow;
  s.comm_slow = comm_slow;
  return s;
}

BenchResult result(const Spec& s) {
  BenchResult r;
  r.backend = s.backend;
  r.simulated = s.simulated;
  r.config = s.config;
  r.scenario = "compute-long";
  r.t_comp = 1.4e6;
  r.t_comm = 0.4e6;
  r.t_c3 = 1.8e6 / s.realized;
  r.ideal_speedup = s.ideal;
  r.realized_speedup = s.realized;
  r.compute_slowdown = s.comp_slow;
  r.comm_slowdown = s.comm_slow;
  r.fraction_of_ideal = (s.realized - 1) / (s.ideal - 1);
  r.schedule_speedup = s.schedule;
  return r;
}

// The default experiment's shape: 4 sizes, plain and pipelined with 1, 2, 4, 8 chunks.
c3::analyzer::Trace default_experiment(bool simulated, const std::string& backend) {
  c3::analyzer::Trace t;
  const std::vector<int64_t> sizes = {64 * kMiB, 128 * kMiB, 256 * kMiB, 512 * kMiB};
  t.bench.reserve(sizes.size() * 5);
  double ideal = 1.1;
  for (const int64_t size : sizes) {
    const BenchConfig base = gemm_allreduce(size);
    Spec plain = spec(base, ideal, 1.0 + (ideal - 1) * 0.1, 0.02 * ideal, 3.0 / ideal);
    plain.simulated = simulated;
    plain.backend = backend;
    t.bench.push_back(result(plain));
    for (int k : {1, 2, 4, 8}) {
      Spec s = spec(pipelined(base, k), ideal, 1.0 + 0.05 * k, 0.01 * k, 0.0);
      if (k > 1) s.schedule = 1.0 + 0.03 * k * ideal;
      s.simulated = simulated;
      s.backend = backend;
      BenchResult r = result(s);
      r.comm_slowdown.reset();  // not reported for pipelined schedules
      t.bench.push_back(r);
    }
    ideal += 0.25;
  }
  return t;
}

struct ImageStats {
  int colours = 0;
  double non_background = 0;  // fraction of pixels unlike the corner pixel
};

ImageStats image_stats(const QImage& image) {
  const QImage img = image.convertToFormat(QImage::Format_RGB32);
  const QRgb background = img.pixel(2, img.height() - 3);
  QSet<QRgb> colours;
  int64_t differ = 0;
  for (int y = 0; y < img.height(); ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
    for (int x = 0; x < img.width(); ++x) {
      colours.insert(line[x]);
      if (line[x] != background) ++differ;
    }
  }
  return {static_cast<int>(colours.size()),
          static_cast<double>(differ) / (static_cast<double>(img.width()) * img.height())};
}

// With C3_TEST_IMAGES=/some/folder, saves each tab of `w` there to look at.
void save_tabs(BenchCharts& w, const QString& prefix) {
  if (!qEnvironmentVariableIsSet("C3_TEST_IMAGES")) return;
  auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("bench_tabs"));
  for (int i = 0; i < tabs->count(); ++i) {
    tabs->setCurrentIndex(i);
    QCoreApplication::processEvents();
    w.grab().save(qEnvironmentVariable("C3_TEST_IMAGES") +
                  QStringLiteral("/%1_%2.png").arg(prefix).arg(i));
  }
}

QString c3bench_path() {
  return QStringLiteral(C3_BINARY_DIR "/bin/c3bench");
}

// Runs c3bench (sim backend) with `args`; an empty string when it ran, else why not.
QString run_c3bench(const QStringList& args) {
  QProcess p;
  p.setProcessChannelMode(QProcess::MergedChannels);
  p.start(c3bench_path(), QStringList{QStringLiteral("--backend"), QStringLiteral("sim")} + args);
  if (!p.waitForFinished(120000) || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0)
    return QStringLiteral("c3bench ") + args.join(' ') + QStringLiteral(" failed: ") +
           QString::fromLocal8Bit(p.readAll()).left(400);
  return {};
}

}  // namespace

class BenchChartsTest : public QObject {
  Q_OBJECT

 private slots:
  void charts_for_default_experiment();
  void slowdown_follows_the_varied_knob();
  void titles_say_real_gpu_or_mixed();
  void empty_shows_message();
  void unknown_configurations_give_no_charts();
  void renders_not_blank();
  void follows_dark_palette();
  void loads_a_recorded_trace();
  void older_trace_shows_the_same_charts();
};

void BenchChartsTest::charts_for_default_experiment() {
  const auto trace = default_experiment(true, "sim");
  BenchCharts w;
  w.set(&trace);
  QCOMPARE(w.chart_count(), 3);
  const QStringList titles = w.chart_titles();
  QCOMPARE(titles.size(), 3);
  for (const QString& t : titles) {
    QVERIFY2(t.contains(QStringLiteral("simulated")), qPrintable(t));
    QVERIFY2(t.contains(QStringLiteral("sim")), qPrintable(t));
    QVERIFY2(!t.contains(QStringLiteral("real GPU")), qPrintable(t));
  }
  QVERIFY(titles[0].contains(QStringLiteral("speedup vs message size")));
  QVERIFY(titles[2].contains(QStringLiteral("Chunk-count sweep")));
  // Nothing but the size varies: the slowdowns are drawn against it.
  QCOMPARE(w.slowdown_knobs(), QStringList{QStringLiteral("message size")});

  auto* speedup = w.findChild<QChartView*>(QStringLiteral("bench_speedup_chart"));
  QVERIFY(speedup != nullptr);
  QCOMPARE(speedup->chart()->series().size(), 2);  // one (compute, comm) pair: ideal, realized
  QVERIFY(speedup->renderHints().testFlag(QPainter::Antialiasing));
  for (QAbstractAxis* axis : speedup->chart()->axes()) QVERIFY(!axis->titleText().isEmpty());
  auto* slowdown = w.findChild<QChartView*>(QStringLiteral("bench_slowdown_chart"));
  QVERIFY(slowdown != nullptr);
  auto* categories =
      qobject_cast<QBarCategoryAxis*>(slowdown->chart()->axes(Qt::Horizontal).value(0));
  QVERIFY(categories != nullptr);
  QCOMPARE(categories->categories(), (QStringList{"64 MiB", "128 MiB", "256 MiB", "512 MiB"}));
  QVERIFY(categories->titleText().contains(QStringLiteral("bytes")));
  auto* chunks = w.findChild<QChartView*>(QStringLiteral("bench_chunk_chart"));
  QVERIFY(chunks != nullptr);
  QCOMPARE(chunks->chart()->series().size(), 4);  // one line per size
  for (QAbstractAxis* axis : chunks->chart()->axes()) QVERIFY(!axis->titleText().isEmpty());
}

void BenchChartsTest::slowdown_follows_the_varied_knob() {
  c3::analyzer::Trace trace;
  double slow = 0.1;
  trace.bench.reserve(6);
  for (const BenchPriority prio :
       {BenchPriority::equal, BenchPriority::comm_high, BenchPriority::comm_low}) {
    for (const int nch : {0, 4}) {
      BenchConfig c = gemm_allreduce(64 * kMiB);
      c.priority = prio;
      c.nchannels = nch;
      trace.bench.push_back(result(spec(c, 1.3, 1.1, slow, 2 * slow)));
      slow += 0.1;
    }
  }
  BenchCharts w;
  w.set(&trace);
  QCOMPARE(w.chart_count(), 2);  // no chunk sweep
  QVERIFY(w.findChild<QChartView*>(QStringLiteral("bench_chunk_chart")) == nullptr);
  bool said = false;
  for (const QLabel* l : w.findChildren<QLabel*>())
    said = said || l->text().contains(QStringLiteral("No chunk sweep in these results"));
  QVERIFY(said);

  QCOMPARE(w.slowdown_knobs(),
           (QStringList{QStringLiteral("stream priority"), QStringLiteral("NCCL channels")}));
  QCOMPARE(w.slowdown_knob(), 0);
  auto categories_of = [&w] {
    auto* view = w.findChild<QChartView*>(QStringLiteral("bench_slowdown_chart"));
    auto* axis =
        view == nullptr
            ? nullptr
            : qobject_cast<QBarCategoryAxis*>(view->chart()->axes(Qt::Horizontal).value(0));
    return axis == nullptr ? QStringList() : axis->categories();
  };
  QCOMPARE(categories_of(), (QStringList{"equal", "comm_high", "comm_low"}));
  QVERIFY(w.chart_titles()[1].contains(QStringLiteral("stream priority")));

  auto* box = w.findChild<QComboBox*>(QStringLiteral("bench_knob"));
  QVERIFY(box != nullptr);
  box->setCurrentIndex(1);  // as the user would
  QCOMPARE(w.slowdown_knob(), 1);
  QCOMPARE(w.chart_count(), 2);
  QVERIFY(w.chart_titles()[1].contains(QStringLiteral("NCCL channels")));
  QCOMPARE(categories_of(), (QStringList{"NCCL's choice", "4"}));
  // Bars of the baseline priority (equal): slowdowns 0.1 / 0.2 -> 10 % and 20 %.
  auto* view = w.findChild<QChartView*>(QStringLiteral("bench_slowdown_chart"));
  auto* bars = qobject_cast<QBarSeries*>(view->chart()->series().value(0));
  QVERIFY(bars != nullptr);
  QCOMPARE(bars->barSets().size(), 2);
  QVERIFY(std::abs(bars->barSets()[0]->at(0) - 10.0) < 1e-9);
  QVERIFY(std::abs(bars->barSets()[0]->at(1) - 20.0) < 1e-9);
  QVERIFY(std::abs(bars->barSets()[1]->at(1) - 40.0) < 1e-9);
  w.set_slowdown_knob(0);
  QCOMPARE(box->currentIndex(), 0);
  QVERIFY(w.chart_titles()[1].contains(QStringLiteral("stream priority")));
  QVERIFY(w.slowdown_cases().isEmpty());  // one configuration

  // Two sizes and two computes: one configuration at a time, picked by a second selector.
  c3::analyzer::Trace two;
  two.bench.reserve(8);
  for (const std::string compute : {"gemm:8192x8192x8192:bf16", "triad:1G"}) {
    for (const int64_t size : {64 * kMiB, 128 * kMiB}) {
      for (const BenchPriority prio : {BenchPriority::equal, BenchPriority::comm_high}) {
        BenchConfig c = config(compute, "allreduce", size);
        c.priority = prio;
        two.bench.push_back(result(spec(c)));
      }
    }
  }
  w.set(&two);
  QCOMPARE(w.slowdown_knobs(), QStringList{QStringLiteral("stream priority")});
  QCOMPARE(w.slowdown_cases(),
           (QStringList{"gemm:8192x8192x8192:bf16 + allreduce · 64 MiB",
                        "gemm:8192x8192x8192:bf16 + allreduce · 128 MiB",
                        "triad:1G + allreduce · 64 MiB", "triad:1G + allreduce · 128 MiB"}));
  QCOMPARE(w.slowdown_case(), 0);
  QCOMPARE(categories_of(), (QStringList{"equal", "comm_high"}));
  auto* cases = w.findChild<QComboBox*>(QStringLiteral("bench_case"));
  QVERIFY(cases != nullptr && !cases->isHidden());
  cases->setCurrentIndex(3);
  QCOMPARE(w.slowdown_case(), 3);
  QVERIFY2(w.chart_titles()[1].contains(QStringLiteral("triad:1G + allreduce 128 MiB")),
           qPrintable(w.chart_titles()[1]));
  QCOMPARE(categories_of(), (QStringList{"equal", "comm_high"}));
  // The speedup chart draws one pair of lines per compute op, named by it.
  auto* speedup = w.findChild<QChartView*>(QStringLiteral("bench_speedup_chart"));
  QStringList names;
  for (const QAbstractSeries* s : speedup->chart()->series()) names << s->name();
  QCOMPARE(names,
           (QStringList{"realized: gemm:8192x8192x8192:bf16", "ideal: gemm:8192x8192x8192:bf16",
                        "realized: triad:1G", "ideal: triad:1G"}));
}

void BenchChartsTest::titles_say_real_gpu_or_mixed() {
  const auto real = default_experiment(false, "cuda");
  BenchCharts w;
  w.set(&real);
  QCOMPARE(w.chart_count(), 3);
  for (const QString& t : w.chart_titles()) {
    QVERIFY2(t.contains(QStringLiteral("real GPU")) && t.contains(QStringLiteral("cuda")),
             qPrintable(t));
    QVERIFY2(!t.contains(QStringLiteral("simulated")), qPrintable(t));
  }
  auto mixed = default_experiment(false, "cuda");
  for (BenchResult r : default_experiment(true, "sim").bench) mixed.bench.push_back(std::move(r));
  w.set(&mixed);
  QCOMPARE(w.chart_count(), 3);
  for (const QString& t : w.chart_titles()) {
    QVERIFY2(t.contains(QStringLiteral("mixed")) && t.contains(QStringLiteral("cuda, sim")),
             qPrintable(t));
  }
}

void BenchChartsTest::empty_shows_message() {
  BenchCharts w;
  auto* empty = w.findChild<QLabel*>(QStringLiteral("bench_empty"));
  QVERIFY(empty != nullptr);
  QCOMPARE(w.chart_count(), 0);  // before any set()
  QCOMPARE(empty->text(), QString::fromUtf8(kEmptyText));

  const auto trace = default_experiment(true, "sim");
  w.set(&trace);
  QCOMPARE(w.chart_count(), 3);
  w.set(nullptr);
  QCOMPARE(w.chart_count(), 0);
  QVERIFY(w.chart_titles().isEmpty());
  QCOMPARE(empty->text(), QString::fromUtf8(kEmptyText));
  QVERIFY(!empty->isHidden());
  QVERIFY(w.findChild<QTabWidget*>(QStringLiteral("bench_tabs"))->isHidden());

  const c3::analyzer::Trace none;
  w.set(&none);
  QCOMPARE(w.chart_count(), 0);
  QVERIFY(!empty->isHidden());
}

void BenchChartsTest::unknown_configurations_give_no_charts() {
  // Results whose configuration is not known (an older trace's unreadable label).
  c3::analyzer::Trace trace;
  for (const char* label : {"what is this", "", "[chunks=2"}) {
    BenchResult r = result(spec(BenchConfig{}));
    r.label = label;
    trace.bench.push_back(r);
  }
  BenchCharts w;
  w.set(&trace);
  QCOMPARE(w.chart_count(), 0);
  auto* summary = w.findChild<QLabel*>(QStringLiteral("bench_summary"));
  QVERIFY(summary->text().contains(QStringLiteral("not understood")));
  w.resize(800, 500);
  QVERIFY(!w.grab().isNull());
}

void BenchChartsTest::renders_not_blank() {
  const auto trace = default_experiment(true, "sim");
  BenchCharts w;
  w.set(&trace);
  w.resize(1000, 700);
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  auto* tabs = w.findChild<QTabWidget*>(QStringLiteral("bench_tabs"));
  QCOMPARE(tabs->count(), 3);
  save_tabs(w, QStringLiteral("default"));
  for (int i = 0; i < tabs->count(); ++i) {
    tabs->setCurrentIndex(i);
    QCoreApplication::processEvents();
    const QImage image = w.grab().toImage();
    QCOMPARE(image.width(), 1000 * static_cast<int>(image.devicePixelRatio()));
    const ImageStats s = image_stats(image);
    qInfo("tab %d: %d colours, %.1f%% not background", i, s.colours, s.non_background * 100);
    QVERIFY2(s.colours > 40,
             qPrintable(QStringLiteral("tab %1: %2 colours").arg(i).arg(s.colours)));
    QVERIFY2(s.non_background > 0.02, qPrintable(QStringLiteral("tab %1").arg(i)));
  }
}

void BenchChartsTest::follows_dark_palette() {
  const auto trace = default_experiment(true, "sim");
  BenchCharts w;
  w.set(&trace);
  auto* view = w.findChild<QChartView*>(QStringLiteral("bench_speedup_chart"));
  QCOMPARE(view->chart()->theme(), QChart::ChartThemeLight);

  QPalette dark(QColor(60, 60, 66), QColor(30, 30, 34));  // button, window
  dark.setColor(QPalette::WindowText, QColor(230, 230, 230));
  dark.setColor(QPalette::ButtonText, QColor(230, 230, 230));
  dark.setColor(QPalette::Base, QColor(20, 20, 24));
  dark.setColor(QPalette::Text, QColor(230, 230, 230));
  w.setPalette(dark);
  QCOMPARE(w.chart_count(), 3);
  view = w.findChild<QChartView*>(QStringLiteral("bench_speedup_chart"));
  QCOMPARE(view->chart()->theme(), QChart::ChartThemeDark);
  QCOMPARE(view->chart()->backgroundBrush().color(), QColor(30, 30, 34));
  QCOMPARE(view->chart()->titleBrush().color(), QColor(230, 230, 230));

  w.resize(1000, 700);
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  const QImage image = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
  save_tabs(w, QStringLiteral("dark"));
  QCOMPARE(image_stats(image).colours > 40, true);
  // Mostly dark: the background is the palette's window colour.
  QVERIFY(qGray(image.pixel(image.width() / 2, image.height() - 20)) < 100);
}

void BenchChartsTest::loads_a_recorded_trace() {
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString db = dir.filePath(QStringLiteral("bench.sqlite"));
  if (!QFile::exists(c3bench_path())) QSKIP("no c3bench in this build");
  const QString why = run_c3bench({QStringLiteral("--db"), db});
  QVERIFY2(why.isEmpty(), qPrintable(why));
  const c3::analyzer::Trace trace = c3::analyzer::load({db.toStdString()});
  QCOMPARE(trace.bench.size(), size_t{20});
  BenchCharts w;
  w.set(&trace);
  QCOMPARE(w.chart_count(), 3);
  for (const QString& t : w.chart_titles()) {
    QVERIFY2(t.contains(QStringLiteral("simulated")) && t.contains(QStringLiteral("backend sim")),
             qPrintable(t));
  }
  auto* chunks = w.findChild<QChartView*>(QStringLiteral("bench_chunk_chart"));
  QCOMPARE(chunks->chart()->series().size(), 4);  // 64M..512M
  w.resize(1000, 700);
  save_tabs(w, QStringLiteral("recorded"));
}

void BenchChartsTest::older_trace_shows_the_same_charts() {
  // One recorded run in this schema and the same file as the v2 writer left it (label and
  // knobs strings only, no typed columns): the migration fills the configuration on open, and
  // every chart, for every knob and case one can pick, is the same.
  if (!QFile::exists(c3bench_path())) QSKIP("no c3bench in this build");
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const QString db = dir.filePath(QStringLiteral("v3.sqlite"));
  const QString why = run_c3bench(
      {QStringLiteral("--comm"), QStringLiteral("allreduce:64M..128M"),
       QStringLiteral("--priority"), QStringLiteral("equal,comm_high"),
       QStringLiteral("--nchannels"), QStringLiteral("0,4"), QStringLiteral("--schedule"),
       QStringLiteral("independent,chunks=1,2"), QStringLiteral("--db"), db});
  QVERIFY2(why.isEmpty(), qPrintable(why));
  const QString old = dir.filePath(QStringLiteral("v2.sqlite"));
  QVERIFY(QFile::copy(db, old));
  c3::test::make_schema_v2(old.toStdString());

  auto describe = [](BenchCharts& w) {
    QStringList out = w.chart_titles();
    for (int k = 0; k < w.slowdown_knobs().size(); ++k) {
      w.set_slowdown_knob(k);
      for (int c = 0; c < std::max<qsizetype>(1, w.slowdown_cases().size()); ++c) {
        w.set_slowdown_case(c);
        for (const auto* view : w.findChildren<QChartView*>()) {
          out << view->chart()->title();
          for (QAbstractAxis* axis : view->chart()->axes()) {
            if (auto* cat = qobject_cast<QBarCategoryAxis*>(axis)) out << cat->categories();
          }
          for (const QAbstractSeries* series : view->chart()->series()) {
            out << series->name();
            if (const auto* line = qobject_cast<const QLineSeries*>(series)) {
              for (const QPointF& p : line->points())
                out << QStringLiteral("%1,%2").arg(p.x()).arg(p.y());
            } else if (const auto* bars = qobject_cast<const QBarSeries*>(series)) {
              for (const QBarSet* set : bars->barSets()) {
                for (int i = 0; i < set->count(); ++i) out << QString::number(set->at(i));
              }
            }
          }
        }
      }
    }
    return out;
  };
  const c3::analyzer::Trace now = c3::analyzer::load({db.toStdString()});
  const c3::analyzer::Trace before = c3::analyzer::load({old.toStdString()});
  QCOMPARE(before.bench.size(), now.bench.size());
  BenchCharts a, b;
  a.set(&now);
  b.set(&before);
  QCOMPARE(a.chart_count(), 3);
  QCOMPARE(a.slowdown_knobs(),
           (QStringList{QStringLiteral("stream priority"), QStringLiteral("NCCL channels")}));
  const QStringList expected = describe(a);
  QVERIFY(expected.size() > 40);
  QCOMPARE(describe(b), expected);
}

QTEST_MAIN(BenchChartsTest)
#include "bench_charts_test.moc"
