#include "c3/analyzer/open/details.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "c3/tracedb/reader.h"

namespace c3::analyzer {

namespace {

std::string num(int64_t v) {
  return std::to_string(v);
}

std::string dim3(const tracedb::Query& q, int col) {
  std::string s = num(q.i64(col));
  s += " x ";
  s += num(q.i64(col + 1));
  s += " x ";
  s += num(q.i64(col + 2));
  return s;
}

void add_opt(Details& d, const char* label, const tracedb::Query& q, int col) {
  if (!q.is_null(col)) d.fields.emplace_back(label, q.text(col));
}

void api_call(Details& d, const tracedb::Reader& r, int64_t process_db_id, int64_t correlation) {
  if (!r.has_table("api_call")) return;
  auto q = r.query(
      "SELECT s.value, a.thread_id, a.start_ns, a.end_ns FROM api_call a JOIN string s ON s.id = "
      "a.name_id WHERE a.process_id = ? AND a.correlation_id = ? LIMIT 1");
  q.bind(1, process_db_id).bind(2, correlation);
  if (q.step()) d.api = ApiCall{q.text(0), q.i64(1), q.i64(2), q.i64(3), correlation};
}

}  // namespace

Details activity_details(const Trace& t, size_t i, const std::string& db_path) {
  Details d;
  const Activities& a = t.activities;
  const Process& p = t.processes[static_cast<size_t>(a.process[i])];
  auto r = tracedb::Reader::open(db_path);
  const auto bind = [&](tracedb::Query& q) {
    q.bind(1, p.db_id).bind(2, a.device[i]).bind(3, a.start[i]).bind(4, a.end[i]);
  };
  std::optional<int64_t> correlation;
  switch (a.kind[i]) {
    case Kind::kernel: {
      auto q = r->query(
          "SELECT grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, "
          "static_shared_bytes, dynamic_shared_bytes, local_bytes_per_thread, launch_type, "
          "graph_id, channel_id, correlation_id, cluster_x, cluster_y, cluster_z, submitted_ns, "
          "context_id, grid_x * grid_y * grid_z, block_x * block_y * block_z FROM kernel WHERE "
          "process_id = ? AND device_id = ? AND start_ns = ? AND "
          "end_ns = ? LIMIT 1");
      bind(q);
      if (!q.step()) break;
      d.fields.emplace_back("grid", dim3(q, 0));
      d.fields.emplace_back("block", dim3(q, 3));
      d.fields.emplace_back("registers per thread", q.text(6));
      d.fields.emplace_back("static shared memory", num(q.i64(7)) + " B");
      d.fields.emplace_back("dynamic shared memory", num(q.i64(8)) + " B");
      if (!q.is_null(9)) d.fields.emplace_back("local memory per thread", num(q.i64(9)) + " B");
      d.fields.emplace_back("launch type", q.text(10));
      add_opt(d, "graph", q, 11);
      add_opt(d, "channel", q, 12);
      if (!q.is_null(14) && q.i64(14) > 0) d.fields.emplace_back("cluster", dim3(q, 14));
      if (!q.is_null(17)) {
        d.fields.emplace_back("launch queueing",
                              num(a.start[i] - q.i64(17)) + " ns (start - submitted)");
      }
      add_opt(d, "context", q, 18);
      correlation = q.opt_i64(13);
      KernelShape ks;  // as the loader makes it
      ks.grid = static_cast<uint32_t>(std::clamp<int64_t>(q.i64(19), 0, UINT32_MAX));
      ks.block = static_cast<uint32_t>(std::clamp<int64_t>(q.i64(20), 0, UINT32_MAX));
      ks.registers = static_cast<uint16_t>(std::clamp<int64_t>(q.i64(6), 0, UINT16_MAX));
      ks.shared = static_cast<uint32_t>(std::clamp<int64_t>(q.i64(7) + q.i64(8), 0, UINT32_MAX));
      d.shape = ks;
      break;
    }
    case Kind::memcpy: {
      auto q = r->query(
          "SELECT copy_kind, src_kind, dst_kind, src_device_id, dst_device_id, async, channel_id, "
          "channel_type, copy_count, correlation_id FROM memcpy WHERE process_id = ? AND "
          "device_id = ? AND start_ns = ? AND end_ns = ? LIMIT 1");
      bind(q);
      if (!q.step()) break;
      d.fields.emplace_back("copy kind", q.text(0));
      d.fields.emplace_back("source memory", q.text(1));
      d.fields.emplace_back("destination memory", q.text(2));
      add_opt(d, "source device", q, 3);
      add_opt(d, "destination device", q, 4);
      d.fields.emplace_back("asynchronous", q.i64(5) != 0 ? "yes" : "no");
      add_opt(d, "channel", q, 6);
      add_opt(d, "channel type", q, 7);
      if (q.i64(8) > 1) d.fields.emplace_back("batched copies", q.text(8));
      correlation = q.opt_i64(9);
      break;
    }
    case Kind::memset: {
      auto q = r->query(
          "SELECT value, correlation_id FROM memset WHERE process_id = ? AND device_id = ? AND "
          "start_ns = ? AND end_ns = ? LIMIT 1");
      bind(q);
      if (!q.step()) break;
      d.fields.emplace_back("value", q.text(0));
      correlation = q.opt_i64(1);
      break;
    }
  }
  if (correlation) {
    d.fields.emplace_back("correlation id", num(*correlation));
    api_call(d, *r, p.db_id, *correlation);
  }
  return d;
}

Details collective_details(const Trace& t, size_t c, const std::string& db_path) {
  Details d;
  const Collective& col = t.collectives[c];
  if (col.comm_id.empty() || col.seq < 0) return d;
  const Process& p = t.processes[static_cast<size_t>(col.process)];
  auto r = tracedb::Reader::open(db_path);
  if (!r->has_table("collective")) return d;
  auto q = r->query(
      "SELECT datatype, count, reduce_op, root, peer, group_id, thread_id, host_start_ns, "
      "host_end_ns, result, stream_id FROM collective WHERE process_id = ? AND comm_id = ? AND "
      "seq = ? AND op = ? LIMIT 1");
  q.bind(1, p.db_id).bind(2, col.comm_id).bind(3, col.seq).bind(4, col.op);
  if (!q.step()) return d;
  d.fields.emplace_back("datatype", q.text(0));
  d.fields.emplace_back("count", q.text(1));
  add_opt(d, "reduction", q, 2);
  add_opt(d, "root", q, 3);
  add_opt(d, "peer", q, 4);
  add_opt(d, "group", q, 5);
  add_opt(d, "stream", q, 10);
  if (q.i64(9) != 0) d.fields.emplace_back("result", "error " + q.text(9));
  d.host_call = ApiCall{"nccl" + col.op, q.i64(6), q.i64(7), q.i64(8), 0};
  return d;
}

Details range_details(const Trace& t, size_t g, const std::string& db_path) {
  Details d;
  const Range& rg = t.ranges[g];
  const Process& p = t.processes[static_cast<size_t>(rg.process)];
  auto r = tracedb::Reader::open(db_path);
  auto q = r->query(
      "SELECT kind, category, category_name, color, payload_int, payload_double, end_thread_id, "
      "closed FROM nvtx_range WHERE process_id = ? AND thread_id = ? AND start_ns = ? AND "
      "end_ns = ? AND name = ? LIMIT 1");
  q.bind(1, p.db_id).bind(2, rg.thread).bind(3, rg.start).bind(4, rg.end).bind(5, rg.name);
  if (!q.step()) return d;
  d.fields.emplace_back("range kind", q.text(0));
  add_opt(d, "category", q, 1);
  add_opt(d, "category name", q, 2);
  if (!q.is_null(3)) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "#%08llx",
                  static_cast<unsigned long long>(q.i64(3)) & 0xffffffffULL);
    d.fields.emplace_back("colour", hex);
  }
  add_opt(d, "payload", q, 4);
  add_opt(d, "payload", q, 5);
  if (!q.is_null(6) && q.i64(6) != rg.thread) d.fields.emplace_back("ended on thread", q.text(6));
  if (q.i64(7) == 0) d.fields.emplace_back("closed", "no (still open when the process ended)");
  return d;
}

}  // namespace c3::analyzer
