// The analysis pipeline's map and reduce (docs/architecture.md "The analysis
// pipeline", steps 2 and 3). The map turns one trace's processes (ranks) into RankSummary
// values: every breakdown number per rank, per device and per step, interference statistics per
// signature and collective statistics per op and size in mergeable form (distribution.h),
// contention, c3bench results, and the compact collective records that cross-rank analysis
// needs. The reduce turns summaries into the job report (report.h): clock alignment, matching,
// skew, stragglers and totals read summaries only. A summary is what CI keeps as a baseline: it
// is written and read as JSON, schema "c3scope-summary/3" (docs/analyze.md "Summaries"; files
// of schema 1 and 2 are read too, without what later schemas added).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "c3/analyzer/metrics/cross_rank.h"
#include "c3/analyzer/metrics/distribution.h"
#include "c3/analyzer/metrics/interference.h"
#include "c3/analyzer/metrics/metrics.h"
#include "c3/analyzer/open/trace.h"
#include "c3/analyzer/report/report.h"

namespace c3::analyzer {

// A gap of "other" idle that ended at a collective (why/idle.h CollectiveGap), kept for the
// reduce's communication wait: where it was found, and the collective by communicator
// (RankCollectives::comms index) and sequence number. Schema 5 on.
struct CommGap {
  enum class Scope : uint8_t { rank, device, stream, step };
  Scope scope = Scope::rank;
  int16_t device = 0;   // Scope::device, stream
  int32_t stream = -1;  // Scope::stream
  int32_t step = -1;    // Scope::step: the index into RankSummary::steps
  int32_t comm = -1;
  int64_t seq = -1;
  int64_t from = 0, to = 0;  // the rank's trace clock
  bool operator==(const CommGap&) const = default;
};

struct RankSummary {
  Process process;  // identity, host, rank, clock anchors
  std::vector<Device> devices;
  int64_t kernels = 0, memcpys = 0, memsets = 0;
  int64_t skipped = 0;  // rows the loader could not use, with the first one
  std::string first_skipped;
  // Trace::cpu_collectives (process 0; summary files keep them from schema 3 on).
  std::map<std::pair<std::string, std::string>, int64_t> cpu_collectives;
  Breakdown total;                                        // the rank (inside --range windows)
  std::vector<std::pair<int16_t, Breakdown>> per_device;  // (device ordinal, breakdown)
  int64_t matching_ranges = 0;                            // --range matches
  std::vector<RangeReport> ranges;                        // one per matching range (process 0)
  std::string step_source;                                // how steps were found; empty: none
  std::vector<StepSample> steps;
  std::vector<CollectiveStat> collectives;     // sorted by (op, bucket)
  std::vector<KernelStat> kernel_stats;        // sorted by (normalized name, class)
  std::vector<InterferenceStat> interference;  // sorted by signature
  std::vector<Contention> contention;          // per device (process 0)
  std::vector<BenchResult> bench;              // (process 0)
  RankCollectives calls;  // the compact collective records (cross_rank.h), sorted
  // Why the GPU waited (why/; summaries of schema 4 on: `why` says whether this one has them).
  // idle: the causes of total.idle; per device those of per_device's; steps carry their own.
  bool why = false;
  bool launch_calls = false;  // the trace carries launch calls (launches and queues need them)
  IdleCauses idle;
  std::vector<std::pair<int16_t, IdleCauses>> device_idle;
  std::vector<StreamIdle> stream_idle;  // process 0
  std::vector<LaunchStat> launches;     // sorted by name
  std::vector<StreamQueue> queues;      // process 0
  // Gaps that may be communication wait (schema 5 on: `comm_gaps_known`); the device scope
  // only for ranks with more than one device (one device: the rank's are its device's).
  bool comm_gaps_known = false;
  std::vector<CommGap> comm_gaps;
  // Frequent kernel sequences (why/sequences.h; schema 5 on: `sequences_known`).
  bool sequences_known = false;
  Sequences sequences;
  // Without steps: the critical path of the whole run (its window: the rank's first to last
  // GPU or launch time).
  RankPath run_path;
  int64_t run_start = 0, run_end = 0;
  // The input it came from (the pipeline's map: a summary file or a trace), for errors; not
  // stored in summary files. Empty: Process::source names it.
  std::string input;

  // Bytes of memory this summary holds (its vectors, strings and distributions), for the
  // pipeline's memory figures.
  size_t bytes() const;
};

// What a map computes with: AnalyzeOptions (range, step, interference); `align` is the
// reduce's.
using SummaryOptions = AnalyzeOptions;

// The per-activity rows of one rank's communication (the --csv table), handed over during the
// map so that they need not be held for the whole job.
using CommRows = std::function<void(const Trace& t, const std::vector<CommOverlap>& rows)>;

// One summary per process of `t` (in Trace::processes order). Throws std::invalid_argument for a
// bad --range or --step pattern, std::logic_error while kernel shapes are pending.
std::vector<RankSummary> summarize(const Trace& t, const SummaryOptions& o,
                                   const CommRows& rows = {});

// The job report of summaries (in rank order). `align`: estimate the clock offsets from the
// collective records (align_clocks); off: each summary's Process::offset_ns as it is.
Report reduce(const std::vector<RankSummary>& ranks, const std::vector<std::string>& inputs,
              const SummaryOptions& o, bool align = true);
// The cross-rank results of a job whose collective records are not in its summaries: computed
// where the records are (distributed.h, by the processes that own the communicators), equal to
// what the reduce computes from the records.
//
// Communication wait found in one rank's gaps (CommGap): time that moves from other idle to
// comm_wait in the totals of the scope the gaps were found in (rank, device, stream or step).
// Amounts for one scope may come in parts: each part moves what is left of other idle, so parts
// in any grouping move what the gaps one by one would.
struct GapWait {
  int32_t rank = 0;  // the rank's place in the job's order
  CommGap::Scope scope = CommGap::Scope::rank;
  int16_t device = 0;
  int32_t stream = -1;
  int32_t step = -1;
  int64_t wait = 0;
};
// The wait of one gap of rank `rank` (clock offset `offset`) before the others' last arrival
// `l` at its collective (aligned clocks); 0 when there is none.
int64_t gap_wait(const CommGap& g, const LastArrivals& l, size_t rank, int64_t offset);
struct CrossRankParts {
  std::vector<ClockOffset> clocks;  // align_clocks's (with `align`)
  std::vector<int64_t> offsets;     // each rank's Process::offset_ns after alignment
  // The ranks' communication wait, worked out where their collectives' records are (their gaps
  // were not in the summaries then).
  std::vector<GapWait> waits;
  CrossRank cross;  // cross_rank's
  // The steps' critical paths, joined by the processes that own the steps (their chains are
  // not in the summaries then): `joined` says so; Report::paths takes them as they are.
  bool joined = false;
  std::vector<StepPath> paths;
};

// The same, taking the summaries' per-rank steps over instead of copying them (the pipeline's
// reduce: the summaries are not needed afterwards). `parts` given: the cross-rank results come
// from it, not from the summaries' records (which may be empty); its matched collectives and
// joined paths are taken over too.
Report reduce(std::vector<RankSummary>&& ranks, const std::vector<std::string>& inputs,
              const SummaryOptions& o, bool align = true, CrossRankParts* parts = nullptr);

// The reduce a rank at a time: reduce() adds each summary in the job's order, then finishes.
// A rank's totals, statistics, streams and steps are merged into the report as it is added; what
// stays per rank is what the clock alignment, the communication wait and the critical path need
// once every rank is in (its process, collective records, gaps and whole-run chains: little when
// the records and chains were taken where they are owned, distributed.h). So a reduce that gets
// its summaries one at a time (run_distributed's process 0) never holds them all.
class Reducer {
 public:
  Reducer(std::vector<std::string> inputs, const SummaryOptions& o);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;
  // The next rank, in the job's order (the summary is taken over). Throws std::invalid_argument
  // when a total would pass int64.
  void add(RankSummary&& s);
  // Ranks added, and their processes (in that order; offsets as given).
  size_t ranks() const;
  const std::vector<Process>& processes() const;
  // The report, as reduce() makes it (once: the reducer is empty afterwards).
  Report finish(bool align = true, CrossRankParts* parts = nullptr);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Summary files: JSON, schema "c3scope-summary/3", every rank of a run in one file.
std::string summaries_to_json(const std::vector<RankSummary>& ranks, const SummaryOptions& o);
// The same as a gzip stream (a file named *.gz): the record columns compress about 100-fold.
std::string gzip_bytes(const std::string& data);
// The largest summary text read (decompressed): 4 GiB (docs/analyze.md "Limits").
constexpr size_t kSummaryTextLimit = size_t{1} << 32;
// Throws std::invalid_argument "<where>: ..." for anything that is not a valid summary file,
// longer than kSummaryTextLimit, or holding a string past common/text_limits.h's caps.
// `made_with` (optional) gets the options the summaries were computed with.
std::vector<RankSummary> summaries_from_json(const std::string& text, const std::string& where,
                                             SummaryOptions* made_with = nullptr);

}  // namespace c3::analyzer
