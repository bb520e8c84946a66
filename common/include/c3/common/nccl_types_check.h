// For parts built with NCCL's nccl.h (the collector, the simulated NCCL):
// compile-time proof that nccl_types.h's tables are keyed by nccl.h's values. Include it in one
// source file of each such part.
#pragma once

#include <nccl.h>

#include <string_view>

#include "c3/common/nccl_types.h"

namespace c3::common::nccl::check {

constexpr bool is(const char* a, std::string_view b) {
  return std::string_view(a) == b;
}

static_assert(
    kNumDataTypes == ncclNumTypes && is(datatype_name(ncclInt8), "int8") &&
        is(datatype_name(ncclUint8), "uint8") && is(datatype_name(ncclInt32), "int32") &&
        is(datatype_name(ncclUint32), "uint32") && is(datatype_name(ncclInt64), "int64") &&
        is(datatype_name(ncclUint64), "uint64") && is(datatype_name(ncclFloat16), "float16") &&
        is(datatype_name(ncclFloat32), "float32") && is(datatype_name(ncclFloat64), "float64") &&
        is(datatype_name(ncclBfloat16), "bfloat16") &&
        is(datatype_name(ncclFloat8e4m3), "float8e4m3") &&
        is(datatype_name(ncclFloat8e5m2), "float8e5m2") &&
        static_cast<int>(DataType::int8) == ncclInt8 &&
        static_cast<int>(DataType::float16) == ncclFloat16 &&
        static_cast<int>(DataType::float32) == ncclFloat32 &&
        static_cast<int>(DataType::bfloat16) == ncclBfloat16 &&
        static_cast<int>(DataType::float8e5m2) == ncclFloat8e5m2 && kNumRedOps == ncclNumOps &&
        static_cast<int>(RedOp::sum) == ncclSum && static_cast<int>(RedOp::prod) == ncclProd &&
        static_cast<int>(RedOp::max) == ncclMax && static_cast<int>(RedOp::min) == ncclMin &&
        static_cast<int>(RedOp::avg) == ncclAvg,
    "c3/common/nccl_types.h differs from nccl.h's ncclDataType_t or ncclRedOp_t");

}  // namespace c3::common::nccl::check
