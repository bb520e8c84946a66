#include "nccl_names.h"

#include <gtest/gtest.h>

using namespace c3::collector;

TEST(NcclNames, DatatypesAndSizes) {
  EXPECT_STREQ(datatype_name(ncclBfloat16), "bfloat16");
  EXPECT_EQ(datatype_size(ncclBfloat16), 2u);
  EXPECT_STREQ(datatype_name(ncclFloat32), "float32");
  EXPECT_EQ(datatype_size(ncclFloat64), 8u);
  EXPECT_EQ(datatype_size(ncclFloat8e4m3), 1u);
  EXPECT_STREQ(datatype_name(static_cast<ncclDataType_t>(ncclNumTypes)), "unknown");
  EXPECT_EQ(datatype_size(static_cast<ncclDataType_t>(ncclNumTypes)), 0u);
}

TEST(NcclNames, ReduceOps) {
  EXPECT_STREQ(reduce_op_name(ncclSum), "sum");
  EXPECT_STREQ(reduce_op_name(ncclAvg), "avg");
  EXPECT_STREQ(reduce_op_name(static_cast<ncclRedOp_t>(ncclNumOps + 2)), "premulsum");
}

TEST(NcclNames, CommIdIsStableAndDistinct) {
  ncclUniqueId a{}, b{};
  a.internal[0] = 1;
  b.internal[0] = 2;
  EXPECT_EQ(hex_id(fnv1a(&a, sizeof a)), hex_id(fnv1a(&a, sizeof a)));
  EXPECT_NE(fnv1a(&a, sizeof a), fnv1a(&b, sizeof b));
  EXPECT_EQ(hex_id(0xabcdefULL), "0000000000abcdef");
  // FNV-1a reference value for the empty input.
  EXPECT_EQ(fnv1a("", 0), 1469598103934665603ULL);
}
