// Issue 24, what `info` and `analyze` print (items 6, 8 and 23): text from inside a trace reaches
// the terminal escaped, a simulated run says so, and unknown values are not shown as values.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness.h"

using namespace c3::e2e;

namespace {

// Runs SQL on a trace file.
void sql(const std::string& db, const std::string& statements) {
  sqlite3* h = nullptr;
  ASSERT_EQ(sqlite3_open(db.c_str(), &h), SQLITE_OK);
  char* err = nullptr;
  const int rc = sqlite3_exec(h, statements.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(h);
}

// What a terminal would obey in `out`: ESC (escape sequences: a title change, a cleared screen),
// the C1 controls in UTF-8, a right-to-left override.
void expect_inert(const std::string& out, const std::string& what) {
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << what << ": ESC\n" << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << what << ": BEL\n" << out;
  EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << what << ": C1 CSI\n" << out;
  EXPECT_EQ(out.find("\xe2\x80\xae"), std::string::npos) << what << ": U+202E\n" << out;
  EXPECT_EQ(out.find("\nFAKE"), std::string::npos) << what << ": a fake line\n" << out;
}

}  // namespace

// A trace whose host, command line and kernel name hold a title change ("\x1b]0;pwned\x07"), a
// newline starting a fake line, a C1 control and a right-to-left override: info and analyze
// printed them raw.
TEST(ReportText, HostileTraceTextIsEscapedInInfoAndAnalyze) {
  TempDir dir;
  const std::string json = dir.path() + "/evil.json";
  // JSON escapes: the importer stores the characters themselves.
  const std::string evil = R"(\u001b]0;pwned\u0007\nFAKE line \u009b2J \u202etxt.exe)";
  std::ofstream(json) << R"json({"distributedInfo": {"rank": 1}, "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "gemm)json"
                      << evil << R"json(", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
     "args": {"device": 0, "stream": 7, "correlation": 1}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0,
     "tid": 8, "ts": 12, "dur": 5, "args": {"device": 0, "stream": 8, "correlation": 2}}]})json";
  const std::string db = dir.path() + "/evil.sqlite";
  ASSERT_EQ(c3scope({"import", json, "-o", db}, dir).exit_code, 0);
  const std::string raw = "x'1b5d303b70776e6564070a46414b45206c696e6520c29b324a20e280ae747874'";
  sql(db, "UPDATE process SET host = 'host' || " + raw + ", command_line = 'python ' || " + raw +
              ", rank = NULL;");
  RunResult info = c3scope({"info", db}, dir);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  expect_inert(info.out, "info");
  EXPECT_NE(info.out.find("on host\\x1b]0;pwned\\x07\\nFAKE line \\u009b2J \\u202etxt: python "
                          "\\x1b]0;pwned"),
            std::string::npos)
      << info.out;
  const std::string report = dir.path() + "/r.json", csv = dir.path() + "/c.csv";
  RunResult an = c3scope({"analyze", db, "--json", report, "--csv", csv}, dir);
  ASSERT_EQ(an.exit_code, 0) << an.err;
  expect_inert(an.out, "analyze");
  EXPECT_NE(an.out.find("pid 0@host\\x1b]0;pwned\\x07\\nFAKE"), std::string::npos) << an.out;
  expect_inert(slurp(csv), "--csv");
  expect_inert(slurp(report), "--json");
  // The JSON keeps the text itself (its escapes are JSON's).
  const auto j = nlohmann::json::parse(slurp(report));
  EXPECT_EQ(j.at("ranks")[0].at("host").get<std::string>().substr(0, 5), "host\x1b");
}

// A c3bench run on the simulated node, recorded through the collector: info and analyze said
// nowhere that its numbers are predictions.
TEST(ReportText, SimulatedRunSaysSoInInfoAndAnalyze) {
  TempDir dir;
  RunResult rec = run({c3bench_path(), "--backend", "sim", "--gpus", "2", "--compute",
                       "gemm:1024x1024x1024:bf16", "--comm", "allreduce:1M", "-w", "0", "-n", "1"},
                      dir.path(), injected(Inject::record_cli));
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  ASSERT_EQ(rec.traces.size(), 1u);
  RunResult info = c3scope({"info", rec.traces[0]}, dir);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("\n  SIMULATED: recorded on c3bench's simulated node (trace clock: "
                          "simulated node virtual clock"),
            std::string::npos)
      << info.out;
  const std::string report = dir.path() + "/r.json";
  RunResult an = c3scope({"analyze", rec.traces[0], "--json", report}, dir);
  ASSERT_EQ(an.exit_code, 0) << an.err;
  EXPECT_NE(an.out.find("\nSIMULATED: every process ran on c3bench's simulated node"),
            std::string::npos)
      << an.out;
  const auto j = nlohmann::json::parse(slurp(report));
  EXPECT_TRUE(j.at("simulated").get<bool>());
  EXPECT_TRUE(j.at("ranks")[0].at("simulated").get<bool>());
}

// `info` printed "CUPTI: not recording" without the reason docs/schema.md promises when the
// process never initialized CUDA (the collector records no detail then), and an imported
// device's unknown memory as "0 B", an unknown world size as nothing.
TEST(ReportText, InfoSaysWhyCuptiIsOffAndWhatIsUnknown) {
  TempDir dir;
  const std::string json = dir.path() + "/t.json";
  std::ofstream(json) << R"json({"distributedInfo": {"rank": 1},
    "deviceProperties": [{"id": 0, "name": "GPU X"}], "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
     "args": {"device": 0, "stream": 7, "correlation": 1}}]})json";
  const std::string db = dir.path() + "/t.sqlite";
  ASSERT_EQ(c3scope({"import", json, "-o", db}, dir).exit_code, 0);
  sql(db,
      "INSERT INTO stats (process_id, name, value, detail) SELECT id, 'cupti_status', 0, NULL "
      "FROM process; INSERT OR REPLACE INTO meta (key, value) VALUES ('clean_close', '1');");
  RunResult info = c3scope({"info", db}, dir);
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_NE(info.out.find("CUPTI: not recording (the process never initialized CUDA"),
            std::string::npos)
      << info.out;
  EXPECT_NE(info.out.find("rank 1 (world size unknown)"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("device 0: GPU X, SMs unknown, cc unknown, memory unknown"),
            std::string::npos)
      << info.out;
  EXPECT_EQ(info.out.find(" 0 B"), std::string::npos) << info.out;
}
