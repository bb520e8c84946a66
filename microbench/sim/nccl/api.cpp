// The simulated NCCL's front end: every exported function (ncclX and its alias pncclX).
// Communicators, unique ids, error strings, PreMulSum reduction ops, ncclMemAlloc/Free, the
// argument checks NCCL makes, failure injection (C3FAKE_NCCL_FAIL) and groups; the calls that
// move data go to the model driver for communicators made while the simulated node runs, and to
// the fixed-time driver otherwise (sim_nccl.h).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "c3/sim/gpu/failure_injection.h"
#include "c3/sim/gpu/fixed_time.h"
#include "c3/sim/gpu/node.h"
#include "sim_nccl.h"

namespace c3::sim::nccl {
namespace {

constexpr unsigned kConfigMagic = 0xcafebeefU;

struct Registry {
  std::mutex mu;
  std::unordered_set<ncclComm_t> comms;
  std::unordered_set<int> redops;
  int next_redop = ncclNumOps;
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed (exit-time calls stay safe)
  return *r;
}

thread_local std::string t_last_error;
thread_local int t_group_depth = 0;
thread_local std::vector<Call> t_group_calls;

std::atomic<uint64_t> g_unique_counter{0};

ncclUniqueId make_unique_id() {
  ncclUniqueId id{};
  static const uint64_t salt = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  const auto pid = static_cast<uint64_t>(getpid());
  const uint64_t counter = g_unique_counter.fetch_add(1) + 1;
  const uint64_t words[4] = {0xC3FA4ECC1D000000ULL, pid, counter, salt};
  static_assert(sizeof(words) <= sizeof(id.internal));
  std::memcpy(id.internal, words, sizeof(words));
  // The rest: a deterministic function of the words above (like NCCL's opaque socket address).
  uint64_t x = pid * 0x9E3779B97F4A7C15ULL ^ counter ^ salt;
  for (size_t i = sizeof(words); i < sizeof(id.internal); ++i) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    id.internal[i] = static_cast<char>(x >> 56);
  }
  return id;
}

std::string key_of(const ncclUniqueId& id) {
  return std::string(id.internal, sizeof id.internal);
}

bool config_valid(const ncclConfig_t* config) {
  return config == nullptr || (config->magic == kConfigMagic && config->size >= sizeof(size_t));
}

// C3FAKE_NCCL_FAIL: comma-separated NCCL function names, or "all".
bool injected_failure(std::string_view function) {
  return gpu::failure_injected("C3FAKE_NCCL_FAIL", function);
}

// A communicator that is alive (created here and not destroyed/aborted).
bool comm_alive(ncclComm_t comm) {
  if (comm == nullptr) return false;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.comms.count(comm) != 0;
}

// A built-in reduction or one from ncclRedOpCreatePreMulSum that was not destroyed.
bool redop_valid(ncclRedOp_t op) {
  if (op >= ncclSum && op < ncclNumOps) return true;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.redops.count(static_cast<int>(op)) != 0;
}

// A new communicator: the model driver's when the simulated node runs (it joins the clique of
// `key`), else the fixed-time driver's (no rendezvous). Arguments are checked.
ncclResult_t new_comm(const char* fn, ncclComm_t* out, int rank, int nranks, int device,
                      std::string key, const ncclConfig_t* config) {
  auto comm = std::make_unique<ncclComm>();
  comm->rank = rank;
  comm->nranks = nranks;
  comm->device = device;
  comm->key = std::move(key);
  if (gpu::started()) {
    if (ncclResult_t r = model_join(fn, comm.get(), config); r != ncclSuccess) return r;
  }
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.comms.insert(comm.get());
  *out = comm.release();
  return ncclSuccess;
}

ncclResult_t init_rank(const char* fn, ncclComm_t* comm, int nranks, const ncclUniqueId& id,
                       int rank, const ncclConfig_t* config) {
  if (injected_failure(fn)) return fail(ncclInternalError, fn, "injected failure");
  if (comm == nullptr) return fail(ncclInvalidArgument, fn, "comm argument is NULL");
  if (nranks < 1) return fail(ncclInvalidArgument, fn, "invalid nranks");
  if (rank < 0 || rank >= nranks) return fail(ncclInvalidArgument, fn, "rank out of range");
  if (!config_valid(config)) return fail(ncclInvalidArgument, fn, "config not initialized");
  c3fake_cuInit();
  return new_comm(fn, comm, rank, nranks, c3fake_get_device(), key_of(id), config);
}

// The key of the next split/shrink child of `parent` (the same on every rank of the parent).
std::string child_key(ncclComm_t parent, const char* what) {
  return parent->key + "/" + what + std::to_string(parent->children++);
}

const char* error_string(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

bool is_rooted(Func f) {
  return f == Func::broadcast || f == Func::reduce || f == Func::gather || f == Func::scatter;
}
bool is_reduction(Func f) {
  return f == Func::all_reduce || f == Func::reduce || f == Func::reduce_scatter;
}

// Checks a call like NCCL's argument checks, then issues it now or queues it in the open group.
ncclResult_t enqueue(Call c) {
  const char* fn = c.fn;
  if (injected_failure(fn)) return fail(ncclInternalError, fn, "injected failure");
  if (!comm_alive(c.comm)) return fail(ncclInvalidArgument, fn, "invalid communicator");
  if (c.comm->finalized) return fail(ncclInvalidUsage, fn, "communicator is finalized");
  if (common::nccl::datatype_size(c.type) == 0)
    return fail(ncclInvalidArgument, fn, "invalid data type");
  if (is_reduction(c.func) && !redop_valid(c.redop)) {
    return fail(ncclInvalidArgument, fn, "invalid reduction operation");
  }
  const bool p2p = c.func == Func::send || c.func == Func::recv;
  if ((is_rooted(c.func) || p2p) && (c.root < 0 || c.root >= c.comm->nranks)) {
    return fail(ncclInvalidArgument, fn, p2p ? "invalid peer" : "invalid root");
  }
  if (c.count > 0) {
    const bool root = c.comm->rank == c.root;
    bool needs_send = true;
    bool needs_recv = true;
    switch (c.func) {
      case Func::send:
        needs_recv = false;
        break;
      case Func::recv:
        needs_send = false;
        break;
      case Func::broadcast:
      case Func::scatter:
        needs_send = root;
        break;
      case Func::reduce:
      case Func::gather:
        needs_recv = root;
        break;
      default:
        break;
    }
    if ((needs_send && c.send == nullptr) || (needs_recv && c.recv == nullptr)) {
      return fail(ncclInvalidArgument, fn, "NULL buffer");
    }
  }
  if (c.stream == nullptr) c.stream = c3fake_default_stream(c.comm->device);
  if (c3fake_stream_id(c.stream) == 0) return fail(ncclUnhandledCudaError, fn, "invalid stream");
  if (t_group_depth > 0) {
    t_group_calls.push_back(c);
    return ncclSuccess;
  }
  if (c.comm->clique) return model_issue(c);
  fixed_time_issue(c);
  return ncclSuccess;
}

// The outermost ncclGroupEnd: each driver issues its communicators' calls.
ncclResult_t issue_group(const std::vector<Call>& calls) {
  std::vector<Call> fixed_time;
  std::vector<Call> model;
  for (const Call& c : calls) (c.comm->clique ? model : fixed_time).push_back(c);
  if (!fixed_time.empty()) fixed_time_issue_group(fixed_time);
  return model.empty() ? ncclSuccess : model_issue_group(model);
}

}  // namespace

uint64_t payload_bytes(const Call& c) {
  uint64_t bytes = static_cast<uint64_t>(c.count) * common::nccl::datatype_size(c.type);
  switch (c.func) {
    case Func::all_gather:
    case Func::reduce_scatter:
    case Func::all_to_all:
    case Func::gather:
    case Func::scatter:
      bytes *= static_cast<uint64_t>(c.comm->nranks);
      break;
    default:
      break;
  }
  return bytes;
}

ncclResult_t fail(ncclResult_t result, std::string_view function, std::string_view why) {
  t_last_error.assign(function);
  t_last_error.append(": ");
  t_last_error.append(why);
  return result;
}

}  // namespace c3::sim::nccl

using namespace c3::sim::nccl;

extern "C" {

C3_NCCL_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (version == nullptr) return fail(ncclInvalidArgument, __func__, "version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (uniqueId == nullptr) return fail(ncclInvalidArgument, __func__, "uniqueId is NULL");
  *uniqueId = make_unique_id();
  return ncclSuccess;
}

C3_NCCL_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  return error_string(result);
}

C3_NCCL_EXPORT const char* ncclGetLastError(ncclComm_t comm) {
  static_cast<void>(comm);
  return t_last_error.c_str();
}

C3_NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                             int rank) {
  return init_rank(__func__, comm, nranks, commId, rank, nullptr);
}

C3_NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks,
                                                   ncclUniqueId commId, int rank,
                                                   ncclConfig_t* config) {
  return init_rank(__func__, comm, nranks, commId, rank, config);
}

C3_NCCL_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank,
                                                     int nId, ncclUniqueId* commIds,
                                                     ncclConfig_t* config) {
  if (nId < 1 || commIds == nullptr) {
    return fail(ncclInvalidArgument, __func__, "need at least one unique id");
  }
  return init_rank(__func__, newcomm, nranks, commIds[0], myrank, config);
}

C3_NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (comm == nullptr) return fail(ncclInvalidArgument, __func__, "comm argument is NULL");
  if (ndev < 1) return fail(ncclInvalidArgument, __func__, "invalid ndev");
  c3fake_cuInit();
  for (int i = 0; i < ndev; ++i) {
    const int dev = devlist != nullptr ? devlist[i] : i;
    if (dev < 0 || dev >= c3fake_device_count()) {
      return fail(ncclInvalidArgument, __func__, "invalid device in devlist");
    }
  }
  const std::string key = key_of(make_unique_id());
  for (int i = 0; i < ndev; ++i) {
    const int dev = devlist != nullptr ? devlist[i] : i;
    if (ncclResult_t r = new_comm(__func__, &comm[i], i, ndev, dev, key, nullptr);
        r != ncclSuccess) {
      return r;
    }
  }
  return ncclSuccess;
}

// Split: NCCL_SPLIT_NOCOLOR gives NULL; any other color keeps the parent's rank and nranks (as if
// every rank passed the same color and key = rank: in one process the ranks' choices are known
// only once all have called); key is not used.
C3_NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                          ncclConfig_t* config) {
  static_cast<void>(key);
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm)) return fail(ncclInvalidArgument, __func__, "invalid communicator");
  if (newcomm == nullptr) return fail(ncclInvalidArgument, __func__, "newcomm is NULL");
  if (!config_valid(config)) return fail(ncclInvalidArgument, __func__, "config not initialized");
  if (color == NCCL_SPLIT_NOCOLOR) {
    *newcomm = nullptr;
    return ncclSuccess;
  }
  if (color < 0) return fail(ncclInvalidArgument, __func__, "invalid color");
  return new_comm(__func__, newcomm, comm->rank, comm->nranks, comm->device,
                  child_key(comm, ("split" + std::to_string(color) + "/").c_str()), config);
}

C3_NCCL_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList,
                                           int excludeRanksCount, ncclComm_t* newcomm,
                                           ncclConfig_t* config, int shrinkFlags) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm)) return fail(ncclInvalidArgument, __func__, "invalid communicator");
  if (newcomm == nullptr) return fail(ncclInvalidArgument, __func__, "newcomm is NULL");
  if (!config_valid(config)) return fail(ncclInvalidArgument, __func__, "config not initialized");
  if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT) {
    return fail(ncclInvalidArgument, __func__, "invalid shrinkFlags");
  }
  if (excludeRanksCount < 0 || (excludeRanksCount > 0 && excludeRanksList == nullptr)) {
    return fail(ncclInvalidArgument, __func__, "invalid exclude list");
  }
  std::vector<int> excluded(excludeRanksList, excludeRanksList + excludeRanksCount);
  std::sort(excluded.begin(), excluded.end());
  excluded.erase(std::unique(excluded.begin(), excluded.end()), excluded.end());
  int below = 0;
  for (int r : excluded) {
    if (r < 0 || r >= comm->nranks) return fail(ncclInvalidArgument, __func__, "rank out of range");
    if (r == comm->rank) return fail(ncclInvalidArgument, __func__, "own rank is excluded");
    if (r < comm->rank) ++below;
  }
  const int nranks = comm->nranks - static_cast<int>(excluded.size());
  return new_comm(__func__, newcomm, comm->rank - below, nranks, comm->device,
                  child_key(comm, "shrink"), config);
}

C3_NCCL_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm)) return fail(ncclInvalidArgument, __func__, "invalid communicator");
  comm->finalized = true;
  return ncclSuccess;
}

static ncclResult_t destroy_comm(const char* fn, ncclComm_t comm) {
  if (injected_failure(fn)) return fail(ncclInternalError, fn, "injected failure");
  if (comm == nullptr) return ncclSuccess;  // like NCCL
  Registry& r = registry();
  {
    std::lock_guard lock(r.mu);
    if (r.comms.erase(comm) == 0) return fail(ncclInvalidArgument, fn, "invalid communicator");
  }
  if (comm->clique) model_leave(comm);
  delete comm;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return destroy_comm(__func__, comm);
}
C3_NCCL_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return destroy_comm(__func__, comm);
}

C3_NCCL_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm) || count == nullptr) {
    return fail(ncclInvalidArgument, __func__, "invalid argument");
  }
  *count = comm->nranks;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm) || device == nullptr) {
    return fail(ncclInvalidArgument, __func__, "invalid argument");
  }
  *device = comm->device;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm) || rank == nullptr) {
    return fail(ncclInvalidArgument, __func__, "invalid argument");
  }
  *rank = comm->rank;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm) || asyncError == nullptr) {
    return fail(ncclInvalidArgument, __func__, "invalid argument");
  }
  *asyncError = ncclSuccess;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar,
                                                     ncclDataType_t datatype,
                                                     ncclScalarResidence_t residence,
                                                     ncclComm_t comm) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (op == nullptr || scalar == nullptr || !comm_alive(comm) || datatype < ncclInt8 ||
      datatype >= ncclNumTypes ||
      (residence != ncclScalarDevice && residence != ncclScalarHostImmediate)) {
    return fail(ncclInvalidArgument, __func__, "invalid argument");
  }
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  const int id = r.next_redop++;
  r.redops.insert(id);
  *op = static_cast<ncclRedOp_t>(id);
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm)) return fail(ncclInvalidArgument, __func__, "invalid communicator");
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (r.redops.erase(static_cast<int>(op)) == 0) {
    return fail(ncclInvalidArgument, __func__, "not a user-created reduction op");
  }
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (ptr == nullptr) return fail(ncclInvalidArgument, __func__, "ptr is NULL");
  void* mem = nullptr;  // host memory stands in for device memory
  if (posix_memalign(&mem, 4096, std::max<size_t>(size, 1)) != 0) {
    return fail(ncclSystemError, __func__, "out of memory");
  }
  *ptr = mem;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclMemFree(void* ptr) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  std::free(ptr);
  return ncclSuccess;
}

C3_PNCCL_ALIAS(ncclGetVersion)
C3_PNCCL_ALIAS(ncclGetUniqueId)
C3_PNCCL_ALIAS(ncclGetErrorString)
C3_PNCCL_ALIAS(ncclGetLastError)
C3_PNCCL_ALIAS(ncclCommInitRank)
C3_PNCCL_ALIAS(ncclCommInitRankConfig)
C3_PNCCL_ALIAS(ncclCommInitRankScalable)
C3_PNCCL_ALIAS(ncclCommInitAll)
C3_PNCCL_ALIAS(ncclCommSplit)
C3_PNCCL_ALIAS(ncclCommShrink)
C3_PNCCL_ALIAS(ncclCommFinalize)
C3_PNCCL_ALIAS(ncclCommDestroy)
C3_PNCCL_ALIAS(ncclCommAbort)
C3_PNCCL_ALIAS(ncclCommCount)
C3_PNCCL_ALIAS(ncclCommCuDevice)
C3_PNCCL_ALIAS(ncclCommUserRank)
C3_PNCCL_ALIAS(ncclCommGetAsyncError)
C3_PNCCL_ALIAS(ncclRedOpCreatePreMulSum)
C3_PNCCL_ALIAS(ncclRedOpDestroy)
C3_PNCCL_ALIAS(ncclMemAlloc)
C3_PNCCL_ALIAS(ncclMemFree)

C3_NCCL_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                          cudaStream_t stream) {
  return enqueue(
      {__func__, Func::all_reduce, sendbuff, recvbuff, count, datatype, op, 0, comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                          ncclDataType_t datatype, int root, ncclComm_t comm,
                                          cudaStream_t stream) {
  return enqueue({__func__, Func::broadcast, sendbuff, recvbuff, count, datatype, ncclSum, root,
                  comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                      ncclComm_t comm, cudaStream_t stream) {
  return enqueue(
      {__func__, Func::broadcast, buff, buff, count, datatype, ncclSum, root, comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, ncclRedOp_t op, int root,
                                       ncclComm_t comm, cudaStream_t stream) {
  return enqueue(
      {__func__, Func::reduce, sendbuff, recvbuff, count, datatype, op, root, comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                          ncclDataType_t datatype, ncclComm_t comm,
                                          cudaStream_t stream) {
  return enqueue({__func__, Func::all_gather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0,
                  comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff,
                                              size_t recvcount, ncclDataType_t datatype,
                                              ncclRedOp_t op, ncclComm_t comm,
                                              cudaStream_t stream) {
  return enqueue({__func__, Func::reduce_scatter, sendbuff, recvbuff, recvcount, datatype, op, 0,
                  comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                         ncclDataType_t datatype, ncclComm_t comm,
                                         cudaStream_t stream) {
  return enqueue(
      {__func__, Func::all_to_all, sendbuff, recvbuff, count, datatype, ncclSum, 0, comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                       ncclDataType_t datatype, int root, ncclComm_t comm,
                                       cudaStream_t stream) {
  return enqueue(
      {__func__, Func::gather, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                        ncclDataType_t datatype, int root, ncclComm_t comm,
                                        cudaStream_t stream) {
  return enqueue(
      {__func__, Func::scatter, sendbuff, recvbuff, count, datatype, ncclSum, root, comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                     int peer, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(
      {__func__, Func::send, sendbuff, nullptr, count, datatype, ncclSum, peer, comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype,
                                     int peer, ncclComm_t comm, cudaStream_t stream) {
  return enqueue(
      {__func__, Func::recv, nullptr, recvbuff, count, datatype, ncclSum, peer, comm, stream});
}

C3_NCCL_EXPORT ncclResult_t ncclGroupStart() {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  ++t_group_depth;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return fail(ncclInvalidUsage, __func__, "no group is open");
  --t_group_depth;
  if (injected_failure(__func__)) {
    if (t_group_depth == 0) t_group_calls.clear();  // the group's calls are discarded
    return fail(ncclInternalError, __func__, "injected failure");
  }
  if (t_group_depth > 0) return ncclSuccess;
  std::vector<Call> calls;
  calls.swap(t_group_calls);
  return issue_group(calls);
}

C3_PNCCL_ALIAS(ncclAllReduce)
C3_PNCCL_ALIAS(ncclBroadcast)
C3_PNCCL_ALIAS(ncclBcast)
C3_PNCCL_ALIAS(ncclReduce)
C3_PNCCL_ALIAS(ncclAllGather)
C3_PNCCL_ALIAS(ncclReduceScatter)
C3_PNCCL_ALIAS(ncclAlltoAll)
C3_PNCCL_ALIAS(ncclGather)
C3_PNCCL_ALIAS(ncclScatter)
C3_PNCCL_ALIAS(ncclSend)
C3_PNCCL_ALIAS(ncclRecv)
C3_PNCCL_ALIAS(ncclGroupStart)
C3_PNCCL_ALIAS(ncclGroupEnd)

}  // extern "C"
