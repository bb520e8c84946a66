// c3scope export: traces to Chrome trace JSON for ui.perfetto.dev or chrome://tracing. Several
// traces (the ranks of a job) go into one file, their clocks aligned as analyze aligns them.
#include <iostream>

#include "c3/analyzer/metrics/cross_rank.h"
#include "c3/analyzer/open/load.h"
#include "c3/analyzer/open/open.h"
#include "c3/exporter/perfetto.h"
#include "c3/tracedb/reader.h"
#include "commands.h"
#include "output.h"

namespace c3::cli {

Action add_export(CLI::App& app) {
  auto* cmd = app.add_subcommand("export",
                                 "Write a trace as Chrome trace JSON (open it in ui.perfetto.dev)");
  auto in = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("perfetto");
  cmd->add_option("traces", *in,
                  "Traces or folders (c3scope, PyTorch profiler JSON or Nsight Systems export); "
                  "several go into one file, their clocks aligned as analyze aligns them")
      ->required();
  cmd->add_option("-o,--output", *out,
                  "The JSON file to write (an existing file only with --force)")
      ->required();
  auto force = std::make_shared<bool>(false);
  add_force_flag(cmd, *force);
  cmd->add_option("--format", *format, "Output format: perfetto (Chrome trace JSON)")
      ->capture_default_str();
  return [in, out, format, force] {
    if (*format != "perfetto" && *format != "chrome") {
      error_line("export: --format '" + *format + "': expected perfetto");
      return kExitUsage;
    }
    // Errors name the files the user gave, never their temporary conversions.
    analyzer::TraceFiles tf;
    auto named = [&tf](std::string msg) {
      for (size_t i = 0; tf.temp && i < tf.files.size(); ++i) {
        if (tf.files[i] == tf.origins[i]) continue;
        for (size_t at = msg.find(tf.files[i]); at != std::string::npos;
             at = msg.find(tf.files[i], at)) {
          msg.replace(at, tf.files[i].size(), tf.origins[i] + " (converted)");
          at += tf.origins[i].size();
        }
      }
      return msg;
    };
    try {
      // Opened as analyze opens it (analyzer/open.h): a PyTorch or Nsight file is converted
      // into a temporary trace first.
      // A signal removes the output's temporary and the conversions' (tracedb/output_file.h).
      tracedb::install_output_cleanup();
      std::vector<std::string> notes;
      const std::vector<analyzer::Input> inputs = analyzer::resolve_inputs(*in, &notes);
      for (const std::string& n : notes) error_line("export: warning: " + n);
      if (inputs.empty()) {
        error_line("export: no traces in the given paths");
        return kExitUsage;
      }
      // The output is checked (never an input, an existing file only with --force) before the
      // conversion's work.
      tracedb::OutputRules rules;
      rules.force = *force;
      rules.inputs = *in;
      for (const analyzer::Input& i : inputs) rules.inputs.push_back(i.path);
      tracedb::OutputFile file("-o", *out, rules);
      tf = analyzer::convert_inputs(inputs, {});
      std::vector<exporter::ExportInput> exports;
      for (const std::string& t : tf.files) exports.push_back({t, {}});
      // Processes in all: several (files, or one file holding several ranks) are aligned.
      int64_t processes = 0;
      for (const std::string& t : tf.files) {
        const auto r = tracedb::Reader::open(t);
        auto q = r->query("SELECT COUNT(*) FROM process");
        if (q.step()) processes += q.i64(0);
      }
      if (processes > 1) {
        // The ranks' clocks, aligned by matched collectives (or wall-clock anchors) as analyze
        // and the GUI align them; each process's offset goes with its rows. (The load holds
        // every activity of every trace: about 50 bytes each.)
        analyzer::LoadOptions lo;
        lo.defer_kernel_shapes = true;
        analyzer::Trace t = analyzer::load(tf.files, lo);
        analyzer::align_clocks(t);
        for (const analyzer::Process& p : t.processes) {
          for (size_t k = 0; k < tf.files.size(); ++k) {
            if (p.source == tf.files[k] && p.offset_ns != 0)
              exports[k].offset_ns[p.db_id] = p.offset_ns;
          }
        }
      }
      const auto st = exporter::export_perfetto(exports, file);
      // On stderr when the JSON itself went to standard output (export -o /dev/stdout | jq).
      std::ostream& said = file.to_stdout() ? std::cerr : std::cout;
      said << "wrote " << *out << ": " << tf.files.size() << " trace(s), " << st.gpu_events
           << " GPU events, " << st.cpu_events << " host events, " << st.flows
           << " flow arrows (open it in ui.perfetto.dev)\n";
      if (st.cpu_ops_not_kept > 0) {
        said << "note: " << st.cpu_ops_not_kept
             << " PyTorch CPU op(s) (cpu_op, python_function) are not in the export: c3scope's "
                "trace has no table for CPU ops, so the import dropped them (user annotations, "
                "ProfilerStep#N ranges and CUDA API calls are kept)\n";
      }
    } catch (const std::exception& e) {
      error_line("export: " + named(e.what()));
      return kExitUsage;
    }
    return kExitOk;
  };
}

}  // namespace c3::cli
