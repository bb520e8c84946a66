// The whole analysis of a job (docs/architecture.md "The analysis pipeline"): open
// each input (open.h) on its own, map it to rank summaries (summary.h), reduce them to the job
// report. Inputs are mapped one at a time per worker thread, so peak memory is the largest
// traces in flight plus the summaries, not the job (unless PipelineOptions::keep keeps them); a
// summary file given as an input is read, not recomputed.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "c3/analyzer/open/open.h"
#include "c3/analyzer/report/report.h"
#include "c3/analyzer/summary/summary.h"

namespace c3::analyzer {

struct PipelineOptions {
  AnalyzeOptions analyze;
  // Which of `analyze`'s options the user gave (the others are defaults). A summary input was
  // made with options of its own: they are the job's, except that one given must be the same
  // (docs/analyze.md "Summaries").
  struct Given {
    bool range = false, step = false, overlap_fraction = false, min_samples = false, rules = false,
         hta_rounding = false, kernel_wait = false, micro_idle = false, runtime_cutoff = false,
         delay_cutoff = false, queue_limit = false, what_if = false, sequence_length = false;
  } given;
  OpenOptions open;  // rules, importer options, cancel (its progress is not used)
  int workers = 0;   // 0: one per core
  // The per-collective CSV rows of each input, in input order, as soon as the inputs before it
  // are done (they are never held for the whole job).
  std::function<void(const std::string& rows)> csv;
  // (inputs mapped, inputs, the input just mapped)
  std::function<void(size_t, size_t, const std::string&)> progress;
  // Given: each trace input's Trace, once summarized, is handed over (input index, the trace)
  // instead of freed (the Python module keeps the rows of the job it opened). Called on the
  // worker threads, each index once.
  std::function<void(size_t, Trace&&)> keep;
  // Given: each trace input's per-collective rows (summarize's CommRows: the rows `csv` is made
  // of) with the input's index, before `keep`; called once per process of the input (the Python
  // module makes its CSV from them and the kept trace only when asked).
  std::function<void(size_t, const Trace&, const std::vector<CommOverlap>&)> comm;
  // Given: each input's summaries as soon as they are made (input index, its ranks), on the
  // worker threads, each index once; it may take them over, whole or in part (c3scope-mpi packs
  // what it sends as each input is mapped, so a process never holds its share's summaries
  // whole). An exception is that input's error.
  std::function<void(size_t, std::vector<RankSummary>&)> mapped;
};

// The classification rules (a rules file; empty: the built-in rules) and HTA rounding set on
// `po` as a user gave them (--rules and --hta-rounding of analyze and compare, the Python
// module's open), with which of them were given. Throws std::exception with the line to print
// when the rules file cannot be read or does not parse.
void set_trace_options(PipelineOptions& po, const std::string& rules_file, bool hta_rounding);

// The map: every input's rank summaries, in input order. Summary files are read first: the
// options they were made with replace those `o.given` does not name, and the traces are mapped
// with the result, which `*used` (optional) receives for the reduce and a --summary output.
// Throws what open_traces, summarize and summaries_from_json throw (the first error of any input;
// the other workers stop), and std::invalid_argument naming the summary and the option when a
// given option, or another summary's, differs from a summary's.
std::vector<RankSummary> map_inputs(const std::vector<Input>& inputs, const PipelineOptions& o,
                                    AnalyzeOptions* used = nullptr);

// The job's options from its summary inputs': (path, the options it was made with) of each, in
// input order; `traces_too`: the job has trace inputs as well (map_inputs' rules). Throws
// std::invalid_argument naming the summary and the option that conflicts.
void adopt_summary_options(PipelineOptions& o,
                           const std::vector<std::pair<std::string, SummaryOptions>>& made,
                           bool traces_too);

// The map, then the reduce of its summaries (which takes their steps over): the job report.
Report run_pipeline(const std::vector<Input>& inputs, const PipelineOptions& o);

// The reduce's names of the inputs.
std::vector<std::string> input_names(const std::vector<Input>& inputs);

// One summary file's ranks (summary.h); throws std::invalid_argument naming the file.
// `made_with` (optional) gets the options it was computed with.
std::vector<RankSummary> read_summary_file(const std::string& path,
                                           SummaryOptions* made_with = nullptr);

}  // namespace c3::analyzer
