// The Kineto importer's speed (issue 4's target: at least 100 MB/s of JSON on one core, memory
// proportional to the events kept, not to the file). Writes a synthetic PyTorch profiler trace
// with the event mix of a training step (CPU ops, runtime calls, kernels with their args,
// copies), then in the same run: the baseline (reading and splitting the JSON into events, no
// parsing), the import into memory (every event parsed, the rows handed to a sink that keeps
// none: what the analyzer's map pays before its own work), and the whole import into a trace
// database.
//
//   build/bin/c3_perf_kineto [--mb N]   (default 200)
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <unordered_map>

#include "c3/importer/importer.h"
#include "c3/tracedb/sink.h"
#include "cli.h"
#include "json_stream.h"
#include "measure.h"

namespace {

using c3::perf::Clock;
using c3::perf::peak_rss_kb;
using c3::perf::seconds_since;

// Rows counted and dropped; strings interned as a database would.
class CountingSink final : public c3::tracedb::RowSink {
 public:
  using RowSink::insert;
  int64_t insert(const c3::tracedb::KernelRow& /*row*/) override { return ++rows; }
  int64_t insert(const c3::tracedb::MemcpyRow& /*row*/) override { return ++rows; }
  int64_t insert(const c3::tracedb::ApiCallRow& /*row*/) override { return ++rows; }
  int64_t intern(std::string_view value) override {
    return strings.emplace(std::string(value), static_cast<int64_t>(strings.size()) + 1)
        .first->second;
  }
  int64_t rows = 0;
  std::unordered_map<std::string, int64_t> strings;
};

int64_t write_trace(const std::string& path, int64_t target_bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return -1;
  std::fputs(
      "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
      "\"world_size\": 8},\n"
      " \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100\", \"numSms\": 132, "
      "\"computeMajor\": 9, "
      "\"computeMinor\": 0}],\n \"traceEvents\": [\n",
      f);
  int64_t written = 0, ts = 1'700'000'000'000'000, k = 0;
  while (written < target_bytes) {
    const int64_t corr = 1'000'000 + k;
    int n = std::fprintf(
        f,
        "  {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::linear\", \"pid\": 4242, "
        "\"tid\": 4242, \"ts\": "
        "%lld, \"dur\": 25, \"args\": {\"External id\": %lld, \"Record function id\": 0, "
        "\"Sequence number\": "
        "%lld, \"Fwd thread id\": 0, \"Ev Idx\": %lld}},\n"
        "  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": "
        "4242, \"tid\": 4242, "
        "\"ts\": %lld, \"dur\": 5, \"args\": {\"External id\": %lld, \"cbid\": 211, "
        "\"correlation\": %lld}},\n"
        "  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void "
        "cutlass::Kernel<cutlass_80_tensorop_s1688gemm_"
        "128x128_32x3_nn_align4>(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)\", "
        "\"pid\": 0, "
        "\"tid\": 7, \"ts\": %lld.%03lld, \"dur\": %lld.%03lld, \"args\": {\"External id\": %lld, "
        "\"queued\": 0, "
        "\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": %lld, \"registers per "
        "thread\": 230, "
        "\"shared memory\": 73728, \"blocks per SM\": 0.5, \"warps per SM\": 4, \"grid\": [66, 1, "
        "1], \"block\": "
        "[256, 1, 1], \"est. achieved occupancy %%\": 6}},\n"
        "  {\"ph\": \"f\", \"id\": %lld, \"pid\": 0, \"tid\": 7, \"ts\": %lld, \"cat\": \"ac2g\", "
        "\"name\": "
        "\"ac2g\", \"bp\": \"e\"},\n",
        static_cast<long long>(ts), static_cast<long long>(k), static_cast<long long>(k),
        static_cast<long long>(k), static_cast<long long>(ts) + 10, static_cast<long long>(k),
        static_cast<long long>(corr), static_cast<long long>(ts) + 20,
        static_cast<long long>(k % 1000), static_cast<long long>(40 + k % 50),
        static_cast<long long>(k % 997), static_cast<long long>(k), static_cast<long long>(corr),
        static_cast<long long>(corr), static_cast<long long>(ts) + 20);
    if (n < 0) break;
    written += n;
    ts += 100;
    ++k;
  }
  std::fputs("  {\"ph\": \"i\", \"name\": \"end\", \"pid\": 4242, \"tid\": 4242, \"ts\": 0}\n]}\n",
             f);
  std::fclose(f);
  return written;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t mb = 200;
  if (!c3::perf::parse_count_option(argc, argv, argv[0], "--mb", mb)) return 2;
  const std::string dir = "/tmp/c3perf-kineto-" + std::to_string(::getpid());
  const std::string json = dir + ".json", db = dir + ".sqlite";
  const int64_t bytes = write_trace(json, mb << 20);
  if (bytes < 0) {
    std::fprintf(stderr, "c3_perf_kineto: cannot write %s\n", json.c_str());
    return 1;
  }
  // Baseline: read and split into events, no parsing.
  auto t0 = Clock::now();
  int64_t events = 0;
  {
    c3::importer::JsonStream js(json);
    std::string err;
    js.run(
        "traceEvents", [](std::string_view, std::string_view) {},
        [&](std::string_view, int64_t) { ++events; }, &err);
  }
  const double split = seconds_since(t0);
  const long rss0 = peak_rss_kb();
  t0 = Clock::now();
  const auto st = c3::importer::import_files({json}, db);
  const double full = seconds_since(t0);
  const long rss1 = peak_rss_kb();
  t0 = Clock::now();  // after the database import, whose peak memory is measured alone
  int64_t sunk = 0;
  {
    CountingSink sink;
    c3::importer::import_kineto(json, sink);
    sunk = sink.rows;
  }
  const double memory = seconds_since(t0);
  const double mib = static_cast<double>(bytes) / (1 << 20);
  std::printf("synthetic Kineto trace: %.0f MiB of JSON, %lld events (%lld kernels kept)\n", mib,
              static_cast<long long>(events), static_cast<long long>(st.kernels));
  std::printf("baseline (read + split into events): %.2f s, %.0f MiB/s\n", split, mib / split);
  std::printf(
      "import into memory (parse, rows to a sink that keeps none: the analyzer's map): %.2f s, "
      "%.0f MiB/s, %lld rows; %.1fx the baseline\n",
      memory, mib / memory, static_cast<long long>(sunk), memory / split);
  std::printf(
      "import (parse with simdjson + write the trace database): %.2f s, %.0f MiB/s; target >= 100 "
      "MB/s: %s\n",
      full, mib / full, static_cast<double>(bytes) / full >= 100e6 ? "met" : "NOT met");
  std::printf(
      "ratio: the import costs %.1fx the baseline; peak RSS grew %.1f MB for %lld kept rows (%.0f "
      "bytes/row; "
      "the file is %.0f MiB)\n",
      full / split, static_cast<double>(rss1 - rss0) / 1024.0,
      static_cast<long long>(st.kernels) + static_cast<long long>(st.api_calls),
      static_cast<double>(rss1 - rss0) * 1024.0 /
          static_cast<double>(std::max<int64_t>(1, st.kernels + st.api_calls)),
      mib);
  std::remove(json.c_str());
  std::remove(db.c_str());
  return 0;
}
