// Seeds for snapshot_fuzz: the snapshot (cache.h) of a trace, under the key the harness asks for.
//   c3_fuzz_make_snapshot TRACE OUT
#include <cstdio>
#include <exception>

#include "c3/analyzer/open/cache.h"
#include "c3/analyzer/open/open.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s TRACE OUT\n", argv[0]);
    return 2;
  }
  try {
    c3::analyzer::OpenOptions o;
    const c3::analyzer::OpenedTraces opened = c3::analyzer::open_traces({argv[1]}, o);
    if (!c3::analyzer::save_cache(opened.trace, "fuzz", argv[2], 1000)) {
      std::fprintf(stderr, "%s: could not write the snapshot\n", argv[2]);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
