// One-line messages on stderr, prefixed "c3scope: ". The job's stdout is never touched.
#pragma once

#include "config.h"

namespace c3::collector {

void set_log_level(LogLevel level);
LogLevel log_level();
// printf-style; warn() prints unless quiet, info() at info or debug (the default level: the
// end-of-run summary), debug() only at debug.
void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void info(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void debug(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace c3::collector
