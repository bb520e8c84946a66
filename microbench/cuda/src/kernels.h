// The backend's own kernels (triad, fma, the SM copy, buffer fills) behind plain host functions,
// so that only kernels.cu goes through nvcc. Each launcher returns the launch's error.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace c3::bench::cuda {

constexpr int kTriadThreads = 256;
constexpr int kFmaThreads = 256;
constexpr int kCopyThreads = 512;
// Independent FMA chains per fma-kernel thread (enough to hide the FMA latency).
constexpr int kFmaChains = 8;
// The SM copy's CTAs when knobs.max_ctas is not set: about what an NCCL collective uses.
constexpr int kDefaultCopyCtas = 32;

enum class FillType { f32, f16, bf16 };

// Resident blocks per SM of the triad and fma kernels: their grids fill every SM once.
struct Occupancy {
  int triad_blocks_per_sm = 1;
  int fma_blocks_per_sm = 1;
};
cudaError_t query_occupancy(Occupancy* out);

// n elements of `type` with values in [-1, 1), a function of (index, seed): random-looking data
// keeps GEMMs from running at the (faster, unrepresentative) speed of zeros.
cudaError_t launch_fill(void* p, int64_t n, FillType type, uint32_t seed, int grid, cudaStream_t s);
// a[i] = b[i] + scalar * c[i], i < n; a, b and c 16-byte aligned.
cudaError_t launch_triad(float* a, const float* b, const float* c, float scalar, int64_t n,
                         int grid, cudaStream_t s);
// grid x kFmaThreads threads, each iters x kFmaChains FMAs; one float per thread to `out`.
cudaError_t launch_fma(float* out, int64_t iters, int grid, cudaStream_t s);
// Copies `bytes` with 16-byte loads and stores (grid-stride, `ctas` CTAs of kCopyThreads);
// dst may be a peer GPU's memory.
cudaError_t launch_copy(void* dst, const void* src, int64_t bytes, int ctas, cudaStream_t s);
cudaError_t launch_empty(cudaStream_t s);

}  // namespace c3::bench::cuda
