// c3bench's bench_result rows: the typed configuration it writes (case_columns) for every case
// its flags can make, read back from a written file, and agreeing with what the schema v2
// migration reads from the same case's label (so an older trace's results mean the same).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "c3/bench/report.h"
#include "c3/tracedb/bench_label.h"
#include "c3/tracedb/reader.h"
#include "options.h"

using namespace c3::bench;
namespace tracedb = c3::tracedb;

namespace {

// The cases of `c3bench --backend sim` with the flags `set` gives.
std::vector<Case> cases_of(const std::function<void(Options&)>& set) {
  Options o;
  o.backend = "sim";
  set(o);
  const Plan p = make_plan(
      o, [](std::string*) { return false; }, [](const char*) -> const char* { return nullptr; });
  return build_cases(p.sweep);
}

// Flags that make every operation, size spelling and knob (the default experiment, a knob
// sweep, other op mixes, communication only).
std::vector<Case> every_kind_of_case() {
  std::vector<Case> all;
  const std::vector<std::function<void(Options&)>> runs = {
      [](Options&) {},
      [](Options& o) {
        o.comms = {"allreduce:64M..128M"};
        o.priorities = {"equal", "comm_high", "comm_low"};
        o.orders = {"compute_first", "comm_first"};
        o.nchannels = {0, 4};
        o.ctas = "4:16";
        o.sm_partitions = {0, 50};
        o.schedules = {"independent,chunks=1,2"};
      },
      [](Options& o) {
        o.computes = {"triad:1G", "fma:500us", "gemm:1024x512x256:fp16"};
        o.comms = {"sm_copy:64M:peer",      "dma_d2d:4096",  "dma_p2p:1M",
                   "reducescatter:8M:bf16", "alltoall:3000", "sendrecv:2G"};
      },
      [](Options& o) {
        o.computes = {"none"};
        o.comms = {"allgather:1M..4M"};
      },
      [](Options& o) { o.comms = {"none"}; },
  };
  for (const auto& run : runs) {
    for (const Case& c : cases_of(run)) all.push_back(c);
  }
  return all;
}

// The typed columns of two rows, side by side (comm_dtype aside: labels do not carry it).
void expect_same_config(const tracedb::BenchResultRow& a, const tracedb::BenchResultRow& b,
                        const std::string& what) {
  EXPECT_EQ(a.compute, b.compute) << what;
  EXPECT_EQ(a.comm, b.comm) << what;
  EXPECT_EQ(a.comm_bytes, b.comm_bytes) << what;
#define C3_EXPECT_COLUMN(name, type, sql, doc)       \
  if (std::string_view(#name) != "comm_dtype") {     \
    EXPECT_EQ(a.name, b.name) << what << ": " #name; \
  }
  C3_BENCH_CONFIG_COLUMNS(C3_EXPECT_COLUMN)
#undef C3_EXPECT_COLUMN
}

}  // namespace

TEST(BenchColumns, TypedConfigurationOfACase) {
  Case c;
  c.id = 3;
  c.compute = parse_compute("gemm:8192x4096x1024:fp16");
  c.comm = parse_comm("sm_copy:64M:peer:bf16", 2).front();
  c.knobs.priority = Knobs::Priority::comm_low;
  c.knobs.order = Knobs::Order::comm_first;
  c.knobs.nchannels = 4;
  c.knobs.min_ctas = 2;
  c.knobs.max_ctas = 8;
  c.knobs.sm_partition_pct = 50;
  c.knobs.pipelined = true;
  c.knobs.chunks = 4;
  tracedb::BenchResultRow row;
  case_columns(c, row);
  EXPECT_EQ(row.case_id, 3);
  EXPECT_EQ(row.label, c.label());
  EXPECT_EQ(row.knobs, c.knobs.label());
  EXPECT_EQ(row.compute, "gemm:8192x4096x1024:fp16");
  EXPECT_EQ(row.compute_kind, "gemm");
  EXPECT_EQ(row.gemm_m, 8192);
  EXPECT_EQ(row.gemm_n, 4096);
  EXPECT_EQ(row.gemm_k, 1024);
  EXPECT_EQ(row.compute_dtype, "fp16");
  EXPECT_FALSE(row.compute_bytes);
  EXPECT_FALSE(row.compute_target_ns);
  EXPECT_EQ(row.comm, "sm_copy:64M:peer");
  EXPECT_EQ(row.comm_kind, "sm_copy");
  EXPECT_EQ(row.comm_bytes, int64_t{64} << 20);
  EXPECT_EQ(row.comm_dtype, "bf16");
  EXPECT_EQ(row.comm_peer, 1);
  EXPECT_EQ(row.priority, "comm_low");
  EXPECT_EQ(row.launch_order, "comm_first");
  EXPECT_EQ(row.nchannels, 4);
  EXPECT_EQ(row.min_ctas, 2);
  EXPECT_EQ(row.max_ctas, 8);
  EXPECT_EQ(row.sm_partition_pct, 50);
  EXPECT_EQ(row.pipelined, 1);
  EXPECT_EQ(row.chunks, 4);

  Case none;  // neither operation, default knobs
  tracedb::BenchResultRow empty;
  case_columns(none, empty);
  EXPECT_FALSE(empty.compute || empty.compute_kind || empty.comm || empty.comm_kind ||
               empty.comm_peer || empty.comm_bytes);
  EXPECT_EQ(empty.priority, "equal");
  EXPECT_EQ(empty.launch_order, "compute_first");
  EXPECT_EQ(empty.pipelined, 0);
  EXPECT_EQ(empty.chunks, 1);
}

// What c3bench writes and what the migration of a v2 file reads from the label agree, for every
// case c3bench's flags can make.
TEST(BenchColumns, LabelsReadBackToTheWrittenConfiguration) {
  const std::vector<Case> cases = every_kind_of_case();
  ASSERT_GT(cases.size(), 100u);
  for (const Case& c : cases) {
    tracedb::BenchResultRow written;
    case_columns(c, written);
    tracedb::BenchResultRow migrated;
    migrated.label = written.label;
    std::vector<std::string> unknown;
    ASSERT_TRUE(tracedb::config_from_label(migrated, &unknown)) << written.label;
    EXPECT_TRUE(unknown.empty()) << written.label << ": " << unknown.front();
    expect_same_config(written, migrated, written.label);
  }
}

// The typed columns survive a write and a read (c3bench --db).
TEST(BenchColumns, RoundTripThroughAFile) {
  const std::vector<Case> cases = every_kind_of_case();
  std::vector<Result> results;
  results.reserve(cases.size());
  for (const Case& c : cases) {
    Result r;
    r.c = c;
    r.iterations = 1;
    results.push_back(r);
  }
  const auto path = std::filesystem::temp_directory_path() /
                    ("c3bench-columns-" + std::to_string(getpid()) + ".sqlite");
  RunInfo info;
  info.backend = "sim";
  info.options_json = "{}";
  write_db(path.string(), info, results);
  auto r = tracedb::Reader::open(path.string());
  std::string columns = "case_id, label, compute, comm, comm_bytes";
#define C3_NAME(name, type, sql, doc) columns += ", " #name;
  C3_BENCH_CONFIG_COLUMNS(C3_NAME)
#undef C3_NAME
  auto q = r->query("SELECT " + columns + " FROM bench_result ORDER BY id");
  size_t n = 0;
  while (q.step()) {
    ASSERT_LT(n, cases.size());
    tracedb::BenchResultRow expected, read;
    case_columns(cases[n], expected);
    read.case_id = q.i64(0);
    read.label = q.text(1);
    read.compute = q.opt_text(2);
    read.comm = q.opt_text(3);
    read.comm_bytes = q.opt_i64(4);
    int col = 5;
    auto get = [&](auto& v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, tracedb::OptText>) {
        v = q.opt_text(col++);
      } else {
        v = q.opt_i64(col++);
      }
    };
#define C3_GET(name, type, sql, doc) get(read.name);
    C3_BENCH_CONFIG_COLUMNS(C3_GET)
#undef C3_GET
    EXPECT_EQ(read.case_id, expected.case_id);
    EXPECT_EQ(read.label, expected.label);
    expect_same_config(expected, read, expected.label);
    EXPECT_EQ(read.comm_dtype, expected.comm_dtype) << expected.label;
    ++n;
  }
  EXPECT_EQ(n, cases.size());
  r.reset();
  std::filesystem::remove(path);
}
