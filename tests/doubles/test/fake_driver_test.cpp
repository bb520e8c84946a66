// Self-test of the fake GPU "driver": cuInit with CUDA_INJECTION64_PATH, device/context/stream
// records, memcpy/memset/synchronize records, the cu* functions and stream ids.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "c3/sim/gpu/fixed_time.h"
#include "cupti_client.h"

namespace c3::sim::test {
namespace {

class FakeDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    c3fake_cuInit();
    start_client();
  }
  void TearDown() override { stop_client(); }
  static std::vector<Record> flush() { return CuptiClient::instance().flush_and_take(); }
};

// ---- fresh-process checks (run as threadsafe death tests: the binary is re-executed) -------

#define CHILD_CHECK(cond)                                                          \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::fprintf(stderr, "child check failed: %s (line %d)\n", #cond, __LINE__); \
      std::_Exit(1);                                                               \
    }                                                                              \
  } while (false)

void first_cuinit_runs_injection_and_reports() {
  setenv("CUDA_INJECTION64_PATH", C3FAKE_TEST_INJECTION_PATH, 1);
  start_client();  // the collector's buffer callbacks exist before cuInit
  CHILD_CHECK(c3fake_cuInit() == 0);
  CHILD_CHECK(c3fake_cuInit() == 0);
  auto* calls = static_cast<int*>(dlsym(RTLD_DEFAULT, "c3fake_test_injection_calls"));
  auto* devices = static_cast<int*>(dlsym(RTLD_DEFAULT, "c3fake_test_injection_devices"));
  CHILD_CHECK(calls != nullptr && devices != nullptr);
  CHILD_CHECK(*calls == 1);
  CHILD_CHECK(*devices == 2);

  // The first use of device 1 creates its context; the first created stream gets id 13.
  void* stream = c3fake_stream_create(1, -2, 1);
  CHILD_CHECK(stream != nullptr);
  const auto records = CuptiClient::instance().flush_and_take();
  const auto devs = records_of<CUpti_ActivityDevice5>(records, CUPTI_ACTIVITY_KIND_DEVICE);
  CHILD_CHECK(devs.size() == 2);
  CHILD_CHECK(devs[0].id == 0 && devs[1].id == 1);
  CHILD_CHECK(std::string(devs[1].name) == "C3Fake H100 1");
  const auto ctxs = records_of<CUpti_ActivityContext3>(records, CUPTI_ACTIVITY_KIND_CONTEXT);
  CHILD_CHECK(ctxs.size() == 1);
  CHILD_CHECK(ctxs[0].contextId == 2 && ctxs[0].deviceId == 1 && ctxs[0].nullStreamId == 6);
  CHILD_CHECK(ctxs[0].computeApiKind == CUPTI_ACTIVITY_COMPUTE_API_CUDA);
  const auto streams = records_of<CUpti_ActivityStream>(records, CUPTI_ACTIVITY_KIND_STREAM);
  CHILD_CHECK(streams.size() == 2);
  CHILD_CHECK(streams[0].streamId == 6 &&
              streams[0].flag == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL);
  CHILD_CHECK(streams[1].streamId == 13 && streams[1].contextId == 2);
  CHILD_CHECK(streams[1].flag == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NON_BLOCKING);
  CHILD_CHECK(static_cast<int32_t>(streams[1].priority) == -2);
  const auto api = api_record(records, streams[1].correlationId);
  CHILD_CHECK(api.kind == CUPTI_ACTIVITY_KIND_RUNTIME);
  CHILD_CHECK(api.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050);
  std::_Exit(0);
}

TEST(FakeDriverFreshProcess, FirstCuInitRunsInjectionAndReportsDevicesContextsStreams) {
  EXPECT_EXIT(first_cuinit_runs_injection_and_reports(), ::testing::ExitedWithCode(0), "");
}

void driver_queries_need_cuinit() {
  int count = 0;
  CHILD_CHECK(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED);
  c3fake_cuInit();
  CHILD_CHECK(cuDeviceGetCount(&count) == CUDA_SUCCESS && count == 2);
  std::_Exit(0);
}

TEST(FakeDriverFreshProcess, DriverQueriesNeedCuInit) {
  EXPECT_EXIT(driver_queries_need_cuinit(), ::testing::ExitedWithCode(0), "");
}

// ---- same-process checks --------------------------------------------------------------------

TEST_F(FakeDriver, DeviceRecordsWhenEnabledAfterInit) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE), CUPTI_SUCCESS);
  const auto devs = records_of<CUpti_ActivityDevice5>(flush(), CUPTI_ACTIVITY_KIND_DEVICE);
  ASSERT_EQ(devs.size(), 2U);
  const CUpti_ActivityDevice5& d = devs[1];
  EXPECT_EQ(d.id, 1U);
  EXPECT_STREQ(d.name, "C3Fake H100 1");
  EXPECT_EQ(d.numMultiprocessors, 132U);
  EXPECT_EQ(d.computeCapabilityMajor, 9U);
  EXPECT_EQ(d.computeCapabilityMinor, 0U);
  EXPECT_EQ(d.globalMemorySize, 80ULL << 30);
  EXPECT_EQ(d.globalMemoryBandwidth, 3352320000ULL);
  EXPECT_EQ(d.l2CacheSize, 50U << 20);
  EXPECT_EQ(d.maxWarpsPerMultiprocessor, 64U);
  EXPECT_EQ(d.maxBlocksPerMultiprocessor, 32U);
  EXPECT_EQ(d.maxRegistersPerMultiprocessor, 65536U);
  EXPECT_EQ(d.maxSharedMemoryPerMultiprocessor, 233472U);
  EXPECT_EQ(d.maxThreadsPerBlock, 1024U);
  EXPECT_EQ(d.maxRegistersPerBlock, 65536U);
  EXPECT_EQ(d.maxSharedMemoryPerBlock, 49152U);
  EXPECT_EQ(d.numThreadsPerWarp, 32U);
  EXPECT_EQ(d.numMemcpyEngines, 3U);
  EXPECT_GT(d.coreClockRate, 0U);
  EXPECT_EQ(static_cast<unsigned char>(d.uuid.bytes[15]), 1);
  EXPECT_NE(std::memcmp(devs[0].uuid.bytes, d.uuid.bytes, sizeof(d.uuid.bytes)), 0);
  // Already enabled: enabling again reports nothing new.
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE), CUPTI_SUCCESS);
  EXPECT_TRUE(flush().empty());
}

TEST_F(FakeDriver, StreamIdsContextsAndDriverQueries) {
  EXPECT_EQ(c3fake_device_count(), 2);
  void* a = c3fake_stream_create(0, 0, 0);
  void* b = c3fake_stream_create(1, 0, 0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(c3fake_stream_create(2, 0, 0), nullptr);
  EXPECT_GE(c3fake_stream_id(a), 13U);
  EXPECT_EQ(c3fake_stream_id(b), c3fake_stream_id(a) + 1);
  EXPECT_EQ(c3fake_stream_id(nullptr), 5U);
  EXPECT_EQ(c3fake_stream_id(c3fake_default_stream(1)), 6U);
  int bogus = 0;
  EXPECT_EQ(c3fake_stream_id(&bogus), 0U);

  CUcontext ctx_b = nullptr;
  ASSERT_EQ(cuStreamGetCtx(static_cast<CUstream>(b), &ctx_b), CUDA_SUCCESS);
  uint32_t id = 0;
  ASSERT_EQ(cuptiGetStreamIdEx(nullptr, static_cast<CUstream>(b), 0, &id), CUPTI_SUCCESS);
  EXPECT_EQ(id, c3fake_stream_id(b));
  ASSERT_EQ(cuptiGetStreamIdEx(ctx_b, nullptr, 0, &id), CUPTI_SUCCESS);
  EXPECT_EQ(id, 6U);  // the null stream of device 1's context
  EXPECT_EQ(cuptiGetStreamIdEx(nullptr, reinterpret_cast<CUstream>(&bogus), 0, &id),
            CUPTI_ERROR_INVALID_STREAM);
  EXPECT_EQ(cuStreamGetCtx(reinterpret_cast<CUstream>(&bogus), &ctx_b), CUDA_ERROR_INVALID_HANDLE);

  CUdevice dev = -1;
  ASSERT_EQ(cuCtxGetDevice(&dev), CUDA_SUCCESS);
  EXPECT_EQ(dev, 0);
  c3fake_set_device(1);
  ASSERT_EQ(cuCtxGetDevice(&dev), CUDA_SUCCESS);
  EXPECT_EQ(dev, 1);
  EXPECT_EQ(c3fake_stream_id(nullptr), 6U);  // NULL follows the current device
  CUcontext ctx_null = nullptr;
  ASSERT_EQ(cuStreamGetCtx(nullptr, &ctx_null), CUDA_SUCCESS);
  EXPECT_EQ(ctx_null, ctx_b);
  c3fake_set_device(0);

  int count = 0;
  ASSERT_EQ(cuDeviceGetCount(&count), CUDA_SUCCESS);
  EXPECT_EQ(count, 2);
  char bus[32] = {};
  ASSERT_EQ(cuDeviceGetPCIBusId(bus, sizeof(bus), 0), CUDA_SUCCESS);
  EXPECT_STREQ(bus, "0000:18:00.0");
  ASSERT_EQ(cuDeviceGetPCIBusId(bus, sizeof(bus), 1), CUDA_SUCCESS);
  EXPECT_STREQ(bus, "0000:2A:00.0");
  EXPECT_EQ(cuDeviceGetPCIBusId(bus, sizeof(bus), 2), CUDA_ERROR_INVALID_DEVICE);
}

TEST_F(FakeDriver, StreamRecordCarriesTheApiCorrelation) {
  c3fake_default_stream(0);  // device 0's context (and its null-stream record) exists already
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_STREAM), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  void* s = c3fake_stream_create(0, -1, 0);
  const auto records = flush();
  const auto streams = records_of<CUpti_ActivityStream>(records, CUPTI_ACTIVITY_KIND_STREAM);
  ASSERT_EQ(streams.size(), 1U);
  EXPECT_EQ(streams[0].streamId, c3fake_stream_id(s));
  EXPECT_EQ(streams[0].contextId, 1U);
  EXPECT_EQ(streams[0].flag, CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT);
  EXPECT_EQ(
      api_record(records, streams[0].correlationId).cbid,
      static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050));
}

TEST_F(FakeDriver, MemcpyRecords) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  void* s = c3fake_stream_create(1, 0, 0);
  const uint32_t h2d = c3fake_memcpy(s, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20, 0, 0, 20'000'000);
  const uint32_t d2h = c3fake_memcpy(s, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 4096, 0, 0, 2000);
  const uint32_t p2p_off = c3fake_memcpy(s, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, 64, 1, 0, 100);
  EXPECT_EQ(c3fake_memcpy(s, 0, 64, 0, 0, 100), 0U);
  EXPECT_EQ(c3fake_memcpy(s, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, 64, 1, 7, 100), 0U);
  auto records = flush();
  const auto copies = records_of<CUpti_ActivityMemcpy6>(records, CUPTI_ACTIVITY_KIND_MEMCPY);
  ASSERT_EQ(copies.size(), 2U);
  const CUpti_ActivityMemcpy6& c = copies[0];
  EXPECT_EQ(c.correlationId, h2d);
  EXPECT_EQ(c.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
  EXPECT_EQ(c.srcKind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
  EXPECT_EQ(c.dstKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(c.flags, CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
  EXPECT_EQ(c.bytes, 1U << 20);
  EXPECT_EQ(c.end - c.start, 20'000'000U);
  EXPECT_EQ(c.deviceId, 1U);
  EXPECT_EQ(c.contextId, 2U);
  EXPECT_EQ(c.streamId, c3fake_stream_id(s));
  EXPECT_EQ(c.channelID, 1U);
  EXPECT_EQ(c.channelType, CUPTI_CHANNEL_TYPE_ASYNC_MEMCPY);
  EXPECT_EQ(c.copyCount, 1U);
  EXPECT_EQ(copies[1].correlationId, d2h);
  EXPECT_EQ(copies[1].srcKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(copies[1].dstKind, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE);
  EXPECT_EQ(copies[1].start, c.end);  // same stream: serialized
  EXPECT_EQ(api_record(records, h2d).cbid,
            static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020));
  EXPECT_EQ(api_record(records, p2p_off).cbid,
            static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000));
  EXPECT_TRUE(records_of<CUpti_ActivityMemcpyPtoP4>(records, CUPTI_ACTIVITY_KIND_MEMCPY2).empty());

  // Peer copies come only with MEMCPY2; plain copies only with MEMCPY.
  ASSERT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2), CUPTI_SUCCESS);
  const uint32_t p2p = c3fake_memcpy(s, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP, 8 << 20, 1, 0, 40000);
  c3fake_memcpy(s, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 64, 0, 0, 10);
  records = flush();
  EXPECT_TRUE(records_of<CUpti_ActivityMemcpy6>(records, CUPTI_ACTIVITY_KIND_MEMCPY).empty());
  const auto peers = records_of<CUpti_ActivityMemcpyPtoP4>(records, CUPTI_ACTIVITY_KIND_MEMCPY2);
  ASSERT_EQ(peers.size(), 1U);
  const CUpti_ActivityMemcpyPtoP4& p = peers[0];
  EXPECT_EQ(p.correlationId, p2p);
  EXPECT_EQ(p.copyKind, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP);
  EXPECT_EQ(p.bytes, 8U << 20);
  EXPECT_EQ(p.end - p.start, 40000U);
  EXPECT_EQ(p.deviceId, 1U);
  EXPECT_EQ(p.contextId, 2U);
  EXPECT_EQ(p.srcDeviceId, 1U);
  EXPECT_EQ(p.srcContextId, 2U);
  EXPECT_EQ(p.dstDeviceId, 0U);
  EXPECT_EQ(p.dstContextId, 1U);
  EXPECT_EQ(p.streamId, c3fake_stream_id(s));
}

TEST_F(FakeDriver, MemsetRecord) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  void* s = c3fake_stream_create(0, 0, 0);
  const uint32_t corr = c3fake_memset(s, 1 << 16, 0xab, 3000);
  const auto records = flush();
  const auto sets = records_of<CUpti_ActivityMemset4>(records, CUPTI_ACTIVITY_KIND_MEMSET);
  ASSERT_EQ(sets.size(), 1U);
  EXPECT_EQ(sets[0].correlationId, corr);
  EXPECT_EQ(sets[0].value, 0xabU);
  EXPECT_EQ(sets[0].bytes, 1U << 16);
  EXPECT_EQ(sets[0].end - sets[0].start, 3000U);
  EXPECT_EQ(sets[0].streamId, c3fake_stream_id(s));
  EXPECT_EQ(sets[0].contextId, 1U);
  EXPECT_EQ(sets[0].memoryKind, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
  EXPECT_EQ(api_record(records, corr).cbid,
            static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020));
}

TEST_F(FakeDriver, StreamSynchronizeWaitsForTheStream) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_SUCCESS);
  void* s = c3fake_stream_create(1, 0, 0);
  const uint32_t k = c3fake_launch_kernel(s, "long", 1, 1, 1, 1, 1, 1, 8, 0, 0, 3'000'000);
  c3fake_stream_synchronize(s);
  const uint64_t after = c3fake_now_ns();
  const auto records = flush();
  const auto kernel = kernel_record(records, k);
  EXPECT_GE(after, kernel.end);
  const auto syncs =
      records_of<CUpti_ActivitySynchronization2>(records, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  ASSERT_EQ(syncs.size(), 1U);
  const auto& sy = syncs[0];
  EXPECT_EQ(sy.type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
  EXPECT_EQ(sy.streamId, c3fake_stream_id(s));
  EXPECT_EQ(sy.contextId, 2U);
  EXPECT_EQ(sy.cudaEventId, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
  EXPECT_GE(sy.end, kernel.end);
  const auto api = api_record(records, sy.correlationId);
  EXPECT_EQ(api.cbid,
            static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020));
  EXPECT_EQ(api.start, sy.start);
  EXPECT_EQ(api.end, sy.end);
}

TEST_F(FakeDriver, ContextSynchronizeWaitsForEveryStream) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_SUCCESS);
  void* s1 = c3fake_stream_create(1, 0, 0);
  void* s2 = c3fake_stream_create(1, 0, 1);
  c3fake_launch_kernel(s1, "a", 1, 1, 1, 1, 1, 1, 8, 0, 0, 1'000'000);
  const uint32_t longest = c3fake_launch_kernel(s2, "b", 1, 1, 1, 1, 1, 1, 8, 0, 0, 2'000'000);
  c3fake_context_synchronize(1);
  const auto records = flush();
  const auto syncs =
      records_of<CUpti_ActivitySynchronization2>(records, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  ASSERT_EQ(syncs.size(), 1U);
  EXPECT_EQ(syncs[0].type, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
  EXPECT_EQ(syncs[0].streamId, CUPTI_SYNCHRONIZATION_INVALID_VALUE);
  EXPECT_EQ(syncs[0].contextId, 2U);
  EXPECT_GE(syncs[0].end, kernel_record(records, longest).end);
  EXPECT_EQ(api_record(records, syncs[0].correlationId).cbid,
            static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020));
}

TEST_F(FakeDriver, InvalidStreamDoesNothing) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_SUCCESS);
  int bogus = 0;
  EXPECT_EQ(c3fake_launch_kernel(&bogus, "x", 1, 1, 1, 1, 1, 1, 8, 0, 0, 10), 0U);
  EXPECT_EQ(c3fake_memset(&bogus, 1, 0, 10), 0U);
  c3fake_stream_synchronize(&bogus);
  c3fake_context_synchronize(9);
  EXPECT_TRUE(flush().empty());
}

}  // namespace
}  // namespace c3::sim::test
