// What a trace holds, in one line for people: "1200 kernels, 40 copies, 36 NCCL calls,
// 965 NVTX events, 1300 API calls" (the collector's last line, `c3scope record`'s list).
#pragma once

#include <cstdint>
#include <string>

namespace c3::tracedb {

class Writer;

struct TraceCounts {
  int64_t kernels = 0, copies = 0, sets = 0, nccl_calls = 0, nvtx = 0, api_calls = 0;
};
// The line: the kinds that are not 0 (kernels always: "0 kernels" says the GPU did nothing).
std::string describe(const TraceCounts& c);
// Counted from a closed trace file (COUNT(*) per table: the tables' own b-tree counts, no
// filter); false when the file cannot be read.
bool count_rows(const std::string& path, TraceCounts* out);
// Counted as the writer wrote them (no reading back: the collector's line at exit).
TraceCounts counts_of(const Writer& w);

}  // namespace c3::tracedb
