#include "panels.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTextDocument>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>

#include "bench_charts.h"
#include "c3/gui/format.h"
#include "theme.h"

namespace c3::gui {

using analyzer::Class;

QTableView* make_table(QAbstractItemModel* model, QWidget* parent) {
  auto* proxy = new QSortFilterProxyModel(parent);
  proxy->setSourceModel(model);
  proxy->setSortRole(kSortRole);
  auto* view = new QTableView(parent);
  view->setModel(proxy);
  view->setSortingEnabled(true);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view->setAlternatingRowColors(true);
  view->verticalHeader()->setVisible(false);
  view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
  view->horizontalHeader()->setStretchLastSection(true);
  view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  view->sortByColumn(-1, Qt::AscendingOrder);
  // Columns fit their contents (Qt samples the rows in view), capped so one long kernel name
  // does not push the numbers out of sight.
  QObject::connect(model, &QAbstractItemModel::modelReset, view, [view] {
    view->resizeColumnsToContents();
    for (int c = 0; c < view->model()->columnCount(); ++c) {
      view->setColumnWidth(c, std::min(view->columnWidth(c), 360));
    }
  });
  return view;
}

namespace {

QLabel* heading(const QString& text, QWidget* parent) {
  auto* l = new QLabel(QString("<b>%1</b>").arg(text), parent);
  return l;
}

// A pane of a splitter: headed tables stacked in a column without margins.
struct Pane {
  QWidget* widget;
  QVBoxLayout* column;

  explicit Pane(QWidget* parent) : widget(new QWidget(parent)), column(new QVBoxLayout(widget)) {
    column->setContentsMargins(0, 0, 0, 0);
  }
  // A heading and, below it, a table of `model`.
  QTableView* add_table(const QString& title, QAbstractItemModel* model) const {
    column->addWidget(heading(title, widget));
    QTableView* table = make_table(model, widget);
    column->addWidget(table);
    return table;
  }
};

// `first` and `second` in `split`, sharing its room `first_stretch`:`second_stretch`.
// A table's height for its header and `rows` rows.
int min_table_height(const QTableView* table, int rows) {
  return table->horizontalHeader()->sizeHint().height() +
         rows * table->verticalHeader()->defaultSectionSize() + 2 * table->frameWidth();
}

void fill_split(QSplitter* split, QWidget* first, QWidget* second, int first_stretch,
                int second_stretch) {
  split->addWidget(first);
  split->addWidget(second);
  split->setStretchFactor(0, first_stretch);
  split->setStretchFactor(1, second_stretch);
}

}  // namespace

AnalysisPanels::AnalysisPanels(QWidget* parent) : QTabWidget(parent) {
  setDocumentMode(true);
  // Summary: headline, per-rank bars, table, skew.
  summary_page_ = new QWidget(this);
  {
    auto* lay = new QVBoxLayout(summary_page_);
    headline_ = new QLabel(summary_page_);
    headline_->setTextFormat(Qt::RichText);
    headline_->setWordWrap(true);
    lay->addWidget(headline_);
    auto* split = new QSplitter(Qt::Horizontal, summary_page_);
    bars_ = new QChartView(split);
    bars_->setRenderHint(QPainter::Antialiasing);
    bars_->setMinimumHeight(160);
    const Pane right(split);
    right.add_table(tr("Per rank"), &summary_);
    right.add_table(tr("Stragglers and skew (matched collectives)"), &skew_);
    fill_split(split, bars_, right.widget, 2, 3);
    split->setSizes({500, 900});
    lay->addWidget(split, 1);
  }
  addTab(summary_page_, tr("Summary"));

  collectives_page_ = new QWidget(this);
  {
    auto* lay = new QVBoxLayout(collectives_page_);
    lay->addWidget(
        new QLabel(tr("Every communication kernel; double-click a row to show it in the timeline."),
                   collectives_page_));
    collectives_view_ = make_table(&collectives_, collectives_page_);
    lay->addWidget(collectives_view_, 1);
    connect(collectives_view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
      const QVariant v = i.data(kActivityRole);
      if (v.isValid()) emit activityRequested(v.toULongLong());
    });
  }
  addTab(collectives_page_, tr("Collectives"));

  interference_page_ = new QWidget(this);
  {
    auto* lay = new QVBoxLayout(interference_page_);
    auto* split = new QSplitter(Qt::Vertical, interference_page_);
    const Pane top(split);
    QTableView* itable = top.add_table(
        tr("Interference: durations alone vs overlapped with the other class, per signature"),
        &interference_);
    // Cut long kernel names in the middle: the launch shape at the end tells rows apart.
    itable->setTextElideMode(Qt::ElideMiddle);
    // The names take the room the numbers leave.
    itable->horizontalHeader()->setStretchLastSection(false);
    itable->horizontalHeader()->setSectionResizeMode(InterferenceModel::kOperation,
                                                     QHeaderView::Stretch);
    // Rows without a verdict (too few samples, point-to-point waits) are counted, not listed.
    show_all_interference_ = new QCheckBox(top.widget);
    connect(show_all_interference_, &QCheckBox::toggled, this,
            [this](bool on) { interference_.set_show_all(on); });
    top.column->addWidget(show_all_interference_);
    const Pane bottom(split);
    bottom.add_table(tr("Contention: SM oversubscription, copy-engine sharing, launch queueing"),
                     &contention_);
    split->addWidget(top.widget);
    split->addWidget(bottom.widget);
    lay->addWidget(split);
  }
  addTab(interference_page_, tr("Interference"));

  why_page_ = new QWidget(this);
  {
    auto* lay = new QVBoxLayout(why_page_);
    auto* row = new QHBoxLayout();
    why_label_ = new QLabel(why_page_);
    why_label_->setWordWrap(true);
    row->addWidget(why_label_, 1);
    row->addWidget(new QLabel(tr("what-if:"), why_page_));
    what_if_edit_ = new QLineEdit(why_page_);
    what_if_edit_->setPlaceholderText(tr("nccl:AllReduce=-50%; rank:1=on-time; comm=hidden"));
    what_if_edit_->setToolTip(
        tr("Changes replayed on each step's critical path, separated by ';' (c3scope analyze "
           "--what-if): PART=-X% (compute, comm, memory, other_gpu, host, idle), comm=hidden, "
           "kernel:REGEX=-X%, nccl:OP=-X%, nccl:OP=NGB/s, rank:N=on-time. The recorded schedule "
           "moves along the path's dependencies; no contention is modelled."));
    what_if_edit_->setMinimumWidth(320);
    auto* replay = new QPushButton(tr("Replay"), why_page_);
    auto request = [this] {
      QStringList items;
      for (const QString& w : what_if_edit_->text().split(';', Qt::SkipEmptyParts)) {
        if (!w.trimmed().isEmpty()) items << w.trimmed();
      }
      emit whatIfRequested(items);
    };
    connect(replay, &QPushButton::clicked, this, request);
    connect(what_if_edit_, &QLineEdit::returnPressed, this, request);
    row->addWidget(what_if_edit_);
    row->addWidget(replay);
    lay->addLayout(row);
    auto* split = new QSplitter(Qt::Vertical, why_page_);
    const Pane top(split);
    QTableView* paths = top.add_table(
        tr("Critical path per step across ranks: where the step's time went (View > Critical "
           "path draws it)"),
        &paths_);
    paths->setMinimumHeight(min_table_height(paths, 3));
    auto* lower = new QSplitter(Qt::Horizontal, split);
    const Pane bottom(lower);
    QTableView* idle = bottom.add_table(
        tr("Why the GPU was idle: per rank (devices' union of streams), then per stream"),
        &idle_causes_);
    idle->setMinimumHeight(min_table_height(idle, 3));
    const Pane right(lower);
    sequences_view_ = right.add_table(
        tr("Frequent kernel sequences (double-click: select in the search)"), &sequences_);
    sequences_view_->setTextElideMode(Qt::ElideMiddle);
    connect(sequences_view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
      const QVariant v = i.data(kSequenceRole);
      if (v.isValid()) emit sequenceRequested(v.toInt());
    });
    fill_split(lower, bottom.widget, right.widget, 1, 1);
    fill_split(split, top.widget, lower, 1, 1);
    lay->addWidget(split, 1);
  }
  addTab(why_page_, tr("Why"));

  bench_page_ = new QWidget(this);
  {
    auto* lay = new QVBoxLayout(bench_page_);
    auto* split = new QSplitter(Qt::Vertical, bench_page_);
    charts_ = new BenchCharts(split);
    // The table keeps a few rows at any dock height (the tab grows the dock when chosen: see
    // MainWindow); a larger minimum here would make every tab, and so the dock, taller.
    QTableView* table = make_table(&bench_, split);
    table->setMinimumHeight(min_table_height(table, 3));
    fill_split(split, charts_, table, 3, 2);
    lay->addWidget(split);
  }
  addTab(bench_page_, tr("Microbenchmarks"));

  compare_page_ = new QWidget(this);
  {
    auto* lay = new QVBoxLayout(compare_page_);
    auto* row = new QHBoxLayout();
    compare_label_ =
        new QLabel(tr("Compare the open trace with another one (B - A)."), compare_page_);
    auto* button = new QPushButton(tr("Compare with..."), compare_page_);
    connect(button, &QPushButton::clicked, this, &AnalysisPanels::compareRequested);
    step_edit_ = new QLineEdit(compare_page_);
    step_edit_->setPlaceholderText(tr("ProfilerStep#N"));
    step_edit_->setToolTip(
        tr("Steps, the samples the statistics compare: NVTX or annotation ranges whose name "
           "matches this regular expression (c3scope compare --step)"));
    step_edit_->setMaximumWidth(220);
    connect(step_edit_, &QLineEdit::editingFinished, this, [this] {
      if (other_ != nullptr && step_edit_->isModified()) {
        step_edit_->setModified(false);
        emit compareStepChanged();
      }
    });
    row->addWidget(compare_label_, 1);
    row->addWidget(new QLabel(tr("steps:"), compare_page_));
    row->addWidget(step_edit_);
    row->addWidget(button);
    lay->addLayout(row);
    verdict_label_ = new QLabel(compare_page_);
    verdict_label_->setTextFormat(Qt::RichText);
    verdict_label_->setWordWrap(true);
    verdict_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    lay->addWidget(verdict_label_);
    auto* split = new QSplitter(Qt::Vertical, compare_page_);
    const Pane top(split);
    QTableView* verdicts =
        top.add_table(tr("Verdicts per metric, worst first (as c3scope compare A B)"), &verdicts_);
    verdicts->setMinimumHeight(min_table_height(verdicts, 3));
    const Pane bottom(split);
    QTableView* totals = bottom.add_table(tr("Whole-run totals side by side (B - A)"), &compare_);
    totals->setMinimumHeight(min_table_height(totals, 3));
    fill_split(split, top.widget, bottom.widget, 3, 2);
    split->setSizes({600, 400});
    lay->addWidget(split, 1);
  }
  addTab(compare_page_, tr("Compare"));
}

void AnalysisPanels::set_document(const Document* doc) {
  // The same document again (its analysis ended): a comparison made meanwhile stays.
  const bool same = doc != nullptr && doc == doc_;
  doc_ = doc;
  // Until the background analysis ends, the tables stay empty and the headline says so.
  const Document* ready = doc != nullptr && doc->analyzed ? doc : nullptr;
  summary_.set(ready);
  skew_.set(ready);
  collectives_.set(ready);
  interference_.set(ready);
  show_all_interference_->setVisible(interference_.without_verdict() > 0);
  show_all_interference_->setText(
      tr("Also show the %n row(s) without a verdict (too few samples alone or overlapped, or "
         "point-to-point waits)",
         nullptr, interference_.without_verdict()));
  contention_.set(ready);
  idle_causes_.set(ready);
  paths_.set(ready);
  sequences_.set(ready);
  update_why();
  bench_.set(doc);
  charts_->set(doc != nullptr ? &doc->trace : nullptr);
  if (same) {
    set_comparison(other_, comparison_);
  } else {
    set_comparison(nullptr);
  }
  update_summary();
  update_bars();
}

void AnalysisPanels::set_comparison(const Document* other,
                                    std::shared_ptr<const analyzer::Comparison> c) {
  other_ = other;
  const bool shown = doc_ != nullptr && other_ != nullptr;
  comparison_ = shown ? std::move(c) : nullptr;
  // The totals side by side need both reports.
  compare_.set(doc_ != nullptr && doc_->analyzed ? doc_ : nullptr, other_);
  verdicts_.set(comparison_);
  if (shown) {
    compare_label_->setText(tr("A (baseline): %1    B (candidate): %2    (difference: B - A)")
                                .arg(doc_->title(), other_->title()));
  } else {
    compare_label_->setText(tr("Compare the open trace with another one (B - A)."));
  }
  const analyzer::Comparison* v = verdicts_.comparison();
  verdict_label_->setText(v != nullptr ? comparison_summary(*v) : QString());
  verdict_label_->setToolTip(v != nullptr ? comparison_notes(*v) : QString());
  verdict_label_->setVisible(v != nullptr);
}

QString AnalysisPanels::compare_step() const {
  return step_edit_->text().trimmed();
}

void AnalysisPanels::set_compare_step(const QString& pattern) {
  step_edit_->setText(pattern);
  step_edit_->setModified(false);
}

QString AnalysisPanels::headline_text() const {
  QTextDocument d;
  d.setHtml(headline_->text());
  return d.toPlainText();
}

void AnalysisPanels::update_summary() {
  if (doc_ == nullptr) {
    headline_->setText(tr("No trace open."));
    return;
  }
  if (!doc_->analyzed) {
    headline_->setText(tr("Analyzing %1 of %2 in the background...")
                           .arg(gui::count(static_cast<int64_t>(doc_->trace.activities.size()),
                                           "GPU activity", "GPU activities"),
                                gui::count(static_cast<int64_t>(doc_->trace.processes.size()),
                                           "process", "processes")));
    return;
  }
  const analyzer::Breakdown& b = doc_->report.overall.b;
  const bool dark = is_dark(palette());
  const QString hid = hidden_color(dark).name();
  const QString exp = exposed_color(dark).name();
  const int64_t gpu_work = doc_->report.kernels + doc_->report.memcpys + doc_->report.memsets;
  QString s;
  if (gpu_work == 0) {
    // A CPU-only profile: say so rather than a row of zeros.
    s =
        tr("<span style='font-size:large'><b>No GPU activity</b> in this trace</span><br>No "
           "kernels, copies or sets were recorded (a CPU-only profile?): there is nothing to "
           "overlap. The timeline shows its %n range(s).",
           nullptr, static_cast<int>(doc_->trace.ranges.size()));
    headline_->setText(s);
    return;
  }
  if (b.comm() == 0) {
    s =
        tr("<span style='font-size:large'><b>No communication</b> on the GPUs: nothing to hide "
           "under compute</span>");
  } else {
    s = tr("<span style='font-size:large'><b>%1</b> of communication hidden under compute"
           " &nbsp; <span style='color:%2'>■</span> hidden %3 &nbsp; <span "
           "style='color:%4'>■</span> exposed %5</span>")
            .arg(format_pct(b.overlap_pct), hid, format_duration(static_cast<double>(b.overlap)),
                 exp, format_duration(static_cast<double>(b.exposed_comm)));
  }
  s += tr("<br>span %1 (summed over %2) &nbsp; idle %3 &nbsp; compute %4 &nbsp; exposed "
          "memcpy %5"
          " &nbsp; %6 kernels, %7 copies, %8 sets")
           .arg(format_duration(static_cast<double>(b.span)))
           .arg(gui::count(static_cast<int64_t>(doc_->trace.processes.size()), "process",
                           "processes"))
           .arg(format_duration(static_cast<double>(b.idle)),
                format_duration(static_cast<double>(b.compute())),
                format_duration(static_cast<double>(b.exposed_memcpy)))
           .arg(doc_->report.kernels)
           .arg(doc_->report.memcpys)
           .arg(doc_->report.memsets);
  if (is_simulated(doc_->trace)) {
    // Issue 24: a simulated trace said so only in its GPU names and the Microbenchmarks tab.
    s +=
        tr("<br><b>Simulated</b>: recorded on c3bench's simulated node (GPUs named "
           "\"Simulated ...\"); its times are predictions of the node model, not measurements");
  }
  if (doc_->trace.skipped > 0) {
    s += tr("<br><span style='color:%1'>%2 rows could not be used (first: %3)</span>")
             .arg(exp)
             .arg(doc_->trace.skipped)
             .arg(QString::fromStdString(doc_->trace.first_skipped).toHtmlEscaped());
  }
  headline_->setText(s);
}

void AnalysisPanels::update_bars() {
  auto* chart = new QChart();
  const bool dark = is_dark(palette());
  chart->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
  chart->setTitle(tr("Time per rank: where the span went"));
  chart->setAnimationOptions(QChart::NoAnimation);
  const bool gpu_work =
      doc_ != nullptr && doc_->report.kernels + doc_->report.memcpys + doc_->report.memsets > 0;
  if (doc_ != nullptr && doc_->analyzed && !gpu_work) {
    chart->setTitle(tr("No GPU activity: no time to break down"));
  } else if (doc_ != nullptr && doc_->analyzed && !doc_->report.processes.empty()) {
    // The axis unit follows the longest span (a 0.4 ms trace read "0 0 0 1 1 1" in ms).
    double longest = 0;
    for (const auto& p : doc_->report.processes)
      longest = std::max(longest, static_cast<double>(p.b.span));
    double unit = 1e6;
    QString unit_name = tr("ms");
    if (longest >= 10e9) {
      unit = 1e9;
      unit_name = tr("s");
    } else if (longest < 1e6) {
      unit = 1e3;
      unit_name = tr("µs");
    }
    if (longest < 1e3) {
      unit = 1;
      unit_name = tr("ns");
    }
    auto* series = new QHorizontalStackedBarSeries();
    auto* compute = new QBarSet(tr("compute"));
    auto* exposed = new QBarSet(tr("exposed comm"));
    auto* copies = new QBarSet(tr("exposed memcpy"));
    auto* other = new QBarSet(tr("other"));
    auto* idle = new QBarSet(tr("idle"));
    compute->setColor(class_color(Class::compute, dark));
    exposed->setColor(exposed_color(dark));
    copies->setColor(class_color(Class::memory, dark));
    other->setColor(class_color(Class::other, dark));
    idle->setColor(dark ? QColor(70, 70, 70) : QColor(220, 220, 220));
    QStringList cats;
    double most = 0;
    // Bars in `unit`; ranks top to bottom in rank order (as numbers: 2 before 10), so the
    // categories go the other way.
    std::vector<const analyzer::ScopeReport*> by_rank;
    for (const int p : rank_order(doc_->trace)) {
      for (const auto& s : doc_->report.processes)
        if (s.process == p) by_rank.push_back(&s);
    }
    for (auto it = by_rank.rbegin(); it != by_rank.rend(); ++it) {
      const analyzer::ScopeReport* scope = *it;
      const analyzer::Breakdown& b = scope->b;
      cats << QString::fromStdString(
          doc_->trace.processes[static_cast<size_t>(scope->process)].label());
      *compute << static_cast<double>(b.compute()) / unit;
      *exposed << static_cast<double>(b.exposed_comm) / unit;
      *copies << static_cast<double>(b.exposed_memcpy) / unit;
      *other << static_cast<double>(b.exposed_other) / unit;
      *idle << static_cast<double>(b.idle) / unit;
      most = std::max(most, static_cast<double>(b.span) / unit);
    }
    series->append(compute);
    series->append(exposed);
    series->append(copies);
    series->append(other);
    series->append(idle);
    chart->addSeries(series);
    auto* y = new QBarCategoryAxis();
    y->append(cats);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(y);
    auto* x = new QValueAxis();
    x->setTitleText(unit_name);
    x->setRange(0, most > 0 ? most * 1.02 : 1);
    x->applyNiceNumbers();
    x->setLabelFormat("%g");  // 0.5 steps stay 0.5, not "0 1 1"
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(x);
    chart->legend()->setAlignment(Qt::AlignBottom);
  }
  QChart* old = bars_->chart();
  bars_->setChart(chart);
  delete old;
}

void AnalysisPanels::update_why() {
  if (doc_ == nullptr || !doc_->analyzed) {
    why_label_->setText(doc_ == nullptr ? QString() : tr("The analysis is running..."));
    return;
  }
  const analyzer::Report& r = doc_->report;
  const analyzer::IdleCauses& c = r.overall.idle;
  QString text;
  if (r.paths.empty()) {
    text = tr("No critical path: no GPU work in a step.");
  } else {
    // The median step's path, in words.
    std::vector<const analyzer::StepPath*> by_time;
    for (const analyzer::StepPath& p : r.paths) by_time.push_back(&p);
    std::sort(by_time.begin(), by_time.end(),
              [](const auto* x, const auto* y) { return x->step_ns < y->step_ns; });
    const analyzer::StepPath& m = *by_time[by_time.size() / 2];
    size_t top = 0;
    for (size_t k = 1; k < analyzer::kPathParts; ++k) {
      if (m.parts[k] > m.parts[top]) top = k;
    }
    const double share =
        m.path_ns > 0 ? 100.0 * static_cast<double>(m.parts[top]) / static_cast<double>(m.path_ns)
                      : 0;
    text =
        tr("%n step(s); the median step (%1) spends %2 of its critical path in %3", nullptr,
           static_cast<int>(r.paths.size()))
            .arg(format_duration(static_cast<double>(m.step_ns)), format_pct(share),
                 QString::fromUtf8(analyzer::path_part_name(static_cast<analyzer::PathPart>(top))));
    if (!m.late.empty()) {
      text += tr(", and goes through %n late arrival(s)", nullptr, static_cast<int>(m.late.size()));
    }
    text += '.';
  }
  if (c.idle > 0) {
    text += tr(" GPUs idle %1: host wait %2, kernel wait %3, comm wait %4, other %5.")
                .arg(format_duration(static_cast<double>(c.idle)),
                     format_duration(static_cast<double>(c.host_wait)),
                     format_duration(static_cast<double>(c.kernel_wait)),
                     r.comm_wait_known ? format_duration(static_cast<double>(c.comm_wait))
                                       : QStringLiteral("-"),
                     format_duration(static_cast<double>(c.other)));
  }
  if (!r.launch_calls) {
    text +=
        tr(" No launch calls in the trace(s) (record with --cuda-api): host wait cannot be "
           "told apart.");
  }
  why_label_->setText(text);
}

QString AnalysisPanels::why_text() const {
  return why_label_->text();
}

QString AnalysisPanels::what_ifs_text() const {
  return what_if_edit_->text();
}

void AnalysisPanels::set_what_ifs_text(const QString& text) {
  what_if_edit_->setText(text);
}

}  // namespace c3::gui
