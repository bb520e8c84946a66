// c3scope info: what a trace holds: processes, devices, rows per table, time span, drops and
// warnings.
#include <climits>
#include <cstdio>
#include <iostream>
#include <map>
#include <sstream>

#include "c3/analyzer/open/open.h"
#include "c3/analyzer/report/report.h"
#include "c3/tracedb/harden.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"
#include "c3/tracedb/schema.h"
#include "commands.h"
#include "format.h"

namespace c3::cli {
namespace {

// Every text from the trace is shown through tracedb::printable: a host name or command line with
// escape sequences or newlines in it cannot retitle the terminal or print fake lines.
std::string tx(const std::string& s) {
  return tracedb::printable(s);
}

// `header`: the first line, naming what the user gave (never a temporary conversion).
void print_info(const tracedb::Reader& r, const std::string& header, std::ostream& out) {
  const auto& meta = r.meta();
  auto m = [&](const char* k) {
    auto it = meta.find(k);
    return it == meta.end() ? std::string("?") : tx(it->second);
  };
  out << tx(header) << "\n";
  out << "  schema v" << r.schema_version() << ", written by c3scope " << m("c3scope_version")
      << " (" << m("source") << ") at " << m("created_at");
  if (meta.count("source_file")) out << " from " << m("source_file");
  out << "\n";

  // c3bench's simulated node (docs/sim-model.md): its virtual clock names the trace clock, its
  // devices are "Simulated ..." (the facts analyze's is_simulated reads).
  bool simulated = false;
  std::string simulated_clock;
  auto procs = r.query(
      "SELECT id, pid, host, rank, local_rank, world_size, command_line, start_ns, end_ns, "
      "trace_clock FROM process ORDER BY id");
  // c3scope's caps on untrusted text (docs/analyze.md, Limits), as analyze reads it.
  procs.cap(2, tracedb::kNameCap).cap(6, tracedb::kCommandLineCap).cap(9, tracedb::kNameCap);
  while (procs.step()) {
    out << "  process " << procs.i64(1) << " on "
        << (procs.text(2).empty() ? std::string("(host unknown)") : tx(procs.text(2)));
    if (auto rank = procs.opt_i64(3)) {
      out << ", rank " << *rank;
      const auto ws = procs.opt_i64(5);
      out << (ws && *ws > 0 ? "/" + std::to_string(*ws) : std::string(" (world size unknown)"));
    }
    if (auto lr = procs.opt_i64(4)) out << ", local rank " << *lr;
    out << ": "
        << (procs.text(6).empty() ? std::string("(command line unknown)") : tx(procs.text(6)))
        << "\n";
    if (auto end = procs.opt_i64(8)) {
      out << "    traced for " << format_duration(*end - procs.i64(7)) << "\n";
    }
    if (procs.text(9).starts_with("simulated node")) {
      simulated = true;
      simulated_clock = procs.text(9);
    }
  }

  auto devs = r.query(
      "SELECT device_id, name, sm_count, cc_major, cc_minor, memory_bytes, "
      "memory_bandwidth_bytes_per_s, pci_bus_id FROM device ORDER BY process_id, device_id");
  devs.cap(1, tracedb::kNameCap).cap(7, tracedb::kNameCap);
  while (devs.step()) {
    // Imported traces may lack what the collector records: 0 is "unknown", not a value.
    const std::string name = devs.text(1);
    simulated = simulated || name.starts_with("Simulated ");
    out << "  device " << devs.i64(0) << ": " << (name.empty() ? "(name unknown)" : tx(name))
        << ", " << (devs.i64(2) > 0 ? std::to_string(devs.i64(2)) + " SMs" : "SMs unknown")
        << ", cc "
        << (devs.i64(3) > 0 ? std::to_string(devs.i64(3)) + "." + std::to_string(devs.i64(4))
                            : std::string("unknown"))
        << ", " << (devs.i64(5) > 0 ? format_bytes(devs.i64(5)) : "memory unknown");
    if (auto bw = devs.opt_i64(6); bw && *bw > 0) out << ", " << format_bytes(*bw) << "/s";
    if (auto bus = devs.opt_text(7)) out << ", PCI " << tx(*bus);
    out << "\n";
  }
  if (simulated) {
    out << "  SIMULATED: recorded on c3bench's simulated node"
        << (simulated_clock.empty() ? "" : " (trace clock: " + tx(simulated_clock) + ")")
        << ": its GPU activity is the model's prediction, not a measurement\n";
  }

  out << "  rows:";
  bool first = true;
  for (const auto& t : tracedb::tables()) {
    if (t.name == "meta" || t.name == "string" || t.name == "stats") continue;
    if (!r.has_table(std::string(t.name))) continue;
    out << (first ? " " : ", ") << t.name << " " << r.count(std::string(t.name));
    first = false;
  }
  out << "\n";

  auto bench = r.query(
      "SELECT r.id, r.backend, r.simulated, r.description, COUNT(b.id), SUM(b.status = 'ok') "
      "FROM bench_run r LEFT JOIN bench_result b ON b.run_id = r.id GROUP BY r.id ORDER BY r.id");
  bench.cap(1, tracedb::kNameCap).cap(3, tracedb::kCommandLineCap);
  while (bench.step()) {
    out << "  c3bench run " << bench.i64(0) << ": " << bench.i64(4) << " cases (" << bench.i64(5)
        << " run) on the " << tx(bench.text(1)) << " backend, " << tx(bench.text(3))
        << (bench.i64(2) ? " -- simulated: predictions, not measurements" : "") << "\n";
  }

  auto span = r.query(
      "SELECT MIN(start_ns), MAX(end_ns), COUNT(*) FROM (SELECT start_ns, end_ns FROM kernel "
      "UNION ALL SELECT start_ns, end_ns FROM memcpy UNION ALL SELECT start_ns, end_ns FROM "
      "memset)");
  if (span.step() && span.i64(2) > 0) {
    out << "  GPU activity span: " << format_duration(span.i64(1) - span.i64(0)) << " ("
        << span.i64(2) << " kernels, copies and sets)\n";
  }
  auto named = r.query("SELECT COUNT(*), SUM(name IS NOT NULL) FROM stream");
  if (named.step() && named.i64(0) > 0) {
    out << "  streams: " << named.i64(0) << " (" << named.i64(1) << " named)\n";
  }

  // Warnings: anything that means data is missing or suspect.
  std::vector<std::string> warnings;
  if (m("clean_close") != "1") {
    warnings.push_back(
        "not closed cleanly (the process was killed or is still running): data "
        "up to its last periodic commit");
  }
  auto stats = r.query("SELECT name, value, detail FROM stats ORDER BY name");
  stats.cap(0, tracedb::kNameCap).cap(2, tracedb::kCommandLineCap);
  std::ostringstream counters;
  std::map<std::pair<std::string, std::string>, int64_t> cpu_collectives;
  while (stats.step()) {
    const std::string name = tx(stats.text(0));
    const int64_t v = stats.i64(1);
    if (name.starts_with("import_cpu_collectives_")) {  // their own line, as analyze says it
      const std::string d = stats.opt_text(2).value_or("");
      const size_t colon = d.find(':');
      if (colon != std::string::npos && d.size() <= 129 && v > 0) {
        int64_t& n = cpu_collectives[{tracedb::printable(d.substr(0, colon)),
                                      tracedb::printable(d.substr(colon + 1))}];
        if (__builtin_add_overflow(n, v, &n)) n = INT64_MAX;
      }
      continue;
    }
    if (name == "cupti_status") {
      out << "  CUPTI: " << (v ? "recording" : "not recording");
      const auto d = stats.opt_text(2);
      if (d && !d->empty()) {
        out << " (" << tx(*d) << ")";
      } else if (!v) {
        // The collector starts CUPTI when the process initializes CUDA, and records why it
        // could not; no reason means it was never started (docs/schema.md, stats).
        out << (m("clean_close") == "1"
                    ? " (the process never initialized CUDA, so there was no GPU activity to "
                      "record)"
                    : " (the process had not initialized CUDA by the last commit)");
      }
      out << "\n";
      continue;
    }
    if (v == 0) continue;
    if (name == "cupti_dropped_records" || name == "queue_dropped_rows" ||
        name == "buffer_pool_exhausted" || name == "cupti_invalid_records" ||
        name == "nvtx_unmatched_ends" || name == "nvtx_unclosed_ranges") {
      warnings.push_back(name + " = " + std::to_string(v));
    }
    if (name == "collector_overhead_ns" || name == "writer_ns") {
      counters << " " << name << "=" << format_duration(v);
    } else {
      counters << " " << name << "=" << v;
    }
  }
  if (!counters.str().empty()) out << "  counters:" << counters.str() << "\n";
  for (const auto& line : analyzer::cpu_collective_lines(cpu_collectives))
    out << "  " << line << "\n";
  for (const auto& w : warnings) out << "  warning: " << w << "\n";
}

}  // namespace

Action add_info(CLI::App& app) {
  auto* cmd = app.add_subcommand("info", "Summarize traces: processes, devices, rows, drops");
  auto files = std::make_shared<std::vector<std::string>>();
  cmd->add_option("traces", *files,
                  "Traces (c3scope, PyTorch profiler JSON, Nsight Systems exports) or folders")
      ->required();
  return [files] {
    int rc = kExitOk;
    // A signal removes the temporary conversions (analyzer/open.h's TempDir).
    tracedb::install_output_cleanup();
    // Opened as analyze opens them (analyzer/open.h): PyTorch and Nsight files are converted
    // into a temporary trace first, so info shows what the analyzer reads.
    for (const auto& f : *files) {
      try {
        std::vector<std::string> notes;
        const std::vector<analyzer::Input> inputs = analyzer::resolve_inputs({f}, &notes);
        for (const std::string& n : notes) error_line("info: warning: " + n);
        for (const analyzer::Input& in : inputs) {
          if (in.format == analyzer::InputFormat::summary) {
            std::cout << tx(in.path) << ": a c3scope summary (read it with 'c3scope analyze')\n";
            continue;
          }
          const analyzer::TraceFiles tf = analyzer::convert_inputs({in}, {});
          // The user's file, never the temporary conversion (gone when this returns).
          std::string header = in.path;
          if (in.format != analyzer::InputFormat::c3scope)
            header += std::string(": ") + analyzer::input_format_name(in.format);
          auto r = tracedb::Reader::open(tf.files.front());
          print_info(*r, header, std::cout);
        }
      } catch (const std::exception& e) {
        error_line(std::string("info: ") + e.what());
        rc = kExitUsage;
      }
    }
    return rc;
  };
}

}  // namespace c3::cli
