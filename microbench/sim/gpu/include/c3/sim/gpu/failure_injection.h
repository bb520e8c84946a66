// Failure injection of the simulated libraries' fixed-time drivers, shared by the GPU's CUPTI
// facade (C3FAKE_CUPTI_FAIL) and NCCL (C3FAKE_NCCL_FAIL). Header-only: each library compiles
// its own copy, nothing is exported.
#pragma once

#include <cstdlib>
#include <string_view>

namespace c3::sim::gpu {

// Whether environment variable `var` (comma-separated function names, or "all") names
// `function`; "all" names every function but `spared`. Read on every call, so tests can change
// it at run time.
inline bool failure_injected(const char* var, std::string_view function,
                             std::string_view spared = {}) {
  const char* env = std::getenv(var);
  if (env == nullptr) return false;
  std::string_view list(env);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (item == function) return true;
    if (item == "all" && function != spared) return true;
  }
  return false;
}

}  // namespace c3::sim::gpu
