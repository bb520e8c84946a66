// c3bench: C3 microbenchmarks. Parses the experiment, loads a backend plugin (cuda or sim), runs
// the sweep through the shared driver and writes the table, JSON and the results tables.
#include <dlfcn.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "c3/bench/backend.h"
#include "c3/bench/descriptors.h"
#include "c3/bench/report.h"
#include "c3/bench/runner.h"
#include "c3/common/time.h"
#include "c3/sim/model/spec.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/version.h"
#include "options.h"

namespace fs = std::filesystem;
using namespace c3::bench;

namespace {

constexpr int kExitUsage = 2;    // bad flags, impossible configurations
constexpr int kExitFailure = 1;  // the run itself failed (backend error, unwritable output)

void error_line(const std::string& msg) {
  // One line, whatever the message quotes (a file name with a newline in it).
  std::cerr << "c3bench: " << c3::tracedb::printable(msg) << "\n";
}

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Folder of the backend plugins: C3BENCH_PLUGIN_DIR, else <this executable's folder>/../lib.
fs::path plugin_dir() {
  if (const char* d = std::getenv("C3BENCH_PLUGIN_DIR"); d && *d) return d;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "lib";
  return exe.parent_path().parent_path() / "lib";
}

// Whether this machine shows an NVIDIA GPU to this process, without loading CUDA (so that a
// machine without one never starts the real CUDA stack before the simulated one).
bool gpu_visible(std::string* why_not) {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
      v && (*v == '\0' || std::string(v) == "-1")) {
    *why_not = "CUDA_VISIBLE_DEVICES hides every GPU";
    return false;
  }
  std::error_code ec;
  if (fs::exists("/dev/nvidia0", ec) || fs::exists("/dev/nvidiactl", ec)) return true;
  *why_not = "no NVIDIA GPU on this machine (no /dev/nvidia*)";
  return false;
}

// The plugin is never unloaded: NCCL, CUDA and CUPTI keep threads and exit handlers in it.
struct LoadedBackend {
  void* handle = nullptr;
  std::unique_ptr<Backend> backend;
};

// Loads lib/libc3bench-<name>.so and creates its backend. Throws std::runtime_error (one line).
LoadedBackend load_backend(const std::string& name, const BackendOptions& opts) {
  const fs::path lib = plugin_dir() / ("libc3bench-" + name + ".so");
  std::error_code ec;
  if (!fs::exists(lib, ec)) {
    std::string hint =
        name == "cuda" ? "this build has no cuda backend (it needs nvcc and NCCL at build time; "
                         "see scripts/setup)"
                       : "rebuild c3bench (scripts/setup), or set C3BENCH_PLUGIN_DIR";
    throw std::runtime_error("backend '" + name + "': " + lib.string() + " not found: " + hint);
  }
  LoadedBackend lb;
  // RTLD_GLOBAL: the plugin's NCCL (and CUPTI) are the process's, as in a program linked to
  // them, so the collector finds and interposes them exactly as in any job.
  lb.handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (lb.handle == nullptr) {
    const char* e = dlerror();
    throw std::runtime_error("backend '" + name + "': cannot load " + lib.string() + ": " +
                             (e ? e : "unknown error"));
  }
  auto create = reinterpret_cast<CreateBackendFn>(dlsym(lb.handle, kCreateBackendSymbol));
  if (create == nullptr) {
    throw std::runtime_error("backend '" + name + "': " + lib.string() + " has no " +
                             kCreateBackendSymbol);
  }
  std::string err;
  lb.backend.reset(create(opts, &err));
  if (!lb.backend) {
    throw std::runtime_error("backend '" + name + "': " + (err.empty() ? "failed to start" : err));
  }
  return lb;
}

std::string command_line(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) {
    if (i) s += ' ';
    s += argv[i];
  }
  return s;
}

int run(int argc, char** argv) {
  Options o;
  CLI::App app{
      "c3bench: how much do compute and communication gain from running together on "
      "your GPUs, what does each slow down, and which knob helps",
      "c3bench"};
  add_options(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    error_line(std::string(e.what()) + " (see 'c3bench --help')");
    return kExitUsage;
  }

  if (o.list_presets) {
    print_presets(stdout);
    return 0;
  }

  // Outputs are opened (as temporaries, checked against the policy and against each other)
  // before anything runs: a long sweep must not end in an error about a path. Only the lead
  // rank commits them; on the other ranks they are checked and removed.
  c3::tracedb::OutputRules rules;
  rules.force = o.force;
  c3::tracedb::install_output_cleanup();
  std::unique_ptr<c3::tracedb::OutputSet> outputs;
  try {
    outputs = std::make_unique<c3::tracedb::OutputSet>(
        std::vector<c3::tracedb::OutputSpec>{{"--json", o.json, false}, {"--db", o.db, true}},
        rules);
  } catch (const c3::tracedb::OutputError& e) {
    error_line(e.what());
    return kExitUsage;
  }

  Plan plan;
  try {
    plan = make_plan(o, [](std::string* why) { return gpu_visible(why); });
  } catch (const std::invalid_argument& e) {
    error_line(e.what());
    return kExitUsage;
  }
  if (!plan.notice.empty()) error_line(plan.notice);

  LoadedBackend lb;
  try {
    lb = load_backend(plan.backend, plan.backend_options);
  } catch (const std::invalid_argument& e) {
    error_line(e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    error_line(e.what());
    return kExitFailure;
  }
  Backend& be = *lb.backend;
  const bool lead = be.rank() == 0;

  RunInfo info;
  info.started_at = c3::common::utc_now_iso8601();
  info.backend = be.name();
  info.simulated = be.simulated();
  info.description = be.description();
  info.timing_overhead = be.timing_overhead();
  info.command_line = command_line(argc, argv);
  info.options_json = plan.options_json;
  info.gpus = be.gpus();
  info.rank = be.rank();
  info.warmup = plan.sweep.warmup;
  info.iterations = plan.sweep.iterations;

  // Every case must be possible somewhere: refuse a sweep in which none can run here.
  const auto cases = build_cases(plan.sweep);
  int runnable = 0;
  std::string first_reason;
  for (const Case& c : cases) {
    std::string why = be.check(c);
    if (why.empty()) {
      ++runnable;
    } else if (first_reason.empty()) {
      first_reason = "case " + std::to_string(c.id) + " (" + c.label() + "): " + why;
    }
  }
  if (runnable == 0) {
    error_line("no case of this sweep can run on the " + be.name() + " backend: " + first_reason);
    return kExitUsage;
  }

  // --json /dev/stdout (| jq): the table and the notes go to stderr, so stdout is the JSON alone.
  const bool json_on_stdout = outputs->to_stdout();
  FILE* said = json_on_stdout ? stderr : stdout;
  TablePrinter table(said, info, cases);
  if (lead) {
    table.header();
    std::fflush(said);
  }
  std::vector<Result> results;
  try {
    Runner runner(be, plan.sweep);
    results = runner.run([&](const Result& r) {
      if (lead) {
        table.row(r);
        std::fflush(said);
      }
    });
  } catch (const std::exception& e) {
    error_line("rank " + std::to_string(be.rank()) + ": " + e.what());
    return kExitFailure;
  }
  if (lead) table.footer(results);

  int rc = 0;
  if (lead && (!o.json.empty() || !o.db.empty())) {
    // Both or neither: one error line, and no output path changed when one fails.
    try {
      if (auto* json = outputs->file("--json")) json->write(to_json(info, results));
      if (auto* db = outputs->database("--db")) write_db(*db, info, results);
      outputs->commit();
      if (!o.json.empty()) std::fprintf(said, "# results written to %s\n", o.json.c_str());
      if (!o.db.empty()) {
        std::fprintf(said, "# results written to %s (tables bench_run, bench_result)\n",
                     o.db.c_str());
      }
    } catch (const c3::tracedb::OutputError& e) {
      error_line(e.what());
      rc = kExitUsage;  // an output not written: 2, as every c3scope tool (docs/outputs.md)
    } catch (const std::exception& e) {
      error_line(std::string("--db ") + c3::tracedb::printable(o.db) + ": " + e.what());
      rc = kExitUsage;
    }
  }
  outputs.reset();  // on the other ranks: the temporaries go
  // Under `c3scope record`: the results go into this process's own trace too.
  const AppendResult a = append_to_trace(info, results);
  if (a.recorded && !a.appended) {
    error_line("results not added to the trace: " + a.error);
  } else if (a.appended && lead) {
    std::fprintf(said,
                 "# results added to this process's trace (tables bench_run, bench_result)\n");
  }
  std::fflush(said);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  int rc = kExitFailure;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    error_line(e.what());
  } catch (...) {
    error_line("unexpected error");
  }
  // Results that did not reach standard output (a full disk, /dev/full) are a failure.
  std::cout.flush();
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int err = errno;
  if (flush_failed || std::ferror(stdout) != 0 || !std::cout.good()) {
    error_line(std::string("cannot write to standard output: ") +
               (err != 0 ? std::strerror(err) : "a write failed (a full disk or a closed pipe?)"));
    rc = kExitUsage;
  }
  return rc;
}
