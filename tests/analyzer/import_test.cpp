// Importers on malformed input: counted in stats with the first offending position, never a
// crash; a file that is not a trace at all gets one clear line.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "c3/analyzer/load.h"
#include "c3/importer/importer.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"

namespace fs = std::filesystem;
using namespace c3;

namespace {

class ImportTest : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("c3-import-" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  std::string out(const std::string& name) { return (dir / name).string(); }
};

constexpr const char* kGoodTrace = R"json({"schemaVersion": 1,
 "distributedInfo": {"rank": 2, "world_size": 4},
 "deviceProperties": [{"id": 0, "name": "GPU X", "numSms": 100, "computeMajor": 9, "computeMinor": 0}],
 "traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "gemm_kernel", "pid": 0, "tid": 7, "ts": 1000, "dur": 100,
   "args": {"device": 0, "stream": 7, "correlation": 11, "grid": [132, 1, 1], "block": [256, 1, 1]}},
  {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "pid": 0, "tid": 8,
   "ts": 1050, "dur": 100, "args": {"device": 0, "stream": 8, "correlation": 12, "Collective name": "allreduce",
   "In msg nelems": 1024, "Group size": 4, "dtype": "Float", "Process Group Name": "0"}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 9, "ts": 1200,
   "dur": 10, "args": {"device": 0, "stream": 9, "correlation": 13, "bytes": 4096}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 55, "tid": 56, "ts": 990, "dur": 5,
   "args": {"correlation": 12}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 55, "tid": 56, "ts": 900, "dur": 500},
  {"ph": "i", "name": "instant", "pid": 55, "tid": 56, "ts": 5}
 ]})json";

}  // namespace

TEST_F(ImportTest, KinetoRowsAndLinks) {
  const std::string in = write("good.json", kGoodTrace);
  const auto st = importer::import_files({in}, out("good.sqlite"));
  EXPECT_EQ(st.kernels, 2);
  EXPECT_EQ(st.memcpys, 1);
  EXPECT_EQ(st.collectives, 1);
  EXPECT_EQ(st.ranges, 1);
  EXPECT_EQ(st.malformed, 0);
  analyzer::Trace t = analyzer::load({out("good.sqlite")});
  ASSERT_EQ(t.processes.size(), 1u);
  EXPECT_EQ(*t.processes[0].rank, 2);
  EXPECT_EQ(t.processes[0].pid, 55);
  ASSERT_EQ(t.collectives.size(), 1u);
  EXPECT_EQ(t.collectives[0].op, "AllReduce");
  EXPECT_EQ(t.collectives[0].bytes, 4096);
  EXPECT_EQ(t.collectives[0].nranks, 4);
  EXPECT_EQ(t.collectives[0].host_start, 990000) << "the launching API call's time";
  EXPECT_EQ(t.collectives[0].gpu_start, 1050000);
  ASSERT_EQ(t.activities.size(), 3u);
  EXPECT_EQ(t.activities.collective[1], 0);
  EXPECT_EQ(t.activities.cls[1], analyzer::Class::communication);
  EXPECT_EQ(t.shape_of(0).grid, 132u);
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.ranges[0].name, "ProfilerStep#3");
  auto r = tracedb::Reader::open(out("good.sqlite"));
  EXPECT_EQ(r->meta().at("source"), "importer:kineto");
  EXPECT_EQ(r->meta().at("source_file"), in);
}

// NCCL kernels sharing one correlation id (one CUDA graph launch; 20,000 of them in issue 12): each
// call owns its own kernel only, keeps the launch's host time, and the link is not quadratic.
TEST_F(ImportTest, NcclKernelsSharingACorrelationIdEachOwnTheirKernel) {
  std::string json = R"json({"traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 55, "tid": 56, "ts": 900,
   "dur": 5, "args": {"correlation": 7}})json";
  for (int i = 0; i < 3; ++i) {
    json += R"json(, {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
     "pid": 0, "tid": 8, "ts": )json" +
            std::to_string(1000 + 100 * i) +
            R"json(, "dur": 10, "args": {"device": 0, "stream": 8, "correlation": 7,
     "Collective name": "allreduce", "In msg nelems": 1024, "dtype": "Float"}})json";
  }
  // A compute kernel of the same launch, and a hostile id at INT64_MAX: the fresh ids never
  // depend on the file's largest.
  json += R"json(, {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 9, "ts": 1500,
     "dur": 10, "args": {"device": 0, "stream": 9, "correlation": 7}},
     {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 9, "ts": 1600,
     "dur": 10, "args": {"device": 0, "stream": 9, "correlation": 9223372036854775807}})json";
  json += "]}";
  importer::import_files({write("graph.json", json)}, out("graph.sqlite"));
  const analyzer::Trace t = analyzer::load({out("graph.sqlite")});
  ASSERT_EQ(t.collectives.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const auto s = static_cast<int64_t>(1000 + 100 * i) * 1000;
    EXPECT_EQ(t.collectives[i].gpu_start, s) << i;
    EXPECT_EQ(t.collectives[i].gpu_end, s + 10'000) << i << ": its own kernel only";
    EXPECT_EQ(t.collectives[i].host_start, 900'000) << i << ": the graph launch's time";
  }
  auto r = tracedb::Reader::open(out("graph.sqlite"));
  auto q = r->query("SELECT MAX(kernel_count) FROM collective_gpu");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 1);
}

TEST_F(ImportTest, GzipIsReadTheSame) {
  const std::string gz = (dir / "good.json.gz").string();
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, kGoodTrace, static_cast<unsigned>(std::char_traits<char>::length(kGoodTrace)));
  gzclose(f);
  const auto st = importer::import_files({gz}, out("gz.sqlite"));
  EXPECT_EQ(st.kernels, 2);
  EXPECT_EQ(st.input_bytes, static_cast<int64_t>(std::char_traits<char>::length(kGoodTrace)));
}

TEST_F(ImportTest, MalformedEventsAreCountedNotFatal) {
  const std::string text = R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ok", "ts": 10, "dur": 5, "args": {"device": 0}},
    {"ph": "X", "cat": "kernel", "name": "no ts", "dur": 5},
    {"ph": "X", "cat": "kernel", "name": "negative", "ts": 10, "dur": -5},
    {"ph": "X", "cat": "kernel", "name": "string ts", "ts": "soon", "dur": 5},
    [1, 2, 3],
    "just a string",
    {"ph": "X", "cat": "kernel", "name": "also ok", "ts": 20.5, "dur": 1.25, "args": {"device": 0}}
  ]})json";
  const auto st = importer::import_files({write("bad.json", text)}, out("bad.sqlite"));
  EXPECT_EQ(st.kernels, 2);
  EXPECT_EQ(st.malformed, 5);
  EXPECT_NE(st.first_malformed.find("event 1 at byte"), std::string::npos) << st.first_malformed;
  EXPECT_NE(st.first_malformed.find("ts"), std::string::npos) << st.first_malformed;
  auto r = tracedb::Reader::open(out("bad.sqlite"));
  auto q = r->query("SELECT value, detail FROM stats WHERE name = 'import_malformed'");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 5);
  EXPECT_NE(q.text(1).find("event 1"), std::string::npos);
  auto k = r->query("SELECT start_ns, end_ns FROM kernel WHERE end_ns - start_ns = 1250");
  ASSERT_TRUE(k.step()) << "fractional microseconds kept to the nanosecond";
  EXPECT_EQ(k.i64(0), 20500);
}

TEST_F(ImportTest, TruncatedFileKeepsWhatWasRead) {
  std::string text = kGoodTrace;
  text = text.substr(0, text.find("\"cat\": \"gpu_memcpy\"") + 5);  // cut inside the third event
  const auto st = importer::import_files({write("cut.json", text)}, out("cut.sqlite"));
  EXPECT_EQ(st.kernels, 2);
  EXPECT_EQ(st.malformed, 1);
  EXPECT_NE(st.first_malformed.find("ends early"), std::string::npos) << st.first_malformed;
}

TEST_F(ImportTest, NotATraceIsOneClearLine) {
  struct Case {
    std::string name, text, needle;
  };
  const std::vector<Case> cases = {
      {"empty.json", "", "empty file"},
      {"text.txt", "hello world", "neither JSON"},
      {"array.json", "[1, 2, 3]", "neither JSON"},
      {"object.json", "{\"a\": 1}", "no traceEvents"},
      {"broken.json", "{\"traceEvents\" 5}", "expected ':'"},
      {"notnsys.sqlite", "", ""},
  };
  for (const auto& c : cases) {
    std::string path;
    if (c.name == "notnsys.sqlite") {
      // An SQLite file that is not an Nsight export (a c3scope trace, say).
      importer::import_files({write("g.json", kGoodTrace)}, out("g.sqlite"));
      path = out("g.sqlite");
    } else {
      path = write(c.name, c.text);
    }
    try {
      importer::import_files({path}, out(c.name + ".out.sqlite"));
      ADD_FAILURE() << c.name;
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(path), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.needle.empty() ? "not an Nsight Systems export" : c.needle),
                std::string::npos)
          << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos);
    }
    EXPECT_FALSE(fs::exists(out(c.name + ".out.sqlite"))) << "nothing half-written";
  }
  // The output is never overwritten, unless forced; never an input, even forced.
  importer::import_files({write("x.json", kGoodTrace)}, out("x.sqlite"));
  EXPECT_THROW(importer::import_files({write("y.json", kGoodTrace)}, out("x.sqlite")),
               tracedb::OutputError);
  importer::Options force;
  force.force = true;
  EXPECT_NO_THROW(importer::import_files({write("y.json", kGoodTrace)}, out("x.sqlite"), force));
  const std::string in = write("z.json", kGoodTrace);
  EXPECT_THROW(importer::import_files({in}, in, force), tracedb::OutputError);
  std::ifstream back(in, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(back)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, kGoodTrace) << "the input is untouched";
}

namespace {

std::string gzip_of(const std::string& text) {
  std::string out(compressBound(static_cast<uLong>(text.size())) + 64, '\0');
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

int64_t stat_of(const std::string& trace, const std::string& name, std::string* detail = nullptr) {
  auto r = tracedb::Reader::open(trace);
  auto q = r->query("SELECT value, IFNULL(detail, '') FROM stats WHERE name = '" + name + "'");
  if (!q.step()) return -1;
  if (detail != nullptr) *detail = q.text(1);
  return q.i64(0);
}

}  // namespace

// The closing probes of issue 12: a bit flipped in the deflate data that zlib still inflates (to
// other bytes: a few bad events) imported with exit 0 when the JSON closed before the reading
// thread reached the trailer's CRC. Any flip that changes the inflated bytes is an error.
TEST_F(ImportTest, AnyFlippedBitInTheCompressedDataIsAnError) {
  std::string doc = R"({"traceEvents": [)";
  for (int i = 0; i < 30000; ++i) {
    doc += (i ? "," : "") + std::string(R"({"ph": "X", "cat": "kernel", "name": "k)") +
           std::to_string(i % 97) + R"(", "ts": )" + std::to_string(1000 + i * 10) +
           R"(, "dur": 5, "args": {"device": 0, "stream": 7}})";
  }
  doc += "]}";
  const std::string gz = gzip_of(doc);
  auto inflated = [](const std::string& bytes, std::string* out) {
    z_stream z{};
    inflateInit2(&z, 15 + 16);
    out->assign(size_t{16} << 20, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    z.avail_in = static_cast<uInt>(bytes.size());
    z.next_out = reinterpret_cast<Bytef*>(out->data());
    z.avail_out = static_cast<uInt>(out->size());
    const int rc = inflate(&z, Z_FINISH);
    out->resize(z.total_out);
    inflateEnd(&z);
    return rc;
  };
  int checked = 0;
  for (size_t k = 1; k <= 24; ++k) {
    std::string bad = gz;
    const size_t at = 10 + (bad.size() - 18) * k / 25;  // inside the deflate data
    bad[at] = static_cast<char>(bad[at] ^ (1 << (k % 8)));
    std::string back;
    inflated(bad, &back);
    if (back == doc) continue;  // a flip that changes nothing is no damage
    ++checked;
    const std::string in = write("flip" + std::to_string(k) + ".json.gz", bad);
    EXPECT_THROW(importer::import_files({in}, out("flip" + std::to_string(k) + ".sqlite")),
                 std::invalid_argument)
        << "bit " << k % 8 << " of byte " << at;
  }
  EXPECT_GT(checked, 12);
}

// Issue 12: a gzip whose trailer CRC was zeroed (all data intact) imported 388 of 1,154 kernels
// with exit 0, and a small one said "empty input at byte 0". A damaged or truncated compressed
// stream is an error naming the file and the byte; --salvage keeps what precedes the damage.
TEST_F(ImportTest, DamagedGzipIsAnErrorOrSalvaged) {
  std::string big = R"({"traceEvents": [)";
  for (int i = 0; i < 40000; ++i) {
    big += (i ? "," : "") + std::string(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": )") +
           std::to_string(1000 + i * 10) + R"(, "dur": 5, "args": {"device": 0, "stream": 7}})";
  }
  big += "]}";
  const std::string gz = gzip_of(big);
  std::string bad_crc = gz;
  for (size_t i = bad_crc.size() - 8; i < bad_crc.size() - 4; ++i) bad_crc[i] = 0;
  const std::string small = gzip_of(kGoodTrace);
  std::string small_bad = small;
  for (size_t i = small_bad.size() - 8; i < small_bad.size() - 4; ++i) small_bad[i] = 0;
  struct Case {
    std::string name, bytes, why;
  };
  const std::vector<Case> cases = {
      {"crc.json.gz", bad_crc, "incorrect data check"},
      {"cut.json.gz", gz.substr(0, gz.size() / 2), "ends early (truncated)"},
      {"small.json.gz", small_bad, "incorrect data check"},
  };
  for (const auto& c : cases) {
    const std::string in = write(c.name, c.bytes);
    try {
      importer::import_files({in}, out(c.name + ".sqlite"));
      ADD_FAILURE() << c.name << " imported";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'" + in + "': damaged compressed data at byte "), std::string::npos)
          << msg;
      EXPECT_NE(msg.find(c.why), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
    EXPECT_FALSE(fs::exists(out(c.name + ".sqlite"))) << "nothing written";
  }
  importer::Options salvage;
  salvage.salvage = true;
  const auto st =
      importer::import_files({write("crc2.json.gz", bad_crc)}, out("s.sqlite"), salvage);
  EXPECT_NE(st.salvaged.find("incorrect data check; kept "), std::string::npos) << st.salvaged;
  // At most one 64 KiB piece of JSON is lost at the damage (zlib returns nothing of the read
  // that finds it): about 640 events of these, out of 40,000.
  EXPECT_GT(st.kernels, 39000);
  EXPECT_LT(st.kernels, 40000);
  std::string detail;
  EXPECT_EQ(stat_of(out("s.sqlite"), "import_salvaged", &detail), 1);
  EXPECT_NE(detail.find("kept"), std::string::npos) << detail;
  // The whole file imports whole.
  EXPECT_EQ(importer::import_files({write("ok.json.gz", gz)}, out("ok.sqlite")).kernels, 40000);
}

// Issue 12: times that overflow int64 or end before they start were stored (a negative start, a
// kernel ending before it starts), and the Nsight importer checked GPU tables only. Every
// table's rows are checked the same way and the rejects counted per table in stats.
TEST_F(ImportTest, ImpossibleTimesAreRejectedPerTable) {
  const std::string in = write("times.json", R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ok", "ts": 10, "dur": 5, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "huge ts", "ts": 17000000000000000, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "sum overflows", "ts": 9000000000000000, "dur": 9000000000000000},
    {"ph": "X", "cat": "kernel", "name": "negative", "ts": -50, "dur": 1},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy", "ts": -1, "dur": 2},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset", "ts": 4611686018427388, "dur": 1},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 9e15, "dur": 9e15},
    {"ph": "X", "cat": "user_annotation", "name": "range", "ts": 5, "dur": -3},
    {"ph": "X", "cat": "cpu_op", "name": "not stored", "ts": -5, "dur": 1}
  ]})json");
  const auto st = importer::import_files({in}, out("times.sqlite"));
  EXPECT_EQ(st.kernels, 1);
  EXPECT_EQ(st.rejected.at("kernel"), 3);
  EXPECT_EQ(st.rejected.at("memcpy"), 1);
  EXPECT_EQ(st.rejected.at("memset"), 1);
  EXPECT_EQ(st.rejected.at("api_call"), 1);
  EXPECT_EQ(st.rejected.at("nvtx_range"), 1);
  EXPECT_EQ(st.malformed, 7);
  std::string detail;
  EXPECT_EQ(stat_of(out("times.sqlite"), "import_rejected_kernel", &detail), 3);
  EXPECT_NE(detail.find("event 1 at byte"), std::string::npos) << detail;
  EXPECT_EQ(stat_of(out("times.sqlite"), "import_rejected_memcpy", &detail), 1);
  EXPECT_NE(detail.find("negative time"), std::string::npos) << detail;
  // What was stored is possible: no negative start, no end before its start.
  auto r = tracedb::Reader::open(out("times.sqlite"));
  for (const char* table : {"kernel", "memcpy", "memset", "api_call", "nvtx_range"}) {
    auto q = r->query(std::string("SELECT COUNT(*) FROM ") + table +
                      " WHERE start_ns < 0 OR end_ns < start_ns");
    ASSERT_TRUE(q.step());
    EXPECT_EQ(q.i64(0), 0) << table;
  }
}
