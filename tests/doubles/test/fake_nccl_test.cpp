// Self-test of the simulated NCCL's fixed-time driver (the NCCL test double): communicators,
// kernels launched per op and per group (inside ncclGroupEnd), argument checks and failure
// injection.
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "c3/sim/nccl/fixed_time.h"
#include "cupti_client.h"

namespace c3::sim::test {
namespace {

constexpr const char* kArgs = "(ncclDevKernelArgsStorage<4096ul>)";

class FakeNccl : public ::testing::Test {
 protected:
  void SetUp() override {
    c3fake_cuInit();
    start_client();
    ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME), CUPTI_SUCCESS);
    ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS);
    ncclUniqueId id{};
    ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    ASSERT_EQ(ncclCommInitRank(&comm_, 8, id, 3), ncclSuccess);
    stream_ = c3fake_stream_create(0, 0, 1);
  }
  void TearDown() override {
    EXPECT_EQ(ncclCommDestroy(comm_), ncclSuccess);
    stop_client();
  }
  static std::vector<CUpti_ActivityKernel10> kernels() {
    return records_of<CUpti_ActivityKernel10>(CuptiClient::instance().flush_and_take(),
                                              CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  }
  cudaStream_t stream() const { return static_cast<cudaStream_t>(stream_); }

  ncclComm_t comm_ = nullptr;
  void* stream_ = nullptr;
  std::vector<float> buf_ = std::vector<float>(16);
};

TEST_F(FakeNccl, VersionUniqueIdsAndErrorStrings) {
  int version = 0;
  ASSERT_EQ(ncclGetVersion(&version), ncclSuccess);
  EXPECT_EQ(version, NCCL_VERSION_CODE);
  ncclUniqueId a{};
  ncclUniqueId b{};
  ASSERT_EQ(ncclGetUniqueId(&a), ncclSuccess);
  ASSERT_EQ(ncclGetUniqueId(&b), ncclSuccess);
  EXPECT_NE(std::memcmp(a.internal, b.internal, sizeof(a.internal)), 0);
  EXPECT_STREQ(ncclGetErrorString(ncclSuccess), "no error");
  EXPECT_NE(std::string(ncclGetErrorString(ncclInvalidArgument)).find("invalid argument"),
            std::string::npos);
  // The profiling names are aliases of the same functions.
  EXPECT_EQ(reinterpret_cast<void*>(&pncclAllReduce), reinterpret_cast<void*>(&ncclAllReduce));
}

TEST_F(FakeNccl, CommunicatorLifecycle) {
  int n = 0;
  int rank = -1;
  int dev = -1;
  ASSERT_EQ(ncclCommCount(comm_, &n), ncclSuccess);
  ASSERT_EQ(ncclCommUserRank(comm_, &rank), ncclSuccess);
  ASSERT_EQ(ncclCommCuDevice(comm_, &dev), ncclSuccess);
  EXPECT_EQ(n, 8);
  EXPECT_EQ(rank, 3);
  EXPECT_EQ(dev, 0);
  ncclResult_t async = ncclInternalError;
  ASSERT_EQ(ncclCommGetAsyncError(comm_, &async), ncclSuccess);
  EXPECT_EQ(async, ncclSuccess);

  ncclUniqueId id{};
  ncclGetUniqueId(&id);
  ncclComm_t bad = nullptr;
  EXPECT_EQ(ncclCommInitRank(&bad, 8, id, 8), ncclInvalidArgument);
  EXPECT_EQ(ncclCommInitRank(nullptr, 8, id, 0), ncclInvalidArgument);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  ncclComm_t with_config = nullptr;
  ASSERT_EQ(ncclCommInitRankConfig(&with_config, 2, id, 1, &config), ncclSuccess);
  config.magic = 0;
  EXPECT_EQ(ncclCommInitRankConfig(&bad, 2, id, 1, &config), ncclInvalidArgument);
  ncclComm_t scalable = nullptr;
  ASSERT_EQ(ncclCommInitRankScalable(&scalable, 4, 2, 1, &id, nullptr), ncclSuccess);

  ncclComm_t all[2] = {};
  const int devlist[2] = {1, 0};
  ASSERT_EQ(ncclCommInitAll(all, 2, devlist), ncclSuccess);
  ASSERT_EQ(ncclCommCuDevice(all[0], &dev), ncclSuccess);
  EXPECT_EQ(dev, 1);
  ASSERT_EQ(ncclCommUserRank(all[1], &rank), ncclSuccess);
  EXPECT_EQ(rank, 1);
  const int bad_devlist[1] = {5};
  EXPECT_EQ(ncclCommInitAll(&bad, 1, bad_devlist), ncclInvalidArgument);

  ncclComm_t split = reinterpret_cast<ncclComm_t>(&n);
  ASSERT_EQ(ncclCommSplit(comm_, NCCL_SPLIT_NOCOLOR, 0, &split, nullptr), ncclSuccess);
  EXPECT_EQ(split, nullptr);
  ASSERT_EQ(ncclCommSplit(comm_, 1, 3, &split, nullptr), ncclSuccess);
  ASSERT_EQ(ncclCommCount(split, &n), ncclSuccess);
  ASSERT_EQ(ncclCommUserRank(split, &rank), ncclSuccess);
  EXPECT_EQ(n, 8);
  EXPECT_EQ(rank, 3);

  int exclude[2] = {0, 6};
  ncclComm_t shrunk = nullptr;
  ASSERT_EQ(ncclCommShrink(comm_, exclude, 2, &shrunk, nullptr, NCCL_SHRINK_DEFAULT), ncclSuccess);
  ASSERT_EQ(ncclCommCount(shrunk, &n), ncclSuccess);
  ASSERT_EQ(ncclCommUserRank(shrunk, &rank), ncclSuccess);
  EXPECT_EQ(n, 6);
  EXPECT_EQ(rank, 2);
  int self[1] = {3};
  EXPECT_EQ(ncclCommShrink(comm_, self, 1, &bad, nullptr, 0), ncclInvalidArgument);

  EXPECT_EQ(ncclCommFinalize(split), ncclSuccess);
  EXPECT_EQ(ncclAllReduce(buf_.data(), buf_.data(), 4, ncclFloat32, ncclSum, split, stream()),
            ncclInvalidUsage);
  for (ncclComm_t c : {with_config, scalable, all[0], all[1], split, shrunk}) {
    EXPECT_EQ(ncclCommDestroy(c), ncclSuccess);
  }
  EXPECT_EQ(ncclCommAbort(nullptr), ncclSuccess);
  EXPECT_EQ(ncclCommDestroy(split), ncclInvalidArgument);  // already destroyed
  EXPECT_EQ(ncclCommCount(split, &n), ncclInvalidArgument);
}

TEST_F(FakeNccl, SingleOpLaunchesOneKernel) {
  const int before = c3fake_nccl_launch_count();
  std::vector<float> big(1 << 20);
  ASSERT_EQ(
      ncclAllReduce(big.data(), big.data(), big.size(), ncclFloat32, ncclSum, comm_, stream()),
      ncclSuccess);
  EXPECT_EQ(c3fake_nccl_launch_count(), before + 1);
  const auto ks = kernels();
  ASSERT_EQ(ks.size(), 1U);
  EXPECT_EQ(std::string(ks[0].name),
            std::string("ncclDevKernel_AllReduce_Sum_f32_RING_LL") + kArgs);
  EXPECT_EQ(ks[0].end - ks[0].start, 5000U + (4U << 20) / 50U);
  EXPECT_EQ(ks[0].gridX, 2);
  EXPECT_EQ(ks[0].gridY, 1);
  EXPECT_EQ(ks[0].blockX, 640);
  EXPECT_EQ(ks[0].streamId, c3fake_stream_id(stream_));

  ASSERT_EQ(ncclSend(buf_.data(), 16, ncclFloat32, 1, comm_, stream()), ncclSuccess);
  ASSERT_EQ(ncclAllGather(buf_.data(), buf_.data(), 2, ncclBfloat16, comm_, stream()), ncclSuccess);
  const auto more = kernels();
  ASSERT_EQ(more.size(), 2U);
  EXPECT_EQ(std::string(more[0].name), std::string("ncclDevKernel_SendRecv") + kArgs);
  EXPECT_EQ(more[0].end - more[0].start, 5000U + 64U / 50U);
  EXPECT_EQ(std::string(more[1].name), std::string("ncclDevKernel_AllGather_RING_LL") + kArgs);
  EXPECT_EQ(more[1].end - more[1].start, 5000U + (2U * 2U * 8U) / 50U);  // x nranks
}

TEST_F(FakeNccl, NullStreamRunsOnTheCommDevice) {
  ncclComm_t on1 = nullptr;
  const int devlist[1] = {1};
  ASSERT_EQ(ncclCommInitAll(&on1, 1, devlist), ncclSuccess);
  ASSERT_EQ(ncclReduce(buf_.data(), buf_.data(), 16, ncclInt32, ncclMax, 0, on1, nullptr),
            ncclSuccess);
  const auto ks = kernels();
  ASSERT_EQ(ks.size(), 1U);
  EXPECT_EQ(ks[0].deviceId, 1U);
  EXPECT_EQ(ks[0].streamId, 6U);
  EXPECT_EQ(std::string(ks[0].name),
            std::string("ncclDevKernel_Reduce_MinMax_i32_RING_LL") + kArgs);
  EXPECT_EQ(ncclCommDestroy(on1), ncclSuccess);
}

TEST_F(FakeNccl, GroupLaunchesOneKernelInsideGroupEnd) {
  ASSERT_EQ(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION), CUPTI_SUCCESS);
  const int before = c3fake_nccl_launch_count();
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);  // nested
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(ncclAllReduce(buf_.data(), buf_.data(), 16, ncclFloat32, ncclSum, comm_, stream()),
              ncclSuccess);
  }
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);  // inner end: nothing yet
  EXPECT_EQ(c3fake_nccl_launch_count(), before);
  ASSERT_EQ(cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 99),
            CUPTI_SUCCESS);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  uint64_t last = 0;
  ASSERT_EQ(cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last),
            CUPTI_SUCCESS);
  EXPECT_EQ(c3fake_nccl_launch_count(), before + 1);

  const auto records = CuptiClient::instance().flush_and_take();
  const auto ks =
      records_of<CUpti_ActivityKernel10>(records, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  ASSERT_EQ(ks.size(), 1U);
  EXPECT_EQ(std::string(ks[0].name),
            std::string("ncclDevKernel_AllReduce_Sum_f32_RING_LL") + kArgs);
  EXPECT_EQ(ks[0].end - ks[0].start, 3U * (5000U + 64U / 50U));
  const auto ext = records_of<CUpti_ActivityExternalCorrelation>(
      records, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  ASSERT_EQ(ext.size(), 1U);
  EXPECT_EQ(ext[0].externalId, 99U);
  EXPECT_EQ(ext[0].correlationId, ks[0].correlationId);
  EXPECT_EQ(api_record(records, ks[0].correlationId).kind, CUPTI_ACTIVITY_KIND_RUNTIME);
}

TEST_F(FakeNccl, GroupKernelNamesAndStreams) {
  void* other = c3fake_stream_create(0, 0, 1);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ncclSend(buf_.data(), 4, ncclFloat32, 1, comm_, stream());
  ncclRecv(buf_.data(), 4, ncclFloat32, 2, comm_, stream());
  ncclAllReduce(buf_.data(), buf_.data(), 4, ncclFloat32, ncclSum, comm_,
                static_cast<cudaStream_t>(other));
  ncclBroadcast(buf_.data(), buf_.data(), 4, ncclFloat32, 0, comm_,
                static_cast<cudaStream_t>(other));
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  const auto ks = kernels();
  ASSERT_EQ(ks.size(), 2U);
  EXPECT_EQ(std::string(ks[0].name), std::string("ncclDevKernel_SendRecv") + kArgs);
  EXPECT_EQ(ks[0].streamId, c3fake_stream_id(stream_));
  EXPECT_EQ(std::string(ks[1].name), std::string("ncclDevKernel_Generic") + kArgs);
  EXPECT_EQ(ks[1].streamId, c3fake_stream_id(other));
  EXPECT_EQ(ncclGroupEnd(), ncclInvalidUsage);  // no group open
}

TEST_F(FakeNccl, InvalidArgumentsLaunchNothing) {
  const int before = c3fake_nccl_launch_count();
  float* p = buf_.data();
  EXPECT_EQ(ncclAllReduce(p, p, 4, ncclFloat32, ncclSum, nullptr, stream()), ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(nullptr, p, 4, ncclFloat32, ncclSum, comm_, stream()),
            ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(p, p, 4, static_cast<ncclDataType_t>(13), ncclSum, comm_, stream()),
            ncclInvalidArgument);
  EXPECT_EQ(ncclAllReduce(p, p, 4, ncclFloat32, static_cast<ncclRedOp_t>(17), comm_, stream()),
            ncclInvalidArgument);
  EXPECT_EQ(ncclBroadcast(p, p, 4, ncclFloat32, 8, comm_, stream()), ncclInvalidArgument);
  EXPECT_EQ(ncclSend(p, 4, ncclFloat32, -1, comm_, stream()), ncclInvalidArgument);
  EXPECT_EQ(ncclRecv(nullptr, 4, ncclFloat32, 0, comm_, stream()), ncclInvalidArgument);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  EXPECT_EQ(ncclReduceScatter(p, nullptr, 4, ncclFloat32, ncclSum, comm_, stream()),
            ncclInvalidArgument);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);  // empty group: nothing to launch
  EXPECT_EQ(c3fake_nccl_launch_count(), before);
  EXPECT_NE(std::string(ncclGetLastError(comm_)), "");
  EXPECT_TRUE(kernels().empty());
  // Zero-count ops need no buffers.
  EXPECT_EQ(ncclAllReduce(nullptr, nullptr, 0, ncclFloat32, ncclSum, comm_, stream()), ncclSuccess);
}

TEST_F(FakeNccl, FailureInjection) {
  const int before = c3fake_nccl_launch_count();
  setenv("C3FAKE_NCCL_FAIL", "ncclAllReduce,ncclGroupEnd", 1);
  EXPECT_EQ(ncclAllReduce(buf_.data(), buf_.data(), 4, ncclFloat32, ncclSum, comm_, stream()),
            ncclInternalError);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclBcast(buf_.data(), 4, ncclFloat32, 0, comm_, stream()), ncclSuccess);
  EXPECT_EQ(ncclGroupEnd(), ncclInternalError);
  unsetenv("C3FAKE_NCCL_FAIL");
  EXPECT_EQ(c3fake_nccl_launch_count(), before);
  EXPECT_TRUE(kernels().empty());
  // The failed group was closed and discarded.
  ASSERT_EQ(ncclBcast(buf_.data(), 4, ncclFloat32, 0, comm_, stream()), ncclSuccess);
  EXPECT_EQ(c3fake_nccl_launch_count(), before + 1);
}

TEST_F(FakeNccl, PreMulSumOpsAndMemory) {
  ncclRedOp_t op{};
  float scalar = 0.5f;
  ASSERT_EQ(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm_),
            ncclSuccess);
  EXPECT_GE(static_cast<int>(op), static_cast<int>(ncclNumOps));
  ASSERT_EQ(ncclAllReduce(buf_.data(), buf_.data(), 4, ncclFloat32, op, comm_, stream()),
            ncclSuccess);
  const auto ks = kernels();
  ASSERT_EQ(ks.size(), 1U);
  EXPECT_EQ(std::string(ks[0].name),
            std::string("ncclDevKernel_AllReduce_PreMulSum_f32_RING_LL") + kArgs);
  EXPECT_EQ(ncclRedOpDestroy(op, comm_), ncclSuccess);
  EXPECT_EQ(ncclRedOpDestroy(op, comm_), ncclInvalidArgument);
  EXPECT_EQ(ncclRedOpDestroy(ncclSum, comm_), ncclInvalidArgument);

  void* mem = nullptr;
  ASSERT_EQ(ncclMemAlloc(&mem, 1 << 20), ncclSuccess);
  EXPECT_NE(mem, nullptr);
  EXPECT_EQ(ncclMemFree(mem), ncclSuccess);
}

}  // namespace
}  // namespace c3::sim::test
