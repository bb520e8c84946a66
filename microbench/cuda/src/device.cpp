#include "device.h"

#include <nvtx3/nvToolsExtCudaRt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "check.h"

namespace c3::bench::cuda {
namespace {

// An event that is destroyed with its scope (overhead measurement, calibration).
struct ScopedEvent {
  cudaEvent_t e = nullptr;
  ScopedEvent() { C3_CUDA(cudaEventCreate(&e)); }
  ~ScopedEvent() { cudaEventDestroy(e); }
  ScopedEvent(const ScopedEvent&) = delete;
  ScopedEvent& operator=(const ScopedEvent&) = delete;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

FillType fill_type(DType t) {
  switch (t) {
    case DType::fp32:
      return FillType::f32;
    case DType::fp16:
      return FillType::f16;
    case DType::bf16:
      return FillType::bf16;
  }
  return FillType::f32;
}

size_t fill_size(FillType t) {
  return t == FillType::f32 ? 4 : 2;
}

void create_event(cudaEvent_t* e, unsigned flags = cudaEventDefault) {
  C3_CUDA(cudaEventCreateWithFlags(e, flags));
}

void destroy_event(cudaEvent_t* e) {
  if (*e != nullptr) cudaEventDestroy(*e);
  *e = nullptr;
}

void destroy_stream(cudaStream_t* s) {
  if (*s == nullptr) return;
  cudaStreamSynchronize(*s);
  cudaStreamDestroy(*s);
  *s = nullptr;
}

}  // namespace

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

StreamSet::~StreamSet() {
  // Teardown never throws; a failing context switch leaks the handles rather than crash.
  try {
    {
      CtxScope scope(api(), compute_ctx());
      destroy_stream(&compute);
      for (cudaEvent_t* e : {&comp_start, &comp_end, &comm_start_c, &comm_end_c}) destroy_event(e);
      for (cudaEvent_t& e : chunk_done) destroy_event(&e);
    }
    {
      CtxScope scope(api(), comm_ctx());
      destroy_stream(&comm);
      destroy_event(&comm_start);
      destroy_event(&comm_end);
    }
  } catch (...) {
  }
  destroy_stream(&anchor);
  destroy_event(&anchor_start);
  destroy_event(&anchor_end);
  cudaGetLastError();
  green.reset();
}

DeviceState::DeviceState(int device, const GreenApi* green, bool verbose)
    : device_(device), green_(green), verbose_(verbose) {
  try {
    C3_CUDA(cudaGetDeviceProperties(&props_, device_));
    C3_CUDA(query_occupancy(&occupancy_));
    C3_CUDA(cudaDeviceGetStreamPriorityRange(&least_priority_, &greatest_priority_));
    C3_CUDA(cudaStreamCreateWithFlags(&util_, cudaStreamNonBlocking));
    C3_CUBLAS(cublasLtCreate(&lt_));
    C3_CUDA(cudaMalloc(&workspace_, kGemmWorkspaceBytes));
    size_t threads = static_cast<size_t>(props_.multiProcessorCount) *
                     static_cast<size_t>(occupancy_.fma_blocks_per_sm) * kFmaThreads;
    C3_CUDA(cudaMalloc(&fma_out_, threads * sizeof(float)));
  } catch (...) {
    teardown();
    throw;
  }
}

DeviceState::~DeviceState() {
  teardown();
}

void DeviceState::teardown() {
  cudaDeviceSynchronize();
  streams_.clear();
  plans_.clear();
  for (Buffer* b : {&gemm_a_, &gemm_b_, &gemm_c_, &triad_a_, &triad_b_, &triad_c_, &send_, &recv_,
                    &peer_recv_}) {
    release(*b);
  }
  if (fma_out_ != nullptr) cudaFree(fma_out_);
  if (workspace_ != nullptr) cudaFree(workspace_);
  if (lt_ != nullptr) cublasLtDestroy(lt_);
  if (util_ != nullptr) cudaStreamDestroy(util_);
  fma_out_ = nullptr;
  workspace_ = nullptr;
  lt_ = nullptr;
  util_ = nullptr;
  cudaGetLastError();
}

std::string DeviceState::measure_overhead() {
  constexpr int kSamples = 100;
  ScopedEvent a, b;
  C3_CUDA(launch_empty(util_));
  C3_CUDA(cudaStreamSynchronize(util_));
  std::vector<double> pair_us, launch_us;
  for (int i = 0; i < kSamples; ++i) {
    C3_CUDA(cudaEventRecord(a.e, util_));
    C3_CUDA(cudaEventRecord(b.e, util_));
    C3_CUDA(cudaEventSynchronize(b.e));
    float ms = 0;
    C3_CUDA(cudaEventElapsedTime(&ms, a.e, b.e));
    pair_us.push_back(static_cast<double>(ms) * 1e3);
  }
  for (int i = 0; i < kSamples; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    C3_CUDA(launch_empty(util_));
    C3_CUDA(cudaStreamSynchronize(util_));
    auto t1 = std::chrono::steady_clock::now();
    launch_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "event pair %.1f us, empty launch+sync %.1f us (median of %d)",
                median(pair_us), median(launch_us), kSamples);
  return buf;
}

double DeviceState::time_fma(int64_t iterations, int repeats) {
  ScopedEvent a, b;
  int grid = props_.multiProcessorCount * occupancy_.fma_blocks_per_sm;
  std::vector<double> ns;
  for (int r = 0; r < repeats; ++r) {
    C3_CUDA(cudaEventRecord(a.e, util_));
    C3_CUDA(launch_fma(fma_out_, iterations, grid, util_));
    C3_CUDA(cudaEventRecord(b.e, util_));
    C3_CUDA(cudaEventSynchronize(b.e));
    float ms = 0;
    C3_CUDA(cudaEventElapsedTime(&ms, a.e, b.e));
    ns.push_back(static_cast<double>(ms) * 1e6);
  }
  return median(ns);
}

// The kernel's time is affine in its iteration count (t = a + b * iters): two sizes give a and
// b, the model gives each target's count, and one measured correction absorbs what the model
// misses (clock changes, tail effects).
FmaTable DeviceState::calibrate_fma(const std::vector<int64_t>& targets_ns) {
  FmaTable table;
  if (targets_ns.empty()) return table;
  for (int i = 0; i < 3; ++i) time_fma(4096, 3);  // lets the clocks rise
  const int64_t i1 = 1024;
  double t1 = time_fma(i1, 5);
  double per_iter = t1 / static_cast<double>(i1);
  auto i2 = std::max<int64_t>(8 * i1, static_cast<int64_t>(2e6 / std::max(per_iter, 1e-3)));
  double t2 = time_fma(i2, 5);
  double b = (t2 - t1) / static_cast<double>(i2 - i1);
  if (!(b > 0)) {
    throw std::runtime_error("fma calibration failed: " + std::to_string(i1) + " and " +
                             std::to_string(i2) + " iterations took " + std::to_string(t1) +
                             " and " + std::to_string(t2) + " ns");
  }
  double a = t1 - b * static_cast<double>(i1);
  for (int64_t target : targets_ns) {
    if (table.count(target) != 0) continue;
    double want = static_cast<double>(target);
    auto iters = std::max<int64_t>(1, std::llround((want - a) / b));
    double t = time_fma(iters, 5);
    if (std::fabs(t - want) > 0.02 * want && t - a > 0) {
      iters = std::max<int64_t>(1, std::llround(static_cast<double>(iters) * (want - a) / (t - a)));
      t = time_fma(iters, 5);
    }
    table[target] = FmaCalibration{iters, t};
    if (verbose_) {
      std::fprintf(stderr,
                   "c3bench-cuda: GPU %d: fma of %.1f us -> %lld iterations, %.1f us alone "
                   "(%.3g FLOP)\n",
                   device_, want / 1e3, static_cast<long long>(iters), t / 1e3,
                   2.0 * kFmaChains * static_cast<double>(iters) * props_.multiProcessorCount *
                       occupancy_.fma_blocks_per_sm * kFmaThreads);
    }
  }
  return table;
}

StreamSet& DeviceState::streams_for(Knobs::Priority priority, int pct) {
  StreamKey key{static_cast<int>(priority), pct};
  auto it = streams_.find(key);
  if (it != streams_.end()) return *it->second;
  auto ss = std::make_unique<StreamSet>();
  // "equal" leaves both at the default priority (0, the least on current GPUs).
  int comp_p = 0, comm_p = 0;
  if (priority == Knobs::Priority::comm_high) {
    comm_p = greatest_priority_;
    comp_p = least_priority_;
  } else if (priority == Knobs::Priority::comm_low) {
    comm_p = least_priority_;
    comp_p = greatest_priority_;
  }
  if (pct > 0) {
    if (green_ == nullptr || !green_->available()) {
      throw std::runtime_error(
          "SM partitioning needs CUDA green contexts (driver 550+/CUDA 12.4+): " +
          (green_ ? green_->unavailable_reason() : std::string("not loaded")));
    }
    ss->green = std::make_unique<GreenPartition>(*green_, device_, pct);
    ss->compute = ss->green->make_stream(true, comp_p);
    ss->comm = ss->green->make_stream(false, comm_p);
    C3_CUDA(cudaStreamCreateWithFlags(&ss->anchor, cudaStreamNonBlocking));
    create_event(&ss->anchor_start);
    create_event(&ss->anchor_end);
    if (verbose_) {
      const auto& s = ss->green->split();
      std::fprintf(stderr, "c3bench-cuda: GPU %d: %d%% partition: compute %u SMs, comm %u of %u\n",
                   device_, pct, s.compute_sms, s.comm_sms, s.total_sms);
    }
  } else {
    C3_CUDA(cudaStreamCreateWithPriority(&ss->compute, cudaStreamNonBlocking, comp_p));
    C3_CUDA(cudaStreamCreateWithPriority(&ss->comm, cudaStreamNonBlocking, comm_p));
  }
  {
    CtxScope scope(ss->api(), ss->compute_ctx());
    for (cudaEvent_t* e : {&ss->comp_start, &ss->comp_end, &ss->comm_start_c, &ss->comm_end_c}) {
      create_event(e);
    }
  }
  {
    CtxScope scope(ss->api(), ss->comm_ctx());
    create_event(&ss->comm_start);
    create_event(&ss->comm_end);
  }
  nvtxNameCudaStreamA(ss->compute, "compute");
  nvtxNameCudaStreamA(ss->comm, "comm");
  return *streams_.emplace(key, std::move(ss)).first->second;
}

void DeviceState::release(Buffer& b) {
  if (b.ptr != nullptr) cudaFree(b.ptr);
  b = Buffer{};
}

void DeviceState::allocate(const Case& c, const CaseLayout& L) {
  prep_.streams = &streams_for(c.knobs.priority, c.knobs.sm_partition_pct);
  struct Need {
    Buffer* b;
    size_t bytes;
    const char* what;
  };
  std::vector<Need> needs = {
      {&gemm_a_, L.gemm_a, "gemm A"},
      {&gemm_b_, L.gemm_b, "gemm B"},
      {&gemm_c_, L.gemm_c, "gemm C"},
      {&triad_a_, L.triad, "triad a"},
      {&triad_b_, L.triad, "triad b"},
      {&triad_c_, L.triad, "triad c"},
      {&send_, L.comm_send, "send buffer"},
      {&recv_, L.peer ? 0 : L.comm_recv, "receive buffer"},
      {&peer_recv_, L.peer ? L.comm_recv : 0, "peer receive buffer"},
  };
  auto grow = [](Need& n) {
    if (n.bytes == 0 || n.b->size >= n.bytes) return true;
    if (n.b->ptr != nullptr) cudaFree(n.b->ptr);
    *n.b = Buffer{};
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, n.bytes);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      return false;
    }
    if (e != cudaSuccess) throw_cuda(e, "cudaMalloc");
    n.b->ptr = p;
    n.b->size = n.bytes;
    return true;
  };
  for (Need& n : needs) {
    if (grow(n)) continue;
    // Buffers kept from earlier cases that this one does not use go first.
    for (Need& o : needs) {
      if (o.bytes == 0) release(*o.b);
    }
    if (grow(n)) continue;
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    cudaGetLastError();
    throw std::runtime_error("out of memory: the " + std::string(n.what) + " of " + c.label() +
                             " needs " + human_bytes(static_cast<double>(n.bytes)) + " (" +
                             human_bytes(static_cast<double>(free_b)) + " free of " +
                             human_bytes(static_cast<double>(total_b)) + ")");
  }
}

void DeviceState::enable_peer_access(int peer) {
  if (std::find(peers_enabled_.begin(), peers_enabled_.end(), peer) != peers_enabled_.end()) {
    return;
  }
  int can = 0;
  C3_CUDA(cudaDeviceCanAccessPeer(&can, device_, peer));
  if (can != 0) {
    cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();
    } else {
      C3_CUDA(e);
    }
  }
  // Without peer access cudaMemcpyPeerAsync still works (staged); check() refuses sm_copy.
  peers_enabled_.push_back(peer);
}

void DeviceState::fill(Buffer& b, size_t bytes, FillType type) {
  if (bytes == 0 || b.filled == static_cast<int>(type)) return;
  int grid = props_.multiProcessorCount * 4;
  auto n = static_cast<int64_t>(b.size / fill_size(type));
  auto seed = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(b.ptr) >> 8);
  C3_CUDA(launch_fill(b.ptr, n, type, seed, grid, util_));
  b.filled = static_cast<int>(type);
}

const GemmPlan& DeviceState::plan_for(const ComputeOp& op) {
  auto key = std::make_tuple(op.m, op.n, op.k, static_cast<int>(op.dtype));
  auto it = plans_.find(key);
  if (it != plans_.end()) return *it->second;
  auto plan = std::make_unique<GemmPlan>(lt_, op.m, op.n, op.k, op.dtype);
  return *plans_.emplace(key, std::move(plan)).first->second;
}

void DeviceState::finish_prepare(const Case& c, const CaseLayout& L, ncclComm_t comm, int rank,
                                 int nranks, void* peer_dst, int peer_device, const FmaTable& fma) {
  StreamSet* ss = prep_.streams;
  Prepared p;
  p.streams = ss;
  p.comm = comm;
  p.rank = rank;
  p.nranks = nranks;
  p.peer_dst = static_cast<char*>(peer_dst);
  p.peer_device = peer_device;
  p.copy_ctas = c.knobs.max_ctas > 0 ? c.knobs.max_ctas : kDefaultCopyCtas;
  p.pipelined = c.knobs.pipelined && c.compute && c.comm;
  p.comm_first = c.knobs.order == Knobs::Order::comm_first;
  p.compute = L.compute;
  p.comm_pieces = L.comm;
  for (const ComputePiece& piece : p.compute) {
    const ComputeOp& op = piece.op;
    p.gemm.push_back(op.kind == ComputeKind::gemm ? &plan_for(op) : nullptr);
    int64_t iters = 0;
    if (op.kind == ComputeKind::fma) {
      auto it = fma.find(op.target_ns);
      if (it == fma.end()) throw std::logic_error("fma duration not calibrated");
      iters = it->second.iterations;
    }
    p.fma_iterations.push_back(iters);
  }
  if (c.compute && c.compute->kind == ComputeKind::gemm) {
    fill(gemm_a_, L.gemm_a, fill_type(c.compute->dtype));
    fill(gemm_b_, L.gemm_b, fill_type(c.compute->dtype));
  }
  fill(triad_b_, L.triad, FillType::f32);
  fill(triad_c_, L.triad, FillType::f32);
  if (c.comm) fill(send_, L.comm_send, fill_type(c.comm->dtype));
  if (p.pipelined) {
    CtxScope scope(ss->api(), ss->compute_ctx());
    while (ss->chunk_done.size() < p.compute.size()) {
      cudaEvent_t e = nullptr;
      create_event(&e, cudaEventDisableTiming);
      ss->chunk_done.push_back(e);
    }
  }
  C3_CUDA(cudaStreamSynchronize(util_));
  prep_ = std::move(p);
}

}  // namespace c3::bench::cuda
