// For parts built with CUPTI's cupti_activity.h (the collector, the simulated CUPTI):
// compile-time proof that copy_kinds.h's values are CUPTI's. Include it in one source file of
// each such part.
#pragma once

#include <cupti_activity.h>

#include "c3/common/copy_kinds.h"

namespace c3::common::check {

constexpr bool same(CopyKind a, CUpti_ActivityMemcpyKind b) {
  return static_cast<int>(a) == static_cast<int>(b);
}
constexpr bool same(MemoryKind a, CUpti_ActivityMemoryKind b) {
  return static_cast<int>(a) == static_cast<int>(b);
}

static_assert(same(CopyKind::unknown, CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN) &&
                  same(CopyKind::h2d, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD) &&
                  same(CopyKind::d2h, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH) &&
                  same(CopyKind::h2a, CUPTI_ACTIVITY_MEMCPY_KIND_HTOA) &&
                  same(CopyKind::a2h, CUPTI_ACTIVITY_MEMCPY_KIND_ATOH) &&
                  same(CopyKind::a2a, CUPTI_ACTIVITY_MEMCPY_KIND_ATOA) &&
                  same(CopyKind::a2d, CUPTI_ACTIVITY_MEMCPY_KIND_ATOD) &&
                  same(CopyKind::d2a, CUPTI_ACTIVITY_MEMCPY_KIND_DTOA) &&
                  same(CopyKind::d2d, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD) &&
                  same(CopyKind::h2h, CUPTI_ACTIVITY_MEMCPY_KIND_HTOH) &&
                  same(CopyKind::p2p, CUPTI_ACTIVITY_MEMCPY_KIND_PTOP),
              "c3/common/copy_kinds.h: CopyKind differs from CUpti_ActivityMemcpyKind");
static_assert(same(MemoryKind::unknown, CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN) &&
                  same(MemoryKind::pageable, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE) &&
                  same(MemoryKind::pinned, CUPTI_ACTIVITY_MEMORY_KIND_PINNED) &&
                  same(MemoryKind::device, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE) &&
                  same(MemoryKind::array, CUPTI_ACTIVITY_MEMORY_KIND_ARRAY) &&
                  same(MemoryKind::managed, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED) &&
                  same(MemoryKind::device_static, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC) &&
                  same(MemoryKind::managed_static, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC),
              "c3/common/copy_kinds.h: MemoryKind differs from CUpti_ActivityMemoryKind");

}  // namespace c3::common::check
