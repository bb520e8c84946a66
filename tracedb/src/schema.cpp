#include "c3/tracedb/schema.h"

#include <array>

namespace c3::tracedb {
namespace {

#define C3_COLUMN_DESC(name, type, sql, doc) ColumnDesc{#name, sql, doc},
#define C3_COLUMN_ARRAY(sqlname, Row, COLS, doc) \
  constexpr ColumnDesc k_##sqlname##_columns[] = {COLS(C3_COLUMN_DESC)};
C3_TABLES(C3_COLUMN_ARRAY)
#undef C3_COLUMN_ARRAY

#define C3_TABLE_DESC(sqlname, Row, COLS, doc) TableDesc{#sqlname, doc, k_##sqlname##_columns},
const TableDesc kTables[] = {C3_TABLES(C3_TABLE_DESC)};
#undef C3_TABLE_DESC

constexpr ColumnDesc kGpuActivityColumns[] = {
    {"process_id", "INTEGER", "process.id"},
    {"device_id", "INTEGER", "Device ordinal"},
    {"stream_id", "INTEGER", "Stream id"},
    {"kind", "TEXT", "kernel, memcpy or memset"},
    {"name", "TEXT", "Kernel name; 'Memcpy <copy_kind>' or 'Memset' for copies and sets"},
    {"start_ns", "INTEGER", "Start (trace clock)"},
    {"end_ns", "INTEGER", "End (trace clock)"},
    {"bytes", "INTEGER", "Bytes moved or set; NULL for kernels"},
    {"correlation_id", "INTEGER", "CUPTI correlation id"},
    {"row_id", "INTEGER", "id of the row in the kernel, memcpy or memset table"},
};

constexpr ColumnDesc kNvtxColumns[] = {
    {"process_id", "INTEGER", "process.id"},
    {"thread_id", "INTEGER", "OS thread id"},
    {"domain", "TEXT", "NVTX domain ('default' for the default domain)"},
    {"name", "TEXT", "Range or mark message"},
    {"start_ns", "INTEGER", "Start (trace clock)"},
    {"end_ns", "INTEGER", "End (trace clock); start_ns for marks"},
    {"depth", "INTEGER", "Push/pop nesting depth from 0; NULL for start/end ranges and marks"},
};

constexpr ColumnDesc kCollectiveActivityColumns[] = {
    {"collective_id", "INTEGER", "collective.id"},
    {"process_id", "INTEGER", "process.id"},
    {"kind", "TEXT", "kernel, memcpy or memset"},
    {"row_id", "INTEGER", "id of the row in that table"},
    {"start_ns", "INTEGER", "Start on the GPU (trace clock)"},
    {"end_ns", "INTEGER", "End on the GPU (trace clock)"},
};

constexpr ColumnDesc kCollectiveKernelColumns[] = {
    {"collective_id", "INTEGER", "collective.id"},
    {"kernel_id", "INTEGER", "kernel.id of a kernel the call (or its group) launched"},
    {"process_id", "INTEGER", "process.id"},
};

constexpr ColumnDesc kCollectiveGpuColumns[] = {
    {"collective_id", "INTEGER", "collective.id"},
    {"process_id", "INTEGER", "process.id"},
    {"start_ns", "INTEGER", "First start of its GPU work (trace clock)"},
    {"end_ns", "INTEGER", "Last end of its GPU work"},
    {"kernel_count", "INTEGER", "Kernels linked to the call (grouped calls share them)"},
    {"activity_count", "INTEGER", "Kernels, copies and sets linked to the call"},
};

const ViewDesc kViews[] = {
    {"gpu_activity",
     "Kernels, copies and sets in one relation, for plain-SQL users (pandas, the sqlite3 shell)",
     "SELECT k.process_id, k.device_id, k.stream_id, 'kernel' AS kind, s.value AS name, "
     "k.start_ns, k.end_ns, NULL AS bytes, k.correlation_id, k.id AS row_id "
     "FROM kernel k JOIN string s ON s.id = k.name_id "
     "UNION ALL SELECT process_id, device_id, stream_id, 'memcpy', 'Memcpy ' || copy_kind, "
     "start_ns, end_ns, bytes, correlation_id, id FROM memcpy "
     "UNION ALL SELECT process_id, device_id, stream_id, 'memset', 'Memset', start_ns, end_ns, "
     "bytes, correlation_id, id FROM memset",
     kGpuActivityColumns},
    {"nvtx", "NVTX ranges and marks with the columns most queries need",
     "SELECT process_id, thread_id, domain, name, start_ns, end_ns, depth FROM nvtx_range",
     kNvtxColumns},
    {"collective_activity",
     "The GPU work each NCCL call enqueued (through CUPTI external correlation): its kernels, and "
     "the copies NCCL makes for some operations (a 1-rank AllReduce out of place is a copy); all "
     "calls of one group share the group's work",
     "SELECT c.id AS collective_id, c.process_id AS process_id, g.kind AS kind, g.row_id AS "
     "row_id, "
     "g.start_ns AS start_ns, g.end_ns AS end_ns "
     "FROM collective c JOIN external_correlation e ON e.process_id = c.process_id "
     "AND e.external_kind = 'custom0' AND e.external_id = c.external_id "
     "JOIN gpu_activity g ON g.process_id = c.process_id AND g.correlation_id = e.correlation_id",
     kCollectiveActivityColumns},
    {"collective_kernel", "The kernels each NCCL call (or its group) launched",
     "SELECT collective_id, row_id AS kernel_id, process_id FROM collective_activity "
     "WHERE kind = 'kernel'",
     kCollectiveKernelColumns},
    {"collective_gpu", "GPU time span of each NCCL call's work",
     "SELECT collective_id, process_id, MIN(start_ns) AS start_ns, MAX(end_ns) AS end_ns, "
     "SUM(kind = 'kernel') AS kernel_count, COUNT(*) AS activity_count "
     "FROM collective_activity GROUP BY collective_id",
     kCollectiveGpuColumns},
};

const IndexDesc kIndexes[] = {
    {"kernel_by_time", "kernel", "process_id, device_id, start_ns"},
    {"kernel_by_correlation", "kernel", "process_id, correlation_id"},
    {"memcpy_by_time", "memcpy", "process_id, device_id, start_ns"},
    {"memset_by_time", "memset", "process_id, device_id, start_ns"},
    {"sync_by_time", "sync", "process_id, start_ns"},
    {"nvtx_by_thread", "nvtx_range", "process_id, thread_id, start_ns"},
    {"collective_by_comm", "collective", "comm_id, seq"},
    {"external_by_id", "external_correlation", "process_id, external_kind, external_id"},
    {"api_by_correlation", "api_call", "process_id, correlation_id"},
};

const CounterDesc kCounters[] = {
    {"cupti_records", "CUPTI activity records decoded"},
    {"cupti_dropped_records",
     "Records CUPTI reported as dropped (cuptiActivityGetNumDroppedRecords)"},
    {"cupti_buffers", "Activity buffers CUPTI filled and handed back"},
    {"buffer_pool_exhausted",
     "Times CUPTI asked for a buffer while the pool (C3SCOPE_BUFFER_MB) was used up; CUPTI drops "
     "the records it could not store and counts them in cupti_dropped_records"},
    {"cupti_unknown_records", "Records of kinds c3scope does not store (counted, then skipped)"},
    {"cupti_invalid_records", "Records with impossible fields (end before start), skipped"},
    {"cupti_status",
     "1 when CUPTI is recording GPU activity, 0 otherwise; detail names the CUPTI library used "
     "or says why none is (no GPU, no CUPTI, another tool owns it); 0 without a detail: the "
     "process never initialized CUDA (the collector starts CUPTI then), which `c3scope info` "
     "says"},
    {"nvtx_events", "NVTX calls recorded (ranges, marks, names)"},
    {"nvtx_unclosed_ranges", "Ranges still open at the end (written with closed = 0)"},
    {"nvtx_unmatched_ends", "Pops or range ends with no matching push or start"},
    {"nccl_calls", "NCCL calls intercepted"},
    {"rows_written", "Rows the writer wrote (committed with this counter)"},
    {"queue_dropped_rows",
     "Events dropped because the in-memory queue was full (the writer fell behind by more than "
     "its bound) or arrived after the final flush"},
    {"write_errors",
     "Inserts or commits that failed (a failing or full disk), each rolling back the open "
     "transaction; detail is the first error (docs/collector.md, Robustness)"},
    {"write_dropped_rows",
     "Rows of the transactions those errors rolled back: lost, at most one flush period each"},
    {"collector_overhead_ns",
     "Host time spent in c3scope code on the application's threads (callbacks, wrappers)"},
    {"writer_ns", "Time the background writer spent decoding and writing"},
    {"flushes", "Periodic commits (C3SCOPE_FLUSH_MS)"},
    {"import_events", "Imported traces: events read from the input files"},
    {"import_malformed",
     "Imported traces: events that could not be used (bad JSON, a missing field); detail is the "
     "first, with its position"},
    {"import_malformed_<reason>",
     "Imported traces: the malformed events that are not rejected rows, per reason (not_json, "
     "not_object, no_ph, no_cat, no_ts, no_dur, times, cut), each event under one; detail is "
     "the first"},
    {"import_rejected_<table>",
     "Imported traces: rows of <table> (kernel, memcpy, memset, api_call, nvtx_range, ...) "
     "rejected for impossible times (a start before 0, an end before the start, a time past 2^62 "
     "ns), counted in import_malformed too; detail is the first, naming the file and the record"},
    {"import_cpu_ops_not_kept",
     "Imported PyTorch traces: CPU ops (cpu_op and python_function events, but ProfilerStep#N, "
     "kept as ranges) that no table holds, so analyze, the GUI and export do not show them"},
    {"import_cpu_collectives_<backend>_<op>",
     "Imported PyTorch traces: collectives of a process group that runs them on host threads "
     "(gloo, mpi, ucc: the <backend>:<op> annotation of each call; without one, the "
     "record_param_comms ops of a process with no NCCL collective, backend 'unnamed'); detail is "
     "'<backend>:<op>'. Seen, not analysed: the metrics cover GPU collectives (NCCL kernels)"},
    {"import_salvaged",
     "Imported traces, import --salvage: 1 when a damaged or truncated gzip was cut at the "
     "damage; detail says where and how much was kept"},
};

constexpr std::string_view kV2Tables[] = {"bench_run", "bench_result"};
constexpr std::string_view kV3Rebuilt[] = {"bench_result"};
constexpr std::string_view kV4Tables[] = {"cuda_event"};
const Migration kMigrations[] = {
    {2, "c3bench result tables (bench_run, bench_result)", kV2Tables},
    {3,
     "typed configuration of each c3bench case in bench_result (compute_kind to chunks); an "
     "older file's rows get them from their labels",
     {},
     kV3Rebuilt},
    {4,
     "CUDA event records (cuda_event): the stream of each cudaEventRecord, for cross-stream event "
     "waits on the critical path",
     kV4Tables},
};

}  // namespace

std::string create_table_sql(const TableDesc& t, bool temp) {
  std::string sql =
      std::string(temp ? "CREATE TEMP TABLE IF NOT EXISTS " : "CREATE TABLE IF NOT EXISTS ") +
      std::string(t.name) + " (";
  bool first = true;
  for (const auto& c : t.columns) {
    if (!first) sql += ", ";
    first = false;
    sql += std::string(c.name) + " " + std::string(c.sql_type);
  }
  sql += ");\n";
  return sql;
}

namespace {

// Markdown table cells must not contain a bare '|'.
std::string cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::span<const TableDesc> tables() {
  return kTables;
}
std::span<const ViewDesc> views() {
  return kViews;
}
std::span<const IndexDesc> indexes() {
  return kIndexes;
}
std::span<const CounterDesc> known_counters() {
  return kCounters;
}

#define C3_DEFINE_TABLE_OF(sqlname, Row, COLS, doc) \
  template <>                                       \
  const TableDesc& table_of<Row>() {                \
    static const TableDesc& d = *[] {               \
      for (const auto& t : kTables)                 \
        if (t.name == #sqlname) return &t;          \
      return &kTables[0];                           \
    }();                                            \
    return d;                                       \
  }
C3_TABLES(C3_DEFINE_TABLE_OF)
#undef C3_DEFINE_TABLE_OF

std::string create_tables_sql() {
  std::string sql;
  for (const auto& t : kTables) sql += create_table_sql(t, /*temp=*/false);
  return sql;
}

std::span<const Migration> migrations() {
  return kMigrations;
}

std::string migration_sql(int from_version, bool temp) {
  std::string sql;
  for (const auto& m : kMigrations) {
    if (m.to_version <= from_version) continue;
    for (std::string_view name : m.new_tables) {
      for (const auto& t : kTables) {
        if (t.name == name) sql += create_table_sql(t, temp);
      }
    }
  }
  return sql;
}

std::string create_views_sql() {
  std::string sql;
  for (const auto& v : kViews) {
    sql += "CREATE VIEW IF NOT EXISTS " + std::string(v.name) + " AS " + std::string(v.select_sql) +
           ";\n";
  }
  return sql;
}

std::string create_indexes_sql() {
  std::string sql;
  for (const auto& i : kIndexes) {
    sql += "CREATE INDEX IF NOT EXISTS " + std::string(i.name) + " ON " + std::string(i.table) +
           " (" + std::string(i.columns) + ");\n";
  }
  return sql;
}

std::string schema_markdown() {
  std::string md;
  md += "# Trace schema (version " + std::to_string(kSchemaVersion) + ")\n\n";
  md +=
      "<!-- Generated from tracedb/include/c3/tracedb/schema.h by `c3scope schema`; "
      "tests fail when this file and the schema disagree. Do not edit by hand. -->\n\n";
  md +=
      "One SQLite file per traced process. `PRAGMA user_version` holds the schema version and "
      "the `meta` table says which c3scope wrote the file and from what. Timestamps are "
      "integer nanoseconds on the recording process's trace clock (see `process`); intervals "
      "are half-open `[start_ns, end_ns)`. Names of tables, columns and views are a contract: "
      "they change only with a schema version bump and a migration.\n\n";
  md += "## Versions\n\n| version | change |\n|---|---|\n| 1 | first release |\n";
  for (const auto& m : kMigrations) {
    md += "| " + std::to_string(m.to_version) + " | " + cell(m.what) + " |\n";
  }
  md +=
      "\nReaders open older files read-only and migrate them on the fly, so every query runs on "
      "any readable version; the file itself is never modified. The tables a later version "
      "added appear as empty temporary tables of the reading connection. A table whose "
      "columns a later version changed appears as a temporary table of the new columns that "
      "shadows the file's, holding the file's rows: from v2, `bench_result` gets its typed "
      "configuration (`compute_kind` to `chunks`) from each row's `label`, read as c3bench "
      "wrote it (`<compute> + <comm>[ [<knobs>]]`); a label that cannot be read leaves them "
      "NULL, and `comm_dtype`, which labels do not carry, stays NULL.\n\n";
  md += "## Tables\n\n";
  for (const auto& t : kTables) {
    md += "### `" + std::string(t.name) + "`\n\n" + std::string(t.doc) + ".\n\n";
    md += "| column | type | meaning |\n|---|---|---|\n";
    for (const auto& c : t.columns) {
      md += "| `" + std::string(c.name) + "` | " + cell(c.sql_type) + " | " + cell(c.doc) + " |\n";
    }
    md += "\n";
  }
  md += "## Views\n\n";
  for (const auto& v : kViews) {
    md += "### `" + std::string(v.name) + "`\n\n" + std::string(v.doc) + ".\n\n";
    md += "| column | type | meaning |\n|---|---|---|\n";
    for (const auto& c : v.columns) {
      md += "| `" + std::string(c.name) + "` | " + cell(c.sql_type) + " | " + cell(c.doc) + " |\n";
    }
    md += "\n```sql\n" + std::string(v.select_sql) + "\n```\n\n";
  }
  md +=
      "## Indexes\n\nCreated when the writer closes the file cleanly (a killed process leaves "
      "a trace without them; it is still complete up to the last commit).\n\n";
  md += "| index | table | columns |\n|---|---|---|\n";
  for (const auto& i : kIndexes) {
    md += "| `" + std::string(i.name) + "` | `" + std::string(i.table) + "` | " +
          std::string(i.columns) + " |\n";
  }
  md += "\n## Counters in `stats`\n\n| name | meaning |\n|---|---|\n";
  for (const auto& c : kCounters) {
    md += "| `" + std::string(c.name) + "` | " + cell(c.doc) + " |\n";
  }
  return md;
}

}  // namespace c3::tracedb
