// The c3scope command line: help everywhere, one clear line and exit code 2 for bad flags and
// bad files, `info` on real traces, and the collector's exported symbols.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "c3/tracedb/schema.h"
#include "harness.h"

using namespace c3::e2e;

namespace {

RunResult cli(const std::vector<std::string>& args) {
  TempDir dir;
  std::vector<std::string> argv = {c3scope_path()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, dir.path(), injected(Inject::none));
}

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace

TEST(Cli, HelpOnEverySubcommand) {
  for (const char* sub : {"record", "info", "schema"}) {
    RunResult r = cli({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << sub << ": " << r.out;
  }
  RunResult top = cli({"--help"});
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("record"), std::string::npos);
}

TEST(Cli, UnknownFlagsAreOneLineAndExitCode2) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"info", "--bogus", "x.sqlite"},
        {"record", "--bogus"},
        {"record", "--flush-ms", "abc", "--", "true"},
        {"frobnicate"},
        {}}) {
    RunResult r = cli(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("c3scope: ", 0), 0u) << r.err;
  }
}

TEST(Cli, BadFilesAreOneLineAndExitCode2) {
  TempDir dir;
  // (A PyTorch trace is no longer a bad file: info opens it as analyze does.)
  const std::string text = dir.path() + "/notes.txt";
  std::ofstream(text) << "not a trace";
  const std::string empty = dir.path() + "/empty";
  std::filesystem::create_directory(empty);
  for (const std::string& f : {text, dir.path() + "/missing.sqlite", empty}) {
    RunResult r = cli({"info", f});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(f), std::string::npos) << "the message names the file: " << r.err;
  }
}

TEST(Cli, InfoSummarizesARecordedTrace) {
  TempDir dir;
  RunResult rec = run({job_path(), "nccl"}, dir.path());
  ASSERT_EQ(rec.traces.size(), 1u);
  RunResult r = cli({"info", rec.traces[0]});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string version = "schema v" + std::to_string(c3::tracedb::kSchemaVersion) + ",";
  for (const std::string& want : {version, std::string("C3Fake H100 0, 132 SMs, cc 9.0"),
                                  std::string("collective 7"), std::string("communicator 2"),
                                  std::string("CUPTI: recording"), std::string("nccl_calls=14")}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
}

TEST(Cli, InfoWarnsAboutAKilledTrace) {
  TempDir dir;
  RunOptions o = with_env({{"C3SCOPE_FLUSH_MS", "50"}});
  o.wait_for_line = "ready";
  o.on_line = [](pid_t pid) {
    usleep(300000);
    kill(pid, SIGKILL);
  };
  RunResult rec = run({job_path(), "wait", "2"}, dir.path(), o);
  ASSERT_EQ(rec.traces.size(), 1u);
  RunResult r = cli({"info", rec.traces[0]});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("warning: not closed cleanly"), std::string::npos) << r.out;
}

TEST(Cli, SchemaPrintsTheDocumentedSchema) {
  RunResult r = cli({"schema"});
  EXPECT_EQ(r.exit_code, 0);
  std::ifstream in(C3_SOURCE_DIR "/docs/schema.md");
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_EQ(r.out, doc.str());
}

// The collector exports its entry points and nothing else (docs/collector.md).
TEST(Collector, ExportsOnlyItsEntryPoints) {
  std::string cmd = "nm -D --defined-only " + collector_path();
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::set<std::string> got;
  std::array<char, 512> buf{};
  while (fgets(buf.data(), buf.size(), p)) {
    std::istringstream line(buf.data());
    std::string addr, type, name;
    line >> addr >> type >> name;
    if (!name.empty()) got.insert(name.substr(0, name.find('@')));
  }
  pclose(p);
  std::set<std::string> want = {"InitializeInjection",
                                "InitializeInjectionNvtx2",
                                "c3scope_trace_append",
                                "execve",
                                "execv",
                                "execvp",
                                "execvpe",
                                "execl",
                                "execlp",
                                "execle"};
  for (const char* n : {"CommInitRank",
                        "CommInitRankConfig",
                        "CommInitRankScalable",
                        "CommInitAll",
                        "CommSplit",
                        "CommShrink",
                        "CommFinalize",
                        "CommDestroy",
                        "CommAbort",
                        "GroupStart",
                        "GroupEnd",
                        "AllReduce",
                        "Broadcast",
                        "Bcast",
                        "Reduce",
                        "AllGather",
                        "ReduceScatter",
                        "AlltoAll",
                        "Gather",
                        "Scatter",
                        "Send",
                        "Recv"}) {
    want.insert(std::string("nccl") + n);
  }
  EXPECT_EQ(got, want);
}
