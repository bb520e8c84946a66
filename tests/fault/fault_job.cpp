// The job the writer's fault-injection and kill tests record: NVTX step ranges around simulated
// GPU work (the test doubles' fake GPU, tests/doubles), one progress line per finished step so a
// test knows which ranges ended when, and an exit code of its choosing. It knows nothing about
// c3scope or the fault VFS; the tests inject both.
//
// usage: c3_fault_job steps N PERIOD_US EXIT_CODE   N steps (3 kernels and a copy each), a pause
//                                                   of PERIOD_US after each; N = 0: until killed
//        c3_fault_job burst N EXIT_CODE             N kernels in one range, as fast as possible
#include <c3/sim/gpu/fixed_time.h>
#include <cupti_activity.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

void launch(void* stream, const char* name, uint64_t ns) {
  c3fake_launch_kernel(stream, name, 128, 1, 1, 256, 1, 1, 32, 0, 0, ns);
}

int steps(long n, long period_us, int exit_code) {
  c3fake_cuInit();
  void* s = c3fake_stream_create(0, 0, 1);
  for (long step = 0; n == 0 || step < n; ++step) {
    const std::string name = "step " + std::to_string(step);
    nvtxRangePushA(name.c_str());
    for (int k = 0; k < 3; ++k) launch(s, "fault_step_kernel", 2000);
    c3fake_memcpy(s, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 16, 0, 0, 1000);
    nvtxRangePop();
    // After the pop: when the test reads this line, the step's rows are queued for the writer.
    std::printf("step %ld done\n", step);
    std::fflush(stdout);
    if (period_us > 0) ::usleep(static_cast<useconds_t>(period_us));
  }
  c3fake_stream_synchronize(s);
  return exit_code;
}

int burst(long n, int exit_code) {
  c3fake_cuInit();
  void* s = c3fake_stream_create(0, 0, 1);
  nvtxRangePushA("burst");
  for (long i = 0; i < n; ++i) launch(s, "fault_burst_kernel", 100);
  nvtxRangePop();
  c3fake_stream_synchronize(s);
  std::printf("burst of %ld done\n", n);
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  auto arg = [&](int i) { return argc > i ? std::atol(argv[i]) : 0L; };
  if (mode == "steps" && argc == 5) return steps(arg(2), arg(3), static_cast<int>(arg(4)));
  if (mode == "burst" && argc == 4) return burst(arg(2), static_cast<int>(arg(3)));
  std::fprintf(stderr, "usage: %s steps N PERIOD_US EXIT_CODE | burst N EXIT_CODE\n", argv[0]);
  return 2;
}
