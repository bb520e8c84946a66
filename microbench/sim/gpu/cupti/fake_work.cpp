// The fake CUDA runtime/driver calls that create GPU work: each is one API call (callbacks,
// external correlation records, API record) plus the activity record of its GPU work.
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "c3/sim/gpu/fixed_time.h"
#include "fake_cupti.h"
#include "gpu_work.h"

namespace c3::sim::gpu::cupti {
namespace {

constexpr uint64_t kLaunchLatencyNs = 1000;  // GPU work starts >= 1 us after the API entry
constexpr uint64_t kMaxSyncSleepNs = 10'000'000'000ULL;  // synchronize never sleeps over 10 s

uint32_t launch(bool driver_api, void* handle, const char* name, const unsigned (&grid)[3],
                const unsigned (&block)[3], int regs, int static_smem, int dynamic_smem,
                uint64_t duration_ns) {
  ensure_initialized();
  Stream* s = resolve_stream(handle);
  if (s == nullptr) return 0;
  const char* kname = intern(name);
  const auto smem = static_cast<unsigned>(std::max(dynamic_smem, 0));

  cudaLaunchKernel_v7000_params runtime_params{};
  runtime_params.func = kname;
  runtime_params.gridDim = dim3(grid[0], grid[1], grid[2]);
  runtime_params.blockDim = dim3(block[0], block[1], block[2]);
  runtime_params.args = nullptr;
  runtime_params.sharedMem = smem;
  runtime_params.stream = static_cast<cudaStream_t>(handle);

  cuLaunchKernel_params driver_params{};
  driver_params.f = nullptr;
  driver_params.gridDimX = grid[0];
  driver_params.gridDimY = grid[1];
  driver_params.gridDimZ = grid[2];
  driver_params.blockDimX = block[0];
  driver_params.blockDimY = block[1];
  driver_params.blockDimZ = block[2];
  driver_params.sharedMemBytes = smem;
  driver_params.hStream = static_cast<CUstream>(handle);

  ApiCall call(driver_api ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
               driver_api
                   ? static_cast<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
                   : static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
               s->ctx,
               driver_api ? static_cast<const void*>(&driver_params)
                          : static_cast<const void*>(&runtime_params),
               kname);
  const Interval iv = schedule_on(s, call.start() + kLaunchLatencyNs, duration_ns);
  RecordBatch batch;
  call.finish(batch);
  const CUpti_ActivityKind kind = kernel_kind();
  if (kind != CUPTI_ACTIVITY_KIND_INVALID) {
    batch.append(kernel_record(kind, *s, kname, grid, block, regs, static_smem, dynamic_smem, iv,
                               call.times()));
  }
  submit(batch);
  return call.correlation_id();
}

void sleep_until_fake(uint64_t target) {
  const uint64_t now = now_ns();
  if (target <= now) return;
  const uint64_t ns = std::min(target - now, kMaxSyncSleepNs);
  std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<int64_t>(ns)));
}

}  // namespace
}  // namespace c3::sim::gpu::cupti

using namespace c3::sim::gpu::cupti;

extern "C" {

void* c3fake_stream_create(int device, int priority, int non_blocking) {
  ensure_initialized();
  Context* ctx = context_for(device);
  if (ctx == nullptr) return nullptr;
  cudaStream_t created = nullptr;
  cudaStreamCreateWithPriority_v5050_params params{};
  params.pStream = &created;
  params.flags = non_blocking != 0 ? 1U : 0U;  // cudaStreamNonBlocking
  params.priority = priority;
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API,
               CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050, ctx, &params, nullptr);
  Stream* s = new_stream(device, priority, non_blocking != 0);
  created = reinterpret_cast<cudaStream_t>(s);
  RecordBatch batch;
  call.finish(batch);
  append_stream_record(batch, *s, call.correlation_id());
  submit(batch);
  return s;
}

uint32_t c3fake_launch_kernel(void* stream, const char* name, unsigned gx, unsigned gy, unsigned gz,
                              unsigned bx, unsigned by, unsigned bz, int regs_per_thread,
                              int static_smem, int dynamic_smem, uint64_t duration_ns) {
  const unsigned grid[3] = {gx, gy, gz};
  const unsigned block[3] = {bx, by, bz};
  return launch(false, stream, name, grid, block, regs_per_thread, static_smem, dynamic_smem,
                duration_ns);
}

uint32_t c3fake_launch_kernel_driver(void* stream, const char* name, unsigned gx, unsigned gy,
                                     unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                     int regs_per_thread, int static_smem, int dynamic_smem,
                                     uint64_t duration_ns) {
  const unsigned grid[3] = {gx, gy, gz};
  const unsigned block[3] = {bx, by, bz};
  return launch(true, stream, name, grid, block, regs_per_thread, static_smem, dynamic_smem,
                duration_ns);
}

uint32_t c3fake_memcpy(void* stream, int copy_kind, uint64_t bytes, int src_device, int dst_device,
                       uint64_t duration_ns) {
  ensure_initialized();
  if (copy_kind < CUPTI_ACTIVITY_MEMCPY_KIND_HTOD || copy_kind > CUPTI_ACTIVITY_MEMCPY_KIND_PTOP) {
    return 0;
  }
  Stream* s = resolve_stream(stream);
  if (s == nullptr) return 0;
  const bool p2p = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  Context* src_ctx = nullptr;
  Context* dst_ctx = nullptr;
  if (p2p) {
    src_ctx = context_for(src_device);
    dst_ctx = context_for(dst_device);
    if (src_ctx == nullptr || dst_ctx == nullptr) return 0;
  }
  const MemoryKinds mk = memory_kinds(copy_kind);

  cudaMemcpyAsync_v3020_params copy_params{};
  copy_params.count = bytes;
  copy_params.kind = mk.runtime_kind;
  copy_params.stream = static_cast<cudaStream_t>(stream);
  cudaMemcpyPeerAsync_v4000_params peer_params{};
  peer_params.dstDevice = dst_device;
  peer_params.srcDevice = src_device;
  peer_params.count = bytes;
  peer_params.stream = static_cast<cudaStream_t>(stream);

  ApiCall call(
      CUPTI_CB_DOMAIN_RUNTIME_API,
      p2p ? CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000
          : CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020,
      s->ctx, p2p ? static_cast<const void*>(&peer_params) : static_cast<const void*>(&copy_params),
      nullptr);
  const Interval iv = schedule_on(s, call.start() + kLaunchLatencyNs, duration_ns);
  RecordBatch batch;
  call.finish(batch);
  append_copy_record(batch, *s, copy_kind, bytes, src_device, dst_device, iv,
                     call.correlation_id());
  submit(batch);
  return call.correlation_id();
}

uint32_t c3fake_memset(void* stream, uint64_t bytes, uint32_t value, uint64_t duration_ns) {
  ensure_initialized();
  Stream* s = resolve_stream(stream);
  if (s == nullptr) return 0;
  cudaMemsetAsync_v3020_params params{};
  params.devPtr = nullptr;
  params.value = static_cast<int>(value);
  params.count = bytes;
  params.stream = static_cast<cudaStream_t>(stream);
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, s->ctx,
               &params, nullptr);
  const Interval iv = schedule_on(s, call.start() + kLaunchLatencyNs, duration_ns);
  RecordBatch batch;
  call.finish(batch);
  append_memset_record(batch, *s, bytes, value, iv, call.correlation_id());
  submit(batch);
  return call.correlation_id();
}

void c3fake_stream_synchronize(void* stream) {
  ensure_initialized();
  Stream* s = resolve_stream(stream);
  if (s == nullptr) return;
  cudaStreamSynchronize_v3020_params params{};
  params.stream = static_cast<cudaStream_t>(stream);
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
               s->ctx, &params, nullptr);
  sleep_until_fake(stream_last_end(s));
  RecordBatch batch;
  call.finish(batch);
  if (kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
    batch.append(sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, call,
                             context_id(s->ctx), s->id));
  }
  submit(batch);
}

void c3fake_context_synchronize(int device) {
  ensure_initialized();
  Context* ctx = context_for(device);
  if (ctx == nullptr) return;
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
               ctx, nullptr, nullptr);
  sleep_until_fake(device_last_end(device));
  RecordBatch batch;
  call.finish(batch);
  if (kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
    batch.append(sync_record(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, call,
                             context_id(ctx), CUPTI_SYNCHRONIZATION_INVALID_VALUE));
  }
  submit(batch);
}

}  // extern "C"
