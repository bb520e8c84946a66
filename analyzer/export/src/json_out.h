// The last stage of the Perfetto export: Chrome trace JSON text into a FILE, an event at a
// time (no document is built: an export of a large trace stays small in memory).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace c3::exporter {

class JsonOut {
 public:
  // `first`: whether the first event begins the array (no comma before it); a trace rendered
  // apart to go after others' events has a comma before its first event too (render_perfetto).
  explicit JsonOut(FILE* f, bool first = true) : f_(f), first_(first) {}
  void raw(const char* s) { std::fputs(s, f_); }
  // A JSON string: quotes, backslashes and control characters escaped, valid UTF-8 copied,
  // and every byte that does not start a valid UTF-8 sequence written as U+FFFD (names in a
  // damaged trace: the export must stay valid JSON; found by the issue 12 probes).
  void str(const std::string& s);
  // Nanoseconds as microseconds with three decimals.
  void ts(int64_t ns);
  // Starts an event object (comma-separated from the previous one).
  void begin() {
    raw(first_ ? "\n" : ",\n");
    first_ = false;
  }
  FILE* file() { return f_; }

 private:
  FILE* f_;
  bool first_ = true;
};

}  // namespace c3::exporter
