// Writes the synthetic training job of synthetic.h as trace files (for screenshots and trying the
// GUI without a GPU; issue 27's scale job):  c3_gui_make_trace DIR [--ranks N] [--steps N]
// [--layers N] [--small-kernels N] [--slow-rank F] [--no-api] [--tp N] [--pp N]
// [--ranks-per-host N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "synthetic.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: c3_gui_make_trace DIR [--ranks N] [--steps N] [--layers N] "
                 "[--small-kernels N] [--slow-rank F] [--no-api] [--tp N] [--pp N] "
                 "[--ranks-per-host N]\n");
    return 2;
  }
  c3::gui::testing::SyntheticJob job;
  for (int i = 2; i < argc; ++i) {
    auto value = [&](int* out) {
      if (i + 1 >= argc || std::atoi(argv[i + 1]) <= 0) {
        std::fprintf(stderr, "c3_gui_make_trace: %s needs a positive number\n", argv[i]);
        std::exit(2);
      }
      *out = std::atoi(argv[++i]);
    };
    if (std::strcmp(argv[i], "--ranks") == 0) {
      value(&job.ranks);
    } else if (std::strcmp(argv[i], "--steps") == 0) {
      value(&job.steps);
    } else if (std::strcmp(argv[i], "--layers") == 0) {
      value(&job.layers);
    } else if (std::strcmp(argv[i], "--tp") == 0) {
      value(&job.tensor_parallel);
    } else if (std::strcmp(argv[i], "--pp") == 0) {
      value(&job.pipeline_parallel);
    } else if (std::strcmp(argv[i], "--ranks-per-host") == 0) {
      value(&job.ranks_per_host);
    } else if (std::strcmp(argv[i], "--small-kernels") == 0) {
      value(&job.small_kernels);
    } else if (std::strcmp(argv[i], "--slow-rank") == 0) {
      // The factor on the last rank's GEMM times (a straggler; 1.3 makes a slower run).
      const double f = i + 1 < argc ? std::atof(argv[i + 1]) : 0;
      if (!(f >= 1 && f <= 100)) {
        std::fprintf(stderr, "c3_gui_make_trace: --slow-rank needs a factor from 1 to 100\n");
        return 2;
      }
      job.slow_rank_factor = f;
      ++i;
    } else if (std::strcmp(argv[i], "--no-api") == 0) {
      job.api_calls = false;
    } else {
      std::fprintf(stderr, "c3_gui_make_trace: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  try {
    for (const auto& p : c3::gui::testing::write_synthetic_job(argv[1], job))
      std::printf("%s\n", p.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "c3_gui_make_trace: %s\n", e.what());
    return 1;
  }
  return 0;
}
