#include "c3/analyzer/summary/pipeline.h"

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/open/load.h"
#include "c3/common/workers.h"
#include "json_scan.h"

namespace c3::analyzer {
namespace {

// The options as a summary records them, in a refusal.
std::string option_text(const SummaryOptions& x, const char* which) {
  const std::string w = which;
  if (w == "--range") return "--range '" + x.range + "'";
  if (w == "--step") return "--step '" + x.step + "'";
  char b[64];
  if (w == "--overlap-threshold") {
    std::snprintf(b, sizeof b, "--overlap-threshold %g", x.interference.overlap_fraction);
    return b;
  }
  if (w == "--min-samples") return "--min-samples " + std::to_string(x.interference.min_samples);
  if (w == "--rules")
    return x.classification == "default" ? "the built-in rules" : "its own --rules";
  auto us = [&](int64_t ns) {
    std::snprintf(b, sizeof b, " %g", static_cast<double>(ns) / 1e3);
    return w + b;
  };
  if (w == "--kernel-wait-us") return us(x.idle.kernel_wait_ns);
  if (w == "--micro-idle-us") return us(x.idle.micro_ns);
  if (w == "--runtime-cutoff-us") return us(x.launch.runtime_cutoff_ns);
  if (w == "--delay-cutoff-us") return us(x.launch.delay_cutoff_ns);
  if (w == "--queue-limit") return "--queue-limit " + std::to_string(x.queue.limit);
  if (w == "--sequence-length") return "--sequence-length " + std::to_string(x.sequences.length);
  if (w == "--what-if") {
    std::string t;
    for (const WhatIf& x1 : x.what_ifs)
      t += (t.empty() ? "" : " ") + ("--what-if '" + x1.text + "'");
    return t.empty() ? "no --what-if" : t;
  }
  return x.hta_rounding ? "--hta-rounding" : "no --hta-rounding";
}

// The options in which `a` and `b` differ ("--range", ...), in the order of the flags.
std::vector<const char*> differences(const SummaryOptions& a, const SummaryOptions& b) {
  std::vector<const char*> out;
  if (a.range != b.range) out.push_back("--range");
  if (a.step != b.step) out.push_back("--step");
  if (a.interference.overlap_fraction != b.interference.overlap_fraction)
    out.push_back("--overlap-threshold");
  if (a.interference.min_samples != b.interference.min_samples) out.push_back("--min-samples");
  if (a.classification != b.classification) out.push_back("--rules");
  if (a.hta_rounding != b.hta_rounding) out.push_back("--hta-rounding");
  if (a.idle.kernel_wait_ns != b.idle.kernel_wait_ns) out.push_back("--kernel-wait-us");
  if (a.idle.micro_ns != b.idle.micro_ns) out.push_back("--micro-idle-us");
  if (a.launch.runtime_cutoff_ns != b.launch.runtime_cutoff_ns)
    out.push_back("--runtime-cutoff-us");
  if (a.launch.delay_cutoff_ns != b.launch.delay_cutoff_ns) out.push_back("--delay-cutoff-us");
  if (a.queue.limit != b.queue.limit) out.push_back("--queue-limit");
  if (a.sequences.length != b.sequences.length) out.push_back("--sequence-length");
  auto texts = [](const SummaryOptions& x) {
    std::vector<std::string> v;
    for (const WhatIf& w : x.what_ifs) v.push_back(w.text);
    return v;
  };
  if (texts(a) != texts(b)) out.push_back("--what-if");
  return out;
}

bool given(const PipelineOptions::Given& g, const std::string& flag) {
  if (flag == "--range") return g.range;
  if (flag == "--step") return g.step;
  if (flag == "--overlap-threshold") return g.overlap_fraction;
  if (flag == "--min-samples") return g.min_samples;
  if (flag == "--rules") return g.rules;
  if (flag == "--kernel-wait-us") return g.kernel_wait;
  if (flag == "--micro-idle-us") return g.micro_idle;
  if (flag == "--runtime-cutoff-us") return g.runtime_cutoff;
  if (flag == "--delay-cutoff-us") return g.delay_cutoff;
  if (flag == "--queue-limit") return g.queue_limit;
  if (flag == "--what-if") return g.what_if;
  if (flag == "--sequence-length") return g.sequence_length;
  return g.hta_rounding;
}

// The options of the job: the ones given, and a summary input's own for the others (the first
// summary's; every summary must have been made with the same, since their numbers are added).
// Throws std::invalid_argument naming the summary and the option that conflicts.
void adopt(PipelineOptions& o, const SummaryOptions& made, const std::string& path, bool first,
           const std::string& first_path, bool traces_too) {
  for (const char* flag : differences(made, o.analyze)) {
    std::string m = "'" + path + "' was summarized with " + option_text(made, flag);
    if (given(o.given, flag)) {
      m += ", this run gives ";
      m += option_text(o.analyze, flag);
      m += ": drop ";
      m += flag;
      m += " to use the summary's, or analyze its traces again";
      throw std::invalid_argument(m);
    }
    if (!first) {
      m += ", '";
      m += first_path;
      m += "' with ";
      m += option_text(o.analyze, flag);
      m += ": summaries made with other options do not add up; analyze their traces again with "
           "the same options";
      throw std::invalid_argument(m);
    }
  }
  if (!first) return;
  if (made.classification != o.analyze.classification && traces_too) {
    // The traces of this run are classified by the summary's rules, read back from their text.
    Rules rules = Rules::defaults();
    bool read_back = made.classification == "default";
    if (!read_back) {
      try {
        rules = Rules::parse("default off\n" + made.classification, path);
        read_back = rules_text(rules) == made.classification;
      } catch (const std::invalid_argument&) {
        read_back = false;
      }
    }
    if (!read_back) {
      throw std::invalid_argument("'" + path +
                                  "' was summarized with its own --rules, which cannot be read "
                                  "back: give the same --rules file");
    }
    o.open.rules = std::move(rules);
    o.open.rules_tag = made.classification;
  }
  o.analyze.range = made.range;
  o.analyze.step = made.step;
  o.analyze.interference = made.interference;
  o.analyze.classification = made.classification;
  o.analyze.hta_rounding = made.hta_rounding;
  o.open.hta_rounding = made.hta_rounding;
  o.analyze.idle = made.idle;
  o.analyze.launch = made.launch;
  o.analyze.queue = made.queue;
  o.analyze.sequences = made.sequences;
  o.analyze.what_ifs = made.what_ifs;
}

// The summaries of one input: read from a summary file, or mapped from its trace (a PyTorch or
// Nsight file read straight into memory, OpenOptions::read_once), loaded alone and freed before
// the next.
std::vector<RankSummary> map_input(const Input& in, size_t index, const PipelineOptions& o,
                                   std::string* csv, SummaryOptions* made) {
  std::vector<RankSummary> s;
  if (in.format == InputFormat::summary) {
    s = read_summary_file(in.path, made);
  } else {
    OpenOptions oo = o.open;
    oo.progress = nullptr;
    oo.cache_dir.clear();  // a snapshot would hold the whole set; the map reads each file once
    oo.defer_kernel_shapes = false;
    oo.read_once = true;
    OpenedTraces opened = open_traces(std::vector<Input>{in}, oo);
    s = summarize(opened.trace, o.analyze,
                  [&](const Trace& t, const std::vector<CommOverlap>& rows) {
                    if (o.csv) *csv += collectives_csv_rows(t, rows);
                    if (o.comm) o.comm(index, t, rows);
                  });
    if (o.keep) o.keep(index, std::move(opened.trace));
  }
  for (RankSummary& r : s) r.input = in.path;
  return s;
}

}  // namespace

std::vector<RankSummary> read_summary_file(const std::string& path, SummaryOptions* made_with) {
  // Plain or gzip (zlib reads a plain file as it is).
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) throw std::invalid_argument("'" + path + "': cannot read the file");
  std::string text;
  char buf[1 << 16];
  int got = 0;
  // Whitespace outside strings is dropped as it is read: it means nothing in JSON, and a file of
  // padding (a 500 KB gzip of 512 MiB of spaces) would otherwise fill memory up to the cap. Past
  // the cap summaries_from_json refuses, reading on would only fill memory (a gzip bomb).
  JsonScan scan;
  while ((got = gzread(f, buf, sizeof buf)) > 0 && text.size() <= kSummaryTextLimit) {
    for (int i = 0; i < got; ++i) {
      if (scan.feed(buf[i])) text.push_back(buf[i]);
    }
  }
  int err = Z_OK;
  const char* why = gzerror(f, &err);
  const std::string reason = why ? why : "";
  gzclose(f);
  if (got < 0 || (err != Z_OK && err != Z_STREAM_END)) {
    throw std::invalid_argument("'" + path + "': cannot read the summary: " + reason);
  }
  return summaries_from_json(text, path, made_with);
}

void set_trace_options(PipelineOptions& po, const std::string& rules_file, bool hta_rounding) {
  if (!rules_file.empty()) {
    po.open.rules = Rules::from_file(rules_file);
    po.open.rules_tag = rules_file;
    po.analyze.classification = rules_text(po.open.rules);
  }
  po.open.hta_rounding = hta_rounding;
  po.analyze.hta_rounding = hta_rounding;
  // Given options must match a summary input's; the others take the summary's.
  po.given.rules = !rules_file.empty();
  po.given.hta_rounding = hta_rounding;
}

void adopt_summary_options(PipelineOptions& o,
                           const std::vector<std::pair<std::string, SummaryOptions>>& made,
                           bool traces_too) {
  for (size_t k = 0; k < made.size(); ++k)
    adopt(o, made[k].second, made[k].first, k == 0, made[0].first, traces_too);
}

std::vector<std::string> input_names(const std::vector<Input>& inputs) {
  std::vector<std::string> names;
  names.reserve(inputs.size());
  for (const Input& in : inputs) names.push_back(in.path);
  return names;
}

Report run_pipeline(const std::vector<Input>& inputs, const PipelineOptions& o) {
  AnalyzeOptions used;
  std::vector<RankSummary> s = map_inputs(inputs, o, &used);
  return reduce(std::move(s), input_names(inputs), used, used.align);
}

std::vector<RankSummary> map_inputs(const std::vector<Input>& inputs, const PipelineOptions& given,
                                    AnalyzeOptions* used) {
  const size_t n = inputs.size();
  // Summary files first: their options are the job's unless given (adopt), and the traces are
  // mapped with the job's.
  PipelineOptions o = given;
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i)
    if (inputs[i].format == InputFormat::summary) order.push_back(i);
  const size_t summaries = order.size();
  for (size_t i = 0; i < n; ++i)
    if (inputs[i].format != InputFormat::summary) order.push_back(i);
  std::vector<std::vector<RankSummary>> parts(n);
  std::vector<SummaryOptions> made(n);
  std::vector<std::string> csv(n);
  std::vector<bool> done(n, false);
  size_t flushed = 0, finished = 0;
  std::mutex mu;
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  // Maps order[from, to) on the workers.
  auto map_range = [&](size_t from, size_t to) {
    std::atomic<size_t> next{from};
    auto worker = [&] {
      for (size_t k = next++; k < to && !failed; k = next++) {
        const size_t i = order[k];
        if (o.open.cancel && *o.open.cancel) {
          failed = true;
          const std::lock_guard<std::mutex> lock(mu);
          if (!error) error = std::make_exception_ptr(Cancelled());
          return;
        }
        try {
          std::string rows;
          std::vector<RankSummary> s = map_input(inputs[i], i, o, &rows, &made[i]);
          if (o.mapped) o.mapped(i, s);
          // The trace is freed now, but its pages sit among the summaries kept so far: hand the
          // free ones back, or the peak grows with the job instead of with the largest trace.
          // Not after the last inputs: the reduce that follows reuses those pages, where pages
          // handed back would be faulted in and cleared again (one trace: 2-3 ms and its faults).
          if (next < to) c3::common::release_free_memory();
          const std::lock_guard<std::mutex> lock(mu);
          parts[i] = std::move(s);
          csv[i] = std::move(rows);
          done[i] = true;
          ++finished;
          // CSV rows go out in input order, as soon as every input before them is done.
          while (flushed < n && done[flushed]) {
            if (o.csv && !csv[flushed].empty()) o.csv(csv[flushed]);
            csv[flushed] = {};
            ++flushed;
          }
          if (o.progress) o.progress(finished, n, inputs[i].path);
        } catch (...) {
          failed = true;
          const std::lock_guard<std::mutex> lock(mu);
          // A signal stops an SQLite statement too (tracedb/harden.h): whatever failed after the
          // cancel is the cancel.
          if (!error) {
            error = o.open.cancel && *o.open.cancel ? std::make_exception_ptr(Cancelled())
                                                    : std::current_exception();
          }
        }
      }
    };
    common::run_workers(to - from, worker, o.workers > 0 ? static_cast<unsigned>(o.workers) : 0);
    if (error) std::rethrow_exception(error);
  };
  map_range(0, summaries);
  // In input order, so that a refusal names the first summary as the reference.
  std::vector<size_t> in_order(order.begin(),
                               order.begin() + static_cast<std::ptrdiff_t>(summaries));
  std::sort(in_order.begin(), in_order.end());
  std::vector<std::pair<std::string, SummaryOptions>> made_in_order;
  made_in_order.reserve(in_order.size());
  for (const size_t i : in_order) made_in_order.emplace_back(inputs[i].path, made[i]);
  adopt_summary_options(o, made_in_order, summaries < n);
  map_range(summaries, n);
  if (used != nullptr) *used = o.analyze;
  std::vector<RankSummary> out;
  for (size_t i = 0; i < n; ++i) {
    for (RankSummary& s : parts[i]) out.push_back(std::move(s));
    parts[i] = {};
  }
  return out;
}

}  // namespace c3::analyzer
