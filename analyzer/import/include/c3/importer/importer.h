// Importers: other tools' traces into c3scope trace databases, writing the same tables and
// views as the collector (kernel, memcpy, memset, api_call, nvtx_range, collective, process,
// device, ...) with meta.source = 'importer:<format>' and meta.source_file, so that the analyzer
// and everything downstream work the same on imported traces.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace c3::tracedb {
class Writer;
class RowSink;
}  // namespace c3::tracedb

namespace c3::importer {

enum class Format { kineto, nsys, unknown };
const char* format_name(Format f);
// By content: gzip or '{' -> Kineto JSON; an SQLite file with Nsight Systems' tables -> nsys.
// `why` says what the file looked like when it is neither.
Format detect(const std::string& path, std::string* why);

struct Stats {
  int64_t input_bytes = 0;  // bytes of JSON (decompressed) or of the SQLite file
  int64_t events = 0;       // input events (records) read
  int64_t processes = 0, kernels = 0, memcpys = 0, memsets = 0, api_calls = 0, ranges = 0,
          collectives = 0;
  bool rounded = false;   // hta_rounding applied (the file had fractional timestamps)
  int64_t malformed = 0;  // events that could not be used, counted in stats as import_malformed
  std::string first_malformed;  // where the first one was ("file: event N at byte B: why")
  // Those that are not rejected rows (below), per reason (each event counted once, under one
  // reason): stats import_malformed_<reason>, the first one as its detail. Reasons: not_json,
  // not_object, no_ph, no_cat, no_ts, no_dur, times (impossible times of an event that is no
  // row), cut (the input ends inside the event), long_text (a name past common::kNameLimit,
  // cut and kept).
  std::map<std::string, int64_t> malformed_by;
  std::map<std::string, std::string> first_malformed_by;
  // Of those, rows rejected for impossible times (negative, ending before they start, past
  // int64 nanoseconds), per table: stats import_rejected_<table>, the first one as its detail.
  std::map<std::string, int64_t> rejected;
  std::map<std::string, std::string> first_rejected;
  // PyTorch CPU ops (cpu_op and python_function events; ProfilerStep#N ops are kept as ranges)
  // that the trace has no table for: stats import_cpu_ops_not_kept, per process.
  int64_t cpu_ops_not_kept = 0;
  // CPU-side collectives (gloo, mpi, ucc process groups: their ops run on host threads, no NCCL
  // kernel) seen, per (backend, op), e.g. ("gloo", "all_reduce"): stats
  // import_cpu_collectives_<backend>_<op> per process; the analysis does not measure them.
  std::map<std::pair<std::string, std::string>, int64_t> cpu_collectives;
  // --salvage: what a damaged compressed stream kept ("" when it was whole).
  std::string salvaged;
  void add(const Stats& o);
  // Counts one unusable event; `where` says which and why, `reason` (a word) which kind.
  void bad(const std::string& where);
  void bad(const std::string& reason, const std::string& where);
  // Counts one row of `table` rejected for its times; `where` names the file and the record.
  void reject(const std::string& table, const std::string& where);
};

using Progress = std::function<void(int64_t done_bytes, int64_t total_bytes)>;

struct Options {
  // HTA compatibility: when a Kineto file has fractional-microsecond timestamps, round each GPU
  // activity's start up and end down to whole microseconds, as Holistic Trace Analysis does
  // (its published numbers include this rounding). Off: timestamps are kept to the nanosecond.
  bool hta_rounding = false;
  // The output is a scratch conversion (tracedb::WriterOptions::scratch: no journal, no indexes).
  bool scratch = false;
  // CUDA runtime/driver calls as api_call rows (Kineto; Nsight exports into a sink other than a
  // trace database). Collectives get their host start from them while importing either way; the
  // analysis's launch statistics, queues and idle causes read them, as do the GUI's details and
  // the Perfetto export.
  bool api_calls = true;
  // A damaged or truncated gzip stream: keep the events before the damage (counted in stats,
  // with how much was kept) instead of failing. Off: the import fails and writes nothing.
  bool salvage = false;
  // import_files: replace an existing output file (never an input; tracedb/output_file.h).
  bool force = false;
};

// PyTorch profiler / Kineto Chrome-trace JSON, plain or gzip: one process per file (rank from
// distributedInfo). Streams the file: memory grows with the events kept, not with the file.
// Throws std::invalid_argument (one line naming the file) when a file is not Kineto JSON at all.
// `out` is a trace file's Writer, or any sink of rows (tracedb/sink.h; the analyzer's map reads
// the rows straight into memory).
Stats import_kineto(const std::string& path, tracedb::RowSink& out, const Options& options = {},
                    const Progress& progress = {});

// One complete event ('X', with a dur and a category) of a Kineto trace as written, for an
// analysis that reads the events itself (the analyzer's HTA-model critical path, which needs
// the CPU ops no table keeps). Strings are valid during the callback only.
struct KinetoEvent {
  int64_t index = 0;  // position in traceEvents, every element counted (HTA's ev_idx)
  std::string_view cat, name;
  double ts = 0, dur = 0;    // microseconds, as written
  bool ts_float = false;     // ts was written as a non-integer JSON number (or is missing)
  bool has_ts = false;       // a numeric ts
  int64_t pid = 0, tid = 0;  // 0 when not integers
  // From args; -1 when absent or not an integer.
  int64_t stream = -1, correlation = -1, wait_on_stream = -1, wait_on_record = -1;
};

// Calls `f` with each complete event of a Kineto JSON file (plain or gzip), in file order.
// Throws std::invalid_argument (one line naming the file) for a file that cannot be read as
// Kineto JSON, or that is damaged or truncated (no partial answer).
void read_kineto_events(const std::string& path, const std::function<void(const KinetoEvent&)>& f);

// Nsight Systems SQLite export (nsys export --type sqlite): one process per exported process.
// Tables and columns missing in a given nsys version are skipped.
Stats import_nsys(const std::string& path, tracedb::Writer& out, const Progress& progress = {});
// The same rows into any sink (the analyzer's map reads an export straight into its trace, as it
// reads a PyTorch file: no database in between); the per-file counters that a trace database
// keeps in its stats table go to `stats` when it is not null. Of `options`, api_calls: without
// it the runtime calls are read and counted (Stats) but not written.
Stats import_nsys(const std::string& path, tracedb::RowSink& out, const Options& options,
                  const Progress& progress, tracedb::Writer* stats);

// Why an interval cannot be a row ("" when it can): a negative time, an end before the start, or
// a time past kMaxTimeNs. Every importer checks every timed row with it.
inline constexpr int64_t kMaxTimeNs = int64_t{1} << 62;  // about 146 years past the epoch
std::string check_times(int64_t start_ns, int64_t end_ns);

// Imports each input in turn into a new trace database at `out` (an existing file only with
// options.force, never an input: tracedb/output_file.h) and records the totals in its stats
// table. Throws std::invalid_argument or tracedb::OutputError with one line.
Stats import_files(const std::vector<std::string>& inputs, const std::string& out,
                   const Options& options = {}, const Progress& progress = {});

}  // namespace c3::importer
