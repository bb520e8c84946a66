// Where the real traces recorded by other projects are (../shared/traces next to the checkout,
// or $C3SCOPE_TRACES where the checkout lives elsewhere). Tests read them from there and skip
// when they are not here.
#pragma once

#include <cstdlib>
#include <filesystem>

namespace c3::test {

inline std::filesystem::path shared_traces() {
  if (const char* e = std::getenv("C3SCOPE_TRACES"); e && *e) return e;
  return std::filesystem::path(C3_SOURCE_DIR) / ".." / "shared" / "traces";
}

}  // namespace c3::test
