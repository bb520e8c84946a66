// The Kineto importer's second stage: what the events and the top-level members of one file
// (kineto_tokenize.h) become, kept compact in a Parsed until kineto_write.h writes its rows.
// Every event the tables cannot hold is counted in Stats with where it was and why.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "c3/importer/importer.h"
#include "c3/tracedb/schema.h"
#include "c3/tracedb/string_ids.h"
#include "import_writer.h"
#include "kineto_tokenize.h"

namespace c3::importer::kineto {

// Names interned while parsing (a trace repeats a few thousand names millions of times).
class LocalNames {
 public:
  LocalNames() = default;
  LocalNames(const LocalNames&) = delete;
  LocalNames& operator=(const LocalNames&) = delete;
  int32_t id(std::string_view s) { return ids_.id(s); }
  const std::string& name(int32_t id) const { return names_[static_cast<size_t>(id)]; }
  // The trace database's string id, interned once per name.
  int64_t db_id(int32_t id, ImportWriter& out) {
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
  int32_t shape = 0;  // kernels: Parsed::shapes index (in what would be padding: 72 bytes)
};
using KernelEvent = GpuEvent;
// A kernel's launch shape, kept once per distinct shape (a trace launches a few hundred shapes
// hundreds of thousands of times: 64 bytes a kernel otherwise).
struct LaunchShape {
  int64_t grid_x = 1, grid_y = 1, grid_z = 1, block_x = 1, block_y = 1, block_z = 1;
  int64_t registers_per_thread = 0, dynamic_shared_bytes = 0;
  bool operator==(const LaunchShape&) const = default;
};
struct ApiEvent {
  int64_t thread_id = 0, cbid = 0, correlation_id = 0, start_ns = 0, end_ns = 0;
  bool runtime = true;
};
// A cuda_sync event: a GPU-side synchronization. "Stream Wait Event" (cudaStreamWaitEvent) names
// the cudaEventRecord call it waits on and that call's stream (PyTorch 2.2 on).
struct SyncEvent {
  int64_t device_id = 0, start_ns = 0, end_ns = 0;
  std::optional<int64_t> stream_id, correlation_id, record_stream, record_correlation;
  std::string type;  // the sync table's: stream_wait_event, event_synchronize, ...
};
// An NCCL kernel's call: one collective row.
struct CollectiveEvent {
  size_t kernel = 0;                        // Parsed::kernels index
  int32_t op = -1, dtype = -1, group = -1;  // LocalNames ids (dtype, group: "" when not given)
  int64_t in_nelems = -1, group_size = 0;
  std::optional<int64_t> launch;  // the kernel's correlation id in the file (its launch)
};

// One file's process: its events and what the top-level members say about it.
struct Parsed {
  LocalNames names;
  std::vector<KernelEvent> kernels;
  std::vector<int32_t> kernel_names;
  std::vector<LaunchShape> shapes;  // KernelEvent::shape
  std::vector<GpuEvent> memcpys;
  std::vector<GpuEvent> memsets;
  std::vector<ApiEvent> api;
  std::vector<int32_t> api_names;  // -1 when API calls are not kept (Options::api_calls)
  std::vector<SyncEvent> syncs;    // kept with the API calls (Options::api_calls)
  std::vector<tracedb::NvtxRangeRow> ranges;
  std::vector<CollectiveEvent> colls;
  std::vector<tracedb::DeviceRow> devices;  // deviceProperties
  int64_t pid = -1;
  std::optional<int64_t> rank, world_size;
  int64_t base_ns = 0;  // baseTimeNanoseconds
  std::string nccl_version;
  std::string host;         // top-level "host_name" (or "hostname"), when the profiler wrote it
  bool fractional = false;  // some timestamp had a fractional microsecond
};

// What an 'X' event is: kineto_parse.cpp's classify() says by its category.
enum class Kind : uint8_t { kernel, memcpy, memset, api_call, sync, range, cpu, other };

class Parser {
 public:
  Parser(const std::string& path, const Options& options, Stats& st, Parsed& p)
      : path_(path), options_(options), st_(st), p_(p) {}
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  // Room for the events of about `json_bytes` of JSON (JsonStream::size_hint), so the largest
  // vectors do not move as they grow; memory not written to is only reserved, not used.
  void reserve(int64_t json_bytes);
  // A top-level member other than traceEvents (distributedInfo, deviceProperties, ...).
  void member(std::string_view key, std::string_view value);
  // One element of traceEvents, at byte `at` of the JSON, with JsonStream::kPadding readable
  // bytes after it: tokenize() then apply().
  void event(std::string_view text, int64_t at);
  // The first stage alone (no state of the Parser: any thread, with a parser of its own): the
  // element's fields into *e; returns why it cannot be read, or nullptr.
  static const char* tokenize(simdjson::ondemand::parser& parser, std::string_view text, Event* e);
  // The rest, in the file's order: the event tokenize() read (`why`: its result).
  void apply(Event& e, const char* why, int64_t at);
  // Counts the current event as unusable, under `reason` (Stats::malformed_by).
  void bad(int64_t at, const char* reason, const std::string& why);
  // Counts the event the input ends in (cut by the end of the file or damage) as unusable.
  void cut(int64_t at, const std::string& why);
  int64_t index() const { return index_; }  // of the current event; -1 before the first

  // Once every event is read: HTA's rounding (when asked for and needed), and each NCCL kernel
  // linked to its collective, the collectives in the order of their kernels.
  void finish();

 private:
  void distributed_info(const simdjson::dom::element& doc);
  void device_properties(const simdjson::dom::element& doc);
  std::string where(int64_t at, const std::string& why) const;
  // `text` (a member named `what`), cut at common::kNameLimit; a cut is counted as long_text.
  std::string capped(std::string_view text, std::string_view what);
  // The event's start and end in nanoseconds; false (the event counted) when they are not usable
  // times. `table`: the table the event would be a row of (nullptr: none).
  bool times(const Event& e, const char* table, int64_t at, int64_t* start, int64_t* end);
  void gpu_work(const Event& e, Kind kind, int64_t pid, int64_t start, int64_t end);
  void kernel(const Event& e, const GpuEvent& g);
  void api_call(const Event& e, int64_t tid, int64_t start, int64_t end);
  void sync(const Event& e, int64_t pid, int64_t start, int64_t end);
  void range(const Event& e, int64_t tid, int64_t start, int64_t end);
  void link_collectives();
  void link_collective_ids();  // each NCCL kernel an id of its own (link_collectives)
  // Counts a CPU-side collective (Stats::cpu_collectives) when the range or CPU op is one.
  void cpu_collective(const Event& e);

  const std::string& path_;
  const Options& options_;
  Stats& st_;
  Parsed& p_;
  simdjson::dom::parser members_;
  simdjson::ondemand::parser events_;
  int64_t index_ = -1;
  // record_param_comms ops per collective name; whether any nccl:<op> annotation was seen.
  std::map<std::string, int64_t> param_comms_;
  bool nccl_annotations_ = false;
  // Parsed::shapes' index of each shape (the last one found tried first: kernels come in runs).
  struct ShapeHash {
    size_t operator()(const LaunchShape& s) const;
  };
  std::unordered_map<LaunchShape, int32_t, ShapeHash> shape_ids_;
  int32_t last_shape_ = -1;
  int32_t shape_id(const LaunchShape& s);
};

}  // namespace c3::importer::kineto
