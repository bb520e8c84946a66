// End-to-end: the collector never changes what the job does (exit codes, signals, output), copes
// with fork, exec, kills, missing or failing CUPTI, unwritable output and full disks.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "harness.h"

using namespace c3::e2e;
using c3::tracedb::Reader;
namespace fs = std::filesystem;

TEST(Robustness, ExitCodesArePreserved) {
  TempDir dir;
  RunResult r = run({job_path(), "exit", "3"}, dir.path());
  EXPECT_EQ(r.exit_code, 3);
  ASSERT_EQ(r.traces.size(), 1u);
  EXPECT_EQ(Reader::open(r.traces[0])->meta().at("clean_close"), "1") << "exit() flushes";
  RunResult ok = run({job_path(), "exit", "0"}, dir.path());
  EXPECT_EQ(ok.exit_code, 0);
}

TEST(Robustness, DeathBySignalIsPreserved) {
  TempDir dir;
  RunResult r = run({job_path(), "segv"}, dir.path());
  EXPECT_EQ(r.term_signal, SIGSEGV);
  EXPECT_EQ(r.exit_code, -1);
}

TEST(Robustness, SigtermFlushesThenDiesOfSigterm) {
  TempDir dir;
  RunOptions o = with_env({{"C3SCOPE_FLUSH_MS", "60000"}});  // only the signal can flush
  o.wait_for_line = "ready";
  o.on_line = [](pid_t pid) { kill(pid, SIGTERM); };
  RunResult r = run({job_path(), "wait", "10"}, dir.path(), o);
  EXPECT_EQ(r.term_signal, SIGTERM) << r.err;
  ASSERT_EQ(r.traces.size(), 1u);
  auto t = Reader::open(r.traces[0]);
  EXPECT_EQ(t->meta().at("clean_close"), "1");
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM kernel"), 10);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM nvtx_range WHERE name = 'early-mark'"), 1);
  // The range open when the job died is kept, marked as never closed.
  EXPECT_EQ(scalar(*t, "SELECT closed FROM nvtx_range WHERE name = 'long-running'"), 0);
  EXPECT_GT(scalar(*t, "SELECT end_ns FROM process"), 0);
}

TEST(Robustness, SigkillKeepsEverythingOlderThanTheFlushWindow) {
  TempDir dir;
  RunOptions o = with_env({{"C3SCOPE_FLUSH_MS", "100"}});
  o.wait_for_line = "ready";
  o.on_line = [](pid_t pid) {
    std::this_thread::sleep_for(std::chrono::milliseconds(600));  // several flush periods
    kill(pid, SIGKILL);
  };
  RunResult r = run({job_path(), "wait", "10"}, dir.path(), o);
  EXPECT_EQ(r.term_signal, SIGKILL);
  ASSERT_EQ(r.traces.size(), 1u);
  auto t = Reader::open(r.traces[0]);
  EXPECT_EQ(t->meta().at("clean_close"), "0");
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM kernel"), 10);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM nvtx_range WHERE name = 'early-mark'"), 1);
  EXPECT_EQ(scalar(*t, "SELECT COUNT(*) FROM process WHERE end_ns IS NULL"), 1);
}

TEST(Robustness, ForkedChildWritesItsOwnTrace) {
  TempDir dir;
  RunResult r = run({job_path(), "fork"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.traces.size(), 2u) << r.err;
  const std::string child_pid = r.out.substr(r.out.find("child=") + 6, r.out.find('\n') - 6);
  std::unique_ptr<Reader> parent, child;
  for (const auto& p : r.traces) {
    auto t = Reader::open(p);
    if (std::to_string(scalar(*t, "SELECT pid FROM process")) == child_pid)
      child = std::move(t);
    else
      parent = std::move(t);
  }
  ASSERT_TRUE(parent && child);
  EXPECT_EQ(column(*child, "SELECT name FROM nvtx_range ORDER BY start_ns"),
            (std::vector<std::string>{"child-mark", "child-range"}));
  EXPECT_EQ(child->count("kernel"), 0);
  EXPECT_EQ(scalar(*child, "SELECT ppid FROM process"), scalar(*parent, "SELECT pid FROM process"));
  EXPECT_EQ(parent->count("kernel"), 2);
  EXPECT_EQ(column(*parent, "SELECT name FROM nvtx_range"),
            (std::vector<std::string>{"parent-before-fork"}));
  EXPECT_EQ(parent->meta().at("clean_close"), "1");
  EXPECT_EQ(child->meta().at("clean_close"), "1");
}

TEST(Robustness, ChildLeavingWithUnderscoreExitLeavesNoBrokenFile) {
  // _exit() runs no handlers: the child's rows since its last commit are lost, but whatever file
  // it left is a readable trace, and the parent's is complete.
  TempDir dir;
  RunResult r = run({job_path(), "fork", "_exit"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GE(r.traces.size(), 1u);
  for (const auto& p : r.traces) {
    auto t = Reader::open(p);  // throws on an empty or partial file
    EXPECT_GE(t->count("process"), 1) << p;
  }
  for (const auto& e : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().string().find(".partial"), std::string::npos) << e.path();
  }
}

TEST(Robustness, ExecFinishesTheTraceAndTheNewImageGetsItsOwn) {
  TempDir dir;
  RunResult r = run({job_path(), "exec"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.traces.size(), 2u) << r.err;
  auto before = Reader::open(r.traces[0]);
  auto after = Reader::open(r.traces[1]);
  EXPECT_EQ(scalar(*before, "SELECT pid FROM process"), scalar(*after, "SELECT pid FROM process"));
  EXPECT_EQ(before->meta().at("clean_close"), "1");
  EXPECT_EQ(before->count("kernel"), 1);
  EXPECT_EQ(text(*before, "SELECT name FROM nvtx_range"), "before-exec");
  EXPECT_EQ(after->count("kernel"), 4);
  EXPECT_NE(r.traces[1].find(".1.sqlite"), std::string::npos)
      << "same pid: a new name, never overwrite";
}

TEST(Robustness, NoCuptiStillRecordsNvtxAndNccl) {
  TempDir dir;
  RunResult r = run({job_path(), "nccl"}, dir.path(), with_env({{"C3SCOPE_CUPTI_LIB", "none"}}));
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("no GPU activity will be recorded"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 2)
      << "one warning, one summary: " << r.err;
  ASSERT_EQ(r.traces.size(), 1u);
  auto t = Reader::open(r.traces[0]);
  EXPECT_EQ(t->count("kernel"), 0);
  EXPECT_EQ(t->count("collective"), 7);
  EXPECT_EQ(t->count("nvtx_range"), 1);
  EXPECT_EQ(scalar(*t, "SELECT value FROM stats WHERE name = 'cupti_status'"), 0);
  EXPECT_NE(text(*t, "SELECT detail FROM stats WHERE name = 'cupti_status'")
                .find("C3SCOPE_CUPTI_LIB=none"),
            std::string::npos);
}

TEST(Robustness, CuptiErrorsAreReportedNotFatal) {
  for (const char* failing : {"cuptiActivityEnable", "cuptiSubscribe", "all"}) {
    TempDir dir;
    RunResult r =
        run({job_path(), "basic"}, dir.path(), with_env({{"C3FAKE_CUPTI_FAIL", failing}}));
    EXPECT_EQ(r.exit_code, 0) << failing;
    EXPECT_NE(r.err.find("no GPU activity will be recorded"), std::string::npos) << r.err;
    ASSERT_EQ(r.traces.size(), 1u) << failing;
    auto t = Reader::open(r.traces[0]);
    EXPECT_EQ(t->count("kernel"), 0) << failing;
    EXPECT_EQ(t->count("nvtx_range"), 3) << failing;
  }
}

TEST(Robustness, AnotherCuptiClientIsNamedNotBroken) {
  TempDir dir;
  RunResult r =
      run({job_path(), "basic"}, dir.path(), with_env({{"C3FAKE_CUPTI_OTHER_SUBSCRIBER", "1"}}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("another CUPTI client already owns CUPTI"), std::string::npos) << r.err;
}

TEST(Robustness, UnwritableOutputWarnsOnceAndTheJobFinishes) {
  TempDir dir;
  RunResult plain = run({job_path(), "basic"}, dir.path(), injected(Inject::none));
  // A regular file where a folder should be: cannot be created, even by root.
  const std::string blocker = dir.path() + "/blocker";
  {
    std::FILE* f = std::fopen(blocker.c_str(), "w");
    std::fclose(f);
  }
  RunResult r = run({job_path(), "basic"}, dir.path(),
                    with_env({{"C3SCOPE_OUTPUT", blocker + "/sub/trace.sqlite"}}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, plain.out);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(blocker + "/sub/trace.sqlite"), std::string::npos) << r.err;
}

TEST(Robustness, FullDiskDoesNotKillTheJob) {
  // RLIMIT_FSIZE: our writes past 64 KiB fail with EFBIG instead of raising SIGXFSZ.
  TempDir dir;
  RunOptions o = with_env({{"C3SCOPE_FLUSH_MS", "50"}});
  o.fsize_limit = 64L * 1024;
  RunResult r = run({job_path(), "many", "20000"}, dir.path(), o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_NE(r.err.find("the job continues, untraced from here on"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(Robustness, BufferOverflowIsCountedNotFatal) {
  // The same job with a roomy pool and with a 1 MiB one: every CUPTI record of the second run is
  // either decoded or counted as dropped, and the job is unaffected.
  const int n = 100000;
  auto records = [](const Reader& t) {
    return scalar(t, "SELECT value FROM stats WHERE name = 'cupti_records'");
  };
  auto dropped = [](const Reader& t) {
    return scalar(t, "SELECT value FROM stats WHERE name = 'cupti_dropped_records'");
  };
  TempDir roomy_dir, tight_dir;
  RunResult roomy = run({job_path(), "many", std::to_string(n)}, roomy_dir.path());
  RunResult tight = run({job_path(), "many", std::to_string(n)}, tight_dir.path(),
                        with_env({{"C3SCOPE_BUFFER_MB", "1"}, {"C3SCOPE_FLUSH_MS", "5000"}}));
  ASSERT_EQ(roomy.exit_code, 0) << roomy.err;
  ASSERT_EQ(tight.exit_code, 0) << tight.err;
  ASSERT_EQ(roomy.traces.size(), 1u);
  ASSERT_EQ(tight.traces.size(), 1u);
  auto a = Reader::open(roomy.traces[0]);
  auto b = Reader::open(tight.traces[0]);
  EXPECT_EQ(dropped(*a), 0);
  EXPECT_EQ(a->count("kernel"), n);
  EXPECT_EQ(records(*b) + dropped(*b), records(*a));
  EXPECT_EQ(scalar(*b, "SELECT value FROM stats WHERE name = 'buffer_pool_exhausted'") > 0,
            dropped(*b) > 0);
}

TEST(Robustness, RecordCliPassesExitStatusAndListsTraces) {
  TempDir dir;
  RunResult r = run({job_path(), "exit", "5"}, dir.path(), injected(Inject::record_cli));
  EXPECT_EQ(r.exit_code, 5);
  ASSERT_EQ(r.traces.size(), 1u);
  EXPECT_NE(r.err.find("1 trace written:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(r.traces[0]), std::string::npos) << r.err;
  auto t = Reader::open(r.traces[0]);
  EXPECT_EQ(t->count("nvtx_range"), 3);
  // Each trace with what it holds (issue 13).
  EXPECT_NE(r.err.find(r.traces[0] + " (" + std::to_string(t->count("kernel")) + " kernel"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(t->count("kernel"), 4);
}

TEST(Robustness, RecordCliForwardsSignalsAndDiesTheSameWay) {
  TempDir dir;
  RunOptions o;
  o.inject = Inject::record_cli;
  o.wait_for_line = "ready";
  o.on_line = [](pid_t pid) { kill(pid, SIGTERM); };  // to c3scope, which forwards it
  RunResult r = run({job_path(), "wait", "3"}, dir.path(), o);
  EXPECT_EQ(r.term_signal, SIGTERM) << r.err;
  ASSERT_EQ(r.traces.size(), 1u) << r.err << r.out;
  EXPECT_EQ(Reader::open(r.traces[0])->count("kernel"), 3);
}

TEST(Robustness, ShellLaunchersLeaveNoTraceTheirChildrenDo) {
  // sh forks and execs the job: the shell records nothing (no file), the job gets its trace.
  TempDir dir;
  RunResult r =
      run({"/bin/sh", "-c", job_path() + " basic; " + job_path() + " nvtx-only"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(r.traces.size(), 2u) << r.err;
  std::set<std::string> commands;
  for (const auto& p : r.traces) {
    commands.insert(text(*Reader::open(p), "SELECT command_line FROM process"));
  }
  EXPECT_EQ(commands, (std::set<std::string>{job_path() + " basic", job_path() + " nvtx-only"}));
}
