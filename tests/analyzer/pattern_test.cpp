// Regular expressions over trace data (pattern.h, RE2): hostile names cost a linear scan.
#include "c3/analyzer/metrics/pattern.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "c3/analyzer/metrics/classify.h"

using namespace c3::analyzer;

// Regression (issue 10): a kernel name of 30,000 characters or more overflowed the stack in
// std::regex_search (recursive _Executor::_M_dfs) from Rules::classify.
TEST(Pattern, MegabyteKernelNameDoesNotOverflowTheStack) {
  const Rules r = Rules::defaults();
  std::string huge(1 << 20, 'a');
  EXPECT_EQ(r.classify(huge, Kind::kernel), Class::compute);
  EXPECT_EQ(r.classify("ncclDevKernel_" + huge, Kind::kernel), Class::communication);
  EXPECT_EQ(r.classify(huge + "ncclKernel_AllGather", Kind::kernel), Class::communication)
      << ".*ncclKernel.* scans the whole name";
  EXPECT_EQ(r.classify(huge + "Memcpy", Kind::kernel), Class::memory);
  // A rule whose backtracking cost would be exponential in a backtracking engine.
  const Rules f = Rules::parse("compute (a|aa)*b\nother (x+x+)+y\n", "rules.txt");
  EXPECT_EQ(f.classify(huge + "b", Kind::kernel), Class::compute);
  EXPECT_EQ(f.classify(std::string(1 << 20, 'x'), Kind::kernel), Class::compute)
      << "no rule matches: the kernel default";
}

TEST(Pattern, SearchAndPrefix) {
  const Pattern p = Pattern::compile("Step#1[0-9]", "--step");
  EXPECT_TRUE(p.search("ProfilerStep#12"));
  EXPECT_FALSE(p.search("ProfilerStep#2"));
  EXPECT_FALSE(p.match_prefix("ProfilerStep#12"));
  EXPECT_TRUE(Pattern::compile("Profiler", "x").match_prefix("ProfilerStep#12"));
  EXPECT_TRUE(p.search(std::string(1 << 20, '#') + "Step#19"));
  EXPECT_FALSE(Pattern().search("anything")) << "an empty Pattern matches nothing";
}

TEST(Pattern, BadPatternsNameWhereAndWhy) {
  try {
    Rules::parse("# rules\ncompute ok.*\nmemory (unclosed\n", "my.rules");
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("my.rules:3: bad regular expression '(unclosed'"), std::string::npos) << m;
    EXPECT_NE(m.find("missing )"), std::string::npos) << "RE2's reason: " << m;
  }
  EXPECT_THROW(Pattern::compile("a{1001}", "--range"), std::invalid_argument)
      << "repeat counts beyond RE2's limit";
  try {
    Pattern::compile("(?<=x)y", "--step");
    FAIL() << "lookbehind accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--step: bad regular expression '(?<=x)y': ", 0), 0u)
        << e.what();
  }
}
