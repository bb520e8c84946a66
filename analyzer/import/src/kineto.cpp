// PyTorch profiler / Kineto Chrome-trace JSON -> trace database.
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "c3/importer/importer.h"
#include "c3/tracedb/sink.h"
#include "c3/tracedb/string_ids.h"
#include "json_stream.h"

namespace c3::importer {
namespace {

static_assert(JsonStream::kPadding >= simdjson::SIMDJSON_PADDING);

// k == lit, with the length known at compile time (an inlined compare, not a call: keys and
// categories are compared millions of times).
template <size_t N>
bool is(std::string_view k, const char (&lit)[N]) {
  return k.size() == N - 1 && std::memcmp(k.data(), lit, N - 1) == 0;
}

using simdjson::dom::element;
using simdjson::dom::object;

// A scalar of an event as it was written: a number (integer or not), or a string (some traces
// quote numbers).
struct Value {
  enum class Type : uint8_t { none, i64, u64, f64, str };
  Type type = Type::none;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  std::string_view s;  // valid while the event is handled
  bool is_number() const { return type == Type::i64 || type == Type::u64 || type == Type::f64; }
  // As an integer: integers as they are, other numbers rounded, numeric strings parsed.
  bool integer(int64_t* out) const {
    switch (type) {
      case Type::i64:
        *out = i;
        return true;
      case Type::u64:
        *out = static_cast<int64_t>(u);
        return true;
      case Type::f64:
        if (!std::isfinite(d) || std::fabs(d) > 9.2e18) return false;
        *out = std::llround(d);
        return true;
      case Type::str:
        try {
          *out = std::stoll(std::string(s));
          return true;
        } catch (...) {
          return false;
        }
      case Type::none:
        break;
    }
    return false;
  }
};

// Kineto timestamps are microseconds, integers or decimals; nanoseconds exactly for integers.
// Sets *fractional when the value has a fractional part. False for a time whose nanoseconds an
// int64 cannot hold (about 292 years from the epoch).
bool to_ns(const Value& v, int64_t* out, bool* fractional) {
  constexpr int64_t kMaxUs = INT64_MAX / 1000;
  if (v.type == Value::Type::i64) {
    if (v.i > kMaxUs || v.i < -kMaxUs) return false;
    *out = v.i * 1000;
    return true;
  }
  if (v.type == Value::Type::u64) {
    if (v.u > static_cast<uint64_t>(kMaxUs)) return false;
    *out = static_cast<int64_t>(v.u) * 1000;
    return true;
  }
  if (v.type != Value::Type::f64) return false;
  const double d = v.d;
  if (!std::isfinite(d) || std::fabs(d) > 9e15) return false;
  const double ip = std::floor(d);
  if (d != ip) *fractional = true;
  *out = static_cast<int64_t>(ip) * 1000 + std::llround((d - ip) * 1000.0);
  return true;
}

// What the importer reads of an event's args.
struct Args {
  Value device, stream, correlation, registers, shared_memory, in_nelems, group_size, bytes, cbid;
  std::string_view collective_name, dtype, group_name;
  int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
};

struct Event {
  std::string_view ph, cat, name;
  Value ts, dur, pid, tid;
  bool has_args = false;
  Args args;
};

// Reads a scalar; false when it is malformed (a number that does not parse). A value of another
// type is left as none.
bool read_value(simdjson::ondemand::value v, Value* out) {
  using simdjson::ondemand::json_type;
  json_type t{};
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t == json_type::string) {
    if (v.get_string().get(out->s) != simdjson::SUCCESS) return false;
    out->type = Value::Type::str;
    return true;
  }
  if (t != json_type::number) return true;
  simdjson::ondemand::number n;
  if (v.get_number().get(n) != simdjson::SUCCESS) return false;
  switch (n.get_number_type()) {
    case simdjson::ondemand::number_type::signed_integer:
      out->type = Value::Type::i64;
      out->i = n.get_int64();
      break;
    case simdjson::ondemand::number_type::unsigned_integer:
      out->type = Value::Type::u64;
      out->u = n.get_uint64();
      break;
    case simdjson::ondemand::number_type::floating_point_number:
      out->type = Value::Type::f64;
      out->d = n.get_double();
      break;
  }
  return true;
}

bool read_string(simdjson::ondemand::value v, std::string_view* out) {
  using simdjson::ondemand::json_type;
  json_type t{};
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t != json_type::string) return true;
  return v.get_string().get(*out) == simdjson::SUCCESS;
}

// Grid or block dimensions: up to three integers, 1 for any missing.
bool read_dims(simdjson::ondemand::value v, int64_t* dims) {
  using simdjson::ondemand::json_type;
  json_type t{};
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t != json_type::array) return true;
  simdjson::ondemand::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return false;
  size_t i = 0;
  for (auto item : a) {
    if (item.error() != simdjson::SUCCESS) return false;
    simdjson::ondemand::value x = item.value_unsafe();
    Value n;
    if (!read_value(x, &n)) return false;
    if (i < 3 && n.type == Value::Type::i64) dims[i] = n.i;
    ++i;
  }
  return true;
}

// A field's key as written (no copy: keys are compared millions of times), unescaped only when it
// holds an escape.
bool read_key(simdjson::ondemand::field& field, std::string_view* key) {
  const char* raw = field.key().raw();  // after the opening quote; stage 1 saw the closing one
  size_t n = 0;
  while (raw[n] != '"') {
    if (raw[n] == '\\') return field.unescaped_key().get(*key) == simdjson::SUCCESS;
    ++n;
  }
  *key = std::string_view(raw, n);
  return true;
}

// A short string value as written when it holds no escape (event phases and categories).
bool read_short_string(simdjson::ondemand::value v, std::string_view* out) {
  simdjson::ondemand::raw_json_string r;
  if (v.get_raw_json_string().get(r) != simdjson::SUCCESS) return true;  // not a string
  const char* raw = r.raw();
  size_t n = 0;
  while (raw[n] != '"') {
    if (raw[n] == '\\') return read_string(v, out);
    ++n;
  }
  *out = std::string_view(raw, n);
  return true;
}

// The first occurrence of a key wins, as in a lookup by key.
struct Seen {
  uint32_t bits = 0;
  bool first(int k) {
    const uint32_t b = 1u << k;
    if ((bits & b) != 0) return false;
    bits |= b;
    return true;
  }
};

bool read_args(simdjson::ondemand::value v, Args* a) {
  simdjson::ondemand::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  Seen seen;
  for (auto f : o) {
    simdjson::ondemand::field field;
    if (std::move(f).get(field) != simdjson::SUCCESS) return false;
    std::string_view key;
    if (!read_key(field, &key)) return false;
    simdjson::ondemand::value x = field.value();
    bool ok = true;
    if (is(key, "device")) {
      if (seen.first(0)) ok = read_value(x, &a->device);
    } else if (is(key, "stream")) {
      if (seen.first(1)) ok = read_value(x, &a->stream);
    } else if (is(key, "correlation")) {
      if (seen.first(2)) ok = read_value(x, &a->correlation);
    } else if (is(key, "registers per thread")) {
      if (seen.first(3)) ok = read_value(x, &a->registers);
    } else if (is(key, "shared memory")) {
      if (seen.first(4)) ok = read_value(x, &a->shared_memory);
    } else if (is(key, "In msg nelems")) {
      if (seen.first(5)) ok = read_value(x, &a->in_nelems);
    } else if (is(key, "Group size")) {
      if (seen.first(6)) ok = read_value(x, &a->group_size);
    } else if (is(key, "bytes")) {
      if (seen.first(7)) ok = read_value(x, &a->bytes);
    } else if (is(key, "cbid")) {
      if (seen.first(8)) ok = read_value(x, &a->cbid);
    } else if (is(key, "Collective name")) {
      if (seen.first(9)) ok = read_string(x, &a->collective_name);
    } else if (is(key, "dtype")) {
      if (seen.first(10)) ok = read_string(x, &a->dtype);
    } else if (is(key, "Process Group Name")) {
      if (seen.first(11)) ok = read_string(x, &a->group_name);
    } else if (is(key, "grid")) {
      if (seen.first(12)) ok = read_dims(x, a->grid);
    } else if (is(key, "block")) {
      if (seen.first(13)) ok = read_dims(x, a->block);
    }
    if (!ok) return false;
  }
  return true;
}

// One pass over an event's fields (On-Demand: no tree is built). Returns why the event cannot
// be used, or nullptr.
const char* read_event(simdjson::ondemand::parser& parser, const simdjson::padded_string_view& in,
                       Event* e) {
  simdjson::ondemand::document doc;
  if (parser.iterate(in).get(doc) != simdjson::SUCCESS) return "not valid JSON";
  simdjson::ondemand::object o;
  if (const auto err = doc.get_object().get(o); err != simdjson::SUCCESS) {
    return err == simdjson::INCORRECT_TYPE ? "not an object" : "not valid JSON";
  }
  Seen seen;
  for (auto f : o) {
    simdjson::ondemand::field field;
    if (std::move(f).get(field) != simdjson::SUCCESS) return "not valid JSON";
    std::string_view key;
    if (!read_key(field, &key)) return "not valid JSON";
    simdjson::ondemand::value x = field.value();
    bool ok = true;
    if (is(key, "ph")) {
      if (seen.first(0)) ok = read_short_string(x, &e->ph);
    } else if (is(key, "cat")) {
      if (seen.first(1)) ok = read_short_string(x, &e->cat);
    } else if (is(key, "name")) {
      if (seen.first(2)) ok = read_string(x, &e->name);
    } else if (is(key, "ts")) {
      if (seen.first(3)) ok = read_value(x, &e->ts);
    } else if (is(key, "dur")) {
      if (seen.first(4)) ok = read_value(x, &e->dur);
    } else if (is(key, "pid")) {
      if (seen.first(5)) ok = read_value(x, &e->pid);
    } else if (is(key, "tid")) {
      if (seen.first(6)) ok = read_value(x, &e->tid);
    } else if (is(key, "args")) {
      if (seen.first(7)) {
        simdjson::ondemand::json_type t{};
        ok = x.type().get(t) == simdjson::SUCCESS;
        if (ok && t == simdjson::ondemand::json_type::object) {
          e->has_args = true;
          ok = read_args(x, &e->args);
        }
      }
    }
    if (!ok) return "not valid JSON";
  }
  return nullptr;
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
  LocalNames() = default;
  LocalNames(const LocalNames&) = delete;
  LocalNames& operator=(const LocalNames&) = delete;
  int32_t id(std::string_view s) { return ids_.id(s); }
  const std::string& name(int32_t id) const { return names_[static_cast<size_t>(id)]; }
  // The trace database's string id, interned once per name.
  int64_t db_id(int32_t id, tracedb::RowSink& out) {
    if (db_.size() < names_.size()) db_.resize(names_.size(), -1);
    int64_t& v = db_[static_cast<size_t>(id)];
    if (v < 0) v = out.intern(names_[static_cast<size_t>(id)]);
    return v;
  }

 private:
  std::vector<std::string> names_;
  tracedb::StringIds ids_{names_};
  std::vector<int64_t> db_;
};

// What the rows need of the events, kept compact until they are written (a trace holds
// millions; a tracedb row is several hundred bytes).
struct GpuEvent {
  int64_t device_id = 0, start_ns = 0, end_ns = 0, bytes = 0;
  std::optional<int64_t> stream_id, correlation_id;
  int32_t name = -1;  // LocalNames id (copies: their kinds come from it)
};
struct KernelEvent : GpuEvent {
  int64_t grid_x = 1, grid_y = 1, grid_z = 1, block_x = 1, block_y = 1, block_z = 1;
  int64_t registers_per_thread = 0, dynamic_shared_bytes = 0;
};
struct ApiEvent {
  int64_t thread_id = 0, cbid = 0, correlation_id = 0, start_ns = 0, end_ns = 0;
  bool runtime = true;
};

struct Pending {
  LocalNames names;
  std::vector<KernelEvent> kernels;
  std::vector<int32_t> kernel_names;
  std::vector<GpuEvent> memcpys;
  std::vector<GpuEvent> memsets;
  std::vector<ApiEvent> api;
  std::vector<int32_t> api_names;
  std::vector<tracedb::NvtxRangeRow> ranges;
  struct Coll {
    size_t kernel = 0;  // kernels index
    std::string op, dtype, group;
    int64_t in_nelems = -1, group_size = 0;
    std::optional<int64_t> launch;  // the kernel's correlation id in the file (its launch)
  };
  std::vector<Coll> colls;
  std::vector<tracedb::DeviceRow> devices;
  int64_t pid = -1;
  std::optional<int64_t> rank, world_size;
  int64_t base_ns = 0;  // baseTimeNanoseconds
  std::string nccl_version;
  std::string host;  // top-level "host_name" (or "hostname"), when the profiler wrote it
};

}  // namespace

Stats import_kineto(const std::string& path, tracedb::RowSink& out, const Options& options,
                    const Progress& progress) {
  Stats st;
  Pending p;
  bool fractional = false;
  JsonStream js(path);
  simdjson::dom::parser parser;
  int64_t index = -1;
  auto where = [&](int64_t at, const std::string& why) {
    return path + ": event " + std::to_string(index) + " at byte " + std::to_string(at) + ": " +
           why;
  };
  auto bad = [&](int64_t at, const std::string& why) { st.bad(where(at, why)); };
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
    } else if (key == "host_name" || key == "hostname") {
      std::string_view h;
      if (doc.get_string().get(h) == simdjson::SUCCESS) p.host = std::string(h);
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
  simdjson::ondemand::parser events;
  auto on_event = [&](std::string_view text, int64_t at) {
    ++index;
    ++st.events;
    if (progress && (index & 1023) == 0 &&
        js.compressed_read() - last_progress > (int64_t{8} << 20)) {
      last_progress = js.compressed_read();
      progress(last_progress, js.compressed_size());
    }
    // One pass over the event's fields (On-Demand: no tree is built); the element lies in the
    // stream's buffer with JsonStream::kPadding readable bytes after it.
    Event e;
    const simdjson::padded_string_view view(text.data(), text.size(),
                                            text.size() + JsonStream::kPadding);
    const char* why = read_event(events, view, &e);
    if (why != nullptr) {
      bad(at, why);
      return;
    }
    if (!is(e.ph, "X")) return;  // metadata, flows, instants: nothing the tables hold
    const std::string_view cat = e.cat;
    const std::string_view name = e.name;
    // The table the event becomes a row of (none: nothing the tables hold).
    const char* table =
        is(cat, "kernel")                                   ? "kernel"
        : is(cat, "gpu_memcpy")                             ? "memcpy"
        : is(cat, "gpu_memset")                             ? "memset"
        : is(cat, "cuda_runtime") || is(cat, "cuda_driver") ? "api_call"
        : is(cat, "user_annotation") || (is(cat, "cpu_op") && name.substr(0, 12) == "ProfilerStep")
            ? "nvtx_range"
            : nullptr;
    // Impossible times are rejected the same way for every table and counted per table.
    auto reject = [&](const std::string& reason) {
      if (table != nullptr) {
        st.reject(table, where(at, reason));
      } else {
        bad(at, reason);
      }
    };
    if (!e.ts.is_number()) {
      bad(at, "'X' event without a numeric ts");
      return;
    }
    if (!e.dur.is_number()) {
      bad(at, "'X' event without a numeric dur");
      return;
    }
    int64_t start = 0, dur = 0, end = 0;
    if (!to_ns(e.ts, &start, &fractional) || !to_ns(e.dur, &dur, &fractional)) {
      reject("a ts or dur past what int64 nanoseconds hold");
      return;
    }
    if (dur < 0) {
      reject("a negative dur");
      return;
    }
    if (__builtin_add_overflow(start, dur, &end)) {
      reject("ts + dur past what int64 nanoseconds hold");
      return;
    }
    if (const std::string impossible = check_times(start, end);
        table != nullptr && !impossible.empty()) {
      reject(impossible);
      return;
    }
    int64_t pid = 0, tid = 0;
    e.pid.integer(&pid);
    e.tid.integer(&tid);
    const bool has_args = e.has_args;
    const Args& args = e.args;
    auto arg = [&](const Value& v, int64_t* dst) { return has_args && v.integer(dst); };
    int64_t device = 0, stream = -1;
    std::optional<int64_t> corr;  // none when the event has none: it links to nothing
    if (is(cat, "kernel") || is(cat, "gpu_memcpy") || is(cat, "gpu_memset")) {
      if (!arg(args.device, &device)) device = pid;
      arg(args.stream, &stream);
      if (int64_t c = 0; arg(args.correlation, &c)) corr = c;
    }
    if (is(cat, "kernel")) {
      KernelEvent k;
      k.device_id = device;
      k.stream_id = stream;
      k.correlation_id = corr;
      k.start_ns = start;
      k.end_ns = end;
      k.grid_x = args.grid[0];
      k.grid_y = args.grid[1];
      k.grid_z = args.grid[2];
      k.block_x = args.block[0];
      k.block_y = args.block[1];
      k.block_z = args.block[2];
      int64_t v = 0;
      k.registers_per_thread = arg(args.registers, &v) ? v : 0;
      k.dynamic_shared_bytes = arg(args.shared_memory, &v) ? v : 0;
      if (name.substr(0, 4) == "nccl") {
        Pending::Coll c;
        c.kernel = p.kernels.size();
        c.op = !args.collective_name.empty() ? nccl_op(args.collective_name) : op_from_kernel(name);
        c.dtype = args.dtype;
        c.group = args.group_name;
        arg(args.in_nelems, &c.in_nelems);
        arg(args.group_size, &c.group_size);
        p.colls.push_back(std::move(c));
      }
      p.kernels.push_back(k);
      p.kernel_names.push_back(p.names.id(name));
      ++st.kernels;
    } else if (is(cat, "gpu_memcpy")) {
      GpuEvent m;
      m.device_id = device;
      m.stream_id = stream;
      m.correlation_id = corr;
      m.start_ns = start;
      m.end_ns = end;
      m.name = p.names.id(name);
      int64_t v = 0;
      m.bytes = arg(args.bytes, &v) ? v : 0;
      p.memcpys.push_back(m);
      ++st.memcpys;
    } else if (is(cat, "gpu_memset")) {
      GpuEvent m;
      m.device_id = device;
      m.stream_id = stream;
      m.correlation_id = corr;
      m.start_ns = start;
      m.end_ns = end;
      int64_t v = 0;
      m.bytes = arg(args.bytes, &v) ? v : 0;
      p.memsets.push_back(m);
      ++st.memsets;
    } else if (is(cat, "cuda_runtime") || is(cat, "cuda_driver")) {
      if (p.pid < 0) p.pid = pid;
      ApiEvent a;
      a.thread_id = tid;
      a.runtime = is(cat, "cuda_runtime");
      int64_t v = 0;
      a.cbid = arg(args.cbid, &v) ? v : 0;
      a.correlation_id = arg(args.correlation, &v) ? v : 0;
      a.start_ns = start;
      a.end_ns = end;
      p.api.push_back(a);
      p.api_names.push_back(options.api_calls ? p.names.id(name) : -1);
      ++st.api_calls;
    } else if (is(cat, "user_annotation") ||
               (is(cat, "cpu_op") && name.substr(0, 12) == "ProfilerStep")) {
      if (p.pid < 0) p.pid = pid;
      tracedb::NvtxRangeRow r;
      r.thread_id = tid;
      r.kind = "push_pop";
      r.domain = "pytorch";
      r.name = std::string(name);
      r.start_ns = start;
      r.end_ns = end;
      r.closed = 1;
      p.ranges.push_back(std::move(r));
      ++st.ranges;
    } else if (is(cat, "cpu_op") || is(cat, "python_function")) {
      if (p.pid < 0) p.pid = pid;
    }
  };
  std::string error;
  const bool whole = js.run("traceEvents", on_member, on_event, &error);
  int64_t damage_at = 0;
  if (const std::string damage = js.input_error(&damage_at); !damage.empty()) {
    // A damaged compressed stream drops what follows the damage: an error unless --salvage, and
    // then a warning saying how much was kept.
    const std::string what = "'" + path + "': damaged compressed data at byte " +
                             std::to_string(damage_at) + " of " +
                             std::to_string(js.compressed_size()) + ": " + damage;
    if (!options.salvage) {
      throw std::invalid_argument(what +
                                  "; nothing imported ('gzip -t' checks it; --salvage "
                                  "keeps the events before the damage)");
    }
    st.salvaged = what + "; kept " + std::to_string(index + 1) + " events (" +
                  std::to_string(js.bytes_read()) + " bytes of JSON) before it";
    if (!whole) bad(js.bytes_read(), "the data ends at the damage (" + error + ")");
  } else if (!whole) {
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
  proc.host = p.host;
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
  // CPU-only traces: the annotations (user annotations, ProfilerStep) are all there is.
  for (const auto& g : p.ranges)
    first = std::min(first, g.start_ns), last = std::max(last, g.end_ns);
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
  // The rows in the analyzer's order (analyzer/lib/src/build.h): streams, then collectives with
  // their external correlations before the kernels they link, then the GPU rows, API calls and
  // ranges. Kernel names are interned first, in kernel order, as the string table had them.
  std::map<std::pair<int64_t, int64_t>, bool> streams;
  for (const auto& k : p.kernels) {
    if (k.stream_id) streams[{k.device_id, *k.stream_id}] = true;
  }
  for (const auto& m : p.memcpys) {
    if (m.stream_id) streams[{m.device_id, *m.stream_id}] = true;
  }
  for (const auto& m : p.memsets) {
    if (m.stream_id) streams[{m.device_id, *m.stream_id}] = true;
  }
  for (const auto& [key, unused] : streams) {
    tracedb::StreamRow s;
    s.process_id = pid_row;
    s.device_id = key.first;
    s.stream_id = key.second;
    out.insert(s);
  }
  std::vector<int64_t> kernel_name_ids(p.kernels.size());
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    kernel_name_ids[i] = p.names.db_id(p.kernel_names[i], out);
  }
  // Correlation id -> launching API call's start (host time of a collective).
  std::unordered_map<int64_t, int64_t> launch_at;
  launch_at.reserve(p.api.size());
  for (const auto& a : p.api) launch_at.emplace(a.correlation_id, a.start_ns);
  // Collectives: one per NCCL kernel, in order per process group (the matching key across
  // ranks of imported traces), linked to its kernel through an external correlation.
  {
    // An NCCL kernel without a correlation id still links to its own collective: it gets an id
    // no row of the file uses (and no launching call). So does one whose id other GPU work
    // shares (the kernels and copies of one CUDA graph launch, or a hostile file): linked
    // through the shared id, the call would own all that work, its GPU span would cover it, and
    // linking would grow with the square of the number of such calls (issue 12: 20,000 NCCL
    // kernels of one id). The launching call still gives the call its host time.
    std::unordered_map<int64_t, int> rows_per_id;
    std::unordered_set<int64_t> used;
    auto count = [&](const std::optional<int64_t>& id) {
      if (id) {
        ++rows_per_id[*id];
        used.insert(*id);
      }
    };
    for (const auto& k : p.kernels) count(k.correlation_id);
    for (const auto& m : p.memcpys) count(m.correlation_id);
    for (const auto& m : p.memsets) count(m.correlation_id);
    for (const auto& a : p.api) used.insert(a.correlation_id);
    int64_t next = 0;  // the smallest ids no row uses, whatever the file's largest is
    auto fresh = [&] {
      do {
        ++next;
      } while (used.count(next) != 0);
      return next;
    };
    for (auto& c : p.colls) {
      auto& k = p.kernels[c.kernel];
      c.launch = k.correlation_id;
      if (!k.correlation_id || rows_per_id[*k.correlation_id] > 1) k.correlation_id = fresh();
    }
  }
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
    // Unknown (0) when the count is missing or its bytes overflow.
    if (c.in_nelems < 0 || __builtin_mul_overflow(c.in_nelems, dtype_size(c.dtype), &row.bytes)) {
      row.bytes = 0;
    }
    row.seq = seq[group]++;
    row.external_id = ext;
    auto it = c.launch ? launch_at.find(*c.launch) : launch_at.end();
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
  auto gpu_columns = [&](auto& row, const GpuEvent& g) {
    row.process_id = pid_row;
    row.device_id = g.device_id;
    row.stream_id = g.stream_id;
    row.correlation_id = g.correlation_id;
    row.start_ns = g.start_ns;
    row.end_ns = g.end_ns;
  };
  {
    tracedb::KernelRow row;
    row.static_shared_bytes = 0;
    row.launch_type = "regular";
    row.device_launched = 0;
    for (size_t i = 0; i < p.kernels.size(); ++i) {
      const KernelEvent& k = p.kernels[i];
      gpu_columns(row, k);
      row.name_id = kernel_name_ids[i];
      row.grid_x = k.grid_x;
      row.grid_y = k.grid_y;
      row.grid_z = k.grid_z;
      row.block_x = k.block_x;
      row.block_y = k.block_y;
      row.block_z = k.block_z;
      row.registers_per_thread = k.registers_per_thread;
      row.dynamic_shared_bytes = k.dynamic_shared_bytes;
      out.insert(row);
    }
  }
  {
    tracedb::MemcpyRow row;
    row.async = 1;
    row.copy_count = 1;
    for (const GpuEvent& m : p.memcpys) {
      gpu_columns(row, m);
      memcpy_kinds(p.names.name(m.name), &row.copy_kind, &row.src_kind, &row.dst_kind);
      row.bytes = m.bytes;
      out.insert(row);
    }
  }
  {
    tracedb::MemsetRow row;
    row.value = 0;
    row.memory_kind = "device";
    row.async = 1;
    for (const GpuEvent& m : p.memsets) {
      gpu_columns(row, m);
      row.bytes = m.bytes;
      out.insert(row);
    }
  }
  if (options.api_calls) {
    tracedb::ApiCallRow row;
    row.process_id = pid_row;
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
  if (progress) progress(js.compressed_size(), js.compressed_size());
  return st;
}

}  // namespace c3::importer
