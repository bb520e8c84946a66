// Fake NCCL communicators: init (never blocks: no rendezvous), split, shrink, finalize, destroy,
// queries, unique ids, error strings, PreMulSum reduction ops and ncclMemAlloc/Free.
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

#include "c3fake/gpu.h"
#include "fake_nccl.h"

namespace c3::fake::nccl {
namespace {

constexpr uint32_t kCommMagic = 0xC3C0CC11U;
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

ncclComm_t new_comm(int rank, int nranks, int device, const ncclUniqueId& id) {
  auto* comm = new ncclComm{kCommMagic, rank, nranks, device, id, false};
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  r.comms.insert(comm);
  return comm;
}

bool config_valid(const ncclConfig_t* config) {
  return config == nullptr || (config->magic == kConfigMagic && config->size >= sizeof(size_t));
}

ncclResult_t init_rank(const char* fn, ncclComm_t* comm, int nranks, const ncclUniqueId& id,
                       int rank, const ncclConfig_t* config) {
  if (injected_failure(fn)) return fail(ncclInternalError, fn, "injected failure");
  if (comm == nullptr) return fail(ncclInvalidArgument, fn, "comm argument is NULL");
  if (nranks < 1) return fail(ncclInvalidArgument, fn, "invalid nranks");
  if (rank < 0 || rank >= nranks) return fail(ncclInvalidArgument, fn, "rank out of range");
  if (!config_valid(config)) return fail(ncclInvalidArgument, fn, "config not initialized");
  c3fake_cuInit();
  *comm = new_comm(rank, nranks, c3fake_get_device(), id);
  return ncclSuccess;
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

}  // namespace

bool injected_failure(std::string_view function) {
  const char* env = std::getenv("C3FAKE_NCCL_FAIL");
  if (env == nullptr) return false;
  std::string_view list(env);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item == function || item == "all") return true;
  }
  return false;
}

ncclResult_t fail(ncclResult_t result, std::string_view function, std::string_view why) {
  t_last_error.assign(function);
  t_last_error.append(": ");
  t_last_error.append(why);
  return result;
}

bool comm_alive(ncclComm_t comm) {
  if (comm == nullptr) return false;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.comms.count(comm) != 0;
}

bool redop_valid(ncclRedOp_t op) {
  if (op >= ncclSum && op < ncclNumOps) return true;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.redops.count(static_cast<int>(op)) != 0;
}

}  // namespace c3::fake::nccl

using namespace c3::fake::nccl;

extern "C" {

C3FAKE_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (version == nullptr) return fail(ncclInvalidArgument, __func__, "version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (uniqueId == nullptr) return fail(ncclInvalidArgument, __func__, "uniqueId is NULL");
  *uniqueId = make_unique_id();
  return ncclSuccess;
}

C3FAKE_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  return error_string(result);
}

C3FAKE_EXPORT const char* ncclGetLastError(ncclComm_t comm) {
  static_cast<void>(comm);
  return t_last_error.c_str();
}

C3FAKE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                            int rank) {
  return init_rank(__func__, comm, nranks, commId, rank, nullptr);
}

C3FAKE_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                                  int rank, ncclConfig_t* config) {
  return init_rank(__func__, comm, nranks, commId, rank, config);
}

C3FAKE_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank,
                                                    int nId, ncclUniqueId* commIds,
                                                    ncclConfig_t* config) {
  if (nId < 1 || commIds == nullptr) {
    return fail(ncclInvalidArgument, __func__, "need at least one unique id");
  }
  return init_rank(__func__, newcomm, nranks, commIds[0], myrank, config);
}

C3FAKE_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
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
  const ncclUniqueId id = make_unique_id();
  for (int i = 0; i < ndev; ++i) {
    comm[i] = new_comm(i, ndev, devlist != nullptr ? devlist[i] : i, id);
  }
  return ncclSuccess;
}

// Split: NCCL_SPLIT_NOCOLOR gives NULL; any other color keeps the parent's rank and nranks
// (as if every rank passed the same color and key = rank); key is not used.
C3FAKE_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
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
  *newcomm = new_comm(comm->rank, comm->nranks, comm->device, make_unique_id());
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList,
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
  *newcomm = new_comm(comm->rank - below, nranks, comm->device, make_unique_id());
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
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
  comm->magic = 0;
  delete comm;
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return destroy_comm(__func__, comm);
}
C3FAKE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return destroy_comm(__func__, comm);
}

C3FAKE_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm) || count == nullptr) {
    return fail(ncclInvalidArgument, __func__, "invalid argument");
  }
  *count = comm->nranks;
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm) || device == nullptr) {
    return fail(ncclInvalidArgument, __func__, "invalid argument");
  }
  *device = comm->device;
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm) || rank == nullptr) {
    return fail(ncclInvalidArgument, __func__, "invalid argument");
  }
  *rank = comm->rank;
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm) || asyncError == nullptr) {
    return fail(ncclInvalidArgument, __func__, "invalid argument");
  }
  *asyncError = ncclSuccess;
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar,
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

C3FAKE_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (!comm_alive(comm)) return fail(ncclInvalidArgument, __func__, "invalid communicator");
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (r.redops.erase(static_cast<int>(op)) == 0) {
    return fail(ncclInvalidArgument, __func__, "not a user-created reduction op");
  }
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  if (ptr == nullptr) return fail(ncclInvalidArgument, __func__, "ptr is NULL");
  void* mem = nullptr;  // host memory stands in for device memory
  if (posix_memalign(&mem, 4096, std::max<size_t>(size, 1)) != 0) {
    return fail(ncclSystemError, __func__, "out of memory");
  }
  *ptr = mem;
  return ncclSuccess;
}

C3FAKE_EXPORT ncclResult_t ncclMemFree(void* ptr) {
  if (injected_failure(__func__)) return fail(ncclInternalError, __func__, "injected failure");
  std::free(ptr);
  return ncclSuccess;
}

C3FAKE_PNCCL_ALIAS(ncclGetVersion, ncclResult_t, (int*))
C3FAKE_PNCCL_ALIAS(ncclGetUniqueId, ncclResult_t, (ncclUniqueId*))
C3FAKE_PNCCL_ALIAS(ncclGetErrorString, const char*, (ncclResult_t))
C3FAKE_PNCCL_ALIAS(ncclGetLastError, const char*, (ncclComm_t))
C3FAKE_PNCCL_ALIAS(ncclCommInitRank, ncclResult_t, (ncclComm_t*, int, ncclUniqueId, int))
C3FAKE_PNCCL_ALIAS(ncclCommInitRankConfig, ncclResult_t,
                   (ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*))
C3FAKE_PNCCL_ALIAS(ncclCommInitRankScalable, ncclResult_t,
                   (ncclComm_t*, int, int, int, ncclUniqueId*, ncclConfig_t*))
C3FAKE_PNCCL_ALIAS(ncclCommInitAll, ncclResult_t, (ncclComm_t*, int, const int*))
C3FAKE_PNCCL_ALIAS(ncclCommSplit, ncclResult_t, (ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*))
C3FAKE_PNCCL_ALIAS(ncclCommShrink, ncclResult_t,
                   (ncclComm_t, int*, int, ncclComm_t*, ncclConfig_t*, int))
C3FAKE_PNCCL_ALIAS(ncclCommFinalize, ncclResult_t, (ncclComm_t))
C3FAKE_PNCCL_ALIAS(ncclCommDestroy, ncclResult_t, (ncclComm_t))
C3FAKE_PNCCL_ALIAS(ncclCommAbort, ncclResult_t, (ncclComm_t))
C3FAKE_PNCCL_ALIAS(ncclCommCount, ncclResult_t, (const ncclComm_t, int*))
C3FAKE_PNCCL_ALIAS(ncclCommCuDevice, ncclResult_t, (const ncclComm_t, int*))
C3FAKE_PNCCL_ALIAS(ncclCommUserRank, ncclResult_t, (const ncclComm_t, int*))
C3FAKE_PNCCL_ALIAS(ncclCommGetAsyncError, ncclResult_t, (ncclComm_t, ncclResult_t*))
C3FAKE_PNCCL_ALIAS(ncclRedOpCreatePreMulSum, ncclResult_t,
                   (ncclRedOp_t*, void*, ncclDataType_t, ncclScalarResidence_t, ncclComm_t))
C3FAKE_PNCCL_ALIAS(ncclRedOpDestroy, ncclResult_t, (ncclRedOp_t, ncclComm_t))
C3FAKE_PNCCL_ALIAS(ncclMemAlloc, ncclResult_t, (void**, size_t))
C3FAKE_PNCCL_ALIAS(ncclMemFree, ncclResult_t, (void*))

}  // extern "C"
