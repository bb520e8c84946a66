#include "kineto_parse.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "c3/common/text_limits.h"
#include "json_stream.h"
#include "kineto_names.h"

namespace c3::importer::kineto {
namespace {

static_assert(JsonStream::kPadding >= simdjson::SIMDJSON_PADDING);

using simdjson::dom::element;
using simdjson::dom::object;

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

// An integer of the event's args; false when the event has no args or the value is not one.
bool arg(const Event& e, const Value& v, int64_t* out) {
  return e.has_args && v.integer(out);
}

// What an 'X' event is and the table it becomes a row of (nullptr: none), by its category
// (and a CPU op's name).
struct Class {
  Kind kind;
  const char* table;
};

Class classify(std::string_view cat, std::string_view name) {
  if (is(cat, "kernel")) return {Kind::kernel, "kernel"};
  if (is(cat, "gpu_memcpy")) return {Kind::memcpy, "memcpy"};
  if (is(cat, "gpu_memset")) return {Kind::memset, "memset"};
  if (is(cat, "cuda_runtime") || is(cat, "cuda_driver")) return {Kind::api_call, "api_call"};
  if (is(cat, "cuda_sync")) return {Kind::sync, "sync"};
  if (is(cat, "user_annotation") || (is(cat, "cpu_op") && name.substr(0, 12) == "ProfilerStep"))
    return {Kind::range, "nvtx_range"};
  if (is(cat, "cpu_op") || is(cat, "python_function")) return {Kind::cpu, nullptr};
  return {Kind::other, nullptr};
}

// HTA: start rounded up, end rounded down to whole microseconds, computed as HTA does, in
// double microseconds: end = ts + dur, then ceil(ts) and floor(end). At epoch timestamps
// (about 1.7e15 us) a double holds quarters of a microsecond, so ts + dur is itself rounded
// to a quarter before the floor; doing the sum in integer nanoseconds instead moved some
// ends by a microsecond (0.13 point of overlap on a generated 20k-kernel trace).
void round_like_hta(int64_t& s, int64_t& e) {
  const double ts = static_cast<double>(s) / 1000.0;
  const double end = ts + static_cast<double>(e - s) / 1000.0;
  // Beyond what whole microseconds in int64 nanoseconds hold: left as they are.
  if (!(std::fabs(ts) < 9.2e15) || !(std::fabs(end) < 9.2e15)) return;
  const int64_t s2 = static_cast<int64_t>(std::ceil(ts)) * 1000;
  const int64_t e2 = static_cast<int64_t>(std::floor(end)) * 1000;
  s = s2;
  e = std::max(s2, e2);
}

// A name fit to be part of a counter's name: letters, digits and '_', 1 to 64 of them (the ops
// of c10d: all_reduce, broadcast, _allgather_base, ...); a hostile name is not counted as one.
// Distinct ops counted per process; more (a hostile file naming millions) count as "other".
constexpr size_t kMaxOps = 64;

template <class Map, class Key>
void count_op(Map& m, Key key, Key other) {
  auto it = m.find(key);
  if (it == m.end() && m.size() >= kMaxOps) it = m.try_emplace(std::move(other), 0).first;
  if (it == m.end()) it = m.try_emplace(std::move(key), 0).first;
  ++it->second;
}

bool op_word(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string Parser::where(int64_t at, const std::string& why) const {
  return path_ + ": event " + std::to_string(index_) + " at byte " + std::to_string(at) + ": " +
         why;
}

void Parser::bad(int64_t at, const char* reason, const std::string& why) {
  st_.bad(reason, where(at, why));
}

void Parser::cut(int64_t at, const std::string& why) {
  // The event the input ends in: counted as an event read, and as unusable.
  ++index_;
  ++st_.events;
  bad(at, "cut", why);
}

std::string Parser::capped(std::string_view text, std::string_view what) {
  if (text.size() <= common::kNameLimit) return std::string(text);
  const std::string_view kept = common::cut_text(text, common::kNameLimit);
  st_.bad("long_text", path_ + ": " + std::string(what) + ": a text of " +
                           std::to_string(text.size()) + " bytes, cut to " +
                           std::to_string(kept.size()) + " (docs/analyze.md, Limits)");
  return std::string(kept);
}

void Parser::member(std::string_view key, std::string_view value) {
  element doc;
  if (members_.parse(value.data(), value.size()).get(doc) != simdjson::SUCCESS) return;
  if (key == "distributedInfo") {
    distributed_info(doc);
  } else if (key == "host_name" || key == "hostname") {
    std::string_view h;
    if (doc.get_string().get(h) == simdjson::SUCCESS) p_.host = capped(h, key);
  } else if (key == "baseTimeNanoseconds") {
    int64_t v = 0;
    if (doc.get_int64().get(v) == simdjson::SUCCESS) p_.base_ns = v;
  } else if (key == "deviceProperties") {
    device_properties(doc);
  }
}

void Parser::distributed_info(const element& doc) {
  object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS) return;
  int64_t v = 0;
  if (num(o, "rank", &v)) p_.rank = v;
  if (num(o, "world_size", &v)) p_.world_size = v;
  p_.nccl_version = capped(str(o, "nccl_version"), "nccl_version");
}

void Parser::device_properties(const element& doc) {
  simdjson::dom::array a;
  if (doc.get_array().get(a) != simdjson::SUCCESS) return;
  for (element e : a) {
    object o;
    if (e.get_object().get(o) != simdjson::SUCCESS) continue;
    tracedb::DeviceRow d;
    int64_t v = 0;
    d.device_id = num(o, "id", &v) ? v : static_cast<int64_t>(p_.devices.size());
    d.name = capped(str(o, "name"), "deviceProperties name");
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
    p_.devices.push_back(std::move(d));
  }
}

void Parser::reserve(int64_t json_bytes) {
  // A profiler trace's kernel and the call that launched it take about 500 bytes of JSON
  // together (perf/hta/compare.py's: 516); a file with more grows the vectors as usual. At most
  // 2^20 of each are reserved, whatever the hint says.
  const auto n = static_cast<size_t>(std::clamp<int64_t>(json_bytes / 500, 0, int64_t{1} << 20));
  p_.kernels.reserve(n);
  p_.kernel_names.reserve(n);
  p_.api.reserve(n);
  p_.api_names.reserve(n);
}

const char* Parser::tokenize(simdjson::ondemand::parser& parser, std::string_view text, Event* e) {
  // The element lies in a buffer with JsonStream::kPadding readable bytes after it.
  const simdjson::padded_string_view view(text.data(), text.size(),
                                          text.size() + JsonStream::kPadding);
  return read_event(parser, view, e);
}

void Parser::event(std::string_view text, int64_t at) {
  Event e;
  const char* why = tokenize(events_, text, &e);
  apply(e, why, at);
}

void Parser::apply(Event& e, const char* why, int64_t at) {
  ++index_;
  ++st_.events;
  if (why != nullptr) {
    bad(at, is(why, "not an object") ? "not_object" : "not_json", why);
    return;
  }
  // Every event has a phase; without one (a {} event, or a ph that is not a string) it cannot
  // be read as anything, and is counted rather than passed over.
  if (e.ph.empty()) {
    bad(at, "no_ph", "an event without a string ph");
    return;
  }
  if (!is(e.ph, "X")) return;  // metadata, flows, instants: nothing the tables hold
  if (e.cat.empty()) {
    bad(at, "no_cat", "an 'X' event without a string cat");
    return;
  }
  const auto [kind, table] = classify(e.cat, e.name);
  int64_t start = 0, end = 0;
  if (!times(e, table, at, &start, &end)) return;
  // Names past c3scope's cap (common/text_limits.h) are cut where they are read and the event
  // counted once as long_text, the first one named, so no report, export or GUI row copies
  // megabytes (an event with bad times was counted as that instead).
  std::string cut_why;
  for (std::string_view* t :
       {&e.name, &e.args.collective_name, &e.args.dtype, &e.args.group_name}) {
    if (t->size() <= common::kNameLimit) continue;
    const std::string_view kept = common::cut_text(*t, common::kNameLimit);
    if (cut_why.empty()) {
      cut_why = "a name of " + std::to_string(t->size()) + " bytes, cut to " +
                std::to_string(kept.size()) + " (docs/analyze.md, Limits)";
    }
    *t = kept;
  }
  if (!cut_why.empty()) bad(at, "long_text", cut_why);
  if (kind == Kind::range || kind == Kind::cpu) cpu_collective(e);
  if (kind == Kind::cpu) ++st_.cpu_ops_not_kept;
  int64_t pid = 0, tid = 0;
  e.pid.integer(&pid);
  e.tid.integer(&tid);
  // The process's pid is the first host event's (a GPU event's pid names its device).
  if (p_.pid < 0 && (kind == Kind::api_call || kind == Kind::range || kind == Kind::cpu))
    p_.pid = pid;
  switch (kind) {
    case Kind::kernel:
    case Kind::memcpy:
    case Kind::memset:
      gpu_work(e, kind, pid, start, end);
      break;
    case Kind::api_call:
      api_call(e, tid, start, end);
      break;
    case Kind::sync:
      sync(e, pid, start, end);
      break;
    case Kind::range:
      range(e, tid, start, end);
      break;
    case Kind::cpu:
    case Kind::other:
      break;
  }
}

// A kernel, copy or set; `pid` stands for the device when args name none.
void Parser::gpu_work(const Event& e, Kind kind, int64_t pid, int64_t start, int64_t end) {
  GpuEvent g;
  if (!arg(e, e.args.device, &g.device_id)) g.device_id = pid;
  int64_t v = -1;
  arg(e, e.args.stream, &v);
  g.stream_id = v;
  if (arg(e, e.args.correlation, &v)) g.correlation_id = v;  // none: it links to nothing
  g.start_ns = start;
  g.end_ns = end;
  if (kind == Kind::kernel) {
    kernel(e, g);
    return;
  }
  g.bytes = arg(e, e.args.bytes, &v) ? v : 0;
  if (kind == Kind::memcpy) {
    g.name = p_.names.id(e.name);  // the copy's kinds are in its name
    p_.memcpys.push_back(g);
    ++st_.memcpys;
  } else {
    p_.memsets.push_back(g);
    ++st_.memsets;
  }
}

bool Parser::times(const Event& e, const char* table, int64_t at, int64_t* start, int64_t* end) {
  // Impossible times are rejected the same way for every table and counted per table.
  auto reject = [&](const std::string& reason) {
    if (table != nullptr) {
      st_.reject(table, where(at, reason));
    } else {
      bad(at, "times", reason);
    }
    return false;
  };
  if (!e.ts.is_number()) {
    bad(at, "no_ts", "'X' event without a numeric ts");
    return false;
  }
  if (!e.dur.is_number()) {
    bad(at, "no_dur", "'X' event without a numeric dur");
    return false;
  }
  int64_t dur = 0;
  if (!to_ns(e.ts, start, &p_.fractional) || !to_ns(e.dur, &dur, &p_.fractional))
    return reject("a ts or dur past what int64 nanoseconds hold");
  if (dur < 0) return reject("a negative dur");
  if (__builtin_add_overflow(*start, dur, end))
    return reject("ts + dur past what int64 nanoseconds hold");
  if (const std::string impossible = check_times(*start, *end);
      table != nullptr && !impossible.empty()) {
    return reject(impossible);
  }
  return true;
}

void Parser::kernel(const Event& e, const GpuEvent& g) {
  const Args& args = e.args;
  KernelEvent k = g;
  LaunchShape shape;
  shape.grid_x = args.grid[0];
  shape.grid_y = args.grid[1];
  shape.grid_z = args.grid[2];
  shape.block_x = args.block[0];
  shape.block_y = args.block[1];
  shape.block_z = args.block[2];
  int64_t v = 0;
  shape.registers_per_thread = arg(e, args.registers, &v) ? v : 0;
  shape.dynamic_shared_bytes = arg(e, args.shared_memory, &v) ? v : 0;
  k.shape = shape_id(shape);
  if (e.name.substr(0, 4) == "nccl") {
    CollectiveEvent c;
    c.kernel = p_.kernels.size();
    c.op = p_.names.id(!args.collective_name.empty() ? nccl_op(args.collective_name)
                                                     : op_from_kernel(e.name));
    c.dtype = p_.names.id(args.dtype);
    c.group = p_.names.id(args.group_name);
    arg(e, args.in_nelems, &c.in_nelems);
    arg(e, args.group_size, &c.group_size);
    p_.colls.push_back(c);
  }
  p_.kernels.push_back(k);
  p_.kernel_names.push_back(p_.names.id(e.name));
  ++st_.kernels;
}

size_t Parser::ShapeHash::operator()(const LaunchShape& s) const {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (const int64_t x : {s.grid_x, s.grid_y, s.grid_z, s.block_x, s.block_y, s.block_z,
                          s.registers_per_thread, s.dynamic_shared_bytes}) {
    h = (h ^ static_cast<uint64_t>(x)) * 0x100000001b3ULL;
    h ^= h >> 29;
  }
  return static_cast<size_t>(h);
}

int32_t Parser::shape_id(const LaunchShape& s) {
  if (last_shape_ >= 0 && p_.shapes[static_cast<size_t>(last_shape_)] == s) return last_shape_;
  auto [it, fresh] = shape_ids_.try_emplace(s, static_cast<int32_t>(p_.shapes.size()));
  if (fresh) {
    if (p_.shapes.size() >= static_cast<size_t>(INT32_MAX)) {
      throw std::length_error("more than 2^31 distinct kernel launch shapes");
    }
    p_.shapes.push_back(s);
  }
  last_shape_ = it->second;
  return last_shape_;
}

void Parser::api_call(const Event& e, int64_t tid, int64_t start, int64_t end) {
  ApiEvent a;
  a.thread_id = tid;
  a.runtime = is(e.cat, "cuda_runtime");
  int64_t v = 0;
  a.cbid = arg(e, e.args.cbid, &v) ? v : 0;
  a.correlation_id = arg(e, e.args.correlation, &v) ? v : 0;
  a.start_ns = start;
  a.end_ns = end;
  p_.api.push_back(a);
  p_.api_names.push_back(options_.api_calls ? p_.names.id(e.name) : -1);
  ++st_.api_calls;
}

void Parser::sync(const Event& e, int64_t pid, int64_t start, int64_t end) {
  if (!options_.api_calls) return;
  SyncEvent y;
  if (!arg(e, e.args.device, &y.device_id)) y.device_id = pid;
  y.start_ns = start;
  y.end_ns = end;
  int64_t v = 0;
  if (arg(e, e.args.stream, &v)) y.stream_id = v;
  if (arg(e, e.args.correlation, &v)) y.correlation_id = v;
  if (arg(e, e.args.wait_on_stream, &v)) y.record_stream = v;
  if (arg(e, e.args.wait_on_record, &v)) y.record_correlation = v;
  if (is(e.name, "Stream Wait Event")) {
    y.type = "stream_wait_event";
  } else if (is(e.name, "Event Sync")) {
    y.type = "event_synchronize";
  } else if (is(e.name, "Stream Sync")) {
    y.type = "stream_synchronize";
  } else if (is(e.name, "Context Sync")) {
    y.type = "context_synchronize";
  } else {
    y.type = "unknown";
  }
  p_.syncs.push_back(std::move(y));
}

void Parser::range(const Event& e, int64_t tid, int64_t start, int64_t end) {
  tracedb::NvtxRangeRow r;
  r.thread_id = tid;
  r.kind = "push_pop";
  r.domain = "pytorch";
  r.name = std::string(e.name);
  r.start_ns = start;
  r.end_ns = end;
  r.closed = 1;
  p_.ranges.push_back(std::move(r));
  ++st_.ranges;
}

// A process group whose collectives run on host threads names its ops "<backend>:<op>" in the
// user annotation of each call (gloo:all_reduce, mpi:broadcast, ...): counted per (backend, op).
// The record_param_comms op of each call names the collective too ("Collective name") but not
// the backend: counted aside, and used in finish() only when nothing else names them.
void Parser::cpu_collective(const Event& e) {
  const size_t colon = e.name.find(':');
  if (colon != std::string_view::npos && colon + 1 < e.name.size()) {
    const std::string_view backend = e.name.substr(0, colon), op = e.name.substr(colon + 1);
    if (is(backend, "nccl")) {
      nccl_annotations_ = true;
    } else if ((is(backend, "gloo") || is(backend, "mpi") || is(backend, "ucc")) && op_word(op)) {
      count_op(st_.cpu_collectives, std::pair{std::string(backend), std::string(op)},
               std::pair{std::string(backend), std::string("other")});
      return;
    }
  }
  if (is(e.cat, "cpu_op") && is(e.name, "record_param_comms") && e.has_args &&
      op_word(e.args.collective_name))
    count_op(param_comms_, std::string(e.args.collective_name), std::string("other"));
}

void Parser::finish() {
  // Collectives that no annotation names the backend of, in a process that ran no NCCL
  // collective: CPU-side too, of a backend the trace does not say.
  if (st_.cpu_collectives.empty() && p_.colls.empty() && !nccl_annotations_) {
    for (const auto& [op, n] : param_comms_) st_.cpu_collectives[{"unnamed", op}] += n;
  }
  if (options_.hta_rounding && p_.fractional) {
    for (auto& k : p_.kernels) round_like_hta(k.start_ns, k.end_ns);
    for (auto& m : p_.memcpys) round_like_hta(m.start_ns, m.end_ns);
    for (auto& m : p_.memsets) round_like_hta(m.start_ns, m.end_ns);
    st_.rounded = true;
  }
  link_collectives();
}

// An NCCL kernel without a correlation id still links to its own collective: it gets an id no
// row of the file uses (and no launching call). So does one whose id other GPU work shares (the
// kernels and copies of one CUDA graph launch, or a hostile file): linked through the shared id,
// the call would own all that work, its GPU span would cover it, and linking would grow with
// the square of the number of such calls (issue 12: 20,000 NCCL kernels of one id). The
// launching call still gives the call its host time.
void Parser::link_collectives() {
  if (!p_.colls.empty()) link_collective_ids();
  // In the order of their kernels' starts, ties as in the file (a stable sort). A file written
  // in time order needs nothing; otherwise (start, place) pairs are sorted and the collectives
  // (with their strings) moved once, not at every step of a merge sort.
  const auto start = [&](const CollectiveEvent& c) { return p_.kernels[c.kernel].start_ns; };
  if (std::is_sorted(p_.colls.begin(), p_.colls.end(),
                     [&](const auto& a, const auto& b) { return start(a) < start(b); })) {
    return;
  }
  std::vector<std::pair<int64_t, size_t>> order(p_.colls.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = {start(p_.colls[i]), i};
  std::sort(order.begin(), order.end());
  std::vector<CollectiveEvent> sorted;
  sorted.reserve(p_.colls.size());
  for (const auto& [at, i] : order) sorted.push_back(p_.colls[i]);
  p_.colls = std::move(sorted);
}

void Parser::link_collective_ids() {
  // How many GPU rows carry each id an NCCL kernel has (only "more than one" matters). Ids are
  // counted in a vector over the NCCL kernels' span when it is not much larger than the rows
  // (the usual case: ids are dense), else in a hash of those ids alone.
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& c : p_.colls) {
    if (const auto& id = p_.kernels[c.kernel].correlation_id) {
      lo = std::min(lo, *id);
      hi = std::max(hi, *id);
    }
  }
  const size_t rows = p_.kernels.size() + p_.memcpys.size() + p_.memsets.size();
  const bool dense =
      lo <= hi && static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) < 8 * rows + 1024;
  std::vector<uint8_t> dense_count(dense ? static_cast<size_t>(hi - lo) + 1 : 0, 0);
  std::unordered_map<int64_t, uint8_t> sparse_count;
  if (!dense) {
    for (const auto& c : p_.colls) {
      if (const auto& id = p_.kernels[c.kernel].correlation_id) sparse_count.emplace(*id, 0);
    }
  }
  auto count = [&](const std::optional<int64_t>& id) {
    if (!id || *id < lo || *id > hi) return;
    uint8_t* n = nullptr;
    if (dense) {
      n = &dense_count[static_cast<size_t>(*id - lo)];
    } else if (auto it = sparse_count.find(*id); it != sparse_count.end()) {
      n = &it->second;
    }
    if (n != nullptr && *n < 2) ++*n;
  };
  for (const auto& k : p_.kernels) count(k.correlation_id);
  for (const auto& m : p_.memcpys) count(m.correlation_id);
  for (const auto& m : p_.memsets) count(m.correlation_id);
  auto shared = [&](int64_t id) {
    return dense ? dense_count[static_cast<size_t>(id - lo)] > 1 : sparse_count[id] > 1;
  };
  // The smallest ids no row uses, whatever the file's largest is (the ids in use gathered only
  // when a kernel needs one).
  std::unordered_set<int64_t> used;
  bool used_known = false;
  int64_t next = 0;
  auto fresh = [&] {
    if (!used_known) {
      for (const auto& k : p_.kernels) {
        if (k.correlation_id) used.insert(*k.correlation_id);
      }
      for (const auto& m : p_.memcpys) {
        if (m.correlation_id) used.insert(*m.correlation_id);
      }
      for (const auto& m : p_.memsets) {
        if (m.correlation_id) used.insert(*m.correlation_id);
      }
      for (const auto& a : p_.api) used.insert(a.correlation_id);
      used_known = true;
    }
    do {
      ++next;
    } while (used.count(next) != 0);
    return next;
  };
  for (auto& c : p_.colls) {
    auto& k = p_.kernels[c.kernel];
    c.launch = k.correlation_id;
    if (!k.correlation_id || shared(*k.correlation_id)) k.correlation_id = fresh();
  }
}

}  // namespace c3::importer::kineto
