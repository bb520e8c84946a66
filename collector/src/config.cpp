#include "config.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "c3/common/strings.h"

namespace c3::collector {
namespace {

bool parse_bool(const std::string& s) {
  return !(s.empty() || s == "0" || s == "false" || s == "no" || s == "off");
}

// A whole number from lo to hi (`what`) in the variable `name`, if set: into `out`, or, when it is
// not one, a warning and `out` (the default) kept.
void parse_bounded(const EnvLookup& env, const char* name, const char* what, int64_t lo, int64_t hi,
                   int64_t& out, std::vector<std::string>& warnings) {
  const auto v = env(name);
  if (!v) return;
  const auto n = common::parse_int(*v);
  if (n && *n >= lo && *n <= hi) {
    out = *n;
    return;
  }
  warnings.push_back(std::string(name) + "='" + *v + "' is not " + what + " from " +
                     std::to_string(lo) + " to " + std::to_string(hi) + "; using " +
                     std::to_string(out));
}

}  // namespace

Config parse_config(const EnvLookup& env) {
  Config c;
  if (auto v = env("C3SCOPE_OUTPUT"); v && !v->empty()) c.output_pattern = *v;
  parse_bounded(env, "C3SCOPE_FLUSH_MS", "a number of milliseconds", 10, 3600000, c.flush_ms,
                c.warnings);
  parse_bounded(env, "C3SCOPE_BUFFER_MB", "a size in MiB", 1, 65536, c.buffer_mb, c.warnings);
  if (auto v = env("C3SCOPE_CUDA_API")) c.cuda_api = parse_bool(*v);
  if (auto v = env("C3SCOPE_LAUNCH_LATENCY")) c.launch_latency = parse_bool(*v);
  if (auto v = env("C3SCOPE_NCCL_LINK")) c.nccl_link = parse_bool(*v);
  if (auto v = env("C3SCOPE_LOG")) {
    if (*v == "quiet")
      c.log = LogLevel::quiet;
    else if (*v == "warn")
      c.log = LogLevel::warn;
    else if (*v == "info" || v->empty())
      c.log = LogLevel::info;
    else if (*v == "debug")
      c.log = LogLevel::debug;
    else
      c.warnings.push_back("C3SCOPE_LOG='" + *v +
                           "' is not quiet, warn, info or debug; using info");
  }
  if (auto v = env("C3SCOPE_CUPTI_LIB")) c.cupti_lib = *v;
  return c;
}

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

}  // namespace c3::collector
