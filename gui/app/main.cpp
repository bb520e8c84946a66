// c3scope-gui: the desktop timeline.
//
//   c3scope-gui [TRACE...]                      traces (c3scope .sqlite, PyTorch/Kineto .json[.gz],
//                                               Nsight Systems .sqlite exports, or folders)
//   c3scope-gui --screenshot DIR [--views LIST] [--force] [--size WxH] [--dark]
//               [--compare TRACE [--step REGEX]] TRACE...
//       renders the main views offscreen into DIR/*.png (with QT_QPA_PLATFORM=offscreen), as
//       every c3scope output is written (docs/outputs.md: never over an input, an existing file
//       only with --force, through a temporary), prints each file written, and exits (2 when the
//       traces cannot be opened or a picture cannot be written; no display needed)
#include <QApplication>
#include <QBuffer>
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
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "c3/analyzer/open/open.h"
#include "c3/gui/document.h"
#include "c3/tracedb/output_file.h"
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

void error_line(const QString& msg) {
  // One line, whatever the message quotes (a file name with a newline in it).
  const QString one = QString(msg).replace('\n', "\\n");
  std::fprintf(stderr, "c3scope-gui: %s\n", one.toLocal8Bit().constData());
}

// The views --screenshot can render (--views picks some), and the files each writes.
struct View {
  const char* name;
  std::vector<const char*> files;
  const char* what;
};
const std::vector<View>& all_views() {
  static const std::vector<View> views = {
      {"timeline", {"timeline.png"}, "the window, the whole trace"},
      {"zoom",
       {"zoom-10.png", "zoom-100.png", "zoom-1000.png", "zoom-10000.png"},
       "the window zoomed 10x to 10000x into the middle of the trace"},
      {"zoomed", {"zoomed.png"}, "the window around a communication kernel, with its details"},
      {"range", {"range.png"}, "the window with a range selected, its summary in the details"},
      {"summary", {"summary.png"}, "the Summary tab"},
      {"collectives", {"collectives.png"}, "the Collectives tab"},
      {"interference", {"interference.png"}, "the Interference tab"},
      {"why", {"why.png"}, "the Why tab (critical path per step, idle causes, kernel sequences)"},
      {"path",
       {"path.png"},
       "the window over one step with its critical path drawn, the queue rows shown and an "
       "operation on the path in the details"},
      {"bench", {"bench.png"}, "the Microbenchmarks tab, for traces with c3bench results"},
      {"compare", {"compare.png"}, "the Compare tab, with --compare"},
  };
  return views;
}

// The pictures of one run: rendered into memory first, then written as one unit (write()).
struct Shots {
  QString dir;
  QStringList views;  // the views to render
  c3::tracedb::OutputRules rules;
  std::vector<std::pair<QString, QByteArray>> images;  // file name, PNG bytes

  bool wants(const char* view) const { return views.contains(QString::fromUtf8(view)); }
  std::string path(const QString& name) const { return QDir(dir).filePath(name).toStdString(); }
  // Renders `w` as `name` (a file of the view being drawn).
  bool grab(QWidget* w, const QString& name) {
    QApplication::processEvents();
    QByteArray png;
    QBuffer buffer(&png);
    buffer.open(QIODevice::WriteOnly);
    if (!w->grab().toImage().save(&buffer, "PNG")) {
      error_line(QString::fromStdString("--screenshot " + c3::tracedb::printable(path(name)) +
                                        ": cannot render that picture"));
      return false;
    }
    images.emplace_back(name, std::move(png));
    return true;
  }
  // Every picture through a temporary beside it (tracedb/output_file.h), moved into place only
  // once all are complete: a refused name, a full disk or a size limit leaves every path as it
  // was and prints one line. Then prints each file written.
  bool write() const {
    try {
      std::vector<std::unique_ptr<c3::tracedb::OutputFile>> files;
      for (const auto& [name, png] : images) {
        files.push_back(
            std::make_unique<c3::tracedb::OutputFile>("--screenshot", path(name), rules));
        files.back()->write(std::string_view(png.constData(), static_cast<size_t>(png.size())));
      }
      // A write error shows at the flush: find it before any picture is moved into place
      // (commit() of the failed one says what happened and removes its temporary; the others'
      // are removed as they go out of scope).
      for (auto& f : files) {
        FILE* s = f->stream();
        if (s != nullptr && (std::fflush(s) != 0 || std::ferror(s) != 0)) f->commit();
      }
      for (auto& f : files) f->commit();
    } catch (const c3::tracedb::OutputError& e) {
      error_line(QString::fromStdString(e.what()));
      return false;
    }
    for (const auto& [name, png] : images)
      std::printf("wrote %s\n", c3::tracedb::printable(path(name)).c_str());
    return true;
  }
  // Before the traces load: a name that is an input, an existing file without --force or a
  // folder is refused now rather than after the work (a folder that does not exist yet holds
  // nothing to refuse). bench.png (only when the traces hold c3bench results) is checked when
  // written.
  bool check_early(bool compare) const {
    if (!QFileInfo(dir).isDir()) return true;
    try {
      for (const View& v : all_views()) {
        const std::string name = v.name;
        if (!wants(v.name) || name == "bench" || (name == "compare" && !compare)) continue;
        for (const char* f : v.files) c3::tracedb::check_output("--screenshot", path(f), rules);
      }
    } catch (const c3::tracedb::OutputError& e) {
      error_line(QString::fromStdString(e.what()));
      return false;
    }
    return true;
  }
};

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

void screenshots(MainWindow& w, Shots& shots) {
  using c3::gui::TimelineView;
  TimelineView* view = w.timeline();
  const c3::gui::Document& doc = *w.document();
  // The rows drawn, for the screenshot test to check.
  for (const int r : doc.timeline->visible_rows()) {
    std::printf("row %s\n", doc.timeline->row(r).label.c_str());
  }
  if (doc.report.overall.b.comm() > 0) {
    std::printf("overlap %.2f %%\n", doc.report.overall.b.overlap_pct);
  } else {
    std::printf("overlap - (no communication)\n");
  }
  std::printf("loaded (at %.2f s)\n", static_cast<double>(run_clock().elapsed()) / 1e3);
  bool ok = true;
  w.panels()->setCurrentWidget(w.panels()->summary_page());
  const int64_t a = pick_activity(doc);
  if (a >= 0) view->select_activity(static_cast<size_t>(a));
  view->zoom_to_fit();
  if (shots.wants("timeline")) {
    ok = ok && shots.grab(&w, "timeline.png");
    print_ruler(*view);
  }
  // Deeper and deeper around the middle of the trace (the ruler must stay labelled: PyTorch's
  // epoch timestamps once broke it below ~100 ms).
  const int64_t first_ns = doc.timeline->first_ns(), span = doc.timeline->last_ns() - first_ns;
  if (shots.wants("zoom")) {
    for (const int64_t f : {10, 100, 1000, 10000}) {
      const int64_t width = std::max<int64_t>(span / f, 100);
      const int64_t mid = first_ns + span / 2;
      view->set_window(mid - width / 2, mid - width / 2 + width);
      ok = ok && shots.grab(&w, QString("zoom-%1.png").arg(f));
      print_ruler(*view);
    }
  }
  // Zoomed in around the selected kernel: names, flow arrows, details.
  if (shots.wants("zoomed")) {
    if (a >= 0) {
      view->select_activity(static_cast<size_t>(a));
      const int64_t mid = view->window_start() + (view->window_end() - view->window_start()) / 2;
      const auto& acts = doc.trace.activities;
      const int64_t d = std::max<int64_t>(
          1, acts.end[static_cast<size_t>(a)] - acts.start[static_cast<size_t>(a)]);
      view->set_window(mid - 4 * d, mid + 4 * d);
    }
    ok = ok && shots.grab(&w, "zoomed.png");
  }
  // A range selection over the middle of the trace.
  if (shots.wants("range")) {
    const int64_t first = doc.timeline->first_ns(), last = doc.timeline->last_ns();
    view->zoom_to_fit();
    view->set_range_selection(first + (last - first) * 2 / 5, first + (last - first) * 3 / 5);
    ok = ok && shots.grab(&w, "range.png");
    view->clear_selection();
  }
  // One step's critical path over the timeline (the second step: the first one warms up), the
  // queue rows shown, the path's longest compute operation selected (its slack in the details).
  if (shots.wants("path")) {
    w.path_action()->setChecked(true);
    view->set_path_shown(true);
    w.queue_action()->trigger();
    const size_t want = doc.report.paths.size() > 1 ? 1 : 0;
    int64_t from = INT64_MAX, to = INT64_MIN, longest = 0, pick = -1;
    for (size_t k = 0; k < doc.path.size() && k < doc.path_step.size(); ++k) {
      if (doc.path_step[k] != want) continue;
      const c3::analyzer::PathSegment& seg = doc.path[k];
      const int64_t off = doc.trace.processes[static_cast<size_t>(seg.process)].offset_ns;
      from = std::min(from, seg.from + off);
      to = std::max(to, seg.to + off);
      if (seg.part == c3::analyzer::PathPart::compute && seg.row >= 0 &&
          seg.to - seg.from > longest) {
        longest = seg.to - seg.from;
        pick = seg.row;
      }
    }
    if (pick >= 0) view->select_activity(static_cast<size_t>(pick));
    if (from < to) view->set_window(from - (to - from) / 20, to + (to - from) / 20);
    ok = ok && shots.grab(&w, "path.png");
    w.queue_action()->trigger();
    view->set_path_shown(false);
    w.path_action()->setChecked(false);
  }
  // The panels at a readable size of their own (in the window they share the height).
  c3::gui::AnalysisPanels panels;
  panels.setPalette(w.palette());
  panels.set_document(&doc);
  if (w.other_document() != nullptr)
    panels.set_comparison(w.other_document(), w.panels()->comparison());
  panels.set_compare_step(w.panels()->compare_step());
  panels.resize(w.width(), std::max(620, w.height() * 2 / 3));
  panels.show();
  if (shots.wants("compare") && w.other_document() != nullptr) {
    panels.setCurrentWidget(panels.compare_page());
    ok = ok && shots.grab(&panels, "compare.png");
  }
  if (shots.wants("collectives")) {
    panels.setCurrentWidget(panels.collectives_page());
    panels.collectives_view()->sortByColumn(3, Qt::DescendingOrder);
    ok = ok && shots.grab(&panels, "collectives.png");
  }
  if (shots.wants("interference")) {
    panels.setCurrentWidget(panels.interference_page());
    ok = ok && shots.grab(&panels, "interference.png");
  }
  if (shots.wants("why")) {
    panels.setCurrentWidget(panels.why_page());
    ok = ok && shots.grab(&panels, "why.png");
  }
  if (shots.wants("summary")) {
    panels.setCurrentWidget(panels.summary_page());
    ok = ok && shots.grab(&panels, "summary.png");
  }
  if (shots.wants("bench") && !doc.trace.bench.empty()) {
    panels.setCurrentWidget(panels.bench_page());
    ok = ok && shots.grab(&panels, "bench.png");
  }
  std::printf("frame %.2f ms\n", view->last_frame_ms());
  ok = ok && shots.write();
  std::fflush(stdout);
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
  QString views_help =
      "Render the main views into DIR/*.png and exit (offscreen: needs no display). Each file "
      "written is printed; a name that is one of the traces, or exists (without --force), is "
      "refused. Views (--views):";
  for (const View& v : all_views()) {
    QStringList files;
    for (const char* f : v.files) files << f;
    views_help += QString(" %1 (%2: %3);").arg(v.name, files.join(", "), v.what);
  }
  views_help.chop(1);
  const QCommandLineOption shot("screenshot", views_help + ".", "DIR");
  const QCommandLineOption views(
      "views", "The views --screenshot renders, comma-separated (default: all of them).", "LIST");
  const QCommandLineOption force("force",
                                 "Let --screenshot replace pictures that exist (never a trace).");
  const QCommandLineOption size("size", "Window size for --screenshot (default 1600x1000).", "WxH",
                                "1600x1000");
  const QCommandLineOption dark("dark", "Use a dark palette.");
  const QCommandLineOption compare("compare", "Also open TRACE as the comparison (B).", "TRACE");
  const QCommandLineOption step(
      "step",
      "Steps of the comparison: NVTX or annotation ranges whose name matches REGEX (default "
      "ProfilerStep#N), as c3scope compare --step.",
      "REGEX");
  cli.addOptions({shot, views, force, size, dark, compare, step});
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
  Shots shots;
  if (!screenshot && (cli.isSet(views) || cli.isSet(force))) {
    error_line(QString(cli.isSet(views) ? "--views" : "--force") + " goes with --screenshot DIR");
    return kExitUsage;
  }
  if (screenshot) {
    dir = cli.value(shot);
    shots.dir = dir;
    shots.rules.force = cli.isSet(force);
    for (const QString& t : traces) shots.rules.inputs.push_back(t.toStdString());
    if (cli.isSet(compare)) shots.rules.inputs.push_back(cli.value(compare).toStdString());
    QStringList known;
    for (const View& v : all_views()) known << v.name;
    if (cli.isSet(views)) {
      for (const QString& v : cli.value(views).split(',', Qt::SkipEmptyParts)) {
        if (!known.contains(v.trimmed())) {
          error_line("--views " + cli.value(views) + ": no view '" + v.trimmed() +
                     "'; the views are " + known.join(", "));
          return kExitUsage;
        }
        shots.views << v.trimmed();
      }
      if (shots.views.isEmpty()) {
        error_line("--views: name at least one of " + known.join(", "));
        return kExitUsage;
      }
      if (shots.views.contains("compare") && !cli.isSet(compare)) {
        error_line("--views compare: needs --compare TRACE");
        return kExitUsage;
      }
    } else {
      shots.views = known;
    }
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
    if (!shots.check_early(cli.isSet(compare))) return kExitUsage;
    // A signal removes the pictures' temporaries; a file size limit is an error, not SIGXFSZ.
    c3::tracedb::install_output_cleanup();
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
    w.open(traces, [&w, &shots, other, make_dir](bool ok) {
      if (!ok) {
        QApplication::exit(kExitUsage);
        return;
      }
      if (other.isEmpty()) {
        if (!make_dir()) return;
        QTimer::singleShot(0, &w, [&w, &shots] { screenshots(w, shots); });
        return;
      }
      w.compare_with({other}, [&w, &shots, make_dir](bool ok2) {
        if (!ok2) {
          QApplication::exit(kExitUsage);
          return;
        }
        if (!make_dir()) return;
        QTimer::singleShot(0, &w, [&w, &shots] { screenshots(w, shots); });
      });
    });
    return QApplication::exec();
  }
  w.show();
  if (!traces.isEmpty()) w.open(traces);
  return QApplication::exec();
}
