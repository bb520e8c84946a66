// Exporters: c3scope traces to other tools' formats.
#pragma once

#include <cstdint>
#include <string>

namespace c3::tracedb {
class OutputFile;
}

namespace c3::importer {

struct ExportStats {
  int64_t gpu_events = 0, cpu_events = 0, flows = 0;
};

// Chrome trace JSON for ui.perfetto.dev / chrome://tracing: process, GPU and stream tracks,
// NVTX ranges and marks, CUDA API calls, NCCL calls with their arguments, flow arrows from API
// calls and NCCL calls to their GPU work. Written into `out` and committed (moved into place)
// at the end. Throws tracedb::ReadError for a bad trace, tracedb::OutputError when `out` cannot
// be written.
ExportStats export_perfetto(const std::string& trace, tracedb::OutputFile& out);

}  // namespace c3::importer
