// The real traces in ../shared/traces against their reference results
// (../shared/traces/README.md): Kineto traces imported and analyzed must agree within 0.1
// percentage point (overlap %, and span, idle, compute, non-compute as shares of the span); the
// Nsight Systems sample's counts and sums must match exactly.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <iterator>

#include "c3/analyzer/load.h"
#include "c3/analyzer/metrics.h"
#include "c3/importer/importer.h"
#include "c3/tracedb/reader.h"
#include "shared_traces.h"

namespace fs = std::filesystem;
using namespace c3;

namespace {

fs::path traces() {
  return c3::test::shared_traces();
}

struct Reference {
  const char* file;
  int64_t rank;
  double overlap_pct;
  int64_t span_us, idle_us, compute_us, non_compute_us;
  bool fractional;  // fractional-µs timestamps: HTA's rounding is in the reference
  std::vector<std::pair<int, int64_t>> breakdown_us;  // (class mask, µs)
};

const int kC = 1, kN = 2, kM = 4;

const std::vector<Reference>& references() {
  static const std::vector<Reference> r = {
      {"hta_sampled_rank-0", 0, 14.95, 1222847, 675191, 210320, 337336, false, {}},
      {"hta_sampled_rank-1", 1, 19.93, 1231186, 651136, 271973, 308077, false, {}},
      {"hta_nccl_data",
       0,
       15.14,
       660550,
       506512,
       113012,
       41026,
       true,
       {{kC, 105920}, {kN, 39461}, {kC | kN, 7092}, {kM, 1260}, {kN | kM, 305}}},
      {"hta_trace_diff_control",
       3,
       46.24,
       464594,
       76007,
       281336,
       107251,
       false,
       {{kC, 180696},
        {kN, 86554},
        {kC | kN, 66699},
        {kC | kM, 25026},
        {kM, 19330},
        {kC | kN | kM, 8915},
        {kN | kM, 1367}}},
      {"hta_negative_queue_rank0",
       0,
       1.36,
       1231461,
       793037,
       210998,
       227426,
       false,
       {{kC, 203676}, {kN, 184571}, {kM, 42109}, {kC | kM, 4769}, {kC | kN, 2553}, {kN | kM, 746}}},
  };
  return r;
}

class TempTrace {
 public:
  TempTrace() {
    path_ = (fs::temp_directory_path() /
             ("c3-ref-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + ".sqlite"))
                .string();
  }
  ~TempTrace() { fs::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  static inline int counter = 0;
};

}  // namespace

TEST(Reference, KinetoTracesAgreeWithHta) {
  if (!fs::exists(traces() / "kineto")) GTEST_SKIP() << "no " << traces() << " on this machine";
  for (const Reference& ref : references()) {
    SCOPED_TRACE(ref.file);
    TempTrace out;
    importer::Options opt;
    opt.hta_rounding = ref.fractional;
    const auto st = importer::import_files(
        {(traces() / "kineto" / (std::string(ref.file) + ".json.gz")).string()}, out.path(), opt);
    EXPECT_EQ(st.malformed, 0) << st.first_malformed;
    EXPECT_EQ(st.rounded, ref.fractional);
    analyzer::Trace t = analyzer::load({out.path()});
    ASSERT_EQ(t.processes.size(), 1u);
    EXPECT_EQ(t.processes[0].rank.value_or(-1), ref.rank);
    const analyzer::Breakdown b = analyzer::breakdown(t, {0, -1});
    EXPECT_NEAR(b.overlap_pct, ref.overlap_pct, 0.1);
    const double span = static_cast<double>(ref.span_us) * 1000;
    auto share = [&](int64_t ns, int64_t us) {
      return 100.0 * std::abs(static_cast<double>(ns) - static_cast<double>(us) * 1000) / span;
    };
    EXPECT_LE(share(b.span, ref.span_us), 0.1);
    EXPECT_LE(share(b.idle, ref.idle_us), 0.1);
    EXPECT_LE(share(b.compute(), ref.compute_us), 0.1);
    EXPECT_LE(share(b.non_compute, ref.non_compute_us), 0.1);
    for (const auto& [mask, us] : ref.breakdown_us) {
      EXPECT_LE(share(b.by_mask[static_cast<size_t>(mask)], us), 0.1) << analyzer::mask_name(mask);
    }
  }
}

TEST(Reference, KinetoWithoutRoundingKeepsNanoseconds) {
  if (!fs::exists(traces() / "kineto")) GTEST_SKIP() << "no " << traces() << " on this machine";
  TempTrace out;
  const auto st = importer::import_files({(traces() / "kineto" / "hta_nccl_data.json.gz").string()},
                                         out.path());
  EXPECT_FALSE(st.rounded);
  analyzer::Trace t = analyzer::load({out.path()});
  const analyzer::Breakdown b = analyzer::breakdown(t, {0, -1});
  // Exact nanoseconds: 7317.026 of 46876.492 us, 15.61% (HTA's rounding gives 15.14%).
  EXPECT_NEAR(b.overlap_pct, 15.61, 0.01);
  EXPECT_EQ(t.collectives.size(), 21u);
  int linked = 0;
  for (size_t i = 0; i < t.activities.size(); ++i) linked += t.activities.collective[i] >= 0;
  EXPECT_EQ(linked, 21) << "every NCCL kernel has its collective row";
}

TEST(Reference, NsightSampleCountsAndSumsExactly) {
  const fs::path in = traces() / "nsys" / "pipit_saxpy_nsys.sqlite";
  if (!fs::exists(in)) GTEST_SKIP() << "no " << in << " on this machine";
  TempTrace out;
  importer::import_files({in.string()}, out.path());
  auto r = tracedb::Reader::open(out.path());
  auto one = [&](const std::string& sql) {
    auto q = r->query(sql);
    EXPECT_TRUE(q.step()) << sql;
    return q.i64(0);
  };
  EXPECT_EQ(r->meta().at("source"), "importer:nsys");
  EXPECT_EQ(one("SELECT COUNT(*) FROM kernel"), 5);
  EXPECT_EQ(one("SELECT SUM(end_ns - start_ns) FROM kernel"), 88573480);
  EXPECT_EQ(one("SELECT COUNT(*) FROM memcpy"), 15);
  EXPECT_EQ(one("SELECT SUM(end_ns - start_ns) FROM memcpy"), 284699600);
  EXPECT_EQ(one("SELECT SUM(bytes) FROM memcpy"), 3932160000);
  EXPECT_EQ(one("SELECT value FROM stats WHERE name = 'nsys_nvtx_events'"), 24);
  EXPECT_EQ(one("SELECT COUNT(*) FROM memset"), 0);
  EXPECT_EQ(
      one("SELECT COUNT(*) FROM device WHERE name = 'NVIDIA A100-SXM4-40GB' AND sm_count = 108"),
      1);
  EXPECT_EQ(one("SELECT COUNT(*) FROM gpu_activity"), 20)
      << "the same views as the collector's traces";
}

// Issue 12: the Nsight importer dropped kernels, copies and memsets that end before they start
// but kept API calls and NVTX ranges that did. A tampered copy of the sample: every table's
// impossible rows are rejected and counted per table, and reading the export creates nothing
// next to it (it is opened immutable).
TEST(Reference, NsightImpossibleTimesAreRejectedInEveryTable) {
  const fs::path in = traces() / "nsys" / "pipit_saxpy_nsys.sqlite";
  if (!fs::exists(in)) GTEST_SKIP() << "no " << in << " on this machine";
  const fs::path dir = fs::temp_directory_path() / ("c3-nsys-times-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path copy = dir / "tampered.sqlite";
  fs::copy_file(in, copy);
  fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(copy.c_str(), &db), SQLITE_OK);
    const char* sql =
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = start - 1 WHERE rowid IN (SELECT rowid "
        "FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1);"
        "UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET start = -5 WHERE rowid IN (SELECT rowid FROM "
        "CUPTI_ACTIVITY_KIND_MEMCPY LIMIT 2);"
        "UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = start - 10 WHERE rowid IN (SELECT rowid "
        "FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 3);"
        "UPDATE NVTX_EVENTS SET \"end\" = start - 10 WHERE rowid IN (SELECT rowid FROM "
        "NVTX_EVENTS WHERE eventType IN (59, 60) AND \"end\" IS NOT NULL LIMIT 1);";
    ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  const auto before = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
  const std::string out = (dir / "out.sqlite").string();
  const auto st = importer::import_files({copy.string()}, out);
  EXPECT_EQ(st.rejected.at("kernel"), 1);
  EXPECT_EQ(st.rejected.at("memcpy"), 2);
  EXPECT_EQ(st.rejected.at("api_call"), 3);
  EXPECT_EQ(st.rejected.at("nvtx_range"), 1);
  EXPECT_EQ(st.kernels, 4);
  auto r = tracedb::Reader::open(out);
  for (const char* table : {"kernel", "memcpy", "memset", "api_call", "nvtx_range"}) {
    auto q = r->query(std::string("SELECT COUNT(*) FROM ") + table +
                      " WHERE start_ns < 0 OR end_ns < start_ns");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.i64(0), 0) << table;
    auto s = r->query(std::string("SELECT COUNT(*) FROM stats WHERE name = 'import_rejected_") +
                      table + "'");
    ASSERT_TRUE(s.step());
    EXPECT_EQ(s.i64(0), std::string(table) == "memset" ? 0 : 1) << table;
  }
  r.reset();
  // The export and the new trace, nothing else (no -shm, -wal or temporaries).
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), before + 1);
  fs::remove_all(dir);
}
