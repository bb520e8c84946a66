#include "c3/bench/report.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "c3/common/time.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/writer.h"
#include "c3scope/trace_append.h"

namespace c3::bench {
namespace {

std::string us(const std::optional<Stats>& s) {
  if (!s) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", s->median / 1e3);
  return b;
}

std::string pct(const std::optional<double>& v) {
  if (!v) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f", *v * 100);
  return b;
}

std::string num(double v, int decimals = 2) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

// What the table's columns mean, in the words of docs/c3bench.md and docs/metrics.md
// ("Interference"). Printed wrapped to the table's width.
constexpr const char* kLegend[] = {
    "T_comp, T_comm: compute and communication each alone; T_c3: both concurrently, first start "
    "to last end; T_serial: one after the other (medians, us)",
    "slow_cp, slow_cm: compute and comm slowdown while concurrent, T_concurrent / T_alone - 1",
    "ideal: ideal speedup (T_comp + T_comm) / max(T_comp, T_comm); real: realized speedup "
    "(T_comp + T_comm) / T_c3",
    "frac: fraction of ideal (real - 1) / (ideal - 1); r/i: real / ideal; class: comp-long "
    "(compute-long), comm-long or balanced (at 1.15x)",
    "algbw: S / T_comm; busbw: algbw x the nccl-tests factor (bus bandwidth)",
    "-: none (no such op, default knobs), a phase this --mode does not run, or not defined (the "
    "comm slowdown of a chunked schedule)",
    "note (on the 'case N:' line under a case): !c3>serial: concurrent slower than serial "
    "(T_c3 > T_serial); !frac<0: realized speedup below 1 (T_c3 > T_comp + T_comm), running both "
    "together lost time",
    "compute, comm, knobs: a case's configuration; what every case shares is said once above the "
    "table, and what does not fit in columns heads the rows it applies to ('# ...' lines)",
};

// `text` as lines of at most `width` columns, broken at spaces: the first line starts with
// `first`, the next ones with `next`. A word longer than a line is not cut.
std::vector<std::string> wrap(const std::string& text, const std::string& first,
                              const std::string& next, size_t width = TablePrinter::kWidth) {
  std::vector<std::string> lines;
  std::string line = first;
  bool empty = true;
  size_t i = 0;
  while (i < text.size()) {
    const size_t sp = text.find(' ', i);
    const std::string word = text.substr(i, sp == std::string::npos ? std::string::npos : sp - i);
    i = sp == std::string::npos ? text.size() : sp + 1;
    if (word.empty()) continue;
    if (!empty && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line = next;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  lines.push_back(line);
  return lines;
}

void say(FILE* out, const std::string& text, const std::string& first = "# ",
         const std::string& next = "#   ") {
  for (const std::string& l : wrap(text, first, next)) std::fprintf(out, "%s\n", l.c_str());
}

// The table's short spelling of a scenario (the legend names the long one).
const char* class_name(Scenario s) {
  const std::string n = scenario_name(s);
  return n == "compute-long" ? "comp-long" : scenario_name(s);
}

std::string part_value(const Case& c, TablePrinter::Part p) {
  switch (p) {
    case TablePrinter::Part::compute:
      return c.compute ? c.compute->label() : "-";
    case TablePrinter::Part::comm:
      return c.comm ? c.comm->label() : "-";
    case TablePrinter::Part::knobs: {
      std::string k = c.knobs.label();
      return k.empty() ? "-" : k;
    }
  }
  return "-";
}

const char* part_name(TablePrinter::Part p) {
  switch (p) {
    case TablePrinter::Part::compute:
      return "compute";
    case TablePrinter::Part::comm:
      return "comm";
    case TablePrinter::Part::knobs:
      return "knobs";
  }
  return "";
}

// The numeric columns: name, unit, width (right-aligned, one space before each).
struct NumCol {
  const char* name;
  const char* unit;
  int width;
};
constexpr NumCol kTimes[] = {
    {"T_comp", "(us)", 7}, {"T_comm", "(us)", 7}, {"T_c3", "(us)", 7}, {"T_serial", "(us)", 8}};
constexpr NumCol kSlow[] = {{"slow_cp", "(%)", 7}, {"slow_cm", "(%)", 7}};
constexpr NumCol kRatios[] = {
    {"ideal", "(x)", 5}, {"real", "(x)", 5}, {"frac", "", 5}, {"r/i", "", 5}};
constexpr int kClassWidth = 9;  // "comp-long", "comm-long", "balanced"
constexpr NumCol kBw[] = {{"algbw", "(GB/s)", 6}, {"busbw", "(GB/s)", 6}};

// Width of a row without its configuration columns: " %4d", the numbers, "  class".
constexpr size_t fixed_width() {
  size_t w = 5;
  for (const NumCol& c : kTimes) w += 1 + c.width;
  for (const NumCol& c : kSlow) w += 1 + c.width;
  for (const NumCol& c : kRatios) w += 1 + c.width;
  w += 2 + kClassWidth;
  for (const NumCol& c : kBw) w += 1 + c.width;
  return w;
}

}  // namespace

std::vector<std::string> result_notes(const Result& r) {
  std::vector<std::string> notes;
  if (r.c3_wall && r.serial_wall && r.c3_wall->median > r.serial_wall->median)
    notes.emplace_back("!c3>serial");
  if (r.metrics && r.metrics->fraction_of_ideal < 0) notes.emplace_back("!frac<0");
  return notes;
}

namespace {

nlohmann::json stats_json(const std::optional<Stats>& s) {
  if (!s) return nullptr;
  return {{"median_ns", s->median}, {"min_ns", s->min}, {"max_ns", s->max}, {"n", s->n}};
}

}  // namespace

TablePrinter::TablePrinter(FILE* out, const RunInfo& info, const std::vector<Case>& cases)
    : out_(out), info_(info) {
  // What every case shares goes above the table; the rest are columns, innermost (the part that
  // changes from one case to the next) first, while the table stays within kWidth; the parts
  // that do not fit head their groups of rows.
  size_t width = fixed_width();
  bool nested = true;  // the parts inside this one are all columns
  for (Part p : {Part::knobs, Part::comm, Part::compute}) {
    std::string first;
    bool varies = false;
    size_t w = std::string(part_name(p)).size();
    for (const Case& c : cases) {
      const std::string v = part_value(c, p);
      if (&c == &cases.front()) first = v;
      varies = varies || v != first;
      w = std::max(w, v.size());
    }
    if (!varies) {
      if (!cases.empty()) shared_.emplace_back(p, first);
      continue;
    }
    if (nested && width + 2 + w <= kWidth) {
      columns_.insert(columns_.begin(), {p, w});
      width += 2 + w;
    } else {
      nested = false;
      groups_.insert(groups_.begin(), p);
    }
  }
  std::reverse(shared_.begin(), shared_.end());
}

void TablePrinter::header() {
  say(out_, "c3bench: " + info_.backend + " backend, " + info_.description);
  if (info_.simulated) {
    say(out_,
        "SIMULATED: every number below is a prediction of the node model (docs/sim-model.md), "
        "not a measurement");
  }
  say(out_, "timing: " + info_.timing_overhead + "; " + std::to_string(info_.warmup) +
                " warm-up + " + std::to_string(info_.iterations) +
                " timed iterations per phase, medians shown");
  if (!shared_.empty()) {
    std::string s;
    for (const auto& [p, v] : shared_)
      s += std::string(s.empty() ? "" : ", ") + part_name(p) + " " + v;
    say(out_, "every case: " + s);
  }
  std::string names = "#case", units = "#    ";
  auto text = [](std::string& line, const char* v, size_t w) {
    line += "  ";
    line += v;
    line.append(w - std::strlen(v), ' ');
  };
  auto number = [](std::string& line, const char* v, int w) {
    char b[64];
    std::snprintf(b, sizeof b, " %*s", w, v);
    line += b;
  };
  for (const auto& [p, w] : columns_) {
    text(names, part_name(p), w);
    text(units, "", w);
  }
  auto numbers = [&](const auto& cols) {
    for (const NumCol& c : cols) {
      number(names, c.name, c.width);
      number(units, c.unit, c.width);
    }
  };
  numbers(kTimes);
  numbers(kSlow);
  numbers(kRatios);
  text(names, "class", kClassWidth);
  text(units, "", kClassWidth);
  numbers(kBw);
  while (!units.empty() && units.back() == ' ') units.pop_back();
  std::fprintf(out_, "%s\n%s\n", names.c_str(), units.c_str());
}

void TablePrinter::row(const Result& r) {
  // The line that heads this row's group, when the group changed.
  if (!groups_.empty()) {
    // "compute + comm [knobs]" as a case's label spells them; knobs alone: "knobs K".
    std::string head;
    for (Part p : groups_) {
      const std::string v = part_value(r.c, p);
      if (p != Part::knobs) {
        head += (head.empty() ? "" : " + ") + v;
      } else if (head.empty()) {
        head = "knobs " + v;
      } else if (v != "-") {
        head += " [" + v + "]";
      }
    }
    if (head != last_group_) {
      say(out_, head, "# ", "#   ");
      last_group_ = head;
    }
  }
  std::string line;
  {
    char b[32];
    std::snprintf(b, sizeof b, " %4d", r.c.id);
    line = b;
  }
  for (const auto& [p, w] : columns_) {
    const std::string v = part_value(r.c, p);
    line += "  " + v;
    line.append(w - std::min(w, v.size()), ' ');
  }
  const std::string case_prefix = "#       case " + std::to_string(r.c.id) + ": ";
  if (!r.skip_reason.empty()) {
    std::fprintf(out_, "%s  skipped\n", line.c_str());
    say(out_, "skipped: " + r.skip_reason, case_prefix, "#         ");
    return;
  }
  const auto& m = r.metrics;
  auto number = [&](const std::string& v, int w) {
    char b[64];
    std::snprintf(b, sizeof b, " %*s", w, v.c_str());
    line += b;
  };
  number(us(r.comp_alone), kTimes[0].width);
  number(us(r.comm_alone), kTimes[1].width);
  number(us(r.c3_wall), kTimes[2].width);
  number(us(r.serial_wall), kTimes[3].width);
  number(pct(m ? std::optional<double>(m->compute_slowdown) : std::nullopt), kSlow[0].width);
  number(pct(m ? m->comm_slowdown : std::nullopt), kSlow[1].width);
  number(m ? num(m->ideal_speedup) : "-", kRatios[0].width);
  number(m ? num(m->realized_speedup) : "-", kRatios[1].width);
  number(m ? num(m->fraction_of_ideal) : "-", kRatios[2].width);
  number(m ? num(m->realized_over_ideal) : "-", kRatios[3].width);
  {
    const std::string cls = m ? class_name(m->scenario) : "-";
    line += "  " + cls;
    line.append(kClassWidth - std::min<size_t>(kClassWidth, cls.size()), ' ');
  }
  number(r.algbw > 0 ? num(r.algbw / 1e9, 1) : "-", kBw[0].width);
  number(r.busbw > 0 ? num(r.busbw / 1e9, 1) : "-", kBw[1].width);
  std::fprintf(out_, "%s\n", line.c_str());
  std::string note;
  for (const std::string& n : result_notes(r)) note += (note.empty() ? "" : " ") + n;
  if (!note.empty()) say(out_, note + ": running both together did not pay", case_prefix);
  if (r.decomposition_loss_comp || r.decomposition_loss_comm || r.schedule_speedup) {
    std::string speedup = "-";
    if (r.schedule_speedup) speedup = num(*r.schedule_speedup) + "x";
    say(out_,
        std::to_string(r.c.knobs.chunks) + " chunks pipelined, " + speedup +
            " over the k=1 schedule; decomposition loss: compute " +
            pct(r.decomposition_loss_comp) + "%, comm " + pct(r.decomposition_loss_comm) + "%",
        case_prefix, "#         ");
  }
}

void TablePrinter::footer(const std::vector<Result>& results) {
  int ok = 0, skipped = 0, marked = 0;
  for (const auto& r : results) {
    (r.skip_reason.empty() ? ok : skipped)++;
    if (!result_notes(r).empty()) ++marked;
  }
  std::fprintf(out_, "# %d cases run, %d skipped%s\n", ok, skipped,
               info_.simulated ? " (simulated)" : "");
  if (marked > 0) {
    std::fprintf(out_,
                 "# ! %d case%s where running both together did not pay (their 'case N:' lines)\n",
                 marked, marked == 1 ? "" : "s");
  }
  std::fprintf(out_, "# columns (docs/c3bench.md):\n");
  for (const char* line : kLegend) say(out_, line, "#   ", "#     ");
}

std::string to_json(const RunInfo& info, const std::vector<Result>& results) {
  nlohmann::json j;
  j["schema"] = "c3bench/1";
  j["backend"] = info.backend;
  j["simulated"] = info.simulated;
  j["description"] = info.description;
  j["timing_overhead"] = info.timing_overhead;
  j["gpus"] = info.gpus;
  j["rank"] = info.rank;
  j["warmup"] = info.warmup;
  j["iterations"] = info.iterations;
  j["command_line"] = info.command_line;
  j["options"] = nlohmann::json::parse(info.options_json, nullptr, false);
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json o;
    o["case"] = r.c.id;
    o["label"] = r.c.label();
    o["compute"] = r.c.compute ? nlohmann::json(r.c.compute->label()) : nlohmann::json(nullptr);
    o["comm"] = r.c.comm ? nlohmann::json(r.c.comm->label()) : nlohmann::json(nullptr);
    o["comm_bytes"] = r.c.comm ? nlohmann::json(r.c.comm->bytes) : nlohmann::json(nullptr);
    o["knobs"] = r.c.knobs.label();
    o["status"] = r.skip_reason.empty() ? "ok" : "skipped";
    if (!r.skip_reason.empty()) o["skip_reason"] = r.skip_reason;
    o["t_comp"] = stats_json(r.comp_alone);
    o["t_comm"] = stats_json(r.comm_alone);
    o["t_comp_c3"] = stats_json(r.comp_c3);
    o["t_comm_c3"] = stats_json(r.comm_c3);
    o["t_c3"] = stats_json(r.c3_wall);
    o["t_serial"] = stats_json(r.serial_wall);
    if (r.metrics) {
      const auto& m = *r.metrics;
      o["compute_slowdown"] = m.compute_slowdown;
      o["comm_slowdown"] =
          m.comm_slowdown ? nlohmann::json(*m.comm_slowdown) : nlohmann::json(nullptr);
      o["ideal_speedup"] = m.ideal_speedup;
      o["realized_speedup"] = m.realized_speedup;
      o["fraction_of_ideal"] = m.fraction_of_ideal;
      o["realized_over_ideal"] = m.realized_over_ideal;
      o["scenario"] = scenario_name(m.scenario);
    }
    if (r.decomposition_loss_comp) o["decomposition_loss_comp"] = *r.decomposition_loss_comp;
    if (r.decomposition_loss_comm) o["decomposition_loss_comm"] = *r.decomposition_loss_comm;
    if (r.schedule_speedup) o["schedule_speedup"] = *r.schedule_speedup;
    if (r.algbw > 0) {
      o["algbw_bytes_per_s"] = r.algbw;
      o["busbw_bytes_per_s"] = r.busbw;
    }
    o["iterations"] = r.iterations;
    arr.push_back(std::move(o));
  }
  j["results"] = std::move(arr);
  return j.dump(2) + "\n";
}

void case_columns(const Case& c, tracedb::BenchResultRow& row) {
  row.case_id = c.id;
  row.label = c.label();
  if (c.compute) {
    const ComputeOp& op = *c.compute;
    row.compute = op.label();
    row.compute_kind = compute_kind_name(op.kind);
    row.compute_dtype = dtype_name(op.dtype);
    switch (op.kind) {
      case ComputeKind::gemm:
        row.gemm_m = op.m;
        row.gemm_n = op.n;
        row.gemm_k = op.k;
        break;
      case ComputeKind::triad:
        row.compute_bytes = op.bytes;
        break;
      case ComputeKind::fma:
        row.compute_target_ns = op.target_ns;
        break;
    }
  }
  if (c.comm) {
    row.comm = c.comm->label();
    row.comm_kind = comm_kind_name(c.comm->kind);
    row.comm_bytes = c.comm->bytes;
    row.comm_dtype = dtype_name(c.comm->dtype);
    row.comm_peer = c.comm->peer ? 1 : 0;
  }
  const Knobs& k = c.knobs;
  row.knobs = k.label();
  row.priority = common::stream_priority_name(k.priority);
  row.launch_order = common::launch_order_name(k.order);
  row.nchannels = k.nchannels;
  row.min_ctas = k.min_ctas;
  row.max_ctas = k.max_ctas;
  row.sm_partition_pct = k.sm_partition_pct;
  row.pipelined = k.pipelined ? 1 : 0;
  row.chunks = k.chunks;
}

void write_tables(tracedb::Writer& db, const RunInfo& info, const std::vector<Result>& results) {
  tracedb::Writer* w = &db;
  tracedb::BenchRunRow run;
  run.started_at = info.started_at.empty() ? common::utc_now_iso8601() : info.started_at;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  run.host = host;
  run.pid = getpid();
  run.rank = info.rank;
  run.command_line = info.command_line;
  run.backend = info.backend;
  run.simulated = info.simulated ? 1 : 0;
  run.description = info.description;
  run.gpus = info.gpus;
  run.warmup = info.warmup;
  run.iterations = info.iterations;
  run.timing_overhead = info.timing_overhead;
  run.options_json = info.options_json;
  const int64_t run_id = w->insert(run);
  for (const auto& r : results) {
    tracedb::BenchResultRow row;
    row.run_id = run_id;
    case_columns(r.c, row);
    row.status = r.skip_reason.empty() ? "ok" : "skipped";
    if (!r.skip_reason.empty()) row.skip_reason = r.skip_reason;
    auto put = [](const std::optional<Stats>& s, tracedb::OptReal& med, tracedb::OptReal& lo,
                  tracedb::OptReal& hi) {
      if (!s) return;
      med = s->median;
      lo = s->min;
      hi = s->max;
    };
    put(r.comp_alone, row.t_comp_ns, row.t_comp_min_ns, row.t_comp_max_ns);
    put(r.comm_alone, row.t_comm_ns, row.t_comm_min_ns, row.t_comm_max_ns);
    put(r.comp_c3, row.t_comp_c3_ns, row.t_comp_c3_min_ns, row.t_comp_c3_max_ns);
    put(r.comm_c3, row.t_comm_c3_ns, row.t_comm_c3_min_ns, row.t_comm_c3_max_ns);
    put(r.c3_wall, row.t_c3_ns, row.t_c3_min_ns, row.t_c3_max_ns);
    put(r.serial_wall, row.t_serial_ns, row.t_serial_min_ns, row.t_serial_max_ns);
    if (r.metrics) {
      const auto& m = *r.metrics;
      row.compute_slowdown = m.compute_slowdown;
      row.comm_slowdown = m.comm_slowdown;
      row.ideal_speedup = m.ideal_speedup;
      row.realized_speedup = m.realized_speedup;
      row.fraction_of_ideal = m.fraction_of_ideal;
      row.realized_over_ideal = m.realized_over_ideal;
      row.scenario = scenario_name(m.scenario);
    }
    row.decomposition_loss_comp = r.decomposition_loss_comp;
    row.decomposition_loss_comm = r.decomposition_loss_comm;
    row.schedule_speedup = r.schedule_speedup;
    if (r.algbw > 0) {
      row.algbw = r.algbw;
      row.busbw = r.busbw;
    }
    row.iterations = r.iterations;
    w->insert(row);
  }
}

void write_db(const std::string& path, const RunInfo& info, const std::vector<Result>& results,
              const tracedb::OutputRules& rules) {
  // Written under a temporary name and moved into place when complete: the path holds the whole
  // run or nothing; an existing file only with --force (tracedb/output_file.h).
  tracedb::OutputPath target("--db", path, rules);
  write_db(target, info, results);
  target.commit();
}

void write_db(tracedb::OutputPath& target, const RunInfo& info,
              const std::vector<Result>& results) {
  tracedb::WriterOptions wo;
  wo.source = "c3bench";
  auto w = tracedb::Writer::create(target.temp(), wo);
  write_tables(*w, info, results);
  w->close();
}

namespace {
struct AppendCtx {
  const RunInfo* info;
  const std::vector<Result>* results;
  std::string error;
};

int append_cb(void* db, const char* path, void* ctx) {
  auto* a = static_cast<AppendCtx*>(ctx);
  try {
    auto w = tracedb::Writer::borrow(static_cast<sqlite3*>(db), path);
    write_tables(*w, *a->info, *a->results);
    return 0;
  } catch (const std::exception& e) {
    a->error = e.what();
    return 1;
  }
}
}  // namespace

AppendResult append_to_trace(const RunInfo& info, const std::vector<Result>& results) {
  AppendResult out;
  auto fn =
      reinterpret_cast<c3scope_trace_append_fn>(dlsym(RTLD_DEFAULT, C3SCOPE_TRACE_APPEND_SYMBOL));
  if (fn == nullptr) return out;  // not recorded
  out.recorded = true;
  AppendCtx ctx{&info, &results, {}};
  const int rc = fn(tracedb::kSchemaVersion, &append_cb, &ctx);
  switch (rc) {
    case C3SCOPE_APPEND_OK:
      out.appended = true;
      break;
    case C3SCOPE_APPEND_SCHEMA_MISMATCH:
      out.error = "the collector writes another trace schema than this c3bench (v" +
                  std::to_string(tracedb::kSchemaVersion) +
                  "): use c3scope and c3bench from one build";
      break;
    case C3SCOPE_APPEND_NO_TRACE:
      out.error = "the collector is not writing a trace (see its messages above)";
      break;
    default:
      out.error = ctx.error.empty() ? "the collector could not add the rows" : ctx.error;
      break;
  }
  return out;
}

}  // namespace c3::bench
