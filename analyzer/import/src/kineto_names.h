// What the names in a Kineto trace mean in c3scope's vocabulary (CUPTI's copy kinds, NCCL's
// operations and datatypes, the occupancy limits of a compute capability).
#pragma once

#include <string>
#include <string_view>

namespace c3::importer::kineto {

// "Memcpy DtoH (Device -> Pinned)" -> copy kind D2H, src Device, dst Pinned.
void memcpy_kinds(std::string_view name, std::string* kind, std::string* src, std::string* dst);
// PyTorch's collective names (allreduce, all_gather, _allgather_base, reduce_scatter_tensor,
// send, recv, broadcast, alltoall_base, ...) -> NCCL's.
std::string nccl_op(std::string_view s);
// From an NCCL kernel name: ncclKernel_AllReduce_RING_LL_Sum_float(...) -> AllReduce;
// ncclDevKernel_SendRecv(...) -> SendRecv.
std::string op_from_kernel(std::string_view name);
// The bytes of one element of a PyTorch dtype ("Float", "BFloat16", ...).
int dtype_size(std::string_view t);
// The most resident blocks an SM of compute capability major.minor holds.
int max_blocks_per_sm(int major, int minor);

}  // namespace c3::importer::kineto
