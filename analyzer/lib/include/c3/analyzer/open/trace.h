// The analyzer's in-memory view of one or many traces: compact columnar tables (struct of
// arrays), sorted once, so that every metric is a sweep over sorted intervals
// (docs/architecture.md "Pure functions where possible"). Loaded from trace
// databases (load.h); importers produce trace databases too, so imported traces look the same.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "c3/analyzer/open/bench_results.h"

namespace c3::analyzer {

enum class Kind : uint8_t { kernel, memcpy, memset };
// Activities::call_start/call_end of a row whose launch call is not known.
inline constexpr int64_t kNoCall = INT64_MIN;
// docs/metrics.md "Classes of GPU activity".
enum class Class : uint8_t { compute, communication, memory, other };
inline constexpr int kClasses = 4;
const char* class_name(Class c);
const char* kind_name(Kind k);

// A kernel's launch shape; kernels share them (Trace::shapes), so a row holds 4 bytes of it.
struct KernelShape {
  uint32_t grid = 0;       // blocks (x*y*z)
  uint32_t block = 0;      // threads per block (x*y*z)
  uint16_t registers = 0;  // per thread
  uint32_t shared = 0;     // shared memory per block (static + dynamic)
  bool operator==(const KernelShape&) const = default;
};

// GPU activities, one row per kernel, memcpy or memset, sorted by (process, device, start, end).
// 46 bytes per row (bytes_per_row), so that the metrics over 10 million rows stay within 64
// bytes per activity with their interval lists.
struct Activities {
  std::vector<int64_t> start, end;  // ns, trace clock of the process (aligned: load.h)
  std::vector<int32_t> name;        // Trace::names index
  std::vector<int32_t> stream;      // stream id (-1: none)
  std::vector<int16_t> device;      // device ordinal
  std::vector<int16_t> process;     // Trace::processes index
  std::vector<Kind> kind;
  std::vector<Class> cls;
  std::vector<int64_t> bytes;  // memcpy/memset bytes, 0 for kernels
  // Kernels: Trace::shapes index (-1: unknown; -2 - k: the file's k-th kernel row, whose shape a
  // deferred load has not read yet, see Trace::pending_shapes); memcpy: the CUPTI hardware
  // channel (-1 unknown); memset: -1.
  std::vector<int32_t> shape;
  std::vector<int32_t>
      collective;  // Trace::collectives index of the NCCL call that launched it, or -1
  // The host call that launched the row (the runtime or driver API call with the row's
  // correlation id: cudaLaunchKernel, cudaMemcpyAsync, ...): its entry and exit, ns (kNoCall:
  // none known), its name (a Trace::names index, -1) and its thread (the OS thread id folded to
  // 32 bits: fold_thread; the critical path orders each thread's calls on their own). The
  // columns are empty while no row has one (traces recorded without API calls), so they cost 24
  // bytes per row only where a trace carries launch calls (docs/analyze.md "Memory").
  std::vector<int64_t> call_start, call_end;
  std::vector<int32_t> call_name;
  std::vector<int32_t> call_thread;

  size_t size() const { return start.size(); }
  bool has_calls() const { return !call_end.empty(); }
  // Sets row i's launch call, making the columns (-1 for every other row) on first use.
  void set_call(size_t i, int64_t entry, int64_t exit, int32_t name, int32_t thread = 0);
  int32_t channel(size_t i) const { return kind[i] == Kind::memcpy ? shape[i] : -1; }
  void reserve(size_t n);
  // Appends a row (all columns); returns its index.
  size_t push(int64_t s, int64_t e, int32_t name_id, int32_t stream_id, int16_t device_id,
              int16_t process_idx, Kind k, int64_t nbytes);
  // Sorts every column by (process, device, start, end, kind, name). Returns where each row came
  // from (row i was row order[i]), or nothing when the rows were in order already.
  std::vector<uint32_t> sort();
  // Whether the rows are in sort()'s order (every analysis relies on it), and that order.
  bool sorted() const;
  bool before(size_t a, size_t b) const;
  // Bytes of memory the columns hold per row (for the benchmark's budget).
  static constexpr size_t bytes_per_row() {
    return 2 * sizeof(int64_t) + 4 * sizeof(int32_t) + 2 * sizeof(int16_t) + 2 + sizeof(int64_t);
  }
};

struct Process {
  std::string source;  // trace file it came from
  int64_t db_id = 0;   // process.id in that file
  int64_t pid = 0;
  std::string host;
  std::optional<int64_t> rank, world_size;
  std::string command_line;
  std::string trace_clock;
  // Clock anchors: trace ns <-> CLOCK_REALTIME ns at start (and end when the trace closed).
  int64_t anchor_trace_ns = 0, anchor_realtime_ns = 0;
  int64_t offset_ns = 0;  // added to every timestamp of this process when aligning ranks
  // Software versions the trace states, ("nccl", "2.17.1"), ("cuda_driver", ...), sorted by
  // name (meta keys of the file, and kineto_<process id>_<name>_version of imported ones).
  std::vector<std::pair<std::string, std::string>> versions;
  std::string label() const;  // "rank 3" or "pid 1234@host"
};

struct Device {
  int16_t process = 0;
  int16_t device = 0;
  std::string name;
  int sm_count = 0;
  int max_threads_per_sm = 0, max_blocks_per_sm = 0, max_registers_per_sm = 0;
  int64_t max_shared_per_sm = 0;
  int64_t memory_bandwidth = 0;  // bytes/s, 0 when unknown
};

// An NCCL call (or an imported collective): what it was, and its GPU time span.
struct Collective {
  int16_t process = 0;
  int16_t device = 0;
  std::string comm_id;  // empty when unknown (imported traces match by order instead)
  int64_t seq = -1;     // per-communicator sequence number, -1 when unknown
  std::string op;       // AllReduce, AllGather, ... (NCCL's names)
  int64_t bytes = 0;    // count x datatype size, as passed to NCCL
  int nranks = 0;
  int rank = -1;
  int64_t host_start = 0;
  int64_t gpu_start = -1, gpu_end = -1;  // union of its GPU work; -1 when none was linked
};

// An NVTX (or PyTorch annotation) range.
struct Range {
  int16_t process = 0;
  int64_t thread = 0;
  std::string domain;
  std::string name;
  int64_t start = 0, end = 0;
  int depth = 0;  // push/pop nesting depth on its thread and domain (0 for start/end ranges)
  // nvtxRangeStart/End: may overlap others of its thread and end on another thread (push/pop
  // ranges nest).
  bool start_end = false;
  int64_t color = -1;  // ARGB the application set (0..2^32-1), -1 when it set none
};

// A host call that waits for GPU work (cudaDeviceSynchronize, cudaStreamSynchronize,
// cudaEventSynchronize and their driver twins): the critical path's host side (why/path.h).
struct HostSync {
  int16_t process = 0;
  int64_t start = 0, end = 0;
  int32_t thread = 0;  // fold_thread of the calling thread
};
// An OS thread id as the call columns keep it: 64-bit ids (Nsight's global thread ids) folded
// to 32 bits; two threads of one process that fold alike are taken for one.
inline int32_t fold_thread(int64_t tid) {
  const auto u = static_cast<uint64_t>(tid);
  return static_cast<int32_t>(static_cast<uint32_t>(u ^ (u >> 32)));
}
// Whether an API call's name is one of those (CUPTI's _vNNNN and _ptsz spellings too).
bool is_sync_call(std::string_view name);
// An API function's name without CUPTI's version and per-thread-stream suffixes
// ("cudaLaunchKernel_ptsz_v7000" -> "cudaLaunchKernel"); PyTorch traces name them without.
std::string_view api_base_name(std::string_view name);

// A stream's wait for another stream's work (cudaStreamWaitEvent on an event recorded after
// that work; CUPTI's synchronization and CUDA event records, or a PyTorch trace's "Stream Wait
// Event"): the waiting stream's next operation starts no earlier than the end of the operation
// launched last on the recording stream before the record (why/path.h). The two operations are
// named by (device, stream, start), which stay true as rows are sorted and merged.
struct StreamWait {
  int16_t process = 0;
  int16_t from_device = 0, to_device = 0;
  int32_t from_stream = -1, to_stream = -1;
  int64_t from_start = 0, to_start = 0;
};

// A kernel's launch queueing (CUPTI's submitted timestamp, when recorded): start - submitted.
struct LaunchDelay {
  int16_t process = 0, device = 0;
  int64_t delay_ns = 0;
};

// A file whose kernel launch shapes and launch delays a deferred load (LoadOptions::
// defer_kernel_shapes) has still to read: load_kernel_shapes (load.h) completes it.
struct PendingShapes {
  std::string path;
  int64_t size = 0;              // the file's size and modification time when it was loaded: a file
  int64_t mtime_ns = 0;          // changed since then is refused, not misread
  int64_t kernels = 0;           // kernel rows kept, numbered 0, 1, ... in table (id) order
  std::vector<int64_t> skipped;  // kernel ids the load skipped, ascending
  std::vector<std::pair<int64_t, int16_t>> processes;  // process.id in the file -> Trace index
};

struct Trace {
  std::vector<Process> processes;
  std::vector<Device> devices;
  std::vector<std::string> names;
  std::vector<KernelShape> shapes;
  Activities activities;
  std::vector<Collective> collectives;
  std::vector<Range> ranges;
  std::vector<LaunchDelay> launch_delays;
  std::vector<HostSync> host_syncs;      // in load order
  std::vector<StreamWait> stream_waits;  // in load order
  std::vector<BenchResult> bench;
  // Rows the loader could not use (e.g. end before start), with the first one's description.
  int64_t skipped = 0;
  std::string first_skipped;
  // Collectives of process groups that run on host threads (gloo, mpi, ucc) that the imported
  // PyTorch traces name, per (backend, op): seen, not analysed (open.h fills it in; the metrics
  // cover GPU collectives, NCCL kernels, only).
  std::map<std::pair<std::string, std::string>, int64_t> cpu_collectives;
  // Non-empty after a deferred load until load_kernel_shapes: shapes and launch_delays are then
  // incomplete, and the metrics (analyze) refuse the trace.
  std::vector<PendingShapes> pending_shapes;

  const Device* device(int16_t process, int16_t device) const;
  // The shape of row i (an empty shape for copies and sets).
  const KernelShape& shape_of(size_t i) const;
  // Index of `s` in shapes, adding it the first time (linear in distinct shapes seen recently:
  // use ShapeTable for bulk loading).
  int32_t add_shape(const KernelShape& s);
};

}  // namespace c3::analyzer
