// The Nsight Systems importer (analyzer/import/src/nsys.cpp) as `c3scope analyze` runs it: the
// input is an SQLite database (an nsys export), read straight into the trace
// (OpenOptions::read_once) and analyzed (fuzz/common.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const c3::fuzz::TempFile file(std::string_view(reinterpret_cast<const char*>(data), size),
                                ".sqlite");
  c3::fuzz::analyze(file.path(), c3::analyzer::InputFormat::nsys);
  return 0;
}
