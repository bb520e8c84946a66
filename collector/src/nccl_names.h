// NCCL's enums as the trace schema spells them (c3/common/nccl_types.h, keyed by nccl.h's values,
// which nccl_names.cpp asserts), and the communicator id hash. Pure functions, unit-tested in
// tests/collector/nccl_names_test.cpp.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "c3/common/nccl_types.h"

namespace c3::collector {

using common::nccl::datatype_name;   // "bfloat16"; "unknown"
using common::nccl::datatype_size;   // 0 for an unknown type
using common::nccl::reduce_op_name;  // built-in ops by name; "premulsum" past ncclNumOps

// 64-bit FNV-1a: a stable communicator id from the bytes of an ncclUniqueId (every rank of the
// communicator was handed the same bytes).
uint64_t fnv1a(const void* data, size_t n);
std::string hex_id(uint64_t v);  // 16 lowercase hex digits

}  // namespace c3::collector
