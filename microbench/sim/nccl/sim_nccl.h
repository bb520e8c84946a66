// Internal interface of the simulated NCCL (libnccl.so.2, nccl.h 2.28 signatures). One front end
// and two drivers, as the simulated GPU's CUPTI facade has:
//   api.cpp           every exported function: communicators, unique ids, errors, reduction ops,
//                     memory, argument checks, failure injection (C3FAKE_NCCL_FAIL) and groups
//   model_driver.cpp  communicators made while the simulated node runs (c3/sim/gpu/node.h):
//                     ranks rendezvous, each collective is one node operation costed by the model
//   fixed_time.cpp    every other communicator (tests): no rendezvous, one kernel per call on the
//                     fixed-time GPU driver (c3/sim/gpu/fixed_time.h) with a fixed duration
// A process uses one driver or the other, never both (as with the GPU's two drivers).
#pragma once

#include <nccl.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "c3/common/nccl_types.h"
#include "c3/common/nccl_types_check.h"

#define C3_NCCL_EXPORT __attribute__((visibility("default")))

// Real NCCL exports every function twice: ncclX and the profiling-interface name pncclX. Here
// pncclX is an alias of ncclX (same address, nccl.h's signature). Use inside extern "C", after
// ncclX.
#define C3_PNCCL_ALIAS(name) C3_NCCL_EXPORT decltype(name) p##name __attribute__((alias(#name)));

namespace c3::sim::nccl {
struct Clique;  // model_driver.cpp
}  // namespace c3::sim::nccl

// The communicator behind ncclComm_t (declared, incomplete, by nccl.h).
struct ncclComm {
  int rank = 0;
  int nranks = 0;
  int device = 0;
  std::string key;  // the unique id's bytes, or the parent's key and the split/shrink call
  bool finalized = false;
  int64_t children = 0;  // ncclCommSplit/ncclCommShrink calls on this communicator so far
  // The model driver's (null for the fixed-time driver): the ranks of this communicator.
  std::shared_ptr<c3::sim::nccl::Clique> clique;
  int channels = 0;
  int64_t coll_seq = 0;
  std::map<std::pair<int, int>, int64_t> p2p_seq;  // (from, to) -> Send/Recv count
};

namespace c3::sim::nccl {

// The NCCL functions that move data.
enum class Func {
  all_reduce,
  broadcast,
  reduce,
  all_gather,
  reduce_scatter,
  all_to_all,
  gather,
  scatter,
  send,
  recv
};

// One call of a Func, checked: a live communicator, a valid type and reduction, root or peer in
// range, the buffers it needs, a valid stream (NULL resolved to the device's null stream).
struct Call {
  const char* fn = "";  // the NCCL function's name
  Func func = Func::all_reduce;
  const void* send = nullptr;
  const void* recv = nullptr;
  size_t count = 0;
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t redop = ncclSum;  // ncclSum for the calls that do not reduce
  int root = 0;                 // rooted collectives; the peer of Send/Recv
  ncclComm_t comm = nullptr;
  void* stream = nullptr;
};

// Bytes each rank moves: count x type size, x nranks for AllGather, ReduceScatter, AlltoAll,
// Gather and Scatter.
uint64_t payload_bytes(const Call& c);

// Records the message ncclGetLastError returns ("function: why") and returns `result`.
ncclResult_t fail(ncclResult_t result, std::string_view function, std::string_view why);

// The model driver. join() adds a new communicator to the clique of its key (the config's CTA
// bounds and NCCL_MIN/MAX_NCHANNELS set its channels); leave() takes it out before it is freed.
ncclResult_t model_join(const char* fn, ncclComm* comm, const ncclConfig_t* config);
void model_leave(ncclComm* comm);
ncclResult_t model_issue(const Call& call);
ncclResult_t model_issue_group(const std::vector<Call>& calls);

// The fixed-time driver: one kernel per call; at a group's end one kernel per stream.
void fixed_time_issue(const Call& call);
void fixed_time_issue_group(const std::vector<Call>& calls);

}  // namespace c3::sim::nccl
