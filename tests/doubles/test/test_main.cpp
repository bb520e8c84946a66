// The doubles' self-test runs with two fake devices. Tests that need a fresh process (what
// happens at the first cuInit, first context use) run as "threadsafe" death tests, which
// re-execute this binary for just that test.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("C3FAKE_DEVICES", "2", 1);
  unsetenv("C3FAKE_CUPTI_FAIL");
  unsetenv("C3FAKE_NCCL_FAIL");
  unsetenv("C3FAKE_CUPTI_OTHER_SUBSCRIBER");
  unsetenv("CUDA_INJECTION64_PATH");
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}
