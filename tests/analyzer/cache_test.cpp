// Trace snapshots (cache.h): a round trip gives the same trace; another key, a truncated or a
// damaged file gives nothing (and never a trace with out-of-range indices).
#include "c3/analyzer/open/cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <utility>
#include <vector>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/metrics/metrics.h"

namespace fs = std::filesystem;
using namespace c3::analyzer;

namespace {

Trace sample() {
  Trace t;
  for (int p = 0; p < 2; ++p) {
    Process pr;
    pr.source = "rank" + std::to_string(p) + ".sqlite";
    pr.db_id = 1;
    pr.pid = 100 + p;
    pr.host = "node" + std::to_string(p);
    pr.rank = p;
    pr.world_size = 2;
    pr.anchor_realtime_ns = 1000 + p;
    t.processes.push_back(pr);
    Device d;
    d.process = static_cast<int16_t>(p);
    d.name = "GPU";
    d.sm_count = 132;
    t.devices.push_back(d);
  }
  t.names = {"gemm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "Memcpy H2D"};
  t.shapes.push_back({264, 384, 168, 4096});
  for (int p = 0; p < 2; ++p) {
    for (int i = 0; i < 50; ++i) {
      const size_t k = t.activities.push(int64_t{i} * 100, int64_t{i} * 100 + 60, 0, 7, 0,
                                         static_cast<int16_t>(p), Kind::kernel, 0);
      t.activities.shape[k] = 0;
      const size_t c = t.activities.push(int64_t{i} * 100 + 30, int64_t{i} * 100 + 90, 1, 13, 0,
                                         static_cast<int16_t>(p), Kind::kernel, 0);
      t.activities.shape[c] = 0;
      Collective col;
      col.process = static_cast<int16_t>(p);
      col.comm_id = "0xabc";
      col.seq = i;
      col.op = "AllReduce";
      col.bytes = 1 << 20;
      col.nranks = 2;
      col.rank = p;
      col.gpu_start = int64_t{i} * 100 + 30;
      col.gpu_end = int64_t{i} * 100 + 90;
      t.activities.collective[c] = static_cast<int32_t>(t.collectives.size());
      t.collectives.push_back(col);
    }
    t.activities.push(5000, 5100, 2, 20, 0, static_cast<int16_t>(p), Kind::memcpy, 1 << 20);
    t.ranges.push_back({static_cast<int16_t>(p), 42, "default", "step", 0, 5000, 0});
  }
  BenchResult b;
  b.backend = "sim";
  b.simulated = true;
  b.label = "gemm + allreduce:64M";
  b.ideal_speedup = 1.5;
  t.bench.push_back(b);
  t.launch_delays.push_back({1, 0, 1234});
  t.skipped = 1;
  t.first_skipped = "kernel row 3 ends before it starts";
  t.activities.sort();
  classify(t, Rules::defaults());
  return t;
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("c3cache-" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST(Cache, RoundTripGivesTheSameTrace) {
  TempDir dir;
  const Trace t = sample();
  const std::string path = cache_path(dir.path.string(), "key");
  ASSERT_TRUE(save_cache(t, "key", path));
  const std::optional<Trace> back = load_cache(path, "key");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->activities.start, t.activities.start);
  EXPECT_EQ(back->activities.collective, t.activities.collective);
  EXPECT_EQ(back->activities.cls, t.activities.cls);
  EXPECT_EQ(back->names, t.names);
  EXPECT_FALSE(back->activities.has_calls());  // none in the sample
  ASSERT_EQ(back->collectives.size(), t.collectives.size());
  EXPECT_EQ(back->collectives[7].seq, t.collectives[7].seq);
  EXPECT_EQ(back->collectives[7].comm_id, "0xabc");
  EXPECT_EQ(back->processes[1].host, "node1");
  EXPECT_EQ(back->processes[1].rank, 1);
  EXPECT_EQ(back->ranges[1].thread, 42);
  EXPECT_EQ(back->bench[0].ideal_speedup, 1.5);
  EXPECT_FALSE(back->bench[0].realized_speedup.has_value());
  EXPECT_EQ(back->launch_delays[0].delay_ns, 1234);
  EXPECT_EQ(back->first_skipped, t.first_skipped);
  // The metrics agree exactly.
  EXPECT_EQ(overall(*back).overlap, overall(t).overlap);
  EXPECT_EQ(overall(*back).exposed_comm, overall(t).exposed_comm);
}

TEST(Cache, OtherKeysAndDamageGiveNothing) {
  TempDir dir;
  const Trace t = sample();
  const std::string path = cache_path(dir.path.string(), "key");
  ASSERT_TRUE(save_cache(t, "key", path));
  EXPECT_FALSE(load_cache(path, "another key").has_value());
  EXPECT_FALSE(load_cache((dir.path / "missing.c3cache").string(), "key").has_value());
  const auto size = fs::file_size(path);
  // Truncated anywhere: nothing.
  for (const auto cut : {size_t{4}, size_t{40}, size / 2, size - 9}) {
    fs::copy_file(path, dir.path / "cut.c3cache", fs::copy_options::overwrite_existing);
    fs::resize_file(dir.path / "cut.c3cache", cut);
    EXPECT_FALSE(load_cache((dir.path / "cut.c3cache").string(), "key").has_value()) << cut;
  }
  // Flipped bytes in the activity columns: never a trace with indices out of range.
  for (size_t at = size / 4; at < size - 16; at += size / 13) {
    fs::copy_file(path, dir.path / "bad.c3cache", fs::copy_options::overwrite_existing);
    std::fstream f(dir.path / "bad.c3cache", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    const char junk[8] = {'\x7f', '\x7f', '\x7f', '\x7f', '\x7f', '\x7f', '\x7f', '\x7f'};
    f.write(junk, sizeof junk);
    f.close();
    const auto back = load_cache((dir.path / "bad.c3cache").string(), "key");
    if (back) {
      for (size_t i = 0; i < back->activities.size(); ++i) {
        ASSERT_LT(back->activities.process[i], static_cast<int16_t>(back->processes.size()));
        ASSERT_LT(back->activities.collective[i], static_cast<int32_t>(back->collectives.size()));
      }
    }
  }
}

TEST(Cache, KeyFollowsTheFilesAndOldSnapshotsGo) {
  TempDir dir;
  const fs::path a = dir.path / "a.sqlite";
  std::ofstream(a) << "one";
  const std::string k1 = cache_key({a.string()}, "default");
  std::ofstream(a, std::ios::app) << "two";
  EXPECT_NE(cache_key({a.string()}, "default"), k1);  // size changed
  EXPECT_NE(cache_key({a.string()}, "custom"), cache_key({a.string()}, "default"));
  EXPECT_THROW(cache_key({(dir.path / "nope").string()}, "default"), std::invalid_argument);
  const Trace t = sample();
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(save_cache(t, "k" + std::to_string(i),
                           cache_path((dir.path / "c").string(), "k" + std::to_string(i)), 4));
  }
  int left = 0;
  for (const auto& e : fs::directory_iterator(dir.path / "c"))
    left += e.path().extension() == ".c3cache" ? 1 : 0;
  EXPECT_EQ(left, 4);
}

// Format 6 keeps the launch calls (issue 25): a snapshot of a trace with them has them back.
TEST(Cache, LaunchCallsRoundTrip) {
  TempDir dir;
  Trace t = sample();
  t.activities.set_call(5, t.activities.start[5] - 9, t.activities.start[5] - 4, 0,
                        fold_thread(int64_t{0x123456789}));
  t.host_syncs.push_back({0, 10, 20, fold_thread(77)});
  const std::string path = cache_path(dir.path.string(), "calls");
  ASSERT_TRUE(save_cache(t, "calls", path));
  const std::optional<Trace> back = load_cache(path, "calls");
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->activities.call_start, t.activities.call_start);
  EXPECT_EQ(back->activities.call_end, t.activities.call_end);
  EXPECT_EQ(back->activities.call_name, t.activities.call_name);
  EXPECT_EQ(back->activities.call_thread, t.activities.call_thread);  // format 8
  EXPECT_EQ(back->activities.call_thread[5], fold_thread(int64_t{0x123456789}));
  ASSERT_EQ(back->host_syncs.size(), 1u);
  EXPECT_EQ(back->host_syncs[0].thread, fold_thread(77));
  EXPECT_EQ(back->activities.call_end[4], kNoCall);
}

// Issue 12: a snapshot with a negative name index was accepted (only upper bounds were checked),
// and the metrics then indexed the name table with it. Every index is checked both ways.
TEST(Cache, NegativeOrPastTheEndIndicesAreRefused) {
  TempDir dir;
  const std::vector<std::pair<const char*, std::function<void(Trace&)>>> tampers = {
      {"negative name", [](Trace& t) { t.activities.name[3] = -5; }},
      {"name past the table", [](Trace& t) { t.activities.name[3] = 99; }},
      {"negative process", [](Trace& t) { t.activities.process[3] = -1; }},
      {"collective below -1", [](Trace& t) { t.activities.collective[3] = -7; }},
      {"collective past the table", [](Trace& t) { t.activities.collective[3] = 100000; }},
      {"shape below -1", [](Trace& t) { t.activities.shape[3] = -9; }},
      {"end before start", [](Trace& t) { t.activities.end[3] = t.activities.start[3] - 1; }},
      {"range of no process", [](Trace& t) { t.ranges[0].process = 7; }},
      {"device of no process", [](Trace& t) { t.devices[0].process = -2; }},
      // Format 6: the launch calls' columns.
      {"call ends before it starts", [](Trace& t) { t.activities.set_call(3, 50, 40, 0); }},
      {"call name past the table", [](Trace& t) { t.activities.set_call(3, 40, 50, 99); }},
      {"call column short",
       [](Trace& t) {
         t.activities.set_call(3, 40, 50, 0);
         t.activities.call_name.pop_back();
       }},
  };
  for (const auto& [what, tamper] : tampers) {
    Trace t = sample();
    tamper(t);
    const std::string path = cache_path(dir.path.string(), what);
    ASSERT_TRUE(save_cache(t, what, path)) << what;
    EXPECT_FALSE(load_cache(path, what).has_value()) << what;
  }
  // The untampered sample still loads (the checks refuse only what is wrong).
  const std::string path = cache_path(dir.path.string(), "clean");
  ASSERT_TRUE(save_cache(sample(), "clean", path));
  EXPECT_TRUE(load_cache(path, "clean").has_value());
}

// Format 3 added the NVTX ranges' kind and colour (issue 13). A format-2 snapshot still reads,
// its ranges as push/pop without a colour: the fuzzers' regressions of format 2 keep guarding
// their bugs. (A user's cache of format 2 is rebuilt: its key names its format.)
TEST(Cache, FormatTwoStillReads) {
  const std::string dir = std::string(C3_SOURCE_DIR) + "/fuzz/corpus/snapshot/";
  const std::optional<Trace> old = load_cache(dir + "kineto_nccl-format2.c3cache", "fuzz");
  const std::optional<Trace> now = load_cache(dir + "kineto_nccl.c3cache", "fuzz");
  ASSERT_TRUE(old.has_value());
  ASSERT_TRUE(now.has_value());
  EXPECT_EQ(old->activities.size(), now->activities.size());
  ASSERT_EQ(old->ranges.size(), now->ranges.size());
  ASSERT_FALSE(old->ranges.empty());
  for (const Range& g : old->ranges) {
    EXPECT_FALSE(g.start_end);
    EXPECT_EQ(g.color, -1);
  }
  // Not under another format's key.
  EXPECT_FALSE(load_cache(dir + "kineto_nccl-format2.c3cache", "format 2; fuzz").has_value());
}
