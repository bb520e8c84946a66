// PyTorch profiler / Kineto Chrome-trace JSON -> trace database.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "c3/importer/importer.h"
#include "c3/tracedb/writer.h"
#include "json_stream.h"

namespace c3::importer {
namespace {

using simdjson::dom::element;
using simdjson::dom::object;

// Kineto timestamps are microseconds, integers or decimals; nanoseconds exactly for integers.
// Sets *fractional when the value has a fractional part.
bool to_ns(const element& v, int64_t* out, bool* fractional) {
  int64_t i = 0;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    *out = i * 1000;
    return true;
  }
  uint64_t u = 0;
  if (v.get_uint64().get(u) == simdjson::SUCCESS) {
    *out = static_cast<int64_t>(u) * 1000;
    return true;
  }
  double d = 0;
  if (v.get_double().get(d) != simdjson::SUCCESS || !std::isfinite(d) || std::fabs(d) > 9e15)
    return false;
  const double ip = std::floor(d);
  if (d != ip) *fractional = true;
  *out = static_cast<int64_t>(ip) * 1000 + std::llround((d - ip) * 1000.0);
  return true;
}

std::string_view str(const object& o, const char* key) {
  std::string_view s;
  if (o[key].get_string().get(s) != simdjson::SUCCESS) return {};
  return s;
}

bool num(const object& o, const char* key, int64_t* out) {
  element v;
  if (o[key].get(v) != simdjson::SUCCESS) return false;
  int64_t i = 0;
  if (v.get_int64().get(i) == simdjson::SUCCESS) {
    *out = i;
    return true;
  }
  double d = 0;
  if (v.get_double().get(d) == simdjson::SUCCESS && std::isfinite(d)) {
    *out = std::llround(d);
    return true;
  }
  std::string_view s;
  if (v.get_string().get(s) == simdjson::SUCCESS) {  // some traces quote numbers
    try {
      *out = std::stoll(std::string(s));
      return true;
    } catch (...) {
    }
  }
  return false;
}

int64_t dims3(const object& o, const char* key, int64_t* x, int64_t* y, int64_t* z) {
  *x = *y = *z = 1;
  simdjson::dom::array a;
  if (o[key].get_array().get(a) != simdjson::SUCCESS) return 0;
  int64_t* out[3] = {x, y, z};
  size_t i = 0;
  for (element v : a) {
    int64_t n = 0;
    if (i < 3 && v.get_int64().get(n) == simdjson::SUCCESS) *out[i] = n;
    ++i;
  }
  return *x * *y * *z;
}

// "Memcpy DtoH (Device -> Pinned)" -> copy kind D2H, src Device, dst Pinned.
void memcpy_kinds(std::string_view name, std::string* kind, std::string* src, std::string* dst) {
  static const std::pair<const char*, const char*> kinds[] = {
      {"HtoD", "H2D"}, {"DtoH", "D2H"}, {"DtoD", "D2D"}, {"HtoH", "H2H"}, {"PtoP", "P2P"},
      {"AtoD", "A2D"}, {"DtoA", "D2A"}, {"AtoA", "A2A"}, {"AtoH", "A2H"}, {"HtoA", "H2A"}};
  *kind = "unknown";
  for (const auto& [k, v] : kinds) {
    if (name.find(k) != std::string_view::npos) *kind = v;
  }
  *src = *dst = "unknown";
  const size_t lp = name.find('('), arrow = name.find(" -> "), rp = name.rfind(')');
  if (lp != std::string_view::npos && arrow != std::string_view::npos &&
      rp != std::string_view::npos && lp < arrow && arrow < rp) {
    *src = std::string(name.substr(lp + 1, arrow - lp - 1));
    *dst = std::string(name.substr(arrow + 4, rp - arrow - 4));
  }
}

// PyTorch's collective names (allreduce, all_gather, _allgather_base, reduce_scatter_tensor,
// send, recv, broadcast, alltoall_base, ...) -> NCCL's.
std::string nccl_op(std::string_view s) {
  std::string n;
  for (char c : s) {
    if (c != '_') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (n.find("allreduce") != std::string::npos) return "AllReduce";
  if (n.find("allgather") != std::string::npos) return "AllGather";
  if (n.find("reducescatter") != std::string::npos) return "ReduceScatter";
  if (n.find("alltoall") != std::string::npos) return "AlltoAll";
  if (n.find("broadcast") != std::string::npos) return "Broadcast";
  if (n.find("sendrecv") != std::string::npos) return "SendRecv";
  if (n.find("send") != std::string::npos) return "Send";
  if (n.find("recv") != std::string::npos) return "Recv";
  if (n.find("reduce") != std::string::npos) return "Reduce";
  if (n.find("gather") != std::string::npos) return "Gather";
  if (n.find("scatter") != std::string::npos) return "Scatter";
  if (n.find("barrier") != std::string::npos) return "Barrier";
  return std::string(s);
}

// From an NCCL kernel name: ncclKernel_AllReduce_RING_LL_Sum_float(...) -> AllReduce;
// ncclDevKernel_SendRecv(...) -> SendRecv.
std::string op_from_kernel(std::string_view name) {
  for (const char* prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    const size_t len = std::char_traits<char>::length(prefix);
    if (name.substr(0, len) == prefix) {
      size_t e = name.find_first_of("_(", len);
      if (e == std::string_view::npos) e = name.size();
      return std::string(name.substr(len, e - len));
    }
  }
  return "unknown";
}

int dtype_size(std::string_view t) {
  std::string n;
  for (char c : t) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "double" || n == "long" || n == "int64" || n == "uint64" || n == "float64") return 8;
  if (n == "half" || n == "bfloat16" || n == "float16" || n == "short" || n == "bf16" ||
      n == "fp16")
    return 2;
  if (n == "char" || n == "byte" || n == "bool" || n == "int8" || n == "uint8" ||
      n.rfind("float8", 0) == 0)
    return 1;
  return 4;  // Float, Int
}

int max_blocks_per_sm(int major, int minor) {
  // CUDA occupancy tables (programming guide, "Compute Capabilities").
  if (major >= 9) return 32;
  if (major == 8) return (minor == 6 || minor == 7 || minor == 9) ? (minor == 7 ? 32 : 16) : 32;
  if (major == 7) return minor == 5 ? 16 : 32;
  return 32;
}

// Names interned while parsing (a trace repeats a few thousand names millions of times).
class LocalNames {
 public:
  int32_t id(std::string_view s) {
    auto it = ids_.find(std::string(s));
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<int32_t>(names_.size());
    names_.emplace_back(s);
    ids_.emplace(names_.back(), id);
    return id;
  }
  // The trace database's string id, interned once per name.
  int64_t db_id(int32_t id, tracedb::Writer& out) {
    if (db_.size() < names_.size()) db_.resize(names_.size(), -1);
    int64_t& v = db_[static_cast<size_t>(id)];
    if (v < 0) v = out.intern(names_[static_cast<size_t>(id)]);
    return v;
  }

 private:
  std::vector<std::string> names_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<int64_t> db_;
};

struct Pending {
  LocalNames names;
  std::vector<tracedb::KernelRow> kernels;
  std::vector<int32_t> kernel_names;
  std::vector<tracedb::MemcpyRow> memcpys;
  std::vector<tracedb::MemsetRow> memsets;
  std::vector<tracedb::ApiCallRow> api;
  std::vector<int32_t> api_names;
  std::vector<tracedb::NvtxRangeRow> ranges;
  struct Coll {
    size_t kernel = 0;  // kernels index
    std::string op, dtype, group;
    int64_t in_nelems = -1, group_size = 0;
  };
  std::vector<Coll> colls;
  std::vector<tracedb::DeviceRow> devices;
  int64_t pid = -1;
  std::optional<int64_t> rank, world_size;
  int64_t base_ns = 0;  // baseTimeNanoseconds
  std::string nccl_version;
};

}  // namespace

Stats import_kineto(const std::string& path, tracedb::Writer& out, const Options& options,
                    const Progress& progress) {
  Stats st;
  Pending p;
  bool fractional = false;
  JsonStream js(path);
  simdjson::dom::parser parser;
  int64_t index = -1;
  auto bad = [&](int64_t at, const std::string& why) {
    if (st.malformed++ == 0) {
      st.first_malformed =
          path + ": event " + std::to_string(index) + " at byte " + std::to_string(at) + ": " + why;
    }
  };
  auto on_member = [&](std::string_view key, std::string_view value) {
    element doc;
    if (parser.parse(value.data(), value.size()).get(doc) != simdjson::SUCCESS) return;
    if (key == "distributedInfo") {
      object o;
      if (doc.get_object().get(o) != simdjson::SUCCESS) return;
      int64_t v = 0;
      if (num(o, "rank", &v)) p.rank = v;
      if (num(o, "world_size", &v)) p.world_size = v;
      p.nccl_version = std::string(str(o, "nccl_version"));
    } else if (key == "baseTimeNanoseconds") {
      int64_t v = 0;
      if (doc.get_int64().get(v) == simdjson::SUCCESS) p.base_ns = v;
    } else if (key == "deviceProperties") {
      simdjson::dom::array a;
      if (doc.get_array().get(a) != simdjson::SUCCESS) return;
      for (element e : a) {
        object o;
        if (e.get_object().get(o) != simdjson::SUCCESS) continue;
        tracedb::DeviceRow d;
        int64_t v = 0;
        d.device_id = num(o, "id", &v) ? v : static_cast<int64_t>(p.devices.size());
        d.name = std::string(str(o, "name"));
        d.sm_count = num(o, "numSms", &v) ? v : 0;
        d.cc_major = num(o, "computeMajor", &v) ? v : 0;
        d.cc_minor = num(o, "computeMinor", &v) ? v : 0;
        d.memory_bytes = num(o, "totalGlobalMem", &v) ? v : 0;
        d.warp_size = num(o, "warpSize", &v) ? v : 32;
        d.max_threads_per_sm = num(o, "maxThreadsPerMultiprocessor", &v) ? v : 2048;
        d.max_blocks_per_sm =
            max_blocks_per_sm(static_cast<int>(d.cc_major), static_cast<int>(d.cc_minor));
        d.max_registers_per_sm = num(o, "regsPerMultiprocessor", &v) ? v : 65536;
        d.max_shared_memory_per_sm = num(o, "sharedMemPerMultiprocessor", &v) ? v : 0;
        d.max_threads_per_block = num(o, "maxThreadsPerBlock", &v) ? v : 1024;
        d.max_registers_per_block = num(o, "regsPerBlock", &v) ? v : 65536;
        d.max_shared_memory_per_block = num(o, "sharedMemPerBlockOptin", &v) ? v
                                        : num(o, "sharedMemPerBlock", &v)    ? v
                                                                             : 0;
        p.devices.push_back(std::move(d));
      }
    }
  };
  int64_t last_progress = 0;
  auto on_event = [&](std::string_view text, int64_t at) {
    ++index;
    ++st.events;
    if (progress && js.compressed_read() - last_progress > (int64_t{8} << 20)) {
      last_progress = js.compressed_read();
      progress(last_progress, js.compressed_size());
    }
    element doc;
    if (parser.parse(text.data(), text.size()).get(doc) != simdjson::SUCCESS) {
      bad(at, "not valid JSON");
      return;
    }
    object e;
    if (doc.get_object().get(e) != simdjson::SUCCESS) {
      bad(at, "not an object");
      return;
    }
    const std::string_view ph = str(e, "ph");
    if (ph != "X") return;  // metadata, flows, instants: nothing the tables hold
    const std::string_view cat = str(e, "cat");
    const std::string_view name = str(e, "name");
    element ts_v, dur_v;
    int64_t start = 0, dur = 0;
    if (e["ts"].get(ts_v) != simdjson::SUCCESS || !to_ns(ts_v, &start, &fractional)) {
      bad(at, "'X' event without a numeric ts");
      return;
    }
    if (e["dur"].get(dur_v) != simdjson::SUCCESS || !to_ns(dur_v, &dur, &fractional) || dur < 0) {
      bad(at, "'X' event without a non-negative dur");
      return;
    }
    int64_t pid = 0, tid = 0;
    num(e, "pid", &pid);
    num(e, "tid", &tid);
    object args;
    const bool has_args = e["args"].get_object().get(args) == simdjson::SUCCESS;
    auto arg = [&](const char* k, int64_t* v) { return has_args && num(args, k, v); };
    int64_t device = 0, stream = -1, corr = 0;
    if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
      if (!arg("device", &device)) device = pid;
      arg("stream", &stream);
      arg("correlation", &corr);
    }
    if (cat == "kernel") {
      tracedb::KernelRow k;
      k.device_id = device;
      k.stream_id = stream;
      k.correlation_id = corr;
      k.start_ns = start;
      k.end_ns = start + dur;
      if (has_args) {
        dims3(args, "grid", &k.grid_x, &k.grid_y, &k.grid_z);
        dims3(args, "block", &k.block_x, &k.block_y, &k.block_z);
      } else {
        k.grid_x = k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
      }
      int64_t v = 0;
      k.registers_per_thread = arg("registers per thread", &v) ? v : 0;
      k.static_shared_bytes = 0;
      k.dynamic_shared_bytes = arg("shared memory", &v) ? v : 0;
      k.launch_type = "regular";
      k.device_launched = 0;
      if (name.substr(0, 4) == "nccl") {
        Pending::Coll c;
        c.kernel = p.kernels.size();
        c.op = has_args && !str(args, "Collective name").empty()
                   ? nccl_op(str(args, "Collective name"))
                   : op_from_kernel(name);
        c.dtype = has_args ? std::string(str(args, "dtype")) : "";
        c.group = has_args ? std::string(str(args, "Process Group Name")) : "";
        arg("In msg nelems", &c.in_nelems);
        arg("Group size", &c.group_size);
        p.colls.push_back(std::move(c));
      }
      p.kernels.push_back(std::move(k));
      p.kernel_names.push_back(p.names.id(name));
      ++st.kernels;
    } else if (cat == "gpu_memcpy") {
      tracedb::MemcpyRow m;
      m.device_id = device;
      m.stream_id = stream;
      m.correlation_id = corr;
      m.start_ns = start;
      m.end_ns = start + dur;
      memcpy_kinds(name, &m.copy_kind, &m.src_kind, &m.dst_kind);
      int64_t v = 0;
      m.bytes = arg("bytes", &v) ? v : 0;
      m.async = 1;
      m.copy_count = 1;
      p.memcpys.push_back(std::move(m));
      ++st.memcpys;
    } else if (cat == "gpu_memset") {
      tracedb::MemsetRow m;
      m.device_id = device;
      m.stream_id = stream;
      m.correlation_id = corr;
      m.start_ns = start;
      m.end_ns = start + dur;
      int64_t v = 0;
      m.bytes = arg("bytes", &v) ? v : 0;
      m.value = 0;
      m.memory_kind = "device";
      m.async = 1;
      p.memsets.push_back(std::move(m));
      ++st.memsets;
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      if (p.pid < 0) p.pid = pid;
      tracedb::ApiCallRow a;
      a.thread_id = tid;
      a.api = cat == "cuda_runtime" ? "runtime" : "driver";
      int64_t v = 0;
      a.cbid = arg("cbid", &v) ? v : 0;
      a.correlation_id = arg("correlation", &v) ? v : 0;
      a.start_ns = start;
      a.end_ns = start + dur;
      a.return_value = 0;
      p.api.push_back(std::move(a));
      p.api_names.push_back(p.names.id(name));
      ++st.api_calls;
    } else if (cat == "user_annotation" ||
               (cat == "cpu_op" && name.substr(0, 12) == "ProfilerStep")) {
      if (p.pid < 0) p.pid = pid;
      tracedb::NvtxRangeRow r;
      r.thread_id = tid;
      r.kind = "push_pop";
      r.domain = "pytorch";
      r.name = std::string(name);
      r.start_ns = start;
      r.end_ns = start + dur;
      r.closed = 1;
      p.ranges.push_back(std::move(r));
      ++st.ranges;
    } else if (cat == "cpu_op" || cat == "python_function") {
      if (p.pid < 0) p.pid = pid;
    }
  };
  std::string error;
  if (!js.run("traceEvents", on_member, on_event, &error)) {
    if (index < 0)
      throw std::invalid_argument("'" + path + "' is not a Chrome-trace JSON object: " + error);
    // A truncated file: keep what was read, and say so.
    bad(js.bytes_read(), "the file ends early (" + error + ")");
  }
  if (!js.array_seen()) {
    throw std::invalid_argument("'" + path + "' has no traceEvents: not a PyTorch profiler trace");
  }
  st.input_bytes = js.bytes_read();
  if (options.hta_rounding && fractional) {
    // HTA: start rounded up, end rounded down to whole microseconds, computed as HTA does, in
    // double microseconds: end = ts + dur, then ceil(ts) and floor(end). At epoch timestamps
    // (about 1.7e15 us) a double holds quarters of a microsecond, so ts + dur is itself rounded
    // to a quarter before the floor; doing the sum in integer nanoseconds instead moved some
    // ends by a microsecond (0.13 point of overlap on a generated 20k-kernel trace).
    auto round = [](int64_t& s, int64_t& e) {
      const double ts = static_cast<double>(s) / 1000.0;
      const double end = ts + static_cast<double>(e - s) / 1000.0;
      // Beyond what whole microseconds in int64 nanoseconds hold: left as they are.
      if (!(std::fabs(ts) < 9.2e15) || !(std::fabs(end) < 9.2e15)) return;
      const int64_t s2 = static_cast<int64_t>(std::ceil(ts)) * 1000;
      const int64_t e2 = static_cast<int64_t>(std::floor(end)) * 1000;
      s = s2;
      e = std::max(s2, e2);
    };
    for (auto& k : p.kernels) round(k.start_ns, k.end_ns);
    for (auto& m : p.memcpys) round(m.start_ns, m.end_ns);
    for (auto& m : p.memsets) round(m.start_ns, m.end_ns);
    st.rounded = true;
  }

  // Process row.
  tracedb::ProcessRow proc;
  proc.pid = p.pid >= 0 ? p.pid : 0;
  proc.host = "";
  proc.rank = p.rank;
  proc.world_size = p.world_size;
  proc.command_line = "kineto trace " + path;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (const auto& k : p.kernels)
    first = std::min(first, k.start_ns), last = std::max(last, k.end_ns);
  for (const auto& m : p.memcpys)
    first = std::min(first, m.start_ns), last = std::max(last, m.end_ns);
  for (const auto& m : p.memsets)
    first = std::min(first, m.start_ns), last = std::max(last, m.end_ns);
  for (const auto& a : p.api) first = std::min(first, a.start_ns), last = std::max(last, a.end_ns);
  if (first == INT64_MAX) first = last = 0;
  proc.start_ns = first;
  proc.end_ns = last;
  proc.trace_clock = "kineto (microseconds, imported as ns)";
  proc.anchor_start_trace_ns = 0;
  proc.anchor_start_realtime_ns = p.base_ns;
  proc.anchor_start_monotonic_ns = 0;
  const int64_t pid_row = out.insert(proc);
  ++st.processes;
  out.set_meta("kineto_" + std::to_string(pid_row) + "_file", path);
  if (st.rounded)
    out.set_meta("kineto_" + std::to_string(pid_row) + "_timestamps",
                 "rounded to microseconds (HTA)");
  if (!p.nccl_version.empty())
    out.set_meta("kineto_" + std::to_string(pid_row) + "_nccl_version", p.nccl_version);

  // Devices: from deviceProperties, or one row per device seen, with what is known.
  std::map<int64_t, bool> seen;
  for (const auto& k : p.kernels) seen[k.device_id] = true;
  for (const auto& m : p.memcpys) seen[m.device_id] = true;
  for (const auto& m : p.memsets) seen[m.device_id] = true;
  for (auto& d : p.devices) {
    if (!seen.count(d.device_id)) continue;  // Kineto lists every GPU of the node
    d.process_id = pid_row;
    out.insert(d);
    seen.erase(d.device_id);
  }
  for (const auto& [dev, unused] : seen) {
    tracedb::DeviceRow d;
    d.process_id = pid_row;
    d.device_id = dev;
    d.name = "unknown GPU";
    d.sm_count = d.cc_major = d.cc_minor = d.memory_bytes = 0;
    d.warp_size = 32;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.max_registers_per_sm = 65536;
    d.max_shared_memory_per_sm = d.max_threads_per_block = d.max_registers_per_block =
        d.max_shared_memory_per_block = 0;
    out.insert(d);
  }
  std::map<std::pair<int64_t, int64_t>, bool> streams;
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    auto& k = p.kernels[i];
    k.process_id = pid_row;
    k.name_id = p.names.db_id(p.kernel_names[i], out);
    out.insert(k);
    if (k.stream_id) streams[{k.device_id, *k.stream_id}] = true;
  }
  for (auto& m : p.memcpys) {
    m.process_id = pid_row;
    out.insert(m);
    if (m.stream_id) streams[{m.device_id, *m.stream_id}] = true;
  }
  for (auto& m : p.memsets) {
    m.process_id = pid_row;
    out.insert(m);
    if (m.stream_id) streams[{m.device_id, *m.stream_id}] = true;
  }
  for (const auto& [key, unused] : streams) {
    tracedb::StreamRow s;
    s.process_id = pid_row;
    s.device_id = key.first;
    s.stream_id = key.second;
    out.insert(s);
  }
  // Correlation id -> launching API call's start (host time of a collective).
  std::unordered_map<int64_t, int64_t> launch_at;
  for (size_t i = 0; i < p.api.size(); ++i) {
    auto& a = p.api[i];
    launch_at.emplace(a.correlation_id, a.start_ns);
    if (!options.api_calls) continue;
    a.process_id = pid_row;
    a.name_id = p.names.db_id(p.api_names[i], out);
    out.insert(a);
  }
  // Ranges: depth by nesting per thread.
  std::stable_sort(p.ranges.begin(), p.ranges.end(), [](const auto& a, const auto& b) {
    if (a.thread_id != b.thread_id) return a.thread_id < b.thread_id;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  });
  std::vector<int64_t> open_ends;
  int64_t tid = INT64_MIN;
  for (auto& r : p.ranges) {
    if (r.thread_id != tid) {
      open_ends.clear();
      tid = r.thread_id;
    }
    while (!open_ends.empty() && open_ends.back() <= r.start_ns) open_ends.pop_back();
    r.depth = static_cast<int64_t>(open_ends.size());
    open_ends.push_back(r.end_ns);
    r.process_id = pid_row;
    out.insert(r);
  }
  // Collectives: one per NCCL kernel, in order per process group (the matching key across
  // ranks of imported traces), linked to its kernel through an external correlation.
  std::stable_sort(p.colls.begin(), p.colls.end(), [&](const auto& a, const auto& b) {
    return p.kernels[a.kernel].start_ns < p.kernels[b.kernel].start_ns;
  });
  std::map<std::string, int64_t> seq;
  int64_t ext = 1;
  for (const auto& c : p.colls) {
    const auto& k = p.kernels[c.kernel];
    tracedb::CollectiveRow row;
    row.process_id = pid_row;
    row.thread_id = 0;
    row.device_id = k.device_id;
    row.stream_id = k.stream_id;
    row.stream_handle = k.stream_id.value_or(0);
    const std::string group =
        c.group.empty() ? "stream " + std::to_string(k.stream_id.value_or(-1)) : c.group;
    row.comm_id = "pg:" + group;
    row.comm_handle = 0;
    row.rank = p.rank;
    if (c.group_size > 0) row.nranks = c.group_size;
    row.op = c.op;
    row.datatype = c.dtype.empty() ? "unknown" : c.dtype;
    row.count = c.in_nelems >= 0 ? c.in_nelems : 0;
    row.bytes = c.in_nelems >= 0 ? c.in_nelems * dtype_size(c.dtype) : 0;
    row.seq = seq[group]++;
    row.external_id = ext;
    auto it = k.correlation_id ? launch_at.find(*k.correlation_id) : launch_at.end();
    row.host_start_ns = it != launch_at.end() ? it->second : k.start_ns;
    row.host_end_ns = row.host_start_ns;
    row.result = 0;
    out.insert(row);
    if (k.correlation_id) {
      tracedb::ExternalCorrelationRow x;
      x.process_id = pid_row;
      x.external_kind = "custom0";
      x.external_id = ext;
      x.correlation_id = *k.correlation_id;
      out.insert(x);
    }
    ++ext;
    ++st.collectives;
  }
  if (progress) progress(js.compressed_size(), js.compressed_size());
  return st;
}

}  // namespace c3::importer
