#include "c3/analyzer/open/bench_results.h"

#include <climits>
#include <cstdint>
#include <utility>

#include "bench_load.h"
#include "c3/tracedb/bench_label.h"

namespace c3::analyzer {

bool possible(const BenchConfig& c) {
  if (!c.known) return true;
  for (const int v : {c.nchannels, c.min_ctas, c.max_ctas, c.sm_partition_pct}) {
    if (v < 0) return false;
  }
  for (const int64_t v :
       {c.gemm_m, c.gemm_n, c.gemm_k, c.compute_bytes, c.compute_target_ns, c.comm_bytes}) {
    if (v < 0) return false;
  }
  return c.sm_partition_pct <= 100 && c.chunks >= 1 &&
         static_cast<uint8_t>(c.priority) <= static_cast<uint8_t>(BenchPriority::comm_low) &&
         static_cast<uint8_t>(c.order) <= static_cast<uint8_t>(BenchOrder::comm_first);
}

BenchConfig bench_config(const tracedb::BenchResultRow& row) {
  BenchConfig c;
  if (!row.priority || !row.launch_order || !row.nchannels || !row.min_ctas || !row.max_ctas ||
      !row.sm_partition_pct || !row.pipelined || !row.chunks) {
    return c;
  }
  auto small = [](const tracedb::OptI64& v, int& out) {
    if (*v < INT_MIN || *v > INT_MAX) return false;
    out = static_cast<int>(*v);
    return true;
  };
  if (!small(row.nchannels, c.nchannels) || !small(row.min_ctas, c.min_ctas) ||
      !small(row.max_ctas, c.max_ctas) || !small(row.sm_partition_pct, c.sm_partition_pct) ||
      !small(row.chunks, c.chunks)) {
    return {};
  }
  const auto priority = common::stream_priority_from_name(*row.priority);
  const auto order = common::launch_order_from_name(*row.launch_order);
  if (!priority || !order) return {};
  c.priority = *priority;
  c.order = *order;
  c.pipelined = *row.pipelined != 0;
  if (row.compute_kind) {
    c.compute = row.compute.value_or(*row.compute_kind);
    c.compute_kind = *row.compute_kind;
    c.compute_dtype = row.compute_dtype.value_or("");
    c.gemm_m = row.gemm_m.value_or(0);
    c.gemm_n = row.gemm_n.value_or(0);
    c.gemm_k = row.gemm_k.value_or(0);
    c.compute_bytes = row.compute_bytes.value_or(0);
    c.compute_target_ns = row.compute_target_ns.value_or(0);
  }
  if (row.comm_kind) {
    c.comm = row.comm.value_or(*row.comm_kind);
    c.comm_kind = *row.comm_kind;
    c.comm_dtype = row.comm_dtype.value_or("");
    c.comm_bytes = row.comm_bytes.value_or(0);
    c.comm_peer = row.comm_peer.value_or(0) != 0;
  }
  c.known = true;
  if (!possible(c)) return {};
  return c;
}

BenchConfig bench_config_from_label(const std::string& label) {
  tracedb::BenchResultRow row;
  row.label = label;
  tracedb::config_from_label(row);
  return bench_config(row);
}

void load_bench_results(const tracedb::Reader& r, TraceBuilder& b, Trace& t) {
  // The typed configuration's columns follow the fixed ones, in schema order.
  std::string config_columns;
#define C3_SELECT_COLUMN(name, type, sql, doc) config_columns += ", b." #name;
  C3_BENCH_CONFIG_COLUMNS(C3_SELECT_COLUMN)
#undef C3_SELECT_COLUMN
  constexpr int kFirstConfigColumn = 25;
  auto q = r.query(
      "SELECT r.pid, r.backend, r.simulated, b.label, IFNULL(b.scenario, ''), "
      "IFNULL(b.t_comp_ns, 0), IFNULL(b.t_comm_ns, 0), IFNULL(b.t_c3_ns, 0), b.compute_slowdown, "
      "b.comm_slowdown, b.ideal_speedup, b.realized_speedup, b.fraction_of_ideal, "
      "b.realized_over_ideal, b.decomposition_loss_comp, b.decomposition_loss_comm, "
      "b.schedule_speedup, b.busbw, r.id, r.host, r.rank, r.command_line, b.compute, b.comm, "
      "b.comm_bytes" +
      config_columns + " FROM bench_result b JOIN bench_run r ON r.id = b.run_id " +
      "WHERE b.status = 'ok' ORDER BY b.id");
  while (q.step()) {
    BenchResult br;
    int found = -1;
    for (const auto& [id, idx] : b.processes()) {
      if (t.processes[static_cast<size_t>(idx)].pid == q.i64(0)) found = idx;
    }
    if (found < 0) {
      // Results without a traced process (c3bench --db): the run is the process, so that
      // they reach summaries and comparisons. Its id is below every real process id.
      const int64_t id = INT64_MIN / 2 - q.i64(18);
      found = b.process_index(id);
      if (found < 0) {
        Process p;
        p.pid = q.i64(0);
        p.host = q.text(19);
        p.rank = q.i64(20);
        p.command_line = q.text(21);
        p.trace_clock = "none (c3bench results only)";
        b.process(id, std::move(p));
        found = b.process_index(id);
      }
    }
    br.process = static_cast<int16_t>(found);
    q.columns(1, br.backend, br.simulated, br.label, br.scenario, br.t_comp, br.t_comm, br.t_c3,
              br.compute_slowdown, br.comm_slowdown, br.ideal_speedup, br.realized_speedup,
              br.fraction_of_ideal, br.realized_over_ideal, br.decomposition_loss_comp,
              br.decomposition_loss_comm, br.schedule_speedup, br.busbw);
    tracedb::BenchResultRow row;
    q.columns(22, row.compute, row.comm, row.comm_bytes);
    int col = kFirstConfigColumn;
#define C3_GET_COLUMN(name, type, sql, doc) q.columns(col++, row.name);
    C3_BENCH_CONFIG_COLUMNS(C3_GET_COLUMN)
#undef C3_GET_COLUMN
    br.config = bench_config(row);
    make_possible(br);
    t.bench.push_back(std::move(br));
  }
}

}  // namespace c3::analyzer
