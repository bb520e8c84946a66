// Loading c3bench results (bench_results.h) from a trace database (internal to the analyzer
// library: load.cpp and the snapshot reader use it).
#pragma once

#include <string>

#include "build.h"
#include "c3/analyzer/open/bench_results.h"
#include "c3/tracedb/reader.h"
#include "c3/tracedb/schema.h"

namespace c3::analyzer {

// The configuration bench_result's typed columns hold in `row`; not known when a knob column is
// NULL (an older trace's label that could not be read) or a value is impossible.
BenchConfig bench_config(const tracedb::BenchResultRow& row);
// The configuration an older snapshot's label names (read once, by tracedb's migration parser).
BenchConfig bench_config_from_label(const std::string& label);
// Whether a known configuration's numbers are possible (counts >= 0, a percentage <= 100, at
// least one chunk); an unknown one always is.
bool possible(const BenchConfig& c);

// Adds the ok rows of r's bench_result to t.bench, each under the process its bench_run names
// (the run itself as a process, below every real process id, when the trace has none: c3bench
// --db files), in row order.
void load_bench_results(const tracedb::Reader& r, TraceBuilder& b, Trace& t);

}  // namespace c3::analyzer
