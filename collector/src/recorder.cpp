#include "recorder.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "buffer_pool.h"
#include "c3/tracedb/contents.h"
#include "clock.h"
#include "cupti_session.h"
#include "event_queue.h"
#include "log.h"
#include "process_info.h"
#include "trace_writer.h"

namespace c3::collector {

namespace {

// Beyond this many queued events (the writer is far behind or stuck) new ones are dropped and
// counted, so a runaway NVTX loop cannot eat the job's memory. CUPTI buffers are bounded by the
// pool instead.
constexpr size_t kMaxQueued = size_t{1} << 21;
// Wake the writer early when this many events wait.
constexpr size_t kWakeThreshold = 4 * EventQueue::kBlockEvents;

enum class Phase : int { idle, running, failed, finalized };

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

void drain(int fd) {
  char buf[64];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
}

void signal_entry(int sig, siginfo_t* info, void* uctx);

}  // namespace

struct Recorder::State {
  // Held by the writer whenever it is inside SQLite or CUPTI, and by fork() (prepare handler):
  // a child must never inherit SQLite's internal locks held by a thread that does not exist in
  // the child. Lock order: io_mu before mu.
  std::mutex io_mu;
  std::mutex mu;  // guards everything below that is not atomic
  std::condition_variable writer_done_cv;
  EventQueue queue;
  std::atomic<int> phase{static_cast<int>(Phase::idle)};
  std::thread writer;
  bool writer_done = false;
  // Set by the writer thread once it runs its own code (see on_fork_prepare).
  bool writer_started = false;
  std::condition_variable writer_started_cv;
  int wake_r = -1, wake_w = -1;  // producers and signal handlers wake the writer
  int done_r = -1, done_w = -1;  // the writer tells a waiting signal handler it has flushed
  std::atomic<bool> final_requested{false};
  std::atomic<bool> flush_requested{false};
  std::unique_ptr<BufferPool> pool;
  std::vector<std::function<void(int64_t)>> shutdown_hooks;
  std::vector<std::function<void()>> fork_hooks;
  std::mutex cupti_mu;
  bool cupti_attempted = false;
  CuptiStatus cupti_status;
  std::string trace_path;
  int64_t trace_rows = 0;
  tracedb::TraceCounts trace_counts;  // per kind, as written (the line at exit)
  int64_t trace_write_errors = 0;     // and the rows they cost (TraceWriter::dropped_rows)
  int64_t trace_dropped_rows = 0;
  ProcessFacts facts;
  int64_t start_ns = 0;
  ClockAnchor start_anchor;
  std::atomic<pid_t> owner_pid{0};
  struct sigaction old_actions[NSIG] = {};
  bool handler_installed[NSIG] = {};
  int exec_generation = 0;
  // Owned by the writer thread (see writer_main).
  std::unique_ptr<TraceWriter> trace_writer;
  EventQueue::Blocks batch;
  // A forked child's inheritance from the parent, kept reachable and never used.
  CuptiSession* abandoned_cupti = nullptr;
  TraceWriter* abandoned_writer = nullptr;

  Phase get_phase() const { return static_cast<Phase>(phase.load()); }
  void set_phase(Phase p) { phase.store(static_cast<int>(p)); }
};

Recorder& Recorder::instance() {
  // Leaked on purpose: atexit handlers and static destructors of the job may still produce
  // events after our own statics would have been destroyed.
  static Recorder* r = new Recorder();
  return *r;
}

Recorder::Recorder() : state_(new State()) {}

void Recorder::init() {
  static std::mutex init_mu;
  std::lock_guard<std::mutex> lock(init_mu);
  if (initialized_.load()) return;
  config_ = parse_config(process_env());
  set_log_level(config_.log);
  for (const auto& w : config_.warnings) warn("%s", w.c_str());
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&counter_name), &self) && self.dli_fname) {
    config_.self_path = self.dli_fname;
  }
  State* s = state_;
  s->facts = read_process_facts(process_env());
  s->owner_pid = getpid();
  s->start_anchor = take_anchor();
  s->start_ns = s->start_anchor.trace_ns;
  s->pool = std::make_unique<BufferPool>(static_cast<size_t>(config_.buffer_mb) << 20);

  for (int sig : {SIGTERM, SIGINT}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    // A job that ignores the signal keeps ignoring it.
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_sigaction = &signal_entry;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    if (sigaction(sig, &sa, &s->old_actions[sig]) == 0) s->handler_installed[sig] = true;
  }
  pthread_atfork([] { Recorder::instance().on_fork_prepare(); },
                 [] { Recorder::instance().on_fork_parent(); },
                 [] { Recorder::instance().on_fork_child(); });
  std::atexit([] { Recorder::instance().finalize("exit"); });
  initialized_.store(true);
  debug("collector initialized (output pattern '%s', flush %lld ms)",
        config_.output_pattern.c_str(), static_cast<long long>(config_.flush_ms));
}

namespace {

void block_all_signals_in_this_thread() {
  // Process-directed signals then go to the job's threads, and SIGXFSZ raised by our own
  // writes (RLIMIT_FSIZE) stays pending here instead of killing the job: write() fails with
  // EFBIG and the writer reports a full disk.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

}  // namespace

// The writer thread. Owns the TraceWriter; everything that touches the file happens here.
static void writer_main(Recorder* rec, Recorder::State* s);

void Recorder::submit(Event&& event) {
  if (!initialized_.load(std::memory_order_acquire)) init();
  State* s = state_;
  {
    std::unique_lock<std::mutex> lock(s->mu);
    Phase p = s->get_phase();
    if (p == Phase::idle && s->owner_pid == getpid()) {
      if (s->wake_r < 0) {
        int w[2], d[2];
        if (pipe2(w, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(d, O_CLOEXEC | O_NONBLOCK) != 0) {
          s->set_phase(Phase::failed);
          p = Phase::failed;
        } else {
          s->wake_r = w[0];
          s->wake_w = w[1];
          s->done_r = d[0];
          s->done_w = d[1];
        }
      }
      if (p == Phase::idle) {
        s->writer_done = false;
        s->writer_started = false;
        s->final_requested = false;
        s->flush_requested = false;
        s->set_phase(Phase::running);
        p = Phase::running;
        // Born with every signal blocked: a process-directed signal must never land on the
        // writer before it runs (the handler would wait for the writer, that is for itself).
        sigset_t all, old_mask;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old_mask);
        s->writer = std::thread(writer_main, this, s);
        pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
      }
    }
    const bool is_buffer = std::holds_alternative<CuptiBuffer>(event);
    if (p == Phase::running && (is_buffer || s->queue.size() < kMaxQueued)) {
      s->queue.push(std::move(event));
      if (s->queue.size() == kWakeThreshold || is_buffer) {
        char c = 'e';
        ssize_t ignored = ::write(s->wake_w, &c, 1);
        (void)ignored;
      }
      return;
    }
  }
  if (auto* b = std::get_if<CuptiBuffer>(&event)) s->pool->release(b->data);
  count(Counter::queue_dropped_rows);
}

static void writer_main(Recorder* rec, Recorder::State* s) {
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->writer_started = true;
  }
  s->writer_started_cv.notify_all();
  block_all_signals_in_this_thread();
  pthread_setname_np(pthread_self(), "c3scope-writer");
  const Config& cfg = rec->config();
  // Both live in State, not on this thread's stack: a forked child keeps them reachable (and
  // untouched) after this thread is gone from it.
  std::unique_ptr<TraceWriter>& tw = s->trace_writer;
  EventQueue::Blocks& batch = s->batch;
  auto release_all = [&](EventQueue::Blocks& blocks) {
    for (auto& block : blocks) {
      for (auto& e : block->events) {
        if (auto* b = std::get_if<CuptiBuffer>(&e)) s->pool->release(b->data);
      }
    }
    blocks.clear();
  };
  auto fail = [&](const std::string& why, bool final) {
    // The file may not be able to say it (a full disk): this line is the record of the loss.
    std::string loss;
    if (tw && tw->write_errors() > 0) {
      loss = "; " + std::to_string(tw->write_errors()) + " write error(s) cost " +
             std::to_string(tw->dropped_rows()) +
             " row(s), the trace holds what was committed before";
    }
    warn("%s%s; %s", why.c_str(), loss.c_str(),
         final ? "the trace could not be finished" : "the job continues, untraced from here on");
    {
      std::lock_guard<std::mutex> io(s->io_mu);
      tw.reset();
    }
    EventQueue::Blocks rest;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      s->set_phase(Phase::failed);
      s->queue.take_all(rest);
      s->writer_done = true;
    }
    release_all(rest);
    s->writer_done_cv.notify_all();
    char c = 'd';
    ssize_t ignored = ::write(s->done_w, &c, 1);
    (void)ignored;
  };

  try {
    std::lock_guard<std::mutex> io(s->io_mu);
    std::string path = output_path(cfg.output_pattern, s->facts, process_env());
    tw = std::make_unique<TraceWriter>(path, s->facts, s->start_ns, s->start_anchor,
                                       rec->counters());
    std::lock_guard<std::mutex> lock(s->mu);
    s->trace_path = tw->path();
  } catch (const std::exception& e) {
    fail(e.what(), false);
    return;
  }
  debug("writing trace %s", tw->path().c_str());

  int64_t next_flush = steady_ns() + cfg.flush_ms * 1000000;
  for (;;) {
    int64_t wait_ms = std::max<int64_t>(0, (next_flush - steady_ns()) / 1000000);
    pollfd pfd{s->wake_r, POLLIN, 0};
    ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(wait_ms, 60000)));
    drain(s->wake_r);
    const bool final = s->final_requested.load();
    const bool sig_flush = s->flush_requested.exchange(false);
    const bool due = steady_ns() >= next_flush;
    size_t queued;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      queued = s->queue.size();
    }
    const int64_t t0 = steady_ns();
    std::unique_lock<std::mutex> io(s->io_mu);
    try {
      if (final) {
        const int64_t end_ns = now_ns();
        std::vector<std::function<void(int64_t)>> hooks;
        {
          std::lock_guard<std::mutex> lock(s->mu);
          hooks = s->shutdown_hooks;
        }
        for (auto& hook : hooks) hook(end_ns);
      }
      CuptiSession* cupti = rec->cupti();
      if (cupti && (due || final || sig_flush)) {
        // Forced: partially filled buffers too, so a killed job loses at most one period.
        cupti->flush(true);
        rec->count(Counter::cupti_dropped_records, static_cast<int64_t>(cupti->take_dropped()));
      }
      if (due || final || sig_flush || queued > 0) {
        for (;;) {
          {
            std::lock_guard<std::mutex> lock(s->mu);
            if (final && s->queue.empty()) s->set_phase(Phase::finalized);
            s->queue.take_all(batch);
          }
          if (batch.empty()) break;
          for (auto& block : batch) {
            for (auto& e : block->events) tw->write(e, cupti, s->pool.get());
          }
          {
            std::lock_guard<std::mutex> lock(s->mu);
            s->queue.recycle(batch);
          }
          if (!final) break;
        }
      }
      CuptiStatus status;
      {
        std::lock_guard<std::mutex> lock(s->mu);
        status = s->cupti_status;
      }
      rec->count(Counter::writer_ns, steady_ns() - t0);
      if (final) {
        tw->finish(status, take_anchor());
      } else if (due || sig_flush) {
        rec->count(Counter::flushes);
        tw->commit(status);
        next_flush = steady_ns() + cfg.flush_ms * 1000000;
      }
    } catch (const std::exception& e) {
      io.unlock();
      release_all(batch);
      fail(e.what(), final);
      return;
    }
    io.unlock();
    if (final || sig_flush) {
      char c = 'd';
      ssize_t ignored = ::write(s->done_w, &c, 1);
      (void)ignored;
    }
    if (final) break;
  }
  {
    std::lock_guard<std::mutex> io(s->io_mu);
    std::lock_guard<std::mutex> lock(s->mu);
    s->trace_rows = tw->rows();
    s->trace_counts = tracedb::counts_of(tw->db_writer());
    s->trace_write_errors = tw->write_errors();
    s->trace_dropped_rows = tw->dropped_rows();
    const std::string wal = tw->path() + "-wal";
    tw.reset();
    // Complete, but in two files when the WAL could not be folded in (a full disk).
    if (::access(wal.c_str(), F_OK) == 0) {
      warn("%s is complete but could not be folded into one file; keep it next to the trace",
           wal.c_str());
    }
    s->writer_done = true;
  }
  s->writer_done_cv.notify_all();
}

void Recorder::start_cupti() {
  init();
  State* s = state_;
  {
    std::lock_guard<std::mutex> lock(s->cupti_mu);
    if (s->cupti_attempted) return;
    s->cupti_attempted = true;
  }
  std::string error, detail;
  // Completed CUPTI buffers come back to the Recorder's queue (decoded on the writer thread).
  auto to_queue = [](uint8_t* data, size_t valid) {
    Recorder::instance().submit(CuptiBuffer{data, valid});
  };
  CuptiSession* session =
      CuptiSession::start(config_, s->pool.get(), counters_, to_queue, &error, &detail);
  {
    std::lock_guard<std::mutex> lock(s->mu);
    s->cupti_status = session ? CuptiStatus{true, detail} : CuptiStatus{false, error};
  }
  if (session) {
    cupti_.store(session, std::memory_order_release);
    // The trace may exist already (NVTX before cuInit): record the clock it now uses.
    submit(TraceClock{trace_clock_name()});
    debug("recording GPU activity: %s", detail.c_str());
  } else {
    warn("no GPU activity will be recorded: %s", error.c_str());
  }
  // CUDA is in use: this process gets a trace even if it records nothing else.
  submit(std::monostate{});
}

void Recorder::add_shutdown_hook(std::function<void(int64_t)> hook) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->shutdown_hooks.push_back(std::move(hook));
}

void Recorder::add_fork_child_hook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->fork_hooks.push_back(std::move(hook));
}

void Recorder::finalize(const char* why) {
  State* s = state_;
  if (!initialized_.load() || s->owner_pid != getpid()) return;
  {
    std::unique_lock<std::mutex> lock(s->mu);
    Phase p = s->get_phase();
    if (p == Phase::idle) {
      // Nothing was recorded; later events (static destructors) must not start a trace now.
      s->set_phase(Phase::finalized);
      return;
    }
    if (p != Phase::running && !s->writer.joinable()) return;
    s->final_requested = true;
    char c = 'f';
    ssize_t ignored = ::write(s->wake_w, &c, 1);
    (void)ignored;
    // Bounded: a wedged CUPTI or disk must not hang the job's exit.
    s->writer_done_cv.wait_for(lock, std::chrono::seconds(10), [&] { return s->writer_done; });
    if (!s->writer_done) {
      warn(
          "the trace writer did not finish within 10 s (%s); the trace may lack its last "
          "second",
          why);
    }
  }
  if (s->writer.joinable()) {
    if (s->writer_done)
      s->writer.join();
    else
      s->writer.detach();
  }
  std::lock_guard<std::mutex> lock(s->mu);
  if (!s->trace_path.empty() && s->get_phase() == Phase::finalized) {
    // What it holds, as the writer counted it (issue 13: "(983 rows)" counted every table,
    // strings and stats included; reading the file back would cost a scan at every exit).
    const std::string holds = tracedb::describe(s->trace_counts);
    if (s->trace_write_errors > 0) {
      warn(
          "trace written to %s (%s); %lld write error(s) cost %lld row(s) (stats "
          "write_errors, write_dropped_rows)",
          s->trace_path.c_str(), holds.c_str(), static_cast<long long>(s->trace_write_errors),
          static_cast<long long>(s->trace_dropped_rows));
    } else {
      info("trace written to %s (%s)", s->trace_path.c_str(), holds.c_str());
    }
  }
}

void Recorder::restart_after_failed_exec() {
  State* s = state_;
  std::lock_guard<std::mutex> lock(s->mu);
  if (s->writer.joinable()) return;  // still running (finalize timed out): leave it
  s->set_phase(Phase::idle);
  s->trace_path.clear();
  s->trace_rows = 0;
  s->trace_counts = {};
  s->trace_write_errors = 0;
  s->trace_dropped_rows = 0;
  ++s->exec_generation;
}

int Recorder::append_to_trace(int (*fn)(void* db, const char* path, void* ctx), void* ctx) {
  if (!initialized_.load(std::memory_order_acquire)) init();
  State* s = state_;
  if (s->get_phase() == Phase::idle) submit(std::monostate{});  // starts the trace
  // The writer creates the file first thing; wait for it (or its failure).
  const int64_t deadline = steady_ns() + 10 * int64_t{1000000000};
  for (;;) {
    const Phase p = s->get_phase();
    if (p != Phase::running) return kAppendNoTrace;
    {
      std::lock_guard<std::mutex> io(s->io_mu);
      if (s->trace_writer) {
        tracedb::Writer& w = s->trace_writer->db_writer();
        auto* db = w.handle();
        // A write error here (a failing or full disk) is handled as the writer's own: the open
        // transaction is rolled back and counted, so the trace holds what the stats say.
        try {
          w.exec("SAVEPOINT c3scope_append;");
        } catch (const tracedb::WriteError& e) {
          warn("cannot append to the trace: %s", e.what());
          s->trace_writer->append_failed(e);
          return kAppendFailed;
        }
        const int rc = fn(db, w.path().c_str(), ctx);
        try {
          if (rc != 0) w.exec("ROLLBACK TO c3scope_append;");
          w.exec("RELEASE c3scope_append;");
        } catch (const tracedb::WriteError& e) {
          warn("cannot append to the trace: %s", e.what());
          s->trace_writer->append_failed(e);
          return kAppendFailed;
        }
        return rc == 0 ? 0 : kAppendFailed;
      }
    }
    if (steady_ns() > deadline) return kAppendNoTrace;
    ::usleep(1000);
  }
}

std::string Recorder::trace_path() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->trace_path;
}

void Recorder::on_fork_prepare() {
  // Hold the writer's I/O lock and the queue lock across fork so the child inherits neither
  // SQLite nor the queue mid-update.
  State* s = state_;
  s->io_mu.lock();
  std::unique_lock<std::mutex> lock(s->mu);
  // A writer thread created just before fork() may still be starting: the thread library (and
  // a sanitizer runtime) allocate for it outside any lock of ours, and a child forked then can
  // inherit an allocator lock held by a thread it does not have. Wait until the writer runs its
  // own code (bounded: fork must not hang on a writer that cannot be scheduled).
  s->writer_started_cv.wait_for(lock, std::chrono::seconds(2),
                                [s] { return !s->writer.joinable() || s->writer_started; });
  (void)lock.release();  // held until on_fork_parent / on_fork_child
}

void Recorder::on_fork_parent() {
  state_->mu.unlock();
  state_->io_mu.unlock();
}

void Recorder::on_fork_child() {
  State* s = state_;
  // Only this thread survives. The writer thread, its SQLite connection and the CUPTI buffers
  // belong to the parent: forget them without closing anything (closing the connection here
  // could checkpoint or delete the parent's WAL).
  new (&s->writer) std::thread();
  s->abandoned_writer = s->trace_writer.release();
  s->batch.clear();
  s->queue.reset();
  close_fd(s->wake_r);
  close_fd(s->wake_w);
  close_fd(s->done_r);
  close_fd(s->done_w);
  s->set_phase(Phase::idle);
  s->writer_done = false;
  s->writer_started = false;
  s->final_requested = false;
  s->flush_requested = false;
  s->trace_path.clear();
  s->trace_rows = 0;
  s->trace_counts = {};
  s->trace_write_errors = 0;
  s->trace_dropped_rows = 0;
  reset_tid_after_fork();
  s->owner_pid = getpid();
  s->facts = read_process_facts(process_env());
  s->start_anchor = take_anchor();
  s->start_ns = s->start_anchor.trace_ns;
  counters_.reset();
  if (CuptiSession* c = cupti_.exchange(nullptr)) {
    c->abandon();
    s->abandoned_cupti = c;  // the parent's; kept reachable, never used again
  }
  s->cupti_status = CuptiStatus{false, "forked child: CUDA state stays with the parent process"};
  // CUDA cannot be initialized again in a child of a CUDA process; do not try.
  {
    std::lock_guard<std::mutex> lock(s->cupti_mu);
    s->cupti_attempted = true;
  }
  for (auto& hook : s->fork_hooks) hook();
  s->mu.unlock();
  s->io_mu.unlock();
}

void Recorder::on_signal(int sig, void* siginfo, void* ucontext) {
  const int saved_errno = errno;
  State* s = state_;
  const struct sigaction& old = s->old_actions[sig];
  const bool chain_to_handler = (old.sa_flags & SA_SIGINFO)
                                    ? old.sa_sigaction != nullptr
                                    : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
  // Only async-signal-safe calls from here on: atomics, read, write, poll, sigaction, raise.
  if (s->owner_pid.load() == getpid() && s->get_phase() == Phase::running) {
    drain(s->done_r);
    if (chain_to_handler)
      s->flush_requested = true;  // the job may go on: commit only
    else
      s->final_requested = true;  // the job is about to die: finish
    char c = 's';
    ssize_t ignored = ::write(s->wake_w, &c, 1);
    (void)ignored;
    pollfd pfd{s->done_r, POLLIN, 0};
    ::poll(&pfd, 1, 5000);
  }
  errno = saved_errno;
  if (chain_to_handler) {
    if (old.sa_flags & SA_SIGINFO)
      old.sa_sigaction(sig, static_cast<siginfo_t*>(siginfo), ucontext);
    else
      old.sa_handler(sig);
  } else {
    // Re-raise with the default action so the job dies of the signal, exit status intact.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
    raise(sig);
  }
}

namespace {

void signal_entry(int sig, siginfo_t* info, void* uctx) {
  // A fatal signal re-raised inside on_signal is delivered once this handler returns.
  Recorder::instance().on_signal(sig, info, uctx);
}

}  // namespace

}  // namespace c3::collector
