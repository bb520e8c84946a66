// Collector settings, read once from the environment (C3SCOPE_*). Parsing is a pure function
// of a getenv-like lookup so tests can feed it any environment.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace c3::collector {

enum class LogLevel { quiet, warn, info, debug };

struct Config {
  // C3SCOPE_OUTPUT: path pattern; %p pid, %h host, %r rank (or 'norank'), %q{VAR} an env var,
  // %% a percent sign. A trailing '/' or an existing directory means "this folder, default name".
  std::string output_pattern = "c3scope-%h-%p.sqlite";
  int64_t flush_ms = 1000;      // C3SCOPE_FLUSH_MS: commit at least this often
  int64_t buffer_mb = 64;       // C3SCOPE_BUFFER_MB: CUPTI activity buffer pool bound
  bool cuda_api = false;        // C3SCOPE_CUDA_API=1: record runtime/driver API calls
  bool launch_latency = false;  // C3SCOPE_LAUNCH_LATENCY=1: kernel queued/submitted times
  // C3SCOPE_NCCL_LINK=0: do not record the launch/copy API records that link NCCL calls to their
  // GPU work (less CUPTI overhead per launch; collective_activity stays empty).
  bool nccl_link = true;
  LogLevel log = LogLevel::info;  // C3SCOPE_LOG=quiet|info|debug
  std::string cupti_lib;          // C3SCOPE_CUPTI_LIB: CUPTI library to load
  std::string self_path;          // path of libc3scope-collector.so itself (not from env)
  // Problems found while parsing, reported once as warnings (e.g. "C3SCOPE_FLUSH_MS=abc").
  std::vector<std::string> warnings;
};

using EnvLookup = std::function<std::optional<std::string>(const char*)>;

Config parse_config(const EnvLookup& env);
// The process environment (getenv).
EnvLookup process_env();

}  // namespace c3::collector
