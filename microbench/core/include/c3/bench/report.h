// c3bench's outputs: the aligned table (nccl-tests-like columns) on stdout, JSON (--json) and the
// bench_run / bench_result tables of a trace database (--db).
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "c3/bench/runner.h"
#include "c3/tracedb/output_file.h"

namespace c3::tracedb {
class Writer;
struct BenchResultRow;
}  // namespace c3::tracedb

namespace c3::bench {

struct RunInfo {
  std::string started_at;  // UTC, ISO 8601 (common::utc_now_iso8601() at start)
  std::string backend;
  bool simulated = false;
  std::string description;
  std::string timing_overhead;
  std::string command_line;
  std::string options_json;
  int gpus = 1;
  int rank = 0;
  int warmup = 0;
  int iterations = 0;
};

// Table: a header, then one line per result as it arrives, then the counts and a legend of the
// columns, every line within kWidth columns. `cases` (the sweep's, build_cases) size the
// configuration columns: what every case shares (compute, comm, knobs) is said once above the
// table, what varies is a column while the table fits, else a '# ...' line that heads its rows.
// A row whose concurrency did not pay is followed by a '#       case N:' line with its notes
// (result_notes), and so is a chunked schedule's speedup and decomposition loss.
class TablePrinter {
 public:
  static constexpr size_t kWidth = 120;
  enum class Part { compute, comm, knobs };

  TablePrinter(FILE* out, const RunInfo& info, const std::vector<Case>& cases);
  void header();
  void row(const Result& r);
  void footer(const std::vector<Result>& results);

 private:
  FILE* out_;
  RunInfo info_;
  std::vector<std::pair<Part, std::string>> shared_;  // the same in every case
  std::vector<std::pair<Part, size_t>> columns_;      // columns and their widths, outer first
  std::vector<Part> groups_;                          // heading lines, outer first
  std::string last_group_;
};

// The marks of a result's row: "!c3>serial" when concurrent was slower than serial
// (T_c3 > T_serial), "!frac<0" when the fraction of ideal is negative (realized speedup below 1).
std::vector<std::string> result_notes(const Result& r);

// JSON document of a whole run (schema "c3bench/1", documented in docs/c3bench.md).
std::string to_json(const RunInfo& info, const std::vector<Result>& results);

// The columns of bench_result that describe case `c`: case_id, label, compute, comm, comm_bytes,
// knobs and the typed configuration (schema.h, C3_BENCH_CONFIG_COLUMNS).
void case_columns(const Case& c, tracedb::BenchResultRow& row);

// Inserts the run's bench_run row and its bench_result rows (no commit).
void write_tables(tracedb::Writer& db, const RunInfo& info, const std::vector<Result>& results);

// Adds the run to the trace the collector writes for this process (c3scope_trace_append), when
// it runs under the collector. recorded: the collector is there; appended: the rows are in.
struct AppendResult {
  bool recorded = false;
  bool appended = false;
  std::string error;
};
AppendResult append_to_trace(const RunInfo& info, const std::vector<Result>& results);

// Writes the run into `path`, a trace database holding the bench tables, under the output
// policy (an existing file only with rules.force). Throws tracedb::WriteError or
// tracedb::OutputError.
void write_db(const std::string& path, const RunInfo& info, const std::vector<Result>& results,
              const tracedb::OutputRules& rules = {});
// Writes the run into an output opened before the work (its temporary); the caller commits it
// (with the command's other outputs: tracedb::OutputSet). Throws tracedb::WriteError.
void write_db(tracedb::OutputPath& target, const RunInfo& info, const std::vector<Result>& results);

}  // namespace c3::bench
