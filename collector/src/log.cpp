#include "log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "clock.h"

namespace c3::collector {
namespace {

std::atomic<LogLevel> g_level{LogLevel::info};

__attribute__((format(printf, 1, 0))) void vprint(const char* fmt, va_list ap) {
  // One write() per message so lines from several threads or processes do not interleave.
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "c3scope[%d]: ", static_cast<int>(getpid()));
  if (n < 0) return;
  int m = std::vsnprintf(buf + n, sizeof buf - static_cast<size_t>(n) - 1, fmt, ap);
  if (m < 0) return;
  size_t len = std::min(sizeof buf - 2, static_cast<size_t>(n + m));
  buf[len++] = '\n';
  ssize_t ignored = ::write(STDERR_FILENO, buf, len);
  (void)ignored;
}

}  // namespace

thread_local int64_t t_tid = 0;
int64_t os_tid() {
  if (t_tid == 0) t_tid = static_cast<int64_t>(gettid());
  return t_tid;
}

void reset_tid_after_fork() {
  t_tid = 0;
}

void set_log_level(LogLevel level) {
  g_level.store(level);
}
LogLevel log_level() {
  return g_level.load();
}

void warn(const char* fmt, ...) {
  if (g_level.load() == LogLevel::quiet) return;
  va_list ap;
  va_start(ap, fmt);
  vprint(fmt, ap);
  va_end(ap);
}

void info(const char* fmt, ...) {
  const LogLevel l = g_level.load();
  if (l != LogLevel::info && l != LogLevel::debug) return;
  va_list ap;
  va_start(ap, fmt);
  vprint(fmt, ap);
  va_end(ap);
}

void debug(const char* fmt, ...) {
  if (g_level.load() != LogLevel::debug) return;
  va_list ap;
  va_start(ap, fmt);
  vprint(fmt, ap);
  va_end(ap);
}

}  // namespace c3::collector
