// A c3scope trace (SQLite) through the trace reader, the loader and the analysis, as
// `c3scope analyze run.sqlite` does (fuzz/common.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const c3::fuzz::TempFile file(std::string_view(reinterpret_cast<const char*>(data), size),
                                ".sqlite");
  c3::fuzz::analyze(file.path(), c3::analyzer::InputFormat::c3scope);
  return 0;
}
