// c3bench descriptors: sizes, parsers, chunking, labels and the nccl-tests bus bandwidth factors.
#include "c3/bench/descriptors.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace c3::bench;

TEST(Descriptors, Sizes) {
  EXPECT_EQ(parse_size("4096"), 4096);
  EXPECT_EQ(parse_size("64M"), int64_t{64} << 20);
  EXPECT_EQ(parse_size("1G"), int64_t{1} << 30);
  EXPECT_EQ(parse_size("512k"), int64_t{512} << 10);
  EXPECT_EQ(parse_size("2GB"), int64_t{2} << 30);
  for (const char* bad : {"", "M", "-1M", "0", "1.5G", "12Q", "1GG", "99999999999T"}) {
    EXPECT_FALSE(parse_size(bad)) << bad;
  }
  EXPECT_EQ(format_size(int64_t{64} << 20), "64M");
  EXPECT_EQ(format_size(int64_t{1} << 30), "1G");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_size(3 * 1024 * 1024 / 2), "1536K");
  EXPECT_EQ(parse_duration_ns("500us"), 500000);
  EXPECT_EQ(parse_duration_ns("2ms"), 2000000);
  EXPECT_EQ(parse_duration_ns("1s"), 1000000000);
  EXPECT_EQ(parse_duration_ns("100ns"), 100);
  EXPECT_FALSE(parse_duration_ns("5"));
  EXPECT_FALSE(parse_duration_ns("xus"));
}

TEST(Descriptors, SizeSweepIsNcclTestsLike) {
  EXPECT_EQ(size_sweep(64 << 20, int64_t{1} << 30, 2),
            (std::vector<int64_t>{64 << 20, 128 << 20, 256 << 20, 512 << 20, int64_t{1} << 30}));
  EXPECT_EQ(size_sweep(64 << 20, int64_t{1} << 30, 4),
            (std::vector<int64_t>{64 << 20, 256 << 20, int64_t{1} << 30}));
  EXPECT_EQ(size_sweep(8, 8, 2), (std::vector<int64_t>{8}));
  auto v = parse_comm("allgather:1M..512M", 2);
  ASSERT_EQ(v.size(), 10u);
  EXPECT_EQ(v.front().label(), "allgather:1M");
  EXPECT_EQ(v.back().label(), "allgather:512M");
}

TEST(Descriptors, ParseCompute) {
  // The Llama tensor-parallel shapes.
  ComputeOp g = parse_compute("gemm:16384x8192x28672:bf16");
  EXPECT_EQ(g.kind, ComputeKind::gemm);
  EXPECT_EQ(g.m, 16384);
  EXPECT_EQ(g.n, 8192);
  EXPECT_EQ(g.k, 28672);
  EXPECT_EQ(g.dtype, DType::bf16);
  EXPECT_DOUBLE_EQ(g.flops(), 2.0 * 16384 * 8192 * 28672);
  EXPECT_EQ(parse_compute("gemm:16384x8192x8192:fp16").label(), "gemm:16384x8192x8192:fp16");
  EXPECT_EQ(parse_compute("gemm:128x128x128").dtype, DType::bf16);
  EXPECT_EQ(parse_compute("gemm:128x128x128:fp32").dtype, DType::fp32);
  EXPECT_EQ(parse_compute("triad:1G").bytes, int64_t{1} << 30);
  EXPECT_EQ(parse_compute("fma:500us").target_ns, 500000);
  EXPECT_EQ(parse_compute("fma:500us").label(), "fma:500us");
  for (const char* bad : {"gemm", "gemm:1x2", "gemm:0x1x1", "gemm:1x1x1:int8", "triad", "triad:x",
                          "fma:5", "conv:1x1x1"}) {
    try {
      parse_compute(bad);
      ADD_FAILURE() << bad;
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(std::string("'") + bad + "'"), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos);
    }
  }
}

TEST(Descriptors, ParseComm) {
  auto v = parse_comm("allreduce:64M..1G", 2);
  ASSERT_EQ(v.size(), 5u);
  EXPECT_EQ(v[0].kind, CommKind::allreduce);
  EXPECT_EQ(v[0].dtype, DType::fp32);
  EXPECT_EQ(parse_comm("sm_copy:1G:peer", 2)[0].label(), "sm_copy:1G:peer");
  EXPECT_EQ(parse_comm("reducescatter:8M:bf16", 2)[0].dtype, DType::bf16);
  for (const char* bad : {"allreduce", "bcast:1M", "allreduce:1M..x", "allreduce:1G..1M",
                          "allreduce:1M:peer", "dma_d2d:1M:int3"}) {
    EXPECT_THROW(parse_comm(bad, 2), std::invalid_argument) << bad;
  }
  EXPECT_TRUE(is_collective(CommKind::alltoall));
  EXPECT_FALSE(is_collective(CommKind::dma_p2p));
}

// nccl-tests doc/PERFORMANCE.md: AllReduce 2(n-1)/n; AllGather, ReduceScatter, AlltoAll (n-1)/n;
// Send/Recv 1.
TEST(Descriptors, BusBandwidthFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor(CommKind::allreduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CommKind::allreduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CommKind::allgather, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(CommKind::reducescatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(CommKind::alltoall, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(CommKind::sendrecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CommKind::dma_p2p, 2), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(CommKind::allreduce, 1), 1.0);
}

TEST(Descriptors, CountsPerRank) {
  CommOp ag = parse_comm("allgather:64M", 2)[0];
  EXPECT_EQ(ag.count(8), (int64_t{64} << 20) / 4 / 8);  // S is the total of n per-rank buffers
  CommOp ar = parse_comm("allreduce:64M:bf16", 2)[0];
  EXPECT_EQ(ar.count(8), (int64_t{64} << 20) / 2);
}

TEST(Descriptors, ChunksCoverTheWholeOperation) {
  ComputeOp g = parse_compute("gemm:8192x4096x4096");
  for (int k : {1, 2, 3, 4, 7, 8}) {
    int64_t m = 0;
    for (int i = 0; i < k; ++i) m += g.chunk(i, k).m;
    EXPECT_EQ(m, 8192) << k;
    EXPECT_EQ(g.chunk(0, k).n, 4096);
  }
  CommOp c = parse_comm("allreduce:64M", 2)[0];
  for (int k : {1, 2, 4, 8, 3}) {
    int64_t b = 0;
    for (int i = 0; i < k; ++i) {
      b += c.chunk(i, k).bytes;
      EXPECT_EQ(c.chunk(i, k).bytes % 4096, 0);
    }
    EXPECT_EQ(b, int64_t{64} << 20) << k;
  }
}

TEST(Descriptors, Labels) {
  Case c;
  c.compute = parse_compute("gemm:8192x8192x8192:bf16");
  c.comm = parse_comm("allreduce:64M", 2)[0];
  EXPECT_EQ(c.label(), "gemm:8192x8192x8192:bf16 + allreduce:64M");
  c.knobs.priority = Knobs::Priority::comm_high;
  c.knobs.nchannels = 8;
  c.knobs.pipelined = true;
  c.knobs.chunks = 4;
  EXPECT_EQ(c.label(), "gemm:8192x8192x8192:bf16 + allreduce:64M [prio=comm_high nch=8 chunks=4]");
  c.compute.reset();
  c.knobs = {};
  EXPECT_EQ(c.label(), "- + allreduce:64M");
}
