// NCCL's vocabulary as c3scope spells it: data types (names, sizes, kernel-name tags), reduction
// ops, collective names, and the message size and bus-bandwidth factor as nccl-tests counts them.
// Keyed by NCCL's ABI values (nccl.h's enums, stable across NCCL 2.x) without including nccl.h,
// so that parts without NCCL's headers (the analyzer, the GUI) share it; parts with nccl.h include
// nccl_types_check.h, which asserts that the values agree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace c3::common::nccl {

inline constexpr int kNumDataTypes = 12;  // ncclNumTypes

// ncclDataType_t's values, in order from 0 (nccl_types_check.h asserts them).
enum class DataType : int {
  int8,
  uint8,
  int32,
  uint32,
  int64,
  uint64,
  float16,
  float32,
  float64,
  bfloat16,
  float8e4m3,
  float8e5m2,
};

// ncclRedOp_t's built-in values, in order from 0 (nccl_types_check.h asserts them); values from
// kNumRedOps on are ops made with ncclRedOpCreatePreMulSum.
enum class RedOp : int { sum, prod, max, min, avg };
inline constexpr int kNumRedOps = 5;  // ncclNumOps

struct DataTypeInfo {
  const char* name;  // the trace's collective.datatype: "bfloat16"
  const char* tag;   // as NCCL's kernel names spell it: "bf16"
  size_t size;       // bytes per element
  bool is_float;
};
// Indexed by ncclDataType_t (ncclInt8 = 0 ... ncclFloat8e5m2 = 11).
inline constexpr DataTypeInfo kDataTypes[kNumDataTypes] = {
    {"int8", "i8", 1, false},          {"uint8", "u8", 1, false},
    {"int32", "i32", 4, false},        {"uint32", "u32", 4, false},
    {"int64", "i64", 8, false},        {"uint64", "u64", 8, false},
    {"float16", "f16", 2, true},       {"float32", "f32", 4, true},
    {"float64", "f64", 8, true},       {"bfloat16", "bf16", 2, true},
    {"float8e4m3", "f8e4m3", 1, true}, {"float8e5m2", "f8e5m2", 1, true},
};

// Whether `datatype` is an ncclDataType_t value. The lookups below test the index, not a pointer:
// GCC cannot fold a pointer's null test in a constant expression under -fsanitize=undefined.
constexpr bool is_datatype(int datatype) {
  return datatype >= 0 && datatype < kNumDataTypes;
}
// nullptr for a value that is no ncclDataType_t.
constexpr const DataTypeInfo* datatype_info(int datatype) {
  return is_datatype(datatype) ? &kDataTypes[datatype] : nullptr;
}
// "bfloat16"; "unknown" for a value that is no ncclDataType_t.
constexpr const char* datatype_name(int datatype) {
  return is_datatype(datatype) ? kDataTypes[datatype].name : "unknown";
}
// 2 for bfloat16; 0 for a value that is no ncclDataType_t.
constexpr size_t datatype_size(int datatype) {
  return is_datatype(datatype) ? kDataTypes[datatype].size : 0;
}
// "bf16" (ncclDevKernel_AllReduce_Sum_bf16_RING_LL); "unknown" for no ncclDataType_t.
constexpr const char* datatype_tag(int datatype) {
  return is_datatype(datatype) ? kDataTypes[datatype].tag : "unknown";
}

struct RedOpInfo {
  const char* name;        // the trace's collective.reduce_op: "sum"
  const char* kernel_tag;  // as NCCL's kernel names spell it: "Sum"
};
// Indexed by ncclRedOp_t. Max and Min share NCCL's MinMax kernels; avg: see reduce_op_kernel_tag.
inline constexpr RedOpInfo kRedOps[kNumRedOps] = {
    {"sum", "Sum"}, {"prod", "Prod"}, {"max", "MinMax"}, {"min", "MinMax"}, {"avg", "SumPostDiv"},
};

// "sum", "prod", "max", "min", "avg"; "premulsum" for an op made with
// ncclRedOpCreatePreMulSum (any other value).
constexpr const char* reduce_op_name(int op) {
  return op >= 0 && op < kNumRedOps ? kRedOps[op].name : "premulsum";
}

// The reduction as NCCL's kernel names spell it (ncclDevKernel_AllReduce_Sum_f32_RING_LL). NCCL
// runs ncclAvg as PreMulSum (by 1/nranks) on floating-point types and as SumPostDiv on integers;
// ops made with ncclRedOpCreatePreMulSum are PreMulSum.
constexpr const char* reduce_op_kernel_tag(int op, int datatype) {
  if (op == static_cast<int>(RedOp::avg)) {
    if (is_datatype(datatype) && kDataTypes[datatype].is_float) return "PreMulSum";
  }
  return op >= 0 && op < kNumRedOps ? kRedOps[op].kernel_tag : "PreMulSum";
}

// NCCL's operations, as the trace's collective.op names them (kCollectiveNames).
enum class Collective {
  allreduce,
  allgather,
  reducescatter,
  alltoall,
  broadcast,
  reduce,
  gather,
  scatter,
  send,
  recv,
  sendrecv,  // a group of Send/Recv moved by one kernel (Kineto's and the sim's name)
  unknown,
};
// Indexed by Collective.
inline constexpr const char* kCollectiveNames[] = {
    "AllReduce", "AllGather", "ReduceScatter", "AlltoAll", "Broadcast", "Reduce",
    "Gather",    "Scatter",   "Send",          "Recv",     "SendRecv",  "Unknown",
};
static_assert(std::size(kCollectiveNames) == static_cast<size_t>(Collective::unknown) + 1);

// "AllReduce", "AlltoAll", "SendRecv", ...; "Unknown".
constexpr const char* collective_name(Collective c) {
  return kCollectiveNames[static_cast<size_t>(c)];
}

// The inverse of collective_name, also reading "AllToAll"; Collective::unknown for any other name.
constexpr Collective collective_from_name(std::string_view name) {
  if (name == "AllToAll") return Collective::alltoall;
  size_t i = 0;
  while (i < static_cast<size_t>(Collective::unknown) && name != kCollectiveNames[i]) ++i;
  return static_cast<Collective>(i);
}

// nccl-tests' bus-bandwidth factor, busbw = algbw * factor: 2(n-1)/n for AllReduce, (n-1)/n for
// AllGather, ReduceScatter and AlltoAll, 1 for the rest and for a single rank.
constexpr double busbw_factor(Collective c, int nranks) {
  if (nranks <= 1) return 1.0;
  const double n = nranks;
  switch (c) {
    case Collective::allreduce:
      return 2.0 * (n - 1) / n;
    case Collective::allgather:
    case Collective::reducescatter:
    case Collective::alltoall:
      return (n - 1) / n;
    case Collective::broadcast:
    case Collective::reduce:
    case Collective::gather:
    case Collective::scatter:
    case Collective::send:
    case Collective::recv:
    case Collective::sendrecv:
    case Collective::unknown:
      break;
  }
  return 1.0;
}

// The message size S as nccl-tests counts it, from the bytes one rank passes (count x type size):
// the whole gathered (scattered) buffer, n times the per-rank one, for AllGather (ReduceScatter);
// the bytes themselves for the rest. 0 (unknown) when n times the bytes is past int64.
constexpr int64_t nccl_tests_bytes(Collective c, int64_t bytes, int nranks) {
  if ((c == Collective::allgather || c == Collective::reducescatter) && nranks > 0) {
    int64_t s = 0;
    return __builtin_mul_overflow(bytes, int64_t{nranks}, &s) ? 0 : s;
  }
  return bytes;
}

}  // namespace c3::common::nccl
