// The Kineto importer's speed (issue 4's target: at least 100 MB/s of JSON on one core, memory
// proportional to the events kept, not to the file). Writes a synthetic PyTorch profiler trace
// with the event mix of a training step (CPU ops, runtime calls, kernels with their args,
// copies), then in the same run: the baseline (reading and splitting the JSON into events, no
// parsing), the import into memory (every event parsed, the rows handed to a sink that keeps
// none: what the analyzer's map pays before its own work), and the whole import into a trace
// database.
//
// Then (issue 27, "each file at the speed of decompression"): a gzip'd trace shaped like
// perf/hta/compare.py's (N GPU activities, each with its launch; 200k: about 100 MB of JSON,
// 4.5 MB gzip), and in interleaved rounds `zcat FILE > /dev/null` (the baseline: decompressing
// it) against `c3scope analyze FILE > /dev/null` end to end (the c3scope beside this program)
// and against the read alone in this process (inflate, parse, rows to a sink that keeps none);
// prints the medians and the ratios (target for analyze: at most 1.25x). Before them, the
// tokenizer alone on that trace's events: its fast path against simdjson On-Demand.
//
// Then an Nsight Systems export of as many kernels, each with its launch call (the tables and
// columns of tests/golden/nsys_export), and in interleaved rounds: a plain SQLite scan of those
// rows (the baseline: reading the export at all), `c3scope analyze EXPORT` (its rows straight
// into the trace) and the route analyze took before issue 27's direct path, `c3scope import
// EXPORT -o DB` then `c3scope analyze DB`.
//
//   build/bin/c3_perf_kineto [--mb N] [--activities N]   (defaults 200, 200000)
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "c3/importer/importer.h"
#include "c3/tracedb/sink.h"
#include "json_stream.h"
#include "kineto_tokenize.h"
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

// A number as Python's json.dumps(round(x, 3)) writes it: the shortest text that reads back as
// the same double, ".0" on whole numbers.
std::string py_number(double x) {
  x = std::round(x * 1000) / 1000;
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// perf/hta/compare.py's trace: `activities` GPU activities (7 in 10 compute kernels, 2 NCCL
// kernels on a stream of their own overlapping them, 1 copy), each with the runtime call that
// launched it, fractional-microsecond epoch timestamps; gzip level 6 as Python writes it.
bool write_gz_trace(const std::string& path, int64_t activities) {
  gzFile f = gzopen(path.c_str(), "wb6");
  if (f == nullptr) return false;
  gzputs(f,
         "{\"schemaVersion\": 1, \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, "
         "\"world_size\": 8},\n \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H100 80GB "
         "HBM3\", \"numSms\": 132, \"computeMajor\": 9, \"computeMinor\": 0, \"totalGlobalMem\": "
         "85899345920, \"regsPerBlock\": 65536, \"warpSize\": 32, \"maxThreadsPerBlock\": 1024, "
         "\"sharedMemPerBlock\": 49152, \"maxThreadsPerMultiProcessor\": 2048, "
         "\"regsPerMultiprocessor\": 65536, \"sharedMemPerMultiprocessor\": 233472}],\n "
         "\"traceEvents\": [\n");
  const char* names[] = {
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4>"
      "(cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4::Params)",
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)",
      "void at::native::(anonymous namespace)::layer_norm_kernel<float>(float const*, float*)",
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"};
  std::mt19937_64 rng(7);
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  double t = 1.7e15, comm_free = t;  // microseconds
  int64_t corr = 1'000'000;          // real correlation ids are large
  char buf[1024];
  for (int64_t k = 0; k < activities; ++k) {
    ++corr;
    std::snprintf(buf, sizeof buf,
                  "%s{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
                  "\"pid\": 4242, \"tid\": 4242, \"ts\": %s, \"dur\": 5.25, \"args\": "
                  "{\"correlation\": %lld}},\n",
                  k == 0 ? "" : ",\n", py_number(t - 30.5).c_str(), static_cast<long long>(corr));
    gzputs(f, buf);
    const int64_t r = k % 10;
    if (r < 7) {
      const double dur = uniform(5.0, 200.0);
      std::snprintf(
          buf, sizeof buf,
          "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7, "
          "\"ts\": %s, \"dur\": %s, \"args\": {\"device\": 0, \"stream\": 7, "
          "\"correlation\": %lld, \"registers per thread\": 128, \"shared memory\": "
          "49152, \"grid\": [132, 1, 1], \"block\": [256, 1, 1]}}",
          names[k % 4], py_number(t).c_str(), py_number(dur).c_str(), static_cast<long long>(corr));
      t += dur + uniform(0.0, 5.0);
    } else if (r < 9) {
      const double start = std::max(t - uniform(0.0, 100.0), comm_free);
      const double dur = uniform(20.0, 400.0);
      std::snprintf(
          buf, sizeof buf,
          "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": "
          "\"ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)\", "
          "\"pid\": 0, \"tid\": 13, \"ts\": %s, \"dur\": %s, \"args\": {\"device\": "
          "0, \"stream\": 13, \"correlation\": %lld, \"registers per thread\": 96, "
          "\"shared memory\": 0, \"grid\": [4, 1, 1], \"block\": [512, 1, 1]}}",
          py_number(start).c_str(), py_number(dur).c_str(), static_cast<long long>(corr));
      comm_free = start + dur;
    } else {
      const double dur = uniform(2.0, 50.0);
      std::snprintf(buf, sizeof buf,
                    "{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pageable "
                    "-> Device)\", \"pid\": 0, \"tid\": 20, \"ts\": %s, \"dur\": %s, \"args\": "
                    "{\"device\": 0, \"stream\": 20, \"correlation\": %lld, \"bytes\": 1048576}}",
                    py_number(t).c_str(), py_number(dur).c_str(), static_cast<long long>(corr));
    }
    gzputs(f, buf);
  }
  gzputs(f, "\n],\n \"traceName\": \"generated\", \"displayTimeUnit\": \"ms\"}\n");
  return gzclose(f) == Z_OK;
}

// Runs argv with its standard output to /dev/null; its wall time in seconds, or -1 when it
// failed.
double run_quiet(const std::vector<std::string>& argv) {
  std::fflush(stdout);
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    close(null);
    std::vector<char*> a;
    a.reserve(argv.size() + 1);
    for (const auto& x : argv) a.push_back(const_cast<char*>(x.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const double s = seconds_since(t0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? s : -1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The tokenizer alone (kineto_tokenize.h), on one thread: each event of `path` read by
// simdjson On-Demand (the baseline, read_event_json) and by the fast path (read_event_fast), in
// interleaved rounds; prints the time per event of each, the ratio and the events the fast path
// took (the rest go to simdjson). False when the file cannot be read.
bool tokenizer(const std::string& path) {
  namespace k = c3::importer::kineto;
  using c3::importer::JsonStream;
  std::string bytes;  // the events back to back, as the importer's batches hold them
  std::vector<std::pair<size_t, size_t>> items;
  std::string err;
  try {
    JsonStream js(path);
    js.run(
        "traceEvents", [](std::string_view, std::string_view) {},
        [&](std::string_view text, int64_t) {
          items.emplace_back(bytes.size(), text.size());
          bytes.append(text);
        },
        &err);
  } catch (const std::exception& e) {
    err = e.what();
  }
  if (!err.empty() || items.empty()) {
    std::fprintf(stderr, "c3_perf_kineto: reading %s: %s\n", path.c_str(), err.c_str());
    return false;
  }
  bytes.append(JsonStream::kPadding, ' ');
  simdjson::ondemand::parser parser;
  std::vector<double> json_s, fast_s;
  size_t taken = 0;
  double check = 0;  // (what was read, kept so that the reads are not optimized away)
  constexpr int kRounds = 5;
  for (int round = 0; round < kRounds; ++round) {
    for (const bool fast : {false, true}) {
      const auto t0 = Clock::now();
      size_t ok = 0;
      for (const auto& [offset, size] : items) {
        const simdjson::padded_string_view in(bytes.data() + offset, size,
                                              size + JsonStream::kPadding);
        k::Event e;
        if (fast ? k::read_event_fast(in, &e) : k::read_event_json(parser, in, &e) == nullptr) {
          ++ok;
        }
        check += static_cast<double>(e.ts.type) + static_cast<double>(e.name.size());
      }
      (fast ? fast_s : json_s).push_back(seconds_since(t0));
      if (fast) taken = ok;
    }
  }
  const auto n = static_cast<double>(items.size());
  const double j = median(json_s) / n * 1e9, f = median(fast_s) / n * 1e9;
  std::printf(
      "tokenizer, one thread, %zu events (%.0f bytes each): simdjson On-Demand %.0f ns/event, "
      "fast path %.0f ns/event (it took %.1f%% of the events; medians of %d)\n",
      items.size(), static_cast<double>(bytes.size()) / n, j, f,
      100.0 * static_cast<double>(taken) / n, kRounds);
  asm volatile("" : : "g"(check) : "memory");
  std::printf("ratio: the fast path takes %.2fx simdjson's time per event\n", f / j);
  return true;
}

// Issue 27: `c3scope analyze FILE.json.gz` against `zcat FILE`, interleaved rounds.
int analyze_vs_zcat(const char* self, int64_t activities) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const std::string c3scope = ((ec ? fs::path(self) : exe).parent_path() / "c3scope").string();
  if (!fs::exists(c3scope)) {
    std::fprintf(stderr, "c3_perf_kineto: no %s (build the c3scope target)\n", c3scope.c_str());
    return 1;
  }
  const std::string gz = "/tmp/c3perf-kineto-" + std::to_string(::getpid()) + ".json.gz";
  if (!write_gz_trace(gz, activities)) {
    std::fprintf(stderr, "c3_perf_kineto: cannot write %s\n", gz.c_str());
    return 1;
  }
  if (!tokenizer(gz)) {
    std::remove(gz.c_str());
    return 1;
  }
  std::vector<double> zcat, analyze, read;
  constexpr int kRounds = 7;
  for (int i = 0; i < kRounds; ++i) {
    zcat.push_back(run_quiet({"zcat", gz}));
    analyze.push_back(run_quiet({c3scope, "analyze", gz}));
    // The read alone, in this process: what analyze's map pays before it builds the trace.
    const auto t0 = Clock::now();
    CountingSink sink;
    try {
      c3::importer::import_kineto(gz, sink);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "c3_perf_kineto: reading %s: %s\n", gz.c_str(), e.what());
      std::remove(gz.c_str());
      return 1;
    }
    read.push_back(seconds_since(t0));
    if (zcat.back() < 0 || analyze.back() < 0) {
      std::fprintf(stderr, "c3_perf_kineto: zcat or c3scope analyze failed on %s\n", gz.c_str());
      std::remove(gz.c_str());
      return 1;
    }
  }
  const double z = median(zcat), a = median(analyze);
  std::printf("PyTorch trace of %lld GPU activities (perf/hta/compare.py's shape): %.1f MB gzip\n",
              static_cast<long long>(activities), static_cast<double>(fs::file_size(gz, ec)) / 1e6);
  std::printf("baseline `zcat FILE > /dev/null`: %.3f s (median of %d; min %.3f)\n", z, kRounds,
              *std::min_element(zcat.begin(), zcat.end()));
  std::printf("`c3scope analyze FILE`: %.3f s (median of %d; min %.3f)\n", a, kRounds,
              *std::min_element(analyze.begin(), analyze.end()));
  std::printf("ratio: analyze takes %.2fx the time of zcat; target <= 1.25x: %s\n", a / z,
              a <= 1.25 * z ? "met" : "NOT met");
  const double r = median(read);
  std::printf(
      "of which the read (inflate, parse, rows to a sink that keeps none; in this process): "
      "%.3f s (median), %.2fx zcat; the rest (the trace built, every analysis, the report, the "
      "process): %.3f s\n",
      r, r / z, a - r);
  std::remove(gz.c_str());
  return 0;
}

// An Nsight Systems export at `path` with `kernels` GEMM and NCCL kernels on two streams of one
// H100, each launched by a cudaLaunchKernel call; false when SQLite fails.
bool write_nsys_export(const std::string& path, int64_t kernels) {
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return false;
  }
  const std::string n = std::to_string(kernels - 1);
  const std::string sql =
      "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
      "CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
      "INSERT INTO StringIds VALUES (1, 'gemm_kernel(float const*, float*)'), (2, 'gemm_kernel'),"
      " (4, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),"
      " (5, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL'), (6, 'cudaLaunchKernel_v7000');"
      "CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);"
      "INSERT INTO PROCESSES VALUES (72057665206878208, 4242, './train');"
      "CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,"
      " totalMemory INTEGER, memoryBandwidth INTEGER, smCount INTEGER, maxRegistersPerSm INTEGER,"
      " maxShmemPerSm INTEGER, threadsPerWarp INTEGER, maxWarpsPerSm INTEGER,"
      " maxBlocksPerSm INTEGER, computeMajor INTEGER, computeMinor INTEGER);"
      "INSERT INTO TARGET_INFO_GPU VALUES (0, 0, 'NVIDIA H100 80GB HBM3', 85031714816,"
      " 3352320000000, 132, 65536, 233472, 32, 64, 32, 9, 0);"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
      " deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
      " correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
      " shortName INTEGER NOT NULL, mangledName INTEGER, registersPerThread INTEGER NOT NULL,"
      " gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,"
      " blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL,"
      " staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL,"
      " gridId INTEGER NOT NULL);"
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < " +
      n +
      ") INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT 1000000 + i * 10000,"
      " 1006000 + i * 10000 + (i % 7) * 300, 0, 1, CASE WHEN i % 5 = 0 THEN 13 ELSE 7 END, 100 + i,"
      " 72057665206878208, CASE WHEN i % 5 = 0 THEN 4 ELSE 1 END, CASE WHEN i % 5 = 0 THEN 5 ELSE"
      " 2 END, NULL, 128, 132, 1, 1, 256, 1, 1, 0, 65536, 10 + i FROM n;"
      "CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
      " eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
      " nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);"
      "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < " +
      n +
      ") INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME SELECT 997000 + i * 10000, 998000 + i * 10000,"
      " 1, 72057665206882450, 100 + i, 6, 0, NULL FROM n;";
  char* err = nullptr;
  const bool ok = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) == SQLITE_OK;
  if (!ok) std::fprintf(stderr, "c3_perf_kineto: %s\n", err != nullptr ? err : "sqlite3_exec");
  sqlite3_free(err);
  return sqlite3_close(db) == SQLITE_OK && ok;
}

// Every column of the export's kernel and runtime rows read with SQLite, nothing kept: the floor
// for reading the export. Returns the seconds, or -1.
double scan_nsys_export(const std::string& path) {
  const auto t0 = Clock::now();
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return -1;
  }
  int64_t sum = 0;
  bool ok = true;
  for (const char* q :
       {"SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL", "SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME"}) {
    sqlite3_stmt* s = nullptr;
    ok = ok && sqlite3_prepare_v2(db, q, -1, &s, nullptr) == SQLITE_OK;
    while (ok && sqlite3_step(s) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(s); ++c) sum += sqlite3_column_int64(s, c);
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
  return ok && sum != 0 ? seconds_since(t0) : -1;
}

// Issue 27: an Nsight export read straight into the trace, against a scan of its rows and
// against the conversion route (import into a trace database, then analyze that).
int nsys_direct(const std::string& c3scope, int64_t kernels) {
  namespace fs = std::filesystem;
  const std::string base = "/tmp/c3perf-nsys-" + std::to_string(::getpid());
  const std::string in = base + ".sqlite", db = base + "-import.sqlite";
  if (!write_nsys_export(in, kernels)) {
    std::fprintf(stderr, "c3_perf_kineto: cannot write %s\n", in.c_str());
    std::remove(in.c_str());
    return 1;
  }
  std::vector<double> scan, direct, converted;
  constexpr int kRounds = 5;
  for (int i = 0; i < kRounds; ++i) {
    scan.push_back(scan_nsys_export(in));
    direct.push_back(run_quiet({c3scope, "analyze", in}));
    const double import = run_quiet({c3scope, "import", in, "-o", db, "--force"});
    const double analyze = run_quiet({c3scope, "analyze", db});
    converted.push_back(import < 0 || analyze < 0 ? -1 : import + analyze);
    if (scan.back() < 0 || direct.back() < 0 || converted.back() < 0) {
      std::fprintf(stderr, "c3_perf_kineto: reading or analyzing %s failed\n", in.c_str());
      std::remove(in.c_str());
      std::remove(db.c_str());
      return 1;
    }
  }
  std::error_code ec;
  const double s = median(scan), d = median(direct), c = median(converted);
  std::printf("Nsight Systems export of %lld kernels and their launch calls: %.1f MB\n",
              static_cast<long long>(kernels), static_cast<double>(fs::file_size(in, ec)) / 1e6);
  std::printf("baseline (SQLite scan of those rows, nothing kept): %.3f s (median of %d)\n", s,
              kRounds);
  std::printf("`c3scope analyze EXPORT` (rows straight into the trace): %.3f s, %.1fx the scan\n",
              d, d / s);
  std::printf(
      "`c3scope import EXPORT -o DB` + `c3scope analyze DB` (the route before): %.3f s; the "
      "direct read takes %.2fx its time\n",
      c, d / c);
  std::remove(in.c_str());
  std::remove(db.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t mb = 200, activities = 200'000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
      mb = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--activities") == 0 && i + 1 < argc) {
      activities = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--mb N] [--activities N]\n", argv[0]);
      return 2;
    }
  }
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
  if (const int rc = analyze_vs_zcat(argv[0], activities); rc != 0) return rc;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return nsys_direct(((ec ? fs::path(argv[0]) : exe).parent_path() / "c3scope").string(),
                     activities);
}
