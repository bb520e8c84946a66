// c3scope compare: a candidate run against a baseline (traces, folders, summaries or c3bench JSON),
// metric by metric, with budgets; text, Markdown, JUnit and JSON reports; exit codes for CI
// (docs/compare.md).
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <tuple>

#include "c3/analyzer/compare/compare.h"
#include "c3/analyzer/metrics/pattern.h"
#include "c3/analyzer/summary/distributed.h"
#include "c3/analyzer/summary/pipeline.h"
#include "commands.h"
#include "output.h"
#include "trace_flags.h"

namespace c3::cli {
namespace {

constexpr int kExitRegression = 1;
constexpr int kExitInconclusive = 3;

}  // namespace

Action add_compare(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "compare",
      "Compare a candidate run with a baseline, metric by metric (step time, exposed "
      "communication, collectives, kernels, skew, c3bench cases): regressions with statistics, "
      "budgets, Markdown/JUnit/JSON reports and CI exit codes (0 no regression, 1 regression or "
      "budget broken, 2 bad input, 3 inconclusive)");
  struct Opts {
    std::vector<std::string> runs;
    std::string step, budget, threshold = "5", md, junit, json;
    double alpha = 0.01;
    int top = 20, min_samples = 5;
    bool force = false;
    TraceFlags trace;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("runs", o->runs,
                  "BASELINE CANDIDATE (or only CANDIDATE with --budget): traces, folders of "
                  "traces, summary files (analyze --summary) or c3bench JSON results")
      ->required()
      ->expected(1, 2);
  cmd->add_option("--step", o->step,
                  "Steps (the samples) are the NVTX / annotation ranges whose name matches this "
                  "regular expression (default: ProfilerStep#N)");
  cmd->add_option("--budget", o->budget,
                  "Budgets file: limits ('exposed_comm_ms <= 12') and thresholds ('threshold "
                  "step_time 3%'), docs/compare.md");
  cmd->add_option("--threshold", o->threshold,
                  "Relative change that counts as a regression when significant, in percent")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "Significance level after the Benjamini-Hochberg correction")
      ->capture_default_str()
      ->check(CLI::Range(1e-12, 0.5));
  cmd->add_option("--min-samples", o->min_samples,
                  "Fewer steps (samples) than this on a side make a metric inconclusive")
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 30));
  cmd->add_option("--top", o->top,
                  "Kernel signatures and interference rows compared (by time), and rows per "
                  "report section")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--md", o->md, "Write a GitHub-flavoured Markdown report (under 1 MiB) here");
  cmd->add_option("--junit", o->junit, "Write JUnit XML (one testcase per metric and budget) here");
  cmd->add_option("--json", o->json, "Write the comparison as JSON (schema c3scope-compare/1)");
  add_trace_flags(cmd, o->trace);
  add_force_flag(cmd, o->force);
  return [o] {
    analyzer::CompareOptions co;
    analyzer::Budgets budgets;
    analyzer::PipelineOptions po;
    std::string failure;
    try {
      if (o->runs.size() == 1 && o->budget.empty())
        throw std::invalid_argument(
            "one run given: compare BASELINE CANDIDATE, or check budgets with --budget FILE "
            "CANDIDATE");
      co.threshold = analyzer::percent_arg(o->threshold, "--threshold");
      co.decide.alpha = o->alpha;
      co.decide.min_samples = o->min_samples;
      co.top = o->top;
      if (!o->step.empty()) analyzer::Pattern::compile(o->step, "--step");
      if (!o->budget.empty()) {
        budgets = analyzer::read_budgets(o->budget);
        co.budgets = &budgets;
      }
      apply_trace_flags(o->trace, po);
    } catch (const std::exception& e) {
      failure = std::string("compare: ") + e.what();
    }
    // Under c3scope-mpi, files read here (budgets, rules) may differ between machines.
    if (failed_anywhere(g_comm, failure)) return kExitUsage;
    po.analyze.step = o->step;
    // Installed before any output is opened, so no signal finds a temporary nothing removes.
    po.open.cancel = stop_on_signals();
    tracedb::OutputRules rules;
    rules.force = o->force;
    rules.inputs = o->runs;
    for (const std::string* in : {&o->budget, &o->trace.rules}) {
      if (!in->empty()) rules.inputs.push_back(*in);
    }
    // The files inside folders given as runs are inputs too (never replaced, even with --force);
    // a run that does not resolve is reported when it is opened.
    for (const std::string& run : o->runs) {
      if (g_comm != nullptr && g_comm->rank() != 0) break;  // process 0's outputs only
      try {
        for (const analyzer::Input& in : analyzer::resolve_inputs({run}))
          rules.inputs.push_back(in.path);
      } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): reported below
      }
    }
    // Refused together when two name one file; committed together at the end.
    // Under c3scope-mpi, process 0 alone opens the outputs and reports; every process maps
    // its share of each run's traces (docs/scale.md).
    analyzer::Comm* comm = g_comm;
    const bool root = comm == nullptr || comm->rank() == 0;
    std::unique_ptr<tracedb::OutputSet> outputs;
    if (root) {
      outputs = open_outputs("compare",
                             {{"--md", o->md}, {"--junit", o->junit}, {"--json", o->json}}, rules);
    }
    if (comm != nullptr ? comm->any(root && !outputs) : !outputs) return kExitUsage;
    tracedb::OutputFile* md = root ? outputs->file("--md") : nullptr;
    tracedb::OutputFile* junit = root ? outputs->file("--junit") : nullptr;
    tracedb::OutputFile* json = root ? outputs->file("--json") : nullptr;
    std::unique_ptr<analyzer::JobRun> baseline;
    analyzer::JobRun candidate;
    auto open = [&](const std::string& run) {
      return comm != nullptr ? analyzer::open_run(*comm, run, po) : analyzer::open_run(run, po);
    };
    try {
      if (o->runs.size() == 2) {
        baseline = std::make_unique<analyzer::JobRun>(open(o->runs[0]));
        candidate = open(o->runs[1]);
      } else {
        candidate = open(o->runs[0]);
      }
    } catch (const analyzer::Cancelled&) {
      error_line("compare: interrupted; nothing was written");
      return 130;
    } catch (const std::exception& e) {
      // One process's own error ends the job; an agreed one every process reports alike.
      if (comm != nullptr && dynamic_cast<const analyzer::AgreedError*>(&e) == nullptr)
        comm->fail(std::string("compare: ") + e.what());
      error_line(std::string("compare: ") + e.what());
      return kExitUsage;
    }
    if (!root) return kExitOk;  // process 0's code is the job's
    if (!o->step.empty()) {
      for (const analyzer::JobRun* r : {baseline.get(), &candidate}) {
        if (r == nullptr) continue;
        bool any = false;
        for (const auto& s : r->ranks) any = any || !s.steps.empty();
        if (!any) {
          error_line("compare: --step '" + o->step + "' matches no NVTX or annotation range in " +
                     r->name);
          return kExitUsage;
        }
      }
    }
    analyzer::Comparison c;
    try {
      c = analyzer::compare(baseline.get(), candidate, co);
    } catch (const std::exception& e) {
      // Runs that opened but cannot be compared (summaries whose numbers do not add up): the line
      // names the command and the runs.
      error_line("compare: " + tracedb::printable(baseline ? baseline->name + " against " : "") +
                 tracedb::printable(candidate.name) + ": " + e.what());
      return kExitUsage;
    }
    if (po.open.cancel->load()) {  // a signal after the runs were opened: nothing is written
      error_line("compare: interrupted; nothing was written");
      return 130;
    }
    // (Under mpirun standard output is the launcher's pseudo-terminal, not the user's: no color.)
    const bool color =
        ::isatty(STDOUT_FILENO) != 0 && std::getenv("NO_COLOR") == nullptr && comm == nullptr;
    // The text report only when no output file is standard output (--json /dev/stdout | jq).
    if (!outputs->to_stdout()) {
      const std::string text = analyzer::compare_text(c, color);
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
    int rc = c.exit_code();
    if (md != nullptr) md->write(analyzer::compare_markdown(c));
    if (junit != nullptr) junit->write(analyzer::compare_junit(c));
    if (json != nullptr) json->write(analyzer::compare_json(c));
    if (!commit_outputs("compare", *outputs)) rc = kExitUsage;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
      error_line("compare: cannot write the report to standard output");
      rc = kExitUsage;
    }
    static_assert(kExitRegression == 1 && kExitInconclusive == 3);
    return rc;
  };
}

}  // namespace c3::cli
