#include "c3/importer/importer.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "c3/tracedb/writer.h"

namespace c3::importer {

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
  for (std::streamsize i = 0; i < n; ++i) {
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
  if (::access(out.c_str(), F_OK) == 0) {
    throw std::invalid_argument("'" + out +
                                "' exists; import never overwrites: choose another name");
  }
  tracedb::WriterOptions wo;
  wo.source = "importer:" + source;
  wo.scratch = options.scratch;
  for (size_t i = 0; i < inputs.size(); ++i) wo.source_file += (i ? "," : "") + inputs[i];
  // Written under a temporary name and linked into place at the end: `out` holds a whole
  // import or nothing.
  const std::string tmp = out + ".partial-" + std::to_string(::getpid());
  ::unlink(tmp.c_str());
  Stats total;
  try {
    auto w = tracedb::Writer::create(tmp, wo);
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Stats s = formats[i] == Format::kineto ? import_kineto(inputs[i], *w, options, progress)
                                                   : import_nsys(inputs[i], *w, progress);
      total.add(s);
    }
    w->set_stat(std::nullopt, "import_events", total.events);
    w->set_stat(std::nullopt, "import_malformed", total.malformed,
                total.malformed ? std::optional<std::string>(total.first_malformed) : std::nullopt);
    w->close();
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  const int rc = ::link(tmp.c_str(), out.c_str());
  const int err = errno;
  ::unlink(tmp.c_str());
  if (rc != 0) throw std::invalid_argument("cannot create '" + out + "': " + std::strerror(err));
  return total;
}

}  // namespace c3::importer
