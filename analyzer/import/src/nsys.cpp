// Nsight Systems SQLite export -> trace database. Each nsys version adds and renames columns:
// every table and column is looked up first, and what is missing is skipped (or defaulted).
// The stages, per table: the query (the columns this export has, defaults for the others),
// each result row decoded into a trace row, and the ImportWriter that writes it.
#include <sqlite3.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "c3/common/copy_kinds.h"
#include "c3/importer/importer.h"
#include "c3/tracedb/harden.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"
#include "c3/tracedb/writer.h"
#include "import_writer.h"

namespace c3::importer {
namespace {

// An integer column that holds text or a blob (SQLite would read it as 0): the row is skipped.
struct WrongType {
  int col;
  int type;
};

class Db {
 public:
  explicit Db(const std::string& path) : path_(path) {
    // Read-only and immutable (nothing, -shm or -wal, is created next to the export), hardened
    // against a hostile file (tracedb/harden.h).
    try {
      db_ = tracedb::open_read_only(path);
    } catch (const tracedb::ReadError& e) {
      throw std::invalid_argument(e.what());
    }
  }
  ~Db() { sqlite3_close_v2(db_); }  // (closes once any statement left open is finalized)
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Where a row with a wrong type is counted (each() with `count_bad`).
  std::function<void(const std::string&)> on_bad;

  // The columns of `table`; empty when the export has no such table. A view or a virtual table
  // in its place, or a table whose columns cannot be read, is an error naming it (a damaged
  // export is not "not an Nsight Systems export", nor one without kernels).
  std::set<std::string> columns(const std::string& table) {
    try {
      tracedb::require_tables(db_, path_, {table});
      std::set<std::string> out;
      tracedb::Query q(db_, "PRAGMA main.table_info(\"" + table + "\")");
      while (q.step()) out.insert(q.text(1));
      return out;
    } catch (const tracedb::ReadError& e) {
      if (e.kind() == tracedb::ReadError::Kind::cancelled ||
          e.kind() == tracedb::ReadError::Kind::hostile) {
        throw;
      }
      throw std::invalid_argument(std::string(e.what()) + " (table " + table + ")");
    }
  }

  // Runs `sql`, calling fn(stmt) per row. Throws on SQL errors (a damaged file: one line naming
  // it and the table); tracedb::ReadError when a signal or the work budget stopped it. A row
  // with an integer column that holds text is skipped; with `count_bad`, counted (on_bad).
  template <class F>
  void each(const std::string& sql, F&& fn, bool count_bad = true) {
    sqlite3_stmt* raw = nullptr;
    const int prepared = sqlite3_prepare_v2(db_, sql.c_str(), -1, &raw, nullptr);
    // Finalized however the loop ends: `fn` may throw (a cancelled or stopped load, whose rows go
    // straight into a trace and check for it as they go, or no memory), and an unfinalized
    // statement keeps the connection from closing.
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, sqlite3_finalize);
    if (prepared != SQLITE_OK) fail(prepared, sql);
    sqlite3_stmt* s = stmt.get();
    int rc;
    int64_t row = 0;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      ++row;
      try {
        fn(s);
      } catch (const WrongType& w) {
        if (count_bad && on_bad) {
          on_bad(path_ + ": " + tracedb::table_of(sql) + " row " + std::to_string(row) +
                 ": column " + tracedb::printable(sqlite3_column_name(s, w.col)) + " holds " +
                 (w.type == SQLITE_TEXT ? "text" : "a blob") + ", not an integer");
        }
      }
    }
    if (rc != SQLITE_DONE) {
      stmt.reset();  // (finalized first, as the error is read: the message it leaves)
      fail(rc, sql);
    }
  }

 private:
  [[noreturn]] void fail(int rc, const std::string& sql) {
    try {
      tracedb::throw_query_error(db_, rc, sql);
    } catch (const tracedb::ReadError& e) {
      if (e.kind() == tracedb::ReadError::Kind::cancelled ||
          e.kind() == tracedb::ReadError::Kind::hostile) {
        throw;
      }
      throw std::invalid_argument(e.what());
    }
  }
  std::string path_;
  sqlite3* db_ = nullptr;
};

int64_t i64(sqlite3_stmt* s, int c) {
  const int type = sqlite3_column_type(s, c);
  if (type == SQLITE_TEXT || type == SQLITE_BLOB) throw WrongType{c, type};
  return sqlite3_column_int64(s, c);
}
bool null(sqlite3_stmt* s, int c) {
  return sqlite3_column_type(s, c) == SQLITE_NULL;
}
// Text cut at `cap` bytes (tracedb/harden.h); `cut` says whether it was.
std::string text(sqlite3_stmt* s, int c, size_t cap = tracedb::kNameCap, bool* cut = nullptr) {
  const auto* t = reinterpret_cast<const char*>(sqlite3_column_text(s, c));
  if (t == nullptr) return {};
  const auto bytes = static_cast<size_t>(sqlite3_column_bytes(s, c));
  std::string out(t, std::min(bytes, cap + 1));
  out.resize(std::min(out.size(), std::strlen(out.c_str())));  // up to a NUL, as before
  const bool was_cut = tracedb::cap_text(out, cap);
  if (cut != nullptr) *cut = was_cut;
  return out;
}

// "col" if the table has it, else a default expression.
std::string col(const std::set<std::string>& cols, const std::string& name,
                const std::string& fallback) {
  return cols.count(name) ? "\"" + name + "\"" : fallback;
}

// nsys globalPid/globalTid: pid (or tid) in bits 24..47.
int64_t pid_of(int64_t global) {
  return (global >> 24) & 0xFFFFFF;
}

using Columns = std::set<std::string>;

// A column a query reads, and the SQL that stands for it in an export without it.
struct Column {
  const char* name;
  const char* fallback;
};

// "a, b, ...": each column as the table has it, or its fallback.
template <size_t N>
std::string columns(const Columns& cols, const Column (&list)[N]) {
  std::string sql;
  for (const Column& c : list) sql += (sql.empty() ? "" : ", ") + col(cols, c.name, c.fallback);
  return sql;
}

constexpr Column kActivityColumns[] = {{"globalPid", "0"},
                                       {"deviceId", "0"},
                                       {"contextId", "NULL"},
                                       {"streamId", "NULL"},
                                       {"correlationId", "NULL"}};
constexpr Column kKernelColumns[] = {{"mangledName", "NULL"},
                                     {"gridX", "1"},
                                     {"gridY", "1"},
                                     {"gridZ", "1"},
                                     {"blockX", "1"},
                                     {"blockY", "1"},
                                     {"blockZ", "1"},
                                     {"registersPerThread", "0"},
                                     {"staticSharedMemory", "0"},
                                     {"dynamicSharedMemory", "0"},
                                     {"gridId", "NULL"}};
constexpr Column kMemcpyColumns[] = {{"bytes", "0"},          {"copyKind", "0"},
                                     {"srcKind", "0"},        {"dstKind", "0"},
                                     {"srcDeviceId", "NULL"}, {"dstDeviceId", "NULL"}};
constexpr Column kMemsetColumns[] = {{"bytes", "0"}, {"value", "0"}, {"memKind", "0"}};
constexpr Column kStreamColumns[] = {{"contextId", "NULL"}, {"priority", "NULL"}, {"flag", "NULL"}};
constexpr Column kRuntimeColumns[] = {{"globalTid", "0"}, {"correlationId", "0"}};
constexpr Column kRuntimeResultColumns[] = {{"returnValue", "0"}, {"eventClass", "0"}};
constexpr Column kNvtxThreadColumns[] = {
    {"globalTid", "0"}, {"endGlobalTid", "NULL"}, {"domainId", "0"}};
constexpr Column kNvtxValueColumns[] = {
    {"category", "NULL"}, {"color", "NULL"}, {"int64Value", "NULL"}, {"doubleValue", "NULL"}};

std::string gpu_query(const Columns& gpu) {
  const std::string dev_id = gpu.count("cuDevice") ? "cuDevice" : col(gpu, "id", "0");
  return "SELECT " + dev_id + ", " + col(gpu, "name", "'unknown GPU'") + ", " +
         col(gpu, "smCount", "0") + ", " + col(gpu, "computeMajor", "0") + ", " +
         col(gpu, "computeMinor", "0") + ", " + col(gpu, "totalMemory", "0") + ", " +
         col(gpu, "memoryBandwidth", "NULL") + ", " + col(gpu, "l2CacheSize", "NULL") + ", " +
         col(gpu, "clockRate", "NULL") + ", " + col(gpu, "asyncEngines", "NULL") + ", " +
         col(gpu, "threadsPerWarp", "32") + ", " + col(gpu, "maxWarpsPerSm", "64") + ", " +
         col(gpu, "maxBlocksPerSm", "32") + ", " + col(gpu, "maxRegistersPerSm", "65536") + ", " +
         col(gpu, "maxShmemPerSm", "0") + ", " + col(gpu, "maxThreadsPerBlock", "1024") + ", " +
         col(gpu, "maxRegistersPerBlock", "65536") + ", " +
         col(gpu, "maxShmemPerBlockOptin", col(gpu, "maxShmemPerBlock", "0")) + ", " +
         col(gpu, "uuid", "NULL") + ", " + col(gpu, "busLocation", "NULL") +
         " FROM TARGET_INFO_GPU";
}

tracedb::DeviceRow device_row(sqlite3_stmt* s) {
  tracedb::DeviceRow d;
  d.device_id = i64(s, 0);
  d.name = text(s, 1);
  d.sm_count = i64(s, 2);
  d.cc_major = i64(s, 3);
  d.cc_minor = i64(s, 4);
  d.memory_bytes = i64(s, 5);
  if (!null(s, 6)) d.memory_bandwidth_bytes_per_s = i64(s, 6);
  if (!null(s, 7)) d.l2_bytes = i64(s, 7);
  if (!null(s, 8)) d.core_clock_khz = i64(s, 8) / 1000;
  if (!null(s, 9)) d.copy_engines = i64(s, 9);
  d.warp_size = i64(s, 10);
  d.max_threads_per_sm = i64(s, 11) * d.warp_size;
  d.max_blocks_per_sm = i64(s, 12);
  d.max_registers_per_sm = i64(s, 13);
  d.max_shared_memory_per_sm = i64(s, 14);
  d.max_threads_per_block = i64(s, 15);
  d.max_registers_per_block = i64(s, 16);
  d.max_shared_memory_per_block = i64(s, 17);
  if (!null(s, 18)) d.uuid = text(s, 18);
  if (!null(s, 19)) d.pci_bus_id = text(s, 19);
  return d;
}

// TARGET_INFO_CUDA_STREAM's flag: 1 default, 2 non-blocking, 3 the NULL stream.
std::string stream_flags(int64_t flag) {
  return flag == 2   ? "non_blocking"
         : flag == 1 ? "default"
         : flag == 3 ? "null"
                     : "flag " + std::to_string(flag);
}

// A GPU activity table in time order: the columns they all have (0..6), then `more` (SQL).
std::string activity_query(const Columns& cols, const std::string& table, const std::string& more) {
  return "SELECT start, \"end\", " + columns(cols, kActivityColumns) + ", " + more + " FROM " +
         table + " ORDER BY start";
}

template <class Row>
void activity_columns(Row& row, sqlite3_stmt* s) {
  row.start_ns = i64(s, 0);
  row.end_ns = i64(s, 1);
  row.device_id = i64(s, 3);
  if (!null(s, 4)) row.context_id = i64(s, 4);
  if (!null(s, 5)) row.stream_id = i64(s, 5);
  if (!null(s, 6)) row.correlation_id = i64(s, 6);
}

// NVTX event types.
constexpr int64_t kNvtxMark = 34, kNvtxPushPop = 59, kNvtxStartEnd = 60, kNvtxDomainCreate = 75;

class NsysImport {
 public:
  NsysImport(const std::string& path, tracedb::RowSink& out, tracedb::Writer* stats,
             const Progress& progress, bool api_calls = true)
      : path_(path), db_(path), writer_(out, stats), progress_(progress), api_calls_(api_calls) {
    db_.on_bad = [this](const std::string& where) { st_.bad(where); };
  }

  Stats run();

 private:
  void check_format();
  void read_strings();
  std::string string_of(int64_t id) const;
  int64_t session_start();
  void write_processes();
  int64_t process_of(int64_t global) const;
  std::set<std::pair<int64_t, int64_t>> devices_used();
  void write_devices();
  void write_streams();
  // False, with the row counted as rejected, when start..end cannot be a row's times.
  bool usable(const char* table, const char* nsys_table, int64_t start, int64_t end);
  // Each row of a GPU activity table (activity_query) with usable times: the shared columns,
  // then `decode` for the table's own. Returns how many were written.
  template <class Row, class Decode>
  int64_t write_activities(const char* table, const char* nsys_table, const Columns& cols,
                           const std::string& more, Decode decode);
  void write_kernels();
  void write_memcpys();
  void write_memsets();
  void write_api_calls();
  void write_nvtx();
  std::string nvtx_text() const;
  // Column `c`'s text cut at `cap` (tracedb/harden.h); a cut is counted as malformed, naming
  // `what` ("StringIds id 7").
  std::string capped(sqlite3_stmt* s, int c, size_t cap, const std::string& what);

  const std::string& path_;
  Db db_;
  ImportWriter writer_;
  const Progress& progress_;
  bool api_calls_ = true;  // the runtime calls written (else only counted)
  Stats st_;
  Columns kernel_cols_, memcpy_cols_, memset_cols_, runtime_cols_, nvtx_cols_;
  std::unordered_map<int64_t, std::string> strings_;  // StringIds
  std::map<int64_t, int64_t> proc_row_;               // globalPid -> process.id
};

Stats NsysImport::run() {
  check_format();
  read_strings();
  memcpy_cols_ = db_.columns("CUPTI_ACTIVITY_KIND_MEMCPY");
  memset_cols_ = db_.columns("CUPTI_ACTIVITY_KIND_MEMSET");
  runtime_cols_ = db_.columns("CUPTI_ACTIVITY_KIND_RUNTIME");
  nvtx_cols_ = db_.columns("NVTX_EVENTS");
  write_processes();
  write_devices();
  write_streams();
  if (!kernel_cols_.empty()) {
    write_kernels();
    if (progress_) progress_(st_.kernels, 0);
  }
  if (!memcpy_cols_.empty()) write_memcpys();
  if (!memset_cols_.empty()) write_memsets();
  if (!runtime_cols_.empty()) write_api_calls();
  if (!nvtx_cols_.empty()) write_nvtx();
  return st_;
}

std::string NsysImport::capped(sqlite3_stmt* s, int c, size_t cap, const std::string& what) {
  bool cut = false;
  std::string out = text(s, c, cap, &cut);
  if (cut) {
    st_.bad(path_ + ": " + what + ": a text of " + std::to_string(sqlite3_column_bytes(s, c)) +
            " bytes, cut to " + std::to_string(out.size()) + " (docs/outputs.md, Reading)");
  }
  return out;
}

void NsysImport::check_format() {
  kernel_cols_ = db_.columns("CUPTI_ACTIVITY_KIND_KERNEL");
  if (kernel_cols_.empty() && db_.columns("TARGET_INFO_GPU").empty() &&
      db_.columns("NVTX_EVENTS").empty()) {
    throw std::invalid_argument(
        "'" + path_ +
        "' is an SQLite file but not an Nsight Systems export (no "
        "CUPTI_ACTIVITY_KIND_KERNEL, TARGET_INFO_GPU or NVTX_EVENTS table)");
  }
}

void NsysImport::read_strings() {
  if (!db_.columns("StringIds").empty()) {
    db_.each("SELECT id, value FROM StringIds", [&](sqlite3_stmt* s) {
      const int64_t id = i64(s, 0);
      strings_[id] = capped(s, 1, tracedb::kNameCap, "StringIds id " + std::to_string(id));
    });
  }
}

std::string NsysImport::string_of(int64_t id) const {
  auto it = strings_.find(id);
  return it == strings_.end() ? std::string("?") : it->second;
}

int64_t NsysImport::session_start() {
  int64_t utc = 0;
  if (db_.columns("TARGET_INFO_SESSION_START_TIME").count("utcEpochNs")) {
    db_.each("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1",
             [&](sqlite3_stmt* s) { utc = i64(s, 0); });
  }
  return utc;
}

// One process row for each process that did GPU work (one for the whole file when none did).
void NsysImport::write_processes() {
  const int64_t session_utc = session_start();
  std::set<int64_t> gpids;
  for (const auto& [table, cols] :
       {std::pair{std::string("CUPTI_ACTIVITY_KIND_KERNEL"), kernel_cols_},
        std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMCPY"), memcpy_cols_},
        std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMSET"), memset_cols_}}) {
    if (cols.count("globalPid")) {
      db_.each(
          "SELECT DISTINCT globalPid FROM " + table,
          [&](sqlite3_stmt* s) { gpids.insert(i64(s, 0)); }, /*count_bad=*/false);
    }
  }
  std::map<int64_t, std::string> names;
  if (db_.columns("PROCESSES").count("globalPid")) {
    db_.each("SELECT globalPid, name FROM PROCESSES", [&](sqlite3_stmt* s) {
      const int64_t g = i64(s, 0);
      names[g] = capped(s, 1, tracedb::kCommandLineCap, "PROCESSES globalPid " + std::to_string(g));
    });
  }
  if (gpids.empty()) gpids.insert(0);
  for (int64_t g : gpids) {
    tracedb::ProcessRow p;
    p.pid = pid_of(g);
    p.host = "";
    p.command_line = names.count(g) ? names[g] : "nsys process " + std::to_string(p.pid);
    p.start_ns = 0;
    p.trace_clock = "nsys session (ns since the session start)";
    p.anchor_start_trace_ns = 0;
    p.anchor_start_realtime_ns = session_utc;
    p.anchor_start_monotonic_ns = 0;
    proc_row_[g] = writer_.insert(p);
    ++st_.processes;
  }
}

// The process row of a globalPid, or of a globalTid by its pid bits (the first row otherwise).
int64_t NsysImport::process_of(int64_t global) const {
  auto it = proc_row_.find(global);
  if (it != proc_row_.end()) return it->second;
  for (const auto& [g, row] : proc_row_) {
    if (pid_of(g) == pid_of(global)) return row;
  }
  return proc_row_.begin()->second;
}

// (process row, device) of every device that ran GPU work.
std::set<std::pair<int64_t, int64_t>> NsysImport::devices_used() {
  std::set<std::pair<int64_t, int64_t>> used;
  auto add = [&](sqlite3_stmt* s) { used.insert({process_of(i64(s, 0)), i64(s, 1)}); };
  if (!kernel_cols_.empty() && kernel_cols_.count("deviceId")) {
    db_.each("SELECT DISTINCT " + col(kernel_cols_, "globalPid", "0") +
                 ", deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL",
             add, /*count_bad=*/false);
  }
  for (const auto& [table, cols] :
       {std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMCPY"), memcpy_cols_},
        std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMSET"), memset_cols_}}) {
    if (cols.count("deviceId")) {
      db_.each("SELECT DISTINCT " + col(cols, "globalPid", "0") + ", deviceId FROM " + table, add,
               /*count_bad=*/false);
    }
  }
  return used;
}

// A device row per (process, device) used: TARGET_INFO_GPU's, or an unknown GPU.
void NsysImport::write_devices() {
  const auto used = devices_used();
  std::map<int64_t, tracedb::DeviceRow> gpu_info;
  if (const auto gpu_cols = db_.columns("TARGET_INFO_GPU"); !gpu_cols.empty()) {
    db_.each(gpu_query(gpu_cols), [&](sqlite3_stmt* s) {
      tracedb::DeviceRow d = device_row(s);
      d.name =
          capped(s, 1, tracedb::kNameCap, "TARGET_INFO_GPU device " + std::to_string(d.device_id));
      gpu_info[d.device_id] = d;
    });
  }
  for (const auto& [prow, dev] : used) {
    auto it = gpu_info.find(dev);
    if (it == gpu_info.end()) {
      writer_.unknown_device(prow, dev);
      continue;
    }
    tracedb::DeviceRow d = it->second;
    d.process_id = prow;
    writer_.insert(d);
  }
}

// Streams (TARGET_INFO_CUDA_STREAM: priority and flags), on the device their kernels ran on.
void NsysImport::write_streams() {
  const auto stream_cols = db_.columns("TARGET_INFO_CUDA_STREAM");
  if (!stream_cols.count("streamId") || !stream_cols.count("processId")) return;
  std::map<std::pair<int64_t, int64_t>, int64_t> stream_device;  // (pid, stream) -> device
  if (kernel_cols_.count("streamId")) {
    db_.each(
        "SELECT DISTINCT " + col(kernel_cols_, "globalPid", "0") + ", streamId, " +
            col(kernel_cols_, "deviceId", "0") + " FROM CUPTI_ACTIVITY_KIND_KERNEL",
        [&](sqlite3_stmt* s) {
          stream_device[{pid_of(i64(s, 0)), i64(s, 1)}] = i64(s, 2);
        },
        /*count_bad=*/false);
  }
  db_.each("SELECT streamId, processId, " + columns(stream_cols, kStreamColumns) +
               " FROM TARGET_INFO_CUDA_STREAM",
           [&](sqlite3_stmt* s) {
             const int64_t pid = i64(s, 1);
             int64_t prow = -1;
             for (const auto& [g, row] : proc_row_) {
               if (pid_of(g) == pid) prow = row;
             }
             if (prow < 0) return;
             tracedb::StreamRow r;
             r.process_id = prow;
             r.stream_id = i64(s, 0);
             if (!null(s, 2)) r.context_id = i64(s, 2);
             if (!null(s, 3)) r.priority = static_cast<int64_t>(static_cast<int32_t>(i64(s, 3)));
             if (!null(s, 4)) r.flags = stream_flags(i64(s, 4));
             auto it = stream_device.find({pid, r.stream_id});
             if (it != stream_device.end()) r.device_id = it->second;
             writer_.insert(r);
           });
}

bool NsysImport::usable(const char* table, const char* nsys_table, int64_t start, int64_t end) {
  const std::string why = check_times(start, end);
  if (why.empty()) return true;
  st_.reject(table,
             path_ + ": " + nsys_table + " event " + std::to_string(st_.events) + ": " + why);
  return false;
}

template <class Row, class Decode>
int64_t NsysImport::write_activities(const char* table, const char* nsys_table, const Columns& cols,
                                     const std::string& more, Decode decode) {
  int64_t written = 0;
  db_.each(activity_query(cols, nsys_table, more), [&](sqlite3_stmt* s) {
    ++st_.events;
    if (!usable(table, nsys_table, i64(s, 0), i64(s, 1))) return;
    Row row;
    activity_columns(row, s);
    row.process_id = process_of(i64(s, 2));
    decode(row, s);
    writer_.insert(row);
    ++written;
  });
  return written;
}

void NsysImport::write_kernels() {
  const std::string name_col = kernel_cols_.count("demangledName")
                                   ? "demangledName"
                                   : col(kernel_cols_, "shortName", "NULL");
  st_.kernels += write_activities<tracedb::KernelRow>(
      "kernel", "CUPTI_ACTIVITY_KIND_KERNEL", kernel_cols_,
      name_col + ", " + columns(kernel_cols_, kKernelColumns),
      [&](tracedb::KernelRow& k, sqlite3_stmt* s) {
        k.name_id = writer_.intern(null(s, 7) ? "?" : string_of(i64(s, 7)));
        if (!null(s, 8)) k.mangled_name_id = writer_.intern(string_of(i64(s, 8)));
        k.grid_x = i64(s, 9);
        k.grid_y = i64(s, 10);
        k.grid_z = i64(s, 11);
        k.block_x = i64(s, 12);
        k.block_y = i64(s, 13);
        k.block_z = i64(s, 14);
        k.registers_per_thread = i64(s, 15);
        k.static_shared_bytes = i64(s, 16);
        k.dynamic_shared_bytes = i64(s, 17);
        if (!null(s, 18)) k.grid_id = i64(s, 18);
        k.launch_type = "regular";
      });
}

void NsysImport::write_memcpys() {
  st_.memcpys += write_activities<tracedb::MemcpyRow>(
      "memcpy", "CUPTI_ACTIVITY_KIND_MEMCPY", memcpy_cols_, columns(memcpy_cols_, kMemcpyColumns),
      [](tracedb::MemcpyRow& m, sqlite3_stmt* s) {
        m.bytes = i64(s, 7);
        m.copy_kind = common::copy_kind_name(i64(s, 8));
        m.src_kind = common::memory_kind_name(i64(s, 9));
        m.dst_kind = common::memory_kind_name(i64(s, 10));
        if (!null(s, 11)) m.src_device_id = i64(s, 11);
        if (!null(s, 12)) m.dst_device_id = i64(s, 12);
        m.async = 1;
        m.copy_count = 1;
      });
}

void NsysImport::write_memsets() {
  st_.memsets += write_activities<tracedb::MemsetRow>(
      "memset", "CUPTI_ACTIVITY_KIND_MEMSET", memset_cols_, columns(memset_cols_, kMemsetColumns),
      [](tracedb::MemsetRow& m, sqlite3_stmt* s) {
        m.bytes = i64(s, 7);
        m.value = i64(s, 8);
        m.memory_kind = common::memory_kind_name(i64(s, 9));
        m.async = 1;
      });
}

void NsysImport::write_api_calls() {
  const std::string name_col =
      runtime_cols_.count("nameId") ? "nameId" : col(runtime_cols_, "name", "NULL");
  const std::string sql = "SELECT start, \"end\", " + columns(runtime_cols_, kRuntimeColumns) +
                          ", " + name_col + ", " + columns(runtime_cols_, kRuntimeResultColumns) +
                          " FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start";
  db_.each(sql, [&](sqlite3_stmt* s) {
    ++st_.events;
    if (!usable("api_call", "CUPTI_ACTIVITY_KIND_RUNTIME", i64(s, 0), i64(s, 1))) return;
    if (!api_calls_) {  // counted as a trace database would hold it, not written
      ++st_.api_calls;
      return;
    }
    tracedb::ApiCallRow a;
    a.start_ns = i64(s, 0);
    a.end_ns = i64(s, 1);
    a.process_id = process_of(i64(s, 2));
    a.thread_id = i64(s, 2) & 0xFFFFFF;
    a.correlation_id = i64(s, 3);
    a.name_id = writer_.intern(null(s, 4) ? "?" : string_of(i64(s, 4)));
    a.return_value = i64(s, 5);
    a.api = "runtime";
    a.cbid = 0;
    writer_.insert(a);
    ++st_.api_calls;
  });
}

// An NVTX event's text: its own, or its registered string's.
std::string NsysImport::nvtx_text() const {
  return nvtx_cols_.count("textId")
             ? "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId))"
             : col(nvtx_cols_, "text", "NULL");
}

// Ranges and marks (push/pop, start/end, mark), with their domains' names.
void NsysImport::write_nvtx() {
  const std::string text_expr = nvtx_text();
  std::map<int64_t, std::string> domains;  // NvtxDomainCreate: text is the name
  db_.each("SELECT " + col(nvtx_cols_, "domainId", "0") + ", " + text_expr +
               " FROM NVTX_EVENTS WHERE eventType = " + std::to_string(kNvtxDomainCreate),
           [&](sqlite3_stmt* s) {
             const int64_t id = i64(s, 0);
             domains[id] = capped(s, 1, tracedb::kNameCap, "NVTX domain " + std::to_string(id));
           });
  std::vector<tracedb::NvtxRangeRow> rows;
  int64_t read = 0;
  db_.each(
      "SELECT eventType, start, \"end\", " + columns(nvtx_cols_, kNvtxThreadColumns) + ", " +
          text_expr + ", " + columns(nvtx_cols_, kNvtxValueColumns) +
          " FROM NVTX_EVENTS ORDER BY start",
      [&](sqlite3_stmt* s) {
        ++st_.events;
        ++read;  // every NVTX event; ranges and marks become rows
        const int64_t type = i64(s, 0);
        if (type != kNvtxPushPop && type != kNvtxStartEnd && type != kNvtxMark) return;
        tracedb::NvtxRangeRow r;
        r.process_id = process_of(i64(s, 3));
        r.thread_id = i64(s, 3) & 0xFFFFFF;
        if (!null(s, 4)) r.end_thread_id = i64(s, 4) & 0xFFFFFF;
        r.kind = type == kNvtxPushPop ? "push_pop" : type == kNvtxStartEnd ? "start_end" : "mark";
        auto d = domains.find(i64(s, 5));
        r.domain = i64(s, 5) == 0       ? "default"
                   : d != domains.end() ? d->second
                                        : "domain " + std::to_string(i64(s, 5));
        r.name = capped(s, 6, tracedb::kNameCap, "NVTX_EVENTS event " + std::to_string(read));
        r.start_ns = i64(s, 1);
        r.end_ns = null(s, 2) ? r.start_ns : i64(s, 2);
        if (!usable("nvtx_range", "NVTX_EVENTS", r.start_ns, r.end_ns)) return;
        if (!null(s, 7)) r.category = i64(s, 7);
        if (!null(s, 8)) r.color = i64(s, 8);
        if (!null(s, 9)) r.payload_int = i64(s, 9);
        if (!null(s, 10)) r.payload_double = sqlite3_column_double(s, 10);
        r.closed = null(s, 2) && type != kNvtxMark ? 0 : 1;
        rows.push_back(std::move(r));
      });
  writer_.ranges(rows);
  st_.ranges += static_cast<int64_t>(rows.size());
  writer_.set_stat("nsys_nvtx_events", read);
}

}  // namespace

Stats import_nsys(const std::string& path, tracedb::Writer& out, const Progress& progress) {
  return NsysImport(path, out, &out, progress).run();
}

Stats import_nsys(const std::string& path, tracedb::RowSink& out, const Options& options,
                  const Progress& progress, tracedb::Writer* stats) {
  return NsysImport(path, out, stats, progress, options.api_calls).run();
}

}  // namespace c3::importer
