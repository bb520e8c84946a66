#include "gemm.h"

#include <stdexcept>

#include "check.h"

namespace c3::bench::cuda {
namespace {

cudaDataType_t data_type(DType t) {
  switch (t) {
    case DType::fp32:
      return CUDA_R_32F;
    case DType::fp16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
  }
  throw std::invalid_argument("unknown dtype");
}

}  // namespace

GemmPlan::GemmPlan(cublasLtHandle_t handle, int64_t m, int64_t n, int64_t k, DType dtype) {
  label_ = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
           dtype_name(dtype);
  cudaDataType_t t = data_type(dtype);
  auto um = static_cast<uint64_t>(m), un = static_cast<uint64_t>(n), uk = static_cast<uint64_t>(k);
  cublasLtMatmulPreference_t pref = nullptr;
  try {
    C3_CUBLAS(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t trans = CUBLAS_OP_T, no = CUBLAS_OP_N;
    C3_CUBLAS(
        cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &trans, sizeof trans));
    C3_CUBLAS(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &no, sizeof no));
    C3_CUBLAS(cublasLtMatrixLayoutCreate(&a_, t, uk, um, k));
    C3_CUBLAS(cublasLtMatrixLayoutCreate(&b_, t, uk, un, k));
    C3_CUBLAS(cublasLtMatrixLayoutCreate(&c_, t, um, un, m));
    C3_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws = kGemmWorkspaceBytes;
    C3_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                   &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    C3_CUBLAS(
        cublasLtMatmulAlgoGetHeuristic(handle, desc_, a_, b_, c_, c_, pref, 1, &result, &found));
    if (found < 1) throw std::runtime_error("cuBLASLt has no algorithm for " + label_);
    algo_ = result.algo;
    cublasLtMatmulPreferenceDestroy(pref);
  } catch (...) {
    if (pref != nullptr) cublasLtMatmulPreferenceDestroy(pref);
    destroy();
    throw;
  }
}

GemmPlan::~GemmPlan() {
  destroy();
}

void GemmPlan::destroy() {
  if (c_ != nullptr) cublasLtMatrixLayoutDestroy(c_);
  if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
  if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
  if (desc_ != nullptr) cublasLtMatmulDescDestroy(desc_);
  c_ = b_ = a_ = nullptr;
  desc_ = nullptr;
}

void GemmPlan::run(cublasLtHandle_t handle, const void* a, const void* b, void* c, void* workspace,
                   cudaStream_t stream) const {
  const float alpha = 1.0f, beta = 0.0f;
  C3_CUBLAS(cublasLtMatmul(handle, desc_, &alpha, a, a_, b, b_, &beta, c, c_, c, c_, &algo_,
                           workspace, kGemmWorkspaceBytes, stream));
}

}  // namespace c3::bench::cuda
