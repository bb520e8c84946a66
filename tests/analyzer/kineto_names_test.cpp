// What the names in a Kineto trace mean (analyzer/import/src/kineto_names.h): PyTorch's
// collective names and NCCL's kernel names as the trace's collective.op, in common's vocabulary.
#include "kineto_names.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace c3::importer::kineto {
namespace {

TEST(KinetoNames, PyTorchCollectiveNamesAreNcclOps) {
  const std::pair<const char*, const char*> cases[] = {
      {"allreduce", "AllReduce"},
      {"all_reduce", "AllReduce"},
      {"ALLREDUCE_COALESCED", "AllReduce"},
      {"nccl:all_reduce", "AllReduce"},
      {"_allgather_base", "AllGather"},
      {"all_gather_into_tensor_coalesced", "AllGather"},
      {"reduce_scatter_tensor", "ReduceScatter"},
      {"_reduce_scatter_base", "ReduceScatter"},
      {"all_to_all", "AlltoAll"},
      {"alltoall_base", "AlltoAll"},
      {"broadcast", "Broadcast"},
      {"SendRecv", "SendRecv"},
      {"send", "Send"},
      {"recv", "Recv"},
      {"recvAnySource", "Recv"},
      {"reduce", "Reduce"},
      {"gather", "Gather"},
      {"scatter", "Scatter"},
      {"barrier", "Barrier"},
      {"monitored_barrier", "Barrier"},
      {"custom_op", "custom_op"},
  };
  for (const auto& [pytorch, op] : cases) EXPECT_EQ(nccl_op(pytorch), op) << pytorch;
}

TEST(KinetoNames, NcclKernelNamesGiveTheirOp) {
  EXPECT_EQ(op_from_kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), "AllReduce");
  EXPECT_EQ(op_from_kernel("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long)"), "SendRecv");
  EXPECT_EQ(op_from_kernel("ncclDevKernel_Broadcast"), "Broadcast");
  EXPECT_EQ(op_from_kernel("void gemm_kernel<float>()"), "unknown");
}

TEST(KinetoNames, DtypeSizes) {
  EXPECT_EQ(dtype_size("Float"), 4);
  EXPECT_EQ(dtype_size("BFloat16"), 2);
  EXPECT_EQ(dtype_size("Double"), 8);
  EXPECT_EQ(dtype_size("Float8_e4m3fn"), 1);
  EXPECT_EQ(dtype_size("Int"), 4);
}

}  // namespace
}  // namespace c3::importer::kineto
