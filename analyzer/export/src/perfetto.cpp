// Trace database -> Chrome trace JSON for ui.perfetto.dev and chrome://tracing.
//
// Tracks: each traced process's threads (NVTX ranges, CUDA API calls, NCCL calls) under its
// pid; each GPU of each process as its own "process" (pid 1000000 + 1000 * process row + device)
// with one thread per stream (kernels, copies, sets). Flow arrows go from each launching API
// call to its GPU work (CUPTI correlation ids), and from each NCCL call to the first kernel it
// launched on its own GPU; every arrow ends at a slice's start on that slice's track.
// Timestamps are microseconds with nanosecond decimals.
#include "c3/exporter/perfetto.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "c3/tracedb/harden.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"
#include "json_out.h"

namespace c3::exporter {
namespace {

// Ids and durations from a trace's columns, in arithmetic that wraps or clamps: the export reads
// the file as it is (no loader bounds), and a hostile trace must not overflow int64.
int64_t wrap(uint64_t v) {
  return static_cast<int64_t>(v);
}
int64_t flow_id(int64_t process_row, int64_t correlation) {
  return wrap(static_cast<uint64_t>(process_row) * 1'000'000'000'000u +
              static_cast<uint64_t>(correlation));
}
int64_t duration(int64_t start, int64_t end) {
  int64_t d = 0;
  if (end <= start || __builtin_sub_overflow(end, start, &d)) return 0;
  return d;
}

// (process row, correlation or external id).
using Key = std::pair<int64_t, int64_t>;
struct KeyHash {
  size_t operator()(const Key& k) const noexcept {
    return std::hash<uint64_t>()(static_cast<uint64_t>(k.first) * 0x9E3779B97F4A7C15ULL ^
                                 static_cast<uint64_t>(k.second));
  }
};

// Where GPU work ran: its device and stream (the track of its slices), and its first start.
struct Place {
  int64_t device = 0, stream = 0, start = 0;
};
// A correlation is one API call, so its work runs on one stream; a damaged trace may spread one
// over any number of tracks. Keeping a few of them keeps the export linear (each external id's
// correlations are walked with their places), and any place kept is a real slice's start.
constexpr size_t kMaxPlacesPerCorrelation = 16;
// An NCCL call's work on one GPU (stream = -1) or one stream of it: (process row, external id,
// device, stream).
struct CallKey {
  int64_t process = 0, external = 0, device = 0, stream = 0;
  bool operator==(const CallKey&) const = default;
};
struct CallKeyHash {
  size_t operator()(const CallKey& k) const noexcept {
    uint64_t h = 0;
    for (int64_t v : {k.process, k.external, k.device, k.stream})
      h = (h ^ static_cast<uint64_t>(v)) * 0x9E3779B97F4A7C15ULL + (h >> 29);
    return std::hash<uint64_t>()(h);
  }
};

// The string table (kernel and API call names).
using Names = std::unordered_map<int64_t, std::string>;

Names read_names(const tracedb::Reader& r) {
  Names names;
  auto q = r.query("SELECT id, value FROM string");
  q.cap(1, tracedb::kNameCap);  // c3scope's caps (docs/analyze.md, Limits), as analyze reads
  while (q.step()) names.emplace(q.i64(0), q.text(1));
  return names;
}

// Where one trace's flow arrows start and end, read before any event is written.
struct Flows {
  // Correlations that have a launching API call in the trace: only those get flow arrows.
  std::unordered_set<Key, KeyHash> launched;
  // ... and GPU work that has them: an API call starts a flow only when something ends it.
  // With where each correlation's work ran (per device and stream, its first start), where
  // NCCL calls' flows end.
  std::unordered_map<Key, std::vector<Place>, KeyHash> work_places;
  // Each NCCL call's first GPU work on its own GPU, per stream and per GPU (stream -1).
  std::unordered_map<CallKey, Place, CallKeyHash> call_work;
};

std::unordered_set<Key, KeyHash> launched(const tracedb::Reader& r) {
  std::unordered_set<Key, KeyHash> out;
  auto q = r.query("SELECT process_id, correlation_id FROM api_call");
  while (q.step()) out.insert({q.i64(0), q.i64(1)});
  return out;
}

std::unordered_map<Key, std::vector<Place>, KeyHash> work_places(const tracedb::Reader& r) {
  std::unordered_map<Key, std::vector<Place>, KeyHash> out;
  auto q = r.query(
      "SELECT process_id, correlation_id, device_id, IFNULL(stream_id, 0), MIN(start_ns) "
      "FROM (SELECT process_id, correlation_id, device_id, stream_id, start_ns FROM kernel "
      "UNION ALL SELECT process_id, correlation_id, device_id, stream_id, start_ns FROM "
      "memcpy UNION ALL SELECT process_id, correlation_id, device_id, stream_id, start_ns "
      "FROM memset) WHERE correlation_id IS NOT NULL GROUP BY process_id, correlation_id, "
      "device_id, IFNULL(stream_id, 0) ORDER BY 5");
  while (q.step()) {
    auto& places = out[Key{q.i64(0), q.i64(1)}];
    if (places.size() < kMaxPlacesPerCorrelation) places.push_back({q.i64(2), q.i64(3), q.i64(4)});
  }
  return out;
}

// All calls of a group share the group's work (one external id), which spans every GPU the
// group drives, so a call's flow ends on the first slice of its own device, on the call's
// stream when it has work there: the group's first start (collective_gpu's start_ns) may be
// another GPU's kernel, and an arrow to it left on the call's own track points at nothing
// (issue 13: 2,100 of 9,600 NCCL flows of the demo trace). Built from the external
// correlations and work_places instead of the view, whose row per (call, linked activity) made
// 20,000 kernels sharing one correlation id 400 million rows and took 43 s (issue 12;
// perf/export.cpp).
std::unordered_map<CallKey, Place, CallKeyHash> call_work(
    const tracedb::Reader& r, const std::unordered_map<Key, std::vector<Place>, KeyHash>& places) {
  std::unordered_map<CallKey, Place, CallKeyHash> out;
  auto q = r.query(
      "SELECT process_id, external_id, correlation_id FROM external_correlation WHERE "
      "external_kind = 'custom0'");
  while (q.step()) {
    const auto w = places.find({q.i64(0), q.i64(2)});
    if (w == places.end()) continue;
    for (const Place& place : w->second) {
      for (const int64_t stream : {place.stream, int64_t{-1}}) {
        auto [it, fresh] = out.emplace(CallKey{q.i64(0), q.i64(1), place.device, stream}, place);
        if (!fresh && place.start < it->second.start) it->second = place;
      }
    }
  }
  return out;
}

Flows collect_flows(const tracedb::Reader& r) {
  Flows f;
  f.launched = launched(r);
  f.work_places = work_places(r);
  f.call_work = call_work(r, f.work_places);
  return f;
}

// Host pids across the files of one export: a pid another file already took (pid 4000 on two
// hosts), or one where GPU tracks' pids start (1000000), is shown as a free one.
class HostPids {
 public:
  int64_t show(int64_t pid) {
    if (pid < 1000000 && taken_.insert(pid).second) return pid;
    while (!taken_.insert(next_free_).second) ++next_free_;
    return next_free_;
  }

 private:
  std::set<int64_t> taken_;
  int64_t next_free_ = 900000;
};

// The process table's rows (id, pid, host, rank, command line) as the tracks read them: one
// query for the tracks and trace_processes, so the rows come in one order.
template <class F>
void each_process_row(const tracedb::Reader& r, F&& fn) {
  auto q = r.query("SELECT id, pid, host, rank, command_line FROM process");
  q.cap(2, tracedb::kNameCap).cap(4, tracedb::kCommandLineCap);
  while (q.step()) fn(q);
}

// One trace's tracks: a process track per process row, a GPU track per (process row, device).
struct Tracks {
  int64_t base = 0;  // process rows are numbered on from the previous files' (GPU pids, flows)
  int64_t rows = 0;  // the highest process row of this file
  std::map<int64_t, int64_t> pid;                      // process row -> the pid its track shows
  std::map<int64_t, int64_t> os_pid;                   // process row -> its pid as recorded
  std::vector<std::pair<int64_t, std::string>> names;  // (track pid, process name), in order
  int64_t gpu_pid(int64_t process_row, int64_t device) const {
    return wrap(1000000u + 1000u * static_cast<uint64_t>(base + process_row) +
                static_cast<uint64_t>(device));
  }
};

// `show`: the pid a process row's track shows, from (process row, its recorded pid).
Tracks collect_tracks(const tracedb::Reader& r, int64_t base,
                      const std::function<int64_t(int64_t, int64_t)>& show) {
  Tracks t;
  t.base = base;
  each_process_row(r, [&](const tracedb::Query& q) {
    const int64_t row = q.i64(0), os_pid = q.i64(1);
    t.rows = std::max(t.rows, row);
    t.os_pid[row] = os_pid;
    const int64_t shown = show(row, os_pid);
    t.pid[row] = shown;
    std::string label = q.text(4);
    if (shown != os_pid) label += " (pid " + std::to_string(os_pid) + ")";
    if (!q.text(2).empty()) label += " on " + q.text(2);
    if (auto rank = q.opt_i64(3)) label.insert(0, "rank " + std::to_string(*rank) + ": ");
    t.names.emplace_back(shown, std::move(label));
  });
  return t;
}

// One trace's events, written in the order of their tracks, then slices by kind.
class Emitter {
 public:
  Emitter(const tracedb::Reader& r, const ExportInput& in, const Names& names, const Tracks& tracks,
          const Flows& flows, JsonOut& o, ExportStats& st)
      : r_(r), in_(in), names_(names), t_(tracks), flows_(flows), o_(o), f_(o.file()), st_(st) {}

  void all() {
    process_tracks();
    gpu_tracks();
    stream_tracks();
    kernels();
    copies_and_sets();
    api_calls();
    nccl_calls();
    nvtx();
  }

 private:
  std::string name(int64_t id) const {
    auto it = names_.find(id);
    return it == names_.end() ? std::string("?") : it->second;
  }
  // Clock alignment: t shifted by the offset of its process row (0 when none is given).
  int64_t at(int64_t process_row, int64_t t) const {
    const auto it = in_.offset_ns.find(process_row);
    int64_t shifted = t;
    if (it != in_.offset_ns.end() && __builtin_add_overflow(t, it->second, &shifted)) return t;
    return shifted;
  }
  int64_t host_pid(int64_t process_row) const {
    const auto it = t_.pid.find(process_row);
    return it == t_.pid.end() ? 0 : it->second;
  }
  void track_name(const char* what, int64_t pid, const int64_t* tid, const std::string& label);
  void process_tracks();
  void gpu_tracks();
  void stream_tracks();
  // One slice of GPU work (columns: process, device, stream, start, end, -, correlation), and
  // the end of its correlation's flow when an API call launched it.
  void gpu_slice(const tracedb::Query& q, const char* cat, const std::string& name,
                 const std::string& detail);
  void kernels();
  void copies_and_sets();
  // A host slice's start: "{... "name": NAME, "pid": P, "tid": T, "ts": T, "dur": D".
  void host_slice(const char* head, const std::string& name, int64_t p, int64_t tid, int64_t start,
                  int64_t end);
  void api_calls();
  void nccl_calls();
  void nccl_flow(const tracedb::Query& q, int64_t p);
  void nvtx();

  const tracedb::Reader& r_;
  const ExportInput& in_;
  const Names& names_;
  const Tracks& t_;
  const Flows& flows_;
  JsonOut& o_;
  FILE* f_;
  ExportStats& st_;
};

void Emitter::track_name(const char* what, int64_t pid, const int64_t* tid,
                         const std::string& label) {
  o_.begin();
  std::fprintf(f_, "{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %" PRId64, what, pid);
  if (tid != nullptr) std::fprintf(f_, ", \"tid\": %" PRId64, *tid);
  o_.raw(", \"args\": {\"name\": ");
  o_.str(label);
  o_.raw("}}");
}

void Emitter::process_tracks() {
  for (const auto& [pid, label] : t_.names) track_name("process_name", pid, nullptr, label);
}

void Emitter::gpu_tracks() {
  auto q = r_.query("SELECT process_id, device_id, name FROM device");
  q.cap(2, tracedb::kNameCap);
  while (q.step()) {
    const auto os = t_.os_pid.find(q.i64(0));
    track_name("process_name", t_.gpu_pid(q.i64(0), q.i64(1)), nullptr,
               "GPU " + std::to_string(q.i64(1)) + " (" + q.text(2) + ") of pid " +
                   std::to_string(os == t_.os_pid.end() ? 0 : os->second));
  }
}

void Emitter::stream_tracks() {
  auto q = r_.query(
      "SELECT process_id, IFNULL(device_id, 0), stream_id, IFNULL(name, ''), priority FROM "
      "stream");
  q.cap(3, tracedb::kNameCap);
  while (q.step()) {
    std::string label = "stream " + std::to_string(q.i64(2));
    if (!q.text(3).empty()) label += " (" + q.text(3) + ")";
    if (auto p = q.opt_i64(4); p && *p != 0) label += " prio " + std::to_string(*p);
    const int64_t tid = q.i64(2);
    track_name("thread_name", t_.gpu_pid(q.i64(0), q.i64(1)), &tid, label);
  }
}

void Emitter::gpu_slice(const tracedb::Query& q, const char* cat, const std::string& name,
                        const std::string& detail) {
  const int64_t p = q.i64(0), dev = q.i64(1), stream = q.opt_i64(2).value_or(0);
  const int64_t track = t_.gpu_pid(p, dev);
  o_.begin();
  std::fprintf(f_, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
  o_.str(name);
  std::fprintf(f_, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", track, stream);
  o_.ts(at(p, q.i64(3)));
  o_.raw(", \"dur\": ");
  o_.ts(duration(q.i64(3), q.i64(4)));
  std::fprintf(f_, ", \"args\": {\"device\": %" PRId64 ", \"stream\": %" PRId64, dev, stream);
  const auto c = q.opt_i64(6);
  if (c) std::fprintf(f_, ", \"correlation\": %" PRId64, *c);
  o_.raw(", \"detail\": ");
  o_.str(detail);
  o_.raw("}}");
  ++st_.gpu_events;
  if (!c || !flows_.launched.count({p, *c})) return;
  // Flow end, bound to this slice.
  o_.begin();
  std::fprintf(f_,
               "{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"launch\", \"name\": \"launch\", "
               "\"id\": %" PRId64 ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
               flow_id(t_.base + p, *c), track, stream);
  o_.ts(at(p, q.i64(3)));
  o_.raw("}");
  ++st_.flows;
}

// Kernel names are resolved in C++ (the string table), so the query selects their ids.
void Emitter::kernels() {
  auto q = r_.query(
      "SELECT process_id, device_id, stream_id, start_ns, end_ns, name_id, correlation_id, "
      "'grid ' || grid_x || 'x' || grid_y || 'x' || grid_z || ', block ' || block_x || 'x' || "
      "block_y || 'x' || block_z || ', ' || registers_per_thread || ' registers, ' || "
      "(static_shared_bytes + dynamic_shared_bytes) || ' B shared' FROM kernel ORDER BY "
      "start_ns");
  while (q.step()) gpu_slice(q, "kernel", name(q.i64(5)), q.text(7));
}

void Emitter::copies_and_sets() {
  for (const auto& [sql, cat] :
       {std::pair{"SELECT process_id, device_id, stream_id, start_ns, end_ns, 'Memcpy ' || "
                  "copy_kind, correlation_id, bytes || ' bytes, ' || src_kind || ' -> ' || "
                  "dst_kind FROM memcpy ORDER BY start_ns",
                  "memcpy"},
        std::pair{"SELECT process_id, device_id, stream_id, start_ns, end_ns, 'Memset', "
                  "correlation_id, bytes || ' bytes' FROM memset ORDER BY start_ns",
                  "memset"}}) {
    auto q = r_.query(sql);
    q.cap(5, tracedb::kNameCap).cap(7, tracedb::kNameCap);
    while (q.step()) gpu_slice(q, cat, q.text(5), q.text(7));
  }
}

void Emitter::host_slice(const char* head, const std::string& name, int64_t p, int64_t tid,
                         int64_t start, int64_t end) {
  o_.begin();
  o_.raw(head);
  o_.str(name);
  std::fprintf(f_, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", host_pid(p), tid);
  o_.ts(at(p, start));
  o_.raw(", \"dur\": ");
  o_.ts(duration(start, end));
}

// API calls: slices on their threads, each the start of its correlation's flow.
void Emitter::api_calls() {
  auto q = r_.query(
      "SELECT process_id, thread_id, name_id, start_ns, end_ns, correlation_id FROM api_call "
      "ORDER BY start_ns");
  while (q.step()) {
    const int64_t p = q.i64(0);
    host_slice("{\"ph\": \"X\", \"cat\": \"cuda_api\", \"name\": ", name(q.i64(2)), p, q.i64(1),
               q.i64(3), q.i64(4));
    std::fprintf(f_, ", \"args\": {\"correlation\": %" PRId64 "}}", q.i64(5));
    ++st_.cpu_events;
    if (!flows_.work_places.count({p, q.i64(5)})) continue;
    o_.begin();
    std::fprintf(f_,
                 "{\"ph\": \"s\", \"cat\": \"launch\", \"name\": \"launch\", \"id\": %" PRId64
                 ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
                 flow_id(t_.base + p, q.i64(5)), host_pid(p), q.i64(1));
    o_.ts(at(p, q.i64(3)));
    o_.raw("}");
  }
}

// NCCL calls with their arguments, and a flow to their first GPU work.
void Emitter::nccl_calls() {
  auto q = r_.query(
      "SELECT c.process_id, c.thread_id, c.op, c.host_start_ns, c.host_end_ns, "
      "IFNULL(c.comm_id, ''), c.seq, c.bytes, IFNULL(c.nranks, 0), IFNULL(c.rank, -1), "
      "c.datatype, c.external_id, c.device_id, c.stream_id, c.id FROM collective c ORDER BY "
      "c.host_start_ns");
  q.cap(2, tracedb::kNameCap).cap(5, tracedb::kNameCap).cap(10, tracedb::kNameCap);
  while (q.step()) {
    const int64_t p = q.i64(0);
    host_slice("{\"ph\": \"X\", \"cat\": \"nccl\", \"name\": ", "nccl" + q.text(2), p, q.i64(1),
               q.i64(3), q.i64(4));
    o_.raw(", \"args\": {\"comm\": ");
    o_.str(q.text(5));
    std::fprintf(f_,
                 ", \"seq\": %" PRId64 ", \"bytes\": %" PRId64 ", \"nranks\": %" PRId64
                 ", \"rank\": %" PRId64 ", \"datatype\": ",
                 q.i64(6), q.i64(7), q.i64(8), q.i64(9));
    o_.str(q.text(10));
    o_.raw("}}");
    ++st_.cpu_events;
    nccl_flow(q, p);
  }
}

// Its first work on the call's stream, else its first on its GPU: the arrow ends on that
// slice's own track. No work on its GPU, no arrow (never one to nothing).
void Emitter::nccl_flow(const tracedb::Query& q, int64_t p) {
  const auto ext = q.opt_i64(11);
  const auto dev = q.opt_i64(12);
  if (!ext || !dev) return;
  auto work = flows_.call_work.find(CallKey{p, *ext, *dev, q.opt_i64(13).value_or(-1)});
  if (work == flows_.call_work.end()) work = flows_.call_work.find(CallKey{p, *ext, *dev, -1});
  if (work == flows_.call_work.end()) return;
  const Place* end = &work->second;
  // Negative, apart from the API calls' flow ids; wraps rather than overflows.
  const int64_t id = wrap(
      0 - (static_cast<uint64_t>(t_.base + p) * 1'000'000'000u + static_cast<uint64_t>(q.i64(14))));
  o_.begin();
  std::fprintf(f_,
               "{\"ph\": \"s\", \"cat\": \"nccl\", \"name\": \"nccl\", \"id\": %" PRId64
               ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
               id, host_pid(p), q.i64(1));
  o_.ts(at(p, q.i64(3)));
  o_.raw("}");
  o_.begin();
  std::fprintf(f_,
               "{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"nccl\", \"name\": \"nccl\", "
               "\"id\": %" PRId64 ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
               id, t_.gpu_pid(p, end->device), end->stream);
  o_.ts(at(p, end->start));
  o_.raw("}");
  ++st_.flows;
}

// NVTX ranges and marks on their threads.
void Emitter::nvtx() {
  auto q = r_.query(
      "SELECT process_id, thread_id, kind, domain, name, start_ns, end_ns, payload_int FROM "
      "nvtx_range ORDER BY start_ns");
  q.cap(2, tracedb::kNameCap).cap(3, tracedb::kNameCap).cap(4, tracedb::kNameCap);
  while (q.step()) {
    const int64_t p = q.i64(0);
    const bool mark = q.text(2) == "mark";
    o_.begin();
    o_.raw(mark ? "{\"ph\": \"i\", \"s\": \"t\", \"cat\": " : "{\"ph\": \"X\", \"cat\": ");
    o_.str("nvtx:" + q.text(3));
    o_.raw(", \"name\": ");
    o_.str(q.text(4));
    std::fprintf(f_, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", host_pid(p),
                 q.i64(1));
    o_.ts(at(p, q.i64(5)));
    if (!mark) {
      o_.raw(", \"dur\": ");
      o_.ts(duration(q.i64(5), q.i64(6)));
    }
    if (auto pl = q.opt_i64(7)) std::fprintf(f_, ", \"args\": {\"payload\": %" PRId64 "}", *pl);
    o_.raw("}");
    ++st_.cpu_events;
  }
}

// What the import of a PyTorch trace left out: its CPU ops (no table holds them).
int64_t cpu_ops_not_kept(const tracedb::Reader& r) {
  if (!r.has_table("stats")) return 0;
  auto q = r.query(
      "SELECT IFNULL(MAX(value), 0) FROM stats WHERE name = 'import_cpu_ops_not_kept' AND value > "
      "0");
  return q.step() ? q.i64(0) : 0;
}

// One trace's events into `o`, with its processes' tracks numbered as `show` and `base` say;
// `rows` gets its highest process row.
ExportStats emit(const ExportInput& in, int64_t base,
                 const std::function<int64_t(int64_t, int64_t)>& show, JsonOut& o, int64_t& rows) {
  ExportStats st;
  auto r = tracedb::Reader::open(in.trace);
  const Names names = read_names(*r);
  const Flows flows = collect_flows(*r);
  const Tracks tracks = collect_tracks(*r, base, show);
  Emitter(*r, in, names, tracks, flows, o, st).all();
  st.cpu_ops_not_kept = cpu_ops_not_kept(*r);
  rows = tracks.rows;
  return st;
}

constexpr const char* kHead = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [";
constexpr const char* kTail = "\n]}\n";

}  // namespace

ExportStats& ExportStats::operator+=(const ExportStats& o) {
  gpu_events += o.gpu_events;
  cpu_events += o.cpu_events;
  flows += o.flows;
  cpu_ops_not_kept =
      wrap(static_cast<uint64_t>(cpu_ops_not_kept) + static_cast<uint64_t>(o.cpu_ops_not_kept));
  return *this;
}

ExportStats export_perfetto(const std::string& trace, tracedb::OutputFile& out) {
  return export_perfetto(std::vector<ExportInput>{{trace, {}}}, out);
}

// In stages per file: collect its flows and tracks, then emit its events; the JSON is written as
// they are emitted. Several traces (one per rank): process rows number from 1 in every file, so
// each file's rows are numbered on from the last file's (GPU pids, flow ids), and a host pid
// another file already took gets a free one, the real pid in its name. place_traces numbers them
// alike for traces rendered apart.
ExportStats export_perfetto(const std::vector<ExportInput>& inputs, tracedb::OutputFile& out) {
  ExportStats st;
  JsonOut o(out.stream());
  o.raw(kHead);
  int64_t base = 0;
  HostPids pids;
  for (const ExportInput& in : inputs) {
    int64_t rows = 0;
    st += emit(
        in, base, [&pids](int64_t, int64_t pid) { return pids.show(pid); }, o, rows);
    base += rows + 1;
  }
  o.raw(kTail);
  out.commit();
  return st;
}

TraceProcesses trace_processes(const std::string& trace) {
  TraceProcesses t;
  auto r = tracedb::Reader::open(trace);
  each_process_row(*r, [&t](const tracedb::Query& q) {
    t.rows = std::max(t.rows, q.i64(0));
    t.pids.emplace_back(q.i64(0), q.i64(1));
  });
  return t;
}

std::vector<TracePlace> place_traces(const std::vector<TraceProcesses>& traces) {
  std::vector<TracePlace> out;
  out.reserve(traces.size());
  int64_t base = 0;
  HostPids pids;
  for (const TraceProcesses& t : traces) {
    TracePlace& p = out.emplace_back();
    p.base = base;
    for (const auto& [row, pid] : t.pids) p.pid[row] = pids.show(pid);
    base += t.rows + 1;
  }
  return out;
}

ExportStats render_perfetto(const ExportInput& in, const TracePlace& place, FILE* out) {
  JsonOut o(out, /*first=*/false);
  int64_t rows = 0;
  auto show = [&](int64_t row, int64_t) {
    const auto it = place.pid.find(row);
    if (it == place.pid.end()) {
      throw tracedb::ReadError(tracedb::ReadError::Kind::corrupt,
                               in.trace + " changed while it was exported: export it again");
    }
    return it->second;
  };
  return emit(in, place.base, show, o, rows);
}

PerfettoFile::PerfettoFile(tracedb::OutputFile& out) : out_(out) {
  out_.write(kHead);
}

void PerfettoFile::append(std::string_view piece) {
  // The first event of the file has no comma before it.
  if (!any_ && !piece.empty()) {
    any_ = true;
    if (piece.front() == ',') piece.remove_prefix(1);
  }
  out_.write(piece);
}

void PerfettoFile::commit() {
  out_.write(kTail);
  out_.commit();
}

}  // namespace c3::exporter
