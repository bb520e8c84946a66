// Runs real processes with the real collector injected, for end-to-end tests.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "c3/tracedb/reader.h"

namespace c3::e2e {

enum class Inject {
  none,            // plain run, for comparing output
  preload,         // LD_PRELOAD only (the collector arranges CUDA and NVTX injection itself)
  cuda_injection,  // CUDA_INJECTION64_PATH only
  record_cli,      // through `c3scope record -o DIR --`
};

struct RunOptions {
  Inject inject = Inject::preload;
  std::map<std::string, std::string> env;  // extra variables
  long fsize_limit = -1;                   // RLIMIT_FSIZE for the job, bytes
  // Called once the job printed `wait_for_line` on stdout (e.g. "ready"): send signals here.
  std::string wait_for_line;
  std::function<void(pid_t)> on_line;
};

inline RunOptions injected(Inject how) {
  RunOptions o;
  o.inject = how;
  return o;
}
inline RunOptions with_env(std::map<std::string, std::string> env) {
  RunOptions o;
  o.env = std::move(env);
  return o;
}

struct RunResult {
  int exit_code = -1;   // when exited normally
  int term_signal = 0;  // when killed by a signal
  std::string out, err;
  std::vector<std::string> traces;  // *.sqlite files in the output folder, sorted by mtime
};

// A fresh output folder under the build tree, removed on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string collector_path();
std::string job_path();      // c3_gpu_job
std::string c3scope_path();  // the CLI
std::string c3bench_path();

RunResult run(const std::vector<std::string>& args, const std::string& out_dir,
              const RunOptions& options = {});

// The whole file (empty when it cannot be read).
std::string slurp(const std::string& path);
// A real trace of ../shared/traces (or $C3SCOPE_TRACES where the checkout lives elsewhere),
// e.g. shared_trace("kineto/hta_nccl_data.json.gz").
std::string shared_trace(const std::string& relative);
// `c3scope ARGS` run in `dir`, with nothing injected.
RunResult c3scope(const std::vector<std::string>& args, const TempDir& dir);

// Opens a trace and runs a single-value query.
int64_t scalar(const tracedb::Reader& r, const std::string& sql);
std::string text(const tracedb::Reader& r, const std::string& sql);
std::vector<std::string> column(const tracedb::Reader& r, const std::string& sql);

}  // namespace c3::e2e
