// c3scope export: traces to Chrome trace JSON for ui.perfetto.dev or chrome://tracing. Several
// traces (the ranks of a job) go into one file, their clocks aligned as analyze aligns them.
// Under c3scope-mpi each process converts, reads and renders its share, and process 0 writes
// the file (docs/scale.md "Export").
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <string_view>

#include "c3/analyzer/metrics/cross_rank.h"
#include "c3/analyzer/open/load.h"
#include "c3/analyzer/open/open.h"
#include "c3/analyzer/summary/distributed.h"
#include "c3/analyzer/summary/wire.h"
#include "c3/exporter/perfetto.h"
#include "c3/tracedb/reader.h"
#include "commands.h"
#include "output.h"

namespace c3::cli {
namespace {

// Errors name the files the user gave, never their temporary conversions.
std::string named(const analyzer::TraceFiles& tf, std::string msg) {
  for (size_t i = 0; tf.temp && i < tf.files.size(); ++i) {
    if (tf.files[i] == tf.origins[i]) continue;
    for (size_t at = msg.find(tf.files[i]); at != std::string::npos;
         at = msg.find(tf.files[i], at)) {
      msg.replace(at, tf.files[i].size(), tf.origins[i] + " (converted)");
      at += tf.origins[i].size();
    }
  }
  return msg;
}

// Processes in the traces (export aligns the clocks of more than one).
// The line that says what was written (on stderr when the JSON itself went to standard output:
// export -o /dev/stdout | jq), and the note on PyTorch CPU ops the trace cannot hold.
void say_written(const tracedb::OutputFile& file, const std::string& out, size_t traces,
                 const exporter::ExportStats& st) {
  std::ostream& said = file.to_stdout() ? std::cerr : std::cout;
  said << "wrote " << out << ": " << traces << " trace(s), " << st.gpu_events << " GPU events, "
       << st.cpu_events << " host events, " << st.flows
       << " flow arrows (open it in ui.perfetto.dev)\n";
  if (st.cpu_ops_not_kept > 0) {
    said << "note: " << st.cpu_ops_not_kept
         << " PyTorch CPU op(s) (cpu_op, python_function) are not in the export: c3scope's "
            "trace has no table for CPU ops, so the import dropped them (user annotations, "
            "ProfilerStep#N ranges and CUDA API calls are kept)\n";
  }
}

int64_t process_count(const std::string& trace) {
  const auto r = tracedb::Reader::open(trace);
  auto q = r->query("SELECT COUNT(*) FROM process");
  return q.step() ? q.i64(0) : 0;
}

// A step of the distributed export (each process on its share, in input order, up to its first
// error): whether any process failed, every process alike. Process 0 prints the line of the
// lowest input one failed at: the one c3scope export, going input by input, meets first.
bool failed_at_lowest(analyzer::Comm& comm, size_t at, const std::string& line) {
  if (!comm.any(!line.empty())) return false;
  analyzer::Pack p;
  p.u64(line.empty() ? 0 : 1).u64(at).str(line);
  const std::vector<std::string> all = comm.gather(p.take(), 0);
  size_t first = SIZE_MAX;
  std::string first_line;
  for (const std::string& b : all) {
    analyzer::Unpack u(b);
    const bool failed = u.u64() != 0;
    const uint64_t i = u.u64();
    std::string l = u.str();
    if (failed && (first_line.empty() || i < first)) {
      first = i;
      first_line = std::move(l);
    }
  }
  if (comm.rank() == 0) error_line(first_line);
  return true;
}

// The pieces a process sends process 0 of one rendered trace: data, then its end (or an error).
constexpr size_t kPiece = size_t{1} << 20;
constexpr char kData = 'd', kEnd = 'e', kError = 'x';

// Reads a rendered trace in pieces; `each` gets them. False (with `error`) when it cannot.
template <class F>
bool each_piece(const std::string& path, std::string& error, F&& each) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    error = "export: cannot read the temporary " + path + ": " + std::strerror(errno);
    return false;
  }
  std::string piece(kPiece + 1, '\0');
  bool ok = true;
  for (;;) {
    piece[0] = kData;
    const size_t n = std::fread(piece.data() + 1, 1, kPiece, f);
    if (n > 0) each(std::string_view(piece).substr(0, n + 1));
    if (n < kPiece) {
      if (std::ferror(f) != 0) {
        error = "export: cannot read the temporary " + path;
        ok = false;
      }
      break;
    }
  }
  std::fclose(f);
  std::remove(path.c_str());
  return ok;
}

// c3scope export under c3scope-mpi (docs/scale.md "Export"): the same file, stdout and errors as
// c3scope export's, the work shared. Every process runs it, making the same Comm calls.
int export_spread(analyzer::Comm& comm, const std::vector<std::string>& paths,
                  const std::string& out, bool force) {
  const bool root = comm.rank() == 0;
  // A signal removes the output's temporary, the conversions and the rendered parts.
  tracedb::install_output_cleanup();
  // Process 0 resolves the inputs and checks the output (never an input, an existing file only
  // with --force) before any work, as c3scope export does.
  std::vector<analyzer::Input> inputs;
  std::unique_ptr<tracedb::OutputFile> file;
  bool refused = false;
  if (root) {
    try {
      std::vector<std::string> notes;
      inputs = analyzer::resolve_inputs(paths, &notes);
      for (const std::string& n : notes) error_line("export: warning: " + n);
      if (inputs.empty()) {
        error_line("export: no traces in the given paths");
        refused = true;
      } else {
        tracedb::OutputRules rules;
        rules.force = force;
        rules.inputs = paths;
        for (const analyzer::Input& i : inputs) rules.inputs.push_back(i.path);
        file = std::make_unique<tracedb::OutputFile>("-o", out, rules);
      }
    } catch (const std::exception& e) {
      error_line("export: " + std::string(e.what()));
      refused = true;
    }
  }
  if (comm.any(refused)) return kExitUsage;
  const analyzer::Deal deal = analyzer::deal_inputs(comm, inputs, false, "");
  const size_t n = deal.inputs.size();
  std::vector<size_t> mine;  // this process's inputs, in input order
  for (size_t i = 0; i < n; ++i) {
    if (deal.owner[i] == comm.rank()) mine.push_back(i);
  }
  // Each step goes through this process's inputs in order and stops at its first error.
  size_t at = 0;
  std::string line;
  std::vector<analyzer::TraceFiles> conv(mine.size());
  auto fail = [&](size_t k, const std::exception& e) {
    std::string msg = e.what();
    for (const analyzer::TraceFiles& tf : conv) msg = named(tf, std::move(msg));
    at = mine[k];
    line = "export: " + msg;
  };
  // 1. PyTorch and Nsight inputs converted, as c3scope export converts them.
  for (size_t k = 0; k < mine.size(); ++k) {
    try {
      conv[k] = analyzer::convert_inputs({deal.inputs[mine[k]]}, {});
    } catch (const std::exception& e) {
      fail(k, e);
      break;
    }
  }
  if (failed_at_lowest(comm, at, line)) return kExitUsage;
  std::vector<exporter::ExportInput> exports(mine.size());
  for (size_t k = 0; k < mine.size(); ++k) exports[k].trace = conv[k].files.at(0);
  // 2. Processes in all: several (files, or one file holding several ranks) are aligned.
  int64_t processes = 0;
  for (size_t k = 0; k < mine.size(); ++k) {
    try {
      processes += process_count(exports[k].trace);
    } catch (const std::exception& e) {
      fail(k, e);
      break;
    }
  }
  if (failed_at_lowest(comm, at, line)) return kExitUsage;
  int64_t all_processes = 0;
  for (const std::string& b : comm.all_gather(std::to_string(processes)))
    all_processes += std::stoll(b);
  // 3. The clocks, aligned as c3scope export aligns them, without every trace on one process:
  // each loads its traces one at a time and keeps their collectives' records
  // (align_clocks_spread).
  if (all_processes > 1) {
    std::vector<analyzer::Process> ranks;
    std::vector<analyzer::RankCollectives> calls;
    std::vector<uint64_t> order;  // (input, process of the input)
    std::vector<size_t> of;       // the index into `mine` of each rank
    for (size_t k = 0; k < mine.size(); ++k) {
      try {
        analyzer::LoadOptions lo;
        lo.defer_kernel_shapes = true;
        const analyzer::Trace t = analyzer::load({exports[k].trace}, lo);
        for (size_t p = 0; p < t.processes.size(); ++p) {
          ranks.push_back(t.processes[p]);
          calls.push_back(analyzer::collectives_of(t, static_cast<int>(p)));
          order.push_back((static_cast<uint64_t>(mine[k]) << 16) | p);
          of.push_back(k);
        }
      } catch (const std::exception& e) {
        fail(k, e);
        break;
      }
    }
    if (failed_at_lowest(comm, at, line)) return kExitUsage;
    std::vector<const analyzer::RankCollectives*> pointers;
    pointers.reserve(calls.size());
    for (const analyzer::RankCollectives& c : calls) pointers.push_back(&c);
    analyzer::align_clocks_spread(comm, order, ranks, pointers);
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i].offset_ns != 0) exports[of[i]].offset_ns[ranks[i].db_id] = ranks[i].offset_ns;
    }
  }
  // 4. Each trace's processes, for the numbering of the tracks (place_traces) on process 0,
  // which sends every process the places. An input that cannot be read stops the file there,
  // as c3scope export stops at it: the ones after it are not rendered.
  analyzer::Pack shapes;
  for (size_t k = 0; k < mine.size(); ++k) {
    try {
      const exporter::TraceProcesses t = exporter::trace_processes(exports[k].trace);
      shapes.u64(mine[k]).u64(1).u64(static_cast<uint64_t>(t.rows)).u64(t.pids.size());
      for (const auto& [row, pid] : t.pids)
        shapes.u64(static_cast<uint64_t>(row)).u64(static_cast<uint64_t>(pid));
    } catch (const std::exception& e) {
      fail(k, e);
      shapes.u64(mine[k]).u64(0).str(line);
      break;
    }
  }
  const std::vector<std::string> gathered = comm.gather(shapes.take(), 0);
  size_t stop = n;        // the first input whose processes could not be read
  std::string stop_line;  // its error
  analyzer::Pack places_out;
  if (root) {
    std::vector<exporter::TraceProcesses> traces(n);
    for (const std::string& b : gathered) {
      analyzer::Unpack u(b);
      while (!u.done()) {
        const uint64_t i = u.u64();
        if (i >= n) throw std::runtime_error("a process sent the processes of no input");
        if (u.u64() == 0) {
          std::string l = u.str();
          if (i < stop) {
            stop = i;
            stop_line = std::move(l);
          }
          continue;
        }
        exporter::TraceProcesses& t = traces[i];
        t.rows = static_cast<int64_t>(u.u64());
        t.pids.resize(u.count(16));  // (a garbled count: refused, not allocated)
        for (auto& [row, pid] : t.pids) {
          row = static_cast<int64_t>(u.u64());
          pid = static_cast<int64_t>(u.u64());
        }
      }
    }
    traces.resize(stop);
    const std::vector<exporter::TracePlace> places = exporter::place_traces(traces);
    places_out.u64(stop);
    for (const exporter::TracePlace& p : places) {
      places_out.u64(static_cast<uint64_t>(p.base)).u64(p.pid.size());
      for (const auto& [row, pid] : p.pid)
        places_out.u64(static_cast<uint64_t>(row)).u64(static_cast<uint64_t>(pid));
    }
  }
  std::vector<exporter::TracePlace> places;
  {
    const std::string b = comm.broadcast(places_out.take(), 0);
    analyzer::Unpack u(b);
    stop = u.u64();
    places.resize(stop);
    for (exporter::TracePlace& p : places) {
      p.base = static_cast<int64_t>(u.u64());
      const uint64_t k = u.u64();
      for (uint64_t j = 0; j < k; ++j) {
        const auto row = static_cast<int64_t>(u.u64());
        p.pid[row] = static_cast<int64_t>(u.u64());
      }
    }
  }
  // 5. Each process renders its traces before `stop` into temporary files, in parallel with the
  // others'.
  const analyzer::TempDir parts;
  auto part = [&parts](size_t i) { return parts.path() + "/" + std::to_string(i) + ".json"; };
  exporter::ExportStats st;
  line.clear();
  for (size_t k = 0; k < mine.size() && mine[k] < stop; ++k) {
    try {
      const std::string path = part(mine[k]);
      FILE* f = std::fopen(path.c_str(), "wb");
      if (f == nullptr) {
        throw std::runtime_error("cannot write the temporary " + path + ": " +
                                 std::strerror(errno));
      }
      try {
        st += exporter::render_perfetto(exports[k], places[mine[k]], f);
      } catch (...) {
        std::fclose(f);
        throw;
      }
      const bool bad = std::ferror(f) != 0;
      if (std::fclose(f) != 0 || bad)
        throw std::runtime_error("cannot write the temporary " + path + " (is its disk full?)");
    } catch (const std::exception& e) {
      fail(k, e);
      break;
    }
  }
  // Process 0 also stands for the input whose processes could not be read.
  if (root && stop < n && (line.empty() || stop < at)) {
    at = stop;
    line = stop_line;
  }
  if (failed_at_lowest(comm, at, line)) return kExitUsage;
  {
    analyzer::Pack p;
    p.u64(static_cast<uint64_t>(st.gpu_events)).u64(static_cast<uint64_t>(st.cpu_events));
    p.u64(static_cast<uint64_t>(st.flows)).u64(static_cast<uint64_t>(st.cpu_ops_not_kept));
    const std::vector<std::string> all = comm.gather(p.take(), 0);
    st = {};
    for (const std::string& b : all) {
      analyzer::Unpack u(b);
      exporter::ExportStats s;
      s.gpu_events = static_cast<int64_t>(u.u64());
      s.cpu_events = static_cast<int64_t>(u.u64());
      s.flows = static_cast<int64_t>(u.u64());
      s.cpu_ops_not_kept = static_cast<int64_t>(u.u64());
      st += s;
    }
  }
  // 6. The file, input by input: process 0 writes its own parts and takes the others' from
  // their processes a piece at a time (each process sends its parts in input order; a sender
  // waits for process 0 to take a piece before the next, so process 0 holds one piece at a time).
  line.clear();
  if (root) {
    exporter::PerfettoFile pf(*file);
    for (size_t i = 0; i < n; ++i) {
      const int from = deal.owner[i];
      if (from == 0) {
        std::string error;
        if (!each_piece(part(i), error,
                        [&pf](std::string_view piece) { pf.append(piece.substr(1)); }) &&
            line.empty())
          line = error;
        continue;
      }
      for (;;) {
        const std::string piece = comm.receive_from(from);
        if (!piece.empty() && piece[0] == kData) {
          pf.append(std::string_view(piece).substr(1));
        } else {
          if (!piece.empty() && piece[0] == kError && line.empty()) line = piece.substr(1);
          break;
        }
      }
    }
    if (!comm.any(!line.empty())) {
      try {
        pf.commit();
      } catch (const std::exception& e) {
        error_line("export: " + std::string(e.what()));
        return kExitUsage;
      }
    } else {
      error_line(line);
      return kExitUsage;
    }
    say_written(*file, out, n, st);
    return kExitOk;
  }
  for (const size_t i : mine) {
    std::string error;
    if (!each_piece(part(i), error,
                    [&comm](std::string_view piece) { comm.send_to(0, std::string(piece)); }))
      comm.send_to(0, kError + error);
    else
      comm.send_to(0, std::string(1, kEnd));
  }
  comm.any(false);
  return kExitOk;
}

}  // namespace

Action add_export(CLI::App& app) {
  auto* cmd = app.add_subcommand("export",
                                 "Write a trace as Chrome trace JSON (open it in ui.perfetto.dev)");
  auto in = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto format = std::make_shared<std::string>("perfetto");
  cmd->add_option("traces", *in,
                  "Traces or folders (c3scope, PyTorch profiler JSON or Nsight Systems export); "
                  "several go into one file, their clocks aligned as analyze aligns them")
      ->required();
  cmd->add_option("-o,--output", *out,
                  "The JSON file to write (an existing file only with --force)")
      ->required();
  auto force = std::make_shared<bool>(false);
  add_force_flag(cmd, *force);
  cmd->add_option("--format", *format, "Output format: perfetto (Chrome trace JSON)")
      ->capture_default_str();
  return [in, out, format, force] {
    if (*format != "perfetto" && *format != "chrome") {
      error_line("export: --format '" + *format + "': expected perfetto");
      return kExitUsage;
    }
    if (g_comm != nullptr) {
      try {
        return export_spread(*g_comm, *in, *out, *force);
      } catch (const analyzer::AgreedError& e) {
        error_line("export: " + std::string(e.what()));
        return kExitUsage;
      } catch (const std::exception& e) {
        // Its own: the other processes may be waiting for it.
        g_comm->fail("export: " + std::string(e.what()));
        error_line("export: " + std::string(e.what()));
        return kExitUsage;
      }
    }
    analyzer::TraceFiles tf;
    try {
      // Opened as analyze opens it (analyzer/open.h): a PyTorch or Nsight file is converted
      // into a temporary trace first.
      // A signal removes the output's temporary and the conversions' (tracedb/output_file.h).
      tracedb::install_output_cleanup();
      std::vector<std::string> notes;
      const std::vector<analyzer::Input> inputs = analyzer::resolve_inputs(*in, &notes);
      for (const std::string& n : notes) error_line("export: warning: " + n);
      if (inputs.empty()) {
        error_line("export: no traces in the given paths");
        return kExitUsage;
      }
      // The output is checked (never an input, an existing file only with --force) before the
      // conversion's work.
      tracedb::OutputRules rules;
      rules.force = *force;
      rules.inputs = *in;
      for (const analyzer::Input& i : inputs) rules.inputs.push_back(i.path);
      tracedb::OutputFile file("-o", *out, rules);
      tf = analyzer::convert_inputs(inputs, {});
      std::vector<exporter::ExportInput> exports;
      for (const std::string& t : tf.files) exports.push_back({t, {}});
      // Processes in all: several (files, or one file holding several ranks) are aligned.
      int64_t processes = 0;
      for (const std::string& t : tf.files) processes += process_count(t);
      if (processes > 1) {
        // The ranks' clocks, aligned by matched collectives (or wall-clock anchors) as analyze
        // and the GUI align them; each process's offset goes with its rows. (The load holds
        // every activity of every trace: about 50 bytes each.)
        analyzer::LoadOptions lo;
        lo.defer_kernel_shapes = true;
        analyzer::Trace t = analyzer::load(tf.files, lo);
        analyzer::align_clocks(t);
        for (const analyzer::Process& p : t.processes) {
          for (size_t k = 0; k < tf.files.size(); ++k) {
            if (p.source == tf.files[k] && p.offset_ns != 0)
              exports[k].offset_ns[p.db_id] = p.offset_ns;
          }
        }
      }
      const auto st = exporter::export_perfetto(exports, file);
      say_written(file, *out, tf.files.size(), st);
    } catch (const std::exception& e) {
      error_line("export: " + named(tf, e.what()));
      return kExitUsage;
    }
    return kExitOk;
  };
}

}  // namespace c3::cli
