// The analysis panels beside the timeline: summary (headline numbers, per-rank breakdown bars,
// skew/straggler table), collectives, interference and contention, microbenchmark results, and
// the comparison of two traces.
#pragma once

#include <QTabWidget>

#include "c3/gui/document.h"
#include "c3/gui/models.h"
#include "c3/gui/verdict_model.h"

class QCheckBox;
class QLabel;
class QLineEdit;
class QTableView;
class QChartView;
class QSortFilterProxyModel;

namespace c3::gui {

class BenchCharts;

class AnalysisPanels : public QTabWidget {
  Q_OBJECT
 public:
  explicit AnalysisPanels(QWidget* parent = nullptr);
  void set_document(const Document* doc);
  // Compare: the verdicts of `c` (the open document as A, the baseline; `other` as B, the
  // candidate; nullptr: none, e.g. after a failed comparison) and the two documents' totals side
  // by side (`other` nullptr hides the comparison). It stays when set_document is called again
  // with the same document.
  void set_comparison(const Document* other,
                      std::shared_ptr<const analyzer::Comparison> c = nullptr);

  QTableView* collectives_view() const { return collectives_view_; }
  QWidget* summary_page() const { return summary_page_; }
  QWidget* collectives_page() const { return collectives_page_; }
  QWidget* interference_page() const { return interference_page_; }
  QString headline_text() const;  // the summary's headline, as plain text (for tests)
  QWidget* bench_page() const { return bench_page_; }
  QWidget* why_page() const { return why_page_; }
  const IdleCausesModel& idle_causes() const { return idle_causes_; }
  const CriticalPathModel& paths() const { return paths_; }
  const SequencesModel& sequences() const { return sequences_; }
  QTableView* sequences_view() const { return sequences_view_; }
  QString why_text() const;  // the Why tab's sentence (for tests)
  // The what-if entry ("a; b"), as typed.
  QString what_ifs_text() const;
  void set_what_ifs_text(const QString& text);
  QWidget* compare_page() const { return compare_page_; }
  // The comparison's step pattern (a regular expression over NVTX / annotation names; empty:
  // ProfilerStep#N), as `c3scope compare --step`.
  QString compare_step() const;
  void set_compare_step(const QString& pattern);
  const VerdictModel& verdicts() const { return verdicts_; }
  // The comparison shown (nullptr: none).
  std::shared_ptr<const analyzer::Comparison> comparison() const { return comparison_; }

 signals:
  // Double-click in the collectives table: show that activity in the timeline.
  void activityRequested(qulonglong activity);
  void compareRequested();
  // The Why tab's Replay: analyze again with these what-ifs (analyze --what-if's grammar).
  void whatIfRequested(const QStringList& what_ifs);
  // Double-click in the Why tab's sequences: select Report::sequences[index] in the search.
  void sequenceRequested(int index);
  // The step pattern was edited while a comparison is shown: compare again.
  void compareStepChanged();

 private:
  void update_summary();
  void update_bars();
  void update_why();

  const Document* doc_ = nullptr;
  const Document* other_ = nullptr;
  SummaryModel summary_;
  SkewModel skew_;
  CollectivesModel collectives_;
  InterferenceModel interference_;
  ContentionModel contention_;
  IdleCausesModel idle_causes_;
  CriticalPathModel paths_;
  SequencesModel sequences_;
  BenchModel bench_;
  CompareModel compare_;
  VerdictModel verdicts_;
  std::shared_ptr<const analyzer::Comparison> comparison_;  // what verdicts_ shows
  QLabel* headline_ = nullptr;
  QChartView* bars_ = nullptr;
  QTableView* collectives_view_ = nullptr;
  QLabel* compare_label_ = nullptr;
  QLabel* verdict_label_ = nullptr;
  QLineEdit* step_edit_ = nullptr;
  BenchCharts* charts_ = nullptr;
  QWidget* summary_page_ = nullptr;
  QWidget* collectives_page_ = nullptr;
  QWidget* interference_page_ = nullptr;
  QCheckBox* show_all_interference_ = nullptr;
  QWidget* bench_page_ = nullptr;
  QWidget* compare_page_ = nullptr;
  QWidget* why_page_ = nullptr;
  QLabel* why_label_ = nullptr;
  QLineEdit* what_if_edit_ = nullptr;
  QTableView* sequences_view_ = nullptr;
};

// A sortable, read-only table view over a model (sorting by kSortRole).
QTableView* make_table(QAbstractItemModel* model, QWidget* parent);

}  // namespace c3::gui
