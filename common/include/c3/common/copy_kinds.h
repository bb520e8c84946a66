// Copy and memory kinds as the trace spells them (memcpy.copy_kind "H2D", memcpy.src_kind and
// memset.memory_kind "pinned"), keyed by CUPTI's values (CUpti_ActivityMemcpyKind,
// CUpti_ActivityMemoryKind; Nsight Systems exports store the same numbers) without including
// cupti_activity.h. Parts with CUPTI's headers include copy_kinds_check.h, which asserts that the
// values agree.
#pragma once

#include <cstdint>
#include <string_view>

namespace c3::common {

// CUpti_ActivityMemcpyKind's values.
enum class CopyKind : int {
  unknown = 0,
  h2d = 1,
  d2h = 2,
  h2a = 3,
  a2h = 4,
  a2a = 5,
  a2d = 6,
  d2a = 7,
  d2d = 8,
  h2h = 9,
  p2p = 10,
};
inline constexpr int kNumCopyKinds = 11;

struct CopyKindInfo {
  const char* name;       // the trace's spelling: "H2D"
  const char* cuda_name;  // CUDA's and Kineto's ("Memcpy HtoD (Pinned -> Device)"): "HtoD"
};
// Indexed by CUpti_ActivityMemcpyKind.
inline constexpr CopyKindInfo kCopyKinds[kNumCopyKinds] = {
    {"unknown", ""}, {"H2D", "HtoD"}, {"D2H", "DtoH"}, {"H2A", "HtoA"},
    {"A2H", "AtoH"}, {"A2A", "AtoA"}, {"A2D", "AtoD"}, {"D2A", "DtoA"},
    {"D2D", "DtoD"}, {"H2H", "HtoH"}, {"P2P", "PtoP"},
};

// "H2D" for CUPTI_ACTIVITY_MEMCPY_KIND_HTOD (1); "unknown" for 0 and for no such value.
constexpr const char* copy_kind_name(int64_t kind) {
  return kind > 0 && kind < kNumCopyKinds ? kCopyKinds[kind].name : "unknown";
}

// The copy kind a name spells CUDA's way: "Memcpy DtoH (Device -> Pinned)" -> "D2H"; "unknown"
// when it spells none (where it spells several, the last kind in CopyKind's order).
constexpr const char* copy_kind_in_name(std::string_view name) {
  const char* found = "unknown";
  for (int k = 1; k < kNumCopyKinds; ++k) {
    if (name.find(kCopyKinds[k].cuda_name) != std::string_view::npos) found = kCopyKinds[k].name;
  }
  return found;
}

// CUpti_ActivityMemoryKind's values.
enum class MemoryKind : int {
  unknown = 0,
  pageable = 1,
  pinned = 2,
  device = 3,
  array = 4,
  managed = 5,
  device_static = 6,
  managed_static = 7,
};
inline constexpr int kNumMemoryKinds = 8;

// Indexed by CUpti_ActivityMemoryKind.
inline constexpr const char* kMemoryKindNames[kNumMemoryKinds] = {
    "unknown", "pageable", "pinned",        "device",
    "array",   "managed",  "device_static", "managed_static",
};

// "pinned" for CUPTI_ACTIVITY_MEMORY_KIND_PINNED (2); "unknown" for 0 and for no such value.
constexpr const char* memory_kind_name(int64_t kind) {
  return kind > 0 && kind < kNumMemoryKinds ? kMemoryKindNames[kind] : "unknown";
}

}  // namespace c3::common
