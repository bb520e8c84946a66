// A c3scope trace (SQLite) through the trace reader, the loader and the analysis, as
// `c3scope analyze run.sqlite` does (fuzz/common.h), then the Perfetto export, which reads the
// file's rows as they are (`c3scope export run.sqlite -o /dev/null`).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "c3/exporter/perfetto.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"
#include "common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const c3::fuzz::TempFile file(std::string_view(reinterpret_cast<const char*>(data), size),
                                ".sqlite");
  c3::fuzz::analyze(file.path(), c3::analyzer::InputFormat::c3scope);
  try {
    c3::tracedb::OutputFile out("-o", "/dev/null", {});
    c3::exporter::export_perfetto(file.path(), out);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): refused as bad input
  }
  return 0;
}
