#include "c3/gui/verdict_model.h"

#include <QColor>
#include <QStringList>
#include <algorithm>
#include <array>
#include <limits>
#include <utility>

#include "c3/gui/format.h"

namespace c3::gui {

namespace {

using analyzer::Verdict;

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

// Readable on light and dark backgrounds alike.
QColor verdict_color(Verdict v) {
  switch (v) {
    case Verdict::regression:
      return {220, 50, 47};
    case Verdict::improvement:
      return {46, 160, 67};
    case Verdict::inconclusive:
    case Verdict::not_significant:  // a change the test could not confirm: look, but not red
      return {200, 135, 0};
    case Verdict::unchanged:
      return {};
  }
  return {};
}

QString signed_duration(double ns) {
  return (ns > 0 ? QStringLiteral("+") : QString()) + format_duration(ns);
}

}  // namespace

VerdictModel::VerdictModel(QObject* parent)
    : TableModel({"verdict", "metric", "A (baseline)", "B (candidate)", "change", "95% interval",
                  "p (adjusted)", "threshold", "samples A/B", "why"},
                 parent) {}

void VerdictModel::set(std::shared_ptr<const analyzer::Comparison> c) {
  beginResetModel();
  c_ = std::move(c);
  endResetModel();
}

int VerdictModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !c_) return 0;
  return static_cast<int>(c_->metrics.size());
}

TableModel::Cell VerdictModel::cell(int row, int column) const {
  const analyzer::MetricResult& m = c_->metrics[static_cast<size_t>(row)];
  const analyzer::MetricText t = analyzer::metric_text(m);
  QString why = qs(m.d.why);
  if (!m.detail.empty()) why += QStringLiteral("; ") + qs(m.detail);
  const auto absent = -std::numeric_limits<double>::infinity();
  switch (static_cast<Column>(column)) {
    case kVerdict:
      // Sorting by the verdict restores the comparison's order (worst first).
      return label_cell(QString::fromUtf8(analyzer::verdict_label(m.d.verdict)), row, why);
    case kMetric:
      return text_cell(qs(m.id), qs(m.group) + QStringLiteral(": ") + qs(m.id));
    case kBaseline:
      return number_cell(qs(t.baseline), m.d.baseline_median);
    case kCandidate:
      return number_cell(qs(t.candidate), m.d.candidate_median);
    case kChange:
      return number_cell(
          qs(t.change), m.d.change,
          m.up_is_worse ? QStringLiteral("up is worse") : QStringLiteral("down is worse"));
    case kInterval:
      return number_cell(qs(t.interval), t.interval == "-" ? absent : m.d.lo);
    case kPAdjusted:
      return number_cell(
          qs(t.p_adjusted), m.d.tested ? m.d.p_adjusted : absent,
          m.d.tested
              ? QString("Mann-Whitney p %1, Benjamini-Hochberg adjusted").arg(m.d.p, 0, 'g', 3)
              : QStringLiteral("not tested"));
    case kThreshold:
      return number_cell(qs(t.threshold), m.d.threshold);
    case kSamples:
      return number_cell(QString("%1/%2").arg(m.n_baseline).arg(m.n_candidate),
                         static_cast<double>(std::min(m.n_baseline, m.n_candidate)));
    case kWhy:
      return text_cell(why, why);
  }
  return {};
}

QVariant VerdictModel::extra(int row, int role) const {
  if (role != Qt::ForegroundRole) return {};
  const QColor c = verdict_color(c_->metrics[static_cast<size_t>(row)].d.verdict);
  return c.isValid() ? QVariant(c) : QVariant();
}

QString comparison_summary(const analyzer::Comparison& c) {
  const QString v = qs(c.verdict());
  const Verdict kind = v == "regression"        ? Verdict::regression
                       : v == "improvement"     ? Verdict::improvement
                       : v == "inconclusive"    ? Verdict::inconclusive
                       : v == "not_significant" ? Verdict::not_significant
                                                : Verdict::unchanged;
  const QColor color = verdict_color(kind);
  QString s = QString("<b><span style=\"color:%1\">%2</span></b>")
                  .arg(color.isValid() ? color.name() : QStringLiteral("inherit"),
                       qs(c.headline()).toHtmlEscaped());
  // (The tab names the files above.)
  s += QString("<br>A: %1, %2 &nbsp; B: %3, %4")
           .arg(count(c.ranks_baseline, "rank", "ranks"), count(c.baseline_steps, "step", "steps"),
                count(c.ranks_candidate, "rank", "ranks"),
                count(c.candidate_steps, "step", "steps"));
  if (c.explained.available) {
    const analyzer::Explained& e = c.explained;
    constexpr size_t kStep = analyzer::Explained::kParts.size() - 1;
    s += QString("<br>Median step time %1 &rarr; %2 (%3): ")
             .arg(format_duration(e.baseline[kStep]), format_duration(e.candidate[kStep]),
                  signed_duration(e.delta(kStep)));
    static constexpr std::array<const char*, kStep> kNames = {"compute", "exposed communication",
                                                              "exposed memcpy", "idle", "other"};
    for (size_t i = 0; i < kStep; ++i) {
      s += QString("%1%2 %3").arg(i > 0 ? ", " : "", kNames[i], signed_duration(e.delta(i)));
    }
  } else if (c.has_baseline && c.baseline_steps == 0 && c.candidate_steps == 0) {
    s += QStringLiteral(
        "<br>No steps in A or B (see the steps field): whole-run totals, compared by threshold "
        "only.");
  } else if (c.has_baseline && (c.baseline_steps == 0 || c.candidate_steps == 0)) {
    // Issue 24: "No steps in B" stood next to "B: 20 steps"; only a side without steps is named.
    s += QString("<br>No steps in %1 (see the steps field): its step metrics cannot be decided.")
             .arg(c.baseline_steps == 0 ? "A" : "B");
  }
  if (!c.added.empty() || !c.removed.empty())
    s += QString("<br>Only in B: %1; only in A: %2 (kernels, collectives, cases)")
             .arg(c.added.size())
             .arg(c.removed.size());
  return s;
}

QString comparison_notes(const analyzer::Comparison& c) {
  QStringList lines;
  for (const std::string& n : c.notes) lines << qs(n);
  auto listing = [&](const char* what, const std::vector<std::string>& v) {
    if (v.empty()) return;
    lines << QString("%1 (%2):").arg(what).arg(v.size());
    for (size_t i = 0; i < v.size() && i < 20; ++i) lines << QStringLiteral("  ") + qs(v[i]);
    if (v.size() > 20) lines << QString("  ... and %1 more").arg(v.size() - 20);
  };
  listing("only in B", c.added);
  listing("only in A", c.removed);
  return lines.join('\n');
}

}  // namespace c3::gui
