#include "kineto_write.h"

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kineto_names.h"

namespace c3::importer::kineto {
namespace {

// The first start and the last end of everything the process did (0, 0 when nothing).
std::pair<int64_t, int64_t> span(const Parsed& p) {
  int64_t first = INT64_MAX, last = INT64_MIN;
  auto cover = [&](int64_t start, int64_t end) {
    first = std::min(first, start);
    last = std::max(last, end);
  };
  for (const auto& k : p.kernels) cover(k.start_ns, k.end_ns);
  for (const auto& m : p.memcpys) cover(m.start_ns, m.end_ns);
  for (const auto& m : p.memsets) cover(m.start_ns, m.end_ns);
  for (const auto& a : p.api) cover(a.start_ns, a.end_ns);
  // CPU-only traces: the annotations (user annotations, ProfilerStep) are all there is.
  for (const auto& g : p.ranges) cover(g.start_ns, g.end_ns);
  if (first == INT64_MAX) first = last = 0;
  return {first, last};
}

// The process row and its meta; returns its id.
int64_t write_process(const Parsed& p, const std::string& path, const Stats& st,
                      ImportWriter& out) {
  tracedb::ProcessRow proc;
  proc.pid = p.pid >= 0 ? p.pid : 0;
  proc.host = p.host;
  proc.rank = p.rank;
  proc.world_size = p.world_size;
  proc.command_line = "kineto trace " + path;
  const auto [first, last] = span(p);
  proc.start_ns = first;
  proc.end_ns = last;
  proc.trace_clock = "kineto (microseconds, imported as ns)";
  proc.anchor_start_trace_ns = 0;
  proc.anchor_start_realtime_ns = p.base_ns;
  proc.anchor_start_monotonic_ns = 0;
  const int64_t id = out.insert(proc);
  const std::string meta = "kineto_" + std::to_string(id);
  out.set_meta(meta + "_file", path);
  if (st.rounded) out.set_meta(meta + "_timestamps", "rounded to microseconds (HTA)");
  if (!p.nccl_version.empty()) out.set_meta(meta + "_nccl_version", p.nccl_version);
  return id;
}

// From deviceProperties, or one row per device seen, with what is known.
void write_devices(Parsed& p, int64_t process, ImportWriter& out) {
  std::map<int64_t, bool> seen;
  // (Runs of one device are the rule: the map is asked only when the device changes.)
  std::optional<int64_t> last;
  auto see = [&](const GpuEvent& g) {
    if (last == g.device_id) return;
    last = g.device_id;
    seen[g.device_id] = true;
  };
  for (const auto& k : p.kernels) see(k);
  for (const auto& m : p.memcpys) see(m);
  for (const auto& m : p.memsets) see(m);
  for (auto& d : p.devices) {
    if (!seen.count(d.device_id)) continue;  // Kineto lists every GPU of the node
    d.process_id = process;
    out.insert(d);
    seen.erase(d.device_id);
  }
  for (const auto& [dev, unused] : seen) out.unknown_device(process, dev);
}

// One row per (device, stream) that GPU work ran on.
void write_streams(const Parsed& p, int64_t process, ImportWriter& out) {
  std::map<std::pair<int64_t, int64_t>, bool> streams;
  std::optional<std::pair<int64_t, int64_t>> last;
  auto see = [&](const GpuEvent& g) {
    if (!g.stream_id) return;
    const std::pair<int64_t, int64_t> key{g.device_id, *g.stream_id};
    if (last == key) return;  // (the map is asked only when the stream changes)
    last = key;
    streams[key] = true;
  };
  for (const auto& k : p.kernels) see(k);
  for (const auto& m : p.memcpys) see(m);
  for (const auto& m : p.memsets) see(m);
  for (const auto& [key, unused] : streams) {
    tracedb::StreamRow s;
    s.process_id = process;
    s.device_id = key.first;
    s.stream_id = key.second;
    out.insert(s);
  }
}

// Collectives: one per NCCL kernel, in order per process group (the matching key across ranks
// of imported traces), linked to its kernel through an external correlation.
void write_collectives(const Parsed& p, int64_t process, Stats& st, ImportWriter& out) {
  // Correlation id -> launching API call's start (host time of a collective): the first call of
  // each id a collective's kernel has (only those ids are kept: a file has far more calls).
  std::unordered_map<int64_t, std::optional<int64_t>> launch_at;
  launch_at.reserve(p.colls.size());
  for (const auto& c : p.colls) {
    if (c.launch) launch_at.emplace(*c.launch, std::nullopt);
  }
  if (!launch_at.empty()) {
    for (const auto& a : p.api) {
      auto it = launch_at.find(a.correlation_id);
      if (it != launch_at.end() && !it->second) it->second = a.start_ns;
    }
  }
  // Per group: its comm_id and the next sequence number.
  struct Group {
    std::string comm_id;
    int64_t seq = 0;
  };
  std::map<std::string, Group, std::less<>> groups;
  Group* last = nullptr;
  const std::string* last_name = nullptr;
  int64_t ext = 1;
  tracedb::CollectiveRow row;
  tracedb::ExternalCorrelationRow x;
  x.process_id = process;
  x.external_kind = "custom0";
  for (const auto& c : p.colls) {
    const auto& k = p.kernels[c.kernel];
    row.process_id = process;
    row.thread_id = 0;
    row.device_id = k.device_id;
    row.stream_id = k.stream_id;
    row.stream_handle = k.stream_id.value_or(0);
    const std::string& named = p.names.name(c.group);
    std::string stream_group;
    if (named.empty()) stream_group = "stream " + std::to_string(k.stream_id.value_or(-1));
    const std::string_view group = named.empty() ? stream_group : named;
    if (last == nullptr || group != *last_name) {
      auto it = groups.find(group);
      if (it == groups.end()) {
        it = groups.emplace(std::string(group), Group{"pg:" + std::string(group), 0}).first;
      }
      last = &it->second;
      last_name = &it->first;
    }
    row.comm_id = last->comm_id;
    row.comm_handle = 0;
    row.rank = p.rank;
    row.nranks.reset();
    if (c.group_size > 0) row.nranks = c.group_size;
    const std::string& dtype = p.names.name(c.dtype);
    row.op = p.names.name(c.op);
    row.datatype = dtype.empty() ? "unknown" : dtype;
    row.count = c.in_nelems >= 0 ? c.in_nelems : 0;
    // Unknown (0) when the count is missing or its bytes overflow.
    if (c.in_nelems < 0 || __builtin_mul_overflow(c.in_nelems, dtype_size(dtype), &row.bytes)) {
      row.bytes = 0;
    }
    row.seq = last->seq++;
    row.external_id = ext;
    auto it = c.launch ? launch_at.find(*c.launch) : launch_at.end();
    row.host_start_ns = it != launch_at.end() && it->second ? *it->second : k.start_ns;
    row.host_end_ns = row.host_start_ns;
    row.result = 0;
    out.insert(row);
    if (k.correlation_id) {
      x.external_id = ext;
      x.correlation_id = *k.correlation_id;
      out.insert(x);
    }
    ++ext;
    ++st.collectives;
  }
}

template <class Row>
void gpu_columns(Row& row, int64_t process, const GpuEvent& g) {
  row.process_id = process;
  row.device_id = g.device_id;
  row.stream_id = g.stream_id;
  row.correlation_id = g.correlation_id;
  row.start_ns = g.start_ns;
  row.end_ns = g.end_ns;
}

void write_kernels(const Parsed& p, int64_t process, const std::vector<int64_t>& name_ids,
                   ImportWriter& out) {
  tracedb::KernelRow row;
  row.static_shared_bytes = 0;
  row.launch_type = "regular";
  row.device_launched = 0;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    const KernelEvent& k = p.kernels[i];
    gpu_columns(row, process, k);
    row.name_id = name_ids[i];
    const LaunchShape& shape = p.shapes[static_cast<size_t>(k.shape)];
    row.grid_x = shape.grid_x;
    row.grid_y = shape.grid_y;
    row.grid_z = shape.grid_z;
    row.block_x = shape.block_x;
    row.block_y = shape.block_y;
    row.block_z = shape.block_z;
    row.registers_per_thread = shape.registers_per_thread;
    row.dynamic_shared_bytes = shape.dynamic_shared_bytes;
    out.insert(row);
  }
}

void write_copies(const Parsed& p, int64_t process, ImportWriter& out) {
  tracedb::MemcpyRow row;
  row.async = 1;
  row.copy_count = 1;
  for (const GpuEvent& m : p.memcpys) {
    gpu_columns(row, process, m);
    memcpy_kinds(p.names.name(m.name), &row.copy_kind, &row.src_kind, &row.dst_kind);
    row.bytes = m.bytes;
    out.insert(row);
  }
}

void write_sets(const Parsed& p, int64_t process, ImportWriter& out) {
  tracedb::MemsetRow row;
  row.value = 0;
  row.memory_kind = "device";
  row.async = 1;
  for (const GpuEvent& m : p.memsets) {
    gpu_columns(row, process, m);
    row.bytes = m.bytes;
    out.insert(row);
  }
}

void write_api_calls(Parsed& p, int64_t process, ImportWriter& out) {
  tracedb::ApiCallRow row;
  row.process_id = process;
  row.return_value = 0;
  for (size_t i = 0; i < p.api.size(); ++i) {
    const ApiEvent& a = p.api[i];
    row.thread_id = a.thread_id;
    row.api = a.runtime ? "runtime" : "driver";
    row.name_id = p.names.db_id(p.api_names[i], out);
    row.cbid = a.cbid;
    row.correlation_id = a.correlation_id;
    row.start_ns = a.start_ns;
    row.end_ns = a.end_ns;
    out.insert(row);
  }
}

// cuda_sync events as sync rows and, for each cudaEventRecord a "Stream Wait Event" names, a
// cuda_event row: the record's stream, its call's correlation id standing for the event (a
// PyTorch trace names the record, not the event). Written before the GPU rows, which the
// analyzer's builder then keeps by stream (TraceBuilder::stream_wait).
void write_syncs(const Parsed& p, int64_t process, ImportWriter& out) {
  std::map<int64_t, const SyncEvent*> records;
  tracedb::SyncRow row;
  row.process_id = process;
  for (const SyncEvent& y : p.syncs) {
    row.device_id = y.device_id;
    row.stream_id = y.stream_id;
    row.correlation_id = y.correlation_id;
    row.start_ns = y.start_ns;
    row.end_ns = y.end_ns;
    row.type = y.type;
    row.cuda_event_id = y.record_correlation;
    out.insert(row);
    if (y.record_correlation && y.record_stream) records.try_emplace(*y.record_correlation, &y);
  }
  tracedb::CudaEventRow ev;
  ev.process_id = process;
  for (const auto& [correlation, y] : records) {
    ev.device_id = y->device_id;
    ev.stream_id = *y->record_stream;
    ev.correlation_id = correlation;
    ev.cuda_event_id = correlation;
    out.insert(ev);
  }
}

}  // namespace

void write(Parsed& p, const std::string& path, const Options& options, Stats& st,
           ImportWriter& out) {
  const int64_t process = write_process(p, path, st, out);
  ++st.processes;
  write_devices(p, process, out);
  write_streams(p, process, out);
  std::vector<int64_t> kernel_name_ids(p.kernels.size());
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    kernel_name_ids[i] = p.names.db_id(p.kernel_names[i], out);
  }
  // (a sink may index the GPU rows' launches from the lowest id: RowSink::correlations_from)
  int64_t lowest = INT64_MAX;
  auto low = [&lowest](const GpuEvent& g) {
    if (g.correlation_id && *g.correlation_id >= 0) lowest = std::min(lowest, *g.correlation_id);
  };
  for (const KernelEvent& k : p.kernels) low(k);
  for (const GpuEvent& c : p.memcpys) low(c);
  for (const GpuEvent& m : p.memsets) low(m);
  if (lowest != INT64_MAX) out.correlations_from(lowest);
  out.rows_ahead(static_cast<int64_t>(p.kernels.size() + p.memcpys.size() + p.memsets.size()),
                 static_cast<int64_t>(p.colls.size()));
  write_collectives(p, process, st, out);
  write_syncs(p, process, out);
  write_kernels(p, process, kernel_name_ids, out);
  write_copies(p, process, out);
  write_sets(p, process, out);
  if (options.api_calls) write_api_calls(p, process, out);
  for (auto& r : p.ranges) r.process_id = process;
  out.ranges(p.ranges);
}

}  // namespace c3::importer::kineto
