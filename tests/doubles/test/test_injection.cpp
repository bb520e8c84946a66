// CUDA_INJECTION64_PATH library for the self-test: enables the activity kinds a collector would
// and records that the fake driver called it (read back with dlsym by the test).
#include <cupti.h>

#define C3FAKE_TEST_EXPORT __attribute__((visibility("default")))

extern "C" {

C3FAKE_TEST_EXPORT int c3fake_test_injection_calls = 0;
C3FAKE_TEST_EXPORT int c3fake_test_injection_devices = -1;

// NOLINTNEXTLINE(readability-identifier-naming): the name the CUDA driver looks up
C3FAKE_TEST_EXPORT int InitializeInjection(void) {
  ++c3fake_test_injection_calls;
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_STREAM);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  int count = 0;  // driver queries work while InitializeInjection runs
  if (cuDeviceGetCount(&count) == CUDA_SUCCESS) c3fake_test_injection_devices = count;
  return 1;
}

}  // extern "C"
