// `c3scope compare`: a candidate run against a baseline, metric by metric, with statistics,
// budgets and exit codes (docs/metrics.md "Steps" and "Regressions";
// docs/compare.md). Both runs are rank summaries (summary.h): of traces through the pipeline, of
// summary files, or of c3bench JSON results. The statistics are regression.h's; this builds the
// metrics from the summaries, applies the budgets and writes the reports (text, Markdown, JUnit,
// JSON schema "c3scope-compare/1").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "c3/analyzer/compare/regression.h"
#include "c3/analyzer/summary/distributed.h"
#include "c3/analyzer/summary/pipeline.h"
#include "c3/analyzer/summary/summary.h"

namespace c3::analyzer {

// One side of a comparison.
struct JobRun {
  std::string name;  // what the user gave (a path)
  std::vector<RankSummary> ranks;
  // The options the summaries were computed with (a summary file says; traces: the command's).
  SummaryOptions made_with;
};

// A run from c3bench's JSON results (schema "c3bench/1", docs/c3bench.md): one rank whose
// bench results are the file's cases that ran. Throws std::invalid_argument "<where>: ...".
JobRun run_from_bench_json(const std::string& text, const std::string& where);
// True when `head` (the start of a file) is c3bench JSON.
bool looks_like_bench_json(const std::string& head);

// One side as the user named it (`compare` and the Python module's compare): c3bench JSON
// results, one summary file (its ranks and the options it was made with), or traces and folders
// mapped through the pipeline with `po`. Throws what resolve_inputs, read_summary_file,
// map_inputs and run_from_bench_json throw.
JobRun open_run(const std::string& path, const PipelineOptions& po);
// The same on the processes of `comm` (distributed.h): a run of many traces is mapped by every
// process, each its share; c3bench results and a lone summary are read by process 0. Process 0
// gets the run (the others an empty one); an error is thrown on every process alike (AgreedError,
// Cancelled).
JobRun open_run(Comm& comm, const std::string& path, const PipelineOptions& po);

// compare --threshold: "5" or "5%" (0 to 1000) as a fraction (0.05); throws
// std::invalid_argument naming `flag` and the value otherwise.
double percent_arg(std::string s, const char* flag);

// ---- Budgets (docs/compare.md "Budgets") ----

struct Budget {
  enum class Kind { limit, threshold };
  Kind kind = Kind::limit;
  int line = 0;
  std::string text;           // the line as written (trimmed)
  std::string metric;         // base metric name: "exposed_comm", "busbw", ...
  std::string selector;       // canonical selector ("AllReduce 1G..2G", "rank 3"), empty: none
  bool any_selector = false;  // threshold lines: "busbw" alone covers every busbw[...] metric
  std::string op;             // limit: "<=", "<", ">=", ">"
  double value = 0;  // limit: in the metric's unit (ns, %, bytes/s, ...); threshold: fraction
  std::string unit;  // as written ("ms", "gbps", "pct", ...)
};
struct Budgets {
  std::string file;
  std::vector<Budget> items;
};
// Throws std::invalid_argument "FILE:LINE: <reason>" for a bad line.
Budgets parse_budgets(const std::string& text, const std::string& file);
// parse_budgets of the file at `path` (compare --budget); throws std::invalid_argument naming it
// when it is not a readable regular file (a FIFO is refused before it is opened).
Budgets read_budgets(const std::string& path);

// ---- The comparison ----

struct CompareOptions {
  DecideOptions decide;     // alpha, min_samples, level
  double threshold = 0.05;  // default relative threshold
  int top = 20;             // kernel signatures compared (by time), and rows per report section
  // Changes of a step's parts smaller than this share of the baseline's median step time are
  // never regressions (they cannot matter to the step).
  double step_floor = 0.005;
  const Budgets* budgets = nullptr;
};

struct MetricResult {
  std::string id;     // "step_time", "exposed_comm[rank 3]", "busbw[AllReduce 1G..2G]"
  std::string base;   // "step_time", "busbw", ...
  std::string group;  // "job", "rank", "collective", "kernel", "interference", "skew", "bench"
  std::string unit;   // "ns", "%", "B/s", "x" (a factor), "" (a fraction)
  bool up_is_worse = true;
  bool absolute = false;
  int64_t n_baseline = 0, n_candidate = 0;
  Decision d;
  std::string detail;  // what else explains it (e.g. the straggler)
  // A ratio computed from other metrics (overlap %, interference and c3bench slowdowns, fraction
  // of ideal): it moves when they move, so its "improvement" may only mirror a regression.
  bool derived = false;
  // For a derived metric that improved while a primary metric of the same scope (the job, a
  // rank, a c3bench case) regressed: that metric's id. Such a change is a consequence of the
  // regression, not an improvement: it is not counted or listed as one.
  std::string consequence_of;
  // A not-significant change beyond the threshold the bad way: a regression the test could not
  // confirm.
  bool possible_regression() const;
  // How far the change goes the bad way, relative to the threshold (for ranking): > 1 is beyond.
  double severity() const;
};

struct BudgetResult {
  Budget budget;
  std::string metric_id;  // the metric it was checked on; empty when none matched
  double value = 0;       // the candidate's median, in the budget's unit
  bool ok = false;
  // False when the candidate has no such metric (a c3bench JSON result has no overlap, a run
  // without communication has no overlap %): the budget is reported as not checked, with the
  // reason, and breaks nothing (docs/compare.md "Budgets").
  bool checked = true;
  std::string why;
};

// The change of the median step time split into the terms of the span invariant (docs/metrics.md
// "Overlap and time breakdown"): each part is the change of that part's median, and "other" is
// what is left (exposed other-class time, time in the step outside GPU activity, and the
// difference between a median of sums and a sum of medians), so the parts add up to the whole.
struct Explained {
  bool available = false;
  static constexpr std::array<const char*, 6> kParts = {"compute", "exposed_comm", "exposed_memcpy",
                                                        "idle",    "other",        "step_time"};
  std::array<double, 6> baseline{}, candidate{};  // ns; the last is the step time
  double delta(size_t i) const { return candidate[i] - baseline[i]; }
};

// The change of the median step along the critical path (why/path_join.h): per path part
// (compute, communication, memory, other_gpu, host, idle) and the peer wait off the path, the
// median over the steps of each run, so a reader sees which segment of the path grew. Available
// when both runs' summaries carry paths (schema 4 on) and have steps.
struct ExplainedPath {
  bool available = false;
  static constexpr size_t kRows = kPathParts + 2;     // the parts, peer wait, the path's length
  std::array<double, kRows> baseline{}, candidate{};  // ns
  static const char* name(size_t i);
  double delta(size_t i) const { return candidate[i] - baseline[i]; }
};

struct Comparison {
  std::string baseline_name, candidate_name;
  bool has_baseline = true;
  std::string incomparable;        // why the runs cannot be compared; empty: they can
  std::vector<std::string> notes;  // facts a reader needs (step sources, versions, ...)
  int64_t baseline_steps = 0, candidate_steps = 0;
  int ranks_baseline = 0, ranks_candidate = 0;
  std::vector<MetricResult> metrics;        // ranked: worst first
  std::vector<std::string> added, removed;  // kernels only in the candidate / the baseline
  Explained explained;
  ExplainedPath explained_path;
  std::vector<BudgetResult> budgets;
  DecideOptions decide;
  double threshold = 0.05;
  int top = 20;

  int regressions() const;
  int improvements() const;  // without the derived metrics that mirror a regression
  int inconclusive() const;
  int not_significant() const;
  int consequences() const;  // derived metrics that "improved" because of a regression
  int budgets_broken() const;
  int budgets_unchecked() const;
  // 0 no regression, 1 a regression or a broken budget, 3 inconclusive: the runs are not
  // comparable, or the job's step time could not be decided (too few steps).
  int exit_code() const;
  // "regression", "inconclusive", "not_significant" (no regression, but a change beyond its
  // threshold the bad way that the test could not confirm), "improvement", "unchanged" (of the
  // whole comparison, in that order).
  std::string verdict() const;
  // One line: the verdict and the worst metrics.
  std::string headline() const;
};

// Compares `candidate` with `baseline` (nullptr: budgets only).
Comparison compare(const JobRun* baseline, const JobRun& candidate, const CompareOptions& o);

// ---- Reports ----
std::string compare_text(const Comparison& c, bool color);
// GitHub-flavoured Markdown, never more than `limit` bytes (GitHub's job summary takes 1 MiB).
std::string compare_markdown(const Comparison& c, size_t limit = size_t{1000} * 1000);
std::string compare_junit(const Comparison& c);
std::string compare_json(const Comparison& c);

// A metric's numbers as every report writes them (the terminal table, Markdown, JUnit, and the
// GUI's Compare tab).
struct MetricText {
  std::string baseline, candidate;  // medians in the metric's unit: "12.345 ms", "71.2 %"
  std::string change;               // "+4.1%", or "+0.021" for an absolute metric
  std::string interval;             // "[+2.0%, +6.3%]", "-" when there is none
  std::string p_adjusted;           // "0.0031", "-" when the metric was not tested
  std::string threshold;            // "5.0%"
};
MetricText metric_text(const MetricResult& m);
// A duration as the reports write it: "950 ns", "12.34 us", "1.234 ms", "2.000 s".
std::string compare_time_text(double ns);

}  // namespace c3::analyzer
