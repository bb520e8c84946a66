// Decode+write throughput of CUPTI kernel records into a trace, against a bare SQLite
// prepared-insert loop writing the same rows, measured in the same run. Prints the ratio and the
// collector's host time per record (targets: >= 70% of the bare loop's rows/s, < 300 ns/record).
//
//   build/bin/c3_perf_collector_write [--benchmark_min_time=1s]
#include <benchmark/benchmark.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "c3/tracedb/writer.h"
#include "counters.h"
#include "decode.h"
#include "process_info.h"
#include "ratio_reporter.h"
#include "trace_writer.h"

namespace {

namespace fs = std::filesystem;
using c3::collector::CuptiApi;
using c3::collector::TraceWriter;

constexpr size_t kRecordsPerBuffer = 20000;
constexpr size_t kStride = (sizeof(CUpti_ActivityKernel10) + 7) / 8 * 8;
const char* const kNames[] = {"_Z4gemmILi128EEvPfS0_", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                              "_Z11elementwisePfi", "_Z7softmaxPKfPfi"};

// A buffer of kernel records in the CUDA 13 layout, as CUPTI would hand it over.
std::vector<uint8_t> make_buffer() {
  std::vector<uint8_t> buf(kStride * kRecordsPerBuffer);
  for (size_t i = 0; i < kRecordsPerBuffer; ++i) {
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 1'000'000 + i * 1000;
    k.end = k.start + 800;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = 13 + static_cast<uint32_t>(i % 4);
    k.gridX = 132;
    k.gridY = k.gridZ = 1;
    k.blockX = 256;
    k.blockY = k.blockZ = 1;
    k.registersPerThread = 64;
    k.correlationId = static_cast<uint32_t>(i + 1);
    k.gridId = static_cast<int64_t>(i);
    k.name = kNames[i % 4];
    std::memcpy(buf.data() + i * kStride, &k, sizeof k);
  }
  return buf;
}

CUptiResult CUPTIAPI next_record(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  uint8_t* next = *record ? reinterpret_cast<uint8_t*>(*record) + kStride : buffer;
  if (next + kStride > buffer + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

std::string temp_trace(const char* tag) {
  static int n = 0;
  return (fs::temp_directory_path() /
          ("c3perf-" + std::string(tag) + "-" + std::to_string(getpid()) + "-" +
           std::to_string(n++) + ".sqlite"))
      .string();
}

void remove_trace(const std::string& p) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(p + suffix);
}

// The collector's path: decode every record (pure decoder), intern names, insert through the
// tracedb writer, commit once per buffer as the writer thread does.
void BM_CollectorDecodeAndWrite(benchmark::State& state) {
  const auto buf = make_buffer();
  CuptiApi api;
  api.ActivityGetNextRecord = &next_record;
  const std::string path = temp_trace("collector");
  c3::collector::ProcessFacts facts;
  facts.pid = getpid();
  facts.host = "bench";
  facts.command_line = "bench";
  c3::collector::Counters counters;
  {
    TraceWriter tw(path, facts, 0, c3::collector::take_anchor(), counters);
    int64_t rows = 0;
    for (auto _ : state) {
      tw.write_cupti_buffer(buf.data(), buf.size(), api, false);
      rows += static_cast<int64_t>(kRecordsPerBuffer);
      tw.commit({});
    }
    state.SetItemsProcessed(rows);
  }
  remove_trace(path);
}

// The baseline: the same rows into the same kernel table (the schema's own DDL), through one
// prepared INSERT with every value taken straight from the record, the same journal settings,
// one transaction per buffer. What it lacks is everything the collector adds: decoding by kind
// and size, clock conversion, name interning and demangling, counters.
void BM_BareSqliteInsert(benchmark::State& state) {
  const auto buf = make_buffer();
  const std::string path = temp_trace("bare");
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  sqlite3_exec(db, "PRAGMA page_size=16384;", nullptr, nullptr, nullptr);
  sqlite3_exec(db, c3::tracedb::create_tables_sql().c_str(), nullptr, nullptr, nullptr);
  sqlite3_exec(db, c3::tracedb::kWriterPragmas, nullptr, nullptr, nullptr);
  const size_t ncols = c3::tracedb::table_of<c3::tracedb::KernelRow>().columns.size();
  std::string sql = "INSERT INTO kernel VALUES (NULL";
  for (size_t i = 1; i < ncols; ++i) sql += ",?";
  sql += ")";
  sqlite3_stmt* ins = nullptr;
  sqlite3_prepare_v2(db, sql.c_str(), -1, &ins, nullptr);
  int64_t rows = 0;
  for (auto _ : state) {
    sqlite3_exec(db, "BEGIN", nullptr, nullptr, nullptr);
    for (size_t i = 0; i < kRecordsPerBuffer; ++i) {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(buf.data() + i * kStride);
      int c = 0;
      auto i64 = [&](int64_t v) { sqlite3_bind_int64(ins, ++c, v); };
      auto null = [&] { sqlite3_bind_null(ins, ++c); };
      i64(1);  // process_id
      i64(k->deviceId);
      i64(k->contextId);
      i64(k->streamId);
      i64(k->correlationId);
      i64(static_cast<int64_t>(k->start));
      i64(static_cast<int64_t>(k->end));
      i64(static_cast<int64_t>(i % 4) + 1);  // name_id
      i64(static_cast<int64_t>(i % 4) + 5);  // mangled_name_id
      i64(k->gridX);
      i64(k->gridY);
      i64(k->gridZ);
      i64(k->blockX);
      i64(k->blockY);
      i64(k->blockZ);
      i64(k->registersPerThread);
      i64(k->staticSharedMemory);
      i64(k->dynamicSharedMemory);
      i64(k->localMemoryPerThread);
      i64(k->sharedMemoryExecuted);
      i64(k->clusterX);
      i64(k->clusterY);
      i64(k->clusterZ);
      sqlite3_bind_text(ins, ++c, "regular", 7, SQLITE_STATIC);
      null();  // graph_id
      null();  // graph_node_id
      i64(k->gridId);
      null();  // queued_ns
      null();  // submitted_ns
      null();  // channel_id
      i64(k->isDeviceLaunched);
      sqlite3_step(ins);
      sqlite3_reset(ins);
    }
    sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr);
    rows += static_cast<int64_t>(kRecordsPerBuffer);
  }
  state.SetItemsProcessed(rows);
  sqlite3_finalize(ins);
  sqlite3_close(db);
  remove_trace(path);
}

// The collector's own work per record without SQLite: decoding alone.
void BM_DecodeOnly(benchmark::State& state) {
  const auto buf = make_buffer();
  c3::collector::DecodeContext ctx;
  int64_t rows = 0;
  for (auto _ : state) {
    for (size_t i = 0; i < kRecordsPerBuffer; ++i) {
      auto d = c3::collector::decode_record(
          reinterpret_cast<const CUpti_Activity*>(buf.data() + i * kStride), kStride, ctx);
      benchmark::DoNotOptimize(d);
    }
    rows += static_cast<int64_t>(kRecordsPerBuffer);
  }
  state.SetItemsProcessed(rows);
}

BENCHMARK(BM_BareSqliteInsert)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CollectorDecodeAndWrite)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeOnly)->Unit(benchmark::kMillisecond);

// Keeps each benchmark's rows/s so main() can print the ratio measured in this run.

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  c3::perf::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double bare = reporter.rate("BM_BareSqliteInsert");
  const double ours = reporter.rate("BM_CollectorDecodeAndWrite");
  const double decode = reporter.rate("BM_DecodeOnly");
  if (bare > 0 && ours > 0) {
    std::printf(
        "\ncollector decode+write: %.0f rows/s; bare sqlite insert loop, same rows: %.0f rows/s\n",
        ours, bare);
    std::printf("ratio collector/bare = %.1f%% (target >= 70%%)\n", 100.0 * ours / bare);
    std::printf(
        "per record: %.0f ns in all on the writer thread, of which SQLite's insert %.0f ns "
        "and the collector's own work %.0f ns (decode alone %.0f ns; target < 300 ns)\n",
        1e9 / ours, 1e9 / bare, std::max(0.0, 1e9 / ours - 1e9 / bare),
        decode > 0 ? 1e9 / decode : 0.0);
  }
  benchmark::Shutdown();
  return 0;
}
