// Self-test of the fake CUPTI: activity kinds, API records, external correlation, clock,
// buffers (drops, flush, full buffers), concurrency, subscribers, callbacks, failure injection.
#include <gtest/gtest.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "c3/sim/gpu/fixed_time.h"
#include "cupti_client.h"

namespace c3::sim::test {
namespace {

class FakeCupti : public ::testing::Test {
 protected:
  void SetUp() override {
    c3fake_cuInit();
    start_client();
  }
  void TearDown() override { stop_client(); }

  static uint32_t launch(void* stream, uint64_t duration_ns = 1000, const char* name = "k") {
    return c3fake_launch_kernel(stream, name, 1, 1, 1, 32, 1, 1, 16, 0, 0, duration_ns);
  }
  static std::vector<Record> flush() { return CuptiClient::instance().flush_and_take(); }
};

uint64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

TEST_F(FakeCupti, VersionResultStringsAndCallbackNames) {
  uint32_t version = 0;
  ASSERT_EQ(cuptiGetVersion(&version), CUPTI_SUCCESS);
  EXPECT_EQ(version, static_cast<uint32_t>(CUPTI_API_VERSION));
  const char* str = nullptr;
  ASSERT_EQ(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &str),
            CUPTI_SUCCESS);
  EXPECT_STREQ(str, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
  ASSERT_EQ(cuptiGetResultString(CUPTI_SUCCESS, &str), CUPTI_SUCCESS);
  EXPECT_STREQ(str, "CUPTI_SUCCESS");
  EXPECT_EQ(cuptiGetResultString(static_cast<CUptiResult>(777), &str),
            CUPTI_ERROR_INVALID_PARAMETER);

  const char* name = nullptr;
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API,
                                 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name),
            CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cudaLaunchKernel_v7000");
  ASSERT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                                 &name),
            CUPTI_SUCCESS);
  EXPECT_STREQ(name, "cuLaunchKernel");
  EXPECT_EQ(cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, 3, &name),
            CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(cuptiActivityEnable(static_cast<CUpti_ActivityKind>(9999)), CUPTI_ERROR_INVALID_KIND);

  CUpti_ActivityThreadIdType type = CUPTI_ACTIVITY_THREAD_ID_TYPE_SIZE;
  ASSERT_EQ(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiGetThreadIdType(&type), CUPTI_SUCCESS);
  EXPECT_EQ(type, CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  ASSERT_EQ(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT), CUPTI_SUCCESS);
}

TEST_F(FakeCupti, KernelAndRuntimeApiRecords) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  void* stream = c3fake_stream_create(1, 0, 0);
  ASSERT_NE(stream, nullptr);
  const uint64_t before = c3fake_now_ns();
  const uint32_t corr = c3fake_launch_kernel(stream, "gemm_kernel", 132, 2, 1, 256, 1, 1, 128, 1024,
                                             4096, 20'000'000);
  const uint32_t corr2 = launch(stream, 7000, "second");
  ASSERT_NE(corr, 0U);
  EXPECT_GT(corr2, corr);
  const auto records = flush();

  const CUpti_ActivityAPI api = api_record(records, corr);
  ASSERT_EQ(api.kind, CUPTI_ACTIVITY_KIND_RUNTIME);
  EXPECT_EQ(api.cbid,
            static_cast<CUpti_CallbackId>(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
  EXPECT_EQ(api.processId, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(api.threadId, static_cast<uint32_t>(gettid()));
  EXPECT_EQ(api.returnValue, 0U);
  EXPECT_GE(api.start, before);
  EXPECT_GT(api.end, api.start);

  const CUpti_ActivityKernel10 k = kernel_record(records, corr);
  ASSERT_EQ(k.kind, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  EXPECT_STREQ(k.name, "gemm_kernel");
  EXPECT_EQ(k.deviceId, 1U);
  EXPECT_EQ(k.contextId, 2U);
  EXPECT_EQ(k.streamId, c3fake_stream_id(stream));
  EXPECT_GE(k.streamId, 13U);
  EXPECT_EQ(k.gridX, 132);
  EXPECT_EQ(k.gridY, 2);
  EXPECT_EQ(k.gridZ, 1);
  EXPECT_EQ(k.blockX, 256);
  EXPECT_EQ(k.registersPerThread, 128);
  EXPECT_EQ(k.staticSharedMemory, 1024);
  EXPECT_EQ(k.dynamicSharedMemory, 4096);
  EXPECT_EQ(k.start, api.start + 1000);     // fresh stream: launch latency only
  EXPECT_EQ(k.end - k.start, 20'000'000U);  // long enough that the next launch queues
  EXPECT_EQ(k.completed, k.end);
  EXPECT_EQ(k.queued, static_cast<uint64_t>(CUPTI_TIMESTAMP_UNKNOWN));
  EXPECT_EQ(k.submitted, static_cast<uint64_t>(CUPTI_TIMESTAMP_UNKNOWN));
  EXPECT_EQ(k.launchType, CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR);
  EXPECT_EQ(k.graphId, 0U);
  EXPECT_EQ(k.channelType, CUPTI_CHANNEL_TYPE_COMPUTE);

  const CUpti_ActivityKernel10 k2 = kernel_record(records, corr2);
  EXPECT_STREQ(k2.name, "second");
  EXPECT_EQ(k2.start, k.end);  // queued behind the first kernel on the same stream
  EXPECT_EQ(k2.end, k.end + 7000);

  // Record order: the API record precedes its kernel record.
  const int api_at = index_of<CUpti_ActivityAPI>(
      records, CUPTI_ACTIVITY_KIND_RUNTIME, [](const auto& r) { return r.correlationId; }, corr);
  const int kernel_at = index_of<CUpti_ActivityKernel10>(
      records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, [](const auto& r) { return r.correlationId; },
      corr);
  EXPECT_LT(api_at, kernel_at);
}

TEST_F(FakeCupti, RecordsOnlyForEnabledKinds) {
  void* stream = c3fake_stream_create(0, 0, 0);
  uint32_t corr = launch(stream);
  EXPECT_TRUE(flush().empty());

  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_SUCCESS);
  corr = launch(stream);
  auto records = flush();
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(records[0].kind, static_cast<uint32_t>(CUPTI_ACTIVITY_KIND_KERNEL));
  EXPECT_EQ(records[0].as<CUpti_ActivityKernel10>().correlationId, corr);

  ASSERT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  corr = launch(stream);
  records = flush();
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(records[0].kind, static_cast<uint32_t>(CUPTI_ACTIVITY_KIND_RUNTIME));
  EXPECT_EQ(api_record(records, corr).kind, CUPTI_ACTIVITY_KIND_RUNTIME);
}

TEST_F(FakeCupti, DriverApiRecords) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_SUCCESS);
  const uint32_t drv = c3fake_launch_kernel_driver(nullptr, "drv", 1, 1, 1, 1, 1, 1, 8, 0, 0, 10);
  const uint32_t rt = launch(nullptr);
  auto records = flush();
  const CUpti_ActivityAPI api = api_record(records, drv);
  EXPECT_EQ(api.kind, CUPTI_ACTIVITY_KIND_DRIVER);
  EXPECT_EQ(api.cbid, static_cast<CUpti_CallbackId>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  EXPECT_STREQ(kernel_record(records, drv).name, "drv");
  EXPECT_EQ(api_record(records, rt).kind, CUPTI_ACTIVITY_KIND_INVALID);  // runtime not recorded

  // Per-cbid driver API recording without the DRIVER kind.
  ASSERT_EQ(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_DRIVER), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1), CUPTI_SUCCESS);
  const uint32_t drv2 = c3fake_launch_kernel_driver(nullptr, "drv", 1, 1, 1, 1, 1, 1, 8, 0, 0, 10);
  records = flush();
  EXPECT_EQ(api_record(records, drv2).kind, CUPTI_ACTIVITY_KIND_DRIVER);
}

TEST_F(FakeCupti, RuntimeApiPerCbid) {
  ASSERT_EQ(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1),
            CUPTI_SUCCESS);
  void* stream = c3fake_stream_create(0, 0, 0);
  const uint32_t k = launch(stream);
  const uint32_t m = c3fake_memset(stream, 64, 0, 100);
  auto records = flush();
  EXPECT_EQ(api_record(records, k).kind, CUPTI_ACTIVITY_KIND_RUNTIME);
  EXPECT_EQ(api_record(records, m).kind, CUPTI_ACTIVITY_KIND_INVALID);
  ASSERT_EQ(cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 0),
            CUPTI_SUCCESS);
  launch(stream);
  EXPECT_TRUE(flush().empty());
  EXPECT_EQ(cuptiActivityEnableRuntimeApi(0, 1), CUPTI_ERROR_INVALID_PARAMETER);
}

TEST_F(FakeCupti, ExternalCorrelationPrecedesApiRecord) {
  void* stream = c3fake_stream_create(0, 0, 0);  // before RUNTIME: no API record for it
  for (auto kind : {CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION}) {
    ASSERT_EQ(cuptiActivityEnable(kind), CUPTI_SUCCESS);
  }
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 41),
            CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 42),
            CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN, 7),
            CUPTI_SUCCESS);
  const uint32_t corr = launch(stream);
  uint64_t last = 0;
  ASSERT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN, &last),
            CUPTI_SUCCESS);
  EXPECT_EQ(last, 7U);
  ASSERT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
            CUPTI_SUCCESS);
  EXPECT_EQ(last, 42U);
  const uint32_t corr_41 = launch(stream);  // CUSTOM0 still holds 41
  ASSERT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
            CUPTI_SUCCESS);
  EXPECT_EQ(last, 41U);
  EXPECT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
            CUPTI_ERROR_QUEUE_EMPTY);
  EXPECT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_INVALID, 1),
            CUPTI_ERROR_INVALID_PARAMETER);
  const uint32_t plain = launch(stream);

  const auto records = flush();
  ASSERT_GE(records.size(), 4U);
  // [ext UNKNOWN 7][ext CUSTOM0 42][API corr][kernel corr] ...
  const auto e0 = records[0].as<CUpti_ActivityExternalCorrelation>();
  const auto e1 = records[1].as<CUpti_ActivityExternalCorrelation>();
  ASSERT_EQ(records[0].kind, static_cast<uint32_t>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  ASSERT_EQ(records[1].kind, static_cast<uint32_t>(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  EXPECT_EQ(e0.externalKind, CUPTI_EXTERNAL_CORRELATION_KIND_UNKNOWN);
  EXPECT_EQ(e0.externalId, 7U);
  EXPECT_EQ(e0.correlationId, corr);
  EXPECT_EQ(e1.externalKind, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
  EXPECT_EQ(e1.externalId, 42U);
  EXPECT_EQ(e1.correlationId, corr);
  EXPECT_EQ(records[2].kind, static_cast<uint32_t>(CUPTI_ACTIVITY_KIND_RUNTIME));
  EXPECT_EQ(records[2].as<CUpti_ActivityAPI>().correlationId, corr);

  const auto ext = records_of<CUpti_ActivityExternalCorrelation>(
      records, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  ASSERT_EQ(ext.size(), 3U);
  EXPECT_EQ(ext[2].externalId, 41U);
  EXPECT_EQ(ext[2].correlationId, corr_41);
  for (const auto& e : ext) EXPECT_NE(e.correlationId, plain);
}

TEST_F(FakeCupti, NoExternalCorrelationWithoutApiRecord) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 5),
            CUPTI_SUCCESS);
  const uint32_t corr = launch(nullptr);
  uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, &last);
  const auto records = flush();
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(kernel_record(records, corr).correlationId, corr);
}

TEST_F(FakeCupti, ExternalCorrelationStacksArePerThread) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
  cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, 9);
  uint32_t other = 0;
  std::thread([&other] { other = launch(nullptr); }).join();
  const uint32_t mine = launch(nullptr);
  uint64_t last = 0;
  cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
  const auto ext = records_of<CUpti_ActivityExternalCorrelation>(
      flush(), CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  ASSERT_EQ(ext.size(), 1U);
  EXPECT_EQ(ext[0].correlationId, mine);
  EXPECT_NE(ext[0].correlationId, other);
}

uint64_t g_fake_clock = 0;
uint64_t CUPTIAPI counting_clock() {
  return g_fake_clock += 100;
}

TEST_F(FakeCupti, TimestampCallbackDrivesEveryTimestamp) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL), CUPTI_SUCCESS);
  void* stream = c3fake_stream_create(0, 0, 0);  // fresh stream: no real-clock history
  g_fake_clock = 1'000'000;
  ASSERT_EQ(cuptiActivityRegisterTimestampCallback(&counting_clock), CUPTI_SUCCESS);
  uint64_t ts = 0;
  ASSERT_EQ(cuptiGetTimestamp(&ts), CUPTI_SUCCESS);
  EXPECT_EQ(ts, 1'000'100U);
  EXPECT_EQ(c3fake_now_ns(), 1'000'200U);
  const uint32_t corr = launch(stream, 5000);
  const auto records = flush();
  const auto api = api_record(records, corr);
  const auto k = kernel_record(records, corr);
  EXPECT_EQ(api.start, 1'000'300U);
  EXPECT_GT(api.end, api.start);
  EXPECT_LT(api.end, 1'100'000U);
  EXPECT_EQ(k.start, api.start + 1000);
  EXPECT_EQ(k.end, k.start + 5000);

  ASSERT_EQ(cuptiActivityRegisterTimestampCallback(nullptr), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiGetTimestamp(&ts), CUPTI_SUCCESS);
  EXPECT_GT(ts, 1'000'000'000'000'000'000ULL);  // back on CLOCK_REALTIME
}

TEST_F(FakeCupti, DefaultClockIsRealtime) {
  uint64_t ts = 0;
  const uint64_t before = realtime_ns();
  ASSERT_EQ(cuptiGetTimestamp(&ts), CUPTI_SUCCESS);
  const uint64_t after = realtime_ns();
  EXPECT_GE(ts, before);
  EXPECT_LE(ts, after);
}

TEST_F(FakeCupti, LatencyTimestamps) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnableLatencyTimestamps(1), CUPTI_SUCCESS);
  const uint32_t corr = launch(nullptr);
  const auto records = flush();
  const auto api = api_record(records, corr);
  const auto k = kernel_record(records, corr);
  EXPECT_EQ(k.queued, api.start);
  EXPECT_EQ(k.submitted, api.end);
}

TEST_F(FakeCupti, DroppedRecordsWhenNoBuffer) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  CuptiClient::instance().set_refuse_buffers(true);
  for (int i = 0; i < 3; ++i) launch(nullptr);
  EXPECT_TRUE(flush().empty());
  EXPECT_GE(CuptiClient::instance().buffers_requested(), 1);
  size_t dropped = 0;
  int dummy = 0;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(reinterpret_cast<CUcontext>(&dummy), 0, &dropped),
            CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0U);  // one global count, reported for the NULL context
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 6U);
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0U);  // reset by the previous call

  CuptiClient::instance().set_refuse_buffers(false);
  const uint32_t corr = launch(nullptr);
  EXPECT_EQ(kernel_record(flush(), corr).correlationId, corr);
}

TEST_F(FakeCupti, FlushDeliversPartialBuffers) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  CuptiClient& client = CuptiClient::instance();
  launch(nullptr);
  EXPECT_EQ(client.buffers_completed(), 0);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);
  EXPECT_EQ(client.buffers_completed(), 1);
  EXPECT_EQ(client.take().size(), 1U);
  ASSERT_EQ(cuptiActivityFlushAll(0), CUPTI_SUCCESS);  // nothing new: no empty buffer
  EXPECT_EQ(client.buffers_completed(), 1);

  const uint32_t corr = launch(nullptr);
  std::thread([] { cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); }).join();
  EXPECT_EQ(client.buffers_completed(), 2);
  const auto records = client.take();
  ASSERT_EQ(records.size(), 1U);
  EXPECT_EQ(records[0].as<CUpti_ActivityKernel10>().correlationId, corr);
}

TEST_F(FakeCupti, FullBuffersAreCompletedInOrder) {
  stop_client();
  start_client(1024);  // four kernel records per buffer
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  std::vector<uint32_t> ids;
  ids.reserve(21);
  for (int i = 0; i < 21; ++i) ids.push_back(launch(nullptr));
  CuptiClient& client = CuptiClient::instance();
  EXPECT_EQ(client.buffers_completed(), 5);  // the sixth is current
  const auto kernels =
      records_of<CUpti_ActivityKernel10>(flush(), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(kernels.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(kernels[i].correlationId, ids[i]);

  stop_client();
  start_client(kDefaultBufferSize, 2);  // maxNumRecords = 2
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  for (int i = 0; i < 5; ++i) launch(nullptr);
  EXPECT_EQ(client.buffers_completed(), 2);
  EXPECT_EQ(flush().size(), 5U);
}

TEST_F(FakeCupti, GetNextRecordWalksLikeCupti) {
  alignas(8) uint8_t buffer[256] = {};
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  CUpti_ActivityExternalCorrelation ext{};
  ext.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  std::memcpy(buffer, &api, sizeof(api));
  std::memcpy(buffer + sizeof(api), &ext, sizeof(ext));
  const uint32_t garbage = 0xdeadbeef;
  std::memcpy(buffer + sizeof(api) + sizeof(ext), &garbage, sizeof(garbage));

  CUpti_Activity* record = nullptr;
  const size_t valid = sizeof(api) + sizeof(ext);
  ASSERT_EQ(cuptiActivityGetNextRecord(buffer, valid, &record), CUPTI_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(record), buffer);
  ASSERT_EQ(cuptiActivityGetNextRecord(buffer, valid, &record), CUPTI_SUCCESS);
  EXPECT_EQ(reinterpret_cast<uint8_t*>(record), buffer + sizeof(api));
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, valid, &record), CUPTI_ERROR_MAX_LIMIT_REACHED);

  record = nullptr;
  ASSERT_EQ(cuptiActivityGetNextRecord(buffer, valid + 64, &record), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityGetNextRecord(buffer, valid + 64, &record), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, valid + 64, &record), CUPTI_ERROR_INVALID_KIND);

  record = nullptr;
  EXPECT_EQ(cuptiActivityGetNextRecord(buffer, 0, &record), CUPTI_ERROR_MAX_LIMIT_REACHED);
}

TEST_F(FakeCupti, ConcurrentLaunchesGetUniqueIds) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  constexpr int kThreads = 16;
  constexpr int kLaunches = 1000;
  std::vector<std::vector<uint32_t>> returned(kThreads);
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &returned] {
      void* stream = c3fake_stream_create(t % 2, 0, 1);
      auto& ids = returned[static_cast<size_t>(t)];
      ids.reserve(kLaunches);
      for (int i = 0; i < kLaunches; ++i) ids.push_back(launch(stream));
    });
  }
  for (auto& th : threads) th.join();
  const auto records = flush();
  std::set<uint32_t> expected;
  for (const auto& ids : returned) expected.insert(ids.begin(), ids.end());
  EXPECT_EQ(expected.size(), static_cast<size_t>(kThreads * kLaunches));
  EXPECT_EQ(expected.count(0), 0U);
  std::set<uint32_t> api_ids;
  std::set<uint32_t> kernel_ids;
  for (const auto& r : records) {
    if (r.kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
      const auto api = r.as<CUpti_ActivityAPI>();
      if (api.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
        api_ids.insert(api.correlationId);
      }
    } else if (r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      kernel_ids.insert(r.as<CUpti_ActivityKernel10>().correlationId);
    }
  }
  EXPECT_EQ(api_ids, expected);
  EXPECT_EQ(kernel_ids, expected);
  size_t dropped = 1;
  ASSERT_EQ(cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped), CUPTI_SUCCESS);
  EXPECT_EQ(dropped, 0U);
}

TEST_F(FakeCupti, FailureInjection) {
  setenv("C3FAKE_CUPTI_FAIL", "cuptiActivityEnable, cuptiSubscribe", 1);
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_ERROR_UNKNOWN);
  CUpti_SubscriberHandle sub = nullptr;
  EXPECT_EQ(cuptiSubscribe(&sub, nullptr, nullptr), CUPTI_ERROR_UNKNOWN);
  uint32_t version = 0;
  EXPECT_EQ(cuptiGetVersion(&version), CUPTI_SUCCESS);
  launch(nullptr);
  EXPECT_TRUE(flush().empty());  // the failed enable did nothing

  setenv("C3FAKE_CUPTI_FAIL", "all", 1);
  EXPECT_EQ(cuptiGetVersion(&version), CUPTI_ERROR_UNKNOWN);
  EXPECT_EQ(cuptiActivityFlushAll(0), CUPTI_ERROR_UNKNOWN);
  const char* str = nullptr;
  EXPECT_EQ(cuptiGetResultString(CUPTI_ERROR_UNKNOWN, &str), CUPTI_SUCCESS);
  EXPECT_STREQ(str, "CUPTI_ERROR_UNKNOWN");
  unsetenv("C3FAKE_CUPTI_FAIL");
  EXPECT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
}

TEST_F(FakeCupti, OneSubscriberAtATime) {
  CUpti_SubscriberHandle first = nullptr;
  CUpti_SubscriberHandle second = nullptr;
  ASSERT_EQ(cuptiSubscribe(&first, nullptr, nullptr), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiSubscribe(&second, nullptr, nullptr),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  ASSERT_EQ(cuptiUnsubscribe(first), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiUnsubscribe(first), CUPTI_ERROR_INVALID_PARAMETER);
  ASSERT_EQ(cuptiSubscribe(&second, nullptr, nullptr), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiUnsubscribe(second), CUPTI_SUCCESS);

  setenv("C3FAKE_CUPTI_OTHER_SUBSCRIBER", "1", 1);  // e.g. Nsight Systems owns CUPTI
  EXPECT_EQ(cuptiSubscribe(&first, nullptr, nullptr),
            CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
  unsetenv("C3FAKE_CUPTI_OTHER_SUBSCRIBER");
}

struct CallbackLog {
  std::vector<CUpti_ApiCallbackSite> sites;
  std::vector<uint32_t> correlation_ids;
  std::vector<std::string> names;
  std::vector<std::string> symbols;
  std::vector<unsigned> grid_x;
  std::vector<uint64_t> correlation_data;
  bool push_in_enter = false;
};

void CUPTIAPI log_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                           const void* cbdata) {
  auto* log = static_cast<CallbackLog*>(userdata);
  const auto* data = static_cast<const CUpti_CallbackData*>(cbdata);
  log->sites.push_back(data->callbackSite);
  log->correlation_ids.push_back(data->correlationId);
  log->names.emplace_back(data->functionName != nullptr ? data->functionName : "");
  log->symbols.emplace_back(data->symbolName != nullptr ? data->symbolName : "");
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API &&
      cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
    log->grid_x.push_back(
        static_cast<const cudaLaunchKernel_v7000_params*>(data->functionParams)->gridDim.x);
  }
  if (data->callbackSite == CUPTI_API_ENTER) {
    *data->correlationData = 1234;
    if (log->push_in_enter) {
      cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 77);
    }
  } else {
    log->correlation_data.push_back(*data->correlationData);
    uint64_t last = 0;
    if (log->push_in_enter) {
      cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    }
  }
}

TEST_F(FakeCupti, ApiCallbacksForEnabledCbids) {
  CallbackLog log;
  CUpti_SubscriberHandle sub = nullptr;
  ASSERT_EQ(cuptiSubscribe(&sub, &log_callback, &log), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
            CUPTI_SUCCESS);
  const uint32_t corr =
      c3fake_launch_kernel(nullptr, "cb_kernel", 77, 1, 1, 32, 1, 1, 8, 0, 0, 100);
  c3fake_memset(nullptr, 16, 0, 10);  // its callback is not enabled
  ASSERT_EQ(log.sites.size(), 2U);
  EXPECT_EQ(log.sites[0], CUPTI_API_ENTER);
  EXPECT_EQ(log.sites[1], CUPTI_API_EXIT);
  EXPECT_EQ(log.correlation_ids[0], corr);
  EXPECT_EQ(log.correlation_ids[1], corr);
  EXPECT_EQ(log.names[0], "cudaLaunchKernel_v7000");
  EXPECT_EQ(log.symbols[0], "cb_kernel");
  ASSERT_EQ(log.grid_x.size(), 2U);
  EXPECT_EQ(log.grid_x[0], 77U);
  EXPECT_EQ(log.correlation_data, std::vector<uint64_t>{1234});

  // A driver-domain subscription sees cuLaunchKernel.
  ASSERT_EQ(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
  log = CallbackLog{};
  c3fake_launch_kernel_driver(nullptr, "drv", 1, 1, 1, 1, 1, 1, 8, 0, 0, 10);
  ASSERT_EQ(log.names.size(), 2U);
  EXPECT_EQ(log.names[0], "cuLaunchKernel");

  // Ids pushed in the ENTER callback (and popped at EXIT) cover the call.
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
  log = CallbackLog{};
  log.push_in_enter = true;
  const uint32_t covered = launch(nullptr);
  const auto ext = records_of<CUpti_ActivityExternalCorrelation>(
      flush(), CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  ASSERT_EQ(ext.size(), 1U);
  EXPECT_EQ(ext[0].externalId, 77U);
  EXPECT_EQ(ext[0].correlationId, covered);
  ASSERT_EQ(cuptiUnsubscribe(sub), CUPTI_SUCCESS);
}

TEST_F(FakeCupti, FlushPeriodDeliversFromAnotherThread) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiActivityFlushPeriod(5), CUPTI_SUCCESS);
  launch(nullptr);
  CuptiClient& client = CuptiClient::instance();
  for (int i = 0; i < 400 && client.buffers_completed() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(cuptiActivityFlushPeriod(0), CUPTI_SUCCESS);
  ASSERT_GE(client.buffers_completed(), 1);
  const auto threads = client.completing_threads();
  ASSERT_FALSE(threads.empty());
  EXPECT_NE(threads[0], std::this_thread::get_id());
}

TEST_F(FakeCupti, FinalizeResetsState) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
  launch(nullptr);
  ASSERT_EQ(cuptiFinalize(), CUPTI_SUCCESS);  // delivers the partial buffer
  EXPECT_EQ(CuptiClient::instance().take().size(), 1U);
  launch(nullptr);  // nothing is enabled any more and no callbacks are registered
  EXPECT_EQ(CuptiClient::instance().buffers_requested(), 1);
  CUpti_SubscriberHandle sub = nullptr;
  ASSERT_EQ(cuptiSubscribe(&sub, nullptr, nullptr), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiFinalize(), CUPTI_SUCCESS);  // also drops the subscriber
  ASSERT_EQ(cuptiSubscribe(&sub, nullptr, nullptr), CUPTI_SUCCESS);
}

}  // namespace
}  // namespace c3::sim::test
