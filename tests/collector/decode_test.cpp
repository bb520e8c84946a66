// Golden tests for CUPTI record decoding: records built with the real cupti_activity.h layouts.
#include "decode.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

using namespace c3::collector;

namespace {

template <class T>
T zeroed() {
  T t{};
  std::memset(&t, 0, sizeof t);
  return t;
}

CUpti_ActivityKernel10 kernel_record() {
  auto k = zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.registersPerThread = 40;
  k.start = 1'000'000;
  k.end = 1'005'000;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 13;
  k.gridX = 132;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 49152;
  k.localMemoryPerThread = 16;
  k.correlationId = 77;
  k.gridId = 9001;
  k.name = "_Z4gemmPfS_";
  k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
  k.sharedMemoryExecuted = 65536;
  k.graphNodeId = 5;
  k.graphId = 3;
  k.channelID = 4;
  k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
  k.clusterX = 2;
  k.clusterY = 1;
  k.clusterZ = 1;
  return k;
}

}  // namespace

TEST(Decode, KernelAllFields) {
  DecodeContext ctx;
  ctx.clock_offset_ns = 1000;
  auto k = kernel_record();
  Decoded d = decode_record(reinterpret_cast<CUpti_Activity*>(&k), sizeof k, ctx);
  auto* dk = std::get_if<DecodedKernel>(&d);
  ASSERT_NE(dk, nullptr);
  const auto& r = dk->row;
  EXPECT_STREQ(dk->name, "_Z4gemmPfS_");
  EXPECT_EQ(r.start_ns, 999'000);
  EXPECT_EQ(r.end_ns, 1'004'000);
  EXPECT_EQ(r.device_id, 1);
  EXPECT_EQ(r.context_id, 2);
  EXPECT_EQ(r.stream_id, 13);
  EXPECT_EQ(r.correlation_id, 77);
  EXPECT_EQ(r.grid_x, 132);
  EXPECT_EQ(r.grid_y, 2);
  EXPECT_EQ(r.block_x, 256);
  EXPECT_EQ(r.registers_per_thread, 40);
  EXPECT_EQ(r.static_shared_bytes, 1024);
  EXPECT_EQ(r.dynamic_shared_bytes, 49152);
  EXPECT_EQ(r.local_bytes_per_thread, 16);
  EXPECT_EQ(r.shared_executed_bytes, 65536);
  EXPECT_EQ(r.launch_type, "cooperative_single_device");
  EXPECT_EQ(r.graph_id, 3);
  EXPECT_EQ(r.graph_node_id, 5);
  EXPECT_EQ(r.grid_id, 9001);
  EXPECT_EQ(r.channel_id, 4);
  EXPECT_EQ(r.cluster_x, 2);
  EXPECT_FALSE(r.queued_ns.has_value()) << "CUPTI_TIMESTAMP_UNKNOWN means not collected";
  EXPECT_EQ(r.device_launched, 0);
}

TEST(Decode, ShorterRecordFromOlderCuptiLeavesNewerColumnsNull) {
  DecodeContext ctx;
  auto k = kernel_record();
  // As if the record ended right after graphId (an older struct version).
  size_t size = offsetof(CUpti_ActivityKernel10, graphId) + sizeof k.graphId;
  Decoded d = decode_record(reinterpret_cast<CUpti_Activity*>(&k), size, ctx);
  auto* dk = std::get_if<DecodedKernel>(&d);
  ASSERT_NE(dk, nullptr);
  EXPECT_EQ(dk->row.graph_id, 3);
  EXPECT_FALSE(dk->row.channel_id.has_value());
  EXPECT_FALSE(dk->row.cluster_x.has_value());
  // Too short to hold the name: not a usable kernel record.
  Decoded bad = decode_record(reinterpret_cast<CUpti_Activity*>(&k), 40, ctx);
  EXPECT_TRUE(std::holds_alternative<Skipped>(bad));
}

TEST(Decode, KernelWithoutTimestampsIsSkippedAsInvalid) {
  DecodeContext ctx;
  auto k = kernel_record();
  k.start = k.end = 0;
  Decoded d = decode_record(reinterpret_cast<CUpti_Activity*>(&k), sizeof k, ctx);
  ASSERT_TRUE(std::holds_alternative<Skipped>(d));
  EXPECT_EQ(std::get<Skipped>(d).why, Skipped::Why::invalid);
  k.start = 10;
  k.end = 5;  // end before start
  d = decode_record(reinterpret_cast<CUpti_Activity*>(&k), sizeof k, ctx);
  EXPECT_TRUE(std::holds_alternative<Skipped>(d));
}

TEST(Decode, MemcpyHostToDevice) {
  DecodeContext ctx;
  auto m = zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  m.bytes = 1 << 20;
  m.start = 100;
  m.end = 300;
  m.deviceId = 0;
  m.contextId = 1;
  m.streamId = 14;
  m.correlationId = 8;
  m.channelID = 2;
  m.channelType = CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY;
  m.copyCount = 1;
  Decoded d = decode_record(reinterpret_cast<CUpti_Activity*>(&m), sizeof m, ctx);
  auto* r = std::get_if<c3::tracedb::MemcpyRow>(&d);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->copy_kind, "H2D");
  EXPECT_EQ(r->src_kind, "pinned");
  EXPECT_EQ(r->dst_kind, "device");
  EXPECT_FALSE(r->src_device_id.has_value());
  EXPECT_EQ(r->dst_device_id, 0);
  EXPECT_EQ(r->bytes, 1 << 20);
  EXPECT_EQ(r->async, 1);
  EXPECT_EQ(r->channel_id, 2);
  EXPECT_EQ(r->channel_type, "async_memcpy");
  EXPECT_EQ(r->copy_count, 1);
  EXPECT_EQ(r->stream_id, 14);
}

TEST(Decode, PeerToPeerCopyNamesBothDevices) {
  DecodeContext ctx;
  auto m = zeroed<CUpti_ActivityMemcpyPtoP4>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  m.srcKind = m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 4096;
  m.start = 10;
  m.end = 20;
  m.deviceId = 0;
  m.srcDeviceId = 0;
  m.dstDeviceId = 1;
  m.correlationId = 3;
  Decoded d = decode_record(reinterpret_cast<CUpti_Activity*>(&m), sizeof m, ctx);
  auto* r = std::get_if<c3::tracedb::MemcpyRow>(&d);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->copy_kind, "P2P");
  EXPECT_EQ(r->src_device_id, 0);
  EXPECT_EQ(r->dst_device_id, 1);
  EXPECT_EQ(r->async, 0);
}

TEST(Decode, MemsetAndSyncUseContextDevice) {
  DecodeContext ctx;
  auto c = zeroed<CUpti_ActivityContext3>();
  c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  c.contextId = 5;
  c.deviceId = 3;
  c.nullStreamId = 7;
  Decoded dc = decode_record(reinterpret_cast<CUpti_Activity*>(&c), sizeof c, ctx);
  ASSERT_TRUE(std::holds_alternative<c3::tracedb::ContextRow>(dc));
  EXPECT_EQ(std::get<c3::tracedb::ContextRow>(dc).null_stream_id, 7);

  auto s = zeroed<CUpti_ActivitySynchronization2>();
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  s.start = 50;
  s.end = 90;
  s.contextId = 5;
  s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.correlationId = 11;
  Decoded ds = decode_record(reinterpret_cast<CUpti_Activity*>(&s), sizeof s, ctx);
  auto* sr = std::get_if<c3::tracedb::SyncRow>(&ds);
  ASSERT_NE(sr, nullptr);
  EXPECT_EQ(sr->device_id, 3);
  EXPECT_EQ(sr->type, "context_synchronize");
  EXPECT_FALSE(sr->stream_id.has_value());
  EXPECT_FALSE(sr->cuda_event_id.has_value());

  s.contextId = 99;  // never seen: device unknown
  ds = decode_record(reinterpret_cast<CUpti_Activity*>(&s), sizeof s, ctx);
  EXPECT_EQ(std::get<c3::tracedb::SyncRow>(ds).device_id, -1);

  // A cudaEventRecord: the stream it recorded on, its event and correlation (issue 25).
  auto ev = zeroed<CUpti_ActivityCudaEvent2>();
  ev.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  ev.correlationId = 21;
  ev.contextId = 5;
  ev.streamId = 13;
  ev.eventId = 4;
  ev.deviceId = 3;
  Decoded de = decode_record(reinterpret_cast<CUpti_Activity*>(&ev), sizeof ev, ctx);
  auto* er = std::get_if<c3::tracedb::CudaEventRow>(&de);
  ASSERT_NE(er, nullptr);
  EXPECT_EQ(er->device_id, 3);
  EXPECT_EQ(er->stream_id, 13);
  EXPECT_EQ(er->correlation_id, 21);
  EXPECT_EQ(er->cuda_event_id, 4);
  ev.deviceId = 0xFFFFFFFFu;  // not reported: the context's device
  de = decode_record(reinterpret_cast<CUpti_Activity*>(&ev), sizeof ev, ctx);
  EXPECT_EQ(std::get<c3::tracedb::CudaEventRow>(de).device_id, 3);
  // A record cut before its device field is invalid, not read past its end.
  de = decode_record(reinterpret_cast<CUpti_Activity*>(&ev),
                     offsetof(CUpti_ActivityCudaEvent2, deviceId), ctx);
  EXPECT_TRUE(std::holds_alternative<Skipped>(de));

  auto ms = zeroed<CUpti_ActivityMemset4>();
  ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  ms.value = 0xAB;
  ms.bytes = 256;
  ms.start = 1;
  ms.end = 2;
  ms.deviceId = 3;
  ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  ms.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  Decoded dm = decode_record(reinterpret_cast<CUpti_Activity*>(&ms), sizeof ms, ctx);
  auto* mr = std::get_if<c3::tracedb::MemsetRow>(&dm);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(mr->value, 0xAB);
  EXPECT_EQ(mr->memory_kind, "device");
  EXPECT_EQ(mr->async, 1);
}

TEST(Decode, DeviceRecordLimits) {
  DecodeContext ctx;
  auto d = zeroed<CUpti_ActivityDevice5>();
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.globalMemoryBandwidth = 4'800'000'000;  // KB/s
  d.globalMemorySize = 150'000'000'000ULL;
  d.numThreadsPerWarp = 32;
  d.numMultiprocessors = 132;
  d.maxWarpsPerMultiprocessor = 64;
  d.maxBlocksPerMultiprocessor = 32;
  d.maxRegistersPerMultiprocessor = 65536;
  d.maxSharedMemoryPerMultiprocessor = 233472;
  d.maxThreadsPerBlock = 1024;
  d.computeCapabilityMajor = 9;
  d.id = 0;
  d.name = "NVIDIA H200";
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(i);
  Decoded dd = decode_record(reinterpret_cast<CUpti_Activity*>(&d), sizeof d, ctx);
  auto* r = std::get_if<DecodedDevice>(&dd);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->row.name, "NVIDIA H200");
  EXPECT_EQ(r->row.uuid, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f");
  EXPECT_EQ(r->row.max_threads_per_sm, 2048);
  EXPECT_EQ(r->row.memory_bandwidth_bytes_per_s, 4'800'000'000'000LL);
  EXPECT_EQ(r->row.sm_count, 132);
}

// Regression (fuzz/regressions/cupti_decode/device-bandwidth-overflow, timestamp-offset-overflow):
// garbage in a record made signed overflow (UB) in the bandwidth's KB/s -> B/s, the threads per
// SM and the clock offset; now the bandwidth is left unknown and the rest wraps.
TEST(Decode, GarbageBandwidthWarpsAndClockOffsetAreNotSignedOverflow) {
  DecodeContext ctx;
  ctx.clock_offset_ns = INT64_MIN + 5;
  auto d = zeroed<CUpti_ActivityDevice5>();
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.globalMemoryBandwidth = 4452782398957944832ULL;
  d.maxWarpsPerMultiprocessor = 0xffffffffu;
  d.numThreadsPerWarp = 0xffffffffu;
  Decoded dd = decode_record(reinterpret_cast<CUpti_Activity*>(&d), sizeof d, ctx);
  auto* r = std::get_if<DecodedDevice>(&dd);
  ASSERT_NE(r, nullptr);
  EXPECT_FALSE(r->row.memory_bandwidth_bytes_per_s.has_value());

  auto k = kernel_record();
  k.start = 0x7fffffffffffff00ULL;
  k.end = 0x8000000000000100ULL;
  Decoded dk = decode_record(reinterpret_cast<CUpti_Activity*>(&k), sizeof k, ctx);
  EXPECT_NE(std::get_if<DecodedKernel>(&dk), nullptr);
}

TEST(Decode, ExternalCorrelationApiStreamAndUnknown) {
  DecodeContext ctx;
  ctx.context_device[1] = 0;
  auto e = zeroed<CUpti_ActivityExternalCorrelation>();
  e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  e.externalId = 12345678901ULL;
  e.correlationId = 44;
  Decoded de = decode_record(reinterpret_cast<CUpti_Activity*>(&e), sizeof e, ctx);
  auto* er = std::get_if<c3::tracedb::ExternalCorrelationRow>(&de);
  ASSERT_NE(er, nullptr);
  EXPECT_EQ(er->external_kind, "custom0");
  EXPECT_EQ(er->external_id, 12345678901LL);
  EXPECT_EQ(er->correlation_id, 44);

  auto a = zeroed<CUpti_ActivityAPI>();
  a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  a.cbid = 307;
  a.start = 5;
  a.end = 9;
  a.threadId = 4242;
  a.correlationId = 44;
  Decoded da = decode_record(reinterpret_cast<CUpti_Activity*>(&a), sizeof a, ctx);
  auto* ar = std::get_if<DecodedApi>(&da);
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(ar->row.api, "driver");
  EXPECT_EQ(ar->domain, CUPTI_CB_DOMAIN_DRIVER_API);
  EXPECT_EQ(ar->row.thread_id, 4242);

  auto s = zeroed<CUpti_ActivityStream>();
  s.kind = CUPTI_ACTIVITY_KIND_STREAM;
  s.contextId = 1;
  s.streamId = 21;
  s.priority = static_cast<uint32_t>(-2);
  s.flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING;
  Decoded dst = decode_record(reinterpret_cast<CUpti_Activity*>(&s), sizeof s, ctx);
  auto* sr = std::get_if<c3::tracedb::StreamRow>(&dst);
  ASSERT_NE(sr, nullptr);
  EXPECT_EQ(sr->priority, -2);
  EXPECT_EQ(sr->flags, "non_blocking");
  EXPECT_EQ(sr->device_id, 0);

  CUpti_Activity other{CUPTI_ACTIVITY_KIND_PC_SAMPLING};
  Decoded du = decode_record(&other, 64, ctx);
  ASSERT_TRUE(std::holds_alternative<Skipped>(du));
  EXPECT_EQ(std::get<Skipped>(du).why, Skipped::Why::unknown_kind);
}
