// The controlled-experiment metrics of docs/metrics.md on fixed inputs.
#include "c3/bench/metrics.h"

#include <gtest/gtest.h>

using namespace c3::bench;

TEST(Metrics, StatsMedianMinMax) {
  Stats s = stats_of({5, 1, 3});
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_EQ(s.n, 3);
  EXPECT_DOUBLE_EQ(stats_of({4, 1, 2, 3}).median, 2.5);
  EXPECT_EQ(stats_of({}).n, 0);
}

TEST(Metrics, ScenarioThresholdIs15Percent) {
  EXPECT_EQ(scenario_of(116, 100), Scenario::compute_long);
  EXPECT_EQ(scenario_of(114, 100), Scenario::balanced);
  EXPECT_EQ(scenario_of(100, 114), Scenario::balanced);
  EXPECT_EQ(scenario_of(100, 116), Scenario::comm_long);
  EXPECT_STREQ(scenario_name(Scenario::comm_long), "comm-long");
}

TEST(Metrics, C3MetricsOnFixedInputs) {
  // T_comp 100, T_comm 50 alone; 120 and 60 concurrent; T_c3 130; T_serial 150.
  C3Metrics m = c3_metrics(100, 50, 120, 60, 130, 150);
  EXPECT_DOUBLE_EQ(m.compute_slowdown, 0.2);
  ASSERT_TRUE(m.comm_slowdown);
  EXPECT_DOUBLE_EQ(*m.comm_slowdown, 0.2);
  EXPECT_DOUBLE_EQ(m.ideal_speedup, 1.5);
  EXPECT_DOUBLE_EQ(m.realized_speedup, 150.0 / 130.0);
  EXPECT_DOUBLE_EQ(m.fraction_of_ideal, (150.0 / 130.0 - 1) / 0.5);
  EXPECT_DOUBLE_EQ(m.realized_over_ideal, (150.0 / 130.0) / 1.5);
  EXPECT_EQ(m.scenario, Scenario::compute_long);
  // Perfect overlap: realized = ideal, fraction 1; none: realized 1, fraction 0.
  C3Metrics p = c3_metrics(100, 100, 100, 100, 100, 200);
  EXPECT_DOUBLE_EQ(p.fraction_of_ideal, 1.0);
  EXPECT_DOUBLE_EQ(p.realized_over_ideal, 1.0);
  C3Metrics none = c3_metrics(100, 100, 100, 100, 200, 200);
  EXPECT_DOUBLE_EQ(none.fraction_of_ideal, 0.0);
  EXPECT_DOUBLE_EQ(none.realized_over_ideal, 0.5);
}

TEST(Metrics, DecompositionLossAndBandwidth) {
  EXPECT_NEAR(decomposition_loss(110, 100), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(decomposition_loss(100, 100), 0.0);
  EXPECT_DOUBLE_EQ(algbw(int64_t{1} << 30, 0.5), static_cast<double>(int64_t{1} << 31));
  EXPECT_DOUBLE_EQ(algbw(100, 0), 0);
}
