// c3scope-gui --screenshot, as the README's pictures are made: the app runs offscreen on a
// generated two-rank job and saves PNGs of the main views; each must have real content (many
// colours, the class colours of the timeline), and the app must report the expected rows.
#include <sys/resource.h>

#include <QColor>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QProcessEnvironment>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <set>

#include "shared_traces.h"
#include "synthetic.h"

namespace {

QString gui_binary() {
  return QString(C3_BINARY_DIR) + "/bin/c3scope-gui";
}

// Distinct colours on a grid of samples, and whether some pixel is close to `want`.
int colours(const QImage& img) {
  std::set<QRgb> seen;
  for (int y = 0; y < img.height(); y += 2) {
    for (int x = 0; x < img.width(); x += 2) seen.insert(img.pixel(x, y));
  }
  return static_cast<int>(seen.size());
}

bool has_colour(const QImage& img, const QColor& want) {
  for (int y = 0; y < img.height(); y += 1) {
    for (int x = 0; x < img.width(); x += 2) {
      const QColor c = img.pixelColor(x, y);
      if (std::abs(c.red() - want.red()) + std::abs(c.green() - want.green()) +
              std::abs(c.blue() - want.blue()) <
          12) {
        return true;
      }
    }
  }
  return false;
}

double mean_lightness(const QImage& img) {
  double sum = 0;
  int n = 0;
  for (int y = 0; y < img.height(); y += 4) {
    for (int x = 0; x < img.width(); x += 4) {
      sum += img.pixelColor(x, y).lightness();
      ++n;
    }
  }
  return sum / n;
}

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT
 private:
  QTemporaryDir dir_;
  QStringList job_;

  QString run(const QStringList& extra, const QString& out, const QStringList& traces = {}) {
    QProcess p;
    QStringList args{"--screenshot", out, "--size", "1400x900"};
    args << extra << (traces.isEmpty() ? job_ : traces);
    p.start(gui_binary(), args);
    if (!p.waitForFinished(120000)) return "timeout";
    QString stdout_text = QString::fromLocal8Bit(p.readAllStandardOutput());
    if (p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
      return "exit " + QString::number(p.exitCode()) + ": " +
             QString::fromLocal8Bit(p.readAllStandardError());
    }
    return stdout_text;
  }

 private slots:
  void initTestCase() {
    c3::gui::testing::SyntheticJob job;
    job.ranks = 2;
    job.steps = 8;
    job.layers = 5;
    for (const auto& p :
         c3::gui::testing::write_synthetic_job(dir_.filePath("job").toStdString(), job)) {
      job_ << QString::fromStdString(p);
    }
  }

  void lightPalette() {
    const QString out = dir_.filePath("light");
    const QString log = run({}, out);
    QVERIFY2(log.contains("wrote"), qPrintable(log));
    for (const char* row : {"row host node0", "row rank 0", "row rank 1", "row GPU 0: NVIDIA H100",
                            "row overlap", "row stream 13", "row NCCL", "row thread "}) {
      QVERIFY2(log.contains(row), qPrintable(QString("missing '%1' in\n%2").arg(row, log)));
    }
    for (const char* name : {"timeline.png", "zoomed.png", "range.png", "collectives.png",
                             "interference.png", "summary.png", "why.png", "path.png"}) {
      const QImage img(QDir(out).filePath(name));
      QVERIFY2(!img.isNull(), name);
      QVERIFY2(img.width() >= 800 && img.height() >= 300, name);
      QVERIFY2(colours(img) > 40,
               qPrintable(QString("%1: %2 colours").arg(name).arg(colours(img))));
    }
    // The timeline shows every class colour and both overlap shades (theme.cpp, light palette).
    const QImage tl(QDir(out).filePath("timeline.png"));
    QVERIFY(has_colour(tl, QColor(0, 114, 178)));  // compute
    QVERIFY(has_colour(tl, QColor(213, 94, 0)));   // communication
    QVERIFY(has_colour(tl, QColor(0, 158, 115)));  // memory
    QVERIFY(has_colour(tl, QColor(46, 139, 87)));  // hidden communication
    QVERIFY(has_colour(tl, QColor(200, 30, 45)));  // exposed communication
    QVERIFY(mean_lightness(tl) > 150);
  }

  void darkPalette() {
    const QString out = dir_.filePath("dark");
    const QString log = run({"--dark"}, out);
    QVERIFY2(log.contains("wrote"), qPrintable(log));
    const QImage tl(QDir(out).filePath("timeline.png"));
    QVERIFY(!tl.isNull());
    QVERIFY2(mean_lightness(tl) < 110, qPrintable(QString::number(mean_lightness(tl))));
    QVERIFY(has_colour(tl, QColor(86, 180, 233)));  // compute, dark variant
    QVERIFY(has_colour(tl, QColor(240, 150, 60)));  // communication, dark variant
  }

  // Issue 12: without a display the GUI aborted with SIGABRT, even for --help; bad flags exited 1.
  void noDisplayNeededForHelpAndErrors() {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (const char* v : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"}) env.remove(v);
    auto run_bare = [&](const QStringList& args, QString* out, QString* err) {
      QProcess p;
      p.setProcessEnvironment(env);
      p.start(gui_binary(), args);
      if (!p.waitForFinished(60000)) return -1;
      *out = QString::fromLocal8Bit(p.readAllStandardOutput());
      *err = QString::fromLocal8Bit(p.readAllStandardError());
      return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    };
    QString out, err;
    QCOMPARE(run_bare({"--help"}, &out, &err), 0);
    QVERIFY2(out.contains("--screenshot"), qPrintable(out));
    QCOMPARE(run_bare({"--version"}, &out, &err), 0);
    QVERIFY2(out.startsWith("c3scope-gui "), qPrintable(out));
    QCOMPARE(run_bare({"--no-such-flag"}, &out, &err), 2);
    QVERIFY2(err.startsWith("c3scope-gui: ") && err.count('\n') == 1, qPrintable(err));
    QCOMPARE(run_bare({job_.front()}, &out, &err), 2);
    QVERIFY2(err.contains("no display") && err.count('\n') == 1, qPrintable(err));
    // --screenshot renders offscreen on its own, display or not.
    QCOMPARE(run_bare({"--screenshot", dir_.filePath("bare"), job_.front()}, &out, &err), 0);
    QVERIFY2(QFileInfo::exists(dir_.filePath("bare/timeline.png")), qPrintable(err));
  }

  // Issue 13: on PyTorch traces (epoch timestamps near 1.66e18 ns) the time ruler kept its
  // labels only for the whole trace; zoomed in to 124 ms it showed one, at 50.9 ms none. Every
  // picture, from the whole trace down to a ten-thousandth of it, has a labelled ruler.
  void rulerStaysLabelledOnPyTorchTraces() {
    const auto trace = c3::test::shared_traces() / "kineto" / "hta_trace_diff_control.json.gz";
    if (!std::filesystem::exists(trace)) QSKIP("../shared/traces is not here");
    const QString out = dir_.filePath("pytorch");
    const QString log = run({}, out, {QString::fromStdString(trace.string())});
    QVERIFY2(log.contains("wrote"), qPrintable(log));
    int pictures = 0;
    for (const QString& line : log.split('\n')) {
      if (!line.startsWith("ruler")) continue;
      ++pictures;
      const QStringList labels = line.mid(5).split(" | ", Qt::SkipEmptyParts);
      QVERIFY2(labels.size() >= 4, qPrintable(line));
      // All different, all in one unit.
      QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), labels.size());
      const QString unit = labels.front().section(' ', 1);
      for (const QString& l : labels) QVERIFY2(l.section(' ', 1) == unit, qPrintable(line));
    }
    QCOMPARE(pictures, 5);  // timeline.png and zoom-{10,100,1000,10000}.png
    for (const char* name : {"zoom-10.png", "zoom-10000.png"})
      QVERIFY2(!QImage(QDir(out).filePath(name)).isNull(), name);
  }

  // Issue 24 item 15: --screenshot wrote over an input named DIR/timeline.png, and on a full
  // disk left 0-byte PNGs under their final names with 11 lines of output. Pictures follow the
  // policy of every c3scope output (docs/outputs.md).
  void picturesFollowTheOutputPolicy() {
    auto run_with = [&](const QStringList& args, QString* out, QString* err, long fsize = -1) {
      QProcess p;
      if (fsize >= 0) {
        p.setChildProcessModifier([fsize] {
          const rlimit limit{static_cast<rlim_t>(fsize), static_cast<rlim_t>(fsize)};
          setrlimit(RLIMIT_FSIZE, &limit);
        });
      }
      p.start(gui_binary(), QStringList{"--size", "1000x700"} + args);
      if (!p.waitForFinished(120000)) return -1;
      *out = QString::fromLocal8Bit(p.readAllStandardOutput());
      *err = QString::fromLocal8Bit(p.readAllStandardError());
      return p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2;
    };
    auto read = [](const QString& path) {
      QFile f(path);
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    };
    QString out, err;
    // An input named timeline.png in DIR: refused before any work, with or without --force, and
    // left as it was.
    const QString in_dir = dir_.filePath("input-inside");
    QVERIFY(QDir().mkpath(in_dir));
    const QString input = QDir(in_dir).filePath("timeline.png");
    QVERIFY(QFile::copy(job_.front(), input));
    const QByteArray before = read(input);
    for (const QStringList& extra : {QStringList{}, QStringList{"--force"}}) {
      QCOMPARE(
          (run_with(extra + QStringList{"--screenshot", in_dir, input, job_.back()}, &out, &err)),
          2);
      QVERIFY2(err.count('\n') == 1 && err.contains("timeline.png") && err.contains("input"),
               qPrintable(err));
      QCOMPARE(read(input), before);
    }
    QCOMPARE(QDir(in_dir).entryList(QDir::Files | QDir::Hidden).size(), 1);
    // An existing picture: refused without --force (nothing written), replaced with it.
    const QString again = dir_.filePath("again");
    QVERIFY(QDir().mkpath(again));
    const QString summary = QDir(again).filePath("summary.png");
    {
      QFile f(summary);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("not a picture");
    }
    QCOMPARE((run_with(QStringList{"--screenshot", again, "--views", "timeline,summary"} + job_,
                       &out, &err)),
             2);
    QVERIFY2(err.count('\n') == 1 && err.contains("--force"), qPrintable(err));
    QCOMPARE(read(summary), QByteArray("not a picture"));
    QVERIFY(!QFileInfo::exists(QDir(again).filePath("timeline.png")));
    QCOMPARE(
        (run_with(
            QStringList{"--screenshot", again, "--views", "timeline,summary", "--force"} + job_,
            &out, &err)),
        0);
    QVERIFY(!QImage(summary).isNull());
    // --views renders those views only, and each file written is printed.
    QStringList wrote;
    for (const QString& l : out.split('\n'))
      if (l.startsWith("wrote ")) wrote << l.mid(6);
    QCOMPARE(wrote, (QStringList{QDir(again).filePath("timeline.png"), summary}));
    QCOMPARE(QDir(again).entryList(QDir::Files | QDir::Hidden).size(), 2);
    QCOMPARE((run_with(QStringList{"--screenshot", again, "--views", "timeline,nothing"} + job_,
                       &out, &err)),
             2);
    QVERIFY2(err.count('\n') == 1 && err.contains("nothing") && err.contains("summary"),
             qPrintable(err));
    QCOMPARE((run_with(QStringList{"--views", "timeline"} + job_, &out, &err)), 2);
    QVERIFY2(err.count('\n') == 1 && err.contains("--screenshot"), qPrintable(err));
    // A file size limit (a full disk the same way): one error line, exit 2, and no picture, empty
    // or not, nor a temporary left behind.
    const QString full = dir_.filePath("full");
    QCOMPARE((run_with(QStringList{"--screenshot", full} + job_, &out, &err, 64L * 1024)), 2);
    QVERIFY2(err.count('\n') == 1 && err.contains("File too large"), qPrintable(err));
    QVERIFY2(!out.contains("wrote"), qPrintable(out));
    QCOMPARE(QDir(full).entryList(QDir::Files | QDir::Hidden), QStringList{});
  }

  void badTraceFailsCleanly() {
    QProcess p;
    p.start(gui_binary(),
            {"--screenshot", dir_.filePath("bad"), dir_.filePath("nothing-here.sqlite")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 2);  // issue 12: a load error is exit 2, as in every tool
    // The folder is made only once the traces loaded: a failed run leaves nothing behind.
    QVERIFY(!QDir(dir_.filePath("bad")).exists());
    const QString err = QString::fromLocal8Bit(p.readAllStandardError());
    QVERIFY2(err.contains("nothing-here.sqlite"), qPrintable(err));
  }
};

QTEST_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
