#include "decode.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "c3/common/copy_kinds_check.h"

namespace c3::collector {
namespace {

// True when the record holds the whole `field` (see the header comment on CUPTI versions).
#define C3_HAS(rec, size, field) \
  (offsetof(std::remove_cvref_t<decltype(*(rec))>, field) + sizeof((rec)->field) <= (size))

// In unsigned arithmetic, which wraps: a garbage timestamp must not be signed overflow (found by
// fuzz/cupti_decode_fuzz.cpp).
int64_t ts(uint64_t cupti_ns, const DecodeContext& ctx) {
  return static_cast<int64_t>(cupti_ns - static_cast<uint64_t>(ctx.clock_offset_ns));
}

tracedb::OptI64 opt_ts(uint64_t cupti_ns, const DecodeContext& ctx) {
  if (cupti_ns == static_cast<uint64_t>(CUPTI_TIMESTAMP_UNKNOWN)) return std::nullopt;
  return ts(cupti_ns, ctx);
}

tracedb::OptI64 nonzero(uint64_t v) {
  if (v == 0) return std::nullopt;
  return static_cast<int64_t>(v);
}

// The bits of an enum-typed record field. A damaged buffer (or a newer CUPTI) may hold a value
// the enum type cannot represent, and loading the field as the enum would be undefined (found by
// fuzz/cupti_decode_fuzz.cpp: fuzz/regressions/cupti_decode/stream-flag-invalid-enum).
// Read through the record's bytes at the field's offset: no lvalue of the enum type is ever
// formed (GCC's UBSan checks even a reference to one: fuzz_replay_cupti_decode under ASan).
#define C3_RAW(rec, field) \
  raw_at(rec, offsetof(std::remove_cvref_t<decltype(*(rec))>, field), sizeof((rec)->field))
template <class R>
uint32_t raw_at(const R* rec, size_t offset, size_t size) {
  uint32_t v = 0;
  if (size == sizeof v) std::memcpy(&v, reinterpret_cast<const char*>(rec) + offset, sizeof v);
  return v;
}
template <class E>
constexpr uint32_t u32(E e) {
  return static_cast<uint32_t>(e);
}

// CUPTI marks activities whose timestamps it could not collect with start == end == 0.
bool bad_interval(uint64_t start, uint64_t end) {
  return (start == 0 && end == 0) || end < start;
}

Decoded skip(Skipped::Why why, CUpti_ActivityKind kind) {
  return Skipped{why, static_cast<int>(kind)};
}

// The fields every GPU activity record shares, by the same names in each CUPTI struct.
template <class Row, class Rec>
void fill_activity(Row& r, const Rec* a, const DecodeContext& ctx) {
  r.device_id = a->deviceId;
  r.context_id = a->contextId;
  r.stream_id = a->streamId;
  r.correlation_id = a->correlationId;
  r.start_ns = ts(a->start, ctx);
  r.end_ns = ts(a->end, ctx);
}

Decoded decode_kernel(const CUpti_ActivityKernel10* k, size_t size, const DecodeContext& ctx) {
  if (!C3_HAS(k, size, name) || bad_interval(k->start, k->end)) {
    return skip(Skipped::Why::invalid, k->kind);
  }
  DecodedKernel d;
  auto& r = d.row;
  fill_activity(r, k, ctx);
  r.grid_x = k->gridX;
  r.grid_y = k->gridY;
  r.grid_z = k->gridZ;
  r.block_x = k->blockX;
  r.block_y = k->blockY;
  r.block_z = k->blockZ;
  r.registers_per_thread = k->registersPerThread;
  r.static_shared_bytes = k->staticSharedMemory;
  r.dynamic_shared_bytes = k->dynamicSharedMemory;
  r.local_bytes_per_thread = k->localMemoryPerThread;
  r.grid_id = k->gridId;
  r.launch_type = "regular";
  if (C3_HAS(k, size, submitted)) {
    r.queued_ns = opt_ts(k->queued, ctx);
    r.submitted_ns = opt_ts(k->submitted, ctx);
  }
  if (C3_HAS(k, size, launchType)) r.launch_type = launch_type_name(k->launchType);
  if (C3_HAS(k, size, sharedMemoryExecuted)) r.shared_executed_bytes = k->sharedMemoryExecuted;
  if (C3_HAS(k, size, graphId)) {
    r.graph_node_id = nonzero(k->graphNodeId);
    r.graph_id = nonzero(k->graphId);
  }
  if (C3_HAS(k, size, channelType) && C3_RAW(k, channelType) != u32(CUPTI_CHANNEL_TYPE_INVALID)) {
    r.channel_id = k->channelID;
  }
  if (C3_HAS(k, size, clusterZ)) {
    r.cluster_x = k->clusterX;
    r.cluster_y = k->clusterY;
    r.cluster_z = k->clusterZ;
  }
  if (C3_HAS(k, size, isDeviceLaunched)) r.device_launched = k->isDeviceLaunched ? 1 : 0;
  d.name = k->name;
  return d;
}

// What ordinary and peer-to-peer copy records have in common.
template <class Rec>
tracedb::MemcpyRow copy_row(const Rec* m, size_t size, const DecodeContext& ctx) {
  tracedb::MemcpyRow r;
  fill_activity(r, m, ctx);
  r.copy_kind = common::copy_kind_name(m->copyKind);
  r.bytes = static_cast<int64_t>(m->bytes);
  r.src_kind = common::memory_kind_name(m->srcKind);
  r.dst_kind = common::memory_kind_name(m->dstKind);
  r.async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0;
  if (C3_HAS(m, size, graphId)) {
    r.graph_node_id = nonzero(m->graphNodeId);
    r.graph_id = nonzero(m->graphId);
  }
  if (C3_HAS(m, size, channelType) && C3_RAW(m, channelType) != u32(CUPTI_CHANNEL_TYPE_INVALID)) {
    r.channel_id = m->channelID;
    r.channel_type =
        C3_RAW(m, channelType) == u32(CUPTI_CHANNEL_TYPE_COMPUTE) ? "compute" : "async_memcpy";
  }
  return r;
}

Decoded decode_memcpy(const CUpti_ActivityMemcpy6* m, size_t size, const DecodeContext& ctx) {
  if (!C3_HAS(m, size, runtimeCorrelationId) || bad_interval(m->start, m->end)) {
    return skip(Skipped::Why::invalid, m->kind);
  }
  tracedb::MemcpyRow r = copy_row(m, size, ctx);
  // The device side(s) of an ordinary copy are the device it ran on.
  auto on_device = [](uint8_t k) {
    const auto kind = static_cast<CUpti_ActivityMemoryKind>(k);
    return kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE || kind == CUPTI_ACTIVITY_MEMORY_KIND_ARRAY ||
           kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC;
  };
  if (on_device(m->srcKind)) r.src_device_id = m->deviceId;
  if (on_device(m->dstKind)) r.dst_device_id = m->deviceId;
  r.copy_count =
      C3_HAS(m, size, copyCount) && m->copyCount > 0 ? static_cast<int64_t>(m->copyCount) : 1;
  return r;
}

Decoded decode_p2p(const CUpti_ActivityMemcpyPtoP4* m, size_t size, const DecodeContext& ctx) {
  if (!C3_HAS(m, size, correlationId) || bad_interval(m->start, m->end)) {
    return skip(Skipped::Why::invalid, m->kind);
  }
  tracedb::MemcpyRow r = copy_row(m, size, ctx);
  r.src_device_id = m->srcDeviceId;
  r.dst_device_id = m->dstDeviceId;
  return r;
}

Decoded decode_memset(const CUpti_ActivityMemset4* m, size_t size, const DecodeContext& ctx) {
  if (!C3_HAS(m, size, memoryKind) || bad_interval(m->start, m->end)) {
    return skip(Skipped::Why::invalid, m->kind);
  }
  tracedb::MemsetRow r;
  fill_activity(r, m, ctx);
  r.bytes = static_cast<int64_t>(m->bytes);
  r.value = m->value;
  r.memory_kind = common::memory_kind_name(m->memoryKind);
  r.async = (m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) ? 1 : 0;
  if (C3_HAS(m, size, graphId)) {
    r.graph_node_id = nonzero(m->graphNodeId);
    r.graph_id = nonzero(m->graphId);
  }
  if (C3_HAS(m, size, channelType) && C3_RAW(m, channelType) != u32(CUPTI_CHANNEL_TYPE_INVALID)) {
    r.channel_id = m->channelID;
  }
  return r;
}

Decoded decode_sync(const CUpti_ActivitySynchronization2* s, size_t size,
                    const DecodeContext& ctx) {
  if (!C3_HAS(s, size, cudaEventId) || bad_interval(s->start, s->end)) {
    return skip(Skipped::Why::invalid, s->kind);
  }
  tracedb::SyncRow r;
  auto it = ctx.context_device.find(s->contextId);
  // -1: the context's device is unknown (its context record was not seen).
  r.device_id = it == ctx.context_device.end() ? -1 : static_cast<int64_t>(it->second);
  r.context_id = s->contextId;
  if (s->streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) r.stream_id = s->streamId;
  r.correlation_id = s->correlationId;
  r.start_ns = ts(s->start, ctx);
  r.end_ns = ts(s->end, ctx);
  r.type = sync_type_name(C3_RAW(s, type));
  if (s->cudaEventId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) r.cuda_event_id = s->cudaEventId;
  return r;
}

// A cudaEventRecord: the stream it recorded on (a stream's later wait on the event depends on
// that stream's work launched before the record).
Decoded decode_cuda_event(const CUpti_ActivityCudaEvent2* e, size_t size,
                          const DecodeContext& ctx) {
  if (!C3_HAS(e, size, deviceId)) return skip(Skipped::Why::invalid, e->kind);
  tracedb::CudaEventRow r;
  r.device_id = e->deviceId;
  if (r.device_id == 0xFFFFFFFFu) {  // not reported: the context's device
    auto it = ctx.context_device.find(e->contextId);
    r.device_id = it == ctx.context_device.end() ? -1 : static_cast<int64_t>(it->second);
  }
  r.context_id = e->contextId;
  r.stream_id = e->streamId;
  r.correlation_id = e->correlationId;
  r.cuda_event_id = e->eventId;
  return r;
}

Decoded decode_device(const CUpti_ActivityDevice5* d, size_t size) {
  if (!C3_HAS(d, size, name)) return skip(Skipped::Why::invalid, d->kind);
  DecodedDevice out;
  auto& r = out.row;
  r.device_id = d->id;
  r.name = d->name ? d->name : "unknown";
  r.uuid = format_uuid(d->uuid);
  r.sm_count = d->numMultiprocessors;
  r.cc_major = d->computeCapabilityMajor;
  r.cc_minor = d->computeCapabilityMinor;
  r.memory_bytes = static_cast<int64_t>(d->globalMemorySize);
  // CUPTI reports KB/s; a value whose bytes/s do not fit in int64 is garbage, left unknown.
  if (d->globalMemoryBandwidth <= static_cast<uint64_t>(INT64_MAX) / 1000) {
    r.memory_bandwidth_bytes_per_s = static_cast<int64_t>(d->globalMemoryBandwidth) * 1000;
  }
  r.l2_bytes = d->l2CacheSize;
  r.core_clock_khz = d->coreClockRate;
  r.copy_engines = d->numMemcpyEngines;
  r.warp_size = d->numThreadsPerWarp;
  // Two 32-bit factors: their product always fits in 64 unsigned bits.
  r.max_threads_per_sm =
      static_cast<int64_t>(uint64_t{d->maxWarpsPerMultiprocessor} * d->numThreadsPerWarp);
  r.max_blocks_per_sm = d->maxBlocksPerMultiprocessor;
  r.max_registers_per_sm = d->maxRegistersPerMultiprocessor;
  r.max_shared_memory_per_sm = d->maxSharedMemoryPerMultiprocessor;
  r.max_threads_per_block = d->maxThreadsPerBlock;
  r.max_registers_per_block = d->maxRegistersPerBlock;
  r.max_shared_memory_per_block = d->maxSharedMemoryPerBlock;
  return out;
}

Decoded decode_context(const CUpti_ActivityContext3* c, size_t size, DecodeContext& ctx) {
  if (!C3_HAS(c, size, nullStreamId)) return skip(Skipped::Why::invalid, c->kind);
  tracedb::ContextRow r;
  r.context_id = c->contextId;
  r.device_id = c->deviceId;
  r.null_stream_id = c->nullStreamId;
  if (C3_HAS(c, size, numMultiprocessors)) {
    r.green_context = c->isGreenContext ? 1 : 0;
    if (c->numMultiprocessors) r.sm_count = c->numMultiprocessors;
  }
  ctx.context_device[c->contextId] = c->deviceId;
  return r;
}

Decoded decode_stream(const CUpti_ActivityStream* s, size_t size, const DecodeContext& ctx) {
  if (!C3_HAS(s, size, flag)) return skip(Skipped::Why::invalid, s->kind);
  tracedb::StreamRow r;
  auto it = ctx.context_device.find(s->contextId);
  if (it != ctx.context_device.end()) r.device_id = it->second;
  r.context_id = s->contextId;
  r.stream_id = s->streamId;
  r.priority = static_cast<int32_t>(s->priority);
  switch (C3_RAW(s, flag)) {
    case u32(CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING):
      r.flags = "non_blocking";
      break;
    case u32(CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT):
      r.flags = "default";
      break;
    case u32(CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL):
      r.flags = "null";
      break;
    default:  // unknown, or another CUPTI's flags: no flags column
      break;
  }
  return r;
}

Decoded decode_external(const CUpti_ActivityExternalCorrelation* e, size_t size) {
  if (!C3_HAS(e, size, correlationId)) return skip(Skipped::Why::invalid, e->kind);
  tracedb::ExternalCorrelationRow r;
  r.external_kind = external_kind_name(C3_RAW(e, externalKind));
  r.external_id = static_cast<int64_t>(e->externalId);
  r.correlation_id = e->correlationId;
  return r;
}

Decoded decode_api(const CUpti_ActivityAPI* a, size_t size, const DecodeContext& ctx) {
  if (!C3_HAS(a, size, returnValue) || a->end < a->start)
    return skip(Skipped::Why::invalid, a->kind);
  DecodedApi d;
  d.domain = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                    : CUPTI_CB_DOMAIN_DRIVER_API;
  auto& r = d.row;
  r.thread_id = a->threadId;
  r.api = a->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? "runtime" : "driver";
  r.cbid = a->cbid;
  r.correlation_id = a->correlationId;
  r.start_ns = ts(a->start, ctx);
  r.end_ns = ts(a->end, ctx);
  r.return_value = a->returnValue;
  return d;
}

template <class T>
const T* as(const CUpti_Activity* r) {
  return reinterpret_cast<const T*>(r);
}

}  // namespace

Decoded decode_record(const CUpti_Activity* record, size_t size, DecodeContext& ctx) {
  if (size < sizeof(CUpti_Activity)) return Skipped{Skipped::Why::invalid, 0};
  // The kind is read as bits: the decoders below get only records of a kind they know.
  const uint32_t kind = C3_RAW(record, kind);
  switch (kind) {
    case u32(CUPTI_ACTIVITY_KIND_KERNEL):
    case u32(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL):
      return decode_kernel(as<CUpti_ActivityKernel10>(record), size, ctx);
    case u32(CUPTI_ACTIVITY_KIND_MEMCPY):
      return decode_memcpy(as<CUpti_ActivityMemcpy6>(record), size, ctx);
    case u32(CUPTI_ACTIVITY_KIND_MEMCPY2):
      return decode_p2p(as<CUpti_ActivityMemcpyPtoP4>(record), size, ctx);
    case u32(CUPTI_ACTIVITY_KIND_MEMSET):
      return decode_memset(as<CUpti_ActivityMemset4>(record), size, ctx);
    case u32(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION):
      return decode_sync(as<CUpti_ActivitySynchronization2>(record), size, ctx);
    case u32(CUPTI_ACTIVITY_KIND_CUDA_EVENT):
      return decode_cuda_event(as<CUpti_ActivityCudaEvent2>(record), size, ctx);
    case u32(CUPTI_ACTIVITY_KIND_DEVICE):
      return decode_device(as<CUpti_ActivityDevice5>(record), size);
    case u32(CUPTI_ACTIVITY_KIND_CONTEXT):
      return decode_context(as<CUpti_ActivityContext3>(record), size, ctx);
    case u32(CUPTI_ACTIVITY_KIND_STREAM):
      return decode_stream(as<CUpti_ActivityStream>(record), size, ctx);
    case u32(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION):
      return decode_external(as<CUpti_ActivityExternalCorrelation>(record), size);
    case u32(CUPTI_ACTIVITY_KIND_RUNTIME):
    case u32(CUPTI_ACTIVITY_KIND_DRIVER):
      return decode_api(as<CUpti_ActivityAPI>(record), size, ctx);
    default:
      return Skipped{Skipped::Why::unknown_kind, static_cast<int>(kind)};
  }
}

const char* launch_type_name(uint8_t launch_type) {
  // The enum's values are 0..3 (no FORCE_INT): a larger number is no value of it.
  if (launch_type > u32(CUPTI_ACTIVITY_LAUNCH_TYPE_CBL_COMMANDLIST)) return "unknown";
  switch (static_cast<CUpti_ActivityLaunchType>(launch_type)) {
    case CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR:
      return "regular";
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE:
      return "cooperative_single_device";
    case CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_MULTI_DEVICE:
      return "cooperative_multi_device";
    case CUPTI_ACTIVITY_LAUNCH_TYPE_CBL_COMMANDLIST:
      return "command_list";
  }
  return "unknown";
}

const char* sync_type_name(uint32_t type) {
  if (type > u32(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_FORCE_INT)) return "unknown";  // no enum value
  switch (static_cast<CUpti_ActivitySynchronizationType>(type)) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "event_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "stream_wait_event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "stream_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "context_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN:
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_FORCE_INT:
      break;
  }
  return "unknown";
}

const char* external_kind_name(uint32_t kind) {
  if (kind > u32(CUPTI_EXTERNAL_CORRELATION_KIND_FORCE_INT)) return "invalid";  // no enum value
  switch (static_cast<CUpti_ExternalCorrelationKind>(kind)) {
    case CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN:
      return "unknown";
    case CUPTI_EXTERNAL_CORRELATION_KIND_OPENACC:
      return "openacc";
    case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0:
      return "custom0";
    case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1:
      return "custom1";
    case CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2:
      return "custom2";
    case CUPTI_EXTERNAL_CORRELATION_KIND_INVALID:
    case CUPTI_EXTERNAL_CORRELATION_KIND_SIZE:
    case CUPTI_EXTERNAL_CORRELATION_KIND_FORCE_INT:
      break;
  }
  return "invalid";
}

std::string format_uuid(const CUuuid& uuid) {
  static const char* hex = "0123456789abcdef";
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    auto b = static_cast<unsigned char>(uuid.bytes[i]);
    s += hex[b >> 4];
    s += hex[b & 15];
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}

}  // namespace c3::collector
