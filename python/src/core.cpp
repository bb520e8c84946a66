// c3scope._core: the analyzer library for Python (docs/python.md). The same pipeline the CLI runs
// (resolve_inputs, map_inputs, reduce, to_json, compare), the trace's columns as NumPy arrays,
// and SQL over the job's traces. Work runs with the GIL released, cancellable through an atomic
// flag that the Python side sets on Ctrl-C; every C++ error becomes UsageError or TraceError
// with the CLI's one-line message.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "c3/analyzer/compare/compare.h"
#include "c3/analyzer/metrics/pattern.h"
#include "c3/analyzer/open/open.h"
#include "c3/analyzer/summary/pipeline.h"
#include "c3/analyzer/why/hta_path.h"
#include "c3/analyzer/why/whatif.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"
#include "columns.h"
#include "sql.h"

namespace c3::py {
namespace {

namespace an = c3::analyzer;

// Bad arguments (exit 2 in the CLI, before any input is read) and inputs that cannot be used.
struct UsageErr : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct TraceErr : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CancelledErr : std::runtime_error {
  CancelledErr() : std::runtime_error("interrupted; nothing was written") {}
};

// Runs `f`, turning the library's exceptions into the module's: Cancelled stays Cancelled, the
// others are TraceErr (inputs) unless already typed.
template <class F>
auto as_trace_error(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const an::Cancelled&) {
    throw CancelledErr();
  } catch (const UsageErr&) {
    throw;
  } catch (const TraceErr&) {
    throw;
  } catch (const CancelledErr&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw TraceErr("out of memory (analyze fewer traces at once, or use summaries)");
  } catch (const std::exception& e) {
    throw TraceErr(e.what());
  }
}

// The options of c3scope.open, as the CLI's analyze flags (docs/analyze.md); unset: the default,
// or a summary input's.
struct JobOptions {
  std::string step, range, rules;
  bool hta_rounding = false;
  bool salvage = false;
  int workers = 0;
  std::optional<double> overlap_threshold;
  std::optional<int> min_samples;
  std::optional<double> kernel_wait_us, micro_idle_us, runtime_cutoff_us, delay_cutoff_us;
  std::optional<int64_t> queue_limit;
  std::optional<int> sequence_length;
  std::vector<std::string> what_if;
  bool hta_critical_path = false;
  int64_t hta_step = 0;
  int rows = -1;  // keep the traces' rows from the map: 1 yes, 0 no, -1 while they are small
};

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

void check_range(const char* name, double v, double lo, double hi) {
  if (!(v >= lo && v <= hi)) {
    throw UsageErr(std::string(name) + " " + number(v) + ": give a value from " + number(lo) +
                   " to " + number(hi));
  }
}

// The pipeline's options from c3scope.open's arguments, checked as the CLI checks its flags.
an::PipelineOptions pipeline_options(const JobOptions& o) {
  an::PipelineOptions po;
  try {
    an::set_trace_options(po, o.rules, o.hta_rounding);
    if (!o.range.empty()) an::Pattern::compile(o.range, "range");
    if (!o.step.empty()) an::Pattern::compile(o.step, "step");
    if (o.what_if.size() > 16) throw UsageErr("at most 16 what_if changes");
    for (const std::string& w : o.what_if) po.analyze.what_ifs.push_back(an::parse_what_if(w));
  } catch (const UsageErr&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageErr(e.what());
  }
  if (o.workers < 0 || o.workers > 4096) throw UsageErr("workers: give 1 to 4096, or None");
  po.workers = o.workers;
  po.analyze.range = o.range;
  po.analyze.step = o.step;
  po.given.range = !o.range.empty();
  po.given.step = !o.step.empty();
  if (o.overlap_threshold) {
    check_range("overlap_threshold", *o.overlap_threshold, 0, 1);
    po.analyze.interference.overlap_fraction = *o.overlap_threshold;
    po.given.overlap_fraction = true;
  }
  if (o.min_samples) {
    check_range("min_samples", *o.min_samples, 1, 1 << 30);
    po.analyze.interference.min_samples = *o.min_samples;
    po.given.min_samples = true;
  }
  constexpr double kMaxUs = 1e12;
  auto ns = [](double us) { return static_cast<int64_t>(std::llround(us * 1e3)); };
  auto us_option = [&](const char* name, const std::optional<double>& v, int64_t& field,
                       bool& given) {
    if (!v) return;
    check_range(name, *v, 0, kMaxUs);
    field = ns(*v);
    given = true;
  };
  us_option("kernel_wait_us", o.kernel_wait_us, po.analyze.idle.kernel_wait_ns,
            po.given.kernel_wait);
  us_option("micro_idle_us", o.micro_idle_us, po.analyze.idle.micro_ns, po.given.micro_idle);
  us_option("runtime_cutoff_us", o.runtime_cutoff_us, po.analyze.launch.runtime_cutoff_ns,
            po.given.runtime_cutoff);
  us_option("delay_cutoff_us", o.delay_cutoff_us, po.analyze.launch.delay_cutoff_ns,
            po.given.delay_cutoff);
  if (o.queue_limit) {
    check_range("queue_limit", static_cast<double>(*o.queue_limit), 1,
                static_cast<double>(int64_t{1} << 40));
    po.analyze.queue.limit = *o.queue_limit;
    po.given.queue_limit = true;
  }
  if (o.sequence_length) {
    check_range("sequence_length", *o.sequence_length, 2, an::kMaxSequenceLength);
    po.analyze.sequences.length = *o.sequence_length;
    po.given.sequence_length = true;
  }
  po.given.what_if = !o.what_if.empty();
  if (o.hta_step < 0 || o.hta_step > (int64_t{1} << 40)) throw UsageErr("hta_step: give 0 or more");
  po.open.salvage = o.salvage;
  return po;
}

// The rows of a job's traces, as one table: the traces one after the other, their names merged
// into one table (name_map: a trace's name index -> names), their processes numbered on
// (process_base: a trace's first process).
struct JobRows {
  JobRows() = default;
  explicit JobRows(std::vector<const an::Trace*> t) : traces(std::move(t)) {
    std::unordered_map<std::string_view, int32_t> ids;
    int process = 0;
    for (const an::Trace* trace : traces) {
      process_base.push_back(process);
      process += static_cast<int>(trace->processes.size());
      std::vector<int32_t>& map = name_map.emplace_back(trace->names.size());
      for (size_t i = 0; i < trace->names.size(); ++i) {
        const std::string& s = trace->names[i];
        auto it = ids.find(s);
        if (it == ids.end()) {
          it = ids.emplace(s, static_cast<int32_t>(names.size())).first;
          names.push_back(s);  // the view's key stays the trace's string, which outlives it
        }
        map[i] = it->second;
      }
    }
  }
  std::vector<const an::Trace*> traces;
  std::vector<std::string> names;
  std::vector<std::vector<int32_t>> name_map;
  std::vector<int> process_base;
};

// Whether `query` names the schema `name` (name. or "name". , in any case): the databases a
// query is given. A mention inside a string literal only attaches one more file.
bool names_schema(const std::string& query, const std::string& name) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  for (size_t at = 0; at + name.size() <= query.size(); ++at) {
    bool same = true;
    for (size_t k = 0; k < name.size() && same; ++k) same = lower(query[at + k]) == name[k];
    if (!same || (at > 0 && ident(query[at - 1]))) continue;
    size_t after = at + name.size();
    if (after < query.size() && (query[after] == '"' || query[after] == ']' || query[after] == '`'))
      ++after;
    while (after < query.size() && std::isspace(static_cast<unsigned char>(query[after])) != 0)
      ++after;
    if (after < query.size() && query[after] == '.') return true;
  }
  return false;
}

// A job: its inputs opened, mapped and reduced once (run), the report and the summaries kept;
// the traces themselves opened again only when asked for (activities, nvtx, sql).
class Job {
 public:
  Job(const std::vector<std::string>& paths, const JobOptions& o)
      : options_(o), po_(pipeline_options(o)), given_(paths) {
    if (paths.empty()) throw UsageErr("no input: give trace files, folders or summaries");
    as_trace_error([&] {
      std::vector<std::string> notes;
      inputs_ = an::resolve_inputs(paths, &notes);
      notes_ = std::move(notes);
      return 0;
    });
    if (o.hta_critical_path) {
      for (const an::Input& in : inputs_) {
        if (in.format != an::InputFormat::kineto) {
          throw UsageErr("hta_critical_path reads PyTorch profiler traces; '" +
                         tracedb::printable(in.path) + "' is a " +
                         an::input_format_name(in.format));
        }
      }
    }
    total_ = inputs_.size();
  }

  // The map and the reduce (GIL released by the binding).
  void run() {
    std::lock_guard<std::mutex> lock(mu_);
    if (ran_) return;
    an::PipelineOptions po = po_;
    po.open.cancel = &cancel_;
    po.progress = [this](size_t done, size_t, const std::string&) { done_.store(done); };
    kept_.clear();
    comm_.clear();
    if (keep_rows()) {
      // The CSV rows are made from the kept traces when asked for (collectives()).
      kept_.resize(inputs_.size());
      comm_.resize(inputs_.size());
      po.keep = [this](size_t i, an::Trace&& t) {
        kept_[i] = std::make_unique<an::Trace>(std::move(t));
      };
      po.comm = [this](size_t i, const an::Trace&, const std::vector<an::CommOverlap>& rows) {
        comm_[i].insert(comm_[i].end(), rows.begin(), rows.end());
      };
    }
    as_trace_error([&] {
      an::AnalyzeOptions used = po.analyze;
      summaries_ = an::map_inputs(inputs_, po, &used);
      used_ = used;
      std::vector<an::RankSummary> copy = summaries_;
      report_ = an::reduce(std::move(copy), an::input_names(inputs_), used_, used_.align);
      if (options_.hta_critical_path) {
        for (const an::Input& in : inputs_)
          report_.hta_paths.push_back(an::hta_critical_path(in.path, options_.hta_step));
      }
      return 0;
    });
    if (cancel_.load()) throw CancelledErr();
    if (!po_.analyze.range.empty() && report_.matching_ranges == 0) {
      throw UsageErr("range '" + tracedb::printable(po_.analyze.range) +
                     "' matches no NVTX or annotation range in these traces");
    }
    if (!po_.analyze.step.empty() && report_.job_steps.empty()) {
      throw UsageErr("step '" + tracedb::printable(po_.analyze.step) +
                     "' matches no NVTX or annotation range in these traces");
    }
    json_ = an::to_json(report_);
    ran_ = true;
  }

  size_t done() const { return done_.load(); }
  size_t total() const { return total_; }
  void cancel() {
    cancel_.store(true);
    std::lock_guard<std::mutex> lock(sql_mu_);
    if (sql_) sql_->interrupt();
  }
  void reset_cancel() { cancel_.store(false); }
  const std::vector<std::string>& notes() const { return notes_; }

  const std::string& report_json() const {
    require_run();
    return json_;
  }
  // The per-collective CSV (analyze --csv): from the kept traces and their rows, or, when the
  // rows were not kept, from the map run again with the CSV on (GIL released by the binding).
  std::string csv() {
    std::lock_guard<std::mutex> lock(mu_);
    require_run();
    std::string out = an::collectives_csv_header();
    if (kept_all()) {
      for (size_t i = 0; i < kept_.size(); ++i) {
        if (kept_[i]) out += an::collectives_csv_rows(*kept_[i], comm_[i]);
      }
      return out;
    }
    if (!csv_made_) {
      an::PipelineOptions po = po_;
      po.analyze = used_;
      po.open.cancel = &cancel_;
      std::string rows;  // kept only when the whole map finished (not after a cancel)
      po.csv = [&rows](const std::string& r) { rows += r; };
      as_trace_error([&] { return an::map_inputs(trace_inputs(), po).size(); });
      if (cancel_.load()) throw CancelledErr();
      csv_ = std::move(rows);
      csv_made_ = true;
    }
    return out + csv_;
  }
  std::string text(bool steps, bool why) const {
    require_run();
    char* buf = nullptr;
    size_t size = 0;
    FILE* f = open_memstream(&buf, &size);
    if (f == nullptr) throw std::bad_alloc();
    an::PrintOptions p;
    p.steps = steps;
    p.why = why;
    an::print_text(f, report_, p);
    std::fclose(f);
    std::string out(buf, size);
    std::free(buf);  // NOLINT(cppcoreguidelines-no-malloc): open_memstream's buffer
    return out;
  }
  std::string summary_json() const {
    require_run();
    return an::summaries_to_json(summaries_, used_);
  }
  void save_summary(const std::string& path, bool force) const {
    require_run();
    std::string text = as_trace_error([&] {
      std::string t = an::summaries_to_json(summaries_, used_);
      return path.ends_with(".gz") ? an::gzip_bytes(t) : t;
    });
    tracedb::OutputRules rules;
    rules.force = force;
    for (const an::Input& in : inputs_) rules.inputs.push_back(in.path);
    if (!options_.rules.empty()) rules.inputs.push_back(options_.rules);
    try {
      tracedb::OutputFile out("path", path, rules);
      out.write(text);
      out.commit();
    } catch (const tracedb::OutputError& e) {
      throw UsageErr(e.what());  // a refused path: the CLI's exit 2 before anything is read
    } catch (const std::exception& e) {
      throw TraceErr(e.what());
    }
  }
  an::JobRun job_run() const {
    require_run();
    an::JobRun r;
    // Named as compare names a run: by what the user gave.
    for (const std::string& g : given_) r.name += (r.name.empty() ? "" : ", ") + g;
    r.ranks = summaries_;
    r.made_with = used_;
    return r;
  }

  // The traces' rows: those the map kept (JobOptions::rows), or loaded now, once, as the map
  // loads them (GIL released by the binding).
  void load() {
    std::lock_guard<std::mutex> lock(mu_);
    require_run();
    if (!rows_.traces.empty() || trace_inputs().empty()) {
      if (trace_inputs().empty()) {
        throw UsageErr("the inputs are summaries, which hold no activities: open the traces");
      }
      return;
    }
    std::vector<const an::Trace*> traces;
    if (kept_all()) {
      for (const auto& t : kept_) {
        if (t) traces.push_back(t.get());
      }
    } else {
      an::OpenOptions oo = po_.open;
      oo.cancel = &cancel_;
      oo.read_once = true;  // as the map reads them: the same rows the report counted
      as_trace_error([&] {
        loaded_ = std::make_unique<an::Trace>(an::open_traces(trace_inputs(), oo).trace);
        return 0;
      });
      traces.push_back(loaded_.get());
    }
    rows_ = JobRows(std::move(traces));
  }
  const JobRows& rows() const {
    if (rows_.traces.empty()) throw std::logic_error("load() first");
    return rows_;
  }

  // (schema name, file) of every trace input's database (a PyTorch or Nsight input converted
  // into a temporary c3scope trace on first use): rank<N> by the rank its summary states, else
  // trace<i> by input order.
  std::vector<std::pair<std::string, std::string>> databases() {
    std::lock_guard<std::mutex> lock(mu_);
    require_run();
    const std::vector<an::Input> traces = trace_inputs();
    if (traces.empty()) {
      throw UsageErr("the inputs are summaries, which hold no tables: open the traces");
    }
    if (!files_) {
      an::OpenOptions oo = po_.open;
      oo.cancel = &cancel_;
      oo.read_once = false;  // complete conversions, with the CUDA API calls
      as_trace_error([&] {
        files_ = std::make_unique<an::TraceFiles>(an::convert_inputs(traces, oo));
        return 0;
      });
    }
    std::vector<std::pair<std::string, std::string>> out;
    std::vector<std::string> taken;
    for (size_t i = 0; i < files_->files.size() && i < traces.size(); ++i) {
      std::string name = "trace" + std::to_string(i);
      std::vector<int64_t> ranks;
      for (const an::RankSummary& s : summaries_) {
        if (s.input == traces[i].path && s.process.rank) ranks.push_back(*s.process.rank);
      }
      if (ranks.size() == 1) name = "rank" + std::to_string(ranks.front());
      if (std::find(taken.begin(), taken.end(), name) != taken.end()) {
        name = "trace" + std::to_string(i);
      }
      taken.push_back(name);
      out.emplace_back(name, files_->files[i]);
    }
    return out;
  }
  // One read-only statement over the databases it names (rank0.kernel, "trace1".string), each
  // attached to a connection of its own for this query: the work budget is the query's, and
  // SQLite attaches at most SqlConnection::max_attached() files at once.
  std::vector<ResultColumn> sql(const std::string& query) {
    std::vector<std::pair<std::string, std::string>> used;
    for (const auto& db : databases()) {
      if (names_schema(query, db.first)) used.push_back(db);
    }
    const int most = SqlConnection::max_attached();
    if (used.size() > static_cast<size_t>(most)) {
      throw UsageErr("the query names " + std::to_string(used.size()) +
                     " traces; SQLite reads at most " + std::to_string(most) +
                     " at once: query fewer ranks at a time (job.databases() lists them)");
    }
    std::shared_ptr<SqlConnection> c;
    try {
      c = std::make_shared<SqlConnection>(used);
    } catch (const std::exception& e) {
      throw TraceErr(e.what());
    }
    {
      std::lock_guard<std::mutex> lock(sql_mu_);
      sql_ = c;
    }
    struct Done {
      Job* job;
      ~Done() {
        std::lock_guard<std::mutex> lock(job->sql_mu_);
        job->sql_.reset();
      }
    } done{this};
    if (cancel_.load()) throw CancelledErr();
    try {
      return c->query(query, &cancel_);
    } catch (const SqlError& e) {
      if (cancel_.load()) throw CancelledErr();
      if (e.usage) throw UsageErr(e.what());
      throw TraceErr(e.what());
    }
  }

 private:
  void require_run() const {
    if (!ran_) throw std::logic_error("the job has not run");
  }
  std::vector<an::Input> trace_inputs() const {
    std::vector<an::Input> out;
    for (const an::Input& in : inputs_) {
      if (in.format != an::InputFormat::summary) out.push_back(in);
    }
    return out;
  }
  bool kept_all() const {
    bool any = false;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      if (inputs_[i].format == an::InputFormat::summary) continue;
      if (i >= kept_.size() || !kept_[i]) return false;
      any = true;
    }
    return any;
  }
  // Whether the map keeps the traces' rows: asked for, or (JobOptions::rows unset) while the
  // trace inputs add up to at most kKeepBytes on disk.
  bool keep_rows() const {
    if (options_.rows >= 0) return options_.rows == 1;
    int64_t bytes = 0;
    for (const an::Input& in : trace_inputs()) {
      struct stat st {};
      if (::stat(in.path.c_str(), &st) == 0) bytes += static_cast<int64_t>(st.st_size);
    }
    return bytes <= kKeepBytes;
  }
  static constexpr int64_t kKeepBytes = int64_t{2} << 30;
  JobOptions options_;
  an::PipelineOptions po_;
  std::vector<std::string> given_;
  std::vector<an::Input> inputs_;
  std::vector<std::string> notes_;
  std::atomic<bool> cancel_{false};
  std::atomic<size_t> done_{0};
  size_t total_ = 0;
  std::mutex mu_;
  bool ran_ = false;
  std::vector<an::RankSummary> summaries_;
  an::AnalyzeOptions used_;
  an::Report report_;
  std::string json_, csv_;
  bool csv_made_ = false;
  std::vector<std::unique_ptr<an::Trace>> kept_;
  std::vector<std::vector<an::CommOverlap>> comm_;  // per input, while the rows are kept
  std::unique_ptr<an::Trace> loaded_;
  JobRows rows_;
  std::unique_ptr<an::TraceFiles> files_;
  std::mutex sql_mu_;
  std::shared_ptr<SqlConnection> sql_;
};

// Job.processes: every process of the job's rows, in JobRows order.
nb::dict process_table(const JobRows& rows) {
  std::vector<std::string> labels, sources, hosts;
  std::vector<int64_t> ranks, pids;
  for (const an::Trace* t : rows.traces) {
    for (const an::Process& p : t->processes) {
      labels.push_back(p.label());
      sources.push_back(p.source);
      hosts.push_back(p.host);
      ranks.push_back(p.rank ? *p.rank : -1);
      pids.push_back(p.pid);
    }
  }
  nb::dict d;
  d["label"] = to_str_list(labels);
  d["source"] = to_str_list(sources);
  d["host"] = to_str_list(hosts);
  d["rank"] = to_numpy(std::move(ranks));
  d["pid"] = to_numpy(std::move(pids));
  return d;
}

// Job.activities / kernels: the traces' activity columns, one after the other, rows chosen in
// C++ (no mask arrays); names as indices into JobRows::names, processes into process_table.
nb::dict activity_columns(const JobRows& rows, std::optional<int> kind, std::optional<int64_t> rank,
                          bool shapes) {
  // The rows of each trace that are chosen (all when nothing is filtered).
  const bool filter = kind.has_value() || rank.has_value();
  std::vector<std::vector<uint32_t>> chosen(rows.traces.size());
  std::vector<std::vector<int32_t>> process_rank(rows.traces.size());
  size_t n = 0;
  bool calls = false;
  for (size_t f = 0; f < rows.traces.size(); ++f) {
    const an::Trace& t = *rows.traces[f];
    const an::Activities& a = t.activities;
    calls = calls || a.has_calls();
    process_rank[f].assign(t.processes.size(), -1);
    for (size_t p = 0; p < t.processes.size(); ++p) {
      // A rank past int32 (only a hostile file states one) is unknown, as -1 says.
      const std::optional<int64_t>& stated = t.processes[p].rank;
      if (stated && *stated >= 0 && *stated <= INT32_MAX)
        process_rank[f][p] = static_cast<int32_t>(*stated);
    }
    if (!filter) {
      n += a.size();
      continue;
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (kind && static_cast<int>(a.kind[i]) != *kind) continue;
      if (rank && process_rank[f][static_cast<size_t>(a.process[i])] != *rank) continue;
      chosen[f].push_back(static_cast<uint32_t>(i));
    }
    n += chosen[f].size();
  }
  std::vector<int64_t> start(n), end(n), bytes(n);
  std::vector<int8_t> k(n), c(n);
  std::vector<int32_t> r(n), name(n), stream(n);
  std::vector<int16_t> device(n);
  std::vector<int32_t> process(n);
  std::vector<int64_t> grid, block, regs, shared, call_start, call_end;
  if (shapes) {
    grid.assign(n, -1);
    block.assign(n, -1);
    regs.assign(n, -1);
    shared.assign(n, -1);
    if (calls) {
      call_start.assign(n, an::kNoCall);
      call_end.assign(n, an::kNoCall);
    }
  }
  size_t j = 0;
  for (size_t f = 0; f < rows.traces.size(); ++f) {
    const an::Trace& t = *rows.traces[f];
    const an::Activities& a = t.activities;
    const std::vector<int32_t>& names = rows.name_map[f];
    const int32_t base = rows.process_base[f];
    const size_t count = filter ? chosen[f].size() : a.size();
    for (size_t x = 0; x < count; ++x, ++j) {
      const size_t i = filter ? chosen[f][x] : x;
      start[j] = a.start[i];
      end[j] = a.end[i];
      bytes[j] = a.bytes[i];
      k[j] = static_cast<int8_t>(a.kind[i]);
      c[j] = static_cast<int8_t>(a.cls[i]);
      r[j] = process_rank[f][static_cast<size_t>(a.process[i])];
      name[j] = a.name[i] >= 0 ? names[static_cast<size_t>(a.name[i])] : -1;
      stream[j] = a.stream[i];
      device[j] = a.device[i];
      process[j] = base + a.process[i];
      if (!shapes) continue;
      if (a.kind[i] == an::Kind::kernel && a.shape[i] >= 0) {
        const an::KernelShape& s = t.shapes[static_cast<size_t>(a.shape[i])];
        grid[j] = s.grid;
        block[j] = s.block;
        regs[j] = s.registers;
        shared[j] = s.shared;
      }
      if (calls && a.has_calls()) {
        call_start[j] = a.call_start[i];
        call_end[j] = a.call_end[i];
      }
    }
  }
  nb::dict d;
  d["start_ns"] = to_numpy(std::move(start));
  d["end_ns"] = to_numpy(std::move(end));
  d["kind"] = to_numpy(std::move(k));
  d["class"] = to_numpy(std::move(c));
  d["rank"] = to_numpy(std::move(r));
  d["name"] = to_numpy(std::move(name));
  d["process"] = to_numpy(std::move(process));
  d["device_id"] = to_numpy(std::move(device));
  d["stream_id"] = to_numpy(std::move(stream));
  d["bytes"] = to_numpy(std::move(bytes));
  if (shapes) {
    d["grid"] = to_numpy(std::move(grid));
    d["block"] = to_numpy(std::move(block));
    d["registers_per_thread"] = to_numpy(std::move(regs));
    d["shared_memory_bytes"] = to_numpy(std::move(shared));
    if (calls) {
      d["launch_start_ns"] = to_numpy(std::move(call_start));
      d["launch_end_ns"] = to_numpy(std::move(call_end));
    }
  }
  return d;
}

// Interns strings into a table, for categoricals built from the traces' text.
class Interner {
 public:
  int32_t operator()(const std::string& s) {
    auto it = ids_.find(s);
    if (it != ids_.end()) return it->second;
    const auto id = static_cast<int32_t>(table_.size());
    table_.push_back(s);
    ids_.emplace(s, id);
    return id;
  }
  const std::vector<std::string>& table() const { return table_; }

 private:
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::string> table_;
};

nb::dict nvtx_columns(const JobRows& rows) {
  size_t n = 0;
  for (const an::Trace* t : rows.traces) n += t->ranges.size();
  std::vector<int32_t> process(n);
  std::vector<int64_t> thread(n), start(n), end(n), color(n);
  std::vector<int32_t> depth(n), name(n), domain(n);
  std::vector<uint8_t> start_end(n);
  // In (process, start, end, depth, thread, name, domain) order: the same rows in the same
  // order whether the traces were loaded one by one or together.
  std::vector<std::pair<int, const an::Range*>> order;
  order.reserve(n);
  for (size_t f = 0; f < rows.traces.size(); ++f) {
    for (const an::Range& r : rows.traces[f]->ranges)
      order.emplace_back(rows.process_base[f] + r.process, &r);
  }
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    const an::Range& a = *x.second;
    const an::Range& b = *y.second;
    return std::tie(x.first, a.start, a.end, a.depth, a.thread, a.name, a.domain) <
           std::tie(y.first, b.start, b.end, b.depth, b.thread, b.name, b.domain);
  });
  Interner names, domains;
  size_t i = 0;
  for (const auto& [proc, range] : order) {
    {
      const an::Range& r = *range;
      process[i] = proc;
      thread[i] = r.thread;
      start[i] = r.start;
      end[i] = r.end;
      color[i] = r.color;
      depth[i] = r.depth;
      start_end[i] = r.start_end ? 1 : 0;
      name[i] = names(r.name);
      domain[i] = domains(r.domain);
      ++i;
    }
  }
  nb::dict d;
  d["process"] = to_numpy(std::move(process));
  d["thread_id"] = to_numpy(std::move(thread));
  d["domain"] = to_numpy(std::move(domain));
  d["domains"] = to_str_list(domains.table());
  d["name"] = to_numpy(std::move(name));
  d["names"] = to_str_list(names.table());
  d["start_ns"] = to_numpy(std::move(start));
  d["end_ns"] = to_numpy(std::move(end));
  d["depth"] = to_numpy(std::move(depth));
  d["start_end"] = to_numpy(std::move(start_end));
  d["color"] = to_numpy(std::move(color));
  return d;
}

// c3scope.compare: what the CLI's compare prints and writes, and its exit code.
struct CompareResult {
  int exit_code = 0;
  std::string verdict, headline, text, json, markdown, junit;
};

CompareResult compare_runs(const an::JobRun* base, const an::JobRun& cand, double threshold,
                           double alpha, int min_samples, int top, const std::string& budget) {
  an::CompareOptions co;
  co.threshold = threshold;
  co.decide.alpha = alpha;
  co.decide.min_samples = min_samples;
  co.top = top;
  an::Budgets budgets;
  if (!budget.empty()) {
    try {
      budgets = an::read_budgets(budget);
    } catch (const std::exception& e) {
      throw UsageErr(e.what());
    }
    co.budgets = &budgets;
  }
  an::Comparison c = as_trace_error([&] { return an::compare(base, cand, co); });
  CompareResult r;
  r.exit_code = c.exit_code();
  r.verdict = c.verdict();
  r.headline = c.headline();
  r.text = an::compare_text(c, false);
  r.json = an::compare_json(c);
  r.markdown = an::compare_markdown(c);
  r.junit = an::compare_junit(c);
  return r;
}

nb::dict to_dict(const CompareResult& r) {
  nb::dict d;
  d["exit_code"] = r.exit_code;
  d["verdict"] = r.verdict;
  d["headline"] = r.headline;
  d["text"] = r.text;
  d["json"] = r.json;
  d["markdown"] = r.markdown;
  d["junit"] = r.junit;
  return d;
}

}  // namespace
}  // namespace c3::py

NB_MODULE(_core, m) {
  using namespace c3::py;  // NOLINT(google-build-using-namespace): the binding's own names
  namespace an = c3::analyzer;
  m.doc() = "c3scope's analyzer library (use the c3scope package, not this module)";
  // Handles, not objects: the types live as long as the interpreter (the module holds them),
  // and no C++ static destructor touches them after Python has finalized.
  static nb::handle error = nb::handle(PyErr_NewExceptionWithDoc(
      "c3scope.Error", "Base of c3scope's errors.", PyExc_Exception, nullptr));
  static nb::handle usage_error = nb::handle(PyErr_NewExceptionWithDoc(
      "c3scope.UsageError",
      "A bad argument: a pattern that does not compile, an option out of range, an output that "
      "would overwrite an input (the CLI exits 2 before reading any input).",
      error.ptr(), nullptr));
  static nb::handle trace_error = nb::handle(PyErr_NewExceptionWithDoc(
      "c3scope.TraceError",
      "An input that cannot be used: missing, not a trace, damaged, hostile, too new (the CLI's "
      "one-line message, naming the file).",
      error.ptr(), nullptr));
  m.attr("Error") = error;
  m.attr("UsageError") = usage_error;
  m.attr("TraceError") = trace_error;
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const UsageErr& e) {
      PyErr_SetString(usage_error.ptr(), e.what());
    } catch (const TraceErr& e) {
      PyErr_SetString(trace_error.ptr(), e.what());
    } catch (const CancelledErr&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });

  nb::class_<JobOptions>(m, "JobOptions")
      .def(nb::init<>())
      .def_rw("step", &JobOptions::step)
      .def_rw("range", &JobOptions::range)
      .def_rw("rules", &JobOptions::rules)
      .def_rw("hta_rounding", &JobOptions::hta_rounding)
      .def_rw("salvage", &JobOptions::salvage)
      .def_rw("workers", &JobOptions::workers)
      .def_rw("overlap_threshold", &JobOptions::overlap_threshold)
      .def_rw("min_samples", &JobOptions::min_samples)
      .def_rw("kernel_wait_us", &JobOptions::kernel_wait_us)
      .def_rw("micro_idle_us", &JobOptions::micro_idle_us)
      .def_rw("runtime_cutoff_us", &JobOptions::runtime_cutoff_us)
      .def_rw("delay_cutoff_us", &JobOptions::delay_cutoff_us)
      .def_rw("queue_limit", &JobOptions::queue_limit)
      .def_rw("sequence_length", &JobOptions::sequence_length)
      .def_rw("what_if", &JobOptions::what_if)
      .def_rw("hta_critical_path", &JobOptions::hta_critical_path)
      .def_rw("hta_step", &JobOptions::hta_step)
      .def_rw("rows", &JobOptions::rows);

  nb::class_<Job>(m, "Job")
      .def(nb::init<const std::vector<std::string>&, const JobOptions&>())
      .def("run", &Job::run, nb::call_guard<nb::gil_scoped_release>())
      .def("load", &Job::load, nb::call_guard<nb::gil_scoped_release>())
      .def("done", &Job::done)
      .def("total", &Job::total)
      .def("cancel", &Job::cancel)
      .def("reset_cancel", &Job::reset_cancel)
      .def("notes", [](const Job& j) { return to_str_list(j.notes()); })
      .def("report_json",
           [](const Job& j) { return nb::bytes(j.report_json().data(), j.report_json().size()); })
      .def("csv",
           [](Job& j) {
             std::string s;
             {
               nb::gil_scoped_release release;
               s = j.csv();
             }
             return nb::bytes(s.data(), s.size());
           })
      .def("text",
           [](const Job& j, bool steps, bool why) {
             const std::string s = j.text(steps, why);
             return nb::bytes(s.data(), s.size());
           })
      .def("summary_json",
           [](const Job& j) {
             const std::string s = j.summary_json();
             return nb::bytes(s.data(), s.size());
           })
      .def("save_summary", &Job::save_summary, nb::call_guard<nb::gil_scoped_release>())
      .def("processes", [](const Job& j) { return process_table(j.rows()); })
      .def("names", [](const Job& j) { return to_str_list(j.rows().names); })
      .def(
          "activities",
          [](const Job& j, std::optional<int> kind, std::optional<int64_t> rank, bool shapes) {
            return activity_columns(j.rows(), kind, rank, shapes);
          },
          nb::arg("kind").none(), nb::arg("rank").none(), nb::arg("shapes"))
      .def("nvtx", [](const Job& j) { return nvtx_columns(j.rows()); })
      .def("databases", &Job::databases, nb::call_guard<nb::gil_scoped_release>())
      .def("sql", [](Job& j, const std::string& q) {
        std::vector<ResultColumn> cols;
        {
          nb::gil_scoped_release release;
          cols = j.sql(q);
        }
        return columns_to_python(std::move(cols));
      });

  m.def(
      "compare",
      [](Job* base, Job& cand, double threshold, double alpha, int min_samples, int top,
         const std::string& budget) {
        std::unique_ptr<an::JobRun> b;
        if (base != nullptr) b = std::make_unique<an::JobRun>(base->job_run());
        const an::JobRun c = cand.job_run();
        CompareResult r;
        {
          nb::gil_scoped_release release;
          r = compare_runs(b.get(), c, threshold, alpha, min_samples, top, budget);
        }
        return to_dict(r);
      },
      nb::arg("base").none(), nb::arg("cand"), nb::arg("threshold"), nb::arg("alpha"),
      nb::arg("min_samples"), nb::arg("top"), nb::arg("budget"));
  m.def("open_run", [](const std::string& path, const JobOptions& o) {
    an::PipelineOptions po = pipeline_options(o);
    nb::gil_scoped_release release;
    return as_trace_error([&] { return an::open_run(path, po); });
  });
  nb::class_<an::JobRun>(m, "JobRun").def_ro("name", &an::JobRun::name);
  m.def("open_run_from_job", [](const Job& j) { return j.job_run(); });
  m.def(
      "compare_runs",
      [](const an::JobRun* base, const an::JobRun& cand, double threshold, double alpha,
         int min_samples, int top, const std::string& budget) {
        CompareResult r;
        {
          nb::gil_scoped_release release;
          r = compare_runs(base, cand, threshold, alpha, min_samples, top, budget);
        }
        return to_dict(r);
      },
      nb::arg("base").none(), nb::arg("cand"), nb::arg("threshold"), nb::arg("alpha"),
      nb::arg("min_samples"), nb::arg("top"), nb::arg("budget"));
  m.def("percent", [](const std::string& s) {
    try {
      return an::percent_arg(s, "threshold");
    } catch (const std::exception& e) {
      throw UsageErr(e.what());
    }
  });
  m.def("kinds", [] {
    std::vector<std::string> k;
    for (auto v : {an::Kind::kernel, an::Kind::memcpy, an::Kind::memset})
      k.emplace_back(an::kind_name(v));
    return k;
  });
  m.def("classes", [] {
    std::vector<std::string> k(an::kClasses);
    for (int c = 0; c < an::kClasses; ++c) k[c] = an::class_name(static_cast<an::Class>(c));
    return k;
  });
}
