// A "GPU job" for end-to-end tests: it does CUDA-like work on the fake GPU (tests/doubles), NCCL
// calls on the fake NCCL and NVTX ranges through the real NVTX v3 headers, exactly as a job would,
// and knows nothing about c3scope. The tests inject the real collector and check the trace.
//
// usage: c3_gpu_job MODE [ARGS]   (modes below; stdout prints what the test needs to know)
#include <c3/sim/gpu/fixed_time.h>
#include <cupti_activity.h>
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

void launch(void* stream, const char* name, uint64_t ns) {
  c3fake_launch_kernel(stream, name, 128, 1, 1, 256, 1, 1, 32, 0, 0, ns);
}

// Two streams, kernels, copies of every direction, a memset, syncs, nested NVTX.
int basic() {
  c3fake_cuInit();
  void* compute = c3fake_stream_create(0, 0, 1);
  void* comm = c3fake_stream_create(0, -1, 1);
  nvtxNameCudaStreamA(static_cast<cudaStream_t>(comm), "comm stream");
  nvtxRangePushA("step");
  nvtxRangePushA("forward");
  for (int i = 0; i < 3; ++i) launch(compute, "_Z4gemmILi128EEvPfS0_", 20000);
  launch(comm, "reduce_kernel", 15000);
  nvtxRangePop();
  c3fake_memcpy(compute, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20, 0, 0, 8000);
  c3fake_memcpy(compute, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 1 << 16, 0, 0, 3000);
  c3fake_memcpy(comm, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 1 << 24, 0, 0, 5000);
  c3fake_memset(compute, 4096, 0, 1000);
  nvtxMarkA("checkpoint");
  c3fake_stream_synchronize(compute);
  nvtxRangePop();
  c3fake_context_synchronize(0);
  std::printf("compute=%u comm=%u\n", c3fake_stream_id(compute), c3fake_stream_id(comm));
  return 0;
}

// Peer-to-peer copy between two fake devices (C3FAKE_DEVICES=2).
int p2p() {
  c3fake_cuInit();
  void* s = c3fake_stream_create(0, 0, 1);
  c3fake_memcpy(s, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, 1 << 22, 0, 1, 6000);
  c3fake_stream_synchronize(s);
  return 0;
}

// NCCL: one rank of a 2-rank communicator, single ops, a group, a split, teardown.
int nccl() {
  c3fake_cuInit();
  void* s = c3fake_stream_create(0, 0, 1);
  auto stream = static_cast<cudaStream_t>(s);
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  std::strcpy(id.internal, "c3scope-e2e-unique-id");  // every rank gets the same bytes
  ncclComm_t comm = nullptr;
  if (ncclCommInitRank(&comm, 2, id, 0) != ncclSuccess) return 10;
  float* buf = reinterpret_cast<float*>(0x1000);  // the fake never dereferences buffers
  nvtxRangePushA("allreduce");
  if (ncclAllReduce(buf, buf, 1 << 20, ncclFloat32, ncclSum, comm, stream) != ncclSuccess)
    return 11;
  nvtxRangePop();
  if (ncclBroadcast(buf, buf, 1000, ncclBfloat16, 1, comm, stream) != ncclSuccess) return 12;
  ncclGroupStart();
  ncclAllGather(buf, buf, 4096, ncclFloat16, comm, stream);
  ncclSend(buf, 256, ncclInt32, 1, comm, stream);
  ncclRecv(buf, 256, ncclInt32, 1, comm, stream);
  if (ncclGroupEnd() != ncclSuccess) return 13;
  ncclSend(buf, 128, ncclInt32, 1, comm, stream);
  ncclComm_t sub = nullptr;
  if (ncclCommSplit(comm, 7, 0, &sub, nullptr) != ncclSuccess || !sub) return 14;
  ncclReduceScatter(buf, buf, 512, ncclFloat32, ncclMax, sub, stream);
  c3fake_stream_synchronize(s);
  ncclCommDestroy(sub);
  ncclCommFinalize(comm);
  ncclCommDestroy(comm);
  return 0;
}

// N threads, each with its own stream, nested NVTX ranges and kernels.
int threads(int n, int iters) {
  c3fake_cuInit();
  std::vector<std::thread> ts;
  ts.reserve(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) {
    ts.emplace_back([t, iters] {
      void* s = c3fake_stream_create(0, 0, 1);
      std::string name = "worker" + std::to_string(t);
      for (int i = 0; i < iters; ++i) {
        nvtxRangePushA(name.c_str());
        nvtxRangePushA("inner");
        launch(s, "thread_kernel", 1000);
        nvtxRangePop();
        nvtxRangePop();
      }
    });
  }
  for (auto& t : ts) t.join();
  return 0;
}

// Work, then a child that records NVTX of its own, then more work in the parent. The child
// leaves with exit() (atexit handlers run) or, with quick_exit = true, with _exit().
int forked(bool quick_exit) {
  c3fake_cuInit();
  void* s = c3fake_stream_create(0, 0, 1);
  nvtxRangePushA("parent-before-fork");
  launch(s, "parent_kernel", 1000);
  pid_t pid = fork();
  if (pid == 0) {
    nvtxMarkA("child-mark");
    nvtxRangePushA("child-range");
    nvtxRangePop();
    if (quick_exit) _exit(0);
    std::exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  launch(s, "parent_kernel_after", 1000);
  nvtxRangePop();
  std::printf("child=%d\n", static_cast<int>(pid));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

// Records, then replaces itself with `c3_gpu_job basic` (same pid).
int exec_self(const char* self) {
  c3fake_cuInit();
  nvtxRangePushA("before-exec");
  launch(c3fake_stream_create(0, 0, 1), "pre_exec_kernel", 1000);
  nvtxRangePop();
  std::fflush(stdout);
  execl(self, self, "basic", static_cast<char*>(nullptr));
  return 98;
}

// Records, says "ready", then waits to be signalled or killed.
int wait_for_signal(int kernels) {
  c3fake_cuInit();
  void* s = c3fake_stream_create(0, 0, 1);
  nvtxRangePushA("long-running");
  for (int i = 0; i < kernels; ++i) launch(s, "early_kernel", 1000);
  nvtxMarkA("early-mark");
  std::printf("ready\n");
  std::fflush(stdout);
  for (;;) pause();
}

// Many kernels on a tiny pool: CUPTI drops what it cannot store.
int many(int n) {
  c3fake_cuInit();
  void* s = c3fake_stream_create(0, 0, 1);
  for (int i = 0; i < n; ++i) launch(s, "many_kernel", 100);
  c3fake_stream_synchronize(s);
  return 0;
}

// What scripts/demo records: a few training-like steps, each a forward pass of GEMMs on the
// compute stream while the previous step's gradients are all-reduced on a high-priority
// communication stream, with an input copy and NVTX step ranges.
int demo(int steps) {
  c3fake_cuInit();
  void* compute = c3fake_stream_create(0, 0, 1);
  void* comm = c3fake_stream_create(0, -1, 1);
  nvtxNameCudaStreamA(static_cast<cudaStream_t>(compute), "compute");
  nvtxNameCudaStreamA(static_cast<cudaStream_t>(comm), "nccl");
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  std::strcpy(id.internal, "c3scope-demo");
  ncclComm_t nc = nullptr;
  if (ncclCommInitRank(&nc, 1, id, 0) != ncclSuccess) return 10;
  float* grads = reinterpret_cast<float*>(0x1000);
  for (int step = 0; step < steps; ++step) {
    std::string name = "step " + std::to_string(step);
    nvtxRangePushA(name.c_str());
    c3fake_memcpy(compute, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 32 << 20, 0, 0, 40000);
    nvtxRangePushA("forward");
    for (int layer = 0; layer < 4; ++layer) {
      c3fake_launch_kernel(compute, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64",
                           132, 1, 1, 384, 1, 1, 168, 0, 213 * 1024, 120000);
    }
    nvtxRangePop();
    if (step > 0)
      ncclAllReduce(grads, grads, 64 << 20, ncclBfloat16, ncclSum, nc,
                    static_cast<cudaStream_t>(comm));
    nvtxRangePushA("backward");
    for (int layer = 0; layer < 4; ++layer) {
      c3fake_launch_kernel(compute, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64",
                           132, 1, 1, 384, 1, 1, 168, 0, 213 * 1024, 240000);
    }
    nvtxRangePop();
    c3fake_stream_synchronize(compute);
    nvtxRangePop();
  }
  c3fake_stream_synchronize(comm);
  ncclCommDestroy(nc);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: %s basic|demo [STEPS]|p2p|nccl|threads N I|fork [_exit]|exec|wait K|many N|exit C|"
        "nvtx-only|segv\n",
        argv[0]);
    return 2;
  }
  std::string mode = argv[1];
  auto arg = [&](int i, int def) { return argc > i ? std::atoi(argv[i]) : def; };
  if (mode == "basic") return basic();
  if (mode == "demo") return demo(arg(2, 5));
  if (mode == "p2p") return p2p();
  if (mode == "nccl") return nccl();
  if (mode == "threads") return threads(arg(2, 16), arg(3, 100));
  if (mode == "fork") return forked(argc > 2 && std::string(argv[2]) == "_exit");
  if (mode == "exec") return exec_self(argv[0]);
  if (mode == "wait") return wait_for_signal(arg(2, 10));
  if (mode == "many") return many(arg(2, 100000));
  if (mode == "exit") {
    basic();
    std::printf("exiting with %d\n", arg(2, 0));
    std::exit(arg(2, 0));
  }
  if (mode == "nvtx-only") {
    // No CUDA at all: only NVTX (the trace must still hold it).
    nvtxRangePushA("cpu-only");
    nvtxMarkA("m");
    nvtxRangePop();
    return 0;
  }
  if (mode == "segv") {
    basic();
    std::fflush(stdout);
    raise(SIGSEGV);
  }
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
