#include "c3/analyzer/open/open.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string_view>

#include "build.h"
#include "c3/analyzer/open/cache.h"
#include "c3/analyzer/open/load.h"
#include "c3/common/strings.h"
#include "c3/importer/importer.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"

namespace c3::analyzer {
namespace fs = std::filesystem;
namespace {

// The first `n` bytes of a file, decompressed when it is gzip (zlib reads plain files as they
// are).
std::string head_of(const std::string& path, size_t n) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return {};
  std::string out(n, '\0');
  const int got = gzread(f, out.data(), static_cast<unsigned>(n));
  gzclose(f);
  out.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return out;
}

// The last `n` bytes of a plain file (empty for a gzip one: its tail is not text).
std::string tail_of(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  char magic[2] = {};
  in.read(magic, 2);
  if (in.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
      static_cast<unsigned char>(magic[1]) == 0x8b)
    return {};
  in.clear();
  in.seekg(0, std::ios::end);
  const auto size = static_cast<size_t>(std::max<std::streamoff>(in.tellg(), 0));
  const size_t from = size > n ? size - n : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string out(size - from, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return out;
}

enum class Sniff { trace, summary, report, exported, other };

// c3scope's Perfetto export (export/perfetto.cpp) begins {"displayTimeUnit": "ns",
// "traceEvents": [ (a PyTorch profiler trace begins with schemaVersion or deviceProperties;
// its displayTimeUnit, "ms", comes last).
bool is_c3scope_export(std::string_view head) {
  size_t i = 0;
  auto ws = [&] {
    while (i < head.size() && std::isspace(static_cast<unsigned char>(head[i]))) ++i;
  };
  auto take = [&](std::string_view token) {
    ws();
    if (head.substr(i, token.size()) != token) return false;
    i += token.size();
    return true;
  };
  return take("{") && take("\"displayTimeUnit\"") && take(":") && take("\"ns\"") && take(",") &&
         take("\"traceEvents\"");
}

// `why` gets what the file looked like when it is not an input.
Sniff sniff(const std::string& path, InputFormat* format, std::string* why, bool strict_json) {
  std::string w;
  const importer::Format f = importer::detect(path, &w);
  if (f == importer::Format::unknown) {
    *why = w;
    return Sniff::other;
  }
  if (f == importer::Format::nsys) {
    // SQLite: a c3scope trace, or an Nsight Systems export.
    try {
      *format = tracedb::Reader::open(path)->has_table("gpu_activity") ? InputFormat::c3scope
                                                                       : InputFormat::nsys;
    } catch (const tracedb::ReadError& e) {
      // Not ours: an Nsight export (the importer checks its tables). A damaged or too-new
      // c3scope trace says so.
      if (e.kind() != tracedb::ReadError::Kind::not_c3scope) throw std::runtime_error(e.what());
      *format = InputFormat::nsys;
    }
    return Sniff::trace;
  }
  // JSON: a Kineto trace, a c3scope summary, or a c3scope report (not an input).
  const std::string head = head_of(path, size_t{64} << 10);
  const std::string first = head.substr(0, 512);
  // c3scope writes "schema" first; a tool that sorted the keys (jq -S) moved it to the end, so
  // a plain file is also looked at from its end. (A Kineto trace has traceEvents early.)
  const bool kineto_like = head.find("\"traceEvents\"") != std::string::npos;
  const std::string tail = kineto_like ? std::string() : tail_of(path, 4096);
  auto has_schema = [&](const char* schema) {
    return first.find(schema) != std::string::npos || tail.find(schema) != std::string::npos;
  };
  if (has_schema("\"c3scope-summary/")) {
    *format = InputFormat::summary;
    return Sniff::summary;
  }
  // (Reports before schema-first output had their keys sorted, "schema" near the end.)
  if (has_schema("\"c3scope-analyze/") || has_schema("\"c3scope-compare/")) {
    *why = "a c3scope report, not a trace (save summaries with 'c3scope analyze --summary')";
    return Sniff::report;
  }
  if (strict_json && is_c3scope_export(first)) {
    *why = "a c3scope Perfetto export, not a trace";
    return Sniff::exported;
  }
  if (strict_json && !kineto_like) {
    *why = "JSON without traceEvents";
    return Sniff::other;
  }
  *format = InputFormat::kineto;
  return Sniff::trace;
}

// An error of a conversion, about the file the user gave: the importer names its output (the
// temporary trace, as "-o PATH"), which the user never named. A message that names neither
// the temporary nor -o (the input's own damage) is kept as it is.
std::string about_input(const std::string& msg, const std::string& input, const std::string& db,
                        const std::string& temp_dir) {
  const std::string shown_db = tracedb::printable(db);
  const std::string shown_dir = tracedb::printable(temp_dir);
  if (msg.find(shown_dir) == std::string::npos && msg.find(db) == std::string::npos &&
      msg.find(temp_dir) == std::string::npos)
    return msg;
  std::string why = msg;
  for (const std::string& prefix : {"-o " + shown_db + ": ", "-o " + db + ": "}) {
    if (why.starts_with(prefix)) why = why.substr(prefix.size());
  }
  // Whatever still names the temporary names it as what it is.
  for (const std::string& name : {shown_db, db, shown_dir, temp_dir}) {
    for (size_t at = why.find(name); !name.empty() && at != std::string::npos;
         at = why.find(name, at)) {
      why.replace(at, name.size(), "the temporary trace");
      at += std::string_view("the temporary trace").size();
    }
  }
  const std::string folder = temp_dir.substr(0, temp_dir.rfind('/'));
  return "'" + tracedb::printable(input) + "': cannot convert it for reading (into a temporary " +
         "trace in " + tracedb::printable(folder.empty() ? "/" : folder) + ", $TMPDIR): " + why;
}

// A backend or op name as the importer counts them (letters, digits, '_'; 1 to 64): anything
// else in a file's stats is not one of its counts.
bool op_word(std::string_view s) {
  return !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

void add_cpu_collective(Trace& t, const std::string& backend, const std::string& op, int64_t n) {
  if (!op_word(backend) || !op_word(op) || n <= 0) return;
  int64_t& v = t.cpu_collectives[{backend, op}];
  if (__builtin_add_overflow(v, n, &v)) v = INT64_MAX;
}

// The CPU-side collectives an import counted in a trace's stats (import_cpu_collectives_*,
// detail "backend:op").
void add_cpu_collectives(Trace& t, const std::string& db) {
  auto r = tracedb::Reader::open(db);
  if (!r->has_table("stats")) return;
  auto q = r->query(
      "SELECT IFNULL(detail, ''), value FROM stats WHERE name LIKE "
      "'import\\_cpu\\_collectives\\_%' ESCAPE '\\'");
  while (q.step()) {
    const std::string d = q.text(0);
    const size_t colon = d.find(':');
    if (colon != std::string::npos)
      add_cpu_collective(t, d.substr(0, colon), d.substr(colon + 1), q.i64(1));
  }
}

}  // namespace

const char* input_format_name(InputFormat f) {
  switch (f) {
    case InputFormat::c3scope:
      return "c3scope trace";
    case InputFormat::kineto:
      return "PyTorch profiler (Kineto) trace";
    case InputFormat::nsys:
      return "Nsight Systems export";
    case InputFormat::summary:
      return "c3scope summary";
  }
  return "?";
}

std::vector<Input> resolve_inputs(const std::vector<std::string>& paths,
                                  std::vector<std::string>* notes) {
  std::vector<Input> out;
  // What was read already, by device and inode: a file given twice is read once.
  std::map<std::pair<dev_t, ino_t>, std::string> seen;
  auto add = [&](const Input& in) {
    struct stat st {};
    if (::stat(in.path.c_str(), &st) == 0) {
      const auto [it, fresh] = seen.emplace(std::pair{st.st_dev, st.st_ino}, in.path);
      if (!fresh) {
        if (notes) {
          notes->push_back("'" + tracedb::printable(in.path) + "' is the same file as '" +
                           tracedb::printable(it->second) + "': read once");
        }
        return;
      }
    }
    out.push_back(in);
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> names;
      for (const auto& e : fs::directory_iterator(p, ec)) {
        if (e.is_regular_file(ec)) names.push_back(e.path().string());
      }
      // Natural order: rank2.json before rank10.json (the CSV rows follow the input order).
      std::sort(names.begin(), names.end(), [](const std::string& a, const std::string& b) {
        return common::natural_less(a, b);
      });
      std::vector<Input> traces, summaries;
      size_t outputs = 0;  // c3scope's own outputs: reports and exports
      for (const std::string& f : names) {
        // Leftovers of an interrupted write are not inputs.
        if (f.find(".partial") != std::string::npos ||
            fs::path(f).filename().string().starts_with(".c3scope-") || f.ends_with("-wal") ||
            f.ends_with("-shm") || f.ends_with("-journal"))
          continue;
        Input in{f};
        std::string why;
        const Sniff s = sniff(f, &in.format, &why, /*strict_json=*/true);
        if (s == Sniff::trace) traces.push_back(in);
        if (s == Sniff::summary) summaries.push_back(in);
        if (s == Sniff::report || s == Sniff::exported) ++outputs;
      }
      // A folder of traces is read for its traces: a summary, report or export written there
      // (analyze F --summary F/s.json) is c3scope's output about them, not more of them.
      const std::vector<Input>& read = traces.empty() ? summaries : traces;
      const size_t skipped = outputs + (traces.empty() ? 0 : summaries.size());
      if (read.empty()) {
        throw std::invalid_argument("'" + p +
                                    "' is a folder without traces (c3scope, PyTorch profiler "
                                    "or Nsight Systems files) or summaries");
      }
      if (skipped > 0 && notes) {
        notes->push_back("'" + tracedb::printable(p) + "': " + std::to_string(skipped) +
                         " c3scope output(s) in the folder skipped (summaries, reports or "
                         "exports are not traces; name a summary to read it)");
      }
      for (const Input& in : read) add(in);
    } else if (fs::exists(p, ec)) {
      if (const std::string why = tracedb::input_file_problem(p); !why.empty())
        throw std::invalid_argument("'" + tracedb::printable(p) + "' " + why);
      Input in{p};
      std::string why;
      const Sniff s = sniff(p, &in.format, &why, /*strict_json=*/false);
      if (s != Sniff::trace && s != Sniff::summary) {
        std::string msg = "'" + p + "' is not a trace: ";
        msg += why;
        throw std::invalid_argument(msg);
      }
      add(in);
    } else {
      throw std::invalid_argument("'" + p + "' does not exist");
    }
  }
  return out;
}

void remove_temporaries_on_signals() {
  tracedb::install_output_cleanup();
}

TempDir::TempDir() {
  const char* env = std::getenv("TMPDIR");
  std::string tmpl = std::string(env && *env ? env : "/tmp") + "/c3scope-open-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) {
    throw std::runtime_error("cannot make a temporary folder in " +
                             tmpl.substr(0, tmpl.rfind('/')) + ": " + std::strerror(errno) +
                             " (set TMPDIR to a writable folder)");
  }
  path_ = tmpl;
  // A signal (Ctrl-C during a long conversion) removes it too, where the command installed the
  // cleanup (tracedb::install_output_cleanup: every c3scope command and the GUI do).
  tracedb::register_temporary(path_, /*folder=*/true);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
  tracedb::forget_temporary(path_);
}

TraceFiles convert_inputs(const std::vector<Input>& inputs, const OpenOptions& o) {
  TraceFiles out;
  size_t converted = 0, to_convert = 0;
  for (const Input& in : inputs) to_convert += in.format != InputFormat::c3scope;
  for (const Input& in : inputs) {
    if (o.cancel && *o.cancel) throw Cancelled();
    switch (in.format) {
      case InputFormat::c3scope:
        out.files.push_back(in.path);
        out.origins.push_back(in.path);
        continue;
      case InputFormat::summary:
        throw std::invalid_argument("'" + in.path +
                                    "' is a summary: it holds no activities to open here");
      case InputFormat::kineto:
      case InputFormat::nsys:
        break;
    }
    if (!out.temp) out.temp = std::make_shared<TempDir>();
    const std::string db =
        out.temp->path() + "/import-" + std::to_string(out.files.size()) + ".sqlite";
    importer::Options io;
    io.hta_rounding = o.hta_rounding;
    io.salvage = o.salvage;
    io.api_calls = o.launch_calls;  // launch calls: idle causes, launch statistics, queues
    const std::string name = fs::path(in.path).filename().string();
    const double base = static_cast<double>(converted) / static_cast<double>(to_convert);
    if (o.progress) o.progress(0, "importing " + name);
    importer::Stats st;
    try {
      st = importer::import_files({in.path}, db, io, [&](int64_t done, int64_t total) {
        if (o.cancel && *o.cancel) throw Cancelled();
        if (o.progress && total > 0) {
          o.progress(base + static_cast<double>(done) / static_cast<double>(total) /
                                static_cast<double>(to_convert),
                     "importing " + name);
        }
      });
    } catch (const Cancelled&) {
      throw;
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(about_input(e.what(), in.path, db, out.temp->path()));
    } catch (const std::exception& e) {
      throw std::runtime_error(about_input(e.what(), in.path, db, out.temp->path()));
    }
    if (st.malformed > 0 && out.malformed == 0) out.first_malformed = st.first_malformed;
    out.malformed += st.malformed;
    ++converted;
    out.files.push_back(db);
    out.origins.push_back(in.path);
  }
  return out;
}

OpenedTraces open_traces(const std::vector<std::string>& paths, const OpenOptions& o) {
  return open_traces(resolve_inputs(paths), o);
}

OpenedTraces open_traces(const std::vector<Input>& inputs, const OpenOptions& o) {
  OpenedTraces r;
  // Read once (the map): a PyTorch file's or an Nsight export's rows go straight into the trace,
  // with no database in between (build.h); otherwise they are converted into a c3scope trace
  // first (the GUI and snapshots read details back from it).
  auto direct = [&](const Input& in) {
    return o.read_once && (in.format == InputFormat::kineto || in.format == InputFormat::nsys);
  };
  std::vector<Input> via_files;
  for (const Input& in : inputs) {
    if (!direct(in)) via_files.push_back(in);
  }
  const bool converting = std::any_of(via_files.begin(), via_files.end(), [](const Input& in) {
    return in.format != InputFormat::c3scope;
  });
  // Imports take the first 40% of the progress, loading the rest.
  const double share = converting ? 0.4 : 0.0;
  OpenOptions co = o;
  if (o.progress) co.progress = [&](double f, const std::string& w) { o.progress(share * f, w); };
  r.files = convert_inputs(via_files, co);
  LoadOptions lo;
  lo.rules = o.rules;
  lo.defer_kernel_shapes = o.defer_kernel_shapes;
  lo.launch_calls = o.launch_calls;
  lo.progress = [&](int64_t done, int64_t total) {
    if (o.cancel && *o.cancel) throw Cancelled();
    if (o.progress) {
      o.progress(total > 0
                     ? share + (1 - share) * static_cast<double>(done) / static_cast<double>(total)
                     : share,
                 "loading");
    }
  };
  std::vector<Source> sources;
  std::vector<importer::Stats> direct_stats(inputs.size());
  std::set<std::string> direct_paths;
  for (size_t i = 0, f = 0; i < inputs.size(); ++i) {
    if (!direct(inputs[i])) {
      sources.push_back({r.files.files[f++], {}});
      continue;
    }
    direct_paths.insert(inputs[i].path);
    sources.push_back({inputs[i].path, [&, i](TraceBuilder& b) {
                         TraceSink sink(b);
                         const importer::Progress cancel = [&](int64_t, int64_t) {
                           if (o.cancel && *o.cancel) throw Cancelled();
                         };
                         importer::Options io;
                         io.hta_rounding = o.hta_rounding;
                         io.salvage = o.salvage;
                         io.api_calls = o.launch_calls;  // launch calls (why/)
                         // (as the load of a converted file, which reads no calls without them)
                         b.expect_calls(o.launch_calls);
                         direct_stats[i] =
                             inputs[i].format == InputFormat::nsys
                                 ? importer::import_nsys(inputs[i].path, sink, io, cancel, nullptr)
                                 : importer::import_kineto(inputs[i].path, sink, io, cancel);
                       }});
  }
  try {
    // A snapshot of the same files skips SQLite decoding (converted traces are not cached:
    // their temporary files are new every time).
    int64_t bytes = 0;
    for (const auto& f : r.files.files) {
      std::error_code ec;
      const auto sz = fs::file_size(f, ec);
      if (!ec) bytes += static_cast<int64_t>(sz);
    }
    if (!o.cache_dir.empty() && !r.files.temp && direct_paths.empty() &&
        bytes >= o.cache_min_bytes) {
      r.cache_key = cache_key(r.files.files, o.rules_tag);
      r.cache_path = cache_path(o.cache_dir, r.cache_key);
      if (o.progress) o.progress(share, "reading the snapshot");
      if (auto cached = load_cache(r.cache_path, r.cache_key)) {
        r.trace = std::move(*cached);
        r.from_cache = true;
      }
    }
    if (!r.from_cache) r.trace = load_sources(sources, lo);
  } catch (const tracedb::ReadError& e) {
    // A conversion that cannot be read back is named by the file the user gave.
    std::string msg = e.what();
    for (size_t i = 0; r.files.temp && i < r.files.files.size(); ++i) {
      const std::string& tmp = r.files.files[i];
      if (tmp == r.files.origins[i]) continue;
      for (const std::string& name : {tracedb::printable(tmp), tmp}) {
        for (size_t at = msg.find(name); at != std::string::npos; at = msg.find(name, at)) {
          const std::string shown = tracedb::printable(r.files.origins[i]) + " (converted)";
          msg.replace(at, name.size(), shown);
          at += shown.size();
        }
      }
    }
    throw std::runtime_error(msg);
  }
  // Input events the importers could not use, after the rows the load skipped: the
  // conversions' first, then the files read directly (each group in input order).
  auto add_malformed = [&](int64_t n, const std::string& first) {
    if (n <= 0) return;
    if (r.trace.skipped == 0) r.trace.first_skipped = first;
    r.trace.skipped += n;
  };
  add_malformed(r.files.malformed, r.files.first_malformed);
  for (const auto& st : direct_stats) add_malformed(st.malformed, st.first_malformed);
  // CPU-side collectives the PyTorch traces name (not analysed: the report says so).
  try {
    for (const auto& f : r.files.files) add_cpu_collectives(r.trace, f);
  } catch (const tracedb::ReadError& e) {
    throw std::runtime_error(e.what());
  }
  for (const auto& st : direct_stats) {
    for (const auto& [key, n] : st.cpu_collectives)
      add_cpu_collective(r.trace, key.first, key.second, n);
  }
  std::map<std::string, std::string> origin;
  for (size_t i = 0; i < r.files.files.size(); ++i) origin[r.files.files[i]] = r.files.origins[i];
  r.process_db.reserve(r.trace.processes.size());
  for (Process& p : r.trace.processes) {
    // Read straight from a PyTorch file: no database to read details from.
    r.process_db.push_back(direct_paths.count(p.source) ? std::string() : p.source);
    auto it = origin.find(p.source);
    if (it != origin.end()) p.source = it->second;
  }
  return r;
}

bool save_snapshot(const Trace& trace, const OpenedTraces& opened) {
  if (opened.cache_path.empty() || opened.from_cache) return false;
  return save_cache(trace, opened.cache_key, opened.cache_path);
}

}  // namespace c3::analyzer
