// bench_result's typed configuration (schema v3): the label parser the migration uses (on labels
// c3bench really writes, and on garbage), and the migration of a v2 file on open.
#include "c3/tracedb/bench_label.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "c3/tracedb/reader.h"
#include "c3/tracedb/writer.h"
#include "tracedb/old_schema.h"

namespace fs = std::filesystem;
using namespace c3::tracedb;

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

BenchResultRow parsed(const std::string& label, std::vector<std::string>* unknown = nullptr) {
  BenchResultRow row;
  row.label = label;
  EXPECT_TRUE(config_from_label(row, unknown)) << label;
  return row;
}

// The knobs of a row as c3bench's Knobs::label() writes them.
std::string knobs_label(const BenchResultRow& r) {
  std::string s;
  auto add = [&](const std::string& kv) { s += (s.empty() ? "" : " ") + kv; };
  if (r.priority != "equal") add("prio=" + r.priority.value_or("?"));
  if (r.launch_order != "compute_first") add("order=" + r.launch_order.value_or("?"));
  if (r.nchannels.value_or(0) > 0) add("nch=" + std::to_string(*r.nchannels));
  if (r.min_ctas.value_or(0) > 0 || r.max_ctas.value_or(0) > 0)
    add("ctas=" + std::to_string(*r.min_ctas) + ":" + std::to_string(*r.max_ctas));
  if (r.sm_partition_pct.value_or(0) > 0)
    add("smpart=" + std::to_string(*r.sm_partition_pct) + "%");
  if (r.pipelined.value_or(0) != 0) add("chunks=" + std::to_string(r.chunks.value_or(0)));
  return s;
}

struct LabelCase {
  std::string label, compute, compute_kind, comm_kind;
  int64_t bytes;
  std::string knobs;
  int64_t chunks;
  bool peer;
};

}  // namespace

// Labels from `c3bench --backend sim` (the default experiment), a knob sweep and other op mixes.
TEST(BenchLabel, ReadsRealLabels) {
  const std::string gemm = "gemm:8192x8192x8192:bf16";
  const std::vector<LabelCase> cases = {
      {gemm + " + allreduce:64M", gemm, "gemm", "allreduce", 64 * kMiB, "", 1, false},
      {gemm + " + allreduce:512M [chunks=8]", gemm, "gemm", "allreduce", 512 * kMiB, "chunks=8", 8,
       false},
      {gemm + " + allreduce:128M [chunks=1]", gemm, "gemm", "allreduce", 128 * kMiB, "chunks=1", 1,
       false},
      {gemm + " + allreduce:64M [prio=comm_low order=comm_first nch=4 ctas=4:16 smpart=50%]", gemm,
       "gemm", "allreduce", 64 * kMiB, "prio=comm_low order=comm_first nch=4 ctas=4:16 smpart=50%",
       1, false},
      {gemm + " + allreduce:64M [ctas=4:16]", gemm, "gemm", "allreduce", 64 * kMiB, "ctas=4:16", 1,
       false},
      {"- + allgather:1M", "", "", "allgather", kMiB, "", 1, false},
      {"fma:500us + -", "fma:500us", "fma", "", 0, "", 1, false},
      {"triad:1G + sm_copy:64M:peer", "triad:1G", "triad", "sm_copy", 64 * kMiB, "", 1, true},
      {gemm + " + reducescatter:8M [chunks=2]", gemm, "gemm", "reducescatter", 8 * kMiB, "chunks=2",
       2, false},
      {"fma:2000us + dma_d2d:4096", "fma:2000us", "fma", "dma_d2d", 4096, "", 1, false},
  };
  for (const LabelCase& c : cases) {
    std::vector<std::string> unknown;
    const BenchResultRow r = parsed(c.label, &unknown);
    EXPECT_EQ(r.compute.value_or(""), c.compute) << c.label;
    EXPECT_EQ(r.compute_kind.value_or(""), c.compute_kind) << c.label;
    EXPECT_EQ(r.comm_kind.value_or(""), c.comm_kind) << c.label;
    EXPECT_EQ(r.comm_bytes.value_or(0), c.bytes) << c.label;
    EXPECT_EQ(knobs_label(r), c.knobs) << c.label;
    EXPECT_EQ(r.chunks, c.chunks) << c.label;
    if (!c.comm_kind.empty()) {
      EXPECT_EQ(r.comm_peer, c.peer ? 1 : 0) << c.label;
    }
    EXPECT_FALSE(r.comm_dtype) << "labels do not carry it";
    EXPECT_TRUE(unknown.empty()) << c.label << ": " << unknown.front();
  }
  // The typed operation sizes.
  const BenchResultRow g = parsed(gemm + " + -");
  EXPECT_EQ(g.gemm_m, 8192);
  EXPECT_EQ(g.gemm_n, 8192);
  EXPECT_EQ(g.gemm_k, 8192);
  EXPECT_EQ(g.compute_dtype, "bf16");
  EXPECT_FALSE(g.comm_kind);
  EXPECT_FALSE(g.comm_peer);
  EXPECT_EQ(parsed("triad:1G + -").compute_bytes, int64_t{1} << 30);
  EXPECT_EQ(parsed("triad:1G + -").compute_dtype, "fp32");
  EXPECT_EQ(parsed("fma:500us + -").compute_target_ns, 500000);
  EXPECT_EQ(parsed("gemm:1x2x3:fp16 + -").compute_dtype, "fp16");
}

TEST(BenchLabel, SurvivesBadLabels) {
  const std::vector<std::string> bad = {
      "",
      "garbage",
      "[",
      "]",
      "[]",
      " + ",
      "a + b [",
      "gemm + allreduce:999999999999999999999G",
      "gemm + allreduce:G",
      "gemm + allreduce:-5M",
      "x + y [chunks=abc nch=-1 smpart=200% foo ctas=: prio= =]",
      "x + y [smpart=% ctas=4: nch=99999999999999]",
      "fma:99999999999999999s + -",
      std::string(10000, '['),
      std::string(5000, '+') + " + " + std::string(5000, ':'),
      std::string("a\0b + c", 7),
  };
  for (const auto& label : bad) {
    BenchResultRow r;
    r.label = label;
    config_from_label(r);
    EXPECT_EQ(r.label, label);
    EXPECT_GE(r.comm_bytes.value_or(0), 0) << label;
    EXPECT_GE(r.chunks.value_or(1), 1) << label;
    EXPECT_GE(r.nchannels.value_or(0), 0) << label;
    EXPECT_GE(r.compute_target_ns.value_or(0), 0) << label;
  }
  // Unknown pieces are kept aside; what is readable is still read.
  std::vector<std::string> unknown;
  const BenchResultRow r = parsed(
      "gemm:1x2x3 + allreduce:64M:bf16 [nch=8 future=1 chunks=x smpart=25% prio=max]", &unknown);
  EXPECT_EQ(r.comm_bytes, 64 * kMiB);
  EXPECT_EQ(r.nchannels, 8);
  EXPECT_EQ(r.sm_partition_pct, 25);
  EXPECT_EQ(r.pipelined, 0);
  EXPECT_EQ(r.priority, "equal");
  EXPECT_EQ(unknown, (std::vector<std::string>{"future=1", "chunks=x", "prio=max", "bf16"}));
  // No "<compute> + <comm>": nothing is filled.
  for (const char* label : {"no plus here", "", "[chunks=2"}) {
    BenchResultRow n;
    n.label = label;
    EXPECT_FALSE(config_from_label(n)) << label;
    EXPECT_FALSE(n.priority || n.chunks || n.compute_kind || n.comm_kind) << label;
  }
  BenchResultRow huge;
  huge.label = "gemm + allreduce:999999999999999999999G";
  ASSERT_TRUE(config_from_label(huge));
  EXPECT_FALSE(huge.comm_bytes);
}

// What the v2 columns held is kept; only what is missing is read from the label.
TEST(BenchLabel, KeepsWhatTheRowHas) {
  BenchResultRow r;
  r.label = "gemm:8x8x8:bf16 + allreduce:64M";
  r.compute = "gemm:8x8x8:bf16";
  r.comm = "allreduce:64M";
  r.comm_bytes = 12345;
  ASSERT_TRUE(config_from_label(r));
  EXPECT_EQ(r.comm_bytes, 12345);
  EXPECT_EQ(r.comm_kind, "allreduce");
}

namespace {

class MigrationOnOpen : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("c3scope-migrate-" + std::to_string(getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string file(const std::string& n) { return (dir / n).string(); }

  // A trace with one c3bench run and a result per label, written the way the v2 writer did:
  // label, compute, comm, comm_bytes and knobs, no typed columns.
  std::string v2_trace(const std::vector<std::string>& labels) {
    std::string path = file("v2.sqlite");
    {
      auto w = Writer::create(path);
      BenchRunRow run;
      run.started_at = "2026-01-01T00:00:00Z";
      run.host = "h";
      run.pid = 7;
      run.command_line = "c3bench";
      run.backend = "sim";
      run.simulated = 1;
      run.gpus = 2;
      run.options_json = "{}";
      const int64_t id = w->insert(run);
      int64_t case_id = 0;
      for (const std::string& label : labels) {
        BenchResultRow row;  // the v2 columns only
        row.run_id = id;
        row.case_id = ++case_id;
        row.label = label;
        row.knobs = label.find('[') == std::string::npos ? "" : "as the label";
        row.status = "ok";
        row.t_c3_ns = 1000.0 * static_cast<double>(case_id);
        row.iterations = 20;
        w->insert(row);
      }
      w->close();
    }
    c3::test::make_schema_v2(path);
    return path;
  }
};

}  // namespace

TEST_F(MigrationOnOpen, FillsTypedColumnsOfAVersion2File) {
  const std::string path =
      v2_trace({"gemm:8192x8192x8192:bf16 + allreduce:64M [prio=comm_high "
                "nch=4 chunks=2]",
                "- + sm_copy:1G:peer", "not a label"});
  auto r = Reader::open(path);
  EXPECT_EQ(r->schema_version(), 2);
  auto q = r->query(
      "SELECT case_id, compute, compute_kind, gemm_m, gemm_n, gemm_k, compute_dtype, comm, "
      "comm_kind, comm_bytes, comm_dtype, comm_peer, priority, launch_order, nchannels, "
      "min_ctas, max_ctas, sm_partition_pct, pipelined, chunks, t_c3_ns, iterations, knobs "
      "FROM bench_result ORDER BY id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 1);
  EXPECT_EQ(q.text(1), "gemm:8192x8192x8192:bf16");
  EXPECT_EQ(q.text(2), "gemm");
  EXPECT_EQ(q.i64(3), 8192);
  EXPECT_EQ(q.i64(4), 8192);
  EXPECT_EQ(q.i64(5), 8192);
  EXPECT_EQ(q.text(6), "bf16");
  EXPECT_EQ(q.text(7), "allreduce:64M");
  EXPECT_EQ(q.text(8), "allreduce");
  EXPECT_EQ(q.i64(9), 64 * kMiB);
  EXPECT_TRUE(q.is_null(10));
  EXPECT_EQ(q.i64(11), 0);
  EXPECT_EQ(q.text(12), "comm_high");
  EXPECT_EQ(q.text(13), "compute_first");
  EXPECT_EQ(q.i64(14), 4);
  EXPECT_EQ(q.i64(15), 0);
  EXPECT_EQ(q.i64(16), 0);
  EXPECT_EQ(q.i64(17), 0);
  EXPECT_EQ(q.i64(18), 1);
  EXPECT_EQ(q.i64(19), 2);
  EXPECT_EQ(q.real(20), 1000.0);  // the v2 columns are copied as they were
  EXPECT_EQ(q.i64(21), 20);
  EXPECT_EQ(q.text(22), "as the label");
  ASSERT_TRUE(q.step());
  EXPECT_TRUE(q.is_null(1));
  EXPECT_TRUE(q.is_null(2));
  EXPECT_TRUE(q.is_null(3));
  EXPECT_EQ(q.text(8), "sm_copy");
  EXPECT_EQ(q.i64(9), int64_t{1} << 30);
  EXPECT_EQ(q.i64(11), 1);
  EXPECT_EQ(q.text(12), "equal");
  EXPECT_EQ(q.i64(18), 0);
  EXPECT_EQ(q.i64(19), 1);
  ASSERT_TRUE(q.step());  // a label that cannot be read: the row, without a configuration
  EXPECT_EQ(q.i64(0), 3);
  for (int c = 1; c <= 19; ++c) EXPECT_TRUE(q.is_null(c)) << c;
  EXPECT_EQ(q.real(20), 3000.0);
  EXPECT_FALSE(q.step());
  r.reset();

  // The file was not modified: still v2, without the typed columns.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(
                db, "SELECT COUNT(*) FROM pragma_table_info('bench_result') WHERE name = 'chunks'",
                -1, &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

TEST_F(MigrationOnOpen, AVersion2FileWithoutResults) {
  auto r = Reader::open(v2_trace({}));
  EXPECT_EQ(r->count("bench_result"), 0);
  auto q =
      r->query("SELECT COUNT(chunks) FROM bench_result JOIN bench_run ON bench_run.id = run_id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 0);
}

TEST(Schema, Version3AddsTheTypedConfiguration) {
  ASSERT_GE(kSchemaVersion, 3);
  bool found = false;
  for (const auto& m : migrations()) {
    if (m.to_version != 3) continue;
    found = true;
    ASSERT_EQ(m.rebuilt_tables.size(), 1u);
    EXPECT_EQ(m.rebuilt_tables[0], "bench_result");
  }
  EXPECT_TRUE(found);
  // Every typed column is a column of bench_result, NULL-able (a migrated row may lack it).
  std::vector<std::string> typed;
#define C3_NAME(name, type, sql, doc) typed.emplace_back(#name);
  C3_BENCH_CONFIG_COLUMNS(C3_NAME)
#undef C3_NAME
  for (const auto& t : tables()) {
    if (t.name != "bench_result") continue;
    size_t seen = 0;
    for (const auto& c : t.columns) {
      if (std::find(typed.begin(), typed.end(), std::string(c.name)) == typed.end()) continue;
      ++seen;
      EXPECT_EQ(c.sql_type.find("NOT NULL"), std::string_view::npos) << c.name;
    }
    EXPECT_EQ(seen, typed.size());
  }
}
