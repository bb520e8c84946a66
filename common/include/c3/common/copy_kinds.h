// Copy and memory kinds as the trace spells them (memcpy.copy_kind "H2D", memcpy.src_kind and
// memset.memory_kind "pinned"), keyed by CUPTI's values (CUpti_ActivityMemcpyKind,
// CUpti_ActivityMemoryKind; Nsight Systems exports store the same numbers) without including
// cupti_activity.h. Parts with CUPTI's headers include copy_kinds_check.h, which asserts that the
// tables are keyed right.
#pragma once

#include <cstdint>
#include <string_view>

namespace c3::common {

inline constexpr int kNumCopyKinds = 11;  // CUpti_ActivityMemcpyKind: UNKNOWN = 0 ... PTOP = 10

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
// when it spells none (where it spells several, the one with the largest value).
constexpr const char* copy_kind_in_name(std::string_view name) {
  const char* found = "unknown";
  for (int k = 1; k < kNumCopyKinds; ++k) {
    if (name.find(kCopyKinds[k].cuda_name) != std::string_view::npos) found = kCopyKinds[k].name;
  }
  return found;
}

inline constexpr int kNumMemoryKinds = 8;  // CUpti_ActivityMemoryKind: UNKNOWN ... MANAGED_STATIC

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
