// The analysis pipeline as a user drives it (issue 10), on real traces: `c3scope analyze` opens
// PyTorch traces directly, with the same numbers as through `import`; summaries written with
// --summary give the same report as the traces they came from; steps. (The reports themselves,
// the summary format and the refusals of mismatched summaries are golden cases: tests/golden.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness.h"

namespace fs = std::filesystem;
using namespace c3::e2e;

namespace {

std::string kineto(const std::string& name) {
  return shared_trace("kineto/" + name);
}

void drop_sources(nlohmann::json& j) {
  if (j.is_object()) {
    j.erase("source");
    for (auto& [k, v] : j.items()) drop_sources(v);
  } else if (j.is_array()) {
    for (auto& v : j) drop_sources(v);
  }
}

// The report without what names the inputs (paths differ between the two ways of opening).
nlohmann::json numbers(const std::string& path) {
  nlohmann::json j = nlohmann::json::parse(slurp(path));
  j.erase("inputs");
  drop_sources(j);
  return j;
}

}  // namespace

TEST(PipelineCli, PytorchTracesDirectlyEqualImportThenAnalyze) {
  if (!fs::exists(kineto("hta_sampled_rank-0.json.gz"))) GTEST_SKIP() << "no ../shared/traces here";
  TempDir dir;
  const std::string r0 = kineto("hta_sampled_rank-0.json.gz"),
                    r1 = kineto("hta_sampled_rank-1.json.gz");
  const std::string db = dir.path() + "/ranks.sqlite";
  ASSERT_EQ(c3scope({"import", r0, r1, "-o", db}, dir).exit_code, 0);
  const std::string a = dir.path() + "/a.json", b = dir.path() + "/b.json";
  const std::string ca = dir.path() + "/a.csv", cb = dir.path() + "/b.csv";
  RunResult direct = c3scope({"analyze", r0, r1, "--json", a, "--csv", ca}, dir);
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  RunResult imported = c3scope({"analyze", db, "--json", b, "--csv", cb}, dir);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_TRUE(numbers(a) == numbers(b)) << "the same report either way";
  EXPECT_EQ(slurp(ca), slurp(cb)) << "the streamed CSV rows, in input order";
  EXPECT_EQ(nlohmann::json::parse(slurp(a)).at("ranks")[0].at("source"), r0)
      << "a rank names the file the user gave";
}

// Regression (review of issue 10): a truncated PyTorch trace analyzed directly said nothing of
// the events the importer could not read.
TEST(PipelineCli, TruncatedPytorchTraceIsAnErrorNotSilentlyCut) {
  if (!fs::exists(kineto("hta_nccl_data.json.gz"))) GTEST_SKIP() << "no traces";
  TempDir dir;
  const std::string cut = dir.path() + "/cut.json.gz";
  {
    const std::string whole = slurp(kineto("hta_nccl_data.json.gz"));
    std::ofstream(cut, std::ios::binary) << whole.substr(0, 100000);
  }
  // Issue 12: a damaged compressed stream is an error naming the file and the byte, not a
  // silent cut; --salvage keeps what precedes the damage, and says so.
  RunResult r = c3scope({"analyze", cut}, dir);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("'" + cut + "': damaged compressed data at byte 100000 of 100000"),
            std::string::npos)
      << r.err;
  r = c3scope({"analyze", "--salvage", cut}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("row(s) skipped; the first: " + cut), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the data ends at the damage"), std::string::npos) << r.out;
}

TEST(PipelineCli, SummariesGiveTheSameReport) {
  if (!fs::exists(kineto("hta_trace_diff_control.json.gz"))) GTEST_SKIP() << "no traces";
  TempDir dir;
  const std::string s = dir.path() + "/base.summary.json";
  const std::string a = dir.path() + "/a.json", b = dir.path() + "/b.json",
                    c = dir.path() + "/c.json";
  const std::vector<std::string> in = {kineto("hta_sampled_rank-0.json.gz"),
                                       kineto("hta_sampled_rank-1.json.gz"),
                                       kineto("hta_trace_diff_control.json.gz")};
  std::vector<std::string> args = {"analyze"};
  args.insert(args.end(), in.begin(), in.end());
  for (const char* x : {"--summary", s.c_str(), "--json", a.c_str()}) args.emplace_back(x);
  RunResult first = c3scope(args, dir);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto sj = nlohmann::json::parse(slurp(s));
  ASSERT_EQ(sj.at("ranks").size(), 3u);
  // (schema 2 carries every kernel name's durations for compare: 776 kB here, ~5x less gzipped;
  // schema 4 adds launch statistics and each step's critical-path chains: 1.05 MB)
  EXPECT_LT(fs::file_size(s), 1536u * 1024) << "small enough to keep as a CI baseline";
  RunResult again = c3scope({"analyze", s, "--json", b}, dir);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(numbers(a) == numbers(b)) << "the same report from the summary";
  EXPECT_EQ(first.out.substr(first.out.find('\n')), again.out.substr(again.out.find('\n')))
      << "the same text report after its first line (which counts inputs)";
  // Compressed (a name ending in .gz), read back the same.
  const std::string gz = dir.path() + "/base.summary.json.gz", d = dir.path() + "/d.json";
  ASSERT_EQ(c3scope({"analyze", s, "--summary", gz}, dir).exit_code, 0);
  EXPECT_LT(fs::file_size(gz) * 3, fs::file_size(s));
  RunResult fromgz = c3scope({"analyze", gz, "--json", d}, dir);
  ASSERT_EQ(fromgz.exit_code, 0) << fromgz.err;
  EXPECT_TRUE(numbers(a) == numbers(d)) << "the same report from the compressed summary";
  // Re-saved by a tool that sorts keys (nlohmann::json does): "schema" moves to the end.
  const std::string sorted = dir.path() + "/sorted.summary.json", e = dir.path() + "/e.json";
  std::ofstream(sorted) << nlohmann::json::parse(slurp(s)).dump();
  RunResult fromsorted = c3scope({"analyze", sorted, "--json", e}, dir);
  ASSERT_EQ(fromsorted.exit_code, 0) << fromsorted.err;
  EXPECT_TRUE(numbers(a) == numbers(e)) << "the same report from a key-sorted summary";
  // Summaries and traces mixed: a summary of ranks 0-1 plus the third trace.
  const std::string s01 = dir.path() + "/01.summary.json";
  ASSERT_EQ(c3scope({"analyze", in[0], in[1], "--summary", s01}, dir).exit_code, 0);
  RunResult mixed = c3scope({"analyze", s01, in[2], "--json", c}, dir);
  ASSERT_EQ(mixed.exit_code, 0) << mixed.err;
  EXPECT_TRUE(numbers(a) == numbers(c)) << "the same report from a summary and a trace";
}

// Steps from ProfilerStep#N annotations (the text tables, and --step, are the golden case
// real_kineto_steps): in --json, each rank's step is its range, and inside a step the span
// invariant holds for the clipped activities.
TEST(PipelineCli, StepsJsonHoldsTheSpanInvariantPerRankAndStep) {
  if (!fs::exists(kineto("hta_trace_diff_control.json.gz"))) GTEST_SKIP() << "no traces";
  TempDir dir;
  const std::string j = dir.path() + "/r.json";
  RunResult r =
      c3scope({"analyze", kineto("hta_trace_diff_control.json.gz"), "--steps", "--json", j}, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rep = nlohmann::json::parse(slurp(j));
  const auto& steps = rep.at("steps");
  EXPECT_EQ(steps.at("source"), "ProfilerStep#N");
  ASSERT_EQ(steps.at("job").size(), 6u);
  ASSERT_EQ(steps.at("per_rank").size(), 6u);
  for (const auto& s : steps.at("per_rank")) {
    EXPECT_EQ(s.at("step_ns").get<int64_t>(),
              s.at("end_ns").get<int64_t>() - s.at("start_ns").get<int64_t>());
    EXPECT_EQ(s.at("span_ns").get<int64_t>(),
              s.at("compute_ns").get<int64_t>() + s.at("exposed_comm_ns").get<int64_t>() +
                  s.at("exposed_memcpy_ns").get<int64_t>() + s.at("idle_ns").get<int64_t>() +
                  s.at("exposed_other_ns").get<int64_t>());
  }
}

// A PyTorch trace exports without an import step (`info` on PyTorch and Nsight files directly:
// the golden cases real_kineto_nccl_data and real_nsys_pipit).
TEST(PipelineCli, ExportOpensAPytorchTraceDirectly) {
  if (!fs::exists(kineto("hta_nccl_data.json.gz"))) GTEST_SKIP() << "no traces";
  TempDir dir;
  const std::string out = dir.path() + "/nccl.perfetto.json";
  RunResult ex = c3scope({"export", kineto("hta_nccl_data.json.gz"), "-o", out}, dir);
  ASSERT_EQ(ex.exit_code, 0) << ex.err;
  const auto j = nlohmann::json::parse(slurp(out));
  EXPECT_GT(j.at("traceEvents").size(), 100u);
}
