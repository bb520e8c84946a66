// NCCL for the simulated node (libnccl.so.2 with nccl.h's signatures, NCCL 2.28). Communicators
// span the node's simulated GPUs in this process; each collective becomes one operation of the
// node with a part per rank (c3sim/node.h), costed by the model (c3/sim/cost.h), so ranks
// rendezvous, hold their SMs while they wait and finish together, as NCCL kernels do. The
// collector interposes these functions exactly as it does the real NCCL's.
//
// Semantics kept from NCCL: ranks of a communicator are matched by call order (per-communicator
// sequence numbers; Send/Recv per peer and direction); calls inside ncclGroupStart/End are
// issued at the outermost ncclGroupEnd, where each rank's Send and Recv calls whose other halves
// are in the same group become one kernel that moves them together; channels default to the
// platform's and follow NCCL_MIN/MAX_NCHANNELS and ncclConfig_t minCTAs/maxCTAs; a 1-rank
// collective out of place is a copy-engine copy and in place is nothing.
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "c3/sim/cost.h"
#include "c3fake/gpu.h"
#include "c3sim/node.h"

#define C3_NCCL_EXPORT extern "C" __attribute__((visibility("default")))

namespace c3::simnccl {
namespace {

struct Comm;

struct Clique {
  std::string key;
  int nranks = 0;
  std::vector<Comm*> ranks;  // by rank; filled as ranks join
  // Operations some ranks have issued and others not yet: (sequence key) -> node collective.
  std::map<std::string, std::pair<int64_t, int>> pending;  // key -> (collective, ranks issued)
  int64_t splits = 0;
};

struct Comm {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  int nranks = 0;
  int device = 0;
  int channels = 0;
  int64_t coll_seq = 0;
  std::map<std::pair<int, int>, int64_t> p2p_seq;  // (from, to) -> count
  int64_t split_calls = 0;
  bool finalized = false;
};

struct Op {
  sim::Collective kind = sim::Collective::allreduce;
  Comm* comm = nullptr;
  void* stream = nullptr;
  int64_t bytes = 0;  // S as nccl-tests counts it
  bool in_place = false;
  std::string label;  // kernel name suffix: "Sum_f32"
  int peer = -1;      // Send/Recv
  bool is_send = false;
};

std::mutex g_mu;
std::map<std::string, std::shared_ptr<Clique>> g_cliques;
std::atomic<uint64_t> g_unique_ids{1};
thread_local int t_group_depth = 0;
thread_local std::vector<Op> t_group_ops;
thread_local std::string t_last_error;

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
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    case ncclNumTypes:
      break;
  }
  return 0;
}

const char* type_tag(ncclDataType_t t) {
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
    case ncclFloat8e5m2:
      return "f8e5m2";
    case ncclNumTypes:
      break;
  }
  return "unknown";
}

const char* op_tag(ncclRedOp_t op) {
  switch (op) {
    case ncclSum:
      return "Sum";
    case ncclProd:
      return "Prod";
    case ncclMax:
    case ncclMin:
      return "MinMax";
    case ncclAvg:
      return "SumPostDiv";
    case ncclNumOps:
    case ncclMaxRedOp:
      break;
  }
  return "PreMulSum";
}

ncclResult_t fail(ncclResult_t r, const std::string& why) {
  t_last_error = why;
  return r;
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : 0;
}

// NCCL_MIN/MAX_NCHANNELS and the config's CTA bounds applied to the platform default.
int channels_for(const ncclConfig_t* config) {
  int ch = simgpu::spec().gpu.nccl_channels;
  int lo = env_int("NCCL_MIN_NCHANNELS"), hi = env_int("NCCL_MAX_NCHANNELS");
  if (config != nullptr) {
    if (config->minCTAs != NCCL_CONFIG_UNDEF_INT && config->minCTAs > 0)
      lo = std::max(lo, config->minCTAs);
    if (config->maxCTAs != NCCL_CONFIG_UNDEF_INT && config->maxCTAs > 0)
      hi = hi > 0 ? std::min(hi, config->maxCTAs) : config->maxCTAs;
  }
  if (lo > 0) ch = std::max(ch, lo);
  if (hi > 0) ch = std::min(ch, hi);
  return std::max(1, ch);
}

std::string id_key(const ncclUniqueId& id) {
  return std::string(id.internal, sizeof id.internal);
}

ncclResult_t join(ncclComm_t* out, int nranks, const std::string& key, int rank, int device,
                  const ncclConfig_t* config) {
  if (out == nullptr || nranks < 1 || rank < 0 || rank >= nranks) {
    return fail(ncclInvalidArgument, "invalid communicator arguments");
  }
  if (!simgpu::started()) return fail(ncclInvalidUsage, "the simulated node is not started");
  if (device < 0 || device >= simgpu::spec().gpus)
    return fail(ncclInvalidArgument, "no such simulated GPU");
  std::lock_guard lock(g_mu);
  auto& clique = g_cliques[key];
  if (!clique) {
    clique = std::make_shared<Clique>();
    clique->key = key;
    clique->nranks = nranks;
    clique->ranks.assign(static_cast<size_t>(nranks), nullptr);
  }
  if (clique->nranks != nranks || clique->ranks[static_cast<size_t>(rank)] != nullptr) {
    return fail(ncclInvalidUsage, "rank joined twice or with another size");
  }
  auto* c = new Comm;
  c->clique = clique;
  c->rank = rank;
  c->nranks = nranks;
  c->device = device;
  c->channels = channels_for(config);
  clique->ranks[static_cast<size_t>(rank)] = c;
  *out = reinterpret_cast<ncclComm_t>(c);
  return ncclSuccess;
}

Comm* comm_of(ncclComm_t c) {
  return reinterpret_cast<Comm*>(c);
}

std::string kernel_name(const Op& op, sim::Algorithm algo) {
  const char* coll = sim::collective_name(op.kind);
  if (op.kind == sim::Collective::sendrecv)
    return "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
  // NCCL's protocol choice by size per rank, roughly: LL for small, LL128 mid, Simple large.
  const int64_t per_rank = op.bytes / std::max(1, op.comm->nranks);
  const char* proto = per_rank < (64 << 10) ? "LL" : per_rank < (8 << 20) ? "LL128" : "SIMPLE";
  return std::string("ncclDevKernel_") + coll + "_" + op.label + "_" +
         (algo == sim::Algorithm::tree ? "TREE" : "RING") + "_" + proto +
         "(ncclDevKernelArgsStorage<4096ul>)";
}

// Enqueues `part` of node operation `key` of clique `q`, creating it with `make_op` when this is
// the first part to arrive; it is forgotten once all `nparts` parts are there.
template <typename MakeOp>
ncclResult_t enqueue_part(Clique& q, const std::string& key, int part, int nparts, void* stream,
                          MakeOp make_op) {
  auto it = q.pending.find(key);
  if (it == q.pending.end()) it = q.pending.emplace(key, std::make_pair(make_op(), 0)).first;
  try {
    simgpu::collective_enqueue(it->second.first, part, stream);
  } catch (const std::exception& e) {
    return fail(ncclInvalidArgument, e.what());
  }
  if (++it->second.second == nparts) q.pending.erase(it);
  return ncclSuccess;
}

int64_t create_kernel_op(const sim::CollectiveCost& cost, const std::string& name, int channels,
                         bool is_copy) {
  simgpu::CollectiveLaunch how;
  how.is_copy = is_copy;
  how.kernel_name = name;
  how.grid = static_cast<unsigned>(channels);
  how.block = 512;  // NCCL_NTHREADS default on recent GPUs
  return simgpu::collective_create(cost.desc, how);
}

// Issues one rank's part of a collective; the first rank to arrive creates it in the node.
ncclResult_t issue_collective(const Op& op) {
  Comm* c = op.comm;
  Clique& q = *c->clique;
  std::vector<int> gpus;
  for (Comm* r : q.ranks) {
    if (r == nullptr) return fail(ncclInvalidUsage, "not every rank has joined the communicator");
    gpus.push_back(r->device);
  }
  const std::string key = "coll/" + std::to_string(c->coll_seq++);
  if (gpus.size() == 1 && op.in_place) return ncclSuccess;  // nothing to move
  return enqueue_part(q, key, c->rank, static_cast<int>(gpus.size()), op.stream, [&] {
    const sim::NodeSpec& node = simgpu::spec();
    const sim::CollectiveCost cost = sim::collective(node.gpu, node.gpu.topology, op.kind, gpus,
                                                     op.bytes, c->channels, op.in_place);
    return create_kernel_op(cost, kernel_name(op, cost.algorithm), c->channels, gpus.size() == 1);
  });
}

// One half (a Send or a Recv) of a point-to-point transfer: a send from a to b pairs with b's
// receive from a, in order.
struct Half {
  int from = 0, to = 0;
  std::string key;  // "p2p/a>b/n", the same for both halves
};

// Numbers a Send/Recv call (once, in call order) and checks its peers joined.
ncclResult_t number_half(const Op& op, Half* h) {
  Comm* c = op.comm;
  h->from = op.is_send ? c->rank : op.peer;
  h->to = op.is_send ? op.peer : c->rank;
  if (c->clique->ranks[static_cast<size_t>(h->from)] == nullptr ||
      c->clique->ranks[static_cast<size_t>(h->to)] == nullptr) {
    return fail(ncclInvalidUsage, "peer has not joined the communicator");
  }
  const int64_t n = c->p2p_seq[{h->from, h->to}]++;
  h->key = "p2p/" + std::to_string(h->from) + ">" + std::to_string(h->to) + "/" + std::to_string(n);
  return ncclSuccess;
}

// A Send or Recv whose other half is not in the same group (or a call outside any group): its
// transfer is a kernel of its own on each side, as NCCL launches a lone Send or Recv.
ncclResult_t issue_half(const Op& op, const Half& h) {
  Clique& q = *op.comm->clique;
  return enqueue_part(q, h.key, op.is_send ? 0 : 1, 2, op.stream, [&] {
    const Comm* a = q.ranks[static_cast<size_t>(h.from)];
    const Comm* b = q.ranks[static_cast<size_t>(h.to)];
    const sim::NodeSpec& node = simgpu::spec();
    const sim::CollectiveCost cost = sim::point_to_point(
        node.gpu, node.gpu.topology, {a->device, b->device}, {{0, 1, op.bytes}}, op.comm->channels);
    return create_kernel_op(cost, kernel_name(op, cost.algorithm), op.comm->channels, false);
  });
}

ncclResult_t issue(const Op& op) {
  if (op.kind != sim::Collective::sendrecv) return issue_collective(op);
  Half h;
  if (ncclResult_t r = number_half(op, &h); r != ncclSuccess) return r;
  return issue_half(op, h);
}

// The calls of one ncclGroupEnd. NCCL runs all Send and Recv calls a rank makes in a group as one
// kernel that progresses them together; issued one by one, in call order on each stream, a ring
// shift (every rank sends to the next and receives from the previous) would wait in a cycle:
// rank 0's send waits for rank 1's receive, queued behind rank 1's send, which waits for rank 0's
// receive, queued behind rank 0's send. So every transfer whose two halves are in this group
// joins the ranks it connects; each set of connected ranks becomes one node operation, one fused
// SendRecv kernel per rank (on the stream of its first call), costed by sim::point_to_point.
ncclResult_t issue_group(const std::vector<Op>& ops) {
  const size_t n = ops.size();
  std::vector<Half> halves(n);
  // (clique, key) -> indices of the send and the receive in `ops`, -1 when not in this group.
  std::map<std::pair<const Clique*, std::string>, std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < n; ++i) {
    if (ops[i].kind != sim::Collective::sendrecv) continue;
    if (ncclResult_t r = number_half(ops[i], &halves[i]); r != ncclSuccess) return r;
    auto& idx = pairs.try_emplace({ops[i].comm->clique.get(), halves[i].key}, -1, -1).first->second;
    (ops[i].is_send ? idx.first : idx.second) = static_cast<int64_t>(i);
  }
  // Union-find over the ranks (their Comm) that matched transfers connect.
  std::map<const Comm*, const Comm*> parent;
  auto find = [&](const Comm* c) {
    while (parent.at(c) != c) c = parent[c] = parent.at(parent.at(c));
    return c;
  };
  std::vector<bool> fused(n, false);
  for (const auto& [key, idx] : pairs) {
    if (idx.first < 0 || idx.second < 0) continue;
    const Comm* a = ops[static_cast<size_t>(idx.first)].comm;
    const Comm* b = ops[static_cast<size_t>(idx.second)].comm;
    parent.emplace(a, a);
    parent.emplace(b, b);
    parent[find(a)] = find(b);
    fused[static_cast<size_t>(idx.first)] = fused[static_cast<size_t>(idx.second)] = true;
  }
  // Each component: its ranks in rank order and its transfers (by index into them).
  struct Component {
    std::vector<const Comm*> ranks;
    std::vector<sim::Transfer> transfers;
    int64_t op = -1;
  };
  std::map<const Comm*, Component> components;  // by root
  for (const auto& [c, p] : parent) components[find(c)].ranks.push_back(c);
  auto part_of = [](const Component& k, const Comm* c) {
    const auto at = std::find(k.ranks.begin(), k.ranks.end(), c);
    return static_cast<int>(at - k.ranks.begin());
  };
  for (auto& [root, k] : components) {
    std::sort(k.ranks.begin(), k.ranks.end(),
              [](const Comm* x, const Comm* y) { return x->rank < y->rank; });
  }
  for (const auto& [key, idx] : pairs) {
    if (idx.first < 0 || idx.second < 0) continue;
    const Op& send = ops[static_cast<size_t>(idx.first)];
    const Op& recv = ops[static_cast<size_t>(idx.second)];
    Component& k = components.at(find(send.comm));
    k.transfers.push_back({part_of(k, send.comm), part_of(k, recv.comm), send.bytes});
  }
  std::set<const Comm*> launched;
  for (size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    if (op.kind != sim::Collective::sendrecv) {
      if (ncclResult_t r = issue_collective(op); r != ncclSuccess) return r;
      continue;
    }
    if (!fused[i]) {
      if (ncclResult_t r = issue_half(op, halves[i]); r != ncclSuccess) return r;
      continue;
    }
    if (!launched.insert(op.comm).second) continue;  // its rank's kernel is already enqueued
    Component& k = components.at(find(op.comm));
    if (k.op < 0) {
      std::vector<int> gpus;
      for (const Comm* c : k.ranks) gpus.push_back(c->device);
      const sim::NodeSpec& node = simgpu::spec();
      const sim::CollectiveCost cost =
          sim::point_to_point(node.gpu, node.gpu.topology, gpus, k.transfers, op.comm->channels);
      k.op = create_kernel_op(cost, kernel_name(op, cost.algorithm), op.comm->channels, false);
    }
    try {
      simgpu::collective_enqueue(k.op, part_of(k, op.comm), op.stream);
    } catch (const std::exception& e) {
      return fail(ncclInvalidArgument, e.what());
    }
  }
  return ncclSuccess;
}

ncclResult_t submit(Op op) {
  if (op.comm == nullptr) return fail(ncclInvalidArgument, "null communicator");
  if (op.comm->finalized) return fail(ncclInvalidUsage, "communicator finalized");
  if (t_group_depth > 0) {
    t_group_ops.push_back(std::move(op));
    return ncclSuccess;
  }
  std::lock_guard lock(g_mu);
  return issue(op);
}

Op make(sim::Collective kind, ncclComm_t comm, cudaStream_t stream, int64_t bytes, bool in_place,
        ncclDataType_t t, const char* red) {
  Op op;
  op.kind = kind;
  op.comm = comm_of(comm);
  op.stream = stream;
  op.bytes = bytes;
  op.in_place = in_place;
  op.label = std::string(red) + "_" + type_tag(t);
  return op;
}

int64_t total(size_t count, ncclDataType_t t) {
  return static_cast<int64_t>(count * type_size(t));
}

}  // namespace
}  // namespace c3::simnccl

using namespace c3::simnccl;
using c3::sim::Collective;

C3_NCCL_EXPORT ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return ncclInvalidArgument;
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  if (id == nullptr) return ncclInvalidArgument;
  std::memset(id, 0, sizeof *id);
  std::snprintf(id->internal, sizeof id->internal, "c3sim-%d-%llu", static_cast<int>(getpid()),
                static_cast<unsigned long long>(g_unique_ids++));
  return ncclSuccess;
}

C3_NCCL_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error";
    case ncclSystemError:
      return "unhandled system error";
    case ncclInternalError:
      return "internal error";
    case ncclInvalidArgument:
      return "invalid argument";
    case ncclInvalidUsage:
      return "invalid usage";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    case ncclNumResults:
      break;
  }
  return "unknown result code";
}

C3_NCCL_EXPORT const char* ncclGetLastError(ncclComm_t) {
  return t_last_error.c_str();
}

C3_NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                             int rank) {
  return join(comm, nranks, id_key(id), rank, c3fake_get_device(), nullptr);
}

C3_NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id,
                                                   int rank, ncclConfig_t* config) {
  return join(comm, nranks, id_key(id), rank, c3fake_get_device(), config);
}

C3_NCCL_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* comm, int nranks, int rank,
                                                     int nId, ncclUniqueId* ids,
                                                     ncclConfig_t* config) {
  if (ids == nullptr || nId < 1) return ncclInvalidArgument;
  return join(comm, nranks, id_key(ids[0]), rank, c3fake_get_device(), config);
}

C3_NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  if (comms == nullptr || ndev < 1) return ncclInvalidArgument;
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  for (int i = 0; i < ndev; ++i) {
    ncclResult_t r = join(&comms[i], ndev, id_key(id), i, devlist ? devlist[i] : i, nullptr);
    if (r != ncclSuccess) return r;
  }
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                          ncclConfig_t* config) {
  Comm* c = comm_of(comm);
  if (c == nullptr || newcomm == nullptr) return ncclInvalidArgument;
  if (color == NCCL_SPLIT_NOCOLOR) {
    *newcomm = nullptr;
    return ncclSuccess;
  }
  // Ranks of the parent that split with the same color form the child, ordered by key then
  // parent rank; every rank computes the same membership from the parent's ranks' choices, which
  // in one process are known only once all have called: children are sized by the parent here.
  const std::string child =
      c->clique->key + "/split" + std::to_string(c->split_calls++) + "/" + std::to_string(color);
  (void)key;
  return join(newcomm, c->nranks, child, c->rank, c->device, config);
}

C3_NCCL_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int*, int, ncclComm_t* newcomm,
                                           ncclConfig_t* config, int) {
  Comm* c = comm_of(comm);
  if (c == nullptr || newcomm == nullptr) return ncclInvalidArgument;
  const std::string child = c->clique->key + "/shrink" + std::to_string(c->split_calls++);
  return join(newcomm, c->nranks, child, c->rank, c->device, config);
}

C3_NCCL_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (comm == nullptr) return ncclInvalidArgument;
  comm_of(comm)->finalized = true;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  Comm* c = comm_of(comm);
  if (c == nullptr) return ncclSuccess;
  std::lock_guard lock(g_mu);
  c->clique->ranks[static_cast<size_t>(c->rank)] = nullptr;
  delete c;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return ncclCommDestroy(comm);
}

C3_NCCL_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (comm == nullptr || count == nullptr) return ncclInvalidArgument;
  *count = comm_of(comm)->nranks;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (comm == nullptr || device == nullptr) return ncclInvalidArgument;
  *device = comm_of(comm)->device;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (comm == nullptr || rank == nullptr) return ncclInvalidArgument;
  *rank = comm_of(comm)->rank;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* error) {
  if (comm == nullptr || error == nullptr) return ncclInvalidArgument;
  *error = ncclSuccess;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void*, ncclDataType_t,
                                                     ncclScalarResidence_t, ncclComm_t) {
  if (op == nullptr) return ncclInvalidArgument;
  *op = static_cast<ncclRedOp_t>(ncclNumOps);
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t, ncclComm_t) {
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclGroupStart() {
  ++t_group_depth;
  return ncclSuccess;
}

C3_NCCL_EXPORT ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return ncclInvalidUsage;
  if (--t_group_depth > 0) return ncclSuccess;
  std::vector<Op> ops;
  ops.swap(t_group_ops);
  std::lock_guard lock(g_mu);
  return issue_group(ops);
}

C3_NCCL_EXPORT ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count,
                                          ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                                          cudaStream_t stream) {
  return submit(
      make(Collective::allreduce, comm, stream, total(count, t), send == recv, t, op_tag(op)));
}

C3_NCCL_EXPORT ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count,
                                          ncclDataType_t t, int, ncclComm_t comm,
                                          cudaStream_t stream) {
  return submit(make(Collective::broadcast, comm, stream, total(count, t), send == recv, t, "Sum"));
}

C3_NCCL_EXPORT ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t t, int root,
                                      ncclComm_t comm, cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, t, root, comm, stream);
}

C3_NCCL_EXPORT ncclResult_t ncclReduce(const void* send, void* recv, size_t count, ncclDataType_t t,
                                       ncclRedOp_t op, int, ncclComm_t comm, cudaStream_t stream) {
  return submit(
      make(Collective::reduce, comm, stream, total(count, t), send == recv, t, op_tag(op)));
}

C3_NCCL_EXPORT ncclResult_t ncclAllGather(const void* send, void* recv, size_t sendcount,
                                          ncclDataType_t t, ncclComm_t comm, cudaStream_t stream) {
  const int n = comm ? comm_of(comm)->nranks : 1;
  return submit(
      make(Collective::allgather, comm, stream, total(sendcount, t) * n, send == recv, t, "Sum"));
}

C3_NCCL_EXPORT ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t recvcount,
                                              ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                                              cudaStream_t stream) {
  const int n = comm ? comm_of(comm)->nranks : 1;
  return submit(make(Collective::reducescatter, comm, stream, total(recvcount, t) * n, send == recv,
                     t, op_tag(op)));
}

C3_NCCL_EXPORT ncclResult_t ncclAlltoAll(const void* send, void* recv, size_t count,
                                         ncclDataType_t t, ncclComm_t comm, cudaStream_t stream) {
  const int n = comm ? comm_of(comm)->nranks : 1;
  return submit(
      make(Collective::alltoall, comm, stream, total(count, t) * n, send == recv, t, "Sum"));
}

C3_NCCL_EXPORT ncclResult_t ncclGather(const void* send, void* recv, size_t count, ncclDataType_t t,
                                       int, ncclComm_t comm, cudaStream_t stream) {
  const int n = comm ? comm_of(comm)->nranks : 1;
  return submit(
      make(Collective::allgather, comm, stream, total(count, t) * n, send == recv, t, "Sum"));
}

C3_NCCL_EXPORT ncclResult_t ncclScatter(const void* send, void* recv, size_t count,
                                        ncclDataType_t t, int, ncclComm_t comm,
                                        cudaStream_t stream) {
  return submit(make(Collective::broadcast, comm, stream, total(count, t), send == recv, t, "Sum"));
}

C3_NCCL_EXPORT ncclResult_t ncclSend(const void*, size_t count, ncclDataType_t t, int peer,
                                     ncclComm_t comm, cudaStream_t stream) {
  Op op = make(Collective::sendrecv, comm, stream, total(count, t), false, t, "Sum");
  op.peer = peer;
  op.is_send = true;
  if (op.comm && (peer < 0 || peer >= op.comm->nranks))
    return fail(ncclInvalidArgument, "bad peer");
  return submit(op);
}

C3_NCCL_EXPORT ncclResult_t ncclRecv(void*, size_t count, ncclDataType_t t, int peer,
                                     ncclComm_t comm, cudaStream_t stream) {
  Op op = make(Collective::sendrecv, comm, stream, total(count, t), false, t, "Sum");
  op.peer = peer;
  op.is_send = false;
  if (op.comm && (peer < 0 || peer >= op.comm->nranks))
    return fail(ncclInvalidArgument, "bad peer");
  return submit(op);
}
