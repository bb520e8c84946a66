// BenchCharts: c3bench label parsing (on labels c3bench really writes), the charts built from
// results, the empty state, and a rendering check (headless: QT_QPA_PLATFORM=offscreen).
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
#include <QProcess>
#include <QSet>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "c3/analyzer/load.h"

namespace {

void headless_environment() {
  // ctest sets these; a direct run of the binary gets the same.
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  const char* fonts = "/usr/share/fonts/truetype/dejavu";
  if (qEnvironmentVariableIsEmpty("QT_QPA_FONTDIR") && QFile::exists(QString::fromLatin1(fonts)))
    qputenv("QT_QPA_FONTDIR", fonts);
}
Q_CONSTRUCTOR_FUNCTION(headless_environment)

using c3::analyzer::BenchResult;
using c3::gui::BenchCase;
using c3::gui::BenchCharts;
using c3::gui::parse_bench_label;

constexpr int64_t kMiB = int64_t{1} << 20;
const char* const kEmptyText =
    "No c3bench results in these traces (record `c3scope record -- c3bench ...` to get some).";

// The knobs of a parsed case as c3bench's Knobs::label() writes them.
std::string knobs_label(const BenchCase& c) {
  std::string s;
  auto add = [&](const std::string& kv) { s += (s.empty() ? "" : " ") + kv; };
  if (c.priority != "equal") add("prio=" + c.priority);
  if (c.order != "compute_first") add("order=" + c.order);
  if (c.nchannels > 0) add("nch=" + std::to_string(c.nchannels));
  if (c.min_ctas > 0 || c.max_ctas > 0)
    add("ctas=" + std::to_string(c.min_ctas) + ":" + std::to_string(c.max_ctas));
  if (c.sm_partition_pct > 0) add("smpart=" + std::to_string(c.sm_partition_pct) + "%");
  if (c.chunks > 0) add("chunks=" + std::to_string(c.chunks));
  return s;
}

struct Spec {
  std::string label;
  double ideal = 1.5, realized = 1.2, comp_slow = 0.05, comm_slow = 0.5;
  std::optional<double> schedule;
  bool simulated = true;
  std::string backend = "sim";
};

Spec spec(std::string label, double ideal = 1.5, double realized = 1.2, double comp_slow = 0.05,
          double comm_slow = 0.5) {
  Spec s;
  s.label = std::move(label);
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
  r.label = s.label;
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
  const std::vector<std::string> sizes = {"64M", "128M", "256M", "512M"};
  t.bench.reserve(sizes.size() * 5);
  double ideal = 1.1;
  for (const auto& size : sizes) {
    const std::string base = "gemm:8192x8192x8192:bf16 + allreduce:" + size;
    Spec plain = spec(base, ideal, 1.0 + (ideal - 1) * 0.1, 0.02 * ideal, 3.0 / ideal);
    plain.simulated = simulated;
    plain.backend = backend;
    t.bench.push_back(result(plain));
    for (int k : {1, 2, 4, 8}) {
      Spec s =
          spec(base + " [chunks=" + std::to_string(k) + "]", ideal, 1.0 + 0.05 * k, 0.01 * k, 0.0);
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
  void parses_real_labels_data();
  void parses_real_labels();
  void survives_bad_labels();
  void parses_every_label_c3bench_writes();
  void charts_for_default_experiment();
  void slowdown_follows_the_varied_knob();
  void titles_say_real_gpu_or_mixed();
  void empty_shows_message();
  void unparsable_labels_give_no_charts();
  void renders_not_blank();
  void follows_dark_palette();
  void loads_a_recorded_trace();
};

void BenchChartsTest::parses_real_labels_data() {
  QTest::addColumn<QString>("label");
  QTest::addColumn<QString>("compute");
  QTest::addColumn<QString>("compute_kind");
  QTest::addColumn<QString>("comm_kind");
  QTest::addColumn<int64_t>("bytes");
  QTest::addColumn<QString>("knobs");  // as knobs_label() renders the parsed case
  QTest::addColumn<int>("chunks");
  QTest::addColumn<bool>("peer");
  // Labels from `c3bench --backend sim` (the default experiment), a knob sweep
  // (--comm allreduce:64M --priority equal,comm_high,comm_low --order compute_first,comm_first
  // --nchannels 0,4 --sm-partition 0,50 --ctas 4:16) and other op mixes.
  const QString gemm = QStringLiteral("gemm:8192x8192x8192:bf16");
  QTest::newRow("default plain") << "gemm:8192x8192x8192:bf16 + allreduce:64M" << gemm << "gemm"
                                 << "allreduce" << 64 * kMiB << "" << 0 << false;
  QTest::newRow("default chunks") << "gemm:8192x8192x8192:bf16 + allreduce:512M [chunks=8]" << gemm
                                  << "gemm"
                                  << "allreduce" << 512 * kMiB << "chunks=8" << 8 << false;
  QTest::newRow("k=1 baseline") << "gemm:8192x8192x8192:bf16 + allreduce:128M [chunks=1]" << gemm
                                << "gemm"
                                << "allreduce" << 128 * kMiB << "chunks=1" << 1 << false;
  QTest::newRow("all knobs")
      << "gemm:8192x8192x8192:bf16 + allreduce:64M [prio=comm_low order=comm_first nch=4 "
         "ctas=4:16 smpart=50%]"
      << gemm << "gemm"
      << "allreduce" << 64 * kMiB << "prio=comm_low order=comm_first nch=4 ctas=4:16 smpart=50%"
      << 0 << false;
  QTest::newRow("ctas") << "gemm:8192x8192x8192:bf16 + allreduce:64M [ctas=4:16]" << gemm << "gemm"
                        << "allreduce" << 64 * kMiB << "ctas=4:16" << 0 << false;
  QTest::newRow("comm only") << "- + allgather:1M"
                             << ""
                             << ""
                             << "allgather" << kMiB << "" << 0 << false;
  QTest::newRow("compute only") << "fma:500us + -"
                                << "fma:500us"
                                << "fma"
                                << "" << int64_t{0} << "" << 0 << false;
  QTest::newRow("sm_copy peer") << "triad:1G + sm_copy:64M:peer"
                                << "triad:1G"
                                << "triad"
                                << "sm_copy" << 64 * kMiB << "" << 0 << true;
  QTest::newRow("reducescatter") << "gemm:8192x8192x8192:bf16 + reducescatter:8M [chunks=2]" << gemm
                                 << "gemm"
                                 << "reducescatter" << 8 * kMiB << "chunks=2" << 2 << false;
  QTest::newRow("plain bytes") << "fma:2000us + dma_d2d:4096"
                               << "fma:2000us"
                               << "fma"
                               << "dma_d2d" << int64_t{4096} << "" << 0 << false;
}

void BenchChartsTest::parses_real_labels() {
  QFETCH(QString, label);
  QFETCH(QString, compute);
  QFETCH(QString, compute_kind);
  QFETCH(QString, comm_kind);
  QFETCH(int64_t, bytes);
  QFETCH(QString, knobs);
  QFETCH(int, chunks);
  QFETCH(bool, peer);
  const BenchCase c = parse_bench_label(label.toStdString());
  QVERIFY(c.parsed);
  QCOMPARE(QString::fromStdString(c.compute), compute);
  QCOMPARE(QString::fromStdString(c.compute_kind), compute_kind);
  QCOMPARE(QString::fromStdString(c.comm_kind), comm_kind);
  QCOMPARE(c.bytes, bytes);
  QCOMPARE(QString::fromStdString(knobs_label(c)), knobs);
  QCOMPARE(c.chunks, chunks);
  QCOMPARE(c.peer, peer);
  QVERIFY(c.unknown.empty());
}

void BenchChartsTest::survives_bad_labels() {
  const std::vector<std::string> bad = {
      "",
      "garbage",
      "[",
      "]",
      "[]",
      " + ",
      "a + b [",
      "gemm + allreduce:999999999999999999999G",
      "gemm + allreduce:G",
      "gemm + allreduce:-5M",
      "x + y [chunks=abc nch=-1 smpart=200% foo ctas=: prio= =]",
      "x + y [smpart=% ctas=4: nch=99999999999999]",
      std::string(10000, '['),
      std::string(5000, '+') + " + " + std::string(5000, ':'),
      std::string("a\0b + c", 7),
  };
  for (const auto& label : bad) {
    const BenchCase c = parse_bench_label(label);
    QVERIFY(c.bytes >= 0);
    QVERIFY(c.chunks >= 0);
    QVERIFY(c.nchannels >= 0);
  }
  // Unknown pieces are kept aside; what is readable is still read.
  const BenchCase c =
      parse_bench_label("gemm:1x2x3 + allreduce:64M:bf16 [nch=8 future=1 chunks=x smpart=25%]");
  QVERIFY(c.parsed);
  QCOMPARE(c.bytes, 64 * kMiB);
  QCOMPARE(c.nchannels, 8);
  QCOMPARE(c.sm_partition_pct, 25);
  QCOMPARE(c.chunks, 0);
  QCOMPARE(c.unknown.size(), size_t{3});  // bf16, future=1, chunks=x
  QVERIFY(!parse_bench_label("no plus here").parsed);
  QVERIFY(!parse_bench_label("").parsed);
  QCOMPARE(parse_bench_label("gemm + allreduce:999999999999999999999G").bytes, int64_t{0});
}

void BenchChartsTest::parses_every_label_c3bench_writes() {
  if (!QFile::exists(c3bench_path())) QSKIP("no c3bench in this build");
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  struct Run {
    QStringList args;
  };
  const std::vector<Run> runs = {
      {{}},  // the default experiment
      {{"--comm", "allreduce:64M..128M", "--priority", "equal,comm_high,comm_low", "--order",
        "compute_first,comm_first", "--nchannels", "0,4", "--ctas", "4:16", "--sm-partition",
        "0,50", "--schedule", "independent,chunks=1,2"}},
      {{"--compute", "triad:1G", "--compute", "fma:500us", "--comm", "sm_copy:64M:peer", "--comm",
        "dma_d2d:4096", "--comm", "reducescatter:8M:bf16"}},
      {{"--compute", "none", "--comm", "allgather:1M..4M"}},
  };
  int checked = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const QString json = dir.filePath(QStringLiteral("run%1.json").arg(i));
    const QString why = run_c3bench(runs[i].args + QStringList{QStringLiteral("--json"), json});
    QVERIFY2(why.isEmpty(), qPrintable(why));
    QFile f(json);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonArray results = QJsonDocument::fromJson(f.readAll()).object()["results"].toArray();
    QVERIFY(!results.isEmpty());
    for (const auto& v : results) {
      const QJsonObject o = v.toObject();
      const QString label = o["label"].toString();
      const BenchCase c = parse_bench_label(label.toStdString());
      QVERIFY2(c.parsed, qPrintable(label));
      QVERIFY2(c.unknown.empty(), qPrintable(label));
      QCOMPARE(QString::fromStdString(c.compute), o["compute"].toString());
      QCOMPARE(QString::fromStdString(c.comm), o["comm"].toString());
      QCOMPARE(c.bytes, static_cast<int64_t>(o["comm_bytes"].toDouble()));
      QCOMPARE(QString::fromStdString(knobs_label(c)), o["knobs"].toString());
      ++checked;
    }
  }
  QVERIFY(checked > 100);
}

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
  const std::string base = "gemm:8192x8192x8192:bf16 + allreduce:64M";
  double slow = 0.1;
  trace.bench.reserve(6);
  for (const std::string prio : {"", "prio=comm_high ", "prio=comm_low "}) {
    for (const std::string nch : {"", "nch=4"}) {
      std::string knobs = prio + nch;
      while (!knobs.empty() && knobs.back() == ' ') knobs.pop_back();
      std::string label = base;
      if (!knobs.empty()) label += " [" + knobs + "]";
      trace.bench.push_back(result(spec(label, 1.3, 1.1, slow, 2 * slow)));
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
    for (const std::string size : {"64M", "128M"}) {
      for (const std::string knobs : {"", " [prio=comm_high]"}) {
        std::string label = compute;
        label += " + allreduce:";
        label += size;
        label += knobs;
        two.bench.push_back(result(spec(label)));
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

void BenchChartsTest::unparsable_labels_give_no_charts() {
  c3::analyzer::Trace trace;
  trace.bench.push_back(result(spec("what is this")));
  trace.bench.push_back(result(spec("")));
  trace.bench.push_back(result(spec("[chunks=2")));
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

QTEST_MAIN(BenchChartsTest)
#include "bench_charts_test.moc"
