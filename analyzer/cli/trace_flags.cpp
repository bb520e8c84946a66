#include "trace_flags.h"

namespace c3::cli {

void add_trace_flags(CLI::App* cmd, TraceFlags& flags) {
  cmd->add_option("--rules", flags.rules,
                  "Classification rules file (lines 'CLASS REGEX'; docs/analyze.md)");
  cmd->add_flag("--hta-rounding", flags.hta_rounding,
                "PyTorch traces with fractional-microsecond timestamps: round as Holistic Trace "
                "Analysis does (docs/analyze.md)");
}

void apply_trace_flags(const TraceFlags& flags, analyzer::PipelineOptions& po) {
  analyzer::set_trace_options(po, flags.rules, flags.hta_rounding);
}

}  // namespace c3::cli
