// Wall-clock time as c3scope records it: UTC, ISO 8601, to the second ("2026-12-03T14:35:29Z"),
// as in the trace's metadata.created_at and bench_run.started_at.
#pragma once

#include <ctime>
#include <string>

namespace c3::common {

std::string utc_iso8601(std::time_t t);
std::string utc_now_iso8601();

}  // namespace c3::common
