// The collector's entry points, and the only symbols it exports besides the NCCL wrappers
// (nccl_wrappers.cpp) and the exec family: every entry point first runs Recorder::init(), which
// is idempotent, so they may come in any order.
//
//  - the ELF constructor: runs when LD_PRELOAD (or any dlopen) loads the library. Under
//    LD_PRELOAD it also points CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH at this library
//    (when the job has not set them) so CUDA and NVTX call back into it at their own init.
//  - InitializeInjection: called by the CUDA driver inside cuInit (CUDA_INJECTION64_PATH).
//  - InitializeInjectionNvtx2: called by NVTX at its first use (NVTX_INJECTION64_PATH).
//  - the exec family (execve, execv, execvp, execvpe, execl, execlp, execle): finish this
//    process's trace before the image is replaced (the new image, same pid, starts a trace of
//    its own), and resume if exec fails. glibc's execl* call execve internally, not through the
//    PLT, so they need wrappers of their own.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <string>

#include "c3/tracedb/schema.h"
#include "c3scope/trace_append.h"
#include "log.h"
#include "nvtx_injection.h"
#include "recorder.h"

#define C3_EXPORT extern "C" __attribute__((visibility("default")))

namespace c3::collector {
namespace {

bool same_file(const std::string& a, const std::string& b) {
  char ra[PATH_MAX], rb[PATH_MAX];
  if (!realpath(a.c_str(), ra) || !realpath(b.c_str(), rb)) return a == b;
  return std::strcmp(ra, rb) == 0;
}

bool preloaded(const std::string& self) {
  const char* preload = std::getenv("LD_PRELOAD");
  if (!preload || self.empty()) return false;
  std::string base = self.substr(self.find_last_of('/') + 1);
  return std::strstr(preload, base.c_str()) != nullptr;
}

// Points `var` at this library unless the job set it; warns when another tool holds it.
void claim_injection(const char* var, const std::string& self, const char* what_is_lost) {
  const char* current = std::getenv(var);
  if (!current || !*current) {
    setenv(var, self.c_str(), 1);
  } else if (!same_file(current, self)) {
    warn("%s is already set to %s (another tool); c3scope will not record %s", var, current,
         what_is_lost);
  }
}

__attribute__((constructor)) void on_load() {
  Recorder& rec = Recorder::instance();
  rec.init();
  const std::string& self = rec.config().self_path;
  // Only under LD_PRELOAD: then this constructor runs before main(), with one thread, when
  // setenv is safe. Loaded later by CUDA or NVTX, the variables already point here.
  if (preloaded(self)) {
    claim_injection("CUDA_INJECTION64_PATH", self, "GPU activity");
    claim_injection("NVTX_INJECTION64_PATH", self, "NVTX ranges");
  }
}

template <class F>
F next_fn(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// In a vfork child this process's memory is the parent's: Recorder::finalize and
// restart_after_failed_exec do nothing there (they check the owning pid), and nothing here
// allocates.
template <class Exec>
int traced_exec(Exec&& exec) {
  Recorder& rec = Recorder::instance();
  rec.finalize("exec");
  int rc = exec();
  int saved = errno;
  rec.restart_after_failed_exec();
  errno = saved;
  return rc;
}

}  // namespace
}  // namespace c3::collector

using c3::collector::Recorder;

C3_EXPORT int InitializeInjection(void) {
  Recorder& rec = Recorder::instance();
  rec.init();
  rec.start_cupti();
  return 1;
}

C3_EXPORT int InitializeInjectionNvtx2(c3::collector::nvtx::GetExportTableFn get_export_table) {
  Recorder::instance().init();
  return c3::collector::nvtx::initialize(get_export_table);
}

C3_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  static auto real =
      c3::collector::next_fn<int (*)(const char*, char* const*, char* const*)>("execve");
  return c3::collector::traced_exec([&] { return real(path, argv, envp); });
}

C3_EXPORT int execv(const char* path, char* const argv[]) {
  static auto real = c3::collector::next_fn<int (*)(const char*, char* const*)>("execv");
  return c3::collector::traced_exec([&] { return real(path, argv); });
}

C3_EXPORT int execvp(const char* file, char* const argv[]) {
  static auto real = c3::collector::next_fn<int (*)(const char*, char* const*)>("execvp");
  return c3::collector::traced_exec([&] { return real(file, argv); });
}

C3_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  static auto real =
      c3::collector::next_fn<int (*)(const char*, char* const*, char* const*)>("execvpe");
  return c3::collector::traced_exec([&] { return real(file, argv, envp); });
}

namespace {

// Collects execl*'s NULL-terminated argument list (and, for execle, the environment after it)
// into `argv`: no allocation, so this is safe in a vfork child too.
constexpr int kMaxExecArgs = 4096;
bool collect_exec_args(const char* first, va_list ap, char** argv, char* const** envp) {
  int n = 0;
  argv[n++] = const_cast<char*>(first);
  while (argv[n - 1] && n < kMaxExecArgs) argv[n++] = va_arg(ap, char*);
  if (argv[n - 1]) {
    errno = E2BIG;
    return false;
  }
  if (envp) *envp = va_arg(ap, char* const*);
  return true;
}

}  // namespace

C3_EXPORT int execl(const char* path, const char* arg, ...) {
  char* argv[kMaxExecArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect_exec_args(arg, ap, argv, nullptr);
  va_end(ap);
  return ok ? execv(path, argv) : -1;
}

C3_EXPORT int execlp(const char* file, const char* arg, ...) {
  char* argv[kMaxExecArgs];
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect_exec_args(arg, ap, argv, nullptr);
  va_end(ap);
  return ok ? execvp(file, argv) : -1;
}

C3_EXPORT int execle(const char* path, const char* arg, ...) {
  char* argv[kMaxExecArgs];
  char* const* envp = nullptr;
  va_list ap;
  va_start(ap, arg);
  const bool ok = collect_exec_args(arg, ap, argv, &envp);
  va_end(ap);
  return ok ? execve(path, argv, envp) : -1;
}

C3_EXPORT int c3scope_trace_append(int schema_version, c3scope_trace_append_cb fn, void* ctx) {
  if (schema_version != c3::tracedb::kSchemaVersion) return C3SCOPE_APPEND_SCHEMA_MISMATCH;
  if (fn == nullptr) return C3SCOPE_APPEND_FAILED;
  const int rc = c3::collector::Recorder::instance().append_to_trace(fn, ctx);
  static_assert(c3::collector::Recorder::kAppendNoTrace == C3SCOPE_APPEND_NO_TRACE);
  static_assert(c3::collector::Recorder::kAppendFailed == C3SCOPE_APPEND_FAILED);
  return rc;
}
