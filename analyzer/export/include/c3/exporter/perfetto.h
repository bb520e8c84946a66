// The Perfetto exporter: a c3scope trace as Chrome trace JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace c3::tracedb {
class OutputFile;
}

namespace c3::exporter {

struct ExportStats {
  int64_t gpu_events = 0, cpu_events = 0, flows = 0;
  // PyTorch CPU ops the imports did not keep (stats import_cpu_ops_not_kept): the trace has no
  // table for them, so the export has none of them either.
  int64_t cpu_ops_not_kept = 0;
};

// Chrome trace JSON for ui.perfetto.dev / chrome://tracing: process, GPU and stream tracks,
// NVTX ranges and marks, CUDA API calls, NCCL calls with their arguments, flow arrows from API
// calls and NCCL calls to their GPU work. Written into `out` and committed (moved into place)
// at the end. Throws tracedb::ReadError for a bad trace, tracedb::OutputError when `out` cannot
// be written.
ExportStats export_perfetto(const std::string& trace, tracedb::OutputFile& out);

// One trace of several exported into one file (the ranks of a job): `offset_ns` per process row
// (process.id) is added to its times, the clock alignment analyze works out (align_clocks).
struct ExportInput {
  std::string trace;
  std::map<int64_t, int64_t> offset_ns;
};
// Several traces into one JSON: each file's processes get GPU pids and flow ids of their own,
// and a host pid already taken by another file a free one (the real pid in the process name).
ExportStats export_perfetto(const std::vector<ExportInput>& inputs, tracedb::OutputFile& out);

}  // namespace c3::exporter
