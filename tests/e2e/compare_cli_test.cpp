// `c3scope compare` as CI drives it (issue 11): the project's own self-test (a deterministic
// c3bench run on the simulated node against the committed baseline summary), a seeded regression
// caught with exit code 1, JUnit that an XML parser reads, and usage errors with exit code 2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

#include "harness.h"

using namespace c3::e2e;

namespace {

std::string baseline() {
  return std::string(C3_SOURCE_DIR) + "/tests/data/compare/c3bench-sim.summary.json";
}

std::string sim_run(const TempDir& dir) {
  std::string db = dir.path() + "/sim.sqlite";
  RunResult r = run({c3bench_path(), "--backend", "sim", "--compute", "gemm:2048x2048x2048",
                     "--comm", "allreduce:16M..64M", "--db", db},
                    dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return db;
}

}  // namespace

TEST(CompareCli, SimRunMatchesTheCommittedBaseline) {
  TempDir dir;
  const std::string db = sim_run(dir);
  const std::string junit = dir.path() + "/r.xml", md = dir.path() + "/r.md",
                    json = dir.path() + "/r.json";
  RunResult r =
      c3scope({"compare", baseline(), db, "--junit", junit, "--md", md, "--json", json}, dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j.at("schema"), "c3scope-compare/1");
  EXPECT_EQ(j.at("verdict"), "unchanged");
  EXPECT_EQ(j.at("metrics").size(), 15u);
  EXPECT_EQ(slurp(md).rfind("**c3scope compare**", 0), 0u);
  // The JUnit file parses as XML and has the common schema's shape.
  const std::string check =
      "python3 -c \"import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
      "assert r.tag == 'testsuites'; s = r.findall('testsuite'); assert s; "
      "c = [t for x in s for t in x.findall('testcase')]; assert len(c) == 15; "
      "assert all(t.get('name') and t.get('classname') for t in c)\" " +
      junit;
  EXPECT_EQ(std::system(check.c_str()), 0);
}

TEST(CompareCli, SeededRegressionIsCaught) {
  TempDir dir;
  nlohmann::json j = nlohmann::json::parse(slurp(baseline()));
  // The 32M case: 20% slower concurrent time, 5 points less of the ideal.
  for (auto& b : j["ranks"][0]["bench"]) {
    if (b["label"].get<std::string>().find("allreduce:32M") == std::string::npos) continue;
    b["t_c3"] = b["t_c3"].get<double>() * 1.2;
    b["fraction_of_ideal"] = b["fraction_of_ideal"].get<double>() - 0.06;
  }
  const std::string bad = dir.path() + "/bad.json", junit = dir.path() + "/r.xml";
  std::ofstream(bad) << j.dump();
  RunResult r = c3scope({"compare", baseline(), bad, "--junit", junit}, dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("REGRESSION   t_c3[gemm:2048x2048x2048:bf16 + allreduce:32M]"),
            std::string::npos)
      << r.out;
  const std::string x = slurp(junit);
  EXPECT_NE(x.find("<failure type=\"regression\""), std::string::npos);
  EXPECT_NE(x.find("change +20.0%"), std::string::npos) << "the numbers are in the failure text";
}

TEST(CompareCli, UsageErrorsExitTwo) {
  TempDir dir;
  const std::string b = dir.path() + "/budgets.txt";
  std::ofstream(b) << "# ok\nexposed_comm_ms <= 12\nbusbw_gbps[AllReduce 1G..2G] >= fast\n";
  RunResult r = c3scope({"compare", "--budget", b, baseline()}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(b + ":3: 'fast' is not a number"), std::string::npos) << r.err;
  r = c3scope({"compare", baseline()}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("one run given"), std::string::npos) << r.err;
  r = c3scope({"compare", baseline(), baseline(), "--threshold", "five"}, dir);
  EXPECT_EQ(r.exit_code, 2);
  const std::string copy = dir.path() + "/base.json";
  std::ofstream(copy) << slurp(baseline());
  r = c3scope({"compare", baseline(), copy, "--json", copy}, dir);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is an input"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(copy), slurp(baseline())) << "the input is untouched";
  // Budgets alone: a broken one exits 1.
  std::ofstream(b) << "t_c3_us[gemm:2048x2048x2048:bf16 + allreduce:64M] <= 100\n";
  r = c3scope({"compare", "--budget", b, baseline()}, dir);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}
