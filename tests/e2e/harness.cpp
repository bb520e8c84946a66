#include "harness.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "shared_traces.h"

extern char** environ;

namespace c3::e2e {
namespace fs = std::filesystem;

TempDir::TempDir() {
  static std::atomic<int> n{0};
  path_ = std::string(C3_BINARY_DIR) + "/e2e-tmp/" + std::to_string(getpid()) + "-" +
          std::to_string(n++);
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string collector_path() {
  return std::string(C3_BINARY_DIR) + "/lib/libc3scope-collector.so";
}
std::string job_path() {
  return std::string(C3_BINARY_DIR) + "/bin/c3_gpu_job";
}
std::string c3scope_path() {
  return std::string(C3_BINARY_DIR) + "/bin/c3scope";
}
std::string c3bench_path() {
  return std::string(C3_BINARY_DIR) + "/bin/c3bench";
}

RunResult run(const std::vector<std::string>& args, const std::string& out_dir,
              const RunOptions& o) {
  // Environment: ours minus anything c3scope-related, plus the test's.
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    if (k.rfind("C3SCOPE_", 0) == 0 || k.rfind("C3FAKE_", 0) == 0 || k == "LD_PRELOAD" ||
        k == "CUDA_INJECTION64_PATH" || k == "NVTX_INJECTION64_PATH") {
      continue;
    }
    env[k] = kv.substr(eq + 1);
  }
  std::vector<std::string> argv = args;
  // In the sanitizer build everything is instrumented, and the ASan runtime must be the first
  // library of every process the collector is preloaded into.
  const std::string asan = C3_ASAN_RUNTIME;
  if (!asan.empty() && o.inject != Inject::none) env["LD_PRELOAD"] = asan;
  // Let jobs die of SIGSEGV themselves (ASan would turn it into exit code 1).
  if (!asan.empty()) env["ASAN_OPTIONS"] = "handle_segv=0";
  auto preload = [&](const std::string& lib) {
    env["LD_PRELOAD"] = env.count("LD_PRELOAD") ? env["LD_PRELOAD"] + ":" + lib : lib;
  };
  switch (o.inject) {
    case Inject::none:
      break;
    case Inject::preload:
      preload(collector_path());
      env["C3SCOPE_OUTPUT"] = out_dir + "/";
      break;
    case Inject::cuda_injection:
      env["CUDA_INJECTION64_PATH"] = collector_path();
      env["C3SCOPE_OUTPUT"] = out_dir + "/";
      break;
    case Inject::record_cli:
      argv.insert(argv.begin(), {c3scope_path(), "record", "-o", out_dir + "/", "--"});
      break;
  }
  for (const auto& [k, v] : o.env) env[k] = v;
  std::vector<std::string> env_strings;
  env_strings.reserve(env.size());
  for (const auto& [k, v] : env) {
    std::string kv = k;
    kv += '=';
    kv += v;
    env_strings.push_back(std::move(kv));
  }
  std::vector<char*> envp, cargv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    struct rlimit no_core {
      0, 0
    };
    setrlimit(RLIMIT_CORE, &no_core);
    if (o.fsize_limit >= 0) {
      struct rlimit fl {
        static_cast<rlim_t>(o.fsize_limit), static_cast<rlim_t>(o.fsize_limit)
      };
      setrlimit(RLIMIT_FSIZE, &fl);
    }
    execve(cargv[0], cargv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  RunResult r;
  bool line_seen = o.wait_for_line.empty();
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    int ready = poll(fds, 2, 30000);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {  // a hung job fails the test instead of hanging it
      r.err += "[harness: poll returned " + std::to_string(ready) + ", errno " +
               std::to_string(errno) + "]";
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
    }
    if (!line_seen && r.out.find(o.wait_for_line + "\n") != std::string::npos) {
      line_seen = true;
      if (o.on_line) o.on_line(pid);
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int status = 0;
  if (open_fds > 0) kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);

  std::vector<std::pair<fs::file_time_type, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out_dir, ec)) {
    if (e.path().extension() == ".sqlite")
      found.emplace_back(e.last_write_time(), e.path().string());
  }
  std::sort(found.begin(), found.end());
  for (auto& [t, p] : found) r.traces.push_back(p);
  return r;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string shared_trace(const std::string& relative) {
  return (c3::test::shared_traces() / relative).string();
}

RunResult c3scope(const std::vector<std::string>& args, const TempDir& dir) {
  std::vector<std::string> a = {c3scope_path()};
  a.insert(a.end(), args.begin(), args.end());
  return run(a, dir.path(), injected(Inject::none));
}

int64_t scalar(const tracedb::Reader& r, const std::string& sql) {
  auto q = r.query(sql);
  if (!q.step()) throw std::runtime_error("no row: " + sql);
  return q.i64(0);
}

std::string text(const tracedb::Reader& r, const std::string& sql) {
  auto q = r.query(sql);
  if (!q.step()) throw std::runtime_error("no row: " + sql);
  return q.text(0);
}

std::vector<std::string> column(const tracedb::Reader& r, const std::string& sql) {
  std::vector<std::string> out;
  auto q = r.query(sql);
  while (q.step()) out.push_back(q.text(0));
  return out;
}

}  // namespace c3::e2e
