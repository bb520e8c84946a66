#include "c3/analyzer/open/load.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

#include "bench_load.h"
#include "build.h"
#include "c3/common/workers.h"
#include "c3/tracedb/harden.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"

namespace fs = std::filesystem;

namespace c3::analyzer {
namespace {

// A file's size and modification time (ns), to tell whether it changed between two reads.
std::pair<int64_t, int64_t> file_stamp(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) return {-1, -1};
  const auto mtime = fs::last_write_time(path, ec);
  if (ec) return {-1, -1};
  return {
      static_cast<int64_t>(size),
      static_cast<int64_t>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(mtime.time_since_epoch()).count())};
}

constexpr const char* kShapeColumns =
    "grid_x * grid_y * grid_z, block_x * block_y * block_z, registers_per_thread, "
    "static_shared_bytes + dynamic_shared_bytes, IFNULL(submitted_ns, -1)";

// One file's load, in stages, each reading one part of the file into the TraceBuilder
// (build.h), in the builder's order of tables; load_file runs them. Values are not trusted
// (tracedb::Query): text is cut at its cap and counted (cuts), a row whose integer column holds
// text is skipped and counted (bad_row).
using tracedb::kCommandLineCap;
using tracedb::kNameCap;

void cuts(TraceBuilder& b, const char* table, const tracedb::Query& q) {
  b.cut(table, q.cuts(), q.first_cut());
}

// Processes, then the versions the file states (after the processes they apply to).
void read_processes(const tracedb::Reader& r, TraceBuilder& b) {
  {
    auto q = r.query(
        "SELECT id, pid, host, rank, world_size, command_line, trace_clock, anchor_start_trace_ns, "
        "anchor_start_realtime_ns FROM process ORDER BY id");
    q.cap(2, kNameCap).cap(5, kCommandLineCap).cap(6, kNameCap);
    int64_t id = 0;
    tracedb::ProcessRow row;
    while (q.next(id, row.pid, row.host, row.rank, row.world_size, row.command_line,
                  row.trace_clock, row.anchor_start_trace_ns, row.anchor_start_realtime_ns)) {
      // Every other row hangs off its process: a damaged one makes the file unreadable (rows of
      // the other tables are skipped and counted instead).
      if (const std::string why = q.row_problem(); !why.empty()) {
        throw tracedb::ReadError(tracedb::ReadError::Kind::corrupt,
                                 "'" + tracedb::printable(r.path()) + "': process row " +
                                     std::to_string(id) + ": " + why +
                                     " (a damaged or hostile file)");
      }
      b.process(id, process_of(row));
    }
    cuts(b, "process", q);
  }
  auto q = r.query("SELECT key, value FROM meta WHERE key LIKE '%\\_version' ESCAPE '\\'");
  q.cap(0, kNameCap).cap(1, kNameCap);
  while (q.step()) b.meta(q.text(0), q.text(1));
  cuts(b, "meta", q);
}

void read_devices(const tracedb::Reader& r, TraceBuilder& b) {
  auto q = r.query(
      "SELECT process_id, device_id, name, sm_count, max_threads_per_sm, max_blocks_per_sm, "
      "max_registers_per_sm, max_shared_memory_per_sm, memory_bandwidth_bytes_per_s FROM device");
  q.cap(2, kNameCap);
  tracedb::DeviceRow row;
  int64_t n = 0;
  while (q.next(row.process_id, row.device_id, row.name, row.sm_count, row.max_threads_per_sm,
                row.max_blocks_per_sm, row.max_registers_per_sm, row.max_shared_memory_per_sm,
                row.memory_bandwidth_bytes_per_s)) {
    ++n;
    if (const std::string why = q.row_problem(); !why.empty()) {
      b.bad_row(n, "device", why);
      continue;
    }
    b.device(row.process_id, device_of(row));
  }
  cuts(b, "device", q);
}

// NCCL calls and the GPU rows each launched: collective.external_id was pushed as CUPTI
// external correlation (kind custom0) around the call, so external_correlation maps it to the
// correlation ids of the kernels and copies it launched. Linked in memory by the builder (the
// collective_activity view joins through gpu_activity, a UNION view no index reaches:
// quadratic on traces with many collectives).
void read_collectives(const tracedb::Reader& r, TraceBuilder& b, const Trace& t) {
  {
    if (auto n = r.query("SELECT IFNULL(MAX(id), 0) FROM collective"); n.step()) {
      b.reserve_collectives(
          static_cast<size_t>(std::clamp<int64_t>(n.i64(0), 0, int64_t{1} << 28)));
    }
    auto q = r.query(
        "SELECT process_id, device_id, comm_id, seq, op, bytes, nranks, rank, host_start_ns, "
        "external_id, id FROM collective ORDER BY id");
    q.cap(2, kNameCap).cap(4, kNameCap);
    tracedb::CollectiveRow row;
    int64_t id = 0;
    while (q.next(row.process_id, row.device_id, row.comm_id, row.seq, row.op, row.bytes,
                  row.nranks, row.rank, row.host_start_ns, row.external_id, id)) {
      if (const std::string why = q.row_problem(); !why.empty()) {
        b.bad_row(id, "collective", why);
        continue;
      }
      b.collective(row.process_id, collective_of(row), row.external_id);
    }
    cuts(b, "collective", q);
  }
  if (t.collectives.empty()) return;
  auto q = r.query(
      "SELECT process_id, correlation_id, external_id, id FROM external_correlation WHERE "
      "external_kind = 'custom0'");
  while (q.step()) {
    const int64_t process = q.i64(0), correlation = q.i64(1), external = q.i64(2);
    if (const std::string why = q.row_problem(); !why.empty()) {
      b.bad_row(q.i64(3), "external_correlation", why);
      continue;
    }
    b.external_correlation(process, correlation, external);
  }
}

// The file's string table: string.id -> index into the trace's names.
class StringTable {
 public:
  StringTable(const tracedb::Reader& r, TraceBuilder& b) : b_(b) {
    std::vector<std::pair<int64_t, int32_t>> all;
    auto q = r.query("SELECT id, value FROM string");
    q.cap(1, kNameCap);
    int64_t max_id = -1;
    while (q.step()) {
      const int64_t id = q.i64(0);
      if (const std::string why = q.row_problem(); !why.empty()) {
        b.bad_row(static_cast<int64_t>(all.size()) + 1, "string", why);
        continue;
      }
      all.emplace_back(id, b.name(q.text(1)));
      max_id = std::max(max_id, all.back().first);
    }
    cuts(b, "string", q);
    const bool dense = max_id < 4 * static_cast<int64_t>(all.size()) + 1024;
    if (dense) dense_.assign(static_cast<size_t>(max_id + 1), -1);
    for (const auto& [id, name] : all) {
      if (dense && id >= 0) {
        dense_[static_cast<size_t>(id)] = name;
      } else {
        sparse_.emplace(id, name);
      }
    }
  }

  // The name of string `id`; "?" for an id the table lacks.
  int32_t operator()(int64_t id) {
    int32_t n = -1;
    if (id >= 0 && static_cast<size_t>(id) < dense_.size()) {
      n = dense_[static_cast<size_t>(id)];
    } else if (!sparse_.empty()) {
      auto it = sparse_.find(id);
      if (it != sparse_.end()) n = it->second;
    }
    if (n >= 0) return n;
    if (unknown_ < 0) unknown_ = b_.name("?");
    return unknown_;
  }

 private:
  TraceBuilder& b_;
  // A vector, as the collector's ids are 1, 2, ...; a hash otherwise.
  std::vector<int32_t> dense_;
  std::unordered_map<int64_t, int32_t> sparse_;
  int32_t unknown_ = -1;
};

// Room for every GPU row up front (max(id) is an index lookup, not a scan).
void reserve_activities(const tracedb::Reader& r, Activities& a) {
  int64_t expect = 0;
  for (const char* table : {"kernel", "memcpy", "memset"}) {
    auto q = r.query(std::string("SELECT IFNULL(MAX(id), 0) FROM ") + table);
    if (q.step()) expect += q.i64(0);
  }
  a.reserve(a.size() + static_cast<size_t>(std::clamp<int64_t>(expect, 0, int64_t{1} << 31)));
}

// Kernel rows, with their shapes; with `defer`, the shapes are left for load_kernel_shapes:
// each kept kernel is numbered in its shape column (-2 - k) and the result counts them and
// lists the rows skipped (the caller fills in the file and its processes).
PendingShapes read_kernels(const tracedb::Reader& r, TraceBuilder& b, Activities& a,
                           StringTable& names, bool defer, const std::string& path) {
  PendingShapes pending;
  auto q = r.query(
      std::string("SELECT id, process_id, device_id, IFNULL(stream_id, -1), start_ns, end_ns, "
                  "name_id, IFNULL(correlation_id, -1)") +
      (defer ? "" : std::string(", ") + kShapeColumns) + " FROM kernel");
  while (q.step()) {
    const int64_t id = q.i64(0), process = q.i64(1), device = q.i64(2), stream = q.i64(3),
                  start = q.i64(4), end = q.i64(5), name = q.i64(6), correlation = q.i64(7);
    size_t i = SIZE_MAX;
    if (const std::string why = q.row_problem(); !why.empty()) {
      b.bad_row(id, "kernel", why);
    } else {
      i = b.kernel(id, process, device, stream, start, end, names(name), correlation);
    }
    if (i == SIZE_MAX) {
      if (defer) pending.skipped.push_back(q.i64(0));
      continue;
    }
    if (defer) {
      if (pending.kernels >= int64_t{INT32_MAX} - 2) {
        throw std::invalid_argument(path + ": more than 2^31 kernels in one file");
      }
      a.shape[i] = static_cast<int32_t>(-2 - pending.kernels++);
      continue;
    }
    b.kernel_shape(i, clamp_shape(q.i64(8), q.i64(9), q.i64(10), q.i64(11)), q.i64(12));
  }
  return pending;
}

void read_memcpys(const tracedb::Reader& r, TraceBuilder& b) {
  auto q = r.query(
      "SELECT id, process_id, device_id, IFNULL(stream_id, -1), start_ns, end_ns, copy_kind, "
      "bytes, IFNULL(channel_id, -1), IFNULL(correlation_id, -1) FROM memcpy");
  q.cap(6, kNameCap);
  while (q.step()) {
    const int64_t id = q.i64(0), process = q.i64(1), device = q.i64(2), stream = q.i64(3),
                  start = q.i64(4), end = q.i64(5), bytes = q.i64(7), channel = q.i64(8),
                  correlation = q.i64(9);
    if (const std::string why = q.row_problem(); !why.empty()) {
      b.bad_row(id, "memcpy", why);
      continue;
    }
    b.memcpy(id, process, device, stream, start, end, q.text(6), bytes, channel, correlation);
  }
  cuts(b, "memcpy", q);
}

void read_memsets(const tracedb::Reader& r, TraceBuilder& b) {
  auto q = r.query(
      "SELECT id, process_id, device_id, IFNULL(stream_id, -1), start_ns, end_ns, bytes, "
      "IFNULL(correlation_id, -1) FROM memset");
  while (q.step()) {
    const int64_t id = q.i64(0), process = q.i64(1), device = q.i64(2), stream = q.i64(3),
                  start = q.i64(4), end = q.i64(5), bytes = q.i64(6), correlation = q.i64(7);
    if (const std::string why = q.row_problem(); !why.empty()) {
      b.bad_row(id, "memset", why);
      continue;
    }
    b.memset(id, process, device, stream, start, end, bytes, correlation);
  }
}

// The one process id of the file's API calls, when they have one (a collector's file: one trace
// per process), from the ends of the (process_id, correlation_id) index; none when the column
// holds more than one value, a NULL or text.
std::optional<int64_t> single_call_process(const tracedb::Reader& r) {
  auto end = [&r](const char* sql) -> std::optional<int64_t> {
    auto q = r.query(sql);
    if (!q.step() || q.is_null(0)) return std::nullopt;
    const int64_t v = q.i64(0);
    if (!q.row_problem().empty()) return std::nullopt;
    return v;
  };
  const std::optional<int64_t> lo = end("SELECT MIN(process_id) FROM api_call");
  if (!lo || end("SELECT MAX(process_id) FROM api_call") != lo) return std::nullopt;
  auto nulls = r.query("SELECT EXISTS (SELECT 1 FROM api_call WHERE process_id IS NULL)");
  if (!nulls.step() || nulls.i64(0) != 0) return std::nullopt;
  return lo;
}

// The host calls that launched GPU rows (API calls recorded with --cuda-api, or imported), by
// correlation id; the builder keeps only those (TraceBuilder::api_call). Only the columns used
// are read (each costs about 50 ns a row in SQLite, as much as the rest of a row's handling):
// not the process where the file has one, not the row id, which a message about a skipped row
// looks up by the row's place in the table (rows come in row id order).
void read_api_calls(const tracedb::Reader& r, TraceBuilder& b, StringTable& names) {
  const std::optional<int64_t> only = single_call_process(r);
  auto q = r.query(std::string("SELECT correlation_id, start_ns, end_ns, name_id, thread_id") +
                   (only ? "" : ", process_id") + " FROM api_call");
  b.row_ids([&r](int64_t place) {
    auto id = r.query("SELECT rowid FROM api_call LIMIT 1 OFFSET " + std::to_string(place));
    return id.step() ? id.i64(0) : place + 1;
  });
  for (int64_t place = 0; q.step(); ++place) {
    const int64_t correlation = q.i64(0), start = q.i64(1), end = q.i64(2), name = q.i64(3),
                  thread = q.i64(4), process = only ? *only : q.i64(5);
    if (const std::string why = q.row_problem(); !why.empty()) {
      b.bad_row(-1 - place, "api_call", why);
      continue;
    }
    b.api_call(-1 - place, process, correlation, start, end, names(name), fold_thread(thread));
  }
  b.row_ids(nullptr);
}

// Whether the file has API call rows (a collector's trace has them with --cuda-api).
bool has_api_calls(const tracedb::Reader& r) {
  auto q = r.query("SELECT EXISTS (SELECT 1 FROM api_call)");
  return q.step() && q.i64(0) != 0;
}

// Streams' waits on CUDA events and the events' records (TraceBuilder::stream_wait), read
// before the GPU rows.
void read_stream_waits(const tracedb::Reader& r, TraceBuilder& b) {
  {
    auto q = r.query(
        "SELECT process_id, stream_id, correlation_id, cuda_event_id FROM sync WHERE type = "
        "'stream_wait_event' AND stream_id IS NOT NULL AND correlation_id IS NOT NULL AND "
        "cuda_event_id IS NOT NULL");
    while (q.step()) {
      const int64_t process = q.i64(0), stream = q.i64(1), correlation = q.i64(2), event = q.i64(3);
      if (q.row_problem().empty()) b.stream_wait(process, stream, correlation, event);
    }
  }
  auto q = r.query("SELECT process_id, stream_id, correlation_id, cuda_event_id FROM cuda_event");
  while (q.step()) {
    const int64_t process = q.i64(0), stream = q.i64(1), correlation = q.i64(2), event = q.i64(3);
    if (q.row_problem().empty()) b.cuda_event(process, stream, correlation, event);
  }
}

// NVTX ranges, and marks as ranges of no duration (the timeline draws them as ticks; steps and
// --range windows, which need a duration, pass them over).
void read_ranges(const tracedb::Reader& r, TraceBuilder& b) {
  auto q = r.query(
      "SELECT process_id, domain, name, start_ns, end_ns, depth, thread_id, kind, color, id "
      "FROM nvtx_range WHERE end_ns >= start_ns");
  q.cap(1, kNameCap).cap(2, kNameCap).cap(7, kNameCap);
  tracedb::NvtxRangeRow row;
  int64_t id = 0;
  while (q.next(row.process_id, row.domain, row.name, row.start_ns, row.end_ns, row.depth,
                row.thread_id, row.kind, row.color, id)) {
    if (const std::string why = q.row_problem(); !why.empty()) {
      b.bad_row(id, "nvtx_range", why);
      continue;
    }
    b.range(row.process_id, range_of(row));
  }
  cuts(b, "nvtx_range", q);
}

// Loads one file into `t` (a trace of its own: files load in parallel, then merge), stage by
// stage (above). `tick` is called every kTickRows GPU rows.
void load_file(const std::string& path, Trace& t, bool defer, bool launch_calls,
               const std::function<void(int64_t)>& tick) {
  const auto stamp = file_stamp(path);
  const auto r = tracedb::Reader::open(path);  // refuses what is not a readable c3scope trace
  TraceBuilder b(t, path, tick);
  read_processes(*r, b);
  read_devices(*r, b);
  read_collectives(*r, b, t);
  StringTable names(*r, b);
  const bool calls = launch_calls && has_api_calls(*r);
  b.expect_calls(calls);
  if (launch_calls) read_stream_waits(*r, b);
  reserve_activities(*r, t.activities);
  PendingShapes pending = read_kernels(*r, b, t.activities, names, defer, path);
  if (defer && pending.kernels > 0) {
    // What load_kernel_shapes needs to find the same rows again, and to refuse a changed file.
    pending.path = path;
    pending.size = stamp.first;
    pending.mtime_ns = stamp.second;
    for (const auto& [db_id, index] : b.processes()) pending.processes.emplace_back(db_id, index);
    t.pending_shapes.push_back(std::move(pending));
  }
  read_memcpys(*r, b);
  read_memsets(*r, b);
  if (calls) {
    // Sorted first (load_sources' sort then finds them in order): the calls land on the rows'
    // final places.
    b.moved(t.activities.sort());
    read_api_calls(*r, b, names);
  }
  // c3bench results recorded with the trace (bench_run.pid names the process).
  load_bench_results(*r, b, t);
  read_ranges(*r, b);
  b.done();
}

}  // namespace

std::vector<std::string> expand_inputs(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.is_regular_file(ec) && e.path().extension() == ".sqlite")
          found.push_back(e.path().string());
      }
      if (found.empty())
        throw std::invalid_argument("'" + p + "' is a folder without *.sqlite traces");
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      out.push_back(p);
    } else {
      throw std::invalid_argument("'" + p + "' does not exist");
    }
  }
  return out;
}

namespace {

// Rethrows the first of `errors` in their order.
void rethrow_first(const std::vector<std::exception_ptr>& errors) {
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

// Runs the tasks on up to hardware_concurrency threads (each task touches its own data).
void run_parallel(const std::vector<std::function<void()>>& tasks) {
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(tasks.size());
  auto worker = [&] {
    for (size_t i = next++; i < tasks.size(); i = next++) {
      try {
        tasks[i]();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  common::run_workers(tasks.size(), worker);
  rethrow_first(errors);
}

// Appends the parts (one file's trace each) to `t` in file order: process, collective, name and
// shape indices remapped. The activity columns are appended in parallel, one task per column,
// beside one task for everything else (each part's column is freed once copied).
void merge(Trace& t, std::vector<Trace>& parts) {
  size_t processes = 0;
  for (const auto& p : parts) processes += p.processes.size();
  if (processes > static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
    throw std::invalid_argument("more than 32767 processes: analyze fewer traces at once");
  }
  struct Map {
    int16_t poff = 0;
    int32_t coff = 0;
    std::vector<int32_t> name, shape;
  };
  std::vector<Map> maps(parts.size());
  size_t rows = 0, collectives = 0, ranges = 0;
  {
    Names names(t.names);
    Shapes shapes(t.shapes);
    for (size_t f = 0; f < parts.size(); ++f) {
      const Trace& part = parts[f];
      Map& m = maps[f];
      m.poff = static_cast<int16_t>(f == 0 ? 0 : maps[f - 1].poff + parts[f - 1].processes.size());
      m.coff = static_cast<int32_t>(collectives);
      for (const auto& n : part.names) m.name.push_back(names.id(n));
      for (const auto& sh : part.shapes) m.shape.push_back(shapes.id(sh));
      rows += part.activities.size();
      collectives += part.collectives.size();
      ranges += part.ranges.size();
    }
  }
  std::vector<std::function<void()>> tasks;
  tasks.emplace_back([&] {
    t.processes.reserve(processes);
    t.collectives.reserve(collectives);
    t.ranges.reserve(ranges);
    for (size_t f = 0; f < parts.size(); ++f) {
      Trace& part = parts[f];
      const int16_t poff = maps[f].poff;
      for (auto& p : part.processes) t.processes.push_back(std::move(p));
      for (auto& d : part.devices) {
        d.process = static_cast<int16_t>(d.process + poff);
        t.devices.push_back(std::move(d));
      }
      for (auto& c : part.collectives) {
        c.process = static_cast<int16_t>(c.process + poff);
        t.collectives.push_back(std::move(c));
      }
      for (auto& g : part.ranges) {
        g.process = static_cast<int16_t>(g.process + poff);
        t.ranges.push_back(std::move(g));
      }
      for (auto& l : part.launch_delays) {
        l.process = static_cast<int16_t>(l.process + poff);
        t.launch_delays.push_back(l);
      }
      for (auto s : part.host_syncs) {
        s.process = static_cast<int16_t>(s.process + poff);
        t.host_syncs.push_back(s);
      }
      for (auto w : part.stream_waits) {
        w.process = static_cast<int16_t>(w.process + poff);
        t.stream_waits.push_back(w);
      }
      for (auto& b : part.bench) {
        b.process = static_cast<int16_t>(b.process + poff);
        t.bench.push_back(std::move(b));
      }
      for (auto& pending : part.pending_shapes) {
        for (auto& pr : pending.processes) pr.second = static_cast<int16_t>(pr.second + poff);
        t.pending_shapes.push_back(std::move(pending));
      }
      if (t.skipped == 0) t.first_skipped = part.first_skipped;
      t.skipped += part.skipped;
      part.collectives = {};
      part.ranges = {};
    }
  });
  Activities& to = t.activities;
  // A column copied as is (Kinds stay in the parts until the end: the shape task reads them),
  // or through map(part, row, value); each part's column is freed once copied.
  auto free_copied = [](auto& src) {
    if constexpr (!std::is_same_v<std::remove_reference_t<decltype(src)>, std::vector<Kind>>) {
      std::remove_reference_t<decltype(src)>().swap(src);
    }
  };
  auto copied = [&](auto member) {
    tasks.emplace_back([&, member] {
      auto& dst = to.*member;
      dst.reserve(rows);
      for (auto& part : parts) {
        auto& src = part.activities.*member;
        dst.insert(dst.end(), src.begin(), src.end());
        free_copied(src);
      }
    });
  };
  auto mapped = [&](auto member, auto map) {
    tasks.emplace_back([&, member, map] {
      auto& dst = to.*member;
      dst.reserve(rows);
      for (size_t f = 0; f < parts.size(); ++f) {
        auto& src = parts[f].activities.*member;
        for (size_t i = 0; i < src.size(); ++i) dst.push_back(map(f, i, src[i]));
        free_copied(src);
      }
    });
  };
  copied(&Activities::start);
  copied(&Activities::end);
  copied(&Activities::stream);
  copied(&Activities::device);
  copied(&Activities::kind);
  copied(&Activities::cls);
  copied(&Activities::bytes);
  mapped(&Activities::name, [&](size_t f, size_t, int32_t nm) {
    return nm >= 0 ? maps[f].name[static_cast<size_t>(nm)] : nm;
  });
  mapped(&Activities::process,
         [&](size_t f, size_t, int16_t p) { return static_cast<int16_t>(p + maps[f].poff); });
  // Kernels: a shape index (pending ones, below -1, are the file's own numbers); copies: their
  // hardware channel (kept as is).
  mapped(&Activities::shape, [&](size_t f, size_t i, int32_t sh) {
    return parts[f].activities.kind[i] == Kind::kernel && sh >= 0
               ? maps[f].shape[static_cast<size_t>(sh)]
               : sh;
  });
  mapped(&Activities::collective,
         [&](size_t f, size_t, int32_t c) { return c >= 0 ? c + maps[f].coff : c; });
  // Launch calls: when any part has them, every part's rows get theirs (kNoCall, -1 where it has
  // none).
  // (Each part's row count is taken now: the other tasks free the columns size() reads.)
  const bool calls = std::any_of(parts.begin(), parts.end(),
                                 [](const Trace& p) { return p.activities.has_calls(); });
  std::vector<size_t> part_rows;
  part_rows.reserve(parts.size());
  for (const auto& part : parts) part_rows.push_back(part.activities.size());
  // One call column: each part's values (through `map`, nullptr: as they are), `fill` for a
  // part without calls.
  auto call_column = [&](auto member, auto fill, auto map) {
    tasks.emplace_back([&, member, fill, map] {
      static_cast<void>(map);  // (unused where it is nullptr)
      auto& dst = to.*member;
      dst.reserve(rows);
      for (size_t f = 0; f < parts.size(); ++f) {
        auto& src = parts[f].activities.*member;
        if (src.empty()) {
          dst.insert(dst.end(), part_rows[f], fill);
        } else if constexpr (std::is_null_pointer_v<decltype(map)>) {
          dst.insert(dst.end(), src.begin(), src.end());
        } else {
          for (const auto v : src) dst.push_back(map(f, v));
        }
        std::remove_reference_t<decltype(src)>().swap(src);
      }
    });
  };
  if (calls) {
    call_column(&Activities::call_start, kNoCall, nullptr);
    call_column(&Activities::call_end, kNoCall, nullptr);
    call_column(&Activities::call_thread, int32_t{0}, nullptr);
    call_column(&Activities::call_name, int32_t{-1}, [&](size_t f, int32_t nm) {
      return nm >= 0 ? maps[f].name[static_cast<size_t>(nm)] : nm;
    });
  }
  run_parallel(tasks);
  for (auto& part : parts) part = Trace{};
}

// Runs job(f, tick) for every f in [0, n), files in parallel (SQLite stepping is most of the
// time). tick(rows) adds to the progress (options.progress gets (done, total)); once a job
// fails the others stop at their next tick, and the first failure in file order is rethrown.
using FileJob = std::function<void(size_t, const std::function<void(int64_t)>&)>;
void parallel_files(size_t n, const LoadOptions& options, int64_t total, const FileJob& job) {
  std::atomic<size_t> next{0};
  std::atomic<int64_t> done{0};
  std::atomic<bool> stop{false};
  std::mutex progress_mutex;
  std::vector<std::exception_ptr> errors(n);
  struct Stop {};
  auto worker = [&] {
    for (size_t f = next++; f < n && !stop; f = next++) {
      try {
        job(f, [&](int64_t rows) {
          if (stop) throw Stop{};
          const int64_t now = done += rows;
          if (options.progress &&
              (now & ~(kTickRows * 16 - 1)) != ((now - rows) & ~(kTickRows * 16 - 1))) {
            const std::lock_guard<std::mutex> lock(progress_mutex);
            options.progress(now, total);
          }
        });
      } catch (const Stop&) {
        return;
      } catch (...) {
        errors[f] = std::current_exception();
        stop = true;
        return;
      }
    }
  };
  common::run_workers(n, worker);
  rethrow_first(errors);
  if (options.progress) options.progress(done, total);
}

}  // namespace

Trace load(const std::vector<std::string>& files, const LoadOptions& options) {
  std::vector<Source> sources;
  sources.reserve(files.size());
  for (const auto& f : files) sources.push_back({f, {}});
  return load_sources(sources, options);
}

Trace load_sources(const std::vector<Source>& sources, const LoadOptions& options) {
  int64_t total = 0;
  if (options.progress) {
    for (const auto& s : sources) {
      if (s.fill) continue;  // rows that are not in a database yet: not counted ahead
      auto r = tracedb::Reader::open(s.path);
      for (const char* table : {"kernel", "memcpy", "memset"}) total += r->count(table);
    }
  }
  // Each source loads into a trace of its own, sorted there; the parts are then appended in
  // source order, so the whole stays sorted.
  std::vector<Trace> parts(sources.size());
  parallel_files(sources.size(), options, total,
                 [&](size_t f, const std::function<void(int64_t)>& tick) {
                   if (sources[f].fill) {
                     TraceBuilder b(parts[f], sources[f].path, tick);
                     sources[f].fill(b);
                     b.done();
                   } else {
                     load_file(sources[f].path, parts[f], options.defer_kernel_shapes,
                               options.launch_calls, tick);
                   }
                   parts[f].activities.sort();
                   check_time_span(parts[f], sources[f].path);
                 });
  Trace t;
  if (parts.size() == 1) {
    t = std::move(parts.front());
  } else {
    merge(t, parts);
  }
  finish_trace(t, options.rules);
  return t;
}

void load_kernel_shapes(Trace& t, const LoadOptions& options) {
  if (t.pending_shapes.empty()) return;
  const size_t n = t.pending_shapes.size();
  // Read per file (kernel rows in id order, as the first load numbered them), then written to
  // the trace only when every file succeeded.
  struct Part {
    std::vector<KernelShape> shapes;
    std::vector<int32_t> shape;  // by kernel number: index into `shapes`
    std::vector<LaunchDelay> delays;
  };
  std::vector<Part> parts(n);
  int64_t total = 0;
  for (const auto& p : t.pending_shapes) total += p.kernels;
  parallel_files(n, options, total, [&](size_t f, const std::function<void(int64_t)>& tick) {
    const PendingShapes& pending = t.pending_shapes[f];
    auto changed = [&] {
      return tracedb::ReadError(tracedb::ReadError::Kind::corrupt,
                                pending.path + " changed since it was opened: open it again");
    };
    if (file_stamp(pending.path) != std::make_pair(pending.size, pending.mtime_ns)) throw changed();
    auto r = tracedb::Reader::open(pending.path);
    Part& part = parts[f];
    part.shape.reserve(static_cast<size_t>(pending.kernels));
    Shapes shapes(part.shapes);
    auto q = r->query(std::string("SELECT id, process_id, device_id, start_ns, ") + kShapeColumns +
                      " FROM kernel");
    size_t skipped = 0;
    int64_t rows = 0;
    int64_t last_db = INT64_MIN;
    int16_t last_index = -1;
    while (q.step()) {
      if (skipped < pending.skipped.size() && q.i64(0) == pending.skipped[skipped]) {
        ++skipped;
        continue;
      }
      if (static_cast<int64_t>(part.shape.size()) >= pending.kernels) throw changed();
      part.shape.push_back(shapes.id(clamp_shape(q.i64(4), q.i64(5), q.i64(6), q.i64(7))));
      const int64_t s = q.i64(3), submitted = q.i64(8);
      if (submitted >= 0 && submitted <= s) {
        const int64_t db = q.i64(1);
        if (db != last_db) {
          last_db = db;
          last_index = -1;
          for (const auto& [id, index] : pending.processes) {
            if (id == db) last_index = index;
          }
        }
        if (last_index >= 0)
          part.delays.push_back({last_index, static_cast<int16_t>(q.i64(2)), s - submitted});
      }
      if (++rows == kTickRows) {
        tick(rows);
        rows = 0;
      }
    }
    tick(rows);
    if (static_cast<int64_t>(part.shape.size()) != pending.kernels) throw changed();
  });
  // Which file each process came from, then each pending kernel row gets its shape.
  std::vector<int32_t> file_of(t.processes.size(), -1);
  for (size_t f = 0; f < n; ++f) {
    for (const auto& pr : t.pending_shapes[f].processes) {
      if (pr.second >= 0 && static_cast<size_t>(pr.second) < file_of.size())
        file_of[static_cast<size_t>(pr.second)] = static_cast<int32_t>(f);
    }
  }
  Shapes shapes(t.shapes);
  std::vector<std::vector<int32_t>> shape_map(n);
  for (size_t f = 0; f < n; ++f) {
    for (const KernelShape& ks : parts[f].shapes) shape_map[f].push_back(shapes.id(ks));
  }
  Activities& a = t.activities;
  for (size_t i = 0; i < a.size(); ++i) {
    const int32_t sh = a.shape[i];
    if (a.kind[i] != Kind::kernel || sh > -2) continue;
    const int32_t f = file_of[static_cast<size_t>(a.process[i])];
    const auto k = static_cast<size_t>(-2 - static_cast<int64_t>(sh));
    // Every pending row belongs to a pending file and was read there (checked above).
    if (f < 0 || k >= parts[static_cast<size_t>(f)].shape.size()) {
      a.shape[i] = -1;
      continue;
    }
    a.shape[i] = shape_map[static_cast<size_t>(f)]
                          [static_cast<size_t>(parts[static_cast<size_t>(f)].shape[k])];
  }
  for (auto& part : parts) {
    t.launch_delays.insert(t.launch_delays.end(), part.delays.begin(), part.delays.end());
  }
  t.pending_shapes.clear();
}

}  // namespace c3::analyzer
