// The PyTorch profiler (Kineto) importer as `c3scope analyze` runs it on a file: the bytes as
// they are (plain JSON, or gzip whose container itself is fuzzed), streamed into memory
// (OpenOptions::read_once), then the whole analysis (fuzz/common.h), and HTA's critical path
// of its first ProfilerStep (--hta-critical-path: the file read again, CPU ops included).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string_view>

#include "c3/analyzer/why/hta_path.h"
#include "common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const c3::fuzz::TempFile file(std::string_view(reinterpret_cast<const char*>(data), size),
                                ".json");
  c3::fuzz::analyze(file.path(), c3::analyzer::InputFormat::kineto);
  try {
    c3::analyzer::Report r;
    r.hta_paths.push_back(c3::analyzer::hta_critical_path(file.path()));
    std::FILE* null = std::fopen("/dev/null", "w");
    if (null != nullptr) {
      c3::analyzer::print_text(null, r);
      std::fclose(null);
    }
    (void)c3::analyzer::to_json(r);
  } catch (const std::invalid_argument&) {  // not whole Kineto JSON, or no ProfilerStep
  }
  return 0;
}
