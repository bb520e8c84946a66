// Names and sizes for NCCL enums as the trace schema spells them, and the communicator id hash.
// Pure functions, unit-tested in tests/collector/nccl_names_test.cpp.
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace c3::collector {

const char* datatype_name(ncclDataType_t t);
size_t datatype_size(ncclDataType_t t);  // 0 for an unknown type
// Built-in ops by name; values past ncclNumOps are ops made with ncclRedOpCreatePreMulSum.
const char* reduce_op_name(ncclRedOp_t op);

// 64-bit FNV-1a: a stable communicator id from the bytes of an ncclUniqueId (every rank of the
// communicator was handed the same bytes).
uint64_t fnv1a(const void* data, size_t n);
std::string hex_id(uint64_t v);  // 16 lowercase hex digits

}  // namespace c3::collector
