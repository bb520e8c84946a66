#include "gpu_work.h"

#include <algorithm>
#include <atomic>

namespace c3::sim::gpu::cupti {

namespace {

std::atomic<int64_t> g_next_grid_id{1};

uint32_t shared_memory_executed(int static_smem, int dynamic_smem) {
  const auto total = static_cast<uint32_t>(std::max(static_smem, 0) + std::max(dynamic_smem, 0));
  constexpr uint32_t kGranule = 8U << 10;  // carve-out granularity used by this model
  return (total + kGranule - 1) / kGranule * kGranule;
}

}  // namespace

CUpti_ActivityKind kernel_kind() {
  if (kind_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
    return CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  if (kind_enabled(CUPTI_ACTIVITY_KIND_KERNEL)) return CUPTI_ACTIVITY_KIND_KERNEL;
  return CUPTI_ACTIVITY_KIND_INVALID;
}

CUpti_ActivityKernel10 kernel_record(CUpti_ActivityKind kind, const Stream& s, const char* name,
                                     const unsigned (&grid)[3], const unsigned (&block)[3],
                                     int regs, int static_smem, int dynamic_smem,
                                     const Interval& iv, const CallTimes& call) {
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
  rec.correlationId = call.correlation;
  rec.gridId = g_next_grid_id.fetch_add(1);
  rec.name = name;
  rec.reserved0 = nullptr;
  const bool latency = latency_timestamps();
  rec.queued = latency ? call.start : CUPTI_TIMESTAMP_UNKNOWN;
  rec.submitted = latency ? call.end : CUPTI_TIMESTAMP_UNKNOWN;
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

MemoryKinds memory_kinds(int copy_kind) {
  constexpr auto kPageable = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  constexpr auto kDevice = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  constexpr auto kArray = CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
  struct Row {
    int copy_kind;
    MemoryKinds kinds;
  };
  static constexpr Row kRows[] = {
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, {kPageable, kDevice, cudaMemcpyHostToDevice}},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, {kDevice, kPageable, cudaMemcpyDeviceToHost}},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOA, {kPageable, kArray, cudaMemcpyHostToDevice}},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOH, {kArray, kPageable, cudaMemcpyDeviceToHost}},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOA, {kArray, kArray, cudaMemcpyDeviceToDevice}},
      {CUPTI_ACTIVITY_MEMCPY_KIND_ATOD, {kArray, kDevice, cudaMemcpyDeviceToDevice}},
      {CUPTI_ACTIVITY_MEMCPY_KIND_DTOA, {kDevice, kArray, cudaMemcpyDeviceToDevice}},
      {CUPTI_ACTIVITY_MEMCPY_KIND_HTOH, {kPageable, kPageable, cudaMemcpyHostToHost}},
  };
  for (const Row& r : kRows) {
    if (r.copy_kind == copy_kind) return r.kinds;
  }
  return {kDevice, kDevice, cudaMemcpyDeviceToDevice};  // DTOD, PTOP
}

// The fields CUPTI's peer-to-peer and plain memcpy records share.
template <typename Record>
void fill_copy_record(Record& rec, CUpti_ActivityKind kind, int copy_kind, const MemoryKinds& mk,
                      uint64_t bytes, const Stream& s, const Interval& iv, uint32_t correlation) {
  rec.kind = kind;
  rec.copyKind = static_cast<uint8_t>(copy_kind);
  rec.srcKind = static_cast<uint8_t>(mk.src);
  rec.dstKind = static_cast<uint8_t>(mk.dst);
  rec.flags = static_cast<uint8_t>(CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
  rec.bytes = bytes;
  rec.start = iv.start;
  rec.end = iv.end;
  rec.deviceId = static_cast<uint32_t>(s.device);
  rec.contextId = context_id(s.ctx);
  rec.streamId = s.id;
  rec.correlationId = correlation;
  rec.reserved0 = nullptr;
  rec.graphNodeId = 0;
  rec.graphId = 0;
  rec.channelID = 1;
  rec.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
}

void append_copy_record(RecordBatch& batch, const Stream& stream, int copy_kind, uint64_t bytes,
                        int src_device, int dst_device, const Interval& iv, uint32_t correlation) {
  const bool p2p = copy_kind == CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  const MemoryKinds mk = memory_kinds(copy_kind);
  // Peer contexts are reported on first use, whether or not the record kind is enabled.
  Context* src_ctx = p2p ? context_for(src_device) : nullptr;
  Context* dst_ctx = p2p ? context_for(dst_device) : nullptr;
  if (p2p && kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY2)) {
    CUpti_ActivityMemcpyPtoP4 rec{};
    fill_copy_record(rec, CUPTI_ACTIVITY_KIND_MEMCPY2, copy_kind, mk, bytes, stream, iv,
                     correlation);
    rec.srcDeviceId = static_cast<uint32_t>(src_device);
    rec.srcContextId = context_id(src_ctx);
    rec.dstDeviceId = static_cast<uint32_t>(dst_device);
    rec.dstContextId = context_id(dst_ctx);
    batch.append(rec);
  } else if (!p2p && kind_enabled(CUPTI_ACTIVITY_KIND_MEMCPY)) {
    CUpti_ActivityMemcpy6 rec{};
    fill_copy_record(rec, CUPTI_ACTIVITY_KIND_MEMCPY, copy_kind, mk, bytes, stream, iv,
                     correlation);
    rec.runtimeCorrelationId = 0;
    rec.isDeviceLaunched = 0;
    rec.copyCount = 1;
    batch.append(rec);
  }
}

void append_memset_record(RecordBatch& batch, const Stream& stream, uint64_t bytes, uint32_t value,
                          const Interval& iv, uint32_t correlation) {
  const Stream* s = &stream;
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
    rec.correlationId = correlation;
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
}

void append_stream_record(RecordBatch& batch, const Stream& s, uint32_t correlation) {
  if (!kind_enabled(CUPTI_ACTIVITY_KIND_STREAM)) return;
  CUpti_ActivityStream rec{};
  rec.kind = CUPTI_ACTIVITY_KIND_STREAM;
  rec.contextId = context_id(s.ctx);
  rec.streamId = s.id;
  rec.priority = static_cast<uint32_t>(s.priority);
  rec.flag = s.non_blocking ? CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING
                            : CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT;
  rec.correlationId = correlation;
  batch.append(rec);
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

}  // namespace c3::sim::gpu::cupti
