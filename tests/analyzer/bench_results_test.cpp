// The analyzer's typed c3bench results (bench_results.h): the configuration loaded from
// bench_result's typed columns, the same from a schema v2 trace (labels only, migrated on open),
// impossible values, and the snapshot cache keeping it.
#include "c3/analyzer/open/bench_results.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "c3/analyzer/open/cache.h"
#include "c3/analyzer/open/load.h"
#include "c3/tracedb/writer.h"
#include "tracedb/old_schema.h"

namespace fs = std::filesystem;
using namespace c3::analyzer;
namespace tracedb = c3::tracedb;

namespace {

class BenchResults : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("c3scope-bench-results-" + std::to_string(getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string file(const std::string& n) { return (dir / n).string(); }

  // A c3bench --db file holding `rows` (run_id, status and times filled in here).
  std::string write(const std::string& name, std::vector<tracedb::BenchResultRow> rows) {
    std::string path = file(name);
    auto w = tracedb::Writer::create(path);
    tracedb::BenchRunRow run;
    run.started_at = "2026-01-01T00:00:00Z";
    run.host = "node";
    run.pid = 4242;
    run.command_line = "c3bench --backend sim";
    run.backend = "sim";
    run.simulated = 1;
    run.gpus = 2;
    run.options_json = "{}";
    const int64_t id = w->insert(run);
    int64_t case_id = 0;
    for (tracedb::BenchResultRow& row : rows) {
      row.run_id = id;
      row.case_id = ++case_id;
      row.status = "ok";
      row.t_comp_ns = 1e6;
      row.t_comm_ns = 4e5;
      row.t_c3_ns = 1.2e6;
      row.ideal_speedup = 1.4;
      row.realized_speedup = 1.17;
      row.iterations = 20;
      w->insert(row);
    }
    w->close();
    return path;
  }
};

// Rows as c3bench writes them: the label and the typed columns of one configuration.
std::vector<tracedb::BenchResultRow> c3bench_rows() {
  std::vector<tracedb::BenchResultRow> rows(3);
  auto& g = rows[0];
  g.label =
      "gemm:8192x4096x1024:fp16 + allreduce:64M [prio=comm_high order=comm_first nch=4 "
      "ctas=2:8 smpart=50% chunks=4]";
  g.compute = "gemm:8192x4096x1024:fp16";
  g.compute_kind = "gemm";
  g.gemm_m = 8192;
  g.gemm_n = 4096;
  g.gemm_k = 1024;
  g.compute_dtype = "fp16";
  g.comm = "allreduce:64M";
  g.comm_kind = "allreduce";
  g.comm_bytes = int64_t{64} << 20;
  g.comm_dtype = "fp32";
  g.comm_peer = 0;
  g.knobs = "prio=comm_high order=comm_first nch=4 ctas=2:8 smpart=50% chunks=4";
  g.priority = "comm_high";
  g.launch_order = "comm_first";
  g.nchannels = 4;
  g.min_ctas = 2;
  g.max_ctas = 8;
  g.sm_partition_pct = 50;
  g.pipelined = 1;
  g.chunks = 4;
  auto& t = rows[1];
  t.label = "triad:1G + sm_copy:1M:peer";
  t.compute = "triad:1G";
  t.compute_kind = "triad";
  t.compute_bytes = int64_t{1} << 30;
  t.compute_dtype = "fp32";
  t.comm = "sm_copy:1M:peer";
  t.comm_kind = "sm_copy";
  t.comm_bytes = int64_t{1} << 20;
  t.comm_dtype = "fp32";
  t.comm_peer = 1;
  auto& f = rows[2];
  f.label = "fma:500us + -";
  f.compute = "fma:500us";
  f.compute_kind = "fma";
  f.compute_target_ns = 500000;
  f.compute_dtype = "fp32";
  for (auto& r : rows) {
    r.priority = r.priority.value_or("equal");
    r.launch_order = r.launch_order.value_or("compute_first");
    for (auto* v : {&r.nchannels, &r.min_ctas, &r.max_ctas, &r.sm_partition_pct, &r.pipelined})
      *v = v->value_or(0);
    r.chunks = r.chunks.value_or(1);
  }
  return rows;
}

void expect_configs(const std::vector<BenchResult>& bench, bool with_comm_dtype) {
  ASSERT_EQ(bench.size(), 3u);
  const BenchConfig& g = bench[0].config;
  EXPECT_TRUE(g.known);
  EXPECT_EQ(g.compute, "gemm:8192x4096x1024:fp16");
  EXPECT_EQ(g.compute_kind, "gemm");
  EXPECT_EQ(g.gemm_m, 8192);
  EXPECT_EQ(g.gemm_n, 4096);
  EXPECT_EQ(g.gemm_k, 1024);
  EXPECT_EQ(g.compute_dtype, "fp16");
  EXPECT_EQ(g.comm, "allreduce:64M");
  EXPECT_EQ(g.comm_kind, "allreduce");
  EXPECT_EQ(g.comm_bytes, int64_t{64} << 20);
  EXPECT_EQ(g.comm_dtype, with_comm_dtype ? "fp32" : "");
  EXPECT_FALSE(g.comm_peer);
  EXPECT_EQ(g.priority, BenchPriority::comm_high);
  EXPECT_EQ(g.order, BenchOrder::comm_first);
  EXPECT_EQ(g.nchannels, 4);
  EXPECT_EQ(g.min_ctas, 2);
  EXPECT_EQ(g.max_ctas, 8);
  EXPECT_EQ(g.sm_partition_pct, 50);
  EXPECT_TRUE(g.pipelined);
  EXPECT_EQ(g.chunks, 4);
  const BenchConfig& t = bench[1].config;
  EXPECT_TRUE(t.known);
  EXPECT_EQ(t.compute_kind, "triad");
  EXPECT_EQ(t.compute_bytes, int64_t{1} << 30);
  EXPECT_EQ(t.comm_kind, "sm_copy");
  EXPECT_TRUE(t.comm_peer);
  EXPECT_EQ(t.priority, BenchPriority::equal);
  EXPECT_FALSE(t.pipelined);
  EXPECT_EQ(t.chunks, 1);
  const BenchConfig& f = bench[2].config;
  EXPECT_TRUE(f.known);
  EXPECT_EQ(f.compute_kind, "fma");
  EXPECT_EQ(f.compute_target_ns, 500000);
  EXPECT_EQ(f.comm, "");
  EXPECT_EQ(f.comm_kind, "");
  EXPECT_EQ(f.comm_bytes, 0);
}

}  // namespace

TEST_F(BenchResults, LoadsTheTypedConfiguration) {
  const Trace t = load({write("v3.sqlite", c3bench_rows())});
  expect_configs(t.bench, true);
  EXPECT_EQ(t.bench[0].label, c3bench_rows()[0].label);
  EXPECT_EQ(t.bench[0].realized_speedup, 1.17);
}

TEST_F(BenchResults, AnOlderTraceGetsItFromItsLabels) {
  std::vector<tracedb::BenchResultRow> rows = c3bench_rows();
  tracedb::BenchResultRow unreadable;
  unreadable.label = "what is this";
  rows.push_back(unreadable);
  const std::string path = write("v2.sqlite", rows);
  c3::test::make_schema_v2(path);
  const Trace t = load({path});
  ASSERT_EQ(t.bench.size(), 4u);
  std::vector<BenchResult> first(t.bench.begin(), t.bench.begin() + 3);
  expect_configs(first, false);
  EXPECT_FALSE(t.bench[3].config.known);
  EXPECT_EQ(t.bench[3].label, "what is this");
  EXPECT_EQ(t.bench[3].realized_speedup, 1.17);  // its metrics are still there
}

TEST_F(BenchResults, ImpossibleValuesAreNotAConfiguration) {
  std::vector<tracedb::BenchResultRow> rows = c3bench_rows();
  rows[0].nchannels = -3;
  rows[1].priority = "highest";
  rows[2].chunks = int64_t{1} << 40;
  const Trace t = load({write("bad.sqlite", rows)});
  ASSERT_EQ(t.bench.size(), 3u);
  for (const BenchResult& b : t.bench) EXPECT_FALSE(b.config.known) << b.label;
}

TEST_F(BenchResults, TheCacheKeepsIt) {
  const Trace t = load({write("v3.sqlite", c3bench_rows())});
  const std::string path = file("snapshot");
  ASSERT_TRUE(save_cache(t, "key", path));
  const auto back = load_cache(path, "key");
  ASSERT_TRUE(back.has_value());
  expect_configs(back->bench, true);
}
