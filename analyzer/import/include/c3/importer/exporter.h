// Exporters: c3scope traces to other tools' formats.
#pragma once

#include <cstdint>
#include <string>

namespace c3::importer {

struct ExportStats {
  int64_t gpu_events = 0, cpu_events = 0, flows = 0;
};

// Chrome trace JSON for ui.perfetto.dev / chrome://tracing: process, GPU and stream tracks,
// NVTX ranges and marks, CUDA API calls, NCCL calls with their arguments, flow arrows from API
// calls and NCCL calls to their GPU work. Written to a temporary file renamed into place.
// Throws tracedb::ReadError for a bad trace, std::invalid_argument when `out` cannot be written.
ExportStats export_perfetto(const std::string& trace, const std::string& out);

}  // namespace c3::importer
