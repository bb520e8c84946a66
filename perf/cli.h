// The command line of the perf/ benchmarks that take one number (`--ops N`, `--mb N`...).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace c3::perf {

// Reads `OPTION N` from the command line into `value` (left as it is when absent). Any other
// argument prints "usage: PROGRAM [OPTION N]" and returns false: exit with 2.
inline bool parse_count_option(int argc, char** argv, const char* program, const char* option,
                               int64_t& value) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], option) == 0 && i + 1 < argc) {
      value = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [%s N]\n", program, option);
      return false;
    }
  }
  return true;
}

}  // namespace c3::perf
