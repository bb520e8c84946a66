#include "bench_plots.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QLegend>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace c3::gui::bench_plots {

using analyzer::BenchConfig;
using analyzer::BenchResult;
using namespace bench_grouping;

namespace {

QColor blend(const QColor& a, const QColor& b, float t) {
  return QColor::fromRgbF(a.redF() * (1 - t) + b.redF() * t, a.greenF() * (1 - t) + b.greenF() * t,
                          a.blueF() * (1 - t) + b.blueF() * t);
}

// An x axis whose positions are log2 of `values`, each labelled.
QCategoryAxis* log2_axis(const std::set<int64_t>& values,
                         const std::function<QString(int64_t)>& label, const QString& title) {
  auto* axis = new QCategoryAxis();
  axis->setStartValue(std::log2(static_cast<double>(*values.begin())) - 0.5);
  for (int64_t v : values) axis->append(label(v), std::log2(static_cast<double>(v)));
  axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  const double lo = std::log2(static_cast<double>(*values.begin()));
  const double hi = std::log2(static_cast<double>(*values.rbegin()));
  axis->setRange(lo - 0.5, hi + 0.5);
  axis->setTitleText(title);
  return axis;
}

// A value axis over [lo, hi] with some room; an axis of values that are all >= 0 starts at 0 at
// the lowest (bars).
QValueAxis* value_axis(double lo, double hi, const QString& title, const char* format) {
  if (!(hi > lo)) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double pad = (hi - lo) * 0.08;
  auto* axis = new QValueAxis();
  axis->setRange(lo >= 0 && lo - pad < 0 ? 0.0 : lo - pad, hi + pad);
  axis->applyNiceNumbers();
  axis->setLabelFormat(QLatin1String(format));
  axis->setTitleText(title);
  return axis;
}

// A bottom legend when its names fit in a row, else a column on the right.
void place_legend(QChart* chart) {
  qsizetype chars = 0;
  for (const QAbstractSeries* s : chart->series()) chars += s->name().size() + 4;
  chart->legend()->setAlignment(chars > 90 ? Qt::AlignRight : Qt::AlignBottom);
}

}  // namespace

QChart* new_chart(const QPalette& pal, const QString& title) {
  const QColor window = pal.color(QPalette::Window);
  const QColor text = pal.color(QPalette::WindowText);
  auto* chart = new QChart();
  // The theme first (it resets colours), then the palette's own background and text.
  chart->setTheme(window.lightness() < 128 ? QChart::ChartThemeDark : QChart::ChartThemeLight);
  chart->setBackgroundBrush(window);
  chart->setBackgroundRoundness(0);
  chart->setPlotAreaBackgroundVisible(false);
  chart->setTitleBrush(text);
  QFont font = chart->titleFont();
  font.setBold(true);
  chart->setTitleFont(font);
  chart->setTitle(title);
  chart->legend()->setLabelColor(text);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
  chart->setAnimationOptions(QChart::NoAnimation);
  return chart;
}

QChartView* new_view(const QPalette& pal, QChart* chart) {
  // Axes were added by the caller: give them the palette's text and a grid between text and
  // background.
  const QColor window = pal.color(QPalette::Window);
  const QColor text = pal.color(QPalette::WindowText);
  for (QAbstractAxis* axis : chart->axes()) {
    axis->setLabelsBrush(text);
    axis->setTitleBrush(text);
    axis->setLinePenColor(blend(window, text, 0.5f));
    axis->setGridLineColor(blend(window, text, 0.2f));
  }
  place_legend(chart);
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing, true);
  view->setRenderHint(QPainter::TextAntialiasing, true);
  view->setMinimumSize(320, 240);
  view->setBackgroundBrush(window);
  return view;
}

QChartView* speedup_chart(const std::vector<BenchResult>& results, const QPalette& pal) {
  std::vector<size_t> rows;
  rows.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    const BenchConfig& c = results[i].config;
    if (c.known && c.comm_bytes > 0 && !c.compute.empty() && finite(results[i].ideal_speedup) &&
        finite(results[i].realized_speedup))
      rows.push_back(i);
  }
  rows = keep_least_chunks(results, std::move(rows));
  rows = keep_baseline(results, std::move(rows), Knob::none);
  if (rows.empty()) return nullptr;

  // One pair of lines per (compute op, comm op), the mean over rows of the same size.
  std::vector<std::string> pairs;
  std::vector<BenchConfig> reps;
  std::map<std::string, std::map<int64_t, std::pair<Mean, Mean>>> points;  // ideal, realized
  std::set<int64_t> sizes;
  double lo = 1.0, hi = 1.0;
  for (size_t i : rows) {
    const std::string pair = pair_name(results[i].config);
    if (points.count(pair) == 0) {
      pairs.push_back(pair);
      BenchConfig rep = results[i].config;
      rep.comm_bytes = 0;  // named by the pair only
      reps.push_back(rep);
    }
    auto& [ideal, realized] = points[pair][results[i].config.comm_bytes];
    ideal.add(*results[i].ideal_speedup);
    realized.add(*results[i].realized_speedup);
    sizes.insert(results[i].config.comm_bytes);
    lo = std::min({lo, *results[i].ideal_speedup, *results[i].realized_speedup});
    hi = std::max({hi, *results[i].ideal_speedup, *results[i].realized_speedup});
  }
  const std::vector<std::string> names = distinct_names(reps);

  const BenchConfig& first = results[rows.front()].config;
  QString setting = QString::fromStdString(knobs_text(first, Knob::none));
  if (chunks_of(first) > 0) {
    setting += (setting.isEmpty() ? "" : " ") + QStringLiteral("pipelined, %1 chunk%2")
                                                    .arg(chunks_of(first))
                                                    .arg(chunks_of(first) == 1 ? "" : "s");
  }
  QString title = QStringLiteral("Ideal and realized speedup vs message size");
  if (!setting.isEmpty()) title += QStringLiteral(" [%1]").arg(setting);
  title += QStringLiteral(" — ") + provenance(results, rows);
  QChart* chart = new_chart(pal, title);

  auto* x = log2_axis(sizes, size_text, QStringLiteral("message size (bytes, log₂ scale)"));
  auto* y = value_axis(lo, hi, QStringLiteral("speedup over serial (×)"), "%.2f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (size_t p = 0; p < pairs.size(); ++p) {
    const QString suffix =
        pairs.size() > 1 ? QStringLiteral(": ") + QString::fromStdString(names[p]) : QString();
    auto* realized = new QLineSeries();
    realized->setName(QStringLiteral("realized") + suffix);
    auto* ideal = new QLineSeries();
    ideal->setName(QStringLiteral("ideal") + suffix);
    for (const auto& [bytes, means] : points[pairs[p]]) {
      const double px = std::log2(static_cast<double>(bytes));
      ideal->append(px, means.first.value());
      realized->append(px, means.second.value());
    }
    chart->addSeries(realized);  // the theme picks its colour; the ideal line shares it, dashed
    QPen pen(realized->color());
    pen.setWidthF(2.5);
    realized->setPen(pen);
    realized->setPointsVisible(true);
    pen.setWidthF(1.8);
    pen.setStyle(Qt::DashLine);
    ideal->setPen(pen);
    ideal->setPointsVisible(true);
    chart->addSeries(ideal);
    for (QLineSeries* s : {realized, ideal}) {
      s->attachAxis(x);
      s->attachAxis(y);
    }
  }
  auto* view = new_view(pal, chart);
  view->setObjectName(QStringLiteral("bench_speedup_chart"));
  return view;
}

QChartView* slowdown_chart(const std::vector<BenchResult>& results, Knob knob,
                           const std::vector<size_t>& rows, const QPalette& pal) {
  if (rows.empty()) return nullptr;

  // Categories: the knob's values; with no knob, the configurations side by side.
  using Key = std::tuple<KnobValue, std::string, int64_t>;  // knob value, op pair, bytes
  std::map<Key, std::pair<Mean, Mean>> bars;                // compute, comm slowdown (%)
  std::map<Key, BenchConfig> reps;
  bool any_comm = false;
  double lo = 0, hi = 0;
  for (size_t i : rows) {
    const BenchConfig& c = results[i].config;
    const Key key{knob_value(c, knob), knob == Knob::none ? pair_name(c) : std::string(),
                  knob == Knob::none ? c.comm_bytes : 0};
    reps.emplace(key, c);
    auto& [comp, comm] = bars[key];
    if (finite(results[i].compute_slowdown)) comp.add(*results[i].compute_slowdown * 100.0);
    if (finite(results[i].comm_slowdown)) {
      comm.add(*results[i].comm_slowdown * 100.0);
      any_comm = true;
    }
  }
  std::vector<BenchConfig> rep_list;
  rep_list.reserve(reps.size());
  for (const auto& [key, c] : reps) rep_list.push_back(c);
  const std::vector<std::string> case_names = distinct_names(rep_list);

  QStringList categories;
  categories.reserve(static_cast<qsizetype>(bars.size()));
  auto* comp_set = new QBarSet(QStringLiteral("compute slowdown"));
  auto* comm_set = new QBarSet(any_comm ? QStringLiteral("communication slowdown")
                                        : QStringLiteral("communication slowdown (not reported)"));
  size_t n = 0;
  for (const auto& [key, means] : bars) {
    categories << QString::fromStdString(knob == Knob::none ? case_names[n]
                                                            : std::get<0>(key).second);
    ++n;
    comp_set->append(means.first.value());
    comm_set->append(means.second.value());
    lo = std::min({lo, means.first.value(), means.second.value()});
    hi = std::max({hi, means.first.value(), means.second.value()});
  }
  if (lo > -0.05) lo = 0;  // -0.0 % is no speedup
  auto* series = new QBarSeries();
  series->append(comp_set);
  series->append(comm_set);
  series->setLabelsVisible(true);
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  series->setLabelsFormat(QStringLiteral("@value %"));
  series->setLabelsPrecision(3);
  for (QBarSet* set : {comp_set, comm_set}) set->setLabelColor(pal.color(QPalette::WindowText));

  const BenchConfig& first = results[rows.front()].config;
  QString title = knob == Knob::none ? QStringLiteral("Compute and communication slowdown")
                                     : QStringLiteral("Slowdowns vs %1").arg(knob_name(knob));
  if (knob != Knob::none) {
    title += QStringLiteral(" — ") + QString::fromStdString(pair_name(first));
    if (knob != Knob::size && first.comm_bytes > 0)
      title += QStringLiteral(" ") + size_text(first.comm_bytes);
  }
  const QString others = QString::fromStdString(knobs_text(first, knob));
  if (!others.isEmpty()) title += QStringLiteral(" [%1]").arg(others);
  title += QStringLiteral(" — ") + provenance(results, rows);
  QChart* chart = new_chart(pal, title);
  chart->legend()->setMarkerShape(QLegend::MarkerShapeRectangle);
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis();
  x->append(categories);
  x->setTitleText(knob_axis_title(knob));
  auto* y = value_axis(lo, hi, QStringLiteral("slowdown while concurrent (%)"), "%.0f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  auto* view = new_view(pal, chart);
  view->setObjectName(QStringLiteral("bench_slowdown_chart"));
  return view;
}

QChartView* chunk_chart(const std::vector<BenchResult>& results, const QPalette& pal) {
  std::vector<size_t> rows;
  rows.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].config.known && chunks_of(results[i].config) > 0) rows.push_back(i);
  }
  rows = keep_baseline(results, std::move(rows), Knob::none);
  std::set<int64_t> ks;
  for (size_t i : rows) ks.insert(chunks_of(results[i].config));
  if (ks.size() < 2) return nullptr;

  // One line per configuration (op pair, size): schedule speedup over its k = 1 schedule as
  // c3bench reports it, else from T_c3.
  struct Line {
    BenchConfig rep;
    std::map<int64_t, Mean> speedup;
    Mean t_c3_k1;
    std::map<int64_t, Mean> t_c3;
  };
  std::vector<Line> lines;
  std::map<std::pair<std::string, int64_t>, size_t> index;
  for (size_t i : rows) {
    const BenchConfig& c = results[i].config;
    auto [it, added] = index.emplace(std::pair(pair_name(c), c.comm_bytes), lines.size());
    if (added) lines.push_back(Line{c, {}, {}, {}});
    Line& line = lines[it->second];
    const BenchResult& r = results[i];
    if (finite(r.schedule_speedup)) {
      line.speedup[chunks_of(c)].add(*r.schedule_speedup);
    } else if (chunks_of(c) == 1) {
      line.speedup[1].add(1.0);
    }
    if (r.t_c3 > 0) {
      line.t_c3[chunks_of(c)].add(r.t_c3);
      if (chunks_of(c) == 1) line.t_c3_k1.add(r.t_c3);
    }
  }
  double lo = 1.0, hi = 1.0;
  std::vector<BenchConfig> reps;
  reps.reserve(lines.size());
  for (Line& line : lines) {
    for (const auto& [k, t] : line.t_c3) {
      if (line.speedup.count(k) == 0 && line.t_c3_k1.n > 0 && t.value() > 0)
        line.speedup[k].add(line.t_c3_k1.value() / t.value());
    }
    for (const auto& [k, s] : line.speedup) {
      lo = std::min(lo, s.value());
      hi = std::max(hi, s.value());
    }
    reps.push_back(line.rep);
  }
  const std::vector<std::string> names = distinct_names(reps);

  QString title = QStringLiteral("Chunk-count sweep: schedule speedup over k = 1");
  const QString others =
      QString::fromStdString(knobs_text(results[rows.front()].config, Knob::none));
  if (!others.isEmpty()) title += QStringLiteral(" [%1]").arg(others);
  title += QStringLiteral(" — ") + provenance(results, rows);
  QChart* chart = new_chart(pal, title);
  auto* x = log2_axis(
      ks, [](int64_t k) { return QString::number(k); },
      QStringLiteral("chunks k (pipelined pieces, log₂ scale)"));
  auto* y = value_axis(lo, hi, QStringLiteral("schedule speedup over k = 1 (×)"), "%.2f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  // A colour per message size, a line style per op pair (and other knobs).
  std::map<int64_t, QColor> size_colour;
  std::map<std::string, Qt::PenStyle> pair_style;
  constexpr Qt::PenStyle kStyles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                      Qt::DashDotDotLine};
  for (size_t l = 0; l < lines.size(); ++l) {
    if (lines[l].speedup.empty()) continue;
    auto* series = new QLineSeries();
    series->setName(QString::fromStdString(names[l]));
    for (const auto& [k, s] : lines[l].speedup)
      series->append(std::log2(static_cast<double>(k)), s.value());
    series->setPointsVisible(true);
    chart->addSeries(series);  // the theme's next colour, unless the size has one already
    const QColor colour =
        size_colour.emplace(lines[l].rep.comm_bytes, series->color()).first->second;
    const std::string style_key =
        pair_name(lines[l].rep) + " " + knobs_text(lines[l].rep, Knob::none);
    const Qt::PenStyle style =
        pair_style.emplace(style_key, kStyles[pair_style.size() % std::size(kStyles)])
            .first->second;
    QPen pen(colour);
    pen.setWidthF(2.2);
    pen.setStyle(style);
    series->setPen(pen);
    series->attachAxis(x);
    series->attachAxis(y);
  }
  auto* view = new_view(pal, chart);
  view->setObjectName(QStringLiteral("bench_chunk_chart"));
  return view;
}

}  // namespace c3::gui::bench_plots
