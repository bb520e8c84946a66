// c3scope record: run a command under the collector.
//
// Sets LD_PRELOAD (appended to the job's own), CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH,
// runs the command, forwards signals sent to c3scope, exits with the command's status (dying of
// the same signal if it did) and lists the traces written.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <vector>

#include "c3/tracedb/contents.h"
#include "commands.h"

namespace c3::cli {
namespace {

namespace fs = std::filesystem;

struct RecordOptions {
  std::string output;
  bool cuda_api = false;
  bool launch_latency = false;
  int flush_ms = 0;
  int buffer_mb = 0;
  std::string log;
  std::vector<std::string> command;
};

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig, siginfo_t* info, void*) {
  // A signal the kernel sent to the whole foreground group (Ctrl-C) already reached the child;
  // forward only those sent to c3scope itself (kill, timeouts, schedulers).
  if (g_child > 0 && info && info->si_code <= 0) kill(g_child, sig);
}

std::string collector_path() {
  if (const char* env = std::getenv("C3SCOPE_COLLECTOR")) return env;
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const char* rel : {"../lib/libc3scope-collector.so", "../lib64/libc3scope-collector.so",
                          "libc3scope-collector.so"}) {
    fs::path p = self.parent_path() / rel;
    if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  return "";
}

std::set<std::string> traces_in(const fs::path& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".sqlite") out.insert(e.path().string());
  }
  return out;
}

int run(const RecordOptions& o) {
  const std::string collector = collector_path();
  if (collector.empty()) {
    error_line(
        "record: cannot find libc3scope-collector.so next to this c3scope (set "
        "C3SCOPE_COLLECTOR to its path)");
    return kExitUsage;
  }
  // -o DIR (existing, or ending in '/', or without a .sqlite name) or -o FILE. Without -o, an
  // exported C3SCOPE_OUTPUT stands (flag > environment > default; README, docs/collector.md).
  fs::path out_dir = ".";
  std::string pattern;
  const char* env_output = std::getenv("C3SCOPE_OUTPUT");
  const bool output_from_env = o.output.empty() && env_output != nullptr && *env_output != '\0';
  if (output_from_env) {
    // The collector expands it; the traces are looked for in its folder.
    pattern = env_output;
    out_dir = pattern.back() == '/' ? fs::path(pattern) : fs::path(pattern).parent_path();
    if (out_dir.empty()) out_dir = ".";
  } else if (o.output.empty()) {
    pattern = "c3scope-%h-%p.sqlite";
  } else {
    std::error_code ec;
    const bool is_dir = o.output.back() == '/' || fs::is_directory(o.output, ec) ||
                        fs::path(o.output).extension() != ".sqlite";
    if (is_dir) {
      out_dir = o.output;
      fs::create_directories(out_dir, ec);
      if (ec) {
        error_line("record: cannot create output folder '" + o.output + "': " + ec.message());
        return kExitUsage;
      }
      pattern = (out_dir / "c3scope-%h-%p.sqlite").string();
    } else {
      pattern = o.output;
      out_dir = fs::path(o.output).parent_path();
      if (out_dir.empty()) out_dir = ".";
    }
  }
  const std::set<std::string> before = traces_in(out_dir);

  std::string preload = collector;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing && *existing) {
    preload = std::string(existing) + ":" + collector;
  }
  setenv("LD_PRELOAD", preload.c_str(), 1);
  setenv("CUDA_INJECTION64_PATH", collector.c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", collector.c_str(), 1);
  if (!output_from_env) setenv("C3SCOPE_OUTPUT", pattern.c_str(), 1);
  if (o.cuda_api) setenv("C3SCOPE_CUDA_API", "1", 1);
  if (o.launch_latency) setenv("C3SCOPE_LAUNCH_LATENCY", "1", 1);
  if (o.flush_ms > 0) setenv("C3SCOPE_FLUSH_MS", std::to_string(o.flush_ms).c_str(), 1);
  if (o.buffer_mb > 0) setenv("C3SCOPE_BUFFER_MB", std::to_string(o.buffer_mb).c_str(), 1);
  // --log, else an exported C3SCOPE_LOG, else warn: the collector's own end-of-run line (info)
  // would repeat the list printed below.
  if (!o.log.empty()) {
    setenv("C3SCOPE_LOG", o.log.c_str(), 1);
  } else if (const char* env_log = std::getenv("C3SCOPE_LOG"); env_log == nullptr || !*env_log) {
    setenv("C3SCOPE_LOG", "warn", 1);
  }

  // Report the exec failure through a pipe so "command not found" is one clear line.
  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    error_line(std::string("record: pipe: ") + std::strerror(errno));
    return kExitUsage;
  }
  struct sigaction sa {};
  sa.sa_sigaction = &forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  for (int sig : forwarded) sigaction(sig, &sa, nullptr);

  // Signals wait (blocked) until the child's pid is known, so none is lost in between.
  sigset_t forwarded_set, old_mask;
  sigemptyset(&forwarded_set);
  for (int sig : forwarded) sigaddset(&forwarded_set, sig);
  sigprocmask(SIG_BLOCK, &forwarded_set, &old_mask);
  pid_t pid = fork();
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    error_line(std::string("record: fork: ") + std::strerror(errno));
    return kExitUsage;
  }
  if (pid == 0) {
    close(err_pipe[0]);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig : forwarded) sigaction(sig, &dfl, nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    std::vector<char*> argv;
    for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    int e = errno;
    ssize_t ignored = write(err_pipe[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  g_child = pid;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  close(err_pipe[1]);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(err_pipe[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  g_child = 0;
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    error_line("record: cannot run '" + o.command[0] + "': " + std::strerror(exec_errno));
    return 127;
  }

  std::vector<std::string> written;
  for (const auto& t : traces_in(out_dir)) {
    if (!before.count(t)) written.push_back(t);
  }
  if (written.empty()) {
    std::cerr << "c3scope: no trace written (the command used no CUDA, NVTX or NCCL, or the "
                 "output folder is not writable)\n";
  } else {
    std::cerr << "c3scope: " << written.size() << " trace" << (written.size() == 1 ? "" : "s")
              << " written:\n";
    for (const auto& t : written) {
      tracedb::TraceCounts counts;
      std::cerr << "  " << t
                << (tracedb::count_rows(t, &counts) ? " (" + tracedb::describe(counts) + ")" : "")
                << "\n";
    }
  }

  if (WIFSIGNALED(status)) {
    // Die of the same signal so our caller sees what the job did.
    int sig = WTERMSIG(status);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, nullptr);
    signal(SIGABRT, SIG_DFL);
    kill(getpid(), sig);
    return 128 + sig;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

Action add_record(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "record",
      "Run a command under the collector; one trace per process that used CUDA, NVTX "
      "or NCCL");
  auto o = std::make_shared<RecordOptions>();
  cmd->add_option("-o,--output", o->output,
                  "Output folder (created if needed) or trace file name; default: the current "
                  "folder, c3scope-<host>-<pid>.sqlite");
  cmd->add_flag("--cuda-api", o->cuda_api, "Also record CUDA runtime and driver API calls");
  cmd->add_flag("--launch-latency", o->launch_latency,
                "Record kernel queued/submitted times (more overhead)");
  cmd->add_option("--flush-ms", o->flush_ms, "Commit the trace at least this often (ms)")
      ->check(CLI::Range(10, 3600000));
  cmd->add_option("--buffer-mb", o->buffer_mb, "Bound on CUPTI activity buffers (MiB)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--log", o->log,
                  "Collector messages on stderr: quiet, warn (default), info, debug")
      ->check(CLI::IsMember({"quiet", "warn", "info", "debug"}));
  // The command starts at the first positional argument or after "--" (main.cpp splits it off).
  cmd->prefix_command();
  cmd->footer("Example: c3scope record -o runs/ -- python train.py --steps 10");
  return [o, cmd] {
    std::vector<std::string> rest = cmd->remaining();
    if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-') {
      error_line("record: unknown option '" + rest[0] +
                 "' (put the command after '--'; see "
                 "'c3scope record --help')");
      return kExitUsage;
    }
    rest.insert(rest.end(), g_after_dashdash.begin(), g_after_dashdash.end());
    if (rest.empty()) {
      error_line("record: no command given (usage: c3scope record [OPTIONS] -- COMMAND [ARGS...])");
      return kExitUsage;
    }
    o->command = std::move(rest);
    return run(*o);
  };
}

}  // namespace c3::cli
