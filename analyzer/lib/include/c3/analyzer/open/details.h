// Everything a trace file holds about one activity or collective call, read on demand (the
// columnar Trace keeps only what the metrics need): a kernel's launch shape in x/y/z, registers,
// shared and local memory, launch type, graph; a copy's kind, memory kinds, devices, channel; the
// API call that launched it (by correlation id) and the NCCL call's arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

struct ApiCall {
  std::string name;
  int64_t thread = 0;
  int64_t start = 0, end = 0;  // trace clock of the process (no alignment offset)
  int64_t correlation = 0;
};

struct Details {
  std::vector<std::pair<std::string, std::string>> fields;  // label, value (display order)
  std::optional<ApiCall> api;                               // the launching API call
  std::optional<ApiCall> host_call;  // a collective's NCCL call on the host (name = op)
  std::optional<KernelShape> shape;  // a kernel's launch shape, from its row
};

// Activity row `i` of `t`, looked up in `db_path` (the trace file of its process, which may
// differ from Process::source for imported traces). Unknown rows give only the in-memory fields.
// Throws tracedb::ReadError when the file cannot be opened.
Details activity_details(const Trace& t, size_t i, const std::string& db_path);
// Collective `c` of `t`: its NCCL arguments from `db_path`.
Details collective_details(const Trace& t, size_t c, const std::string& db_path);

// NVTX range `g` of `t`: kind, category, colour, payload, end thread, whether it was closed.
Details range_details(const Trace& t, size_t g, const std::string& db_path);

}  // namespace c3::analyzer
