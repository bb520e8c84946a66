// Interval algebra golden cases: unsorted, nested, touching, identical and zero-length inputs.
#include "c3/analyzer/metrics/intervals.h"

#include <gtest/gtest.h>

using namespace c3::analyzer;

TEST(Intervals, UnionMergesNestedTouchingAndUnsorted) {
  EXPECT_EQ(union_of({{10, 20}, {0, 5}, {12, 15}, {20, 30}, {5, 5}, {40, 35}}),
            (Intervals{{0, 5}, {10, 30}}));
  EXPECT_EQ(union_of({{0, 10}, {0, 10}, {0, 10}}), (Intervals{{0, 10}}));
  EXPECT_EQ(union_of({}), Intervals{});
  EXPECT_EQ(union_of({{3, 3}}), Intervals{}) << "zero-length intervals have no time";
  EXPECT_EQ(length(union_of({{0, 10}, {5, 15}, {20, 25}})), 20);
  // Touching intervals merge: [0,5) and [5,9) are one run.
  EXPECT_EQ(union_of({{5, 9}, {0, 5}}), (Intervals{{0, 9}}));
}

TEST(Intervals, IntersectAndSubtract) {
  const Intervals a{{0, 10}, {20, 30}, {40, 50}};
  const Intervals b{{5, 25}, {45, 60}};
  EXPECT_EQ(intersect(a, b), (Intervals{{5, 10}, {20, 25}, {45, 50}}));
  EXPECT_EQ(subtract(a, b), (Intervals{{0, 5}, {25, 30}, {40, 45}}));
  EXPECT_EQ(subtract(b, a), (Intervals{{10, 20}, {50, 60}}));
  EXPECT_EQ(intersect(a, {}), Intervals{});
  EXPECT_EQ(subtract(a, {}), a);
  EXPECT_EQ(subtract({}, a), Intervals{});
  // b inside a: a split in two; a equal to b: nothing left.
  EXPECT_EQ(subtract({{0, 100}}, {{10, 20}, {30, 40}}), (Intervals{{0, 10}, {20, 30}, {40, 100}}));
  EXPECT_EQ(subtract({{0, 100}}, {{0, 100}}), Intervals{});
  // Touching is not overlapping.
  EXPECT_EQ(intersect({{0, 10}}, {{10, 20}}), Intervals{});
}

TEST(Intervals, OverlapWithOneInterval) {
  const Intervals m{{0, 10}, {20, 30}, {40, 50}};
  EXPECT_EQ(overlap_with({5, 45}, m), 5 + 10 + 5);
  EXPECT_EQ(overlap_with({10, 20}, m), 0);
  EXPECT_EQ(overlap_with({-5, 100}, m), 30);
  EXPECT_EQ(overlap_with({25, 25}, m), 0);
  EXPECT_EQ(overlap_with({60, 70}, m), 0);
  EXPECT_EQ(clip(m, {{5, 25}}), (Intervals{{5, 10}, {20, 25}}));
}
