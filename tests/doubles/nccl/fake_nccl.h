// Internal interface of the fake NCCL (libnccl.so.2 double):
//   fake_nccl_comm.cpp  communicators, unique ids, errors, reduction ops, memory, failures
//   fake_nccl_ops.cpp   collectives, send/recv and groups, launched on the fake GPU
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string_view>

#define C3FAKE_EXPORT __attribute__((visibility("default")))

// Real NCCL exports every function twice: ncclX and the profiling-interface name pncclX. The
// double makes pncclX an alias of ncclX (same address). Use inside extern "C", after ncclX.
#define C3FAKE_PNCCL_ALIAS(name, ret, params) \
  C3FAKE_EXPORT ret p##name params __attribute__((alias(#name)));

// The communicator behind ncclComm_t (declared, incomplete, by nccl.h).
struct ncclComm {
  uint32_t magic;
  int rank;
  int nranks;
  int device;
  ncclUniqueId id;
  bool finalized;
};

namespace c3::fake::nccl {

// C3FAKE_NCCL_FAIL: comma-separated NCCL function names, or "all".
bool injected_failure(std::string_view function);

// Records the message returned by ncclGetLastError and returns `result`.
ncclResult_t fail(ncclResult_t result, std::string_view function, std::string_view why);

// A communicator that is alive (created here and not destroyed/aborted).
bool comm_alive(ncclComm_t comm);
// A built-in reduction or one from ncclRedOpCreatePreMulSum that was not destroyed.
bool redop_valid(ncclRedOp_t op);

}  // namespace c3::fake::nccl
