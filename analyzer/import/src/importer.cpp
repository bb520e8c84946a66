#include "c3/importer/importer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "c3/tracedb/output_file.h"
#include "c3/tracedb/writer.h"

namespace c3::importer {

namespace {
// A writer's message names the temporary file; drops that name (the caller names the output).
std::string without_path(std::string msg, const std::string& path) {
  for (const std::string& p : {" '" + path + "'", "'" + path + "'", path}) {
    for (size_t at = msg.find(p); at != std::string::npos; at = msg.find(p))
      msg.erase(at, p.size());
  }
  return msg;
}
}  // namespace

const char* format_name(Format f) {
  switch (f) {
    case Format::kineto:
      return "kineto";
    case Format::nsys:
      return "nsys";
    case Format::unknown:
      return "unknown";
  }
  return "unknown";
}

Format detect(const std::string& path, std::string* why) {
  // Checked before opening: a FIFO would block the open until a writer comes.
  if (std::string problem = tracedb::input_file_problem(path); !problem.empty()) {
    *why = std::move(problem);
    return Format::unknown;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = std::strerror(errno);
    return Format::unknown;
  }
  char head[16] = {};
  in.read(head, sizeof head);
  const auto n = in.gcount();
  if (n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f &&
      static_cast<unsigned char>(head[1]) == 0x8b) {
    return Format::kineto;  // gzip: Kineto traces are saved as .json.gz
  }
  if (n == 16 && std::memcmp(head, "SQLite format 3", 16) == 0) return Format::nsys;
  // JSON may start with a UTF-8 byte order mark (editors on Windows write one).
  const std::streamsize from = n >= 3 && std::memcmp(head, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
  for (std::streamsize i = from; i < n; ++i) {
    const char c = head[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '{') return Format::kineto;
    break;
  }
  *why =
      n == 0 ? "empty file" : "neither JSON (PyTorch profiler) nor SQLite (Nsight Systems export)";
  return Format::unknown;
}

void Stats::add(const Stats& o) {
  input_bytes += o.input_bytes;
  events += o.events;
  processes += o.processes;
  kernels += o.kernels;
  memcpys += o.memcpys;
  memsets += o.memsets;
  api_calls += o.api_calls;
  ranges += o.ranges;
  collectives += o.collectives;
  rounded = rounded || o.rounded;
  if (malformed == 0 && o.malformed > 0) first_malformed = o.first_malformed;
  malformed += o.malformed;
  for (const auto& [reason, n] : o.malformed_by) {
    if (malformed_by[reason] == 0) first_malformed_by[reason] = o.first_malformed_by.at(reason);
    malformed_by[reason] += n;
  }
  for (const auto& [table, n] : o.rejected) {
    if (rejected[table] == 0) first_rejected[table] = o.first_rejected.at(table);
    rejected[table] += n;
  }
  cpu_ops_not_kept += o.cpu_ops_not_kept;
  for (const auto& [key, n] : o.cpu_collectives) cpu_collectives[key] += n;
  if (!o.salvaged.empty()) salvaged += (salvaged.empty() ? "" : "; ") + o.salvaged;
}

void Stats::bad(const std::string& where) {
  if (malformed++ == 0) first_malformed = where;
}

void Stats::bad(const std::string& reason, const std::string& where) {
  bad(where);
  if (malformed_by[reason]++ == 0) first_malformed_by[reason] = where;
}

void Stats::reject(const std::string& table, const std::string& where) {
  bad(where);
  if (rejected[table]++ == 0) first_rejected[table] = where;
}

std::string check_times(int64_t start_ns, int64_t end_ns) {
  if (start_ns < 0) return "starts at a negative time (" + std::to_string(start_ns) + " ns)";
  if (end_ns < start_ns) {
    return "ends before it starts (" + std::to_string(start_ns) + " to " + std::to_string(end_ns) +
           " ns)";
  }
  if (end_ns > kMaxTimeNs) return "ends past 2^62 ns (" + std::to_string(end_ns) + " ns)";
  return "";
}

Stats import_files(const std::vector<std::string>& inputs, const std::string& out,
                   const Options& options, const Progress& progress) {
  if (inputs.empty()) throw std::invalid_argument("import: no input files");
  std::vector<Format> formats;
  std::string source;
  for (const auto& in : inputs) {
    std::string why;
    const Format f = detect(in, &why);
    if (f == Format::unknown) {
      std::string msg = "'" + in + "': ";
      msg += why;
      throw std::invalid_argument(msg);
    }
    formats.push_back(f);
    if (source.empty()) {
      source = format_name(f);
    } else if (source != format_name(f)) {
      source = "mixed";
    }
  }
  tracedb::OutputRules rules;
  rules.force = options.force;
  rules.inputs = inputs;
  // Written under a temporary name and moved into place at the end: `out` holds a whole import
  // or nothing, and a signal removes the temporary (tracedb/output_file.h).
  tracedb::OutputPath target("-o", out, rules);
  tracedb::WriterOptions wo;
  wo.source = "importer:" + source;
  wo.scratch = options.scratch;
  for (size_t i = 0; i < inputs.size(); ++i) wo.source_file += (i ? "," : "") + inputs[i];
  Stats total;
  {
    std::unique_ptr<tracedb::Writer> w;
    try {
      w = tracedb::Writer::create(target.temp(), wo);
    } catch (const tracedb::WriteError& e) {
      // The writer names the temporary; the user named `out`.
      throw tracedb::WriteError(
          e.kind(), "-o " + tracedb::printable(out) + ": " + without_path(e.what(), target.temp()));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Stats s = formats[i] == Format::kineto ? import_kineto(inputs[i], *w, options, progress)
                                                   : import_nsys(inputs[i], *w, progress);
      total.add(s);
    }
    w->set_stat(std::nullopt, "import_events", total.events);
    w->set_stat(std::nullopt, "import_malformed", total.malformed,
                total.malformed ? std::optional<std::string>(total.first_malformed) : std::nullopt);
    for (const auto& [reason, n] : total.malformed_by) {
      w->set_stat(std::nullopt, "import_malformed_" + reason, n,
                  total.first_malformed_by.at(reason));
    }
    for (const auto& [table, n] : total.rejected)
      w->set_stat(std::nullopt, "import_rejected_" + table, n, total.first_rejected.at(table));
    if (total.cpu_ops_not_kept > 0) {
      w->set_stat(std::nullopt, "import_cpu_ops_not_kept", total.cpu_ops_not_kept,
                  std::string("PyTorch cpu_op and python_function events: the trace has no table "
                              "for CPU ops"));
    }
    for (const auto& [key, n] : total.cpu_collectives) {
      w->set_stat(std::nullopt, "import_cpu_collectives_" + key.first + "_" + key.second, n,
                  key.first + ":" + key.second);
    }
    if (!total.salvaged.empty()) w->set_stat(std::nullopt, "import_salvaged", 1, total.salvaged);
    try {
      w->close();
    } catch (const tracedb::WriteError& e) {
      throw tracedb::WriteError(
          e.kind(), "-o " + tracedb::printable(out) + ": " + without_path(e.what(), target.temp()));
    }
  }
  target.commit();
  return total;
}

}  // namespace c3::importer
