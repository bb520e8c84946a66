// The c3bench charts themselves (bench_charts.h shows them): speedup against message size,
// slowdowns against a knob, the chunk-count sweep. Each is built from the analyzer's typed
// results in the palette's colours, titled with its setting and provenance; nullptr when the
// results hold nothing to draw.
#pragma once

#include <QPalette>
#include <QString>
#include <vector>

#include "bench_grouping.h"
#include "c3/analyzer/open/bench_results.h"

class QChart;
class QChartView;

namespace c3::gui::bench_plots {

// A chart with the palette's theme, background and text, titled `title`.
QChart* new_chart(const QPalette& pal, const QString& title);
// A view of `chart` (its axes added) with the palette's axis colours and a legend that fits.
QChartView* new_view(const QPalette& pal, QChart* chart);

// Ideal and realized speedup against message size, one pair of lines per (compute, comm).
QChartView* speedup_chart(const std::vector<analyzer::BenchResult>& results, const QPalette& pal);
// Compute and communication slowdown of `rows` (bench_grouping::slowdown_rows) against `knob`,
// or the configurations side by side for Knob::none.
QChartView* slowdown_chart(const std::vector<analyzer::BenchResult>& results,
                           bench_grouping::Knob knob, const std::vector<size_t>& rows,
                           const QPalette& pal);
// Schedule speedup over k = 1 against the chunk count k, one line per configuration.
QChartView* chunk_chart(const std::vector<analyzer::BenchResult>& results, const QPalette& pal);

}  // namespace c3::gui::bench_plots
