// The flags of the commands that open traces through the pipeline (analyze, compare): the
// classification rules and HTA rounding, said and applied one way.
#pragma once

#include <string>

#include "c3/analyzer/summary/pipeline.h"
#include "commands.h"

namespace c3::cli {

struct TraceFlags {
  std::string rules;  // a classification rules file; empty: the built-in rules
  bool hta_rounding = false;
};

// Registers --rules and --hta-rounding.
void add_trace_flags(CLI::App* cmd, TraceFlags& flags);

// Sets what the flags say on the pipeline's options, and which were given. Throws std::exception
// with the line to print when the rules file cannot be read or does not parse.
void apply_trace_flags(const TraceFlags& flags, analyzer::PipelineOptions& po);

}  // namespace c3::cli
