// The PyTorch profiler (Kineto) importer as `c3scope analyze` runs it on a file: the bytes as
// they are (plain JSON, or gzip whose container itself is fuzzed), streamed into memory
// (OpenOptions::read_once), then the whole analysis (fuzz/common.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const c3::fuzz::TempFile file(std::string_view(reinterpret_cast<const char*>(data), size),
                                ".json");
  c3::fuzz::analyze(file.path(), c3::analyzer::InputFormat::kineto);
  return 0;
}
