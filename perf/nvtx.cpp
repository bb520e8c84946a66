// NVTX push/pop on the application's thread through the collector (tracker, row, queue to the
// writer thread, which writes to a real trace meanwhile), against the tracker alone with rows
// discarded, measured in the same run. Prints the ratio and the cost per range.
//
//   build/bin/c3_perf_nvtx
#include <cstdint>

// This benchmark is a static NVTX injection (see tests/collector/nvtx_injection_test.cpp).
extern "C" int (*InitializeInjectionNvtx2_fnptr)(  // NOLINT(readability-identifier-naming)
    const void* (*)(uint32_t));
#define NVTX_STATIC_INJECTION_IMPL
#include <benchmark/benchmark.h>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "nvtx_injection.h"
#include "ratio_reporter.h"
#include "recorder.h"

namespace {

int initialize_injection(NvtxGetExportTableFunc_t get_export_table) {
  return c3::collector::nvtx::initialize(get_export_table);
}

}  // namespace

extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): the name NVTX's loader looks for
int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t)) = initialize_injection;
}

namespace {

// Registered first: runs while rows still go to the Recorder and its writer thread.
void BM_PushPopThroughCollector(benchmark::State& state) {
  for (auto _ : state) {
    nvtxRangePushA("step");
    nvtxRangePop();
  }
  state.SetItemsProcessed(state.iterations());
}

// Then the baseline: the same calls with rows dropped right after the tracker made them.
void BM_PushPopTrackerOnly(benchmark::State& state) {
  c3::collector::nvtx::set_sink_for_testing([](c3::tracedb::NvtxRangeRow&&) {});
  for (auto _ : state) {
    nvtxRangePushA("step");
    nvtxRangePop();
  }
  state.SetItemsProcessed(state.iterations());
}

BENCHMARK(BM_PushPopThroughCollector);
BENCHMARK(BM_PushPopTrackerOnly);

}  // namespace

int main(int argc, char** argv) {
  const std::string dir =
      std::filesystem::temp_directory_path() / ("c3perf-nvtx-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  setenv("C3SCOPE_OUTPUT", (dir + "/").c_str(), 1);
  setenv("C3SCOPE_LOG", "warn", 1);
  c3::collector::Recorder::instance().init();
  benchmark::Initialize(&argc, argv);
  c3::perf::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  const double full = reporter.rate("BM_PushPopThroughCollector");
  const double tracker = reporter.rate("BM_PushPopTrackerOnly");
  if (full > 0 && tracker > 0) {
    std::printf(
        "\nNVTX push+pop: %.0f ns through the collector, %.0f ns in the tracker alone "
        "(collector/tracker time = %.2fx)\n",
        1e9 / full, 1e9 / tracker, tracker / full);
  }
  benchmark::Shutdown();
  c3::collector::Recorder::instance().finalize("benchmark end");
  std::filesystem::remove_all(dir);
  return 0;
}
