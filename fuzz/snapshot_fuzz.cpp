// Trace snapshots (analyzer/lib/src/open/cache.cpp): a damaged snapshot must be refused or load a
// trace that the analysis can use. The key is "fuzz" (the seeds are written with it, by
// c3_fuzz_make_snapshot); a loaded trace is classified and analyzed as open_traces does after
// load_cache.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/open/cache.h"
#include "common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const c3::fuzz::TempFile file(std::string_view(reinterpret_cast<const char*>(data), size),
                                ".c3cache");
  std::optional<c3::analyzer::Trace> t = c3::analyzer::load_cache(file.path(), "fuzz");
  if (!t) return 0;
  // load_cache bounds times as the loader does: the analysis must not overflow on what it
  // accepts (fuzz/regressions/snapshot/activity-time-overflow, activity-time-sum-overflow).
  c3::analyzer::SummaryOptions o;
  std::vector<c3::analyzer::RankSummary> summaries;
  try {
    summaries = c3::analyzer::summarize(*t, o);
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): reported as bad input
    return 0;
  }
  c3::fuzz::reduce_and_report(std::move(summaries), {file.path()}, o);
  return 0;
}
