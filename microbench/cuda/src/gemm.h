// One cuBLASLt matmul shape: C (m x n) = op(A) x B with fp32 accumulation, the algorithm chosen
// once (the heuristic's first) so that every timed iteration runs the same kernel.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "c3/bench/descriptors.h"

namespace c3::bench::cuda {

constexpr size_t kGemmWorkspaceBytes = 32u << 20;

class GemmPlan {
 public:
  // Layout "TN" in cuBLAS's column-major terms (A stored k x m and transposed, B k x n, C m x n),
  // the layout cuBLAS tunes best. Values and majorness do not matter to a benchmark, so a chunk
  // of rows of C is its own contiguous m_i x n problem with its own A_i.
  GemmPlan(cublasLtHandle_t handle, int64_t m, int64_t n, int64_t k, DType dtype);
  ~GemmPlan();
  GemmPlan(const GemmPlan&) = delete;
  GemmPlan& operator=(const GemmPlan&) = delete;

  void run(cublasLtHandle_t handle, const void* a, const void* b, void* c, void* workspace,
           cudaStream_t stream) const;
  const std::string& label() const { return label_; }

 private:
  void destroy();
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  std::string label_;
};

}  // namespace c3::bench::cuda
