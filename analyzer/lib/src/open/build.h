// Building one trace file's part of a Trace from its rows (internal to the analyzer library).
//
// One builder serves both ways rows arrive: load.cpp steps the tables of a trace database,
// and TraceSink takes an importer's rows directly (the map reads a PyTorch file without a
// database in between, open.h). Either way the rows must come in the loader's order: processes,
// devices, collectives, external correlations, then kernels, copies and sets (each linked to
// its collective as it comes), NVTX ranges at any point after the processes.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/open/load.h"
#include "c3/analyzer/open/trace.h"
#include "c3/tracedb/sink.h"
#include "c3/tracedb/string_ids.h"
#include "time_limits.h"

namespace c3::analyzer {

struct PairHash {
  template <class A, class B>
  size_t operator()(const std::pair<A, B>& p) const {
    // splitmix64 of the two halves combined: a well-spread bucket for dense ids.
    uint64_t x =
        static_cast<uint64_t>(p.first) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(p.second);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return static_cast<size_t>(x ^ (x >> 31));
  }
};

// Names interned into a Trace's name table.
using Names = tracedb::StringIds;

// Kernel shapes, interned.
class Shapes {
 public:
  explicit Shapes(std::vector<KernelShape>& shapes) : shapes_(shapes) {}
  int32_t id(const KernelShape& s);

 private:
  struct Recent {
    uint64_t k1 = 0, k2 = 0;
    int32_t id = -1;
  };
  std::vector<KernelShape>& shapes_;
  std::unordered_map<std::pair<uint64_t, uint64_t>, int32_t, PairHash> ids_;
  std::array<Recent, 64> recent_{};
};

// (process, correlation id) -> a 1-based slot (0: none). Correlation ids of one process are dense
// and small, so the main process's live in a plain vector; other processes' in a hash. The vector
// grows only as far as the entries justify (16 ids per entry, at least 2^20), so a hostile id
// cannot make it large: such ids go to the hash too (a single id near 2^28 grew it to 1 GiB).
class LinkTable {
 public:
  uint32_t& slot(int64_t process, int64_t correlation, bool main);
  uint32_t find(int64_t process, int64_t correlation) const;
  // Before the first slot(): the main process's ids start at `lowest` (an importer's hint: a long
  // run's PyTorch profiler trace numbers its calls from far above 0, and a vector from 0 would
  // send each id past 2^20 to the hash). An id below it still goes to the hash.
  void starts_at(int64_t lowest);
  size_t dense_size() const { return dense_.size(); }
  // Replaces each nonzero value v with f(v).
  template <class F>
  void rewrite(F f) {
    for (uint32_t& v : dense_) {
      if (v != 0) v = f(v);
    }
    for (Entry& e : sparse_) {
      if (e.used && e.value != 0) e.value = f(e.value);
    }
  }

 private:
  static constexpr uint64_t kDenseFloor = uint64_t{1} << 20;
  // The hash: open addressing with linear probing, at most half full (a lookup is one or two
  // cache lines; std::unordered_map's nodes were a third of the kernels' load time).
  struct Entry {
    int64_t process = 0, correlation = 0;
    uint32_t value = 0;
    bool used = false;
  };
  static constexpr size_t kNone = SIZE_MAX;
  size_t sparse_find(int64_t process, int64_t correlation) const;  // its index, or kNone
  uint32_t& sparse_slot(int64_t process, int64_t correlation);
  // Whether the hash may hold (process, correlation): only then is a main id looked up there.
  bool maybe_sparse(int64_t correlation) const {
    return main_in_sparse_ && correlation >= sparse_lo_ && correlation <= sparse_hi_;
  }
  int64_t main_process_ = INT64_MIN;
  uint64_t entries_ = 0;         // slot() calls: what the vector's length may grow with
  bool main_in_sparse_ = false;  // some of the main process's ids are in the hash
  int64_t sparse_lo_ = INT64_MAX, sparse_hi_ = INT64_MIN;  // the hash's ids lie in [lo, hi]
  std::vector<uint32_t> dense_;                            // ids from dense_base_ on
  int64_t dense_base_ = 0;
  std::vector<Entry> sparse_;
  size_t sparse_used_ = 0;
};

KernelShape clamp_shape(int64_t grid, int64_t block, int64_t registers, int64_t shared);
void skip(Trace& t, const std::string& what);

// GPU rows between two calls of `tick`.
constexpr int64_t kTickRows = 1 << 16;
// Activities and ranges must lie within +-2^61 ns and last at most 2^50 ns (time_limits.h), so that
// every length, sum and difference the analysis makes fits in int64. Regression:
// fuzz/regressions/trace/activity-time-overflow (a kernel from -5.4e18 to 4.1e18 ns overflowed
// Interval::length).
inline bool in_time_limit(int64_t start, int64_t end) {
  return stamp_in_limit(start) && stamp_in_limit(end);
}
inline bool in_duration_limit(int64_t start, int64_t end) {
  return end - start <= kAmountLimit;  // end >= start, both within +-2^61: no overflow
}

// Throws std::invalid_argument naming `source` when one of `t`'s processes spans more than
// kAmountLimit ns (first start to last end of its activities and ranges) or its activities'
// durations add up to more: its times are not of one recording, and the sums the analysis
// makes would not fit (fuzz/regressions/snapshot/activity-time-sum-overflow).
void check_time_span(const Trace& t, const std::string& source);

// Facts beyond what a summary can hold (time_limits.h) are garbage: the builder makes them
// unknown (0, -1 or none, as a summary would say), the snapshot reader refuses a snapshot with
// any. Each returns whether it changed something. Regressions: fuzz/regressions/kineto/
// summary-anchor-out-of-range, nsys/summary-device-limit-out-of-range,
// trace/summary-record-out-of-range, snapshot/summary-world-size-out-of-range.
bool make_possible(Process& p);
bool make_possible(Collective& c);
bool make_possible(Device& d);
bool make_possible(BenchResult& b);  // a time or ratio that is not finite (JSON has no inf)

class TraceBuilder {
 public:
  // `source` names the file in Process::source and in skipped rows' messages.
  TraceBuilder(Trace& t, std::string source, std::function<void(int64_t)> tick);

  // A process row (its id in the file: what other rows' process ids refer to).
  void process(int64_t db_id, Process p);
  // A version the file states (meta "<name>_version" for every process, or
  // "kineto_<id>_<name>_version" for one); other keys are ignored.
  void meta(std::string_view key, std::string_view value);
  // Trace::processes index of a process id of the file, -1 when there is none.
  int process_index(int64_t db_id);
  const std::map<int64_t, int16_t>& processes() const { return proc_; }

  void device(int64_t process_db, Device d);
  void reserve_collectives(size_t n);
  // Room for about n more GPU rows (a hint: Activities::reserve).
  void reserve_rows(size_t n);
  // Before the GPU rows: the lowest correlation id they and their calls use (LinkTable::starts_at).
  void correlations_from(int64_t lowest) {
    launched_.starts_at(lowest);
    linked_.starts_at(lowest);
  }
  // c.process is set here; `external_id` links the call to its GPU work.
  void collective(int64_t process_db, Collective c, int64_t external_id);
  // An external correlation of kind custom0 (the other kinds link nothing).
  void external_correlation(int64_t process_db, int64_t correlation, int64_t external_id);

  int32_t name(std::string_view s) { return names_.id(s); }
  Names& names() { return names_; }

  // GPU rows; `row` is the row's id in its table (for messages). Each returns the activity's
  // index, or SIZE_MAX when the row was skipped (no such process, or it ends before it starts).
  size_t kernel(int64_t row, int64_t process_db, int64_t device, int64_t stream, int64_t start,
                int64_t end, int32_t name, int64_t correlation);
  void kernel_shape(size_t i, const KernelShape& shape, int64_t submitted);
  size_t memcpy(int64_t row, int64_t process_db, int64_t device, int64_t stream, int64_t start,
                int64_t end, std::string_view copy_kind, int64_t bytes, int64_t channel,
                int64_t correlation);
  size_t memset(int64_t row, int64_t process_db, int64_t device, int64_t stream, int64_t start,
                int64_t end, int64_t bytes, int64_t correlation);
  void range(int64_t process_db, Range g);
  // Whether launch calls will follow (a file with API calls): only then does the builder keep
  // each GPU row's (process, correlation id) for them (4 bytes per correlation id meanwhile).
  void expect_calls(bool yes) { expect_calls_ = yes; }
  // A host API call (after the GPU rows): when its correlation id is a GPU row's, that row's
  // launch call (Activities::call_start/call_end; the first call of an id wins). Others are
  // ignored; one ending before it starts or beyond the time limits is skipped and counted.
  // `name`: a Trace::names index; `thread`: the calling thread (fold_thread).
  void api_call(int64_t row, int64_t process_db, int64_t correlation, int64_t start, int64_t end,
                int32_t name, int32_t thread = 0);
  // The activities were sorted (Activities::sort: row i was row order[i]; empty when nothing
  // moved): the rows the builder keeps for launch calls and stream waits follow them. So the
  // calls can be read after the sort, onto the rows' final places (their 4 columns are then not
  // permuted: 24 bytes a row less to move).
  void moved(const std::vector<uint32_t>& order);
  // A stream's wait on a CUDA event (a sync row of type stream_wait_event) and an event's record
  // (a cuda_event row), before the GPU rows: once it has both, the builder keeps each GPU row's
  // (stream, correlation id) while the rows come (24 bytes per row, only for such traces), and
  // done() turns each wait into a Trace::stream_waits edge: from the last operation launched on
  // the recording stream before the record (correlation ids follow the host's call order) to the
  // first one launched on the waiting stream after the wait. The record is the event's latest
  // before the wait.
  void stream_wait(int64_t process_db, int64_t stream, int64_t correlation, int64_t event);
  void cuda_event(int64_t process_db, int64_t stream, int64_t correlation, int64_t event);
  // A row of `table` that cannot be used (`why`: an integer column holding text), skipped and
  // counted.
  void bad_row(int64_t row, const char* table, const std::string& why);
  // `n` values of `table` cut at their cap (tracedb/harden.h), counted with the skipped rows;
  // `first` says which and how long.
  void cut(const char* table, int64_t n, const std::string& first);
  // Reports the rows since the last tick.
  void done();
  // For rows named by their place in their table (`row` < 0 above: -1 - place) rather than
  // their id: finds the id of the place, asked for the first skipped row only (its message is
  // the one kept); nullptr when rows are named by id again.
  void row_ids(std::function<int64_t(int64_t)> id_of) { row_id_of_ = std::move(id_of); }

 private:
  bool check(int64_t row, int p, int64_t s, int64_t e, const char* table);
  void skip_row(int64_t row, const char* table, const char* why);
  int32_t link(int64_t process_db, int64_t correlation, int16_t device, int64_t s, int64_t e);
  void launched(int64_t process_db, int64_t correlation, size_t i);

  Trace& t_;
  std::string source_;
  std::function<void(int64_t)> tick_;
  std::function<int64_t(int64_t)> row_id_of_;
  int64_t row_id(int64_t row) const;
  Names names_;
  Shapes shapes_;
  std::map<int64_t, int16_t> proc_;  // process.id -> Trace::processes index
  int64_t last_id_ = INT64_MIN;
  int last_index_ = -1;
  int64_t main_process_ = -1;
  // (process, external id) -> the calls that pushed it, as a chain in call order: ext_first
  // holds the first (1-based), next_call the following one (-1: last). Grouped calls share their
  // group's external id.
  LinkTable ext_first_;
  std::vector<int32_t> next_call_, last_call_;
  // (process, correlation id) -> the chain of the external id pushed around that launch
  // (1-based first call; with the top bit set, an index into `several_` when a launch carries
  // more than one external id).
  LinkTable linked_;
  std::vector<std::vector<uint32_t>> several_;
  std::unordered_map<std::string, int32_t> copy_names_;  // "Memcpy <kind>" per kind
  int32_t memset_name_ = -1;
  int64_t rows_ = 0;
  // (process, correlation id) -> 1 + the first GPU row of that launch; further rows of one launch
  // (a CUDA graph's kernels share their cudaGraphLaunch) chain through more_launched_.
  bool expect_calls_ = true;
  LinkTable launched_;
  std::unordered_map<uint32_t, uint32_t> more_launched_;
  std::vector<int8_t> sync_name_;  // per Trace::names index: -1 unknown, 0 no, 1 a sync call
  // Stream waits (stream_wait, cuda_event): the waits and records, and the GPU rows by stream.
  struct EventUse {
    int16_t process = 0;
    int32_t stream = -1;
    int64_t correlation = 0, event = 0;
  };
  struct StreamRow {
    int16_t process = 0;
    int32_t stream = -1;
    int64_t correlation = 0;
    size_t row = 0;
  };
  std::vector<EventUse> waits_, records_;
  std::vector<StreamRow> stream_rows_;
  void stream_row(int p, int64_t stream, int64_t correlation, size_t i) {
    if (!waits_.empty() && !records_.empty() && correlation >= 0) {
      stream_rows_.push_back(
          {static_cast<int16_t>(p), static_cast<int32_t>(stream), correlation, i});
    }
  }
  void resolve_waits();
};

// Per row: inline, as the loader's loop calls them millions of times.
inline int TraceBuilder::process_index(int64_t db_id) {
  if (db_id == last_id_) return last_index_;
  auto it = proc_.find(db_id);
  last_id_ = db_id;
  last_index_ = it == proc_.end() ? -1 : it->second;
  return last_index_;
}

inline bool TraceBuilder::check(int64_t row, int p, int64_t s, int64_t e, const char* table) {
  if (++rows_ == kTickRows) {
    tick_(rows_);
    rows_ = 0;
  }
  if (p < 0) {
    skip_row(row, table, "has no process");
    return false;
  }
  if (e < s) {
    skip_row(row, table, "ends before it starts");
    return false;
  }
  if (!in_time_limit(s, e)) {
    skip_row(row, table, "has a time beyond +-2^61 ns");
    return false;
  }
  if (!in_duration_limit(s, e)) {
    skip_row(row, table, "lasts longer than 2^50 ns (13 days)");
    return false;
  }
  return true;
}

inline size_t TraceBuilder::kernel(int64_t row, int64_t process_db, int64_t device, int64_t stream,
                                   int64_t start, int64_t end, int32_t name, int64_t correlation) {
  const int p = process_index(process_db);
  if (!check(row, p, start, end, "kernel")) return SIZE_MAX;
  const auto dev = static_cast<int16_t>(device);
  const size_t i = t_.activities.push(start, end, name, static_cast<int32_t>(stream), dev,
                                      static_cast<int16_t>(p), Kind::kernel, 0);
  t_.activities.collective[i] =
      t_.collectives.empty() ? -1 : link(process_db, correlation, dev, start, end);
  if (expect_calls_ && correlation >= 0) launched(process_db, correlation, i);
  stream_row(p, stream, correlation, i);
  return i;
}

// A row of the trace's tables as the analyzer holds it, one conversion for both ways rows arrive
// (load.cpp reads the columns it needs into the row; TraceSink gets whole rows).
Process process_of(const tracedb::ProcessRow& row);
Device device_of(const tracedb::DeviceRow& row);
Collective collective_of(const tracedb::CollectiveRow& row);
// (Which rows are ranges, not marks nor ending before they start, is for the caller to say.)
Range range_of(const tracedb::NvtxRangeRow& row);

// An importer's rows straight into a TraceBuilder (tracedb/sink.h): the tables the analysis
// reads; the others (API calls, streams, strings' own rows, stats) are dropped.
class TraceSink final : public tracedb::RowSink {
 public:
  explicit TraceSink(TraceBuilder& b) : b_(b) {}
  using tracedb::RowSink::insert;
  int64_t insert(const tracedb::ProcessRow& row) override;
  int64_t insert(const tracedb::DeviceRow& row) override;
  int64_t insert(const tracedb::CollectiveRow& row) override;
  int64_t insert(const tracedb::ExternalCorrelationRow& row) override;
  int64_t insert(const tracedb::KernelRow& row) override;
  int64_t insert(const tracedb::MemcpyRow& row) override;
  int64_t insert(const tracedb::MemsetRow& row) override;
  int64_t insert(const tracedb::NvtxRangeRow& row) override;
  int64_t insert(const tracedb::ApiCallRow& row) override;
  // (Before the GPU rows: TraceBuilder::stream_wait.)
  int64_t insert(const tracedb::SyncRow& row) override;
  int64_t insert(const tracedb::CudaEventRow& row) override;
  int64_t intern(std::string_view value) override { return b_.name(value); }
  void set_meta(std::string_view key, std::string_view value) override { b_.meta(key, value); }
  void correlations_from(int64_t lowest) override { b_.correlations_from(lowest); }
  void rows_ahead(int64_t gpu_rows, int64_t collectives) override;

 private:
  TraceBuilder& b_;
  int64_t processes_ = 0, collectives_ = 0, kernels_ = 0, memcpys_ = 0, memsets_ = 0, ranges_ = 0,
          api_calls_ = 0, syncs_ = 0, events_ = 0;
};

// One input of load_sources: a trace database (`fill` empty), or a function that feeds a
// builder the rows of `path` (an importer through TraceSink). Sources load in parallel.
struct Source {
  std::string path;
  std::function<void(TraceBuilder&)> fill;
};
// load() over sources (load.h); what fill throws is rethrown, the first in source order.
Trace load_sources(const std::vector<Source>& sources, const LoadOptions& options);

// What load() does once the rows are in: sorts the activities, classifies them, orders ranges.
void finish_trace(Trace& t, const Rules& rules);

}  // namespace c3::analyzer
