// HTA's critical path (why/hta_path.h) on generated traces: what a golden file cannot hold (a
// nesting 100,000 deep, walked without recursion), and the refusals. The model's numbers are
// checked against HTA 0.5.0 by the golden cases why_hta_critical_path and
// real_kineto_hta_critical_path, and by scripts/hta-check.
#include "c3/analyzer/why/hta_path.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace fs = std::filesystem;
using c3::analyzer::hta_critical_path;

namespace {

class HtaPathFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("c3-hta-path-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  fs::path dir_;
};

std::string op(const std::string& name, int64_t ts, int64_t dur) {
  return R"({"ph":"X","cat":"cpu_op","name":")" + name + R"(","pid":1,"tid":1,"ts":)" +
         std::to_string(ts) + R"(,"dur":)" + std::to_string(dur) + "}";
}

}  // namespace

// Ops nested n deep, op k over [k, 2n - k]: the path enters each (1 us each), runs the innermost
// (2 us) and leaves each (1 us each): the outermost op's 2n us, every edge on it.
TEST_F(HtaPathFile, DeepNestingIsWalkedWithoutRecursion) {
  constexpr int64_t kDepth = 100000;
  const int64_t n = kDepth;
  std::string text = R"({"traceEvents":[)" + op("ProfilerStep#1", 0, 2 * n);
  for (int64_t k = 0; k < n; ++k) text += "," + op("aten::op", k, 2 * n - 2 * k);
  text += "]}";
  const c3::analyzer::HtaPath p = hta_critical_path(write("deep.json", text));
  EXPECT_EQ(p.step, "ProfilerStep#1");
  EXPECT_EQ(p.refused, "");
  // The ProfilerStep cpu_op is a node too, the outermost: n + 1 nested ops, 2n + 1 edges
  // between their 2n + 2 nodes. Its end is reached from op 0's end by an edge of no weight, and
  // networkx's path ends at the first node of the longest distance: op 0's end, one edge short.
  EXPECT_DOUBLE_EQ(p.length_us, 2.0 * n);
  EXPECT_DOUBLE_EQ(p.cpu_us, 2.0 * n);
  EXPECT_EQ(p.path_edges, 2 * n);
  EXPECT_EQ(p.nodes, 2 * (n + 1));
}

TEST_F(HtaPathFile, RefusesWhatItCannotAnswer) {
  const std::string one = write("one.json", R"({"traceEvents":[)" + op("ProfilerStep#1", 0, 10) +
                                                "," + op("aten::mm", 1, 5) + "]}");
  // The ProfilerStep is a cpu_op here, so a node: the top-level op, 10 us. (HTA 0.5.0 itself
  // stops on a trace without any stream argument: KeyError 'stream'.)
  EXPECT_DOUBLE_EQ(hta_critical_path(one).length_us, 10);
  // No second step; no step of another name; not JSON; cut short.
  EXPECT_THROW(hta_critical_path(one, 1), std::invalid_argument);
  EXPECT_THROW(hta_critical_path(one, 0, "Iteration"), std::invalid_argument);
  EXPECT_THROW(hta_critical_path(write("text.json", "not json")), std::invalid_argument);
  EXPECT_THROW(
      hta_critical_path(write("cut.json", R"({"traceEvents":[)" + op("ProfilerStep#1", 0, 10))),
      std::invalid_argument);
  EXPECT_THROW(hta_critical_path((dir_ / "missing.json").string()), std::invalid_argument);
}
