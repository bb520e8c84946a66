#include "main_window.h"

#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPointer>
#include <QProgressDialog>
#include <QPushButton>
#include <QRegularExpression>
#include <QSettings>
#include <QStatusBar>
#include <QThread>
#include <QTimer>
#include <QToolBar>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <set>

#include "c3/analyzer/metrics/pattern.h"
#include "c3/analyzer/why/whatif.h"
#include "c3/gui/format.h"
#include "details.h"
#include "panels.h"
#include "timeline_view.h"

namespace c3::gui {

using analyzer::Class;

namespace {

constexpr int kMaxRecent = 10;

QString join_paths(const QStringList& paths) {
  return paths.join(QChar('\n'));
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("c3scope");
  setAcceptDrops(true);
  setDockNestingEnabled(true);

  view_ = new TimelineView(this);
  auto* central = new QWidget(this);
  auto* lay = new QVBoxLayout(central);
  lay->setContentsMargins(0, 0, 0, 0);
  lay->setSpacing(0);
  setCentralWidget(central);
  build_search_bar();
  lay->addWidget(view_, 1);

  details_ = new DetailsPanel(this);
  auto* details_dock = new QDockWidget(tr("Details"), this);
  details_dock->setObjectName("details");
  details_dock->setWidget(details_);
  addDockWidget(Qt::RightDockWidgetArea, details_dock);

  panels_ = new AnalysisPanels(this);
  auto* panels_dock = new QDockWidget(tr("Analysis"), this);
  panels_dock->setObjectName("analysis");
  panels_dock->setWidget(panels_);
  addDockWidget(Qt::BottomDockWidgetArea, panels_dock);
  // The microbenchmark charts and the comparison need more height than the summary: their tab
  // grows the panels to at least half the window (issue 24: axis titles were cut, tables showed
  // two rows and a half).
  connect(panels_, &QTabWidget::currentChanged, this, [this, panels_dock](int) {
    const QWidget* page = panels_->currentWidget();
    if (page != panels_->bench_page() && page != panels_->compare_page()) return;
    const int want = height() * 11 / 20;
    if (panels_dock->height() < want) resizeDocks({panels_dock}, {want}, Qt::Vertical);
  });

  rows_view_ = new QTreeView(this);
  rows_view_->setModel(&rows_model_);
  rows_view_->setHeaderHidden(true);
  rows_view_->setToolTip(tr("Untick a row to hide it; Alt+Up / Alt+Down move the selected row."));
  auto* rows_dock = new QDockWidget(tr("Rows"), this);
  rows_dock->setObjectName("rows");
  rows_dock->setWidget(rows_view_);
  addDockWidget(Qt::LeftDockWidgetArea, rows_dock);
  rows_dock->hide();
  connect(&rows_model_, &RowsModel::rowsChangedInTimeline, view_, &TimelineView::relayout);
  connect(rows_view_, &QTreeView::collapsed, this, [this](const QModelIndex& i) {
    const int r = rows_model_.row_of(i);
    if (doc_ && r >= 0) {
      doc_->timeline->row(r).expanded = false;
      view_->relayout();
    }
  });
  connect(rows_view_, &QTreeView::expanded, this, [this](const QModelIndex& i) {
    const int r = rows_model_.row_of(i);
    if (doc_ && r >= 0) {
      doc_->timeline->row(r).expanded = true;
      view_->relayout();
    }
  });
  auto* up = new QAction(tr("Move row up"), rows_view_);
  up->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
  up->setShortcutContext(Qt::WidgetShortcut);
  connect(up, &QAction::triggered, this, [this] {
    if (rows_model_.move(rows_view_->currentIndex(), -1)) view_->relayout();
  });
  auto* down = new QAction(tr("Move row down"), rows_view_);
  down->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Down));
  down->setShortcutContext(Qt::WidgetShortcut);
  connect(down, &QAction::triggered, this, [this] {
    if (rows_model_.move(rows_view_->currentIndex(), 1)) view_->relayout();
  });
  rows_view_->addAction(up);
  rows_view_->addAction(down);

  connect(view_, &TimelineView::itemSelected, this, &MainWindow::on_item_selected);
  connect(view_, &TimelineView::rangeSelected, this,
          [this](qint64 t0, qint64 t1) { details_->show_range(t0, t1); });
  connect(view_, &TimelineView::selectionCleared, details_, &DetailsPanel::show_nothing);
  connect(view_, &TimelineView::rowsChanged, this, [this] { rows_model_.sync(); });
  connect(details_, &DetailsPanel::activityRequested, this,
          [this](qulonglong a) { view_->select_activity(a); });
  connect(details_, &DetailsPanel::collectiveRequested, this,
          [this](qulonglong c) { select_collective(c); });
  connect(panels_, &AnalysisPanels::activityRequested, this, [this](qulonglong a) {
    if (!view_->select_activity(a)) {
      // Filtered out by the search: clear the filter and try again.
      search_->clear();
      class_box_->setCurrentIndex(0);
      stream_box_->setCurrentIndex(0);
      view_->select_activity(a);
    }
  });
  connect(panels_, &AnalysisPanels::compareStepChanged, this, [this] { recompare(); });
  connect(panels_, &AnalysisPanels::sequenceRequested, this, [this](int k) { select_sequence(k); });
  connect(panels_, &AnalysisPanels::whatIfRequested, this, [this](const QStringList& w) {
    const Result<bool> ok = replay_what_ifs(w);
    if (!ok) {
      status_->setText(ok.error());
      show_error(ok.error());
    }
  });
  connect(panels_, &AnalysisPanels::compareRequested, this, [this] {
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Compare with"), {}, tr("Traces (*.sqlite *.json *.json.gz);;All files (*)"));
    if (!files.isEmpty()) compare_with(files);
  });

  status_ = new QLabel(this);
  statusBar()->addWidget(status_, 1);
  busy_ = new QLabel(this);
  statusBar()->addPermanentWidget(busy_);
  busy_->hide();
  connect(view_, &TimelineView::windowChanged, this, [this] {
    // Times after the trace's first timestamp, subtracted in integers (epoch timestamps).
    const int64_t first = doc_ ? doc_->timeline->first_ns() : 0;
    // Both ends in one unit, with the decimals that tell them apart however deep the zoom
    // ("232.5633 ms .. 232.6098 ms", not "233 ms .. 233 ms").
    // The view never starts before the trace (TimelineView::clamp_window): never negative.
    const auto a = static_cast<double>(std::max<int64_t>(view_->window_start() - first, 0));
    const auto b = static_cast<double>(std::max<int64_t>(view_->window_end() - first, 0));
    const double reach = std::max(std::fabs(a), std::fabs(b));
    const double unit = reach >= 1e9 ? 1e9 : reach >= 1e6 ? 1e6 : reach >= 1e3 ? 1e3 : 1;
    const QString name = unit == 1e9 ? "s" : unit == 1e6 ? "ms" : unit == 1e3 ? "µs" : "ns";
    const double step = std::max(view_->window_ns(), 1.0) / unit;
    const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step))) + 2, 0, 9);
    status_->setText(tr("window %1 .. %2 %3 (%4)")
                         .arg(a / unit, 0, 'f', unit == 1 ? 0 : decimals)
                         .arg(b / unit, 0, 'f', unit == 1 ? 0 : decimals)
                         .arg(name, format_duration(view_->window_ns())));
  });

  build_menus();
  QSettings s;
  if (!restoreGeometry(s.value("window/geometry").toByteArray())) resize(1500, 950);
  if (!restoreState(s.value("window/state").toByteArray())) {
    // Default layout: the timeline gets most of the height, the details a readable width.
    resizeDocks({panels_dock}, {height() * 2 / 5}, Qt::Vertical);
    resizeDocks({details_dock}, {420}, Qt::Horizontal);
  }
}

MainWindow::~MainWindow() {
  if (cancel_) *cancel_ = true;
  if (analysis_cancel_) *analysis_cancel_ = true;
  if (compare_cancel_) *compare_cancel_ = true;
  // The documents and the row model are members: they go before QWidget's destructor closes
  // the child views, so the views must let go of them first.
  view_->set_document(nullptr);
  details_->set_document(nullptr);
  panels_->set_document(nullptr);
  panels_->set_comparison(nullptr);
  rows_view_->setModel(nullptr);
  rows_model_.set(nullptr);
}

void MainWindow::build_search_bar() {
  auto* bar = new QWidget(this);
  auto* h = new QHBoxLayout(bar);
  h->setContentsMargins(6, 4, 6, 4);
  search_ = new QLineEdit(bar);
  search_->setPlaceholderText(tr("Filter by name (regular expression), e.g. nccl|gemm   [Ctrl+F]"));
  search_->setClearButtonEnabled(true);
  class_box_ = new QComboBox(bar);
  class_box_->addItems(
      {tr("all classes"), tr("compute"), tr("communication"), tr("memory"), tr("other")});
  stream_box_ = new QComboBox(bar);
  stream_box_->addItem(tr("all streams"), -1);
  sequence_box_ = new QComboBox(bar);
  sequence_box_->addItem(tr("any sequence"), -1);
  sequence_box_->setToolTip(
      tr("Keep the kernels of a frequent kernel sequence's occurrences (the Why tab lists them)"));
  sequence_box_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  sequence_box_->setMinimumContentsLength(18);
  auto* prev = new QPushButton(tr("Previous"), bar);
  auto* next = new QPushButton(tr("Next"), bar);
  prev->setToolTip(tr("Previous match (Shift+F3)"));
  next->setToolTip(tr("Next match (F3, Enter)"));
  match_label_ = new QLabel(bar);
  h->addWidget(new QLabel(tr("Search:"), bar));
  h->addWidget(search_, 3);
  h->addWidget(class_box_);
  h->addWidget(stream_box_);
  h->addWidget(sequence_box_);
  h->addWidget(prev);
  h->addWidget(next);
  h->addWidget(match_label_, 1);
  static_cast<QVBoxLayout*>(centralWidget()->layout())->addWidget(bar);
  // Typing restarts a short timer: a filter over millions of items runs once the typing pauses.
  filter_timer_ = new QTimer(this);
  filter_timer_->setSingleShot(true);
  filter_timer_->setInterval(200);
  connect(filter_timer_, &QTimer::timeout, this, &MainWindow::on_filter_changed);
  connect(search_, &QLineEdit::textChanged, filter_timer_, qOverload<>(&QTimer::start));
  connect(class_box_, &QComboBox::currentIndexChanged, this, &MainWindow::on_filter_changed);
  connect(stream_box_, &QComboBox::currentIndexChanged, this, &MainWindow::on_filter_changed);
  connect(sequence_box_, &QComboBox::currentIndexChanged, this, &MainWindow::on_filter_changed);
  connect(search_, &QLineEdit::returnPressed, this, [this] {
    if (filter_timer_->isActive()) {
      filter_timer_->stop();
      on_filter_changed();
    }
    view_->step_match(1);
  });
  connect(next, &QPushButton::clicked, this, [this] { view_->step_match(1); });
  connect(prev, &QPushButton::clicked, this, [this] { view_->step_match(-1); });
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open..."), QKeySequence::Open, this, [this] {
    const QStringList files = QFileDialog::getOpenFileNames(
        this, tr("Open traces"), QSettings().value("files/last_dir").toString(),
        tr("Traces (*.sqlite *.json *.json.gz *.pt.trace.json);;All files (*)"));
    if (!files.isEmpty()) {
      QSettings().setValue("files/last_dir", QFileInfo(files.front()).absolutePath());
      open(files);
    }
  });
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  update_recent_menu();
  file->addAction(tr("&Compare with..."), this, [this] { emit panels_->compareRequested(); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("Zoom to &fit"), QKeySequence(Qt::Key_0), view_, &TimelineView::zoom_to_fit);
  view->addAction(tr("Zoom to &selection"), QKeySequence(Qt::Key_F), view_,
                  &TimelineView::zoom_to_selection);
  path_action_ = view->addAction(tr("&Critical path"), QKeySequence(Qt::Key_P), this,
                                 [this](bool on) { view_->set_path_shown(on); });
  path_action_->setCheckable(true);
  path_action_->setToolTip(
      tr("Draw each step's critical path over the timeline (the Why tab says where its time "
         "went)"));
  queue_action_ =
      view->addAction(tr("&Queue length"), QKeySequence(Qt::Key_Q), this, [this](bool on) {
        if (!doc_) return;
        doc_->timeline->show_queues(on);
        rows_model_.set(doc_->timeline.get());
        view_->relayout();
      });
  queue_action_->setCheckable(true);
  queue_action_->setToolTip(
      tr("A row under each stream with launch calls: its launched, unfinished operations over "
         "time"));
  view->addSeparator();
  for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());
  view->addSeparator();
  view->addAction(tr("&Reset layout"), this, [this] {
    for (QDockWidget* d : findChildren<QDockWidget*>()) {
      d->setFloating(false);
      d->show();
    }
    QSettings().remove("window/state");
  });

  QMenu* search = menuBar()->addMenu(tr("&Search"));
  search->addAction(tr("&Find..."), QKeySequence::Find, this, [this] {
    search_->setFocus();
    search_->selectAll();
  });
  search->addAction(tr("&Next match"), QKeySequence(Qt::Key_F3), this,
                    [this] { view_->step_match(1); });
  search->addAction(tr("&Previous match"), QKeySequence(Qt::SHIFT | Qt::Key_F3), this,
                    [this] { view_->step_match(-1); });
  search->addAction(tr("&Clear filter"), this, [this] {
    search_->clear();
    class_box_->setCurrentIndex(0);
    stream_box_->setCurrentIndex(0);
  });

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&Keyboard and mouse"), QKeySequence::HelpContents, this,
                  &MainWindow::show_shortcuts);
  help->addAction(tr("&About c3scope"), this, [this] {
    QMessageBox::about(
        this, tr("About c3scope"),
        tr("<b>c3scope %1</b><br>Concurrent computation and communication on GPUs: what "
           "overlapped, what was exposed, and what slowed down.")
            .arg(QApplication::applicationVersion()));
  });
}

void MainWindow::show_shortcuts() {
  QMessageBox box(this);
  box.setWindowTitle(tr("Keyboard and mouse"));
  box.setTextFormat(Qt::RichText);
  box.setText(
      tr("<table cellpadding='3'>"
         "<tr><td><b>W / S</b></td><td>zoom in / out (at the mouse)</td></tr>"
         "<tr><td><b>A / D</b></td><td>pan left / right (Shift: faster)</td></tr>"
         "<tr><td><b>Mouse wheel</b></td><td>zoom at the cursor; Shift+wheel pans; Alt+wheel "
         "or wheel over the labels scrolls rows</td></tr>"
         "<tr><td><b>Drag</b></td><td>select a time range (details show its overlap, exposed "
         "communication, top kernels)</td></tr>"
         "<tr><td><b>Shift+drag, middle or right drag</b></td><td>pan</td></tr>"
         "<tr><td><b>Click / double-click</b></td><td>select an item / zoom to it</td></tr>"
         "<tr><td><b>F</b></td><td>zoom to the selection</td></tr>"
         "<tr><td><b>0 or Home</b></td><td>whole trace</td></tr>"
         "<tr><td><b>P</b></td><td>critical path over the timeline (Why tab)</td></tr>"
         "<tr><td><b>Q</b></td><td>a queue-length row under each stream</td></tr>"
         "<tr><td><b>Esc</b></td><td>clear the selection</td></tr>"
         "<tr><td><b>Ctrl+F</b></td><td>search (regular expression, class, stream, frequent "
         "kernel sequence)</td></tr>"
         "<tr><td><b>F3 / Shift+F3, N / Shift+N, Enter</b></td><td>next / previous match</td></tr>"
         "<tr><td><b>Overview strip</b></td><td>click or drag to move the window</td></tr>"
         "<tr><td><b>Labels</b></td><td>click a group to collapse it; right-click to hide or "
         "move a row</td></tr>"
         "<tr><td><b>Rows panel</b></td><td>untick to hide; Alt+Up / Alt+Down to reorder</td></tr>"
         "<tr><td><b>Ctrl+O, Ctrl+Q, F1</b></td><td>open, quit, this help</td></tr>"
         "</table>"));
  box.exec();
}

void MainWindow::update_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value("files/recent").toStringList();
  for (const QString& entry : recent) {
    const QStringList paths = entry.split('\n');
    const QString text = paths.size() == 1
                             ? paths.front()
                             : tr("%1 (+%2 more)").arg(paths.front()).arg(paths.size() - 1);
    recent_menu_->addAction(text, this, [this, paths] { open(paths); });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
  if (!recent.isEmpty()) {
    recent_menu_->addSeparator();
    recent_menu_->addAction(tr("Clear"), this, [this] {
      QSettings().remove("files/recent");
      update_recent_menu();
    });
  }
}

void MainWindow::add_recent(const QStringList& paths) {
  QStringList abs;
  abs.reserve(paths.size());
  for (const QString& p : paths) abs << QFileInfo(p).absoluteFilePath();
  QSettings s;
  QStringList recent = s.value("files/recent").toStringList();
  recent.removeAll(join_paths(abs));
  recent.prepend(join_paths(abs));
  while (recent.size() > kMaxRecent) recent.removeLast();
  s.setValue("files/recent", recent);
  update_recent_menu();
}

void MainWindow::open(const QStringList& paths, std::function<void(bool)> done) {
  start_load(paths, false, std::move(done));
}

namespace {

// The Compare tab's step pattern checked before any work: fails with the one line that says why
// it does not compile (as `c3scope compare --step` says it).
Result<void> check_step_pattern(const QString& step) {
  if (step.isEmpty()) return {};
  try {
    analyzer::Pattern::compile(step.toStdString(), "steps");
  } catch (const std::exception& e) {
    return failed(QString::fromStdString(e.what()));
  }
  return {};
}

}  // namespace

void MainWindow::compare_with(const QStringList& paths, std::function<void(bool)> done) {
  if (!doc_) {
    show_error(tr("Open a trace first, then compare it with another one."));
    if (done) done(false);
    return;
  }
  if (const Result<void> step = check_step_pattern(panels_->compare_step()); !step) {
    show_error(tr("The comparison's step pattern is not valid: %1").arg(step.error()));
    if (done) done(false);
    return;
  }
  start_load(paths, true, std::move(done));
}

void MainWindow::start_load(const QStringList& paths, bool compare,
                            std::function<void(bool)> done) {
  if (loading_) {
    show_error(tr("Still loading the previous traces; wait for them or cancel."));
    if (done) done(false);
    return;
  }
  loading_ = true;
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  auto cancel = cancel_;
  auto* dialog = new QProgressDialog(tr("Loading %1").arg(QFileInfo(paths.front()).fileName()),
                                     tr("Cancel"), 0, 1000, this);
  dialog->setWindowTitle(tr("c3scope"));
  dialog->setMinimumDuration(400);
  dialog->setWindowModality(Qt::WindowModal);
  dialog->setAutoClose(false);
  dialog->setAutoReset(false);
  connect(dialog, &QProgressDialog::canceled, this, [cancel] { *cancel = true; });
  QPointer<QProgressDialog> guard(dialog);
  auto progress = [guard](double f, const QString& what) {
    QMetaObject::invokeMethod(
        qApp,
        [guard, f, what] {
          if (guard) {
            guard->setValue(static_cast<int>(f * 1000));
            guard->setLabelText(what);
          }
        },
        Qt::QueuedConnection);
  };
  // What the worker hands back: the document; for a comparison, its verdicts too.
  struct Loaded {
    std::shared_ptr<Document> doc;
    std::shared_ptr<const analyzer::Comparison> comparison;
  };
  // A comparison is made against the document open now (A); a newer one makes it moot.
  std::shared_ptr<Document> base = compare ? doc_ : nullptr;
  const std::string step = panels_->compare_step().toStdString();
  auto* watcher = new QFutureWatcher<Result<Loaded>>(this);
  connect(watcher, &QFutureWatcher<Result<Loaded>>::finished, this,
          [this, watcher, dialog, paths, compare, base, done = std::move(done)]() mutable {
            Result<Loaded> loaded = watcher->result();
            watcher->deleteLater();
            dialog->deleteLater();
            loading_ = false;
            if (!loaded) {
              show_error(loaded.error());  // a cancelled load says so too
              if (done) done(false);
              return;
            }
            add_recent(paths);
            if (compare) {
              if (doc_ != base) {
                if (done) done(false);
                return;
              }
              other_ = std::move(loaded->doc);
              panels_->set_comparison(other_.get(), std::move(loaded->comparison));
              panels_->setCurrentWidget(panels_->compare_page());
              if (done) done(true);
            } else {
              set_document(std::move(loaded->doc));
              start_analysis(std::move(done));
            }
          });
  watcher->setFuture(
      QtConcurrent::run([paths, cancel, progress, compare, base, step]() -> Result<Loaded> {
        Result<std::unique_ptr<Document>> doc = load_document(paths, *cancel, progress);
        if (!doc) return doc.why();
        Loaded out{std::move(*doc), nullptr};
        if (!compare) return out;
        // The comparison needs B's report (the totals side by side) and both documents'
        // summaries (the verdicts, as `c3scope compare` makes them).
        auto stopped = [](const Failure& f) {
          return f.cancelled ? cancelled(QObject::tr("Loading was cancelled.")) : f;
        };
        progress(0.93, QObject::tr("analyzing"));
        Result<analyzer::Report> report = analyze_document(*out.doc, *cancel);
        if (!report) return stopped(report.why());
        out.doc->report = std::move(*report);
        out.doc->analyzed = true;
        progress(0.96, QObject::tr("comparing"));
        Result<std::shared_ptr<const analyzer::Comparison>> comparison =
            compare_documents(*base, *out.doc, step, *cancel);
        if (!comparison) return stopped(comparison.why());
        out.comparison = std::move(*comparison);
        return out;
      }));
}

void MainWindow::recompare(std::function<void(bool)> done) {
  if (!doc_ || !other_) {
    if (done) done(false);
    return;
  }
  if (compare_cancel_) *compare_cancel_ = true;
  if (const Result<void> pattern = check_step_pattern(panels_->compare_step()); !pattern) {
    // The verdicts on screen were made with another pattern: they go.
    panels_->set_comparison(other_.get(), nullptr);
    const QString why = tr("The comparison's step pattern is not valid: %1").arg(pattern.error());
    status_->setText(why);
    show_error(why);
    if (done) done(false);
    return;
  }
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  compare_cancel_ = cancel;
  std::shared_ptr<Document> a = doc_, b = other_;
  const std::string step = panels_->compare_step().toStdString();
  status_->setText(tr("comparing..."));
  using Compared = Result<std::shared_ptr<const analyzer::Comparison>>;
  auto* watcher = new QFutureWatcher<Compared>(this);
  connect(watcher, &QFutureWatcher<Compared>::finished, this,
          [this, watcher, a, b, cancel, done = std::move(done)] {
            Compared r = watcher->result();
            watcher->deleteLater();
            // A newer comparison or document makes this one moot.
            if (*cancel || doc_ != a || other_ != b) {
              if (done) done(false);
              return;
            }
            if (!r) {
              panels_->set_comparison(b.get(), nullptr);
              status_->setText(tr("The comparison failed: %1").arg(r.error()));
              show_error(tr("The comparison failed: %1").arg(r.error()));
              if (done) done(false);
              return;
            }
            status_->setText(QString::fromStdString((*r)->headline()));
            panels_->set_comparison(b.get(), std::move(*r));
            if (done) done(true);
          });
  watcher->setFuture(QtConcurrent::run(
      [a, b, step, cancel]() -> Compared { return compare_documents(*a, *b, step, *cancel); }));
}

void MainWindow::start_analysis(std::function<void(bool)> done) {
  if (analysis_cancel_) *analysis_cancel_ = true;
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  analysis_cancel_ = cancel;
  std::shared_ptr<Document> doc = doc_;
  busy_->setText(tr("analyzing %1 activities...").arg(doc->trace.activities.size()));
  busy_->show();
  // The report is shared, not copied, out of the future, with each step's critical path over
  // the timeline.
  struct Analysis {
    analyzer::Report report;
    std::vector<analyzer::PathSegment> path;
    std::vector<size_t> path_step;
  };
  using Analyzed = Result<std::shared_ptr<Analysis>>;
  auto* watcher = new QFutureWatcher<Analyzed>(this);
  connect(watcher, &QFutureWatcher<Analyzed>::finished, this,
          [this, watcher, doc, cancel, done = std::move(done)] {
            Analyzed report = watcher->result();
            watcher->deleteLater();
            // A newer document (or a closed window) makes this result moot.
            if (*cancel || doc_ != doc) {
              if (done) done(false);
              return;
            }
            if (!report) {
              if (!report.why().cancelled) {
                busy_->hide();
                status_->setText(tr("The analysis failed: %1").arg(report.error()));
                show_error(tr("The analysis failed: %1").arg(report.error()));
              }
              if (done) done(false);
              return;
            }
            busy_->hide();
            doc->report = std::move((*report)->report);
            doc->path = std::move((*report)->path);
            doc->path_step = std::move((*report)->path_step);
            doc->analyzed = true;
            panels_->set_document(doc.get());
            update_sequences();
            on_filter_changed();  // the sequence list is new
            view_->update_path();
            view_->viewport()->update();
            if (view_->selected_row() >= 0)
              on_item_selected(view_->selected_row(), view_->selected_item());
            const analyzer::Breakdown& b = doc->report.overall.b;
            status_->setText(
                tr("%1 in %2: overlap %3, exposed communication %4")
                    .arg(count(static_cast<int64_t>(doc->trace.activities.size()), "activity",
                               "activities"),
                         count(static_cast<int64_t>(doc->trace.processes.size()), "process",
                               "processes"))
                    .arg(b.comm() > 0 ? format_pct(b.overlap_pct) : tr("- (no communication)"),
                         format_duration(static_cast<double>(b.exposed_comm))));
            if (done) done(true);
          });
  watcher->setFuture(QtConcurrent::run([doc, cancel, what_ifs = doc->what_ifs]() -> Analyzed {
    Result<analyzer::Report> report = analyze_document(*doc, *cancel, what_ifs);
    if (!report) return report.why();
    auto out = std::make_shared<Analysis>();
    out->report = std::move(*report);
    try {
      out->path = analyzer::route_segments(doc->trace, out->report.paths, &out->path_step);
    } catch (const std::exception&) {
      out->path.clear();  // the overlay is left out; the report stands
      out->path_step.clear();
    }
    if (*cancel) return cancelled(QStringLiteral("cancelled"));
    // The next open of the same files reads this snapshot instead of decoding SQLite again.
    save_snapshot(*doc);
    return out;
  }));
}

Result<bool> MainWindow::replay_what_ifs(const QStringList& what_ifs,
                                         std::function<void(bool)> done) {
  if (!doc_) return failed(tr("Open a trace first."));
  if (what_ifs.size() > 16)
    return failed(tr("At most 16 what-ifs (%1 given).").arg(what_ifs.size()));
  std::vector<analyzer::WhatIf> parsed;
  try {
    for (const QString& w : what_ifs) parsed.push_back(analyzer::parse_what_if(w.toStdString()));
  } catch (const std::exception& e) {
    return failed(QString::fromStdString(e.what()));
  }
  doc_->what_ifs = std::move(parsed);
  start_analysis(std::move(done));
  return true;
}

void MainWindow::set_document(std::shared_ptr<Document> doc) {
  if (analysis_cancel_) *analysis_cancel_ = true;
  view_->set_document(nullptr);
  details_->set_document(nullptr);
  panels_->set_document(nullptr);
  rows_model_.set(nullptr);
  if (compare_cancel_) *compare_cancel_ = true;
  other_.reset();
  doc_ = std::move(doc);
  setWindowTitle(QString("%1 - c3scope").arg(doc_->title()));
  // Streams for the filter (one pass; activities of a device come in runs of few streams).
  {
    const QSignalBlocker block(stream_box_);
    stream_box_->clear();
    stream_box_->addItem(tr("all streams"), -1);
    std::vector<int32_t> streams;
    int32_t last = INT32_MIN;
    for (const int32_t s : doc_->trace.activities.stream) {
      if (s == last) continue;
      last = s;
      if (std::find(streams.begin(), streams.end(), s) == streams.end()) streams.push_back(s);
    }
    std::sort(streams.begin(), streams.end());
    for (const int32_t s : streams) stream_box_->addItem(tr("stream %1").arg(s), s);
  }
  if (queue_action_->isChecked()) doc_->timeline->show_queues(true);
  view_->set_document(doc_.get());
  details_->set_document(doc_.get());
  panels_->set_document(doc_.get());
  rows_model_.set(doc_->timeline.get());
  update_sequences();
  on_filter_changed();
  status_->setText(
      tr("%1 in %2")
          .arg(count(static_cast<int64_t>(doc_->trace.activities.size()), "activity", "activities"),
               count(static_cast<int64_t>(doc_->trace.processes.size()), "process", "processes")));
}

Result<std::optional<size_t>> MainWindow::apply_filter(const QString& regex, int cls, int stream,
                                                       int sequence) {
  if (!doc_) return std::optional<size_t>(0);
  Timeline& tl = *doc_->timeline;
  const std::vector<analyzer::KernelSequence>& sequences = doc_->report.sequences;
  if (sequence >= static_cast<int>(sequences.size())) sequence = -1;
  if (regex.isEmpty() && cls < 0 && stream < 0 && sequence < 0) {
    tl.clear_filter();
    view_->relayout();
    return std::optional<size_t>();
  }
  const QRegularExpression re(regex, QRegularExpression::CaseInsensitiveOption);
  if (!re.isValid()) return failed(tr("not a valid regular expression"));
  const analyzer::Trace& t = doc_->trace;
  // Names are interned: match each distinct name once.
  std::vector<uint8_t> name_ok(t.names.size(), 1);
  if (!regex.isEmpty()) {
    for (size_t i = 0; i < t.names.size(); ++i) {
      name_ok[i] = re.match(QString::fromStdString(t.names[i])).hasMatch() ? 1 : 0;
    }
  }
  auto text_ok = [&](const std::string& s) {
    return regex.isEmpty() || re.match(QString::fromStdString(s)).hasMatch();
  };
  if (sequence >= 0 && sequence != sequence_members_of_) {
    sequence_members_ =
        analyzer::sequence_members(t, sequences[static_cast<size_t>(sequence)].names);
    sequence_members_of_ = sequence;
  }
  const auto want = static_cast<Class>(cls);
  const size_t kept = tl.filter([&](const Row& r, uint32_t x) {
    switch (r.kind) {
      case RowKind::stream: {
        const analyzer::Activities& a = t.activities;
        if (stream >= 0 && a.stream[x] != stream) return false;
        if (cls >= 0 && a.cls[x] != want) return false;
        if (sequence >= 0 && (x >= sequence_members_.size() || sequence_members_[x] == 0))
          return false;
        return a.name[x] >= 0 ? name_ok[static_cast<size_t>(a.name[x])] != 0 : regex.isEmpty();
      }
      case RowKind::collectives:
        if (stream >= 0 || sequence >= 0 || (cls >= 0 && want != Class::communication))
          return false;
        return text_ok(t.collectives[x].op);
      case RowKind::nvtx:
        if (stream >= 0 || cls >= 0 || sequence >= 0) return false;
        return text_ok(t.ranges[x].name);
      case RowKind::group:
      case RowKind::overlap:
      case RowKind::queue:
        break;  // never asked: Timeline::filter keeps all their items
    }
    return true;
  });
  view_->relayout();
  return std::optional<size_t>(kept);
}

void MainWindow::on_filter_changed() {
  const int cls = class_box_->currentIndex() - 1;
  const int stream = stream_box_->currentData().isValid() ? stream_box_->currentData().toInt() : -1;
  const int sequence =
      sequence_box_->currentData().isValid() ? sequence_box_->currentData().toInt() : -1;
  const Result<std::optional<size_t>> kept = apply_filter(search_->text(), cls, stream, sequence);
  QPalette pal = search_->palette();
  if (!kept) {
    match_label_->setText(kept.error());
    pal.setColor(QPalette::Text, Qt::red);
  } else if (!kept->has_value()) {
    match_label_->clear();
    pal = QApplication::palette(search_);
  } else {
    match_label_->setText(tr("%1 matches").arg(**kept));
    pal = QApplication::palette(search_);
  }
  search_->setPalette(pal);
}

void MainWindow::update_sequences() {
  const QSignalBlocker block(sequence_box_);
  // The selection stays across a new analysis of the same document (a what-if replay keeps
  // the sequences): found again by its text.
  const QString selected = sequence_box_->currentIndex() > 0 ? sequence_box_->currentText() : "";
  sequence_box_->clear();
  sequence_box_->addItem(tr("any sequence"), -1);
  sequence_members_.clear();
  sequence_members_of_ = -1;
  if (!doc_) return;
  const std::vector<analyzer::KernelSequence>& seqs = doc_->report.sequences;
  for (size_t k = 0; k < seqs.size(); ++k) {
    sequence_box_->addItem(SequencesModel::label(seqs[k]), static_cast<int>(k));
    // Kernel names come from the trace: escaped, in a tooltip that is rich text either way.
    sequence_box_->setItemData(
        sequence_box_->count() - 1,
        QString("<p>%1</p>").arg(SequencesModel::label(seqs[k]).toHtmlEscaped()), Qt::ToolTipRole);
  }
  if (!selected.isEmpty())
    sequence_box_->setCurrentIndex(std::max(0, sequence_box_->findText(selected)));
}

bool MainWindow::select_sequence(int index) {
  const int at = sequence_box_->findData(index);
  if (at < 0) return false;
  sequence_box_->setCurrentIndex(at);  // on_filter_changed applies it
  return true;
}

void MainWindow::on_item_selected(int row, qint64 item) {
  view_->set_links(details_->show_item(row, item));
}

void MainWindow::select_collective(size_t c) {
  if (!doc_) return;
  const auto [row, item] = doc_->timeline->find_collective(c);
  if (row >= 0) view_->select(row, item, true);
}

void MainWindow::show_error(const QString& message) {
  last_error_ = message;
  if (quiet_errors_) {
    // One line, whatever the message quotes (a file name with a newline in it).
    fprintf(stderr, "c3scope-gui: %s\n",
            QString(message).replace('\n', "\\n").toLocal8Bit().constData());
    return;
  }
  QMessageBox::warning(this, tr("c3scope"), message);
}

void MainWindow::closeEvent(QCloseEvent* e) {
  QSettings s;
  s.setValue("window/geometry", saveGeometry());
  s.setValue("window/state", saveState());
  if (cancel_) *cancel_ = true;
  QMainWindow::closeEvent(e);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  QStringList paths;
  for (const QUrl& u : e->mimeData()->urls()) {
    if (u.isLocalFile()) paths << u.toLocalFile();
  }
  if (!paths.isEmpty()) {
    e->acceptProposedAction();
    open(paths);
  }
}

}  // namespace c3::gui
