#include "check.h"

#include <stdexcept>

namespace c3::bench::cuda {

void throw_cuda(cudaError_t e, const char* call) {
  // Clears a non-sticky error so that the next call does not report it again.
  cudaGetLastError();
  throw std::runtime_error(std::string(call) + ": " + cudaGetErrorName(e) + " (" +
                           cudaGetErrorString(e) + ")");
}

void throw_nccl(ncclResult_t r, const char* call) {
  std::string msg = std::string(call) + ": " + ncclGetErrorString(r);
  // NCCL keeps a more specific reason for the last failure of this thread.
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && *last != '\0') msg += std::string(" (") + last + ")";
  throw std::runtime_error(msg);
}

void throw_cublas(cublasStatus_t s, const char* call) {
  throw std::runtime_error(std::string(call) + ": " + cublasLtGetStatusName(s) + " (" +
                           cublasLtGetStatusString(s) + ")");
}

}  // namespace c3::bench::cuda
