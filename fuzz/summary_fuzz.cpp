// Summary files (schema c3scope-summary/3, analyzer/lib/src/summary/summary_json.cpp), an input of
// `c3scope analyze` and of `c3scope compare`: read, reduced and reported as analyze does
// (fuzz/common.h; an accepted summary must also write and read back), then compared with itself
// as compare does, with every report written. Plain JSON in the corpus; gzip files take the
// same zlib path.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "c3/analyzer/compare/compare.h"
#include "c3/analyzer/summary/pipeline.h"
#include "common.h"

namespace {

volatile size_t g_sink = 0;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace c3::analyzer;
  const c3::fuzz::TempFile file(std::string_view(reinterpret_cast<const char*>(data), size),
                                ".summary.json");
  c3::fuzz::analyze(file.path(), InputFormat::summary);
  JobRun run;
  run.name = file.path();
  try {
    run.ranks = read_summary_file(file.path(), &run.made_with);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  Comparison c;
  try {
    c = compare(&run, run, CompareOptions{});
  } catch (const std::invalid_argument&) {  // totals past int64 (the reduce's refusal)
    return 0;
  }
  g_sink = g_sink + compare_text(c, true).size() + compare_markdown(c, 4096).size() +
           compare_junit(c).size() + compare_json(c).size() + static_cast<size_t>(c.exit_code());
  return 0;
}
