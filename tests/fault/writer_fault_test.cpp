// The trace writer under failing I/O (issue 12, "Fault injection for the writer"). The faulty VFS
// (fault_vfs.cpp) fails the Nth write, fsync or truncate of the collector's SQLite connection,
// or fills the disk from the Nth write on, for N swept over the calls a clean recording makes.
// Whatever fails: the job's exit code and stdout are those of a run without the collector, the
// trace opens and passes integrity_check, and no row goes missing without a word: stats counts
// it (write_errors, write_dropped_rows) or, when the file cannot be written any more, the
// collector's stderr line does.
//
// Regression (silent loss): the first failed commit used to make the collector stop writing,
// with the trace's stats still saying nothing was lost; a failed insert mid-transaction left
// SQLite in autocommit mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "fault_support.h"

using namespace c3::fault;
using c3::e2e::RunResult;
using c3::e2e::TempDir;
using c3::tracedb::Reader;

namespace {

constexpr int kSteps = 40;
constexpr int kExitCode = 7;
// Several commits in the job's ~0.15 s, so faults land between, inside and after them.
const char* const kFlushMs = "20";

std::vector<std::string> steps_job() {
  return {fault_job_path(), "steps", std::to_string(kSteps), "3000", std::to_string(kExitCode)};
}

// A clean run: the job's own output and exit code (no collector), and the calls a recording
// makes through the VFS (collector and VFS, no fault).
struct Reference {
  std::string out;
  std::map<std::string, int64_t> calls;
};

c3::e2e::RunOptions options(std::map<std::string, std::string> env) {
  c3::e2e::RunOptions o = c3::e2e::with_env(std::move(env));
  o.inject = c3::e2e::Inject::none;  // recording_env preloads the collector itself
  return o;
}

Reference make_reference(const std::vector<std::string>& job,
                         const std::map<std::string, std::string>& extra) {
  Reference ref;
  TempDir dir;
  RunResult plain = c3::e2e::run(job, dir.path(), c3::e2e::injected(c3::e2e::Inject::none));
  EXPECT_EQ(plain.exit_code, kExitCode) << plain.err;
  ref.out = plain.out;
  auto env = recording_env(dir.path(), true);
  env.insert(extra.begin(), extra.end());
  env["C3_FAULT_LOG"] = dir.path() + "/fault.log";
  RunResult r = c3::e2e::run(job, dir.path(), options(env));
  EXPECT_EQ(r.exit_code, kExitCode) << r.err;
  EXPECT_EQ(r.out, ref.out);
  ref.calls = read_fault_log(dir.path() + "/fault.log");
  return ref;
}

const Reference& steps_reference() {
  static const Reference ref = make_reference(steps_job(), {{"C3SCOPE_FLUSH_MS", kFlushMs}});
  return ref;
}

// At most C3_FAULT_POINTS points (default 24), spread evenly over calls 1..n, both ends included.
std::vector<int64_t> sweep(int64_t n) {
  const char* env = std::getenv("C3_FAULT_POINTS");
  const int64_t wanted = std::max<int64_t>(2, env ? std::atoll(env) : 24);
  std::vector<int64_t> at;
  if (n <= wanted) {
    for (int64_t i = 1; i <= n; ++i) at.push_back(i);
    return at;
  }
  for (int64_t i = 0; i < wanted; ++i) at.push_back(1 + i * (n - 1) / (wanted - 1));
  return at;
}

// What became of each fault point, for the summary line.
struct Tally {
  int points = 0;
  int not_reached = 0;  // the run made fewer calls than the clean one did
  int in_stats = 0;     // the finished trace counts the errors and the rows they cost
  int on_stderr = 0;    // the trace could not be finished; the collector's line says so
  int harmless = 0;     // injected, nothing lost (the fold of the WAL at the very end)
  void print(const char* what) const {
    std::printf(
        "[fault sweep] %s: %d points: %d counted in stats, %d reported on stderr only, "
        "%d lost nothing, %d not reached\n",
        what, points, in_stats, on_stderr, harmless, not_reached);
  }
};

int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

bool loss_on_stderr(const std::string& err) {
  return err.find("untraced from here on") != std::string::npos ||
         err.find("the trace could not be finished") != std::string::npos;
}

// One recording of the steps job with `op` failing at call `at`, checked.
void check_steps_run(const std::string& op, int64_t at, Tally& tally) {
  SCOPED_TRACE(op + " fault at call " + std::to_string(at));
  ++tally.points;
  TempDir dir;
  auto env = recording_env(dir.path(), true);
  env["C3SCOPE_FLUSH_MS"] = kFlushMs;
  env["C3_FAULT_OP"] = op;
  env["C3_FAULT_AT"] = std::to_string(at);
  env["C3_FAULT_LOG"] = dir.path() + "/fault.log";
  RunResult r = c3::e2e::run(steps_job(), dir.path(), options(env));
  EXPECT_EQ(r.exit_code, kExitCode) << r.err;
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.out, steps_reference().out) << "the job's stdout must not change";
  EXPECT_LE(lines(r.err), 3) << "a few lines, not one per error: " << r.err;
  const bool injected = read_fault_log(dir.path() + "/fault.log")["injected"] > 0;
  ASSERT_LE(r.traces.size(), 1u);
  if (r.traces.empty()) {
    EXPECT_TRUE(injected && loss_on_stderr(r.err)) << r.err;
    ++tally.on_stderr;
    return;
  }
  const std::string bad = check_trace_file(r.traces[0]);
  ASSERT_EQ(bad, "") << r.err;
  auto t = Reader::open(r.traces[0]);
  const StepRows rows = step_rows(*t);
  const int64_t missing =
      (kSteps - rows.steps) + (int64_t{3} * kSteps - rows.kernels) + (kSteps - rows.copies);
  EXPECT_GE(missing, 0);
  if (!injected) {
    ++tally.not_reached;
    EXPECT_EQ(missing, 0);
    EXPECT_EQ(t->meta().at("clean_close"), "1");
    EXPECT_EQ(stat(*t, "write_errors"), 0);
    return;
  }
  if (t->meta().at("clean_close") != "1") {
    // The file could not take its final rows: its stats are stale, the log line is the record.
    EXPECT_TRUE(loss_on_stderr(r.err)) << r.err;
    ++tally.on_stderr;
    return;
  }
  const int64_t errors = stat(*t, "write_errors");
  const int64_t dropped = stat(*t, "write_dropped_rows");
  EXPECT_LE(missing, dropped) << "rows lost without being counted";
  if (errors > 0) {
    EXPECT_NE(c3::e2e::text(*t, "SELECT detail FROM stats WHERE name = 'write_errors'"), "");
    EXPECT_NE(r.err.find("write error(s) cost"), std::string::npos) << r.err;
    ++tally.in_stats;
  } else {
    EXPECT_EQ(missing, 0);
    ++tally.harmless;
  }
}

}  // namespace

TEST(WriterFaults, TheVfsSeesTheCollectorsConnection) {
  // The VFS registers itself in the process's one libsqlite3 (the collector links the system
  // library dynamically); a recording through it writes, and the new counters say nothing lost.
  const Reference& ref = steps_reference();
  EXPECT_GT(ref.calls.count("write") ? ref.calls.at("write") : 0, 20);
  TempDir dir;
  auto env = recording_env(dir.path(), true);
  env["C3SCOPE_FLUSH_MS"] = kFlushMs;
  RunResult r = c3::e2e::run(steps_job(), dir.path(), options(env));
  ASSERT_EQ(r.exit_code, kExitCode) << r.err;
  ASSERT_EQ(r.traces.size(), 1u);
  auto t = Reader::open(r.traces[0]);
  const StepRows rows = step_rows(*t);
  EXPECT_EQ(rows.steps, kSteps);
  EXPECT_EQ(rows.kernels, 3 * kSteps);
  EXPECT_EQ(rows.copies, kSteps);
  EXPECT_EQ(stat(*t, "write_errors"), 0);
  EXPECT_EQ(stat(*t, "write_dropped_rows"), 0);
  EXPECT_EQ(c3::e2e::text(*t, "PRAGMA integrity_check"), "ok");
}

TEST(WriterFaults, FailedWriteAnywhereInARecording) {
  Tally tally;
  for (int64_t at : sweep(steps_reference().calls.at("write"))) check_steps_run("write", at, tally);
  tally.print("write (EIO, torn)");
  EXPECT_GT(tally.in_stats, tally.points / 2) << "most failed writes are survived and counted";
}

TEST(WriterFaults, FailedFsyncAnywhereInARecording) {
  // synchronous=OFF and a file born in WAL mode: today SQLite never syncs a trace (0 points);
  // the sweep covers whatever the count is, so turning syncs on would be tested too.
  Tally tally;
  for (int64_t at : sweep(steps_reference().calls.at("fsync"))) check_steps_run("fsync", at, tally);
  tally.print("fsync");
}

TEST(WriterFaults, FailedTruncateAnywhereInARecording) {
  Tally tally;
  for (int64_t at : sweep(steps_reference().calls.at("truncate")))
    check_steps_run("truncate", at, tally);
  tally.print("truncate");
}

TEST(WriterFaults, DiskFullFromAnyWriteOn) {
  // ENOSPC from the Nth write on, for good: the collector stops writing, the trace keeps what
  // was committed, and the log line (the file cannot take it) says what was lost.
  Tally tally;
  for (int64_t at : sweep(steps_reference().calls.at("write")))
    check_steps_run("enospc", at, tally);
  tally.print("enospc");
}

TEST(WriterFaults, DiskFullOnCopyOnWriteFsAtTheEndLeavesNoHotJournal) {
  // Regression (hot journal): leaving WAL mode at the end rewrote page 1 through a rollback
  // journal on disk; on a full copy-on-write filesystem, where overwrites fail too, the journal
  // could not be played back and the finished trace was unreadable without write access. Every
  // one of the last writes (the final commit and folding the WAL in) is tried.
  const int64_t writes = steps_reference().calls.at("write");
  Tally tally;
  for (int64_t at = std::max<int64_t>(1, writes - 16); at <= writes; ++at)
    check_steps_run("enospc-cow", at, tally);
  tally.print("enospc-cow, last writes");
}

// One transaction far larger than SQLite's page cache (16 MiB): pages spill into the WAL while it
// is open, so a fault at an early write lands inside the transaction, on an insert.
constexpr int64_t kBurst = 250000;
std::vector<std::string> burst_job() {
  return {fault_job_path(), "burst", std::to_string(kBurst), std::to_string(kExitCode)};
}
const std::map<std::string, std::string> kOneTransaction = {{"C3SCOPE_FLUSH_MS", "60000"}};

TEST(WriterFaults, FailedWriteMidTransactionDoesNotFallIntoAutocommit) {
  // Regression: a failed insert ended SQLite's transaction, and the writer went on in
  // autocommit mode, its cached string ids pointing at rolled-back rows.
  const Reference ref = make_reference(burst_job(), kOneTransaction);
  const int64_t writes = ref.calls.at("write");
  for (int64_t at : {int64_t{30}, int64_t{300}}) {
    SCOPED_TRACE("write fault at call " + std::to_string(at) + " of " + std::to_string(writes));
    TempDir dir;
    auto env = recording_env(dir.path(), true);
    env.insert(kOneTransaction.begin(), kOneTransaction.end());
    env["C3_FAULT_OP"] = "write";
    env["C3_FAULT_AT"] = std::to_string(at);
    RunResult r = c3::e2e::run(burst_job(), dir.path(), options(env));
    EXPECT_EQ(r.exit_code, kExitCode) << r.err;
    EXPECT_EQ(r.out, ref.out);
    ASSERT_EQ(r.traces.size(), 1u) << r.err;
    ASSERT_EQ(check_trace_file(r.traces[0]), "");
    auto t = Reader::open(r.traces[0]);
    EXPECT_EQ(t->meta().at("clean_close"), "1");
    EXPECT_EQ(stat(*t, "write_errors"), 1);
    const int64_t kernels = t->count("kernel");
    const int64_t dropped = stat(*t, "write_dropped_rows");
    // Lost mid-transaction: rows before the fault are gone, rows after it are there.
    EXPECT_GT(kernels, 0);
    EXPECT_GT(dropped, 0);
    EXPECT_GE(kernels + dropped, kBurst);
    // Every kernel still names an existing string (no id of a rolled-back row).
    EXPECT_EQ(c3::e2e::scalar(*t,
                              "SELECT COUNT(*) FROM kernel k LEFT JOIN string s ON s.id = "
                              "k.name_id WHERE s.id IS NULL"),
              0);
  }
}

TEST(WriterFaults, DiskFullMidTransaction) {
  // The disk fills while pages spill (30, 300), in the final commit, or while the WAL is folded
  // in. A rolled-back transaction's WAL space is reused, so the writer may well go on.
  const Reference ref = make_reference(burst_job(), kOneTransaction);
  const int64_t writes = ref.calls.at("write");
  for (int64_t at : {int64_t{30}, int64_t{300}, writes / 2, writes - 1}) {
    SCOPED_TRACE("disk full from write " + std::to_string(at) + " of " + std::to_string(writes));
    TempDir dir;
    auto env = recording_env(dir.path(), true);
    env.insert(kOneTransaction.begin(), kOneTransaction.end());
    env["C3_FAULT_OP"] = "enospc";
    env["C3_FAULT_AT"] = std::to_string(at);
    RunResult r = c3::e2e::run(burst_job(), dir.path(), options(env));
    EXPECT_EQ(r.exit_code, kExitCode) << r.err;
    EXPECT_EQ(r.out, ref.out);
    EXPECT_LE(lines(r.err), 3) << r.err;
    ASSERT_LE(r.traces.size(), 1u);
    if (r.traces.empty()) continue;
    ASSERT_EQ(check_trace_file(r.traces[0]), "") << r.err;
    auto t = Reader::open(r.traces[0]);
    const int64_t kernels = t->count("kernel");
    if (t->meta().at("clean_close") != "1") {
      EXPECT_TRUE(loss_on_stderr(r.err)) << r.err;
    } else if (kernels < kBurst) {
      EXPECT_GE(stat(*t, "write_errors"), 1);
      EXPECT_GE(kernels + stat(*t, "write_dropped_rows"), kBurst) << "rows lost uncounted";
    }
  }
}
