// For parts built with NCCL's nccl.h (the collector, the simulated NCCL, the test double):
// compile-time proof that nccl_types.h's values are nccl.h's. Include it in one source file of
// each such part.
#pragma once

#include <nccl.h>

#include "c3/common/nccl_types.h"

namespace c3::common::nccl::check {

constexpr bool same(DataType a, ncclDataType_t b) {
  return static_cast<int>(a) == static_cast<int>(b);
}
constexpr bool same(RedOp a, ncclRedOp_t b) {
  return static_cast<int>(a) == static_cast<int>(b);
}

static_assert(same(DataType::int8, ncclInt8) && same(DataType::uint8, ncclUint8) &&
                  same(DataType::int32, ncclInt32) && same(DataType::uint32, ncclUint32) &&
                  same(DataType::int64, ncclInt64) && same(DataType::uint64, ncclUint64) &&
                  same(DataType::float16, ncclFloat16) && same(DataType::float32, ncclFloat32) &&
                  same(DataType::float64, ncclFloat64) && same(DataType::bfloat16, ncclBfloat16) &&
                  same(DataType::float8e4m3, ncclFloat8e4m3) &&
                  same(DataType::float8e5m2, ncclFloat8e5m2) && kNumDataTypes == ncclNumTypes,
              "c3/common/nccl_types.h: DataType differs from nccl.h's ncclDataType_t");
static_assert(same(RedOp::sum, ncclSum) && same(RedOp::prod, ncclProd) &&
                  same(RedOp::max, ncclMax) && same(RedOp::min, ncclMin) &&
                  same(RedOp::avg, ncclAvg) && kNumRedOps == ncclNumOps,
              "c3/common/nccl_types.h: RedOp differs from nccl.h's ncclRedOp_t");

}  // namespace c3::common::nccl::check
