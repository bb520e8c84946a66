// Loading trace databases (the collector's, or an importer's) into a Trace.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

// Expands the command line's inputs: files as given, folders to their *.sqlite files (sorted).
// Throws std::invalid_argument naming a path that does not exist or a folder without traces.
std::vector<std::string> expand_inputs(const std::vector<std::string>& paths);

struct LoadOptions {
  Rules rules = Rules::defaults();
  // For a progress bar: called with (GPU activity rows loaded, rows in all files) as loading
  // goes (every million rows and after each file).
  std::function<void(int64_t, int64_t)> progress;
  // Leaves kernel launch shapes (grid, block, registers, shared memory) and launch delays for
  // load_kernel_shapes: a timeline needs neither, and their nine columns are half of SQLite's
  // decoding time. Kernels get pending shape indices (Activities::shape) until then.
  bool defer_kernel_shapes = false;
  // Reads each GPU row's launch call (Activities::call_*) from files with API calls; off, they
  // are left out (what analyze read before issue 25: its benchmark's baseline).
  bool launch_calls = true;
};

// Loads every process of every file: activities (kernels, memcpy, memset), devices,
// collectives with their linked GPU work, NVTX ranges. Classifies the activities and sorts
// them. Throws tracedb::ReadError for a file that is not a readable trace.
Trace load(const std::vector<std::string>& files, const LoadOptions& options = {});

// Completes a deferred load (Trace::pending_shapes): reads the kernels' launch shapes and launch
// delays, files in parallel. Writes only Trace::shapes, Activities::shape and launch_delays,
// and only once every file has been read (an exception, e.g. from `options.progress` to
// cancel, leaves the trace as it was). Throws tracedb::ReadError when a file cannot be read or
// has changed since it was loaded. `options.progress` gets (kernel rows read, kernel rows).
void load_kernel_shapes(Trace& t, const LoadOptions& options = {});

}  // namespace c3::analyzer
