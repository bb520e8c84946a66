// The collector's in-process hub. Producers (CUPTI buffer callbacks, NVTX callbacks, NCCL
// wrappers) hand it events from any thread; one background writer thread owns the trace file
// and is the only code that does I/O (STYLE: one writer owns all inserts).
//
// Lifecycle: the trace file is created lazily, on the first event, so processes that never touch
// CUDA, NVTX or NCCL (a launcher shell, `ls`) leave no file. It is committed every
// C3SCOPE_FLUSH_MS and finalized on exit(), on a fatal SIGTERM/SIGINT, and before exec. A forked
// child starts over with a trace of its own.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>

#include "c3/tracedb/schema.h"
#include "config.h"

namespace c3::collector {

class CuptiSession;

// Counters written to the stats table; names in counter_name() match tracedb::known_counters().
enum class Counter {
  cupti_records,
  cupti_dropped_records,
  cupti_buffers,
  buffer_pool_exhausted,
  cupti_unknown_records,
  cupti_invalid_records,
  nvtx_events,
  nvtx_unclosed_ranges,
  nvtx_unmatched_ends,
  nccl_calls,
  queue_dropped_rows,
  collector_overhead_ns,
  writer_ns,
  flushes,
  count_,
};
const char* counter_name(Counter c);

// An NCCL communicator was finalized, destroyed or aborted.
struct CommEnd {
  int64_t comm_handle = 0;
  std::string call;
  int64_t ns = 0;
};
// nvtxNameCudaStream / nvtxNameCuStream, with the stream already resolved to CUPTI's id.
struct StreamName {
  int64_t stream_id = 0;
  std::optional<int64_t> context_id;
  std::string name;
};
// A CUPTI activity buffer handed back by CUPTI; the writer decodes it and returns it to the pool.
struct CuptiBuffer {
  uint8_t* data = nullptr;
  size_t valid = 0;
};

// The clock the trace's timestamps use from now on (process.trace_clock).
struct TraceClock {
  std::string name;
};

// std::monostate: nothing to write, but starts the trace (CUDA was initialized).
using Event =
    std::variant<std::monostate, TraceClock, tracedb::NvtxRangeRow, tracedb::CollectiveRow,
                 tracedb::CommunicatorRow, CommEnd, StreamName, CuptiBuffer>;

class Recorder {
 public:
  // Never destroyed: it must outlive every static destructor and atexit handler of the job.
  static Recorder& instance();

  // Reads C3SCOPE_* and installs exit/signal/fork handling. Idempotent; every entry point
  // (LD_PRELOAD constructor, InitializeInjection, InitializeInjectionNvtx2) calls it first.
  void init();
  const Config& config() const { return config_; }

  // Any thread; never blocks on I/O, never throws. Starts the writer on first use. Events that
  // arrive after the final flush, or while the trace could not be written, are counted as
  // queue_dropped_rows.
  void submit(Event&& event);
  void count(Counter c, int64_t delta = 1) {
    counters_[static_cast<size_t>(c)].fetch_add(delta, std::memory_order_relaxed);
  }
  int64_t counter(Counter c) const {
    return counters_[static_cast<size_t>(c)].load(std::memory_order_relaxed);
  }

  // Called from InitializeInjection (inside cuInit): loads CUPTI and starts recording GPU
  // activity. On failure prints one warning and the collector goes on with NVTX and NCCL.
  void start_cupti();
  // The CUPTI session, or nullptr when CUPTI is not (or no longer) in use.
  CuptiSession* cupti() const { return cupti_.load(std::memory_order_acquire); }

  // Runs on the writer thread just before the final commit with the process end time (the NVTX
  // module closes ranges still open). Register during init only.
  void add_shutdown_hook(std::function<void(int64_t end_ns)> hook);
  // Runs in a forked child, single-threaded, before anything else (reset per-thread state).
  void add_fork_child_hook(std::function<void()> hook);

  // Final flush: exit, fatal signal, exec. Idempotent; waits at most a few seconds.
  void finalize(const char* why);
  // A failed exec: forget the finalized trace and start a fresh one on the next event.
  void restart_after_failed_exec();

  // Writes the trace path when one was created ("" otherwise).
  std::string trace_path() const;

  // c3scope_trace_append: runs fn(db, path, ctx) on the calling thread with the trace's SQLite
  // connection, inside a savepoint of the writer's open transaction, while the writer waits.
  // Starts the trace if nothing has yet. fn returning non-zero rolls its rows back.
  // Returns 0, or kAppendNoTrace / kAppendFailed.
  static constexpr int kAppendNoTrace = -2;
  static constexpr int kAppendFailed = -3;
  int append_to_trace(int (*fn)(void* db, const char* path, void* ctx), void* ctx);

  // Internal entry points for the C callbacks of entry.cpp.
  void on_fork_prepare();
  void on_fork_parent();
  void on_fork_child();
  void on_signal(int sig, void* siginfo, void* ucontext);

 private:
  Recorder();

 public:
  struct State;  // defined in recorder.cpp

 private:
  Config config_;
  std::atomic<bool> initialized_{false};
  std::atomic<CuptiSession*> cupti_{nullptr};
  std::atomic<int64_t> counters_[static_cast<size_t>(Counter::count_)] = {};
  State* state_;  // leaked on purpose, like the Recorder itself
};

}  // namespace c3::collector
