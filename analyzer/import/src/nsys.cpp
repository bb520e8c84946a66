// Nsight Systems SQLite export -> trace database. Each nsys version adds and renames columns:
// every table and column is looked up first, and what is missing is skipped (or defaulted).
#include <sqlite3.h>

#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "c3/importer/importer.h"
#include "c3/tracedb/reader.h"
#include "c3/tracedb/writer.h"

namespace c3::importer {
namespace {

class Db {
 public:
  explicit Db(const std::string& path) : path_(path) {
    // Read-only and immutable: nothing (-shm, -wal) is created next to the export.
    try {
      db_ = tracedb::open_read_only(path);
    } catch (const tracedb::ReadError& e) {
      throw std::invalid_argument(e.what());
    }
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  std::set<std::string> columns(const std::string& table) {
    std::set<std::string> out;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, ("PRAGMA table_info(\"" + table + "\")").c_str(), -1, &s,
                           nullptr) != SQLITE_OK) {
      return out;
    }
    while (sqlite3_step(s) == SQLITE_ROW)
      out.insert(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)));
    sqlite3_finalize(s);
    return out;
  }

  // Runs `sql`, calling fn(stmt) per row. Throws on SQL errors (a damaged file).
  template <class F>
  void each(const std::string& sql, F&& fn) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
      throw std::invalid_argument("'" + path_ + "': " + sqlite3_errmsg(db_));
    }
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) fn(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) throw std::invalid_argument("'" + path_ + "': " + sqlite3_errmsg(db_));
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

int64_t i64(sqlite3_stmt* s, int c) {
  return sqlite3_column_int64(s, c);
}
bool null(sqlite3_stmt* s, int c) {
  return sqlite3_column_type(s, c) == SQLITE_NULL;
}
std::string text(sqlite3_stmt* s, int c) {
  const auto* t = sqlite3_column_text(s, c);
  return t ? reinterpret_cast<const char*>(t) : "";
}

// "col" if the table has it, else a default expression.
std::string col(const std::set<std::string>& cols, const std::string& name,
                const std::string& fallback) {
  return cols.count(name) ? "\"" + name + "\"" : fallback;
}

// CUPTI_ActivityMemcpyKind and CUpti_ActivityMemoryKind values (cupti_activity.h).
std::string copy_kind(int64_t k) {
  switch (k) {
    case 1:
      return "H2D";
    case 2:
      return "D2H";
    case 3:
      return "H2A";
    case 4:
      return "A2H";
    case 5:
      return "A2A";
    case 6:
      return "A2D";
    case 7:
      return "D2A";
    case 8:
      return "D2D";
    case 9:
      return "H2H";
    case 10:
      return "P2P";
    default:
      return "unknown";
  }
}
std::string memory_kind(int64_t k) {
  switch (k) {
    case 1:
      return "pageable";
    case 2:
      return "pinned";
    case 3:
      return "device";
    case 4:
      return "array";
    case 5:
      return "managed";
    case 6:
      return "device_static";
    case 7:
      return "managed_static";
    default:
      return "unknown";
  }
}

// nsys globalPid/globalTid: pid (or tid) in bits 24..47.
int64_t pid_of(int64_t global) {
  return (global >> 24) & 0xFFFFFF;
}

}  // namespace

Stats import_nsys(const std::string& path, tracedb::Writer& out, const Progress& progress) {
  Stats st;
  Db db(path);
  const auto kernel_cols = db.columns("CUPTI_ACTIVITY_KIND_KERNEL");
  if (kernel_cols.empty() && db.columns("TARGET_INFO_GPU").empty() &&
      db.columns("NVTX_EVENTS").empty()) {
    throw std::invalid_argument(
        "'" + path +
        "' is an SQLite file but not an Nsight Systems export (no "
        "CUPTI_ACTIVITY_KIND_KERNEL, TARGET_INFO_GPU or NVTX_EVENTS table)");
  }
  std::unordered_map<int64_t, std::string> strings;
  if (!db.columns("StringIds").empty()) {
    db.each("SELECT id, value FROM StringIds",
            [&](sqlite3_stmt* s) { strings[i64(s, 0)] = text(s, 1); });
  }
  auto string_of = [&](int64_t id) {
    auto it = strings.find(id);
    return it == strings.end() ? std::string("?") : it->second;
  };
  int64_t session_utc = 0;
  if (db.columns("TARGET_INFO_SESSION_START_TIME").count("utcEpochNs")) {
    db.each("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME LIMIT 1",
            [&](sqlite3_stmt* s) { session_utc = i64(s, 0); });
  }
  // Which processes did GPU work or NVTX: one process row each.
  std::set<int64_t> gpids;
  const auto memcpy_cols = db.columns("CUPTI_ACTIVITY_KIND_MEMCPY");
  const auto memset_cols = db.columns("CUPTI_ACTIVITY_KIND_MEMSET");
  const auto runtime_cols = db.columns("CUPTI_ACTIVITY_KIND_RUNTIME");
  const auto nvtx_cols = db.columns("NVTX_EVENTS");
  for (const auto& [table, cols] :
       {std::pair{std::string("CUPTI_ACTIVITY_KIND_KERNEL"), kernel_cols},
        std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMCPY"), memcpy_cols},
        std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMSET"), memset_cols}}) {
    if (cols.count("globalPid")) {
      db.each("SELECT DISTINCT globalPid FROM " + table,
              [&](sqlite3_stmt* s) { gpids.insert(i64(s, 0)); });
    }
  }
  std::map<int64_t, std::string> process_names;
  if (db.columns("PROCESSES").count("globalPid")) {
    db.each("SELECT globalPid, name FROM PROCESSES",
            [&](sqlite3_stmt* s) { process_names[i64(s, 0)] = text(s, 1); });
  }
  if (gpids.empty()) gpids.insert(0);
  std::map<int64_t, int64_t> proc_row;  // globalPid -> process.id
  for (int64_t g : gpids) {
    tracedb::ProcessRow p;
    p.pid = pid_of(g);
    p.host = "";
    p.command_line =
        process_names.count(g) ? process_names[g] : "nsys process " + std::to_string(p.pid);
    p.start_ns = 0;
    p.trace_clock = "nsys session (ns since the session start)";
    p.anchor_start_trace_ns = 0;
    p.anchor_start_realtime_ns = session_utc;
    p.anchor_start_monotonic_ns = 0;
    proc_row[g] = out.insert(p);
    ++st.processes;
  }
  auto process_of = [&](int64_t global) -> int64_t {
    auto it = proc_row.find(global);
    if (it != proc_row.end()) return it->second;
    // A thread id: match by pid bits.
    for (const auto& [g, row] : proc_row) {
      if (pid_of(g) == pid_of(global)) return row;
    }
    return proc_row.begin()->second;
  };
  // Devices.
  const auto gpu_cols = db.columns("TARGET_INFO_GPU");
  std::set<std::pair<int64_t, int64_t>> devices_used;  // (process row, device)
  if (!kernel_cols.empty() && kernel_cols.count("deviceId")) {
    db.each("SELECT DISTINCT " + col(kernel_cols, "globalPid", "0") +
                ", deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL",
            [&](sqlite3_stmt* s) {
              devices_used.insert({process_of(i64(s, 0)), i64(s, 1)});
            });
  }
  for (const auto& [table, cols] :
       {std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMCPY"), memcpy_cols},
        std::pair{std::string("CUPTI_ACTIVITY_KIND_MEMSET"), memset_cols}}) {
    if (cols.count("deviceId")) {
      db.each("SELECT DISTINCT " + col(cols, "globalPid", "0") + ", deviceId FROM " + table,
              [&](sqlite3_stmt* s) {
                devices_used.insert({process_of(i64(s, 0)), i64(s, 1)});
              });
    }
  }
  std::map<int64_t, tracedb::DeviceRow> gpu_info;
  if (!gpu_cols.empty()) {
    const std::string dev_id = gpu_cols.count("cuDevice") ? "cuDevice" : col(gpu_cols, "id", "0");
    db.each("SELECT " + dev_id + ", " + col(gpu_cols, "name", "'unknown GPU'") + ", " +
                col(gpu_cols, "smCount", "0") + ", " + col(gpu_cols, "computeMajor", "0") + ", " +
                col(gpu_cols, "computeMinor", "0") + ", " + col(gpu_cols, "totalMemory", "0") +
                ", " + col(gpu_cols, "memoryBandwidth", "NULL") + ", " +
                col(gpu_cols, "l2CacheSize", "NULL") + ", " + col(gpu_cols, "clockRate", "NULL") +
                ", " + col(gpu_cols, "asyncEngines", "NULL") + ", " +
                col(gpu_cols, "threadsPerWarp", "32") + ", " +
                col(gpu_cols, "maxWarpsPerSm", "64") + ", " +
                col(gpu_cols, "maxBlocksPerSm", "32") + ", " +
                col(gpu_cols, "maxRegistersPerSm", "65536") + ", " +
                col(gpu_cols, "maxShmemPerSm", "0") + ", " +
                col(gpu_cols, "maxThreadsPerBlock", "1024") + ", " +
                col(gpu_cols, "maxRegistersPerBlock", "65536") + ", " +
                col(gpu_cols, "maxShmemPerBlockOptin", col(gpu_cols, "maxShmemPerBlock", "0")) +
                ", " + col(gpu_cols, "uuid", "NULL") + ", " + col(gpu_cols, "busLocation", "NULL") +
                " FROM TARGET_INFO_GPU",
            [&](sqlite3_stmt* s) {
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
              gpu_info[d.device_id] = d;
            });
  }
  for (const auto& [prow, dev] : devices_used) {
    tracedb::DeviceRow d;
    auto it = gpu_info.find(dev);
    if (it != gpu_info.end()) {
      d = it->second;
    } else {
      d.device_id = dev;
      d.name = "unknown GPU";
      d.warp_size = 32;
      d.max_threads_per_sm = 2048;
      d.max_blocks_per_sm = 32;
      d.max_registers_per_sm = 65536;
    }
    d.process_id = prow;
    out.insert(d);
  }
  // Streams (TARGET_INFO_CUDA_STREAM: priority; flag 1 default, 2 non-blocking, 3 the NULL stream),
  // on the device their kernels ran on.
  const auto stream_cols = db.columns("TARGET_INFO_CUDA_STREAM");
  if (stream_cols.count("streamId") && stream_cols.count("processId")) {
    std::map<std::pair<int64_t, int64_t>, int64_t> stream_device;  // (pid, stream) -> device
    if (kernel_cols.count("streamId")) {
      db.each("SELECT DISTINCT " + col(kernel_cols, "globalPid", "0") + ", streamId, " +
                  col(kernel_cols, "deviceId", "0") + " FROM CUPTI_ACTIVITY_KIND_KERNEL",
              [&](sqlite3_stmt* s) {
                stream_device[{pid_of(i64(s, 0)), i64(s, 1)}] = i64(s, 2);
              });
    }
    db.each("SELECT streamId, processId, " + col(stream_cols, "contextId", "NULL") + ", " +
                col(stream_cols, "priority", "NULL") + ", " + col(stream_cols, "flag", "NULL") +
                " FROM TARGET_INFO_CUDA_STREAM",
            [&](sqlite3_stmt* s) {
              const int64_t pid = i64(s, 1);
              int64_t prow = -1;
              for (const auto& [g, row] : proc_row) {
                if (pid_of(g) == pid) prow = row;
              }
              if (prow < 0) return;
              tracedb::StreamRow r;
              r.process_id = prow;
              r.stream_id = i64(s, 0);
              if (!null(s, 2)) r.context_id = i64(s, 2);
              if (!null(s, 3)) r.priority = static_cast<int64_t>(static_cast<int32_t>(i64(s, 3)));
              if (!null(s, 4)) {
                const int64_t flag = i64(s, 4);
                r.flags = flag == 2   ? "non_blocking"
                          : flag == 1 ? "default"
                          : flag == 3 ? "null"
                                      : "flag " + std::to_string(flag);
              }
              auto it = stream_device.find({pid, r.stream_id});
              if (it != stream_device.end()) r.device_id = it->second;
              out.insert(r);
            });
  }
  int64_t total_rows = 0;
  auto tick = [&](int64_t n) {
    total_rows += n;
    if (progress) progress(total_rows, 0);
  };
  // Kernels.
  if (!kernel_cols.empty()) {
    const std::string name_col = kernel_cols.count("demangledName")
                                     ? "demangledName"
                                     : col(kernel_cols, "shortName", "NULL");
    db.each(
        "SELECT start, \"end\", " + col(kernel_cols, "globalPid", "0") + ", " +
            col(kernel_cols, "deviceId", "0") + ", " + col(kernel_cols, "contextId", "NULL") +
            ", " + col(kernel_cols, "streamId", "NULL") + ", " +
            col(kernel_cols, "correlationId", "NULL") + ", " + name_col + ", " +
            col(kernel_cols, "mangledName", "NULL") + ", " + col(kernel_cols, "gridX", "1") + ", " +
            col(kernel_cols, "gridY", "1") + ", " + col(kernel_cols, "gridZ", "1") + ", " +
            col(kernel_cols, "blockX", "1") + ", " + col(kernel_cols, "blockY", "1") + ", " +
            col(kernel_cols, "blockZ", "1") + ", " + col(kernel_cols, "registersPerThread", "0") +
            ", " + col(kernel_cols, "staticSharedMemory", "0") + ", " +
            col(kernel_cols, "dynamicSharedMemory", "0") + ", " +
            col(kernel_cols, "gridId", "NULL") + " FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start",
        [&](sqlite3_stmt* s) {
          ++st.events;
          tracedb::KernelRow k;
          k.start_ns = i64(s, 0);
          k.end_ns = i64(s, 1);
          if (const std::string why = check_times(k.start_ns, k.end_ns); !why.empty()) {
            st.reject("kernel", path + ": CUPTI_ACTIVITY_KIND_KERNEL event " +
                                    std::to_string(st.events) + ": " + why);
            return;
          }
          k.process_id = process_of(i64(s, 2));
          k.device_id = i64(s, 3);
          if (!null(s, 4)) k.context_id = i64(s, 4);
          if (!null(s, 5)) k.stream_id = i64(s, 5);
          if (!null(s, 6)) k.correlation_id = i64(s, 6);
          k.name_id = out.intern(null(s, 7) ? "?" : string_of(i64(s, 7)));
          if (!null(s, 8)) {
            const std::string mangled = string_of(i64(s, 8));
            k.mangled_name_id = out.intern(mangled);
          }
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
          out.insert(k);
          ++st.kernels;
        });
    tick(st.kernels);
  }
  if (!memcpy_cols.empty()) {
    db.each("SELECT start, \"end\", " + col(memcpy_cols, "globalPid", "0") + ", " +
                col(memcpy_cols, "deviceId", "0") + ", " + col(memcpy_cols, "contextId", "NULL") +
                ", " + col(memcpy_cols, "streamId", "NULL") + ", " +
                col(memcpy_cols, "correlationId", "NULL") + ", " + col(memcpy_cols, "bytes", "0") +
                ", " + col(memcpy_cols, "copyKind", "0") + ", " + col(memcpy_cols, "srcKind", "0") +
                ", " + col(memcpy_cols, "dstKind", "0") + ", " +
                col(memcpy_cols, "srcDeviceId", "NULL") + ", " +
                col(memcpy_cols, "dstDeviceId", "NULL") +
                " FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start",
            [&](sqlite3_stmt* s) {
              ++st.events;
              tracedb::MemcpyRow m;
              m.start_ns = i64(s, 0);
              m.end_ns = i64(s, 1);
              if (const std::string why = check_times(m.start_ns, m.end_ns); !why.empty()) {
                st.reject("memcpy", path + ": CUPTI_ACTIVITY_KIND_MEMCPY event " +
                                        std::to_string(st.events) + ": " + why);
                return;
              }
              m.process_id = process_of(i64(s, 2));
              m.device_id = i64(s, 3);
              if (!null(s, 4)) m.context_id = i64(s, 4);
              if (!null(s, 5)) m.stream_id = i64(s, 5);
              if (!null(s, 6)) m.correlation_id = i64(s, 6);
              m.bytes = i64(s, 7);
              m.copy_kind = copy_kind(i64(s, 8));
              m.src_kind = memory_kind(i64(s, 9));
              m.dst_kind = memory_kind(i64(s, 10));
              if (!null(s, 11)) m.src_device_id = i64(s, 11);
              if (!null(s, 12)) m.dst_device_id = i64(s, 12);
              m.async = 1;
              m.copy_count = 1;
              out.insert(m);
              ++st.memcpys;
            });
  }
  if (!memset_cols.empty()) {
    db.each("SELECT start, \"end\", " + col(memset_cols, "globalPid", "0") + ", " +
                col(memset_cols, "deviceId", "0") + ", " + col(memset_cols, "contextId", "NULL") +
                ", " + col(memset_cols, "streamId", "NULL") + ", " +
                col(memset_cols, "correlationId", "NULL") + ", " + col(memset_cols, "bytes", "0") +
                ", " + col(memset_cols, "value", "0") + ", " + col(memset_cols, "memKind", "0") +
                " FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY start",
            [&](sqlite3_stmt* s) {
              ++st.events;
              tracedb::MemsetRow m;
              m.start_ns = i64(s, 0);
              m.end_ns = i64(s, 1);
              if (const std::string why = check_times(m.start_ns, m.end_ns); !why.empty()) {
                st.reject("memset", path + ": CUPTI_ACTIVITY_KIND_MEMSET event " +
                                        std::to_string(st.events) + ": " + why);
                return;
              }
              m.process_id = process_of(i64(s, 2));
              m.device_id = i64(s, 3);
              if (!null(s, 4)) m.context_id = i64(s, 4);
              if (!null(s, 5)) m.stream_id = i64(s, 5);
              if (!null(s, 6)) m.correlation_id = i64(s, 6);
              m.bytes = i64(s, 7);
              m.value = i64(s, 8);
              m.memory_kind = memory_kind(i64(s, 9));
              m.async = 1;
              out.insert(m);
              ++st.memsets;
            });
  }
  if (!runtime_cols.empty()) {
    const std::string name_col =
        runtime_cols.count("nameId") ? "nameId" : col(runtime_cols, "name", "NULL");
    db.each("SELECT start, \"end\", " + col(runtime_cols, "globalTid", "0") + ", " +
                col(runtime_cols, "correlationId", "0") + ", " + name_col + ", " +
                col(runtime_cols, "returnValue", "0") + ", " +
                col(runtime_cols, "eventClass", "0") +
                " FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start",
            [&](sqlite3_stmt* s) {
              ++st.events;
              tracedb::ApiCallRow a;
              a.start_ns = i64(s, 0);
              a.end_ns = i64(s, 1);
              if (const std::string why = check_times(a.start_ns, a.end_ns); !why.empty()) {
                st.reject("api_call", path + ": CUPTI_ACTIVITY_KIND_RUNTIME event " +
                                          std::to_string(st.events) + ": " + why);
                return;
              }
              a.process_id = process_of(i64(s, 2));
              a.thread_id = i64(s, 2) & 0xFFFFFF;
              a.correlation_id = i64(s, 3);
              a.name_id = out.intern(null(s, 4) ? "?" : string_of(i64(s, 4)));
              a.return_value = i64(s, 5);
              a.api = "runtime";
              a.cbid = 0;
              out.insert(a);
              ++st.api_calls;
            });
  }
  if (!nvtx_cols.empty()) {
    // Domains first (NvtxDomainCreate, event type 75: text is the name).
    std::map<int64_t, std::string> domains;
    const std::string text_expr =
        nvtx_cols.count("textId")
            ? "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId))"
            : col(nvtx_cols, "text", "NULL");
    db.each("SELECT " + col(nvtx_cols, "domainId", "0") + ", " + text_expr +
                " FROM NVTX_EVENTS WHERE eventType = 75",
            [&](sqlite3_stmt* s) { domains[i64(s, 0)] = text(s, 1); });
    std::vector<tracedb::NvtxRangeRow> rows;
    int64_t read = 0;
    db.each("SELECT eventType, start, \"end\", " + col(nvtx_cols, "globalTid", "0") + ", " +
                col(nvtx_cols, "endGlobalTid", "NULL") + ", " + col(nvtx_cols, "domainId", "0") +
                ", " + text_expr + ", " + col(nvtx_cols, "category", "NULL") + ", " +
                col(nvtx_cols, "color", "NULL") + ", " + col(nvtx_cols, "int64Value", "NULL") +
                ", " + col(nvtx_cols, "doubleValue", "NULL") + " FROM NVTX_EVENTS ORDER BY start",
            [&](sqlite3_stmt* s) {
              ++st.events;
              ++read;  // every NVTX event; ranges and marks become rows
              const int64_t type = i64(s, 0);
              if (type != 59 && type != 60 && type != 34) return;  // push/pop, start/end, mark
              tracedb::NvtxRangeRow r;
              r.process_id = process_of(i64(s, 3));
              r.thread_id = i64(s, 3) & 0xFFFFFF;
              if (!null(s, 4)) r.end_thread_id = i64(s, 4) & 0xFFFFFF;
              r.kind = type == 59 ? "push_pop" : type == 60 ? "start_end" : "mark";
              auto d = domains.find(i64(s, 5));
              r.domain = i64(s, 5) == 0       ? "default"
                         : d != domains.end() ? d->second
                                              : "domain " + std::to_string(i64(s, 5));
              r.name = text(s, 6);
              r.start_ns = i64(s, 1);
              r.end_ns = null(s, 2) ? r.start_ns : i64(s, 2);
              if (const std::string why = check_times(r.start_ns, r.end_ns); !why.empty()) {
                st.reject("nvtx_range",
                          path + ": NVTX_EVENTS event " + std::to_string(st.events) + ": " + why);
                return;
              }
              if (!null(s, 7)) r.category = i64(s, 7);
              if (!null(s, 8)) r.color = i64(s, 8);
              if (!null(s, 9)) r.payload_int = i64(s, 9);
              if (!null(s, 10)) r.payload_double = sqlite3_column_double(s, 10);
              r.closed = null(s, 2) && type != 34 ? 0 : 1;
              rows.push_back(std::move(r));
            });
    // Depth of push/pop ranges: nesting per thread.
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      if (a.process_id != b.process_id) return a.process_id < b.process_id;
      if (a.thread_id != b.thread_id) return a.thread_id < b.thread_id;
      if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
      return a.end_ns > b.end_ns;
    });
    std::vector<int64_t> open;
    std::pair<int64_t, int64_t> thread{-1, -1};
    for (auto& r : rows) {
      if (std::pair{r.process_id, r.thread_id} != thread) {
        open.clear();
        thread = {r.process_id, r.thread_id};
      }
      if (r.kind == "push_pop") {
        while (!open.empty() && open.back() <= r.start_ns) open.pop_back();
        r.depth = static_cast<int64_t>(open.size());
        open.push_back(r.end_ns);
      }
      out.insert(r);
      ++st.ranges;
    }
    out.set_stat(std::nullopt, "nsys_nvtx_events", read);
  }
  return st;
}

}  // namespace c3::importer
