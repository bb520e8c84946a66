#include "config.h"

#include <cstdlib>

#include "c3/common/strings.h"

namespace c3::collector {
namespace {

bool parse_bool(const std::string& s) {
  return !(s.empty() || s == "0" || s == "false" || s == "no" || s == "off");
}

}  // namespace

Config parse_config(const EnvLookup& env) {
  Config c;
  if (auto v = env("C3SCOPE_OUTPUT"); v && !v->empty()) c.output_pattern = *v;
  if (auto v = env("C3SCOPE_FLUSH_MS")) {
    auto n = common::parse_int(*v);
    if (n && *n >= 10 && *n <= 3600000) {
      c.flush_ms = *n;
    } else {
      c.warnings.push_back("C3SCOPE_FLUSH_MS='" + *v +
                           "' is not a number of milliseconds from 10 to 3600000; using 1000");
    }
  }
  if (auto v = env("C3SCOPE_BUFFER_MB")) {
    auto n = common::parse_int(*v);
    if (n && *n >= 1 && *n <= 65536) {
      c.buffer_mb = *n;
    } else {
      c.warnings.push_back("C3SCOPE_BUFFER_MB='" + *v +
                           "' is not a size in MiB from 1 to 65536; using 64");
    }
  }
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
