#include "nccl_names.h"

#include "c3/common/nccl_types_check.h"

namespace c3::collector {

uint64_t fnv1a(const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

std::string hex_id(uint64_t v) {
  static const char* hex = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i) {
    s[static_cast<size_t>(i)] = hex[v & 15];
    v >>= 4;
  }
  return s;
}

}  // namespace c3::collector
