// NCCL interposition: every collective, point-to-point, group and communicator call of nccl.h
// (NCCL 2.28) is defined here with NCCL's own signature and forwarded to the real library.
// With LD_PRELOAD these definitions come first in symbol lookup, so the job's calls land here.
//
// Each call becomes a collective row; the kernels it launches are linked to it through a CUPTI
// external correlation id pushed around the call (grouped calls launch at the outermost
// ncclGroupEnd, so the id is pushed there and shared by the whole group).
#include <dlfcn.h>
#include <link.h>
#include <nccl.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "clock.h"
#include "cupti_session.h"
#include "log.h"
#include "nccl_names.h"
#include "recorder.h"

#define C3_EXPORT extern "C" __attribute__((visibility("default")))

namespace c3::collector {
namespace {

// ---- finding the real NCCL --------------------------------------------------------------------

void* find_in_loaded_nccl(const char* name) {
  struct Ctx {
    const char* name;
    void* fn;
  } ctx{name, nullptr};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* c = static_cast<Ctx*>(data);
        if (!info->dlpi_name || !std::strstr(info->dlpi_name, "libnccl")) return 0;
        void* h = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
        if (!h) return 0;
        c->fn = dlsym(h, c->name);
        dlclose(h);
        return c->fn ? 1 : 0;
      },
      &ctx);
  return ctx.fn;
}

// The next definition after ours; when NCCL was loaded privately (a Python extension's
// dependency, RTLD_LOCAL) RTLD_NEXT cannot see it, so look in the loaded libnccl directly.
void* find_real(const char* name) {
  if (void* f = dlsym(RTLD_NEXT, name)) return f;
  for (const char* lib : {"libnccl.so.2", "libnccl.so"}) {
    if (void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
      void* f = dlsym(h, name);
      dlclose(h);
      if (f) return f;
    }
  }
  return find_in_loaded_nccl(name);
}

template <class F>
F real_fn(const char* name, std::atomic<void*>& slot) {
  void* f = slot.load(std::memory_order_acquire);
  if (!f) {
    f = find_real(name);
    if (!f) {
      warn("the job called %s but no NCCL library defining it is loaded", name);
      return nullptr;
    }
    slot.store(f, std::memory_order_release);
  }
  return reinterpret_cast<F>(f);
}

#define C3_REAL(fn)                                         \
  real_fn<decltype(&fn)>(#fn, []() -> std::atomic<void*>& { \
    static std::atomic<void*> slot{nullptr};                \
    return slot;                                            \
  }())

// ---- communicators ----------------------------------------------------------------------------

struct CommInfo {
  std::optional<std::string> comm_id;
  int64_t rank = -1;
  int64_t nranks = -1;
  std::optional<int64_t> device;
  int64_t coll_seq = 0;
  std::unordered_map<int, int64_t> send_seq, recv_seq;
  int64_t split_calls = 0;
  int64_t shrink_calls = 0;
};

std::mutex g_comms_mu;
std::unordered_map<ncclComm_t, CommInfo> g_comms;
std::atomic<uint64_t> g_external_ids{0};
std::atomic<int64_t> g_group_ids{0};
std::atomic<int64_t> g_init_all_calls{0};

thread_local int t_group_depth = 0;
thread_local int64_t t_group_id = 0;
thread_local uint64_t t_group_external = 0;

int64_t handle_value(const void* p) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(p));
}

std::optional<int64_t> comm_device(ncclComm_t comm) {
  int dev = -1;
  auto f = C3_REAL(ncclCommCuDevice);
  if (f && comm && f(comm, &dev) == ncclSuccess && dev >= 0) return dev;
  return std::nullopt;
}

// Reads the ncclConfig_t fields that are set; only fields inside config->size exist in the
// caller's (possibly older) struct.
std::optional<std::string> describe_config(const ncclConfig_t* c) {
  if (!c) return std::nullopt;
  std::string s;
  auto has = [&](size_t off, size_t sz) { return off + sz <= c->size; };
  auto add_int = [&](const char* name, size_t off, int v) {
    if (has(off, sizeof(int)) && v != NCCL_CONFIG_UNDEF_INT) {
      s += (s.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(v);
    }
  };
  auto add_str = [&](const char* name, size_t off, const char* v) {
    if (has(off, sizeof(const char*)) && v) {
      s += (s.empty() ? "" : " ") + std::string(name) + "=" + v;
    }
  };
  add_int("blocking", offsetof(ncclConfig_t, blocking), c->blocking);
  add_int("cgaClusterSize", offsetof(ncclConfig_t, cgaClusterSize), c->cgaClusterSize);
  add_int("minCTAs", offsetof(ncclConfig_t, minCTAs), c->minCTAs);
  add_int("maxCTAs", offsetof(ncclConfig_t, maxCTAs), c->maxCTAs);
  add_str("netName", offsetof(ncclConfig_t, netName), c->netName);
  add_int("splitShare", offsetof(ncclConfig_t, splitShare), c->splitShare);
  add_int("trafficClass", offsetof(ncclConfig_t, trafficClass), c->trafficClass);
  add_str("commName", offsetof(ncclConfig_t, commName), c->commName);
  add_int("collnetEnable", offsetof(ncclConfig_t, collnetEnable), c->collnetEnable);
  add_int("CTAPolicy", offsetof(ncclConfig_t, CTAPolicy), c->CTAPolicy);
  add_int("shrinkShare", offsetof(ncclConfig_t, shrinkShare), c->shrinkShare);
  add_int("nvlsCTAs", offsetof(ncclConfig_t, nvlsCTAs), c->nvlsCTAs);
  add_int("nChannelsPerNetPeer", offsetof(ncclConfig_t, nChannelsPerNetPeer),
          c->nChannelsPerNetPeer);
  add_int("nvlinkCentricSched", offsetof(ncclConfig_t, nvlinkCentricSched), c->nvlinkCentricSched);
  if (s.empty()) return std::nullopt;
  return s;
}

void record_comm(ncclComm_t comm, const std::string& comm_id, const char* init_call, int rank,
                 int nranks, const std::optional<std::string>& parent, const ncclConfig_t* config,
                 ncclResult_t rc) {
  auto& rec = Recorder::instance();
  tracedb::CommunicatorRow row;
  row.comm_id = comm_id;
  row.comm_handle = handle_value(comm);
  row.parent_comm_id = parent;
  row.init_call = init_call;
  row.rank = rank;
  row.nranks = nranks;
  row.device_id = comm_device(comm);
  row.config = describe_config(config);
  row.created_ns = now_ns();
  row.result = rc;
  {
    std::lock_guard<std::mutex> lock(g_comms_mu);
    CommInfo& info = g_comms[comm];
    info = CommInfo{};
    info.comm_id = comm_id;
    info.rank = rank;
    info.nranks = nranks;
    info.device = row.device_id;
  }
  rec.submit(std::move(row));
}

// Snapshot of what a call needs from its communicator; learns an unknown one on the fly.
CommInfo& comm_info_locked(ncclComm_t comm) {
  auto it = g_comms.find(comm);
  if (it != g_comms.end()) return it->second;
  CommInfo info;
  int v = 0;
  if (auto f = C3_REAL(ncclCommUserRank); f && comm && f(comm, &v) == ncclSuccess) info.rank = v;
  if (auto f = C3_REAL(ncclCommCount); f && comm && f(comm, &v) == ncclSuccess) info.nranks = v;
  info.device = comm_device(comm);
  return g_comms.emplace(comm, std::move(info)).first->second;
}

void end_comm(ncclComm_t comm, const char* call) {
  {
    std::lock_guard<std::mutex> lock(g_comms_mu);
    g_comms.erase(comm);
  }
  Recorder::instance().submit(CommEnd{handle_value(comm), call, now_ns()});
}

// ---- operations -------------------------------------------------------------------------------

enum class SeqKind { collective, send, recv };

struct Op {
  const char* name = nullptr;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  ncclDataType_t datatype = ncclFloat32;
  size_t count = 0;
  std::optional<ncclRedOp_t> reduce;
  std::optional<int> root;
  std::optional<int> peer;
  SeqKind seq_kind = SeqKind::collective;
};

template <class Call>
ncclResult_t traced(const Op& op, Call&& call) {
  auto& rec = Recorder::instance();
  const int64_t t0 = now_ns();
  const bool grouped = t_group_depth > 0;
  const uint64_t ext = grouped ? t_group_external : ++g_external_ids;
  CuptiSession* cupti = rec.cupti();
  // Pushed inside groups too: NCCL usually launches a group's work at the outermost
  // ncclGroupEnd (which pushes the same id), but some operations enqueue work in the call
  // itself (on one rank NCCL runs them at once, group or not).
  if (cupti) cupti->push_external(ext);
  const int64_t t1 = now_ns();
  const ncclResult_t rc = call();
  const int64_t t2 = now_ns();
  if (cupti) cupti->pop_external();

  tracedb::CollectiveRow row;
  row.thread_id = os_tid();
  row.stream_handle = handle_value(op.stream);
  row.comm_handle = handle_value(op.comm);
  row.op = op.name;
  row.datatype = datatype_name(op.datatype);
  row.count = static_cast<int64_t>(op.count);
  row.bytes = static_cast<int64_t>(op.count * datatype_size(op.datatype));
  if (op.reduce) row.reduce_op = reduce_op_name(*op.reduce);
  if (op.root) row.root = *op.root;
  if (op.peer) row.peer = *op.peer;
  if (grouped) row.group_id = t_group_id;
  row.external_id = static_cast<int64_t>(ext);
  row.host_start_ns = t0;
  row.host_end_ns = t2;
  row.result = rc;
  if (op.comm) {
    std::lock_guard<std::mutex> lock(g_comms_mu);
    CommInfo& info = comm_info_locked(op.comm);
    row.comm_id = info.comm_id;
    if (info.rank >= 0) row.rank = info.rank;
    if (info.nranks >= 0) row.nranks = info.nranks;
    row.device_id = info.device;
    switch (op.seq_kind) {
      case SeqKind::collective:
        row.seq = info.coll_seq++;
        break;
      case SeqKind::send:
        row.seq = info.send_seq[op.peer.value_or(-1)]++;
        break;
      case SeqKind::recv:
        row.seq = info.recv_seq[op.peer.value_or(-1)]++;
        break;
    }
  }
  if (cupti) {
    if (auto ids = cupti->resolve_stream(op.stream)) row.stream_id = ids->first;
  }
  rec.submit(std::move(row));
  rec.count(Counter::nccl_calls);
  rec.count(Counter::collector_overhead_ns, (now_ns() - t0) - (t2 - t1));
  return rc;
}

template <class Call>
ncclResult_t untraced(Call&& call) {
  Recorder::instance().count(Counter::nccl_calls);
  return call();
}

std::string comm_id_for(const void* data, size_t n) {
  return hex_id(fnv1a(data, n));
}

std::string derived_comm_id(const std::optional<std::string>& parent, const char* how, int64_t seq,
                            int64_t color) {
  std::string key = parent.value_or("unknown") + "/" + how + "/" + std::to_string(seq) + "/" +
                    std::to_string(color);
  return comm_id_for(key.data(), key.size());
}

// A communicator made from another (split, shrink): its id derives from the parent's, the
// call's order among such calls on the parent, and `discriminator` (color, excluded count), so
// every member rank computes the same id.
template <class Call>
ncclResult_t derived_comm(ncclComm_t parent_comm, ncclComm_t* newcomm, const ncclConfig_t* config,
                          const char* init_call, int64_t discriminator, Call&& call) {
  std::optional<std::string> parent;
  int64_t seq = 0;
  if (parent_comm) {
    std::lock_guard<std::mutex> lock(g_comms_mu);
    CommInfo& info = comm_info_locked(parent_comm);
    parent = info.comm_id;
    seq = std::string(init_call) == "CommSplit" ? info.split_calls++ : info.shrink_calls++;
  }
  ncclResult_t rc = untraced(call);
  if (newcomm && *newcomm && (rc == ncclSuccess || rc == ncclInProgress)) {
    int r = -1, n = -1;
    if (auto f = C3_REAL(ncclCommUserRank)) f(*newcomm, &r);
    if (auto f = C3_REAL(ncclCommCount)) f(*newcomm, &n);
    record_comm(*newcomm, derived_comm_id(parent, init_call, seq, discriminator), init_call, r, n,
                parent, config, rc);
  }
  return rc;
}

}  // namespace
}  // namespace c3::collector

using namespace c3::collector;

// ---- communicator calls -----------------------------------------------------------------------

C3_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                        int rank) {
  auto real = C3_REAL(ncclCommInitRank);
  if (!real) return ncclSystemError;
  ncclResult_t rc = untraced([&] { return real(comm, nranks, commId, rank); });
  if (comm && *comm && (rc == ncclSuccess || rc == ncclInProgress)) {
    record_comm(*comm, comm_id_for(&commId, sizeof commId), "CommInitRank", rank, nranks,
                std::nullopt, nullptr, rc);
  }
  return rc;
}

C3_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId,
                                              int rank, ncclConfig_t* config) {
  auto real = C3_REAL(ncclCommInitRankConfig);
  if (!real) return ncclSystemError;
  ncclResult_t rc = untraced([&] { return real(comm, nranks, commId, rank, config); });
  if (comm && *comm && (rc == ncclSuccess || rc == ncclInProgress)) {
    record_comm(*comm, comm_id_for(&commId, sizeof commId), "CommInitRankConfig", rank, nranks,
                std::nullopt, config, rc);
  }
  return rc;
}

C3_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank,
                                                int nId, ncclUniqueId* commIds,
                                                ncclConfig_t* config) {
  auto real = C3_REAL(ncclCommInitRankScalable);
  if (!real) return ncclSystemError;
  ncclResult_t rc = untraced([&] { return real(newcomm, nranks, myrank, nId, commIds, config); });
  if (newcomm && *newcomm && commIds && nId > 0 && (rc == ncclSuccess || rc == ncclInProgress)) {
    record_comm(*newcomm, comm_id_for(commIds, sizeof(ncclUniqueId) * static_cast<size_t>(nId)),
                "CommInitRankScalable", myrank, nranks, std::nullopt, config, rc);
  }
  return rc;
}

C3_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  auto real = C3_REAL(ncclCommInitAll);
  if (!real) return ncclSystemError;
  ncclResult_t rc = untraced([&] { return real(comms, ndev, devlist); });
  if (comms && rc == ncclSuccess) {
    // All ranks live in this process: an id unique to this call on this host and process.
    std::string key = std::to_string(getpid()) + "/" + std::to_string(now_ns()) + "/" +
                      std::to_string(++g_init_all_calls);
    std::string id = comm_id_for(key.data(), key.size());
    for (int i = 0; i < ndev; ++i) {
      if (comms[i]) record_comm(comms[i], id, "CommInitAll", i, ndev, std::nullopt, nullptr, rc);
    }
  }
  return rc;
}

C3_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                     ncclConfig_t* config) {
  auto real = C3_REAL(ncclCommSplit);
  if (!real) return ncclSystemError;
  return derived_comm(comm, newcomm, config, "CommSplit", color,
                      [&] { return real(comm, color, key, newcomm, config); });
}

C3_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                      ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  auto real = C3_REAL(ncclCommShrink);
  if (!real) return ncclSystemError;
  return derived_comm(comm, newcomm, config, "CommShrink", excludeRanksCount, [&] {
    return real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  });
}

C3_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  auto real = C3_REAL(ncclCommFinalize);
  if (!real) return ncclSystemError;
  ncclResult_t rc = untraced([&] { return real(comm); });
  if (comm) Recorder::instance().submit(CommEnd{handle_value(comm), "CommFinalize", now_ns()});
  return rc;
}

C3_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  auto real = C3_REAL(ncclCommDestroy);
  if (!real) return ncclSystemError;
  if (comm) end_comm(comm, "CommDestroy");
  return untraced([&] { return real(comm); });
}

C3_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  auto real = C3_REAL(ncclCommAbort);
  if (!real) return ncclSystemError;
  if (comm) end_comm(comm, "CommAbort");
  return untraced([&] { return real(comm); });
}

// ---- groups -----------------------------------------------------------------------------------

C3_EXPORT ncclResult_t ncclGroupStart() {
  auto real = C3_REAL(ncclGroupStart);
  if (!real) return ncclSystemError;
  if (t_group_depth++ == 0) {
    t_group_id = ++g_group_ids;
    t_group_external = ++g_external_ids;
  }
  return untraced([&] { return real(); });
}

C3_EXPORT ncclResult_t ncclGroupEnd() {
  auto real = C3_REAL(ncclGroupEnd);
  if (!real) return ncclSystemError;
  const bool outermost = t_group_depth == 1;
  CuptiSession* cupti = Recorder::instance().cupti();
  // The group's kernels are launched inside the outermost ncclGroupEnd.
  if (outermost && cupti) cupti->push_external(t_group_external);
  ncclResult_t rc = untraced([&] { return real(); });
  if (outermost && cupti) cupti->pop_external();
  if (t_group_depth > 0) --t_group_depth;
  return rc;
}

// ---- collectives and point-to-point -----------------------------------------------------------

C3_EXPORT ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                     cudaStream_t stream) {
  auto real = C3_REAL(ncclAllReduce);
  if (!real) return ncclSystemError;
  return traced({"AllReduce", comm, stream, datatype, count, op, {}, {}},
                [&] { return real(sendbuff, recvbuff, count, datatype, op, comm, stream); });
}

C3_EXPORT ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                     ncclDataType_t datatype, int root, ncclComm_t comm,
                                     cudaStream_t stream) {
  auto real = C3_REAL(ncclBroadcast);
  if (!real) return ncclSystemError;
  return traced({"Broadcast", comm, stream, datatype, count, {}, root, {}},
                [&] { return real(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

C3_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                                 ncclComm_t comm, cudaStream_t stream) {
  auto real = C3_REAL(ncclBcast);
  if (!real) return ncclSystemError;
  return traced({"Broadcast", comm, stream, datatype, count, {}, root, {}},
                [&] { return real(buff, count, datatype, root, comm, stream); });
}

C3_EXPORT ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                                  ncclDataType_t datatype, ncclRedOp_t op, int root,
                                  ncclComm_t comm, cudaStream_t stream) {
  auto real = C3_REAL(ncclReduce);
  if (!real) return ncclSystemError;
  return traced({"Reduce", comm, stream, datatype, count, op, root, {}},
                [&] { return real(sendbuff, recvbuff, count, datatype, op, root, comm, stream); });
}

C3_EXPORT ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                     ncclDataType_t datatype, ncclComm_t comm,
                                     cudaStream_t stream) {
  auto real = C3_REAL(ncclAllGather);
  if (!real) return ncclSystemError;
  return traced({"AllGather", comm, stream, datatype, sendcount, {}, {}, {}},
                [&] { return real(sendbuff, recvbuff, sendcount, datatype, comm, stream); });
}

C3_EXPORT ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                         ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                                         cudaStream_t stream) {
  auto real = C3_REAL(ncclReduceScatter);
  if (!real) return ncclSystemError;
  return traced({"ReduceScatter", comm, stream, datatype, recvcount, op, {}, {}},
                [&] { return real(sendbuff, recvbuff, recvcount, datatype, op, comm, stream); });
}

C3_EXPORT ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                                    ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  auto real = C3_REAL(ncclAlltoAll);
  if (!real) return ncclSystemError;
  return traced({"AlltoAll", comm, stream, datatype, count, {}, {}, {}},
                [&] { return real(sendbuff, recvbuff, count, datatype, comm, stream); });
}

C3_EXPORT ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                                  ncclDataType_t datatype, int root, ncclComm_t comm,
                                  cudaStream_t stream) {
  auto real = C3_REAL(ncclGather);
  if (!real) return ncclSystemError;
  return traced({"Gather", comm, stream, datatype, count, {}, root, {}},
                [&] { return real(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

C3_EXPORT ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                                   ncclDataType_t datatype, int root, ncclComm_t comm,
                                   cudaStream_t stream) {
  auto real = C3_REAL(ncclScatter);
  if (!real) return ncclSystemError;
  return traced({"Scatter", comm, stream, datatype, count, {}, root, {}},
                [&] { return real(sendbuff, recvbuff, count, datatype, root, comm, stream); });
}

C3_EXPORT ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype,
                                int peer, ncclComm_t comm, cudaStream_t stream) {
  auto real = C3_REAL(ncclSend);
  if (!real) return ncclSystemError;
  return traced({"Send", comm, stream, datatype, count, {}, {}, peer, SeqKind::send},
                [&] { return real(sendbuff, count, datatype, peer, comm, stream); });
}

C3_EXPORT ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                                ncclComm_t comm, cudaStream_t stream) {
  auto real = C3_REAL(ncclRecv);
  if (!real) return ncclSystemError;
  return traced({"Recv", comm, stream, datatype, count, {}, {}, peer, SeqKind::recv},
                [&] { return real(recvbuff, count, datatype, peer, comm, stream); });
}
