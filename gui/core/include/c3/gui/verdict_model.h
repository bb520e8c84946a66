// The Compare tab's verdicts: one comparison (analyzer::Comparison, the same call and numbers as
// `c3scope compare`), one row per metric, worst first, and its headline with the explained step
// time.
#pragma once

#include <QString>
#include <memory>

#include "c3/analyzer/compare/compare.h"
#include "c3/gui/models.h"

namespace c3::gui {

// One row per compared metric, in the comparison's order (regressions, inconclusive, unchanged
// by how close they come to their threshold, improvements). Regression rows are drawn red,
// improvements green and inconclusive ones amber; the reason is the last column and the verdict's
// tooltip.
class VerdictModel : public TableModel {
  Q_OBJECT
 public:
  enum Column {
    kVerdict,
    kMetric,
    kBaseline,
    kCandidate,
    kChange,
    kInterval,
    kPAdjusted,
    kThreshold,
    kSamples,
    kWhy
  };
  explicit VerdictModel(QObject* parent = nullptr);
  // nullptr: no comparison (no rows).
  void set(std::shared_ptr<const analyzer::Comparison> c);
  const analyzer::Comparison* comparison() const { return c_.get(); }
  int rowCount(const QModelIndex& parent = {}) const override;

 protected:
  Cell cell(int row, int column) const override;
  QVariant extra(int row, int role) const override;

 private:
  std::shared_ptr<const analyzer::Comparison> c_;
};

// Rich text for the top of the Compare tab: the verdict and its headline, the runs' sizes, and the
// median step time's change split into compute, exposed communication, exposed memcpy, idle and
// other (the parts add up to the whole), then what only one side has.
QString comparison_summary(const analyzer::Comparison& c);
// Plain text for its tooltip: the comparison's notes (how steps were found, ...) and the kernels,
// collectives and cases only one side has (the first 20 of each).
QString comparison_notes(const analyzer::Comparison& c);

}  // namespace c3::gui
