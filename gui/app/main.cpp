// c3scope-gui: the desktop timeline.
//
//   c3scope-gui [TRACE...]                      traces (c3scope .sqlite, PyTorch/Kineto .json[.gz],
//                                               Nsight Systems .sqlite exports, or folders)
//   c3scope-gui --screenshot DIR [--size WxH] [--dark] [--compare TRACE [--step REGEX]] TRACE...
//       renders the main views offscreen into DIR/*.png (with QT_QPA_PLATFORM=offscreen),
//       prints what it drew, and exits (2 when the traces cannot be opened; no display needed)
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QImage>
#include <QPalette>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <algorithm>
#include <cstdio>

#include "c3/analyzer/open.h"
#include "c3/gui/document.h"
#include "details.h"
#include "main_window.h"
#include "panels.h"
#include "timeline_view.h"

namespace {

using c3::gui::MainWindow;

QPalette dark_palette() {
  QPalette p;
  const QColor window(45, 45, 48), base(30, 30, 32), text(225, 225, 225);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, window);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, window);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::Highlight, QColor(60, 130, 220));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Mid, QColor(80, 80, 85));
  p.setColor(QPalette::PlaceholderText, QColor(140, 140, 140));
  p.setColor(QPalette::Link, QColor(120, 175, 255));
  p.setColor(QPalette::LinkVisited, QColor(170, 150, 255));
  return p;
}

QElapsedTimer& run_clock() {
  static QElapsedTimer c;
  return c;
}

bool save(QWidget* w, const QString& dir, const QString& name) {
  const QString path = QDir(dir).filePath(name);
  QApplication::processEvents();
  const bool ok = w->grab().toImage().save(path);
  std::printf("%s %s (at %.2f s)\n", ok ? "wrote" : "FAILED", path.toLocal8Bit().constData(),
              static_cast<double>(run_clock().elapsed()) / 1e3);
  return ok;
}

// The time ruler's labels in the last picture, for the screenshot test to check.
void print_ruler(const c3::gui::TimelineView& view) {
  std::string line = "ruler";
  for (const QString& l : view.ruler_labels()) line += " | " + l.toStdString();
  std::printf("%s\n", line.c_str());
}

// Picks a communication kernel that overlaps compute (the interesting case) for the details view.
int64_t pick_activity(const c3::gui::Document& doc) {
  int64_t best = -1;
  double best_pct = -1;
  for (const auto& c : doc.report.comm) {
    const double pct = c.pct();
    if (pct > best_pct && pct < 100) {
      best_pct = pct;
      best = static_cast<int64_t>(c.activity);
    }
  }
  return best;
}

void screenshots(MainWindow& w, const QString& dir) {
  using c3::gui::TimelineView;
  TimelineView* view = w.timeline();
  const c3::gui::Document& doc = *w.document();
  // The rows drawn, for the screenshot test to check.
  for (const int r : doc.timeline->visible_rows()) {
    std::printf("row %s\n", doc.timeline->row(r).label.c_str());
  }
  std::printf("overlap %.2f %%\n", doc.report.overall.b.overlap_pct);
  std::printf("loaded (at %.2f s)\n", static_cast<double>(run_clock().elapsed()) / 1e3);
  bool ok = true;
  w.panels()->setCurrentWidget(w.panels()->summary_page());
  const int64_t a = pick_activity(doc);
  if (a >= 0) view->select_activity(static_cast<size_t>(a));
  view->zoom_to_fit();
  ok &= save(&w, dir, "timeline.png");
  print_ruler(*view);
  // Deeper and deeper around the middle of the trace (the ruler must stay labelled: PyTorch's
  // epoch timestamps once broke it below ~100 ms).
  const int64_t first_ns = doc.timeline->first_ns(), span = doc.timeline->last_ns() - first_ns;
  for (const int64_t f : {10, 100, 1000, 10000}) {
    const int64_t width = std::max<int64_t>(span / f, 100);
    const int64_t mid = first_ns + span / 2;
    view->set_window(mid - width / 2, mid - width / 2 + width);
    ok &= save(&w, dir, QString("zoom-%1.png").arg(f));
    print_ruler(*view);
  }
  // Zoomed in around the selected kernel: names, flow arrows, details.
  if (a >= 0) {
    view->select_activity(static_cast<size_t>(a));
    const int64_t mid = view->window_start() + (view->window_end() - view->window_start()) / 2;
    const auto& acts = doc.trace.activities;
    const int64_t d =
        std::max<int64_t>(1, acts.end[static_cast<size_t>(a)] - acts.start[static_cast<size_t>(a)]);
    view->set_window(mid - 4 * d, mid + 4 * d);
  }
  ok &= save(&w, dir, "zoomed.png");
  // A range selection over the middle of the trace.
  const int64_t first = doc.timeline->first_ns(), last = doc.timeline->last_ns();
  view->zoom_to_fit();
  view->set_range_selection(first + (last - first) * 2 / 5, first + (last - first) * 3 / 5);
  ok &= save(&w, dir, "range.png");
  view->clear_selection();
  // The panels at a readable size of their own (in the window they share the height).
  c3::gui::AnalysisPanels panels;
  panels.setPalette(w.palette());
  panels.set_document(&doc);
  panels.resize(w.width(), std::max(620, w.height() * 2 / 3));
  panels.show();
  panels.setCurrentWidget(panels.collectives_page());
  panels.collectives_view()->sortByColumn(3, Qt::DescendingOrder);
  ok &= save(&panels, dir, "collectives.png");
  panels.setCurrentWidget(panels.interference_page());
  ok &= save(&panels, dir, "interference.png");
  panels.setCurrentWidget(panels.summary_page());
  ok &= save(&panels, dir, "summary.png");
  if (!doc.trace.bench.empty()) {
    panels.setCurrentWidget(panels.bench_page());
    ok &= save(&panels, dir, "bench.png");
  }
  std::printf("frame %.2f ms\n", view->last_frame_ms());
  QApplication::exit(ok ? 0 : 2);
}

// The offscreen platform's notes about window hints are noise in screenshot runs.
void quiet_offscreen_notes(QtMsgType type, const QMessageLogContext& ctx, const QString& msg) {
  if (msg.contains("propagateSizeHints") || msg.contains("XDG_RUNTIME_DIR")) return;
  const QByteArray text = qFormatLogMessage(type, ctx, msg).toLocal8Bit();
  std::fprintf(stderr, "%s\n", text.constData());
}

}  // namespace

// What the display needs, checked before QApplication: without a display Qt aborts (SIGABRT)
// instead of saying so. --screenshot renders offscreen and needs none.
bool have_display() {
  return !qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") ||
         !qEnvironmentVariableIsEmpty("DISPLAY") || !qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY");
}

void error_line(const QString& msg) {
  // One line, whatever the message quotes (a file name with a newline in it).
  const QString one = QString(msg).replace('\n', "\\n");
  std::fprintf(stderr, "c3scope-gui: %s\n", one.toLocal8Bit().constData());
}

constexpr int kExitUsage = 2;  // bad flags, traces that cannot be opened, unwritable pictures

int main(int argc, char** argv) {
  run_clock().start();
  QCoreApplication::setApplicationName("c3scope-gui");
  QCoreApplication::setOrganizationName("c3scope");
  QCoreApplication::setApplicationVersion(C3SCOPE_VERSION);
  QCommandLineParser cli;
  cli.setApplicationDescription(
      "c3scope desktop timeline: overlap of computation and communication on GPUs");
  const QCommandLineOption help = cli.addHelpOption();
  const QCommandLineOption version = cli.addVersionOption();
  cli.addPositionalArgument(
      "traces",
      "c3scope traces (.sqlite), PyTorch profiler JSON, Nsight Systems SQLite exports, or folders");
  const QCommandLineOption shot("screenshot",
                                "Render the main views into DIR/*.png and exit (offscreen: needs "
                                "no display).",
                                "DIR");
  const QCommandLineOption size("size", "Window size for --screenshot (default 1600x1000).", "WxH",
                                "1600x1000");
  const QCommandLineOption dark("dark", "Use a dark palette.");
  const QCommandLineOption compare("compare", "Also open TRACE as the comparison (B).", "TRACE");
  const QCommandLineOption step(
      "step",
      "Steps of the comparison: NVTX or annotation ranges whose name matches REGEX (default "
      "ProfilerStep#N), as c3scope compare --step.",
      "REGEX");
  cli.addOptions({shot, size, dark, compare, step});
  // Parsed before any QApplication exists, so --help, --version and bad flags need no display.
  QStringList args;
  for (int i = 0; i < argc; ++i) args << QString::fromLocal8Bit(argv[i]);
  if (!cli.parse(args)) {
    error_line(cli.errorText() + " (see 'c3scope-gui --help')");
    return kExitUsage;
  }
  if (cli.isSet(help)) {
    std::fputs(cli.helpText().toLocal8Bit().constData(), stdout);
    return std::fflush(stdout) == 0 ? 0 : kExitUsage;
  }
  if (cli.isSet(version)) {
    std::printf("c3scope-gui %s\n", C3SCOPE_VERSION);
    return std::fflush(stdout) == 0 ? 0 : kExitUsage;
  }
  const QStringList traces = cli.positionalArguments();
  const bool screenshot = cli.isSet(shot);
  QString dir;
  int width = 0, height = 0;
  if (screenshot) {
    dir = cli.value(shot);
    const QStringList wh = cli.value(size).split('x');
    width = wh.size() == 2 ? wh[0].toInt() : 0;
    height = wh.size() == 2 ? wh[1].toInt() : 0;
    if (width < 400 || height < 300) {
      error_line("--size " + cli.value(size) + ": expected WIDTHxHEIGHT, at least 400x300");
      return kExitUsage;
    }
    if (traces.isEmpty()) {
      error_line("--screenshot needs at least one trace");
      return kExitUsage;
    }
    // Refused before loading, created only after: a failed load leaves no folder behind.
    const QFileInfo info(dir);
    if (info.exists() && !info.isDir()) {
      error_line("--screenshot " + dir + ": exists and is not a folder");
      return kExitUsage;
    }
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  } else if (!have_display()) {
    error_line(
        "no display (DISPLAY and WAYLAND_DISPLAY are not set): run it in a desktop session, or "
        "render pictures with --screenshot DIR");
    return kExitUsage;
  }
  if (qgetenv("QT_QPA_PLATFORM") == "offscreen") qInstallMessageHandler(quiet_offscreen_notes);
  QApplication app(argc, argv);
  // Ctrl-C, SIGTERM or SIGHUP while a PyTorch or Nsight file is converted (or open) removes its
  // temporary conversion ($TMPDIR/c3scope-open-*).
  c3::analyzer::remove_temporaries_on_signals();
  if (cli.isSet(dark)) {
    QApplication::setStyle(QStyleFactory::create("Fusion"));
    QApplication::setPalette(dark_palette());
  }
  MainWindow w;
  w.panels()->set_compare_step(cli.value(step));
  if (screenshot) {
    w.set_quiet_errors(true);
    w.resize(width, height);
    w.show();
    const QString other = cli.value(compare);
    auto make_dir = [dir] {
      if (QDir().mkpath(dir)) return true;
      error_line("--screenshot " + dir + ": cannot create that folder");
      QApplication::exit(kExitUsage);
      return false;
    };
    w.open(traces, [&w, dir, other, make_dir](bool ok) {
      if (!ok) {
        QApplication::exit(kExitUsage);
        return;
      }
      if (other.isEmpty()) {
        if (!make_dir()) return;
        QTimer::singleShot(0, &w, [&w, dir] { screenshots(w, dir); });
        return;
      }
      w.compare_with({other}, [&w, dir, make_dir](bool ok2) {
        if (!ok2) {
          QApplication::exit(kExitUsage);
          return;
        }
        if (!make_dir()) return;
        save(w.panels(), dir, "compare.png");
        QTimer::singleShot(0, &w, [&w, dir] { screenshots(w, dir); });
      });
    });
    return QApplication::exec();
  }
  w.show();
  if (!traces.isEmpty()) w.open(traces);
  return QApplication::exec();
}
