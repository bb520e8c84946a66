// Every CUDA, NCCL and cuBLASLt failure becomes a std::runtime_error naming the call and the
// library's error string, so c3bench can report it as one line (the backend never exits).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

namespace c3::bench::cuda {

[[noreturn]] void throw_cuda(cudaError_t e, const char* call);
[[noreturn]] void throw_nccl(ncclResult_t r, const char* call);
[[noreturn]] void throw_cublas(cublasStatus_t s, const char* call);

inline void check_cuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess) throw_cuda(e, call);
}
inline void check_nccl(ncclResult_t r, const char* call) {
  if (r != ncclSuccess) throw_nccl(r, call);
}
inline void check_cublas(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) throw_cublas(s, call);
}

}  // namespace c3::bench::cuda

// The macros keep the call's text for the message.
#define C3_CUDA(call) ::c3::bench::cuda::check_cuda((call), #call)
#define C3_NCCL(call) ::c3::bench::cuda::check_nccl((call), #call)
#define C3_CUBLAS(call) ::c3::bench::cuda::check_cublas((call), #call)
