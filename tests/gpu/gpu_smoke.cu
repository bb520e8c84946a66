// A small real CUDA + NCCL job for scripts/gpu-validate: kernels of known length on two streams,
// each timed with CUDA events; copies in every direction; a memset; a 1-rank NCCL AllReduce, alone
// and in a group; NVTX ranges and a named stream. It writes what it did to an expectations file
// that tests/gpu/gpu_smoke_test.cpp compares with the trace the collector recorded.
//
// usage: c3_gpu_smoke EXPECTATIONS_FILE
//        c3_gpu_smoke --launches N     (launch-rate mode, for overhead measurements)
#include <cuda_runtime.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(x)                                                                               \
  do {                                                                                         \
    cudaError_t e_ = (x);                                                                      \
    if (e_ != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)
#define NCCL_CHECK(x)                                                                          \
  do {                                                                                         \
    ncclResult_t r_ = (x);                                                                     \
    if (r_ != ncclSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_)); \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

// Spins for about `ns` nanoseconds of GPU time (globaltimer), so durations are known.
__global__ void c3_spin(unsigned long long ns, int* sink) {
  unsigned long long start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  unsigned long long now = start;
  while (now - start < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicAdd(sink, 1);
}

__global__ void c3_empty() {}

// Launch-rate mode, for measuring the collector's overhead on a launch-bound job: N empty
// kernels on one stream, timed on the host.
int launch_rate(int n) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  c3_empty<<<1, 32, 0, s>>>();
  CHECK(cudaStreamSynchronize(s));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  CHECK(cudaEventRecord(a, s));
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) c3_empty<<<1, 32, 0, s>>>();
  CHECK(cudaEventRecord(b, s));
  CHECK(cudaStreamSynchronize(s));
  double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("launches %d in %.3f s: %.0f launches/s\n", n, sec, n / sec);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 3 && std::string(argv[1]) == "--launches") return launch_rate(std::atoi(argv[2]));
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s EXPECTATIONS_FILE\n", argv[0]);
    return 2;
  }
  FILE* out = std::fopen(argv[1], "w");
  if (!out) {
    std::perror(argv[1]);
    return 2;
  }
  CHECK(cudaSetDevice(0));
  int lo = 0, hi = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t compute, comm;
  CHECK(cudaStreamCreateWithPriority(&compute, cudaStreamNonBlocking, lo));
  CHECK(cudaStreamCreateWithPriority(&comm, cudaStreamNonBlocking, hi));
  nvtxNameCudaStreamA(comm, "comm");
  int* sink = nullptr;
  CHECK(cudaMalloc(&sink, sizeof(int)));

  // Warm-up outside the measured set (module load, first-launch costs).
  c3_spin<<<1, 32, 0, compute>>>(1000, sink);
  CHECK(cudaDeviceSynchronize());

  const int kKernels = 24;
  std::vector<cudaEvent_t> ev(2 * kKernels);
  for (auto& e : ev) CHECK(cudaEventCreate(&e));
  nvtxRangePushA("kernels");
  for (int i = 0; i < kKernels; ++i) {
    cudaStream_t s = (i % 2) ? comm : compute;
    unsigned long long ns = 20000ull + 10000ull * static_cast<unsigned long long>(i % 6);
    CHECK(cudaEventRecord(ev[2 * i], s));
    c3_spin<<<66 + (i % 3), 128, 0, s>>>(ns, sink);
    CHECK(cudaEventRecord(ev[2 * i + 1], s));
  }
  nvtxRangePop();
  CHECK(cudaDeviceSynchronize());
  std::fprintf(out, "spin_kernels %d\n", kKernels + 1);
  for (int i = 0; i < kKernels; ++i) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    std::fprintf(out, "kernel %d grid %d event_ns %.0f\n", i, 66 + (i % 3), ms * 1e6);
  }

  nvtxRangePushA("copies");
  const size_t bytes = 64 << 20;
  void *host = nullptr, *d1 = nullptr, *d2 = nullptr;
  CHECK(cudaMallocHost(&host, bytes));
  CHECK(cudaMalloc(&d1, bytes));
  CHECK(cudaMalloc(&d2, bytes));
  CHECK(cudaMemcpyAsync(d1, host, bytes, cudaMemcpyHostToDevice, compute));
  CHECK(cudaMemcpyAsync(d2, d1, bytes, cudaMemcpyDeviceToDevice, compute));
  CHECK(cudaMemcpyAsync(host, d2, bytes, cudaMemcpyDeviceToHost, compute));
  CHECK(cudaMemsetAsync(d1, 0, bytes, comm));
  CHECK(cudaStreamSynchronize(compute));
  CHECK(cudaStreamSynchronize(comm));
  nvtxRangePop();
  std::fprintf(out, "memcpy H2D %zu\nmemcpy D2D %zu\nmemcpy D2H %zu\nmemset %zu\n", bytes, bytes,
               bytes, bytes);

  // One rank: NCCL launches a kernel only when the reduction needs one (a pre-multiplied sum);
  // a plain out-of-place AllReduce is a device-to-device copy.
  nvtxRangePushA("nccl");
  ncclComm_t nc;
  int dev = 0;
  NCCL_CHECK(ncclCommInitAll(&nc, 1, &dev));
  float scale = 2.0f;
  ncclRedOp_t premul;
  NCCL_CHECK(ncclRedOpCreatePreMulSum(&premul, &scale, ncclFloat32, ncclScalarHostImmediate, nc));
  const size_t count = 16 << 20;
  NCCL_CHECK(ncclAllReduce(d1, d2, count, ncclFloat32, premul, nc, comm));
  NCCL_CHECK(ncclGroupStart());
  NCCL_CHECK(ncclAllReduce(d1, d2, count / 2, ncclFloat32, premul, nc, comm));
  NCCL_CHECK(ncclAllReduce(d2, d1, count / 2, ncclFloat32, premul, nc, comm));
  NCCL_CHECK(ncclGroupEnd());
  NCCL_CHECK(ncclAllReduce(d1, d2, count, ncclFloat32, ncclSum, nc, comm));
  CHECK(cudaStreamSynchronize(comm));
  nvtxRangePop();
  NCCL_CHECK(ncclRedOpDestroy(premul, nc));
  NCCL_CHECK(ncclCommDestroy(nc));
  std::fprintf(out, "allreduce %zu\n", count);

  int hits = 0;
  CHECK(cudaMemcpy(&hits, sink, sizeof hits, cudaMemcpyDeviceToHost));
  std::fprintf(out, "spin_hits %d\n", hits);
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::fprintf(out, "device_name %s\nsm_count %d\n", prop.name, prop.multiProcessorCount);
  std::fclose(out);
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(d1));
  CHECK(cudaFree(d2));
  CHECK(cudaFree(sink));
  return 0;
}
