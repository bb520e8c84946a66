// Launch statistics (docs/metrics.md "Why a step takes as long as it does"; HTA
// get_cuda_kernel_launch_stats): for each GPU activity whose launch call the trace carries, the
// call's duration on the host (cpu), the activity's duration on the GPU, and the launch delay
// (GPU start minus call end, 0 when negative), per signature, with HTA's three outlier kinds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "c3/analyzer/metrics/distribution.h"
#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

struct LaunchOptions {
  // HTA's defaults: a launch call longer than runtime_cutoff is a runtime outlier, a launch
  // delay longer than delay_cutoff a delay outlier (both 'greater than').
  int64_t runtime_cutoff_ns = 50'000;
  int64_t delay_cutoff_ns = 100'000;
};

// Whether a launch call counts (HTA's set: cudaLaunchKernel, cudaLaunchKernelExC,
// cudaMemcpyAsync, cudaMemsetAsync; CUPTI's _ptsz and _vNNNN spellings of them too).
bool is_launch_call(std::string_view name);

// One signature: kernels by normalized name (normalized_kernel_name), copies and sets by their
// name ("Memcpy HtoD", "Memset").
struct LaunchStat {
  std::string name;
  int64_t count = 0;
  int64_t cpu_ns = 0, gpu_ns = 0, delay_ns = 0;  // sums
  Distribution cpu, gpu, delay;                  // ns
  // HTA's outliers: GPU time shorter than the call (calls within runtime_cutoff only), calls
  // longer than runtime_cutoff, delays longer than delay_cutoff.
  int64_t short_gpu = 0, runtime_outliers = 0, delay_outliers = 0;
  void merge(const LaunchStat& o);
};

// The process's launches (activities starting inside `window` when one is given), sorted by
// name. Empty when the trace carries no launch calls.
std::vector<LaunchStat> launch_stats(const Trace& t, int process, const LaunchOptions& o,
                                     const Intervals* window = nullptr);

}  // namespace c3::analyzer
