// NCCL's vocabulary (c3/common/nccl_types.h). The values against nccl.h's: nccl_types_check.h,
// included here and in each part built with nccl.h.
#include "c3/common/nccl_types.h"

#include <gtest/gtest.h>

#include "c3/common/nccl_types_check.h"

namespace c3::common::nccl {
namespace {

TEST(NcclTypes, DataTypes) {
  EXPECT_STREQ(datatype_name(ncclBfloat16), "bfloat16");
  EXPECT_EQ(datatype_size(ncclBfloat16), 2u);
  EXPECT_STREQ(datatype_tag(ncclBfloat16), "bf16");
  EXPECT_STREQ(datatype_name(ncclFloat32), "float32");
  EXPECT_STREQ(datatype_tag(ncclUint64), "u64");
  EXPECT_EQ(datatype_size(ncclFloat64), 8u);
  EXPECT_EQ(datatype_size(ncclFloat8e5m2), 1u);
  EXPECT_EQ(datatype_size(ncclInt32), 4u);
  for (int bad : {-1, static_cast<int>(ncclNumTypes), 1000}) {
    EXPECT_STREQ(datatype_name(bad), "unknown");
    EXPECT_STREQ(datatype_tag(bad), "unknown");
    EXPECT_EQ(datatype_size(bad), 0u);
    EXPECT_EQ(datatype_info(bad), nullptr);
  }
  static_assert(datatype_size(6) == 2, "usable at compile time (6: ncclFloat16)");
}

TEST(NcclTypes, ReduceOps) {
  EXPECT_STREQ(reduce_op_name(ncclSum), "sum");
  EXPECT_STREQ(reduce_op_name(ncclAvg), "avg");
  EXPECT_STREQ(reduce_op_name(ncclNumOps + 2), "premulsum");
  EXPECT_STREQ(reduce_op_kernel_tag(ncclSum, ncclFloat32), "Sum");
  EXPECT_STREQ(reduce_op_kernel_tag(ncclMax, ncclInt8), "MinMax");
  EXPECT_STREQ(reduce_op_kernel_tag(ncclMin, ncclInt8), "MinMax");
  EXPECT_STREQ(reduce_op_kernel_tag(ncclAvg, ncclBfloat16), "PreMulSum");
  EXPECT_STREQ(reduce_op_kernel_tag(ncclAvg, ncclInt32), "SumPostDiv");
  EXPECT_STREQ(reduce_op_kernel_tag(ncclNumOps, ncclFloat32), "PreMulSum");
}

TEST(NcclTypes, CollectiveNamesRoundTrip) {
  for (int i = 0; i < static_cast<int>(Collective::unknown); ++i) {
    const auto c = static_cast<Collective>(i);
    EXPECT_EQ(collective_from_name(collective_name(c)), c) << collective_name(c);
  }
  EXPECT_EQ(collective_from_name("AllToAll"), Collective::alltoall);
  EXPECT_EQ(collective_from_name("allreduce"), Collective::unknown);
  EXPECT_EQ(collective_from_name(""), Collective::unknown);
  EXPECT_STREQ(collective_name(Collective::unknown), "Unknown");
}

TEST(NcclTypes, BusBandwidthFactorAsNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::allgather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::reducescatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Collective::alltoall, 8), 0.875);
  for (Collective c : {Collective::broadcast, Collective::reduce, Collective::send,
                       Collective::sendrecv, Collective::unknown}) {
    EXPECT_DOUBLE_EQ(busbw_factor(c, 8), 1.0);
  }
  for (int n : {-1, 0, 1}) EXPECT_DOUBLE_EQ(busbw_factor(Collective::allreduce, n), 1.0);
}

TEST(NcclTypes, MessageSizeAsNcclTests) {
  EXPECT_EQ(nccl_tests_bytes(Collective::allgather, 100, 8), 800);
  EXPECT_EQ(nccl_tests_bytes(Collective::reducescatter, 100, 8), 800);
  EXPECT_EQ(nccl_tests_bytes(Collective::allreduce, 100, 8), 100);
  EXPECT_EQ(nccl_tests_bytes(Collective::alltoall, 100, 8), 100);
  EXPECT_EQ(nccl_tests_bytes(Collective::allgather, 100, 0), 100);
  // n times the bytes past int64 is unknown (0), not a wrapped negative (issue 24).
  EXPECT_EQ(nccl_tests_bytes(Collective::allgather, int64_t{1} << 62, 2), 0);
  EXPECT_EQ(nccl_tests_bytes(Collective::reducescatter, INT64_MAX, 8), 0);
  EXPECT_EQ(nccl_tests_bytes(Collective::allgather, (int64_t{1} << 62) - 1, 2), INT64_MAX - 1);
}

}  // namespace
}  // namespace c3::common::nccl
