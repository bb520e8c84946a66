#include "c3/analyzer/pipeline.h"

#include <malloc.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>

#include "c3/analyzer/load.h"
#include "c3/common/workers.h"

namespace c3::analyzer {
namespace {

// The summaries of one input: read from a summary file, or mapped from its trace (converted
// when it is a PyTorch or Nsight file, then loaded alone and freed before the next).
std::vector<RankSummary> map_input(const Input& in, const PipelineOptions& o, std::string* csv) {
  if (in.format == InputFormat::summary) {
    // A summary's numbers were computed with its options: mixed with other ones (or with
    // traces mapped now) they would not add up, so they must be the same.
    SummaryOptions made;
    std::vector<RankSummary> s = read_summary_file(in.path, &made);
    const SummaryOptions& now = o.analyze;
    if (made.range != now.range || made.step != now.step ||
        made.interference.overlap_fraction != now.interference.overlap_fraction ||
        made.interference.min_samples != now.interference.min_samples ||
        made.classification != now.classification || made.hta_rounding != now.hta_rounding) {
      auto describe = [](const SummaryOptions& x) {
        char b[96];
        std::snprintf(b, sizeof b, "--overlap-threshold %g --min-samples %d",
                      x.interference.overlap_fraction, x.interference.min_samples);
        return "--range '" + x.range + "' --step '" + x.step + "' " + b +
               (x.classification == "default" ? "" : " and their own --rules") +
               (x.hta_rounding ? " --hta-rounding" : "");
      };
      throw std::invalid_argument("'" + in.path + "' was summarized with " + describe(made) +
                                  ", this run uses " + describe(now) +
                                  ": give the same options, or analyze its traces again");
    }
    return s;
  }
  OpenOptions oo = o.open;
  oo.progress = nullptr;
  oo.cache_dir.clear();  // a snapshot would hold the whole set; the map reads each file once
  oo.defer_kernel_shapes = false;
  oo.read_once = true;
  OpenedTraces opened = open_traces(std::vector<Input>{in}, oo);
  std::vector<RankSummary> s =
      summarize(opened.trace, o.analyze, [&](const Trace& t, const std::vector<CommOverlap>& rows) {
        if (o.csv) *csv += collectives_csv_rows(t, rows);
      });
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
  while ((got = gzread(f, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(got));
  int err = Z_OK;
  const char* why = gzerror(f, &err);
  const std::string reason = why ? why : "";
  gzclose(f);
  if (got < 0 || (err != Z_OK && err != Z_STREAM_END)) {
    throw std::invalid_argument("'" + path + "': cannot read the summary: " + reason);
  }
  return summaries_from_json(text, path, made_with);
}

std::vector<std::string> input_names(const std::vector<Input>& inputs) {
  std::vector<std::string> names;
  names.reserve(inputs.size());
  for (const Input& in : inputs) names.push_back(in.path);
  return names;
}

Report run_pipeline(const std::vector<Input>& inputs, const PipelineOptions& o) {
  return reduce(map_inputs(inputs, o), input_names(inputs), o.analyze, o.analyze.align);
}

std::vector<RankSummary> map_inputs(const std::vector<Input>& inputs, const PipelineOptions& o) {
  const size_t n = inputs.size();
  std::vector<std::vector<RankSummary>> parts(n);
  std::vector<std::string> csv(n);
  std::vector<bool> done(n, false);
  size_t flushed = 0, finished = 0;
  std::mutex mu;
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  auto worker = [&] {
    for (size_t i = next++; i < n && !failed; i = next++) {
      if (o.open.cancel && *o.open.cancel) {
        failed = true;
        const std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::make_exception_ptr(Cancelled());
        return;
      }
      try {
        std::string rows;
        std::vector<RankSummary> s = map_input(inputs[i], o, &rows);
        // The trace is freed now, but its pages sit among the summaries kept so far: hand the
        // free ones back, or the peak grows with the job instead of with the largest trace.
        malloc_trim(0);
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
  common::run_workers(n, worker, o.workers > 0 ? static_cast<unsigned>(o.workers) : 0);
  if (error) std::rethrow_exception(error);
  std::vector<RankSummary> out;
  for (size_t i = 0; i < n; ++i) {
    for (RankSummary& s : parts[i]) out.push_back(std::move(s));
    parts[i] = {};
  }
  return out;
}

}  // namespace c3::analyzer
