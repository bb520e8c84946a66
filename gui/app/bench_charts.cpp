#include "bench_charts.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QTabWidget>
#include <QVBoxLayout>
#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "bench_grouping.h"
#include "bench_plots.h"

namespace c3::gui {

using analyzer::BenchResult;
using namespace bench_grouping;

BenchCharts::BenchCharts(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("bench_summary"));
  summary_->setTextFormat(Qt::PlainText);
  summary_->setWordWrap(true);
  empty_ = new QLabel(this);
  empty_->setObjectName(QStringLiteral("bench_empty"));
  empty_->setTextFormat(Qt::PlainText);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("bench_tabs"));
  layout->addWidget(summary_);
  layout->addWidget(empty_, 1);
  layout->addWidget(tabs_, 1);
  rebuild();
}

BenchCharts::~BenchCharts() = default;

void BenchCharts::set(const c3::analyzer::Trace* trace) {
  results_.clear();
  if (trace != nullptr) results_ = trace->bench;
  knob_index_ = 0;
  case_index_ = 0;
  slow_cases_.clear();
  rebuild();
}

int BenchCharts::chart_count() const {
  return (speedup_view_ != nullptr ? 1 : 0) + (slowdown_view_ != nullptr ? 1 : 0) +
         (chunk_view_ != nullptr ? 1 : 0);
}

QStringList BenchCharts::chart_titles() const {
  QStringList out;
  for (const QChartView* v : {speedup_view_, slowdown_view_, chunk_view_}) {
    if (v != nullptr) out << v->chart()->title();
  }
  return out;
}

QStringList BenchCharts::slowdown_knobs() const {
  QStringList out;
  out.reserve(static_cast<qsizetype>(knobs_.size()));
  for (int k : knobs_) out << knob_name(static_cast<Knob>(k));
  return out;
}

QStringList BenchCharts::slowdown_cases() const {
  QStringList out;
  if (slow_cases_.size() < 2) return out;
  out.reserve(static_cast<qsizetype>(slow_cases_.size()));
  for (const auto& [pair, bytes] : slow_cases_) {
    out << QString::fromStdString(pair) +
               (bytes > 0 ? QStringLiteral(" · ") + size_text(bytes) : QString());
  }
  return out;
}

namespace {

// Makes choice `index` of `count` the current one, and its combo box's (when shown) without the
// box signalling it back. False when it is out of range or already current.
bool choose(int index, size_t count, int& current, QComboBox* box) {
  if (index < 0 || index >= static_cast<int>(count) || index == current) return false;
  current = index;
  if (box != nullptr && box->currentIndex() != index) {
    const QSignalBlocker block(box);
    box->setCurrentIndex(index);
  }
  return true;
}

}  // namespace

void BenchCharts::set_slowdown_knob(int index) {
  if (choose(index, knobs_.size(), knob_index_, knob_box_)) show_slowdown_chart();
}

void BenchCharts::set_slowdown_case(int index) {
  if (choose(index, slow_cases_.size(), case_index_, case_box_)) show_slowdown_chart();
}

void BenchCharts::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange && tabs_ != nullptr && !rebuilding_) rebuild();
}

void BenchCharts::rebuild() {
  rebuilding_ = true;
  const int tab = tabs_->currentIndex();
  speedup_view_ = slowdown_view_ = chunk_view_ = nullptr;
  knob_box_ = case_box_ = nullptr;
  case_label_ = nullptr;
  slowdown_layout_ = nullptr;
  while (tabs_->count() > 0) {
    QWidget* page = tabs_->widget(0);
    tabs_->removeTab(0);
    delete page;
  }
  knobs_.clear();

  if (results_.empty()) {
    summary_->hide();
    tabs_->hide();
    empty_->setText(
        QStringLiteral("No c3bench results in these traces (record `c3scope record -- "
                       "c3bench ...` to get some)."));
    empty_->show();
    rebuilding_ = false;
    return;
  }
  empty_->hide();

  std::vector<size_t> all;
  all.reserve(results_.size());
  for (size_t i = 0; i < results_.size(); ++i) all.push_back(i);
  const auto unparsed = std::count_if(results_.begin(), results_.end(),
                                      [](const BenchResult& r) { return !r.config.known; });
  bool sim = false;
  for (const auto& r : results_) sim = sim || r.simulated;
  QString summary = QStringLiteral("%1 c3bench result%2 — %3")
                        .arg(results_.size())
                        .arg(results_.size() == 1 ? "" : "s")
                        .arg(provenance(results_, all));
  if (sim) {
    summary += QStringLiteral(
        ". Simulated numbers are predictions of the node model, not "
        "measurements");
  }
  if (unparsed > 0)
    summary += QStringLiteral(". %1 %2 not understood, left out")
                   .arg(unparsed)
                   .arg(unparsed == 1 ? QStringLiteral("label") : QStringLiteral("labels"));
  summary_->setText(summary + QStringLiteral("."));
  summary_->show();
  tabs_->show();

  // 1. Speedup against message size.
  speedup_view_ = bench_plots::speedup_chart(results_, palette());
  tabs_->addTab(chart_or_text(speedup_view_,
                              QStringLiteral("No speedups vs message size in these results (they "
                                             "need both a compute and a communication op).")),
                QStringLiteral("Speedup"));

  // 2. Slowdowns against the knob the results vary (a selector when several do).
  const std::vector<size_t> slow = slowdown_rows(results_, Knob::none);
  const std::vector<size_t> varied = slowdown_candidates(results_);  // any baseline
  for (Knob k : kConfigKnobs) {
    std::set<KnobValue> values;
    for (size_t i : varied) values.insert(knob_value(results_[i].config, k));
    if (values.size() > 1) knobs_.push_back(static_cast<int>(k));
  }
  if (knobs_.empty()) {
    std::set<int64_t> sizes;
    for (size_t i : slow) sizes.insert(results_[i].config.comm_bytes);
    knobs_.push_back(static_cast<int>(sizes.size() > 1 ? Knob::size : Knob::none));
  }
  if (knob_index_ >= static_cast<int>(knobs_.size())) knob_index_ = 0;
  auto* page = new QWidget();
  slowdown_layout_ = new QVBoxLayout(page);
  slowdown_layout_->setContentsMargins(0, 0, 0, 0);
  auto* row = new QHBoxLayout();
  if (knobs_.size() > 1) {
    row->addWidget(new QLabel(QStringLiteral("Slowdown against:"), page));
    knob_box_ = new QComboBox(page);
    knob_box_->setObjectName(QStringLiteral("bench_knob"));
    knob_box_->addItems(slowdown_knobs());
    knob_box_->setCurrentIndex(knob_index_);
    knob_box_->setToolTip(
        QStringLiteral("The knob on the x axis; the other knobs stay at their default (or most "
                       "common) setting."));
    connect(knob_box_, &QComboBox::currentIndexChanged, this,
            [this](int index) { set_slowdown_knob(index); });
    row->addWidget(knob_box_);
  }
  case_label_ = new QLabel(QStringLiteral("for:"), page);
  case_box_ = new QComboBox(page);
  case_box_->setObjectName(QStringLiteral("bench_case"));
  case_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(case_box_, &QComboBox::currentIndexChanged, this,
          [this](int index) { set_slowdown_case(index); });
  row->addWidget(case_label_);
  row->addWidget(case_box_);
  row->addStretch(1);
  slowdown_layout_->addLayout(row);
  tabs_->addTab(page, QStringLiteral("Slowdowns"));
  show_slowdown_chart();

  // 3. Chunk-count sweep.
  chunk_view_ = bench_plots::chunk_chart(results_, palette());
  tabs_->addTab(
      chart_or_text(chunk_view_, QStringLiteral("No chunk sweep in these results (record one with "
                                                "`c3bench --schedule chunks=1,2,4,8`).")),
      QStringLiteral("Chunk sweep"));
  if (tab >= 0 && tab < tabs_->count()) tabs_->setCurrentIndex(tab);
  rebuilding_ = false;
}

void BenchCharts::show_slowdown_chart() {
  if (slowdown_layout_ == nullptr || knobs_.empty()) return;
  // The page holds the selector row (a layout) and one widget: the chart or its text.
  for (int i = slowdown_layout_->count() - 1; i >= 0; --i) {
    QWidget* w = slowdown_layout_->itemAt(i)->widget();
    if (w != nullptr) {
      slowdown_layout_->removeWidget(w);
      delete w;
    }
  }
  slowdown_view_ = nullptr;

  // The configurations left once the knob is chosen; one at a time when there are several
  // (all side by side when no knob varies).
  const auto knob = static_cast<Knob>(knobs_[static_cast<size_t>(knob_index_)]);
  std::vector<size_t> rows = slowdown_rows(results_, knob);
  const auto previous = case_index_ >= 0 && case_index_ < static_cast<int>(slow_cases_.size())
                            ? std::optional(slow_cases_[static_cast<size_t>(case_index_)])
                            : std::nullopt;
  slow_cases_.clear();
  if (knob != Knob::none) {
    std::set<std::pair<std::string, int64_t>> keys;
    for (size_t i : rows)
      keys.emplace(pair_name(results_[i].config),
                   knob == Knob::size ? 0 : results_[i].config.comm_bytes);
    slow_cases_.assign(keys.begin(), keys.end());
  }
  case_index_ = 0;
  for (size_t i = 0; i < slow_cases_.size(); ++i) {
    if (previous && slow_cases_[i] == *previous) case_index_ = static_cast<int>(i);
  }
  if (slow_cases_.size() > 1) {
    const auto& key = slow_cases_[static_cast<size_t>(case_index_)];
    std::erase_if(rows, [&](size_t i) {
      const analyzer::BenchConfig& c = results_[i].config;
      return pair_name(c) != key.first || (key.second > 0 && c.comm_bytes != key.second);
    });
  }
  if (case_box_ != nullptr) {
    // Refilled only when the list changes (not from within its own signal, on a pick).
    const QSignalBlocker block(case_box_);
    const QStringList labels = slowdown_cases();
    QStringList shown;
    shown.reserve(case_box_->count());
    for (int i = 0; i < case_box_->count(); ++i) shown << case_box_->itemText(i);
    if (shown != labels) {
      case_box_->clear();
      case_box_->addItems(labels);
    }
    case_box_->setCurrentIndex(case_index_);
    case_box_->setVisible(slow_cases_.size() > 1);
    case_label_->setVisible(slow_cases_.size() > 1);
  }

  slowdown_view_ = bench_plots::slowdown_chart(results_, knob, rows, palette());
  slowdown_layout_->addWidget(
      chart_or_text(slowdown_view_,
                    QStringLiteral("No slowdowns in these results (they need the concurrent "
                                   "phase: c3bench --mode concurrent or all).")),
      1);
}

QWidget* BenchCharts::chart_or_text(QChartView* chart, const QString& text) const {
  if (chart != nullptr) return chart;
  auto* label = new QLabel(text);
  label->setTextFormat(Qt::PlainText);
  label->setAlignment(Qt::AlignCenter);
  label->setWordWrap(true);
  return label;
}

}  // namespace c3::gui
