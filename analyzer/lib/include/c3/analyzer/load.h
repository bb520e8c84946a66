// Loading trace databases (the collector's, or an importer's) into a Trace.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "c3/analyzer/classify.h"
#include "c3/analyzer/trace.h"

namespace c3::analyzer {

// Expands the command line's inputs: files as given, folders to their *.sqlite files (sorted).
// Throws std::invalid_argument naming a path that does not exist or a folder without traces.
std::vector<std::string> expand_inputs(const std::vector<std::string>& paths);

struct LoadOptions {
  Rules rules = Rules::defaults();
  // For a progress bar: called with (GPU activity rows loaded, rows in all files) as loading
  // goes (every million rows and after each file).
  std::function<void(int64_t, int64_t)> progress;
};

// Loads every process of every file: activities (kernels, memcpy, memset), devices,
// collectives with their linked GPU work, NVTX ranges. Classifies the activities and sorts
// them. Throws tracedb::ReadError for a file that is not a readable trace.
Trace load(const std::vector<std::string>& files, const LoadOptions& options = {});

}  // namespace c3::analyzer
