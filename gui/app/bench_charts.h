// Charts of the c3bench results a trace carries (bench_result rows, analyzer::Trace::bench):
// speedup against message size, slowdowns against the knob the sweep varied, and the
// chunk-count sweep of pipelined schedules. Each chart says whether its numbers are simulated
// (predictions of the node model) or measured on real GPUs, and by which backend. The widget
// only lays the charts out: they draw the analyzer's typed results (bench_plots.h), grouped by
// bench_grouping.h.
#pragma once

#include <QStringList>
#include <QWidget>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "c3/analyzer/open/trace.h"

class QChartView;
class QComboBox;
class QLabel;
class QTabWidget;
class QVBoxLayout;

namespace c3::gui {

class BenchCharts : public QWidget {
  Q_OBJECT
 public:
  explicit BenchCharts(QWidget* parent = nullptr);
  ~BenchCharts() override;

  // Shows the c3bench results of `trace` (copied: the trace need not outlive the widget);
  // nullptr or a trace without results shows a message instead of charts.
  void set(const c3::analyzer::Trace* trace);

  // The charts currently shown (0 when there are no results) and their titles, in tab order.
  int chart_count() const;
  QStringList chart_titles() const;
  // The knobs the slowdown chart can be drawn against (those the results vary), and the one
  // shown; set_slowdown_knob picks another by its index in slowdown_knobs().
  QStringList slowdown_knobs() const;
  int slowdown_knob() const { return knob_index_; }
  void set_slowdown_knob(int index);
  // The configurations (op pair and message size) the slowdown chart can show when several
  // remain once its knob is chosen (empty when there is one, or when it shows them side by
  // side), and the one shown.
  QStringList slowdown_cases() const;
  int slowdown_case() const { return case_index_; }
  void set_slowdown_case(int index);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void rebuild();
  void show_slowdown_chart();
  // The chart, or when there is none (nothing to draw) a page saying why: `text`.
  QWidget* chart_or_text(QChartView* chart, const QString& text) const;

  std::vector<c3::analyzer::BenchResult> results_;
  std::vector<int> knobs_;  // slowdown_knobs() as internal knob ids
  int knob_index_ = 0;
  std::vector<std::pair<std::string, int64_t>> slow_cases_;  // (op pair, bytes or 0)
  int case_index_ = 0;

  QLabel* summary_ = nullptr;
  QLabel* empty_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QVBoxLayout* slowdown_layout_ = nullptr;
  QComboBox* knob_box_ = nullptr;
  QLabel* case_label_ = nullptr;
  QComboBox* case_box_ = nullptr;
  QChartView* speedup_view_ = nullptr;
  QChartView* slowdown_view_ = nullptr;
  QChartView* chunk_view_ = nullptr;
  bool rebuilding_ = false;
};

}  // namespace c3::gui
