// What a trace holds, in one line for people: "1200 kernels, 40 copies, 36 NCCL calls,
// 965 NVTX ranges, 1300 API calls" (the collector's last line, `c3scope record`'s list).
#pragma once

#include <string>

namespace c3::tracedb {

// The counts of a closed trace file's GPU activities, NCCL calls, NVTX ranges and marks and API
// calls (those that are not 0; kernels always); empty when the file cannot be read.
std::string trace_contents(const std::string& path);

}  // namespace c3::tracedb
