// The collector's in-process hub. Producers (CUPTI buffer callbacks, NVTX callbacks, NCCL
// wrappers) hand it events from any thread; one background writer thread owns the trace file
// and is the only code that does I/O (one writer owns all inserts: docs/architecture.md).
//
// Lifecycle: the trace file is created lazily, on the first event, so processes that never touch
// CUDA, NVTX or NCCL (a launcher shell, `ls`) leave no file. It is committed every
// C3SCOPE_FLUSH_MS and finalized on exit(), on a fatal SIGTERM/SIGINT, and before exec. A forked
// child starts over with a trace of its own.
//
// Layers (docs/collector.md): the entry points and producers sit above this header; the event
// queue, the CUPTI session and the trace writer sit below it and get what they need from the
// Recorder (counters, a sink for CUPTI buffers) as arguments, never through instance().
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "config.h"
#include "counters.h"
#include "event.h"

namespace c3::collector {

class CuptiSession;

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
  void count(Counter c, int64_t delta = 1) { counters_.add(c, delta); }
  // The process's counters, lent to the CUPTI session and the trace writer (which lie below the
  // Recorder and never include this header).
  Counters& counters() { return counters_; }

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
  Counters counters_;  // lent to the CUPTI session and the trace writer
  State* state_;       // leaked on purpose, like the Recorder itself
};

}  // namespace c3::collector
