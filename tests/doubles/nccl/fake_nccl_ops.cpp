// Fake NCCL collectives, send/recv and groups. Each op outside a group launches one kernel on
// the fake GPU; inside ncclGroupStart/End the ops are queued and the outermost ncclGroupEnd
// launches one kernel per stream, inside the ncclGroupEnd call.
#include <atomic>
#include <string>
#include <vector>

#include "c3fake/nccl.h"
#include "fake_nccl.h"

namespace c3::fake::nccl {
namespace {

constexpr unsigned kChannels = 2;
constexpr unsigned kThreadsPerBlock = 640;
constexpr int kRegsPerThread = 96;
constexpr uint64_t kBaseNs = 5000;
constexpr uint64_t kBytesPerNs = 50;  // ~50 GB/s
constexpr const char* kArgs = "(ncclDevKernelArgsStorage<4096ul>)";

std::atomic<int> g_launches{0};

enum class Op {
  AllReduce,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  AlltoAll,
  Gather,
  Scatter,
  Send,
  Recv
};

struct Pending {
  void* stream;  // resolved: never NULL
  std::string kernel;
  uint64_t duration_ns;
};

thread_local int t_group_depth = 0;
thread_local std::vector<Pending> t_pending;

size_t type_size(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
    case ncclUint8:
    case ncclFloat8e4m3:
    case ncclFloat8e5m2:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    default:
      return 8;  // ncclInt64, ncclUint64, ncclFloat64
  }
}

const char* type_name(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
      return "i8";
    case ncclUint8:
      return "u8";
    case ncclInt32:
      return "i32";
    case ncclUint32:
      return "u32";
    case ncclInt64:
      return "i64";
    case ncclUint64:
      return "u64";
    case ncclFloat16:
      return "f16";
    case ncclFloat32:
      return "f32";
    case ncclFloat64:
      return "f64";
    case ncclBfloat16:
      return "bf16";
    case ncclFloat8e4m3:
      return "f8e4m3";
    default:
      return "f8e5m2";
  }
}

bool is_float(ncclDataType_t t) {
  return t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16 ||
         t == ncclFloat8e4m3 || t == ncclFloat8e5m2;
}

const char* redop_name(ncclRedOp_t op, ncclDataType_t t) {
  switch (op) {
    case ncclSum:
      return "Sum";
    case ncclProd:
      return "Prod";
    case ncclMax:
    case ncclMin:
      return "MinMax";
    case ncclAvg:
      return is_float(t) ? "PreMulSum" : "SumPostDiv";
    default:
      return "PreMulSum";  // ncclRedOpCreatePreMulSum ops
  }
}

std::string kernel_name(Op op, ncclDataType_t t, ncclRedOp_t redop) {
  std::string name = "ncclDevKernel_";
  switch (op) {
    case Op::AllReduce:
      name += std::string("AllReduce_") + redop_name(redop, t) + "_" + type_name(t) + "_RING_LL";
      break;
    case Op::Reduce:
      name += std::string("Reduce_") + redop_name(redop, t) + "_" + type_name(t) + "_RING_LL";
      break;
    case Op::ReduceScatter:
      name +=
          std::string("ReduceScatter_") + redop_name(redop, t) + "_" + type_name(t) + "_RING_LL";
      break;
    case Op::Broadcast:
      name += "Broadcast_RING_LL";
      break;
    case Op::AllGather:
      name += "AllGather_RING_LL";
      break;
    default:
      name += "SendRecv";
      break;  // AlltoAll, Gather, Scatter are send/recv based
  }
  return name + kArgs;
}

void launch(void* stream, const std::string& name, uint64_t duration_ns) {
  c3fake_launch_kernel(stream, name.c_str(), kChannels, 1, 1, kThreadsPerBlock, 1, 1,
                       kRegsPerThread, 0, 0, duration_ns);
  g_launches.fetch_add(1);
}

struct OpArgs {
  Op op;
  const void* sendbuff;
  const void* recvbuff;
  size_t count;
  ncclDataType_t datatype;
  ncclRedOp_t redop;  // reductions only
  int root;           // rooted collectives; the peer for send/recv
  ncclComm_t comm;
  cudaStream_t stream;
};

bool is_rooted(Op op) {
  return op == Op::Broadcast || op == Op::Reduce || op == Op::Gather || op == Op::Scatter;
}
bool is_reduction(Op op) {
  return op == Op::AllReduce || op == Op::Reduce || op == Op::ReduceScatter;
}

// Validates like NCCL's argument checks, then launches now or queues into the open group.
ncclResult_t enqueue(const char* fn, const OpArgs& a) {
  if (injected_failure(fn)) return fail(ncclInternalError, fn, "injected failure");
  if (!comm_alive(a.comm)) return fail(ncclInvalidArgument, fn, "invalid communicator");
  if (a.comm->finalized) return fail(ncclInvalidUsage, fn, "communicator is finalized");
  if (a.datatype < ncclInt8 || a.datatype >= ncclNumTypes) {
    return fail(ncclInvalidArgument, fn, "invalid data type");
  }
  if (is_reduction(a.op) && !redop_valid(a.redop)) {
    return fail(ncclInvalidArgument, fn, "invalid reduction operation");
  }
  const int nranks = a.comm->nranks;
  const bool p2p = a.op == Op::Send || a.op == Op::Recv;
  if ((is_rooted(a.op) || p2p) && (a.root < 0 || a.root >= nranks)) {
    return fail(ncclInvalidArgument, fn, p2p ? "invalid peer" : "invalid root");
  }
  if (a.count > 0) {
    const bool root = a.comm->rank == a.root;
    bool needs_send = true;
    bool needs_recv = true;
    switch (a.op) {
      case Op::Send:
        needs_recv = false;
        break;
      case Op::Recv:
        needs_send = false;
        break;
      case Op::Broadcast:
      case Op::Scatter:
        needs_send = root;
        break;
      case Op::Reduce:
      case Op::Gather:
        needs_recv = root;
        break;
      default:
        break;
    }
    if ((needs_send && a.sendbuff == nullptr) || (needs_recv && a.recvbuff == nullptr)) {
      return fail(ncclInvalidArgument, fn, "NULL buffer");
    }
  }
  void* stream =
      a.stream != nullptr ? static_cast<void*>(a.stream) : c3fake_default_stream(a.comm->device);
  if (c3fake_stream_id(stream) == 0) return fail(ncclUnhandledCudaError, fn, "invalid stream");

  uint64_t bytes = static_cast<uint64_t>(a.count) * type_size(a.datatype);
  switch (a.op) {  // bytes each rank moves
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::AlltoAll:
    case Op::Gather:
    case Op::Scatter:
      bytes *= static_cast<uint64_t>(nranks);
      break;
    default:
      break;
  }
  Pending p{stream, kernel_name(a.op, a.datatype, a.redop), kBaseNs + bytes / kBytesPerNs};
  if (t_group_depth > 0) {
    t_pending.push_back(std::move(p));
  } else {
    launch(p.stream, p.kernel, p.duration_ns);
  }
  return ncclSuccess;
}

// The outermost ncclGroupEnd: one kernel per stream, in the order streams first appeared.
void launch_group() {
  std::vector<Pending> ops;
  ops.swap(t_pending);
  std::vector<bool> done(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (done[i]) continue;
    std::string name = ops[i].kernel;
    uint64_t duration = 0;
    for (size_t j = i; j < ops.size(); ++j) {
      if (done[j] || ops[j].stream != ops[i].stream) continue;
      done[j] = true;
      duration += ops[j].duration_ns;
      if (ops[j].kernel != name) name = std::string("ncclDevKernel_Generic") + kArgs;
    }
    launch(ops[i].stream, name, duration);
  }
}

}  // namespace
}  // namespace c3::fake::nccl

using namespace c3::fake::nccl;

extern "C" {

C3FAKE_API int c3fake_nccl_launch_count(void) {
  return g_launches.load();
}

C3FAKE_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                         cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::AllReduce, sendbuff, recvbuff, count, datatype, op, 0, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, int root, ncclComm_t comm,
                                         cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::Broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                     ncclComm_t comm, cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::Broadcast, buff, buff, count, datatype, ncclSum, root, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, ncclRedOp_t op, int root,
                                      ncclComm_t comm, cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::Reduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                         ncclDataType_t datatype, ncclComm_t comm,
                                         cudaStream_t stream) {
  return enqueue(
      __func__, {Op::AllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                             ncclDataType_t datatype, ncclRedOp_t op,
                                             ncclComm_t comm, cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::ReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                        ncclDataType_t datatype, ncclComm_t comm,
                                        cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::AlltoAll, sendbuff, recvbuff, count, datatype, ncclSum, 0, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                      ncclDataType_t datatype, int root, ncclComm_t comm,
                                      cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::Gather, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, int root, ncclComm_t comm,
                                       cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::Scatter, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                    int peer, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::Send, sendbuff, nullptr, count, datatype, ncclSum, peer, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                    ncclComm_t comm, cudaStream_t stream) {
  return enqueue(__func__,
                 {Op::Recv, nullptr, recvbuff, count, datatype, ncclSum, peer, comm, stream});
}

C3FAKE_EXPORT ncclResult_t ncclGroupStart() {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  ++t_group_depth;
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return fail(ncclInvalidUsage, __func__, "no group is open");
  --t_group_depth;
  if (injected_failure(__func__)) {
    if (t_group_depth == 0) t_pending.clear();  // the group's ops are discarded
    return fail(ncclInternalError, __func__, "injected failure");
  }
  if (t_group_depth == 0) launch_group();
  return ncclSuccess;
}

C3FAKE_PNCCL_ALIAS(ncclAllReduce, ncclResult_t,
                   (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                    cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclBroadcast, ncclResult_t,
                   (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclBcast, ncclResult_t,
                   (void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclReduce, ncclResult_t,
                   (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int, ncclComm_t,
                    cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclAllGather, ncclResult_t,
                   (const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclReduceScatter, ncclResult_t,
                   (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                    cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclAlltoAll, ncclResult_t,
                   (const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclGather, ncclResult_t,
                   (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclScatter, ncclResult_t,
                   (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclSend, ncclResult_t,
                   (const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclRecv, ncclResult_t,
                   (void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
C3FAKE_PNCCL_ALIAS(ncclGroupStart, ncclResult_t, ())
C3FAKE_PNCCL_ALIAS(ncclGroupEnd, ncclResult_t, ())

}  // extern "C"
