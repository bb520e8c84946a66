#include "c3/analyzer/load.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <unordered_map>

#include "c3/tracedb/reader.h"

namespace fs = std::filesystem;

namespace c3::analyzer {
namespace {

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

class Names {
 public:
  explicit Names(std::vector<std::string>& names) : names_(names) {
    for (size_t i = 0; i < names_.size(); ++i) ids_.emplace(names_[i], static_cast<int32_t>(i));
  }
  int32_t id(const std::string& s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<int32_t>(names_.size());
    names_.push_back(s);
    ids_.emplace(s, id);
    return id;
  }

 private:
  std::vector<std::string>& names_;
  std::unordered_map<std::string, int32_t> ids_;
};

// Kernel shapes, interned.
class Shapes {
 public:
  explicit Shapes(std::vector<KernelShape>& shapes) : shapes_(shapes) {}
  int32_t id(const KernelShape& s) {
    const uint64_t k1 = (static_cast<uint64_t>(s.grid) << 32) | s.block;
    const uint64_t k2 = (static_cast<uint64_t>(s.registers) << 32) | s.shared;
    // A few shapes make up most launches: a small direct-mapped cache before the hash map.
    Recent& r = recent_[(k1 * 0x9E3779B97F4A7C15ULL ^ k2) >> 58];
    if (r.id >= 0 && r.k1 == k1 && r.k2 == k2) return r.id;
    auto it = ids_.find({k1, k2});
    int32_t id = 0;
    if (it != ids_.end()) {
      id = it->second;
    } else {
      id = static_cast<int32_t>(shapes_.size());
      shapes_.push_back(s);
      ids_.emplace(std::make_pair(k1, k2), id);
    }
    r = {k1, k2, id};
    return id;
  }

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
// and small, so the main process's live in a plain vector; other processes' in a hash.
class LinkTable {
 public:
  uint32_t& slot(int64_t process, int64_t correlation, bool main) {
    if (main && correlation >= 0 && correlation < kDenseLimit) {
      main_process_ = process;
      const auto i = static_cast<size_t>(correlation);
      if (dense_.size() <= i) dense_.resize(std::max(i + 1, dense_.size() * 2), 0);
      return dense_[i];
    }
    return sparse_[{process, correlation}];
  }
  uint32_t find(int64_t process, int64_t correlation) const {
    if (process == main_process_ && correlation >= 0 &&
        static_cast<size_t>(correlation) < dense_.size()) {
      return dense_[static_cast<size_t>(correlation)];
    }
    if (sparse_.empty()) return 0;
    auto it = sparse_.find({process, correlation});
    return it == sparse_.end() ? 0 : it->second;
  }

 private:
  static constexpr int64_t kDenseLimit = int64_t{1} << 28;
  int64_t main_process_ = INT64_MIN;
  std::vector<uint32_t> dense_;
  std::unordered_map<std::pair<int64_t, int64_t>, uint32_t, PairHash> sparse_;
};

void skip(Trace& t, const std::string& what) {
  if (t.skipped++ == 0) t.first_skipped = what;
}

// Loads one file into `t` (a trace of its own: files load in parallel, then merge). `tick`
// is called every kTickRows GPU rows.
constexpr int64_t kTickRows = 1 << 16;

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

KernelShape clamp_shape(int64_t grid, int64_t block, int64_t registers, int64_t shared) {
  KernelShape shape;
  shape.grid = static_cast<uint32_t>(std::clamp<int64_t>(grid, 0, UINT32_MAX));
  shape.block = static_cast<uint32_t>(std::clamp<int64_t>(block, 0, UINT32_MAX));
  shape.registers = static_cast<uint16_t>(std::clamp<int64_t>(registers, 0, UINT16_MAX));
  shape.shared = static_cast<uint32_t>(std::clamp<int64_t>(shared, 0, UINT32_MAX));
  return shape;
}

constexpr const char* kShapeColumns =
    "grid_x * grid_y * grid_z, block_x * block_y * block_z, registers_per_thread, "
    "static_shared_bytes + dynamic_shared_bytes, IFNULL(submitted_ns, -1)";

void load_file(const std::string& path, Trace& t, Names& names, Shapes& shapes, bool defer,
               const std::function<void(int64_t)>& tick) {
  const auto stamp = file_stamp(path);
  auto r = tracedb::Reader::open(path);
  // Processes of this file: process.id -> Trace::processes index.
  std::map<int64_t, int16_t> proc;
  {
    auto q = r->query(
        "SELECT id, pid, host, rank, world_size, command_line, trace_clock, anchor_start_trace_ns, "
        "anchor_start_realtime_ns FROM process ORDER BY id");
    while (q.step()) {
      if (t.processes.size() >= static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
        throw std::invalid_argument("more than 32767 processes: analyze fewer traces at once");
      }
      Process p;
      p.source = path;
      p.pid = q.i64(1);
      p.host = q.text(2);
      p.rank = q.opt_i64(3);
      p.world_size = q.opt_i64(4);
      p.command_line = q.text(5);
      p.trace_clock = q.text(6);
      p.anchor_trace_ns = q.i64(7);
      p.anchor_realtime_ns = q.i64(8);
      p.db_id = q.i64(0);
      proc[q.i64(0)] = static_cast<int16_t>(t.processes.size());
      t.processes.push_back(std::move(p));
    }
  }
  int64_t last_id = INT64_MIN;
  int last_index = -1;
  auto process_index = [&](int64_t id) -> int {
    if (id == last_id) return last_index;
    auto it = proc.find(id);
    last_id = id;
    last_index = it == proc.end() ? -1 : it->second;
    return last_index;
  };
  {
    auto q = r->query(
        "SELECT process_id, device_id, name, sm_count, max_threads_per_sm, max_blocks_per_sm, "
        "max_registers_per_sm, max_shared_memory_per_sm, memory_bandwidth_bytes_per_s FROM device");
    while (q.step()) {
      const int p = process_index(q.i64(0));
      if (p < 0) continue;
      Device d;
      d.process = static_cast<int16_t>(p);
      d.device = static_cast<int16_t>(q.i64(1));
      d.name = q.text(2);
      d.sm_count = static_cast<int>(q.i64(3));
      d.max_threads_per_sm = static_cast<int>(q.i64(4));
      d.max_blocks_per_sm = static_cast<int>(q.i64(5));
      d.max_registers_per_sm = static_cast<int>(q.i64(6));
      d.max_shared_per_sm = q.i64(7);
      d.memory_bandwidth = q.opt_i64(8).value_or(0);
      t.devices.push_back(std::move(d));
    }
  }
  // Collectives and the GPU rows each launched: collective.external_id was pushed as CUPTI
  // external correlation (kind custom0) around the call, so external_correlation maps it to the
  // correlation ids of the kernels and copies it launched. Linked here in memory (the
  // collective_activity view joins through gpu_activity, a UNION view no index reaches: quadratic
  // on traces with many collectives).
  // (process, external id) -> the calls that pushed it, as a chain in call order: ext_first
  // holds the first (1-based), next_call the following one (-1: last). Grouped calls share their
  // group's external id.
  const int64_t main_process = proc.empty() ? -1 : proc.begin()->first;
  LinkTable ext_first;
  std::vector<int32_t> next_call, last_call;
  {
    if (auto n = r->query("SELECT IFNULL(MAX(id), 0) FROM collective"); n.step()) {
      const auto expect = static_cast<size_t>(std::clamp<int64_t>(n.i64(0), 0, int64_t{1} << 28));
      t.collectives.reserve(expect);
      next_call.reserve(expect);
      last_call.reserve(expect);
    }
    auto q = r->query(
        "SELECT c.id, c.process_id, IFNULL(c.device_id, -1), IFNULL(c.comm_id, ''), c.seq, c.op, "
        "c.bytes, IFNULL(c.nranks, 0), IFNULL(c.rank, -1), c.host_start_ns, c.external_id "
        "FROM collective c ORDER BY c.id");
    while (q.step()) {
      const int p = process_index(q.i64(1));
      if (p < 0) continue;
      Collective c;
      c.process = static_cast<int16_t>(p);
      c.device = static_cast<int16_t>(q.i64(2));
      c.comm_id = q.text(3);
      c.seq = q.i64(4);
      c.op = q.text(5);
      c.bytes = q.i64(6);
      c.nranks = static_cast<int>(q.i64(7));
      c.rank = static_cast<int>(q.i64(8));
      c.host_start = q.i64(9);
      const auto idx = static_cast<int32_t>(t.collectives.size());
      uint32_t& first = ext_first.slot(q.i64(1), q.i64(10), q.i64(1) == main_process);
      next_call.push_back(-1);
      last_call.push_back(idx);
      if (first == 0) {
        first = static_cast<uint32_t>(idx) + 1;
      } else {
        const auto head = static_cast<size_t>(first - 1);
        next_call[static_cast<size_t>(last_call[head])] = idx;
        last_call[head] = idx;
      }
      t.collectives.push_back(std::move(c));
    }
  }
  // (process, correlation id) -> the chain of the external id pushed around that launch
  // (1-based first call; with the top bit set, an index into `several` when a launch carries
  // more than one external id).
  constexpr uint32_t kSeveral = 0x80000000u;
  LinkTable linked;
  std::vector<std::vector<uint32_t>> several;
  if (!t.collectives.empty()) {
    auto q = r->query(
        "SELECT process_id, correlation_id, external_id FROM external_correlation WHERE "
        "external_kind = 'custom0'");
    while (q.step()) {
      const uint32_t first = ext_first.find(q.i64(0), q.i64(2));
      if (first == 0) continue;
      uint32_t& slot = linked.slot(q.i64(0), q.i64(1), q.i64(0) == main_process);
      if (slot == 0) {
        slot = first;
      } else if ((slot & kSeveral) != 0) {
        several[slot & ~kSeveral].push_back(first);
      } else if (slot != first) {
        several.push_back({slot, first});
        slot = kSeveral | static_cast<uint32_t>(several.size() - 1);
      }
    }
  }
  // The collective of a GPU row, preferring the call on the row's own device (a group's calls
  // share its work); every call it belongs to gets the row in its GPU span.
  auto link = [&](int64_t process_db_id, int64_t correlation, int16_t device, int64_t s,
                  int64_t e) -> int32_t {
    if (t.collectives.empty() || correlation < 0) return -1;
    const uint32_t slot = linked.find(process_db_id, correlation);
    if (slot == 0) return -1;
    int32_t best = -1;
    auto visit = [&](uint32_t first) {
      for (int32_t c = static_cast<int32_t>(first) - 1; c >= 0;
           c = next_call[static_cast<size_t>(c)]) {
        Collective& col = t.collectives[static_cast<size_t>(c)];
        col.gpu_start = col.gpu_start < 0 ? s : std::min(col.gpu_start, s);
        col.gpu_end = std::max(col.gpu_end, e);
        if (best < 0 ||
            (col.device == device && t.collectives[static_cast<size_t>(best)].device != device)) {
          best = c;
        }
      }
    };
    if ((slot & kSeveral) != 0) {
      for (const uint32_t first : several[slot & ~kSeveral]) visit(first);
    } else {
      visit(slot);
    }
    return best;
  };
  // String table of this file.
  // string.id -> name index: a vector, as the collector's ids are 1, 2, ...; a hash otherwise.
  std::vector<int32_t> str_dense;
  std::unordered_map<int64_t, int32_t> str_sparse;
  {
    std::vector<std::pair<int64_t, int32_t>> all;
    auto q = r->query("SELECT id, value FROM string");
    int64_t max_id = -1;
    while (q.step()) {
      all.emplace_back(q.i64(0), names.id(q.text(1)));
      max_id = std::max(max_id, all.back().first);
    }
    const bool dense = max_id < 4 * static_cast<int64_t>(all.size()) + 1024;
    if (dense) str_dense.assign(static_cast<size_t>(max_id + 1), -1);
    for (const auto& [id, name] : all) {
      if (dense && id >= 0) {
        str_dense[static_cast<size_t>(id)] = name;
      } else {
        str_sparse.emplace(id, name);
      }
    }
  }
  int32_t unknown_name = -1;
  auto name_of = [&](int64_t id) {
    int32_t n = -1;
    if (id >= 0 && static_cast<size_t>(id) < str_dense.size()) {
      n = str_dense[static_cast<size_t>(id)];
    } else if (!str_sparse.empty()) {
      auto it = str_sparse.find(id);
      if (it != str_sparse.end()) n = it->second;
    }
    if (n >= 0) return n;
    if (unknown_name < 0) unknown_name = names.id("?");
    return unknown_name;
  };
  Activities& a = t.activities;
  {
    // Room for every row up front (max(id) is an index lookup, not a scan).
    int64_t expect = 0;
    for (const char* table : {"kernel", "memcpy", "memset"}) {
      auto q = r->query(std::string("SELECT IFNULL(MAX(id), 0) FROM ") + table);
      if (q.step()) expect += q.i64(0);
    }
    a.reserve(a.size() + static_cast<size_t>(std::clamp<int64_t>(expect, 0, int64_t{1} << 31)));
  }
  int64_t rows = 0;
  // Whether a row is usable; the row id (column 0) is read only for the message.
  auto check = [&](const tracedb::Query& q, int p, int64_t s, int64_t e, const char* table) {
    if (++rows == kTickRows) {
      tick(rows);
      rows = 0;
    }
    if (p < 0) {
      skip(t, path + ": " + std::string(table) + " row " + std::to_string(q.i64(0)) +
                  " has no process");
      return false;
    }
    if (e < s) {
      skip(t, path + ": " + std::string(table) + " row " + std::to_string(q.i64(0)) +
                  " ends before it starts");
      return false;
    }
    return true;
  };
  {
    PendingShapes pending;
    auto q = r->query(
        std::string("SELECT id, process_id, device_id, IFNULL(stream_id, -1), start_ns, end_ns, "
                    "name_id, IFNULL(correlation_id, -1)") +
        (defer ? "" : std::string(", ") + kShapeColumns) + " FROM kernel");
    while (q.step()) {
      const int64_t process_db = q.i64(1);
      const int p = process_index(process_db);
      const int64_t s = q.i64(4), e = q.i64(5);
      if (!check(q, p, s, e, "kernel")) {
        if (defer) pending.skipped.push_back(q.i64(0));
        continue;
      }
      const auto dev = static_cast<int16_t>(q.i64(2));
      const size_t i = a.push(s, e, name_of(q.i64(6)), static_cast<int32_t>(q.i64(3)), dev,
                              static_cast<int16_t>(p), Kind::kernel, 0);
      a.collective[i] = link(process_db, q.i64(7), dev, s, e);
      if (defer) {
        if (pending.kernels >= int64_t{INT32_MAX} - 2) {
          throw std::invalid_argument(path + ": more than 2^31 kernels in one file");
        }
        a.shape[i] = static_cast<int32_t>(-2 - pending.kernels++);
        continue;
      }
      a.shape[i] = shapes.id(clamp_shape(q.i64(8), q.i64(9), q.i64(10), q.i64(11)));
      const int64_t submitted = q.i64(12);
      if (submitted >= 0 && submitted <= s)
        t.launch_delays.push_back({static_cast<int16_t>(p), dev, s - submitted});
    }
    if (defer && pending.kernels > 0) {
      pending.path = path;
      pending.size = stamp.first;
      pending.mtime_ns = stamp.second;
      for (const auto& [db_id, index] : proc) pending.processes.emplace_back(db_id, index);
      t.pending_shapes.push_back(std::move(pending));
    }
  }
  {
    // "Memcpy <kind>" names, interned once per kind rather than per row.
    struct CopyNames {
      std::unordered_map<std::string, int32_t> ids;
      int32_t id(const std::string& kind, Names& all) {
        auto it = ids.find(kind);
        if (it != ids.end()) return it->second;
        return ids.emplace(kind, all.id("Memcpy " + kind)).first->second;
      }
    } copy_names;
    auto q = r->query(
        "SELECT id, process_id, device_id, IFNULL(stream_id, -1), start_ns, end_ns, copy_kind, "
        "bytes, IFNULL(channel_id, -1), IFNULL(correlation_id, -1) FROM memcpy");
    while (q.step()) {
      const int p = process_index(q.i64(1));
      const int64_t s = q.i64(4), e = q.i64(5);
      if (!check(q, p, s, e, "memcpy")) continue;
      const auto dev = static_cast<int16_t>(q.i64(2));
      const int32_t copy_name = copy_names.id(q.text(6), names);
      const size_t i = a.push(s, e, copy_name, static_cast<int32_t>(q.i64(3)), dev,
                              static_cast<int16_t>(p), Kind::memcpy, q.i64(7));
      a.collective[i] = link(q.i64(1), q.i64(9), dev, s, e);
      a.shape[i] = static_cast<int32_t>(std::clamp<int64_t>(q.i64(8), -1, INT32_MAX));
    }
  }
  {
    auto q = r->query(
        "SELECT id, process_id, device_id, IFNULL(stream_id, -1), start_ns, end_ns, bytes, "
        "IFNULL(correlation_id, -1) FROM memset");
    while (q.step()) {
      const int p = process_index(q.i64(1));
      const int64_t s = q.i64(4), e = q.i64(5);
      if (!check(q, p, s, e, "memset")) continue;
      a.push(s, e, names.id("Memset"), static_cast<int32_t>(q.i64(3)),
             static_cast<int16_t>(q.i64(2)), static_cast<int16_t>(p), Kind::memset, q.i64(6));
      // A set a collective launched counts in its GPU span (sets are not linked rows).
      link(q.i64(1), q.i64(7), static_cast<int16_t>(q.i64(2)), s, e);
    }
  }
  {
    // c3bench results recorded with the trace (bench_run.pid names the process).
    auto q = r->query(
        "SELECT r.pid, r.backend, r.simulated, b.label, IFNULL(b.scenario, ''), "
        "IFNULL(b.t_comp_ns, 0), "
        "IFNULL(b.t_comm_ns, 0), IFNULL(b.t_c3_ns, 0), b.compute_slowdown, b.comm_slowdown, "
        "b.ideal_speedup, "
        "b.realized_speedup, b.fraction_of_ideal, b.realized_over_ideal, "
        "b.decomposition_loss_comp, "
        "b.decomposition_loss_comm, b.schedule_speedup FROM bench_result b JOIN bench_run r ON "
        "r.id = b.run_id "
        "WHERE b.status = 'ok' ORDER BY b.id");
    auto opt = [&](int c) {
      return q.is_null(c) ? std::nullopt : std::optional<double>(q.real(c));
    };
    while (q.step()) {
      BenchResult b;
      for (const auto& [id, idx] : proc) {
        if (t.processes[static_cast<size_t>(idx)].pid == q.i64(0)) b.process = idx;
      }
      b.backend = q.text(1);
      b.simulated = q.i64(2) != 0;
      b.label = q.text(3);
      b.scenario = q.text(4);
      b.t_comp = q.real(5);
      b.t_comm = q.real(6);
      b.t_c3 = q.real(7);
      b.compute_slowdown = opt(8);
      b.comm_slowdown = opt(9);
      b.ideal_speedup = opt(10);
      b.realized_speedup = opt(11);
      b.fraction_of_ideal = opt(12);
      b.realized_over_ideal = opt(13);
      b.decomposition_loss_comp = opt(14);
      b.decomposition_loss_comm = opt(15);
      b.schedule_speedup = opt(16);
      t.bench.push_back(std::move(b));
    }
  }
  {
    auto q = r->query(
        "SELECT process_id, domain, name, start_ns, end_ns, IFNULL(depth, 0), thread_id FROM "
        "nvtx_range "
        "WHERE kind <> 'mark' AND end_ns >= start_ns");
    while (q.step()) {
      const int p = process_index(q.i64(0));
      if (p < 0) continue;
      Range g;
      g.process = static_cast<int16_t>(p);
      g.domain = q.text(1);
      g.name = q.text(2);
      g.start = q.i64(3);
      g.end = q.i64(4);
      g.depth = static_cast<int>(q.i64(5));
      g.thread = q.i64(6);
      t.ranges.push_back(std::move(g));
    }
  }
  tick(rows);
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
  const size_t threads =
      std::min<size_t>(tasks.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
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
  const size_t threads = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  pool.reserve(threads > 0 ? threads - 1 : 0);
  for (size_t i = 1; i < threads; ++i) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  if (options.progress) options.progress(done, total);
}

}  // namespace

Trace load(const std::vector<std::string>& files, const LoadOptions& options) {
  int64_t total = 0;
  if (options.progress) {
    for (const auto& f : files) {
      auto r = tracedb::Reader::open(f);
      for (const char* table : {"kernel", "memcpy", "memset"}) total += r->count(table);
    }
  }
  // Each file loads into a trace of its own, sorted there; the parts are then appended in file
  // order, so the whole stays sorted.
  std::vector<Trace> parts(files.size());
  parallel_files(files.size(), options, total,
                 [&](size_t f, const std::function<void(int64_t)>& tick) {
                   Names names(parts[f].names);
                   Shapes shapes(parts[f].shapes);
                   load_file(files[f], parts[f], names, shapes, options.defer_kernel_shapes, tick);
                   parts[f].activities.sort();
                 });
  Trace t;
  if (parts.size() == 1) {
    t = std::move(parts.front());
  } else {
    merge(t, parts);
  }
  t.activities.sort();  // already sorted: one check
  classify(t, options.rules);
  std::sort(t.ranges.begin(), t.ranges.end(), [](const Range& a, const Range& b) {
    if (a.process != b.process) return a.process < b.process;
    return a.start < b.start;
  });
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
