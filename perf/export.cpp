// The Perfetto export's speed on collectives (issue 12, item 6: 20,000 copies of one NCCL kernel
// with one correlation id took 43 s to export, in a collective query that joined every kernel of a
// correlation with every other; import took 0.09 s). Writes two PyTorch traces of N NCCL kernels
// each, imports them and exports them, in the same run:
//   baseline: every kernel with its own correlation id (one kernel per NCCL call);
//   shared:   every kernel with the same correlation id (the case that was quadratic);
// and the shared case again at N/4, so the per-kernel cost at N and at N/4 shows whether the
// export grows linearly. Prints the seconds of each and the ratios.
//
//   build/bin/c3_perf_export [--kernels N]   (default 20000)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "c3/exporter/perfetto.h"
#include "c3/importer/importer.h"
#include "c3/tracedb/output_file.h"
#include "cli.h"
#include "measure.h"

namespace {

using c3::perf::Clock;
using c3::perf::seconds_since;
namespace fs = std::filesystem;

// A PyTorch trace of `n` NCCL kernels on one stream; `shared`: all with correlation id 1.
void write_trace(const std::string& path, int n, bool shared) {
  std::ofstream f(path);
  f << R"({"schemaVersion": 1, "traceEvents": [)" << '\n';
  for (int i = 0; i < n; ++i) {
    const int corr = shared ? 1 : i + 1;
    if (i > 0) f << ",\n";
    f << R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", )"
      << R"("pid": 0, "tid": 7, "ts": )" << 1000 + i * 20 << R"(, "dur": 10, "args": {)"
      << R"("device": 0, "stream": 7, "correlation": )" << corr
      << R"(, "Collective name": "allreduce", "In msg nelems": 1024, "dtype": "Float"}})";
  }
  f << "]}\n";
}

struct Case {
  double import_s = 0, export_s = 0;
  int64_t flows = 0;
};

Case run(const fs::path& dir, const std::string& name, int n, bool shared) {
  const std::string json = (dir / (name + ".json")).string();
  const std::string db = (dir / (name + ".sqlite")).string();
  const std::string out = (dir / (name + ".perfetto.json")).string();
  write_trace(json, n, shared);
  Case c;
  auto t0 = Clock::now();
  c3::importer::import_files({json}, db);
  c.import_s = seconds_since(t0);
  t0 = Clock::now();
  c3::tracedb::OutputFile file("-o", out, {false, {db}, false});
  const c3::exporter::ExportStats st = c3::exporter::export_perfetto(db, file);
  c.export_s = seconds_since(t0);
  c.flows = st.flows;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t kernels = 20000;
  if (!c3::perf::parse_count_option(argc, argv, "c3_perf_export", "--kernels", kernels)) return 2;
  const int n = static_cast<int>(kernels);
  if (n < 4) {
    std::fprintf(stderr, "c3_perf_export: --kernels must be at least 4\n");
    return 2;
  }
  const fs::path dir = fs::temp_directory_path() / ("c3_perf_export-" + std::to_string(getpid()));
  fs::create_directories(dir);
  int rc = 0;
  try {
    const Case base = run(dir, "baseline", n, false);
    const Case shared = run(dir, "shared", n, true);
    const Case quarter = run(dir, "shared-quarter", n / 4, true);
    std::printf("%-44s %9s %9s %9s\n", "case", "import s", "export s", "flows");
    std::printf("%-44s %9.3f %9.3f %9lld\n", "baseline: N kernels, N correlation ids",
                base.import_s, base.export_s, static_cast<long long>(base.flows));
    std::printf("%-44s %9.3f %9.3f %9lld\n", "shared: N kernels, one correlation id",
                shared.import_s, shared.export_s, static_cast<long long>(shared.flows));
    std::printf("%-44s %9.3f %9.3f %9lld\n", "shared at N/4", quarter.import_s, quarter.export_s,
                static_cast<long long>(quarter.flows));
    const double per_n = shared.export_s / n;
    const int quarter_n = n / 4;  // the kernels of the N/4 case
    const double per_quarter = quarter.export_s / quarter_n;
    std::printf(
        "N = %d. ratio: the shared export costs %.2fx the baseline's; per kernel at N it costs "
        "%.2fx what it costs at N/4 (linear: about 1; quadratic: about 4)\n",
        n, shared.export_s / base.export_s, per_n / per_quarter);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "c3_perf_export: %s\n", e.what());
    rc = 2;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return rc;
}
