// What the c3bench charts (bench_charts.h) group and compare: the knobs a sweep varies, the
// baseline the other knobs are held at, the names that tell configurations apart and the
// provenance line of a chart. Everything here works on the analyzer's typed results
// (c3/analyzer/open/bench_results.h); nothing parses labels.
#pragma once

#include <QString>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "c3/analyzer/open/bench_results.h"

namespace c3::gui::bench_grouping {

enum class Knob { priority, order, channels, ctas, sm_partition, size, none };
// The knobs of a configuration (the size and the chunk count are not among them).
constexpr Knob kConfigKnobs[] = {Knob::priority, Knob::order, Knob::channels, Knob::ctas,
                                 Knob::sm_partition};

using KnobValue = std::pair<int64_t, std::string>;  // sort key, text

struct Mean {
  double sum = 0;
  int n = 0;
  void add(double v) {
    sum += v;
    ++n;
  }
  double value() const { return n > 0 ? sum / n : 0.0; }
};

bool finite(const std::optional<double>& v);
// A pipelined schedule's chunk count (1: its unsplit baseline); 0 for independent streams.
int chunks_of(const analyzer::BenchConfig& c);
// "64 MiB", "4096 B" (powers of 1024, exact).
QString size_text(int64_t bytes);

KnobValue knob_value(const analyzer::BenchConfig& c, Knob k);
QString knob_name(Knob k);        // "stream priority"
QString knob_axis_title(Knob k);  // what an axis of its values says
// "<compute> + <comm kind>", "-" for a side that is missing.
std::string pair_name(const analyzer::BenchConfig& c);
// The knob settings other than `except` (and the chunk count), as c3bench spells them.
std::string knobs_text(const analyzer::BenchConfig& c, Knob except);

// The rows of `rows` whose configuration knobs other than `except` sit at one baseline
// setting each: the default where some row has it, else the most common value.
std::vector<size_t> keep_baseline(const std::vector<analyzer::BenchResult>& results,
                                  std::vector<size_t> rows, Knob except);
// Rows of the unsplit schedule: independent streams where there are any, else the pipelined
// schedule with the fewest chunks.
std::vector<size_t> keep_least_chunks(const std::vector<analyzer::BenchResult>& results,
                                      std::vector<size_t> rows);
// Results with a known configuration and slowdowns, of the unsplit schedule (any knobs).
std::vector<size_t> slowdown_candidates(const std::vector<analyzer::BenchResult>& results);
// Slowdown rows for `knob`: the candidates whose other knobs sit at their baseline.
std::vector<size_t> slowdown_rows(const std::vector<analyzer::BenchResult>& results, Knob knob);

// "simulated · backend sim", "real GPU · backend cuda", "mixed: simulated and real GPU ·
// backends cuda, sim".
QString provenance(const std::vector<analyzer::BenchResult>& results,
                   const std::vector<size_t>& rows);
// Names that tell configurations apart by what differs among them: the compute op, the
// communication op, the message size, the other knobs.
std::vector<std::string> distinct_names(const std::vector<analyzer::BenchConfig>& reps);

}  // namespace c3::gui::bench_grouping
