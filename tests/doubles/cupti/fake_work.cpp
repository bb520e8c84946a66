// The fake CUDA runtime/driver calls that create GPU work: each is one API call (callbacks,
// external correlation records, API record) plus the activity record of its GPU work.
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "c3fake/gpu.h"
#include "fake_cupti.h"

namespace c3::fake {
namespace {

constexpr uint64_t kApiRealNs = 1000;        // each fake API call takes >= 1 us of real time
constexpr uint64_t kLaunchLatencyNs = 1000;  // GPU work starts >= 1 us after the API entry
constexpr uint64_t kMaxSyncSleepNs = 10'000'000'000ULL;  // synchronize never sleeps over 10 s

// One CUDA API call: fresh correlation id, ENTER/EXIT callbacks, and (at finish) the external
// correlation records and the API record, when recorded.
class ApiCall {
 public:
  ApiCall(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const Context* ctx,
          const void* params, const char* symbol)
      : domain_(domain), cbid_(cbid) {
    mono_start_ = monotonic_ns();
    start_ = now_ns();
    correlation_ = next_correlation_id();
    callbacks_ = api_callback_enabled(domain, cbid);
    if (callbacks_) {
      data_.callbackSite = CUPTI_API_ENTER;
      data_.functionName = callback_name(domain, cbid);
      data_.functionParams = params;
      if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
        data_.functionReturnValue = &runtime_result_;
      } else {
        data_.functionReturnValue = &driver_result_;
      }
      data_.symbolName = symbol;
      data_.context = reinterpret_cast<CUcontext>(const_cast<Context*>(ctx));
      data_.contextUid = context_id(ctx);
      data_.correlationData = &correlation_data_;
      data_.correlationId = correlation_;
      invoke_api_callback(domain_, cbid_, data_);
    }
    // Taken after the ENTER callback, so ids pushed there (and popped at EXIT) count.
    external_ = snapshot_external_ids();
  }
  ApiCall(const ApiCall&) = delete;
  ApiCall& operator=(const ApiCall&) = delete;
  ~ApiCall() = default;

  uint32_t correlation_id() const { return correlation_; }
  uint64_t start() const { return start_; }
  uint64_t end() const { return end_; }

  void finish(RecordBatch& batch) {
    spin_until_mono(mono_start_ + kApiRealNs);
    end_ = std::max(now_ns(), start_);
    if (callbacks_) {
      data_.callbackSite = CUPTI_API_EXIT;
      invoke_api_callback(domain_, cbid_, data_);
    }
    const bool runtime = domain_ == CUPTI_CB_DOMAIN_RUNTIME_API;
    if (!(runtime ? runtime_api_recorded(cbid_) : driver_api_recorded(cbid_))) return;
    // Real CUPTI contract: external correlation records exist only next to an API record.
    append_external_correlations(batch, external_, correlation_);
    CUpti_ActivityAPI rec{};
    rec.kind = runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    rec.cbid = cbid_;
    rec.start = start_;
    rec.end = end_;
    rec.processId = static_cast<uint32_t>(getpid());
    rec.threadId = static_cast<uint32_t>(gettid());  // OS thread id (see README)
    rec.correlationId = correlation_;
    rec.returnValue = 0;
    batch.append(rec);
  }

 private:
  CUpti_CallbackDomain domain_;
  CUpti_CallbackId cbid_;
  uint64_t mono_start_ = 0;
  uint64_t start_ = 0;
  uint64_t end_ = 0;
  uint32_t correlation_ = 0;
  bool callbacks_ = false;
  CUpti_CallbackData data_{};
  uint64_t correlation_data_ = 0;
  cudaError_t runtime_result_ = cudaSuccess;
  CUresult driver_result_ = CUDA_SUCCESS;
  ExternalSnapshot external_;
};

std::atomic<int64_t> g_next_grid_id{1};

uint32_t shared_memory_executed(int static_smem, int dynamic_smem) {
  const auto total = static_cast<uint32_t>(std::max(static_smem, 0) + std::max(dynamic_smem, 0));
  constexpr uint32_t kGranule = 8U << 10;  // carve-out granularity used by this model
  return (total + kGranule - 1) / kGranule * kGranule;
}

CUpti_ActivityKernel10 kernel_record(CUpti_ActivityKind kind, const Stream& s, const char* name,
                                     const unsigned (&grid)[3], const unsigned (&block)[3],
                                     int regs, int static_smem, int dynamic_smem,
                                     const Interval& iv, const ApiCall& call) {
  CUpti_ActivityKernel10 rec{};
  rec.kind = kind;
  rec.cacheConfig.both = 0;
  rec.sharedMemoryConfig = 1;  // 4-byte banks
  rec.registersPerThread = static_cast<uint16_t>(std::clamp(regs, 0, 255));
  rec.partitionedGlobalCacheRequested =
      CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
  rec.partitionedGlobalCacheExecuted = CUPTI_ACTIVITY_PARTITIONED_GLOBAL_CACHE_CONFIG_NOT_SUPPORTED;
  rec.start = iv.start;
  rec.end = iv.end;
  rec.completed = iv.end;
  rec.deviceId = static_cast<uint32_t>(s.device);
  rec.contextId = context_id(s.ctx);
  rec.streamId = s.id;
  rec.gridX = static_cast<int32_t>(grid[0]);
  rec.gridY = static_cast<int32_t>(grid[1]);
  rec.gridZ = static_cast<int32_t>(grid[2]);
  rec.blockX = static_cast<int32_t>(block[0]);
  rec.blockY = static_cast<int32_t>(block[1]);
  rec.blockZ = static_cast<int32_t>(block[2]);
  rec.staticSharedMemory = static_smem;
  rec.dynamicSharedMemory = dynamic_smem;
  rec.localMemoryPerThread = 0;
  rec.localMemoryTotal = 0;
  rec.correlationId = call.correlation_id();
  rec.gridId = g_next_grid_id.fetch_add(1);
  rec.name = name;
  rec.reserved0 = nullptr;
  const bool latency = latency_timestamps();
  rec.queued = latency ? call.start() : CUPTI_TIMESTAMP_UNKNOWN;
  rec.submitted = latency ? call.end() : CUPTI_TIMESTAMP_UNKNOWN;
  rec.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR;
  rec.isSharedMemoryCarveoutRequested = 0;
  rec.sharedMemoryCarveoutRequested = 0;
  rec.padding = 0;
  rec.sharedMemoryExecuted = shared_memory_executed(static_smem, dynamic_smem);
  rec.graphNodeId = 0;
  rec.shmemLimitConfig = CUPTI_FUNC_SHMEM_LIMIT_DEFAULT;
  rec.graphId = 0;
  rec.pAccessPolicyWindow = nullptr;
  rec.channelID = 0;
  rec.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  rec.clusterX = 0;
  rec.clusterY = 0;
  rec.clusterZ = 0;
  rec.clusterSchedulingPolicy = 0;
  rec.localMemoryTotal_v2 = 0;
  rec.maxPotentialClusterSize = 0;
  rec.maxActiveClusters = 0;
  rec.isDeviceLaunched = 0;
  return rec;
}

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
  CUpti_ActivityKind kind = CUPTI_ACTIVITY_KIND_INVALID;
  if (kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) {
    kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  } else if (kind_enabled(CUPTI_ACTIVITY_KIND_KERNEL)) {
    kind = CUPTI_ACTIVITY_KIND_KERNEL;
  }
  if (kind != CUPTI_ACTIVITY_KIND_INVALID) {
    batch.append(
        kernel_record(kind, *s, kname, grid, block, regs, static_smem, dynamic_smem, iv, call));
  }
  submit(batch);
  return call.correlation_id();
}

struct MemoryKinds {
  CUpti_ActivityMemoryKind src;
  CUpti_ActivityMemoryKind dst;
  cudaMemcpyKind runtime_kind;
};

MemoryKinds memory_kinds(int copy_kind) {
  constexpr auto kPageable = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  constexpr auto kDevice = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  constexpr auto kArray = CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
  switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return {kPageable, kDevice, cudaMemcpyHostToDevice};
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return {kDevice, kPageable, cudaMemcpyDeviceToHost};
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return {kPageable, kArray, cudaMemcpyHostToDevice};
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return {kArray, kPageable, cudaMemcpyDeviceToHost};
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return {kArray, kArray, cudaMemcpyDeviceToDevice};
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return {kArray, kDevice, cudaMemcpyDeviceToDevice};
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return {kDevice, kArray, cudaMemcpyDeviceToDevice};
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return {kPageable, kPageable, cudaMemcpyHostToHost};
    default:
      return {kDevice, kDevice, cudaMemcpyDeviceToDevice};  // DTOD, PTOP
  }
}

void sleep_until_fake(uint64_t target) {
  const uint64_t now = now_ns();
  if (target <= now) return;
  const uint64_t ns = std::min(target - now, kMaxSyncSleepNs);
  std::this_thread::sleep_for(std::chrono::nanoseconds(static_cast<int64_t>(ns)));
}

CUpti_ActivitySynchronization2 sync_record(CUpti_ActivitySynchronizationType type,
                                           const ApiCall& call, uint32_t context, uint32_t stream) {
  CUpti_ActivitySynchronization2 rec{};
  rec.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  rec.type = type;
  rec.start = call.start();
  rec.end = call.end();
  rec.correlationId = call.correlation_id();
  rec.contextId = context;
  rec.streamId = stream;
  rec.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  rec.cudaEventSyncId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  rec.returnValue = 0;
  rec.pad = 0;
  return rec;
}

}  // namespace
}  // namespace c3::fake

using namespace c3::fake;

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
  if (kind_enabled(CUPTI_ACTIVITY_KIND_STREAM)) {
    CUpti_ActivityStream rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_STREAM;
    rec.contextId = context_id(ctx);
    rec.streamId = s->id;
    rec.priority = static_cast<uint32_t>(priority);
    rec.flag = non_blocking != 0 ? CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING
                                 : CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT;
    rec.correlationId = call.correlation_id();
    batch.append(rec);
  }
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
  if (p2p && kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY2)) {
    CUpti_ActivityMemcpyPtoP4 rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    rec.copyKind = static_cast<uint8_t>(copy_kind);
    rec.srcKind = static_cast<uint8_t>(mk.src);
    rec.dstKind = static_cast<uint8_t>(mk.dst);
    rec.flags = static_cast<uint8_t>(CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
    rec.bytes = bytes;
    rec.start = iv.start;
    rec.end = iv.end;
    rec.deviceId = static_cast<uint32_t>(s->device);
    rec.contextId = context_id(s->ctx);
    rec.streamId = s->id;
    rec.srcDeviceId = static_cast<uint32_t>(src_device);
    rec.srcContextId = context_id(src_ctx);
    rec.dstDeviceId = static_cast<uint32_t>(dst_device);
    rec.dstContextId = context_id(dst_ctx);
    rec.correlationId = call.correlation_id();
    rec.reserved0 = nullptr;
    rec.graphNodeId = 0;
    rec.graphId = 0;
    rec.channelID = 1;
    rec.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    batch.append(rec);
  } else if (!p2p && kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) {
    CUpti_ActivityMemcpy6 rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    rec.copyKind = static_cast<uint8_t>(copy_kind);
    rec.srcKind = static_cast<uint8_t>(mk.src);
    rec.dstKind = static_cast<uint8_t>(mk.dst);
    rec.flags = static_cast<uint8_t>(CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
    rec.bytes = bytes;
    rec.start = iv.start;
    rec.end = iv.end;
    rec.deviceId = static_cast<uint32_t>(s->device);
    rec.contextId = context_id(s->ctx);
    rec.streamId = s->id;
    rec.correlationId = call.correlation_id();
    rec.runtimeCorrelationId = 0;
    rec.reserved0 = nullptr;
    rec.graphNodeId = 0;
    rec.graphId = 0;
    rec.channelID = 1;
    rec.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    rec.isDeviceLaunched = 0;
    rec.copyCount = 1;
    batch.append(rec);
  }
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
  if (kind_enabled(CUPTI_ACTIVITY_KIND_MEMSET)) {
    CUpti_ActivityMemset4 rec{};
    rec.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    rec.value = value;
    rec.bytes = bytes;
    rec.start = iv.start;
    rec.end = iv.end;
    rec.deviceId = static_cast<uint32_t>(s->device);
    rec.contextId = context_id(s->ctx);
    rec.streamId = s->id;
    rec.correlationId = call.correlation_id();
    rec.flags = static_cast<uint16_t>(CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC);
    rec.memoryKind = static_cast<uint16_t>(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    rec.reserved0 = nullptr;
    rec.graphNodeId = 0;
    rec.graphId = 0;
    rec.channelID = 1;
    rec.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
    rec.isDeviceLaunched = 0;
    batch.append(rec);
  }
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
