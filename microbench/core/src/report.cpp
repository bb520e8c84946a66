#include "c3/bench/report.h"

#include <dlfcn.h>
#include <unistd.h>

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
// ("Interference").
constexpr const char* kLegend[] = {
    "T_comp, T_comm: compute and communication each alone; T_c3: both concurrently, first start "
    "to last end; T_serial: one after the other (medians, us)",
    "slow_cp, slow_cm: compute and comm slowdown while concurrent, T_concurrent / T_alone - 1",
    "ideal: ideal speedup (T_comp + T_comm) / max(T_comp, T_comm); real: realized speedup "
    "(T_comp + T_comm) / T_c3",
    "frac: fraction of ideal (real - 1) / (ideal - 1); r/i: real / ideal; class: compute-long, "
    "comm-long or balanced (at 1.15x)",
    "algbw: S / T_comm; busbw: algbw x the nccl-tests factor (bus bandwidth)",
    "-: none (no such op, default knobs), a phase this --mode does not run, or not defined (the "
    "comm slowdown of a chunked schedule)",
    "note: !c3>serial: concurrent slower than serial (T_c3 > T_serial); !frac<0: realized speedup "
    "below 1 (T_c3 > T_comp + T_comm), running both together lost time",
};

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

TablePrinter::TablePrinter(FILE* out, const RunInfo& info) : out_(out), info_(info) {}

void TablePrinter::header() {
  std::fprintf(out_, "# c3bench: %s backend, %s\n", info_.backend.c_str(),
               info_.description.c_str());
  if (info_.simulated) {
    std::fprintf(out_,
                 "# SIMULATED: every number below is a prediction of the node model "
                 "(docs/sim-model.md), not a measurement\n");
  }
  std::fprintf(out_, "# timing: %s; %d warm-up + %d timed iterations per phase, medians shown\n",
               info_.timing_overhead.c_str(), info_.warmup, info_.iterations);
  std::fprintf(
      out_, "#%4s  %-28s %-22s %-18s %9s %9s %9s %9s %8s %8s %6s %6s %6s %6s  %-12s %7s %7s  %s\n",
      "case", "compute", "comm", "knobs", "T_comp", "T_comm", "T_c3", "T_serial", "slow_cp",
      "slow_cm", "ideal", "real", "frac", "r/i", "class", "algbw", "busbw", "note");
  std::fprintf(out_,
               "#%4s  %-28s %-22s %-18s %9s %9s %9s %9s %8s %8s %6s %6s %6s %6s  %-12s %7s %7s\n",
               "", "", "", "", "(us)", "(us)", "(us)", "(us)", "(%)", "(%)", "(x)", "(x)", "", "",
               "", "(GB/s)", "(GB/s)");
}

void TablePrinter::row(const Result& r) {
  const std::string comp = r.c.compute ? r.c.compute->label() : "-";
  const std::string comm = r.c.comm ? r.c.comm->label() : "-";
  std::string knobs = r.c.knobs.label();
  if (knobs.empty()) knobs = "-";
  if (!r.skip_reason.empty()) {
    std::fprintf(out_, " %4d  %-28s %-22s %-18s skipped: %s\n", r.c.id, comp.c_str(), comm.c_str(),
                 knobs.c_str(), r.skip_reason.c_str());
    return;
  }
  const auto& m = r.metrics;
  std::string note;
  for (const std::string& n : result_notes(r)) note += (note.empty() ? "  " : " ") + n;
  std::fprintf(
      out_, " %4d  %-28s %-22s %-18s %9s %9s %9s %9s %8s %8s %6s %6s %6s %6s  %-12s %7s %7s%s\n",
      r.c.id, comp.c_str(), comm.c_str(), knobs.c_str(), us(r.comp_alone).c_str(),
      us(r.comm_alone).c_str(), us(r.c3_wall).c_str(), us(r.serial_wall).c_str(),
      pct(m ? std::optional<double>(m->compute_slowdown) : std::nullopt).c_str(),
      pct(m ? m->comm_slowdown : std::nullopt).c_str(), m ? num(m->ideal_speedup).c_str() : "-",
      m ? num(m->realized_speedup).c_str() : "-", m ? num(m->fraction_of_ideal).c_str() : "-",
      m ? num(m->realized_over_ideal).c_str() : "-", m ? scenario_name(m->scenario) : "-",
      r.algbw > 0 ? num(r.algbw / 1e9, 1).c_str() : "-",
      r.busbw > 0 ? num(r.busbw / 1e9, 1).c_str() : "-", note.c_str());
  if (r.decomposition_loss_comp || r.decomposition_loss_comm || r.schedule_speedup) {
    std::string speedup = "-";
    if (r.schedule_speedup) speedup = num(*r.schedule_speedup) + "x";
    std::fprintf(out_,
                 "#       case %d: %d chunks pipelined, %s the k=1 schedule; decomposition loss: "
                 "compute %s%%, comm %s%%\n",
                 r.c.id, r.c.knobs.chunks, (speedup + " over").c_str(),
                 pct(r.decomposition_loss_comp).c_str(), pct(r.decomposition_loss_comm).c_str());
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
    std::fprintf(out_, "# ! %d case%s where running both together did not pay (see note below)\n",
                 marked, marked == 1 ? "" : "s");
  }
  std::fprintf(out_, "# columns (docs/c3bench.md):\n");
  for (const char* line : kLegend) std::fprintf(out_, "#   %s\n", line);
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
