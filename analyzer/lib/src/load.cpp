#include "c3/analyzer/load.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "c3/tracedb/reader.h"

namespace fs = std::filesystem;

namespace c3::analyzer {
namespace {

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
    auto it = ids_.find({k1, k2});
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<int32_t>(shapes_.size());
    shapes_.push_back(s);
    ids_.emplace(std::make_pair(k1, k2), id);
    return id;
  }

 private:
  std::vector<KernelShape>& shapes_;
  std::map<std::pair<uint64_t, uint64_t>, int32_t> ids_;
};

void skip(Trace& t, const std::string& what) {
  if (t.skipped++ == 0) t.first_skipped = what;
}

void load_file(const std::string& path, Trace& t, Names& names, Shapes& shapes,
               const std::function<void()>& tick) {
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
  auto process_index = [&](int64_t id) -> int {
    auto it = proc.find(id);
    return it == proc.end() ? -1 : it->second;
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
  std::map<std::pair<int64_t, int64_t>, std::vector<int32_t>>
      by_external;  // (process, external id)
  {
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
      by_external[{q.i64(1), q.i64(10)}].push_back(static_cast<int32_t>(t.collectives.size()));
      t.collectives.push_back(std::move(c));
    }
  }
  // (process, correlation id) -> external ids pushed around its launch.
  std::map<std::pair<int64_t, int64_t>, std::vector<int64_t>> external_of;
  if (!by_external.empty()) {
    auto q = r->query(
        "SELECT process_id, correlation_id, external_id FROM external_correlation WHERE "
        "external_kind = 'custom0'");
    while (q.step()) {
      if (by_external.count({q.i64(0), q.i64(2)}) != 0)
        external_of[{q.i64(0), q.i64(1)}].push_back(q.i64(2));
    }
  }
  // The collective of a GPU row, preferring the call on the row's own device (a group's calls
  // share its work); every call it belongs to gets the row in its GPU span.
  auto link = [&](int64_t process_db_id, int64_t correlation, int16_t device, int64_t s,
                  int64_t e) -> int32_t {
    if (external_of.empty() || correlation < 0) return -1;
    auto it = external_of.find({process_db_id, correlation});
    if (it == external_of.end()) return -1;
    int32_t best = -1;
    for (const int64_t ext : it->second) {
      for (const int32_t c : by_external[{process_db_id, ext}]) {
        Collective& col = t.collectives[static_cast<size_t>(c)];
        col.gpu_start = col.gpu_start < 0 ? s : std::min(col.gpu_start, s);
        col.gpu_end = std::max(col.gpu_end, e);
        if (best < 0 ||
            (col.device == device && t.collectives[static_cast<size_t>(best)].device != device)) {
          best = c;
        }
      }
    }
    return best;
  };
  // String table of this file.
  std::unordered_map<int64_t, int32_t> str;
  {
    auto q = r->query("SELECT id, value FROM string");
    while (q.step()) str.emplace(q.i64(0), names.id(q.text(1)));
  }
  Activities& a = t.activities;
  auto check = [&](int p, int64_t s, int64_t e, const std::string& table, int64_t id) {
    tick();
    if (p < 0) {
      skip(t, path + ": " + table + " row " + std::to_string(id) + " has no process");
      return false;
    }
    if (e < s) {
      skip(t, path + ": " + table + " row " + std::to_string(id) + " ends before it starts");
      return false;
    }
    return true;
  };
  {
    auto q = r->query(
        "SELECT id, process_id, device_id, IFNULL(stream_id, -1), start_ns, end_ns, name_id, "
        "grid_x * grid_y * grid_z, block_x * block_y * block_z, registers_per_thread, "
        "static_shared_bytes + dynamic_shared_bytes, IFNULL(submitted_ns, -1), "
        "IFNULL(correlation_id, -1) FROM kernel");
    while (q.step()) {
      const int p = process_index(q.i64(1));
      const int64_t s = q.i64(4), e = q.i64(5);
      if (!check(p, s, e, "kernel", q.i64(0))) continue;
      auto nit = str.find(q.i64(6));
      const int32_t name = nit == str.end() ? names.id("?") : nit->second;
      const auto dev = static_cast<int16_t>(q.i64(2));
      const size_t i = a.push(s, e, name, static_cast<int32_t>(q.i64(3)), dev,
                              static_cast<int16_t>(p), Kind::kernel, 0);
      KernelShape shape;
      shape.grid = static_cast<uint32_t>(std::clamp<int64_t>(q.i64(7), 0, UINT32_MAX));
      shape.block = static_cast<uint32_t>(std::clamp<int64_t>(q.i64(8), 0, UINT32_MAX));
      shape.registers = static_cast<uint16_t>(std::clamp<int64_t>(q.i64(9), 0, UINT16_MAX));
      shape.shared = static_cast<uint32_t>(std::clamp<int64_t>(q.i64(10), 0, UINT32_MAX));
      a.shape[i] = shapes.id(shape);
      a.collective[i] = link(q.i64(1), q.i64(12), dev, s, e);
      if (q.i64(11) >= 0 && q.i64(11) <= s)
        t.launch_delays.push_back({static_cast<int16_t>(p), dev, s - q.i64(11)});
    }
  }
  {
    auto q = r->query(
        "SELECT id, process_id, device_id, IFNULL(stream_id, -1), start_ns, end_ns, copy_kind, "
        "bytes, IFNULL(channel_id, -1), IFNULL(correlation_id, -1) FROM memcpy");
    while (q.step()) {
      const int p = process_index(q.i64(1));
      const int64_t s = q.i64(4), e = q.i64(5);
      if (!check(p, s, e, "memcpy", q.i64(0))) continue;
      const auto dev = static_cast<int16_t>(q.i64(2));
      const size_t i = a.push(s, e, names.id("Memcpy " + q.text(6)), static_cast<int32_t>(q.i64(3)),
                              dev, static_cast<int16_t>(p), Kind::memcpy, q.i64(7));
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
      if (!check(p, s, e, "memset", q.i64(0))) continue;
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

Trace load(const std::vector<std::string>& files, const LoadOptions& options) {
  Trace t;
  Names names(t.names);
  Shapes shapes(t.shapes);
  int64_t total = 0, done = 0;
  if (options.progress) {
    for (const auto& f : files) {
      auto r = tracedb::Reader::open(f);
      for (const char* table : {"kernel", "memcpy", "memset"}) total += r->count(table);
    }
  }
  const std::function<void()> tick = [&] {
    if (options.progress && (++done & 0xFFFFF) == 0) options.progress(done, total);
  };
  for (const auto& f : files) {
    load_file(f, t, names, shapes, tick);
    if (options.progress) options.progress(done, total);
  }
  t.activities.sort();
  classify(t, options.rules);
  std::sort(t.ranges.begin(), t.ranges.end(), [](const Range& a, const Range& b) {
    if (a.process != b.process) return a.process < b.process;
    return a.start < b.start;
  });
  return t;
}

}  // namespace c3::analyzer
