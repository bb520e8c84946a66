// One opened set of traces: the loaded trace, its analysis and its timeline rows. Loading runs
// off the GUI thread (load_document), reporting progress and honouring cancellation.
#pragma once

#include <QString>
#include <QStringList>
#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "c3/analyzer/compare/compare.h"
#include "c3/analyzer/metrics/interference.h"
#include "c3/analyzer/open/open.h"
#include "c3/analyzer/open/trace.h"
#include "c3/analyzer/report/report.h"
#include "c3/analyzer/why/path_join.h"
#include "c3/gui/result.h"
#include "c3/gui/timeline.h"

namespace c3::gui {

struct Document {
  QStringList paths;
  analyzer::Trace trace;
  // What analyzer::open_traces gave besides the trace (moved into `trace`): the database of
  // each process (`process_db`: the file opened, or a temporary import of it, kept while the
  // document lives; Process::source names what the user opened) and the snapshot it came from
  // or will go to.
  analyzer::OpenedTraces opened;
  std::vector<std::string> process_db;
  // The first paint needs no kernel launch shapes, so load_document leaves them pending
  // (analyzer::LoadOptions::defer_kernel_shapes) and analyze_document reads them on its worker.
  // Until `shapes_ready`, the GUI thread must not read Trace::shapes, Activities::shape or
  // launch_delays; `shapes_mutex` keeps two workers from completing the same trace.
  std::atomic<bool> shapes_ready{true};
  std::mutex shapes_mutex;
  // Filled by analyze_document after the first paint; until then `analyzed` is false and the
  // panels say the analysis is running.
  analyzer::Report report;
  bool analyzed = false;
  // Each step's critical path over the timeline (analyzer::route_segments of report.paths; the
  // step of each segment, an index into report.paths), set with `report`.
  std::vector<analyzer::PathSegment> path;
  std::vector<size_t> path_step;
  // The what-ifs the analysis replays (the Why panel's; analyzer::parse_what_if), GUI thread.
  std::vector<analyzer::WhatIf> what_ifs;
  std::vector<analyzer::ClockOffset> clocks;  // how the ranks were aligned (before the report)
  // The document as one side of a comparison: its rank summaries (analyzer::summarize) for the
  // last step pattern compared, made by compare_documents on a worker and replaced (never
  // changed) under `run_mutex` when the pattern changes. The GUI thread reads only the
  // Comparison made of them.
  std::shared_ptr<const analyzer::JobRun> run;
  std::mutex run_mutex;
  std::unique_ptr<Timeline> timeline;
  // Busy share of each class in kOverviewBuckets slices of the whole trace (the overview strip).
  std::vector<std::array<float, analyzer::kClasses>> overview;
  static constexpr int kOverviewBuckets = 2048;
  // The files' names: "rank0.sqlite", "rank0.sqlite, rank1.sqlite" (several: in their folder's
  // name when they share one, "job: rank0.sqlite, rank1.sqlite"), long lists cut.
  QString title() const;
};

// Process indices in rank order (ranks as numbers, 2 before 10; processes without a rank after
// them, in load order): the order of every per-rank list the GUI shows.
std::vector<int> rank_order(const analyzer::Trace& t);

// Whether the trace was recorded on the simulated node (c3bench --backend sim): its GPUs are
// named "Simulated ..." (sim/gpu's device facts), or its c3bench results say so.
bool is_simulated(const analyzer::Trace& t);

// Opens (analyzer::open_traces: PyTorch or Nsight files are converted into temporary traces),
// aligns the ranks' clocks and lays out the timeline: enough for the first paint.
// `progress(fraction 0..1, what)`. Fails with one sentence naming the file, or cancelled
// ("Loading was cancelled.") when `cancel` became true.
Result<std::unique_ptr<Document>> load_document(
    const QStringList& paths, const std::atomic<bool>& cancel,
    const std::function<void(double, const QString&)>& progress);

// Where snapshots go: $C3SCOPE_CACHE_DIR, else the user's cache folder; empty when
// C3SCOPE_CACHE_DIR=off. Trace sets smaller than kCacheMinBytes (or $C3SCOPE_CACHE_MIN_MB) load
// fast enough without one.
QString cache_dir();
inline constexpr int64_t kCacheMinBytes = int64_t{48} << 20;

// Writes the document's snapshot if it has a cache path and did not come from it (after the
// first paint, on a worker). False when it could not be written.
bool save_snapshot(const Document& doc);

// Reads the kernel shapes the load left pending, then every metric of the report
// (analyzer::analyze_aligned): it runs on a worker while the timeline is drawn, writing nothing
// the drawing reads. Fails with what the analyzer threw (a trace file that became unreadable or
// changed since it was opened), or cancelled.
// `what_ifs`: replayed on each step's critical path (AnalyzeOptions::what_ifs).
Result<analyzer::Report> analyze_document(Document& doc, const std::atomic<bool>& cancel,
                                          const std::vector<analyzer::WhatIf>& what_ifs = {});

// The step of the rank's that holds trace time `t` of process `process` (Report::steps, the
// rank's clock): its window; without steps, the process's whole span. Empty when none holds it.
std::optional<analyzer::Interval> step_window(const Document& doc, int process, int64_t t,
                                              int64_t* index = nullptr);

// The comparison `c3scope compare A B [--step STEP]` makes, with its default options otherwise
// (analyzer::compare: the same metrics, statistics, verdicts and explained step time), of
// `baseline` (A) and `candidate` (B), each summarized when first compared or when `step` changed
// (empty: ProfilerStep#N). Runs on a worker; fails with what the analyzer threw ("--step ...:
// ..." for a bad pattern), or cancelled.
Result<std::shared_ptr<const analyzer::Comparison>> compare_documents(
    Document& baseline, Document& candidate, const std::string& step,
    const std::atomic<bool>& cancel);

}  // namespace c3::gui
