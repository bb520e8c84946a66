// c3bench's launch knobs named one way (c3/common/bench_knobs.h): the names c3bench writes in
// its labels, JSON and trace rows, and what reads them back.
#include "c3/common/bench_knobs.h"

#include <gtest/gtest.h>

namespace c3::common {
namespace {

TEST(BenchKnobs, NamesAndBack) {
  EXPECT_STREQ(stream_priority_name(StreamPriority::equal), "equal");
  EXPECT_STREQ(stream_priority_name(StreamPriority::comm_high), "comm_high");
  EXPECT_STREQ(stream_priority_name(StreamPriority::comm_low), "comm_low");
  EXPECT_STREQ(launch_order_name(LaunchOrder::compute_first), "compute_first");
  EXPECT_STREQ(launch_order_name(LaunchOrder::comm_first), "comm_first");
  for (auto p : {StreamPriority::equal, StreamPriority::comm_high, StreamPriority::comm_low})
    EXPECT_EQ(stream_priority_from_name(stream_priority_name(p)), p);
  for (auto o : {LaunchOrder::compute_first, LaunchOrder::comm_first})
    EXPECT_EQ(launch_order_from_name(launch_order_name(o)), o);
}

TEST(BenchKnobs, OtherTextIsNoName) {
  for (const char* s : {"", "high", "Comm_High", "comm_high ", "comm"})
    EXPECT_FALSE(stream_priority_from_name(s).has_value()) << s;
  for (const char* s : {"", "first", "comm_first\n", "COMPUTE_FIRST"})
    EXPECT_FALSE(launch_order_from_name(s).has_value()) << s;
  static_assert(stream_priority_from_name("comm_low") == StreamPriority::comm_low);
}

}  // namespace
}  // namespace c3::common
