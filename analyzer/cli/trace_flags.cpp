#include "trace_flags.h"

#include "c3/analyzer/metrics/classify.h"

namespace c3::cli {

void add_trace_flags(CLI::App* cmd, TraceFlags& flags) {
  cmd->add_option("--rules", flags.rules,
                  "Classification rules file (lines 'CLASS REGEX'; docs/analyze.md)");
  cmd->add_flag("--hta-rounding", flags.hta_rounding,
                "PyTorch traces with fractional-microsecond timestamps: round as Holistic Trace "
                "Analysis does (docs/analyze.md)");
}

void apply_trace_flags(const TraceFlags& flags, analyzer::PipelineOptions& po) {
  if (!flags.rules.empty()) {
    po.open.rules = analyzer::Rules::from_file(flags.rules);
    po.open.rules_tag = flags.rules;
    po.analyze.classification = analyzer::rules_text(po.open.rules);
  }
  po.open.hta_rounding = flags.hta_rounding;
  po.analyze.hta_rounding = flags.hta_rounding;
  // Given flags must match a summary input's options; the others take the summary's.
  po.given.rules = !flags.rules.empty();
  po.given.hta_rounding = flags.hta_rounding;
}

}  // namespace c3::cli
