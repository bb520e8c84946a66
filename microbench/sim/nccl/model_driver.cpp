// The simulated NCCL's model driver: communicators made while the simulated node runs
// (c3/sim/gpu/node.h). Communicators span the node's simulated GPUs in this process; each
// collective becomes one operation of the node with a part per rank, costed by the model
// (c3/sim/model/cost.h), so ranks rendezvous, hold their SMs while they wait and finish together,
// as NCCL kernels do.
//
// Semantics kept from NCCL: ranks of a communicator are matched by call order (per-communicator
// sequence numbers; Send/Recv per peer and direction); calls inside ncclGroupStart/End are
// issued at the outermost ncclGroupEnd, where each rank's Send and Recv calls whose other halves
// are in the same group become one kernel that moves them together; channels default to the
// platform's and follow NCCL_MIN/MAX_NCHANNELS and ncclConfig_t minCTAs/maxCTAs; a 1-rank
// collective out of place is a copy-engine copy and in place is nothing.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "c3/sim/gpu/node.h"
#include "c3/sim/model/cost.h"
#include "sim_nccl.h"

namespace c3::sim::nccl {

struct Clique {
  std::string key;
  int nranks = 0;
  std::vector<ncclComm*> ranks;  // by rank; filled as ranks join
  // Operations some ranks have issued and others not yet: (sequence key) -> node collective.
  std::map<std::string, std::pair<int64_t, int>> pending;  // key -> (collective, ranks issued)
};

namespace {

// One call as the model sees it.
struct Op {
  model::Collective kind = model::Collective::allreduce;
  ncclComm* comm = nullptr;
  void* stream = nullptr;
  int64_t bytes = 0;  // S as nccl-tests counts it
  bool in_place = false;
  std::string label;  // kernel name suffix: "Sum_f32"
  int peer = -1;      // Send/Recv
  bool is_send = false;
};

std::mutex g_mu;  // the cliques, and every communicator's model state
std::map<std::string, std::shared_ptr<Clique>> g_cliques;
thread_local const char* t_fn = "";  // the NCCL function being issued (for ncclGetLastError)

ncclResult_t refuse(ncclResult_t r, const std::string& why) {
  return fail(r, t_fn, why);
}

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : 0;
}

// NCCL_MIN/MAX_NCHANNELS and the config's CTA bounds applied to the platform default.
int channels_for(const ncclConfig_t* config) {
  int ch = gpu::spec().gpu.nccl_channels;
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

std::string kernel_name(const Op& op, model::Algorithm algo) {
  const char* coll = model::collective_name(op.kind);
  if (op.kind == model::Collective::sendrecv)
    return "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)";
  // NCCL's protocol choice by size per rank, roughly: LL for small, LL128 mid, Simple large.
  const int64_t per_rank = op.bytes / std::max(1, op.comm->nranks);
  const char* proto = per_rank < (64 << 10) ? "LL" : per_rank < (8 << 20) ? "LL128" : "SIMPLE";
  return std::string("ncclDevKernel_") + coll + "_" + op.label + "_" +
         (algo == model::Algorithm::tree ? "TREE" : "RING") + "_" + proto +
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
    gpu::collective_enqueue(it->second.first, part, stream);
  } catch (const std::exception& e) {
    return refuse(ncclInvalidArgument, e.what());
  }
  if (++it->second.second == nparts) q.pending.erase(it);
  return ncclSuccess;
}

int64_t create_kernel_op(const model::CollectiveCost& cost, const std::string& name, int channels,
                         bool is_copy) {
  gpu::CollectiveLaunch how;
  how.is_copy = is_copy;
  how.kernel_name = name;
  how.grid = static_cast<unsigned>(channels);
  how.block = 512;  // NCCL_NTHREADS default on recent GPUs
  return gpu::collective_create(cost.desc, how);
}

// Issues one rank's part of a collective; the first rank to arrive creates it in the node.
ncclResult_t issue_collective(const Op& op) {
  ncclComm* c = op.comm;
  Clique& q = *c->clique;
  std::vector<int> gpus;
  for (ncclComm* r : q.ranks) {
    if (r == nullptr) return refuse(ncclInvalidUsage, "not every rank has joined the communicator");
    gpus.push_back(r->device);
  }
  const std::string key = "coll/" + std::to_string(c->coll_seq++);
  if (gpus.size() == 1 && op.in_place) return ncclSuccess;  // nothing to move
  return enqueue_part(q, key, c->rank, static_cast<int>(gpus.size()), op.stream, [&] {
    const model::NodeSpec& node = gpu::spec();
    const model::CollectiveCost cost = model::collective(node.gpu, node.gpu.topology, op.kind, gpus,
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
  ncclComm* c = op.comm;
  h->from = op.is_send ? c->rank : op.peer;
  h->to = op.is_send ? op.peer : c->rank;
  if (c->clique->ranks[static_cast<size_t>(h->from)] == nullptr ||
      c->clique->ranks[static_cast<size_t>(h->to)] == nullptr) {
    return refuse(ncclInvalidUsage, "peer has not joined the communicator");
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
    const ncclComm* a = q.ranks[static_cast<size_t>(h.from)];
    const ncclComm* b = q.ranks[static_cast<size_t>(h.to)];
    const model::NodeSpec& node = gpu::spec();
    const model::CollectiveCost cost = model::point_to_point(
        node.gpu, node.gpu.topology, {a->device, b->device}, {{0, 1, op.bytes}}, op.comm->channels);
    return create_kernel_op(cost, kernel_name(op, cost.algorithm), op.comm->channels, false);
  });
}

ncclResult_t issue(const Op& op) {
  if (op.kind != model::Collective::sendrecv) return issue_collective(op);
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
// SendRecv kernel per rank (on the stream of its first call), costed by model::point_to_point.
ncclResult_t issue_group(const std::vector<Op>& ops) {
  const size_t n = ops.size();
  std::vector<Half> halves(n);
  // (clique, key) -> indices of the send and the receive in `ops`, -1 when not in this group.
  std::map<std::pair<const Clique*, std::string>, std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < n; ++i) {
    if (ops[i].kind != model::Collective::sendrecv) continue;
    if (ncclResult_t r = number_half(ops[i], &halves[i]); r != ncclSuccess) return r;
    auto& idx = pairs.try_emplace({ops[i].comm->clique.get(), halves[i].key}, -1, -1).first->second;
    (ops[i].is_send ? idx.first : idx.second) = static_cast<int64_t>(i);
  }
  // Union-find over the ranks (their Comm) that matched transfers connect.
  std::map<const ncclComm*, const ncclComm*> parent;
  auto find = [&](const ncclComm* c) {
    while (parent.at(c) != c) c = parent[c] = parent.at(parent.at(c));
    return c;
  };
  std::vector<bool> fused(n, false);
  for (const auto& [key, idx] : pairs) {
    if (idx.first < 0 || idx.second < 0) continue;
    const ncclComm* a = ops[static_cast<size_t>(idx.first)].comm;
    const ncclComm* b = ops[static_cast<size_t>(idx.second)].comm;
    parent.emplace(a, a);
    parent.emplace(b, b);
    parent[find(a)] = find(b);
    fused[static_cast<size_t>(idx.first)] = fused[static_cast<size_t>(idx.second)] = true;
  }
  // Each component: its ranks in rank order and its transfers (by index into them).
  struct Component {
    std::vector<const ncclComm*> ranks;
    std::vector<model::Transfer> transfers;
    int64_t op = -1;
  };
  std::map<const ncclComm*, Component> components;  // by root
  for (const auto& [c, p] : parent) components[find(c)].ranks.push_back(c);
  auto part_of = [](const Component& k, const ncclComm* c) {
    const auto at = std::find(k.ranks.begin(), k.ranks.end(), c);
    return static_cast<int>(at - k.ranks.begin());
  };
  for (auto& [root, k] : components) {
    std::sort(k.ranks.begin(), k.ranks.end(),
              [](const ncclComm* x, const ncclComm* y) { return x->rank < y->rank; });
  }
  for (const auto& [key, idx] : pairs) {
    if (idx.first < 0 || idx.second < 0) continue;
    const Op& send = ops[static_cast<size_t>(idx.first)];
    const Op& recv = ops[static_cast<size_t>(idx.second)];
    Component& k = components.at(find(send.comm));
    k.transfers.push_back({part_of(k, send.comm), part_of(k, recv.comm), send.bytes});
  }
  std::set<const ncclComm*> launched;
  for (size_t i = 0; i < n; ++i) {
    const Op& op = ops[i];
    if (op.kind != model::Collective::sendrecv) {
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
      for (const ncclComm* c : k.ranks) gpus.push_back(c->device);
      const model::NodeSpec& node = gpu::spec();
      const model::CollectiveCost cost =
          model::point_to_point(node.gpu, node.gpu.topology, gpus, k.transfers, op.comm->channels);
      k.op = create_kernel_op(cost, kernel_name(op, cost.algorithm), op.comm->channels, false);
    }
    try {
      gpu::collective_enqueue(k.op, part_of(k, op.comm), op.stream);
    } catch (const std::exception& e) {
      return refuse(ncclInvalidArgument, e.what());
    }
  }
  return ncclSuccess;
}

Op op_of(const Call& c) {
  Op op;
  switch (c.func) {
    case Func::all_reduce:
      op.kind = model::Collective::allreduce;
      break;
    case Func::broadcast:
    case Func::scatter:  // costed as a Broadcast of one rank's share
      op.kind = model::Collective::broadcast;
      break;
    case Func::reduce:
      op.kind = model::Collective::reduce;
      break;
    case Func::all_gather:
    case Func::gather:
      op.kind = model::Collective::allgather;
      break;
    case Func::reduce_scatter:
      op.kind = model::Collective::reducescatter;
      break;
    case Func::all_to_all:
      op.kind = model::Collective::alltoall;
      break;
    case Func::send:
    case Func::recv:
      op.kind = model::Collective::sendrecv;
      op.peer = c.root;
      op.is_send = c.func == Func::send;
      break;
  }
  op.comm = c.comm;
  op.stream = c.stream;
  const uint64_t payload = payload_bytes(c);
  op.bytes = static_cast<int64_t>(
      c.func == Func::scatter ? payload / static_cast<uint64_t>(c.comm->nranks) : payload);
  op.in_place = op.kind != model::Collective::sendrecv && c.send == c.recv;
  op.label = std::string(common::nccl::reduce_op_kernel_tag(c.redop, c.type)) + "_" +
             common::nccl::datatype_tag(c.type);
  return op;
}

}  // namespace

ncclResult_t model_join(const char* fn, ncclComm* c, const ncclConfig_t* config) {
  std::lock_guard lock(g_mu);
  auto& clique = g_cliques[c->key];
  if (!clique) {
    clique = std::make_shared<Clique>();
    clique->key = c->key;
    clique->nranks = c->nranks;
    clique->ranks.assign(static_cast<size_t>(c->nranks), nullptr);
  }
  if (clique->nranks != c->nranks || clique->ranks[static_cast<size_t>(c->rank)] != nullptr) {
    return fail(ncclInvalidUsage, fn, "rank joined twice or with another size");
  }
  c->clique = clique;
  c->channels = channels_for(config);
  clique->ranks[static_cast<size_t>(c->rank)] = c;
  return ncclSuccess;
}

void model_leave(ncclComm* c) {
  std::lock_guard lock(g_mu);
  c->clique->ranks[static_cast<size_t>(c->rank)] = nullptr;
}

ncclResult_t model_issue(const Call& call) {
  std::lock_guard lock(g_mu);
  t_fn = call.fn;
  return issue(op_of(call));
}

ncclResult_t model_issue_group(const std::vector<Call>& calls) {
  std::vector<Op> ops;
  ops.reserve(calls.size());
  for (const Call& c : calls) ops.push_back(op_of(c));
  std::lock_guard lock(g_mu);
  t_fn = "ncclGroupEnd";
  return issue_group(ops);
}

}  // namespace c3::sim::nccl
