// The command-line abuses of issue 12, each a regression test naming what went wrong: outputs
// that replaced inputs or device nodes, exit codes and messages, leftovers and hangs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace fs = std::filesystem;
using namespace c3::e2e;

namespace {

size_t lines(const std::string& s) {
  size_t n = 0;
  for (const char c : s) n += c == '\n';
  return n;
}

std::set<std::string> names_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// A small PyTorch trace imported into a c3scope trace in `dir`; returns the trace's path.
std::string make_trace(const TempDir& dir) {
  const std::string json = dir.path() + "/small.json";
  std::ofstream(json) << R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
     "args": {"device": 0, "stream": 7, "correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0,
     "tid": 8, "ts": 12, "dur": 5, "args": {"device": 0, "stream": 8, "correlation": 2}}]})json";
  std::string db = dir.path() + "/small.sqlite";
  EXPECT_EQ(c3scope({"import", json, "-o", db}, dir).exit_code, 0);
  return db;
}

// A shell command line run in `dir` (for redirections such as > /dev/full).
RunResult shell(const std::string& line, const TempDir& dir) {
  return run({"/bin/sh", "-c", line}, dir.path(), injected(Inject::none));
}

}  // namespace

// `export T -o T` and `analyze T --json T` replaced the input trace with JSON (exit 0).
TEST(HostileCli, OutputsNeverReplaceInputs) {
  TempDir dir;
  const std::string db = make_trace(dir);
  const std::string before = slurp(db);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"export", db, "-o", db},
                                               {"export", db, "-o", db, "--force"},
                                               {"analyze", db, "--json", db, "--force"},
                                               {"analyze", dir.path(), "--summary", db, "--force"},
                                               {"import", db, "-o", db, "--force"}}) {
    RunResult r = c3scope(args, dir);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_EQ(slurp(db), before) << args[0] << ": the input is untouched";
  }
}

// `export` overwrote existing files while `import` refused: one policy, --force to replace.
TEST(HostileCli, ExistingOutputsNeedForce) {
  TempDir dir;
  const std::string db = make_trace(dir);
  const std::string out = dir.path() + "/out.json";
  std::ofstream(out) << "keep me";
  for (const std::vector<std::string>& args : {std::vector<std::string>{"export", db, "-o", out},
                                               {"analyze", db, "--json", out},
                                               {"analyze", db, "--csv", out}}) {
    RunResult r = c3scope(args, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("exists; add --force"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(out), "keep me");
  }
  EXPECT_EQ(c3scope({"export", db, "-o", out, "--force"}, dir).exit_code, 0);
  EXPECT_NE(slurp(out).find("traceEvents"), std::string::npos);
  const std::string bench = dir.path() + "/bench.json";
  std::ofstream(bench) << "keep me";
  RunResult r = run({c3bench_path(), "--backend", "sim", "-b", "1M", "-e", "1M", "-n", "1", "-w",
                     "0", "--json", bench},
                    dir.path(), injected(Inject::none));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(slurp(bench), "keep me");
}

// An output naming a device node was replaced by a regular file (OUT.partial renamed onto it).
// A device or pipe is written in place; a trace output refuses it.
TEST(HostileCli, DevicesAreWrittenInPlaceNeverReplaced) {
  TempDir dir;
  const std::string db = make_trace(dir);
  RunResult r = c3scope({"export", db, "-o", "/dev/null"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // /dev/full: in place, and the write error is exit 2 naming the reason.
  r = c3scope({"export", db, "-o", "/dev/full"}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  r = c3scope({"import", dir.path() + "/small.json", "-o", "/dev/null", "--force"}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not a regular file"), std::string::npos) << r.err;
  // A folder is named as one.
  r = c3scope({"analyze", db, "--json", dir.path()}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("Success"), std::string::npos) << r.err;
}

// Names of 240-249 characters failed: the temporary suffix passed the 255-byte limit.
TEST(HostileCli, LongOutputNamesWork) {
  TempDir dir;
  const std::string db = make_trace(dir);
  for (const size_t n : {240u, 249u, 255u}) {
    const std::string name = std::string(n - 5, 'x') + ".json";
    RunResult r = c3scope({"export", db, "-o", dir.path() + "/" + name}, dir);
    EXPECT_EQ(r.exit_code, 0) << n << r.err;
    EXPECT_TRUE(fs::exists(dir.path() + "/" + name)) << n;
    const std::string trace = std::string(n - 7, 'y') + ".sqlite";
    r = c3scope({"import", dir.path() + "/small.json", "-o", dir.path() + "/" + trace}, dir);
    EXPECT_EQ(r.exit_code, 0) << n << r.err;
  }
}

// `import -o X -- -x.json` could not take a file named with a leading dash; a path with a
// newline gave a two-line error.
TEST(HostileCli, OddFileNames) {
  TempDir dir;
  make_trace(dir);
  fs::copy_file(dir.path() + "/small.json", dir.path() + "/-x.json");
  RunResult r = shell(
      "cd '" + dir.path() + "' && '" + c3scope_path() + "' import -o dash.sqlite -- -x.json", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() + "/dash.sqlite"));
  r = c3scope({"analyze", dir.path() + "/two\nlines.sqlite"}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("two\\nlines"), std::string::npos) << r.err;
}

// Commands exited 0 when standard output was /dev/full.
TEST(HostileCli, StdoutWriteErrorsExitTwo) {
  TempDir dir;
  const std::string db = make_trace(dir);
  for (const std::string& cmd :
       {"'" + c3scope_path() + "' info '" + db + "'",
        "'" + c3scope_path() + "' analyze '" + db + "'", "'" + c3scope_path() + "' --help",
        "'" + c3bench_path() + "' --list-presets"}) {
    RunResult r = shell(cmd + " > /dev/full", dir);
    EXPECT_EQ(r.exit_code, 2) << cmd << r.err;
    EXPECT_NE(r.err.find("cannot write to standard output"), std::string::npos) << r.err;
  }
}

// A reader that went away (`export T -o /dev/stdout | true`, `info T | head`) killed the command
// with SIGPIPE: exit 141, a conversion's scratch folder and the summary's temporary left behind
// (found by scripts/hostile-campaign). Now a write error: exit 2, one line, nothing left.
TEST(HostileCli, AClosedPipeIsAWriteErrorNotSigpipe) {
  TempDir dir;
  TempDir tmp;
  {
    std::ofstream big(dir.path() + "/big.json");
    big << R"({"traceEvents": [)";
    for (int i = 0; i < 20000; ++i) {
      big << (i ? "," : "") << R"({"ph": "X", "cat": "kernel", "name": "gemm_)" << i
          << R"(", "pid": 0, "tid": 7, "ts": )" << 10 * i
          << R"(, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": )" << i << "}}";
    }
    big << "]}";
  }
  // Standard output is a pipe whose reader is gone before the command starts: every write fails
  // (python's subprocess gives the child the default SIGPIPE, as a shell does).
  const std::string q = "cd '" + dir.path() + "' && TMPDIR='" + tmp.path() +
                        "' python3 -c 'import os, subprocess, sys\n"
                        "r, w = os.pipe(); os.close(r)\n"
                        "sys.exit(subprocess.call(sys.argv[1:], stdout=w))' '" +
                        c3scope_path() + "' ";
  for (const std::string& cmd :
       {q + "export big.json -o /dev/stdout",
        q + "analyze big.json --json /dev/stdout --summary s.json", q + "info big.json"}) {
    const auto before = names_in(dir.path());
    RunResult r = shell(cmd, dir);
    const std::string& err = r.err;
    EXPECT_EQ(r.exit_code, 2) << cmd << ": " << err;
    EXPECT_EQ(lines(err), 1u) << cmd << ": " << err;
    EXPECT_TRUE(err.find("Broken pipe") != std::string::npos ||
                err.find("standard output") != std::string::npos)
        << cmd << ": " << err;
    EXPECT_EQ(names_in(dir.path()), before) << cmd << ": nothing left beside the inputs";
    EXPECT_TRUE(fs::is_empty(tmp.path())) << cmd << ": nothing left in $TMPDIR";
  }
}

// Names past the 4 KiB cap reached outputs whole (found by scripts/hostile-campaign): a PyTorch
// file read directly by analyze kept a 1 MiB host and kernel name in --json (a 64 KB gzip could
// put 64 MiB there), and info and export read a trace's with a 64 KiB cap. Every reader cuts at
// common/text_limits.h's caps, and analyze counts the cut (long_text).
TEST(HostileCli, LongNamesAreCutByEveryReader) {
  TempDir dir;
  const std::string& d = dir.path();
  const std::string host(1 << 20, 'h'), kernel(1 << 20, 'n');
  std::ofstream(dir.path() + "/long.json")
      << R"({"hostname": ")" << host << R"(", "traceEvents": [)"
      << R"({"ph": "X", "cat": "kernel", "name": ")" << kernel
      << R"(", "pid": 0, "tid": 7, "ts": 10, "dur": 5, "args": {"device": 0, "stream": 7}}]})";
  // The longest run of `c` in `text`.
  auto run_of = [](const std::string& text, char c) {
    size_t best = 0, n = 0;
    for (const char x : text) best = std::max(best, n = x == c ? n + 1 : 0);
    return best;
  };
  RunResult r = c3scope({"analyze", d + "/long.json", "--json", d + "/a.json"}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string report = slurp(dir.path() + "/a.json");
  EXPECT_EQ(run_of(report, 'h'), 4096u);
  EXPECT_EQ(run_of(report, 'n'), 4096u);
  EXPECT_NE((r.out + r.err).find("bytes, cut to 4096"), std::string::npos) << "the cut is named";
  EXPECT_NE(report.find(R"("skipped_rows": 2)"), std::string::npos) << "host and kernel counted";
  EXPECT_LE(run_of(r.out, 'h'), 4096u);

  ASSERT_EQ(c3scope({"import", d + "/long.json", "-o", d + "/long.sqlite"}, dir).exit_code, 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir.path() + "/long.sqlite").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE process SET host = printf('%.*c', 1048576, 'h'); UPDATE string "
                         "SET value = printf('%.*c', 1048576, 'n') WHERE id IN (SELECT name_id "
                         "FROM kernel)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  r = c3scope({"info", d + "/long.sqlite"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(run_of(r.out, 'h'), 4096u);
  r = c3scope({"export", d + "/long.sqlite", "-o", d + "/e.json"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string exported = slurp(dir.path() + "/e.json");
  EXPECT_LE(run_of(exported, 'h'), 4096u);
  EXPECT_EQ(run_of(exported, 'n'), 4096u);
}

// `import FIFO` blocked forever in open(); so did analyze and info.
TEST(HostileCli, FifosAreRefusedNotWaitedOn) {
  TempDir dir;
  const std::string db = make_trace(dir);
  const std::string fifo = dir.path() + "/pipe.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // --rules FIFO also waited forever (found by the closing probes), and --rules FOLDER ran with
  // no rules.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"import", fifo, "-o", dir.path() + "/x.sqlite"},
        {"analyze", fifo},
        {"info", fifo},
        {"export", fifo, "-o", dir.path() + "/x.json"},
        {"analyze", db, "--rules", fifo},
        {"compare", db, db, "--rules", fifo}}) {
    const auto t0 = std::chrono::steady_clock::now();
    RunResult r = c3scope(args, dir);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << args[0];
    EXPECT_EQ(r.exit_code, 2) << args[0] << r.err;
    EXPECT_NE(r.err.find("pipe"), std::string::npos) << r.err;
  }
  RunResult r = c3scope({"analyze", db, "--rules", dir.path()}, dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is a folder"), std::string::npos) << r.err;
}

// Reading a WAL-mode trace created -shm and -wal next to the input.
TEST(HostileCli, ReadingCreatesNothingNextToTheInput) {
  TempDir dir;
  const std::string db = make_trace(dir);
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    sqlite3_exec(h, "PRAGMA journal_mode=WAL;", nullptr, nullptr, nullptr);
    sqlite3_close(h);
  }
  const auto before = names_in(dir.path());
  EXPECT_EQ(c3scope({"info", db}, dir).exit_code, 0);
  EXPECT_EQ(c3scope({"analyze", db}, dir).exit_code, 0);
  EXPECT_EQ(names_in(dir.path()), before);
}

// A locked trace said "is damaged or not a database: database is locked"; a hot journal
// "attempt to write a readonly database".
TEST(HostileCli, LockedAndHotJournalSayWhy) {
  TempDir dir;
  const std::string db = make_trace(dir);
  const std::string copy = dir.path() + "/copy.sqlite";
  fs::copy_file(db, copy);
  {
    // An exclusive lock held by another process (a writer in the middle of a commit).
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    // A cache of 2 pages: the transaction spills pages into the file, which syncs the journal's
    // header first, so the journal is hot for a reader that finds it without the lock.
    sqlite3_exec(h,
                 "PRAGMA journal_mode=DELETE; PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=2;"
                 "BEGIN EXCLUSIVE;",
                 nullptr, nullptr, nullptr);
    for (int i = 0; i < 2000; ++i) {
      const std::string insert = "INSERT INTO meta (key, value) VALUES ('k" + std::to_string(i) +
                                 "', '" + std::string(100, 'v') + "');";
      ASSERT_EQ(sqlite3_exec(h, insert.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    }
    RunResult r = c3scope({"info", db}, dir);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("is locked by another process"), std::string::npos) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    // The hot journal a killed writer leaves: a copy of the file and its journal mid-commit.
    fs::copy_file(db, copy, fs::copy_options::overwrite_existing);
    fs::copy_file(db + "-journal", copy + "-journal");
    sqlite3_close(h);
  }
  RunResult r = c3scope({"info", copy}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("hot journal"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("readonly database"), std::string::npos) << r.err;
}

// SIGTERM during import left OUT.partial-PID, -wal and -shm behind.
TEST(HostileCli, SigtermLeavesNothingBehind) {
  TempDir dir;
  const std::string json = dir.path() + "/big.json";
  {
    std::ofstream f(json);
    f << R"({"traceEvents": [)";
    for (int i = 0; i < 400000; ++i) {
      f << (i ? "," : "")
        << R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )"
        << 1000 + i * 10 << R"(, "dur": 5, "args": {"device": 0, "stream": 7, "correlation": )" << i
        << "}}";
    }
    f << "]}";
  }
  const auto before = names_in(dir.path());
  int killed = 0;
  for (int attempt = 0; attempt < 6; ++attempt) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      const std::string out = dir.path() + "/out.sqlite";
      ::execl(c3scope_path().c_str(), "c3scope", "import", json.c_str(), "-o", out.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 100 * attempt));
    ::kill(pid, SIGTERM);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) {
      ++killed;
      EXPECT_EQ(names_in(dir.path()), before) << "leftovers after SIGTERM";
    } else {
      fs::remove(dir.path() + "/out.sqlite");  // it finished first: no kill to check
    }
  }
  EXPECT_GT(killed, 0) << "the import always finished before the signal";
}

// c3bench -n -1 and --gpus 0 ran with the defaults instead of refusing.
TEST(HostileCli, BenchRefusesImpossibleCounts) {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"-n", "-1"}, {"-n", "0"}, {"--gpus", "0"}, {"-w", "-1"}}) {
    std::vector<std::string> cmd{c3bench_path(), "--backend", "sim"};
    cmd.insert(cmd.end(), args.begin(), args.end());
    RunResult r = run(cmd, dir.path(), injected(Inject::none));
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
  }
}

// `record -- missing-program` exited 127 with no line of ours.
TEST(HostileCli, RecordNamesAMissingProgram) {
  TempDir dir;
  RunResult r = c3scope({"record", "-o", dir.path() + "/", "--", "no-such-program-c3"}, dir);
  EXPECT_EQ(r.exit_code, 127);  // as env(1) and timeout(1): the command was not found
  EXPECT_NE(r.err.find("c3scope: record: cannot run 'no-such-program-c3'"), std::string::npos)
      << r.err;
}

// Found in review: /dev/stdout redirected to a file was taken for an existing file (refused, or
// renamed over the shell's target with --force), and export's status line went into the JSON.
TEST(HostileCli, StandardOutputIsWrittenThroughNotReplaced) {
  TempDir dir;
  const std::string db = make_trace(dir);
  const std::string q = "'" + c3scope_path() + "' ";
  RunResult r = shell(
      "cd '" + dir.path() + "' && " + q + "export small.sqlite -o /dev/stdout > out.json", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote /dev/stdout"), std::string::npos) << r.err;
  const std::string json = slurp(dir.path() + "/out.json");
  ASSERT_FALSE(json.empty());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.find("wrote"), std::string::npos) << "the status line is not in the JSON";
  // >> appends: what was there stays.
  std::ofstream(dir.path() + "/log.txt") << "before\n";
  r = shell(
      "cd '" + dir.path() + "' && " + q + "analyze small.sqlite --json /dev/stdout >> log.txt",
      dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string log = slurp(dir.path() + "/log.txt");
  EXPECT_EQ(log.rfind("before\n{", 0), 0u) << log.substr(0, 80);
  EXPECT_EQ(log.find("Time breakdown"), std::string::npos) << "no text report in the JSON";
  // A database output refuses standard output.
  r = shell("cd '" + dir.path() + "' && " + q + "import small.json -o /dev/stdout > db.out", dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// Found in review: a -wal or -journal left at a database output's name was taken by SQLite for
// the new file's; and compare --force could replace a trace inside a folder given as a run.
TEST(HostileCli, LeftoverJournalsAndFolderRunsAreRespected) {
  TempDir dir;
  const std::string db = make_trace(dir);
  std::ofstream(dir.path() + "/new.sqlite-wal") << "stale frames";
  RunResult r =
      c3scope({"import", dir.path() + "/small.json", "-o", dir.path() + "/new.sqlite"}, dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("new.sqlite-wal exists"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/new.sqlite"));
  fs::create_directories(dir.path() + "/runs");
  fs::copy_file(db, dir.path() + "/runs/rank0.sqlite");
  const std::string before = slurp(dir.path() + "/runs/rank0.sqlite");
  r = c3scope({"compare", dir.path() + "/runs", dir.path() + "/runs", "--json",
               dir.path() + "/runs/rank0.sqlite", "--force"},
              dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is also an input"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(dir.path() + "/runs/rank0.sqlite"), before);
}

// Found in review: the cleanup handlers replaced an ignored SIGHUP (nohup) with their own, so
// the command died of it.
TEST(HostileCli, IgnoredSignalsStayIgnored) {
  TempDir dir;
  make_trace(dir);
  // The shell ignores HUP before it starts the command, which inherits that (as under nohup).
  RunResult r = shell("cd '" + dir.path() + "' || exit 9; trap '' HUP; '" + c3scope_path() +
                          "' import small.json -o hup.sqlite & pid=$!; kill -HUP $pid; wait $pid",
                      dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir.path() + "/hup.sqlite"));
}

// Found by the closing probes: a damaged trace's names that are not UTF-8 made the Perfetto
// export invalid JSON. Such bytes are written as U+FFFD; valid UTF-8 is kept.
TEST(HostileCli, ExportIsValidJsonWhateverTheNames) {
  TempDir dir;
  const std::string db = make_trace(dir);
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h,
                           "UPDATE string SET value = CAST(X'67656D6DFF80C3A9E282AC' AS TEXT) "
                           "WHERE value = 'gemm';",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(h);
  }
  const std::string out = dir.path() + "/out.json";
  RunResult r = c3scope({"export", db, "-o", out}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(slurp(out))) << "not valid JSON (or not UTF-8)";
  bool found = false;
  for (const auto& e : j.at("traceEvents")) {
    if (e.value("name", "") == "gemm\xEF\xBF\xBD\xEF\xBF\xBD\xC3\xA9\xE2\x82\xAC") found = true;
  }
  EXPECT_TRUE(found) << "the kernel's name with U+FFFD for each bad byte, the rest kept";
}

// ---- Issue 24: hostile databases (views, triggers, queries that never end, long strings,
// wrong types). Each file is small and made here; the bounds on time are generous (the tools'
// own work budget is far smaller), never a measure of speed.

namespace {

// Runs `sql` on the SQLite file `path` (created when missing), unhardened: how a hostile file is
// made.
void sql_on(const std::string& path, const std::string& sql) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(h, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK)
      << (err != nullptr ? err : "") << "\n"
      << sql;
  sqlite3_free(err);
  sqlite3_close(h);
}

// A minimal Nsight Systems export: a GPU, one kernel and its names, `nvtx` NVTX ranges whose
// names are looked up in StringIds (without an index when `strings` is large: each lookup then
// scans it).
std::string make_nsys(const TempDir& dir, const std::string& name, int nvtx = 0, int strings = 2) {
  std::string path = dir.path() + "/" + name;
  sql_on(path,
         "CREATE TABLE StringIds (id INTEGER, value TEXT);"
         "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);"
         "INSERT INTO TARGET_INFO_GPU VALUES (0, 'GPU');"
         "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, "
         "streamId INTEGER, globalPid INTEGER, correlationId INTEGER, shortName INTEGER, "
         "demangledName INTEGER);"
         "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 200, 0, 7, 0, 1, 1, 1);"
         "CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, text TEXT, "
         "textId INTEGER, globalTid INTEGER);"
         "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < " +
             std::to_string(strings) +
             ") INSERT INTO StringIds SELECT x, 'name ' || x FROM c;"
             "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < " +
             std::to_string(nvtx) + ") INSERT INTO NVTX_EVENTS SELECT x, x + 1, 59, NULL, " +
             std::to_string(strings) + ", 0 FROM c WHERE " + std::to_string(nvtx) + " > 0;");
  return path;
}

// The view that never ends (a recursive CTE), with a kernel table's columns.
constexpr const char* kEndlessKernels =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS id, 1 AS "
    "process_id, 0 AS device_id, 0 AS stream_id, x AS start_ns, x + 1 AS end_ns, 1 AS name_id, "
    "x AS correlation_id, 1 AS grid_x, 1 AS grid_y, 1 AS grid_z, 1 AS block_x, 1 AS block_y, 1 "
    "AS block_z, 0 AS registers_per_thread, 0 AS static_shared_bytes, 0 AS dynamic_shared_bytes, "
    "NULL AS submitted_ns FROM c";

// Every tool ends at once on `file` with one line naming it and `needle` (the table), exit 2.
void expect_refused(const TempDir& dir, const std::string& file, const std::string& needle,
                    bool nsys) {
  const std::string& name = file;
  std::vector<std::vector<std::string>> commands = {
      {"info", name}, {"analyze", name}, {"export", name, "-o", name + ".json"}};
  if (nsys) commands.push_back({"import", name, "-o", name + ".imported.sqlite"});
  for (const auto& args : commands) {
    const auto t0 = std::chrono::steady_clock::now();
    RunResult r = c3scope(args, dir);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << args[0];
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << name << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << args[0] << ": " << r.err;
  }
}

}  // namespace

// A trace whose `kernel` was a never-ending view, or whose `string` a cross join, hung info,
// analyze, export and the GUI (after one SIGTERM analyze ran on for 12 minutes).
TEST(HostileDatabase, ViewsWhereTablesBelongAreRefused) {
  TempDir dir;
  const std::string db = make_trace(dir);
  const std::string endless = dir.path() + "/endless.sqlite";
  fs::copy_file(db, endless);
  sql_on(endless, std::string("ALTER TABLE kernel RENAME TO kernel_rows; CREATE VIEW kernel AS ") +
                      kEndlessKernels + ";");
  expect_refused(dir, endless, "`kernel` is a view", false);
  const std::string cross = dir.path() + "/cross.sqlite";
  fs::copy_file(db, cross);
  sql_on(cross,
         "ALTER TABLE string RENAME TO s; CREATE VIEW String AS SELECT a.id + 1000 * b.id + "
         "1000000 * c.id AS id, a.value AS value FROM s a, s b, s c, s d, s e, s f;");
  expect_refused(dir, cross, "`String` is a view", false);
}

// The same for an Nsight Systems export, and a view over a table that was dropped imported as
// 0 kernels with exit 0.
TEST(HostileDatabase, NsysViewsWhereTablesBelongAreRefused) {
  TempDir dir;
  const std::string cross = make_nsys(dir, "cross.sqlite");
  sql_on(cross,
         "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k; CREATE VIEW "
         "CUPTI_ACTIVITY_KIND_KERNEL AS SELECT a.* FROM k a, StringIds b, StringIds c, StringIds "
         "d, StringIds e, StringIds f, StringIds g;");
  expect_refused(dir, cross, "`CUPTI_ACTIVITY_KIND_KERNEL` is a view", true);
  const std::string endless = make_nsys(dir, "endless.sqlite");
  sql_on(endless,
         "DROP TABLE StringIds; CREATE VIEW StringIds AS WITH RECURSIVE c(x) AS (SELECT 1 UNION "
         "ALL SELECT x + 1 FROM c) SELECT x AS id, 'n' AS value FROM c;");
  expect_refused(dir, endless, "`StringIds` is a view", true);
  const std::string dropped = make_nsys(dir, "dropped.sqlite");
  sql_on(dropped,
         "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO k; CREATE VIEW "
         "CUPTI_ACTIVITY_KIND_KERNEL AS SELECT * FROM k; DROP TABLE k;");
  expect_refused(dir, dropped, "CUPTI_ACTIVITY_KIND_KERNEL", true);
}

// The file's triggers and its versions of c3scope's views never run: the tools read the tables
// and make the views from their own definitions.
TEST(HostileDatabase, TriggersAndTheFilesOwnViewsDoNotRun) {
  TempDir dir;
  const std::string db = make_trace(dir);
  const std::string before = c3scope({"analyze", dir.path() + "/small.sqlite"}, dir).out;
  sql_on(db,
         "DROP VIEW gpu_activity; CREATE VIEW gpu_activity AS WITH RECURSIVE c(x) AS (SELECT 1 "
         "UNION ALL SELECT x + 1 FROM c) SELECT * FROM c;"
         "CREATE TRIGGER t BEFORE DELETE ON meta BEGIN SELECT 1; END;");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"info", dir.path() + "/small.sqlite"},
        {"export", dir.path() + "/small.sqlite", "-o", dir.path() + "/out.json"}}) {
    RunResult r = c3scope(args, dir);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
  }
  RunResult r = c3scope({"analyze", dir.path() + "/small.sqlite"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, before);
}

// A lookup with no index in an Nsight export (each NVTX name scans StringIds) is quadratic: it
// ends at the work budget (C3SCOPE_READ_BUDGET in millions of steps) with one line naming the
// file and the table, and a first SIGTERM stops it where the budget is raised.
TEST(HostileDatabase, WorkBudgetAndFirstSignalEndAQueryThatRunsOn) {
  TempDir dir;
  // Budgets far below the default (2^28 steps and more), so the bound on time is generous.
  const std::string slow = make_nsys(dir, "slow.sqlite", 10000, 10000);
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r = shell("C3SCOPE_READ_BUDGET=20 '" + c3scope_path() + "' import '" + slow + "' -o '" +
                          dir.path() + "/slow.out.sqlite'",
                      dir);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("slow.sqlite' needs more SQLite work"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("NVTX_EVENTS"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/slow.out.sqlite"));
  // Minutes of work without the budget: one SIGTERM ends it.
  make_nsys(dir, "slower.sqlite", 80000, 80000);
  const auto t1 = std::chrono::steady_clock::now();
  r = shell("cd '" + dir.path() + "' || exit 9; C3SCOPE_READ_BUDGET=1000000000 '" + c3scope_path() +
                "' analyze slower.sqlite & pid=$!; sleep 2; kill -TERM $pid; wait $pid",
            dir);
  EXPECT_LT(std::chrono::steady_clock::now() - t1, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("interrupted"), std::string::npos) << r.err;
}

// A 10 MB kernel name stalled export and the GUI (a 100 MB host name ended in bad_alloc): names
// are cut at 4 KiB and counted, and a value past SQLite's length limit is one line.
TEST(HostileDatabase, LongStringsAreCutAndCounted) {
  TempDir dir;
  const std::string db = make_trace(dir);
  sql_on(db,
         "UPDATE string SET value = replace(hex(zeroblob(5000000)), '0', 'g') WHERE value = "
         "'gemm'; UPDATE process SET host = replace(hex(zeroblob(600000)), '0', 'h');");
  RunResult r = c3scope({"analyze", dir.path() + "/small.sqlite"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("small.sqlite: process: column `host` of "
                       "1200000 bytes, cut to 4096"),
            std::string::npos)
      << r.out.substr(0, 2000);
  EXPECT_LT(r.out.size(), size_t{200000});
  r = c3scope({"export", dir.path() + "/small.sqlite", "-o", dir.path() + "/out.json"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(fs::file_size(dir.path() + "/out.json"), size_t{400000});
  // Nsight: the name is cut and counted among the malformed events.
  const std::string nsys = make_nsys(dir, "long.sqlite");
  sql_on(nsys, "UPDATE StringIds SET value = replace(hex(zeroblob(5000000)), '0', 'k');");
  r = c3scope({"import", dir.path() + "/long.sqlite", "-o", dir.path() + "/long.out.sqlite"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(fs::file_size(dir.path() + "/long.out.sqlite"), size_t{1} << 20);
  const std::string cut = text(*c3::tracedb::Reader::open(dir.path() + "/long.out.sqlite"),
                               "SELECT detail FROM stats WHERE name = 'import_malformed'");
  EXPECT_NE(cut.find("StringIds id 1: a text of 10000000 bytes, cut to 4096"), std::string::npos)
      << cut;
  // Past SQLite's length limit (16 MiB): refused in one line, no bad_alloc.
  sql_on(db, "UPDATE process SET host = zeroblob(20000000);");
  r = c3scope({"analyze", dir.path() + "/small.sqlite"}, dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("holds a value longer than 16 MiB"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`process`"), std::string::npos) << r.err;
}

// Text in an integer column read as 0: such a row is skipped and counted, the first named.
TEST(HostileDatabase, TextInAnIntegerColumnIsSkippedAndCounted) {
  TempDir dir;
  const std::string db = make_trace(dir);
  sql_on(db, "UPDATE kernel SET start_ns = 'soon' WHERE id = 1;");
  RunResult r = c3scope({"analyze", dir.path() + "/small.sqlite"}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("small.sqlite: kernel row 1: column "
                       "`start_ns` holds text, not an integer"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(" 1 kernels"), std::string::npos) << r.out;
  // A process row, which every other row hangs off, makes the file unreadable: one line.
  sql_on(db, "UPDATE process SET pid = 'one';");
  r = c3scope({"analyze", dir.path() + "/small.sqlite"}, dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("small.sqlite': process row 1: column `pid` holds text"), std::string::npos)
      << r.err;
  const std::string nsys = make_nsys(dir, "typed.sqlite");
  sql_on(nsys, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = 'later';");
  r = c3scope({"import", dir.path() + "/typed.sqlite", "-o", dir.path() + "/typed.out.sqlite"},
              dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string bad = text(*c3::tracedb::Reader::open(dir.path() + "/typed.out.sqlite"),
                               "SELECT detail FROM stats WHERE name = 'import_malformed'");
  EXPECT_NE(bad.find("CUPTI_ACTIVITY_KIND_KERNEL row 1: column end holds text"), std::string::npos)
      << bad;
}

// A damaged Nsight export was "not an Nsight Systems export"; some broken traces said "cannot be
// read: not an error".
TEST(HostileDatabase, DamagedFilesSayWhatIsWrong) {
  TempDir dir;
  const std::string nsys = make_nsys(dir, "damaged.sqlite");
  {
    // The schema page's cells overwritten.
    std::fstream f(nsys, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(3000);
    const std::string junk(1000, '\x7f');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"import", dir.path() + "/damaged.sqlite", "-o",
                                 dir.path() + "/d.sqlite"},
        {"analyze", dir.path() + "/damaged.sqlite"},
        {"info", dir.path() + "/damaged.sqlite"}}) {
    RunResult r = c3scope(args, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("damaged"), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.find("not an Nsight Systems export"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("not an error"), std::string::npos) << r.err;
  }
}
