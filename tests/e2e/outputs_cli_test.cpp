// The outputs of issue 24 (docs/outputs.md): pipes named /dev/stdout, /dev/fd/N or >(...); a
// command's outputs as one unit; c3scope's own outputs inside an input folder; one file given
// twice; the temporary conversions under signals.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace fs = std::filesystem;
using namespace c3::e2e;

namespace {

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

RunResult shell(const std::string& line, const TempDir& dir) {
  return run({"/bin/bash", "-c", "cd '" + dir.path() + "' && " + line}, dir.path(),
             injected(Inject::none));
}

std::string q(const std::string& path) {
  return "'" + path + "'";
}

// A PyTorch (Kineto) trace of `kernels` kernels and one all-reduce, written to `path`.
void write_kineto(const std::string& path, int kernels) {
  std::ofstream f(path);
  f << "{\"traceEvents\": [\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
       "\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)\", \"pid\": 0, \"tid\": 8, \"ts\": 12, "
       "\"dur\": 50, \"args\": {\"device\": 0, \"stream\": 8, \"correlation\": 1}}";
  for (int i = 0; i < kernels; ++i) {
    f << ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm_" << i % 50
      << "\", \"pid\": 0, \"tid\": 7, \"ts\": " << 10 + 10 * i
      << ", \"dur\": 5, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": " << i + 2
      << "}}";
  }
  f << "]}\n";
}

// A small c3scope trace in `dir`.
std::string small_trace(const TempDir& dir) {
  write_kineto(dir.path() + "/small.json", 20);
  std::string db = dir.path() + "/small.sqlite";
  EXPECT_EQ(c3scope({"import", dir.path() + "/small.json", "-o", db}, dir).exit_code, 0);
  return db;
}

bool is_json(const std::string& text) {
  return nlohmann::json::accept(text);
}

}  // namespace

// `-o /dev/stdout | jq`, `--json /dev/stdout`, /dev/fd/1 and >(...) were refused as "a symbolic
// link to nothing" (the link's target is "pipe:[N]", no path): written in place now.
TEST(OutputsCli, PipesNamedThroughDevStdoutDevFdAndProcessSubstitution) {
  TempDir dir;
  const std::string db = small_trace(dir);
  // The harness's standard output is a pipe.
  for (const std::string name : {"/dev/stdout", "/dev/fd/1"}) {
    RunResult r = c3scope({"analyze", db, "--json", name}, dir);
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_TRUE(is_json(r.out)) << name << ": " << r.out.substr(0, 200);
    r = c3scope({"export", db, "-o", name}, dir);
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_TRUE(is_json(r.out)) << name << ": " << r.out.substr(0, 200);
    EXPECT_NE(r.err.find("wrote " + name), std::string::npos) << r.err;
  }
  // A pipe that is not standard output: /dev/fd/3, and a shell's process substitution.
  const std::string c3 = q(c3scope_path());
  RunResult r =
      shell(c3 + " analyze small.sqlite --json /dev/fd/3 3>&1 >/dev/null | cat > fd3.json", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_json(slurp(dir.path() + "/fd3.json")));
  r = shell(c3 + " export small.sqlite -o >(cat > sub.json); wait $!", dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string sub;
  for (int i = 0; i < 1000 && !is_json(sub = slurp(dir.path() + "/sub.json")); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(is_json(sub)) << sub.substr(0, 200);
  // c3bench: refused after the whole benchmark had run.
  r = run({c3bench_path(), "--backend", "sim", "--json", "/dev/stdout"}, dir.path(),
          injected(Inject::none));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(is_json(r.out)) << r.out.substr(0, 200);
}

// c3bench checked its outputs against the policy up front, but two outputs naming one file (or
// a refused temporary) failed only after the whole benchmark ran: now before any case runs.
TEST(OutputsCli, C3benchRefusesAnOutputBeforeTheBenchmark) {
  TempDir dir;
  const std::string x = dir.path() + "/x.out";
  RunResult r = run({c3bench_path(), "--backend", "sim", "--json", x, "--db", x}, dir.path(),
                    injected(Inject::none));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("--json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--db"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << "refused before any case ran: " << r.out.substr(0, 200);
  EXPECT_FALSE(fs::exists(x));
  // A failing output leaves the other as it was: --json to a full disk, --db not written.
  r = run(
      {c3bench_path(), "--backend", "sim", "--json", "/dev/full", "--db", dir.path() + "/b.sqlite"},
      dir.path(), injected(Inject::none));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/b.sqlite"));
}

// `--json X --summary X --force` (or X and a link to it) lost one output silently; a later
// output that failed left the earlier ones in place with exit 2; each failure was a line.
TEST(OutputsCli, AnalyzeOutputsAreOneUnit) {
  TempDir dir;
  const std::string db = small_trace(dir);
  const std::string x = dir.path() + "/x.json";
  std::ofstream(x) << "mine";
  fs::create_symlink(x, dir.path() + "/link.json");
  for (const std::string& other : {x, dir.path() + "/link.json"}) {
    RunResult r = c3scope({"analyze", db, "--json", x, "--summary", other, "--force"}, dir);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("--json"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--summary"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(x), "mine");
  }
  // The CSV fails (a full disk): neither the new --json nor --summary appears, the old --json
  // stays, and the error is one line.
  RunResult r = c3scope({"analyze", db, "--json", x, "--summary", dir.path() + "/s.json", "--csv",
                         "/dev/full", "--force"},
                        dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_EQ(slurp(x), "mine");
  EXPECT_FALSE(fs::exists(dir.path() + "/s.json"));
  r = c3scope({"analyze", db, "--json", "/dev/full", "--csv", "/dev/full"}, dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << "one error line for several failed outputs: " << r.err;
  // compare the same way.
  r = c3scope({"compare", db, db, "--md", dir.path() + "/c.md", "--json", "/dev/full"}, dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_FALSE(fs::exists(dir.path() + "/c.md"));
}

// Outputs written into an input folder (analyze F --summary F/s.json, export F -o F/x.json)
// were read back as traces by the next run: doubled numbers, exit 0. One file given twice (by
// name, through a link, or inside a folder also given) was counted twice without a word.
TEST(OutputsCli, AFolderIsReadForTracesAndAFileOnce) {
  TempDir dir;
  fs::create_directories(dir.path() + "/F");
  write_kineto(dir.path() + "/F/rank0.json", 20);
  const std::string f = dir.path() + "/F";
  RunResult first = c3scope(
      {"analyze", f, "--summary", f + "/s.json", "--json", f + "/r.json", "--csv", f + "/c.csv"},
      dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(first.err.empty()) << first.err;
  ASSERT_EQ(c3scope({"export", f, "-o", f + "/x.json"}, dir).exit_code, 0);
  RunResult again = c3scope({"analyze", f}, dir);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, first.out) << "the outputs in F were read as traces";
  EXPECT_EQ(lines(again.err), 1u) << again.err;
  EXPECT_NE(again.err.find("3 c3scope output(s) in the folder skipped"), std::string::npos)
      << again.err;
  // A folder of summaries alone is read as summaries.
  fs::create_directories(dir.path() + "/S");
  fs::copy_file(f + "/s.json", dir.path() + "/S/s.json");
  RunResult sums = c3scope({"analyze", dir.path() + "/S"}, dir);
  EXPECT_EQ(sums.exit_code, 0) << sums.err;
  // One file twice: read once, with one note per repeat.
  const std::string t = f + "/rank0.json";
  fs::create_symlink(t, dir.path() + "/link.json");
  for (const std::vector<std::string>& args : {std::vector<std::string>{"analyze", t, t},
                                               {"analyze", t, dir.path() + "/link.json"},
                                               {"analyze", f, t},
                                               {"analyze", t, f + "/../F/rank0.json"}}) {
    RunResult r = c3scope(args, dir);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, first.out) << args[2];
    EXPECT_NE(r.err.find("is the same file as"), std::string::npos) << r.err;
  }
}

// SIGTERM during `info` or `export` of a PyTorch file left $TMPDIR/c3scope-open-* behind (the
// conversion's temporary trace): every command removes it now.
TEST(OutputsCli, ASignalDuringAConversionLeavesNoTemporary) {
  TempDir dir;
  const std::string big = dir.path() + "/big.json";
  write_kineto(big, 100000);  // about 15 MB: a conversion long enough to be caught in
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"info", big}, {"export", big, "-o", dir.path() + "/x.json"}}) {
    const std::string tmp = dir.path() + "/tmp-" + args[0];
    fs::create_directories(tmp);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, 1);
      ::dup2(null, 2);
      ::setenv("TMPDIR", tmp.c_str(), 1);
      std::vector<std::string> argv = {c3scope_path()};
      argv.insert(argv.end(), args.begin(), args.end());
      std::vector<char*> cargv;
      cargv.reserve(argv.size() + 1);
      for (auto& a : argv) cargv.push_back(a.data());
      cargv.push_back(nullptr);
      ::execv(cargv[0], cargv.data());
      ::_exit(127);
    }
    // Signalled once the conversion's folder holds its trace (polled; 60 s at most).
    bool converting = false;
    int status = 0;
    bool ended = false;
    for (int i = 0; i < 60000 && !converting && !ended; ++i) {
      std::error_code ec;
      for (const auto& e : fs::recursive_directory_iterator(tmp, ec)) {
        converting = converting || e.is_regular_file(ec);
      }
      if (!converting) {
        ended = ::waitpid(pid, &status, WNOHANG) == pid;
        if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    ASSERT_TRUE(converting) << args[0] << ": ended before its conversion was seen";
    ::kill(pid, SIGTERM);
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << args[0] << " " << status;
    std::vector<std::string> left;
    for (const auto& e : fs::recursive_directory_iterator(tmp)) left.push_back(e.path().string());
    EXPECT_TRUE(left.empty()) << args[0] << " left " << left.front();
  }
  EXPECT_FALSE(fs::exists(dir.path() + "/x.json"));
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_FALSE(e.path().filename().string().starts_with(".c3scope-")) << e.path();
}

// A conversion's error named the temporary trace and a -o the user never gave; `info` printed
// the temporary's path (gone when it returned).
TEST(OutputsCli, ConversionMessagesNameTheUsersFile) {
  TempDir dir;
  const std::string json = dir.path() + "/rank0.json";
  write_kineto(json, 3000);
  RunResult ok = c3scope({"info", json}, dir);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ok.out.rfind(json + ": PyTorch profiler", 0), 0u) << ok.out;
  EXPECT_EQ(ok.out.find("c3scope-open-"), std::string::npos) << ok.out;
  // The conversion's database cannot be written (a file size limit, as a full $TMPDIR).
  RunOptions o = injected(Inject::none);
  o.fsize_limit = 4096;
  for (const std::string cmd : {"info", "export"}) {
    std::vector<std::string> args = {c3scope_path(), cmd, json};
    if (cmd == "export") args.insert(args.end(), {"-o", "/dev/null"});
    RunResult r = run(args, dir.path(), o);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("'" + json + "'"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("c3scope-open-"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("-o "), std::string::npos) << r.err;
  }
}
