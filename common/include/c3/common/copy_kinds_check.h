// For parts built with CUPTI's cupti_activity.h (the collector):
// compile-time proof that copy_kinds.h's tables are keyed by CUPTI's values. Include it in one
// source file of each such part.
#pragma once

#include <cupti_activity.h>

#include <string_view>

#include "c3/common/copy_kinds.h"

namespace c3::common::check {

constexpr bool is(const char* a, std::string_view b) {
  return std::string_view(a) == b;
}

static_assert(is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN), "unknown") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD), "H2D") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH), "D2H") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOA), "H2A") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_ATOH), "A2H") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_ATOA), "A2A") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_ATOD), "A2D") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOA), "D2A") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD), "D2D") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH), "H2H") &&
                  is(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP), "P2P") &&
                  is(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN), "unknown") &&
                  is(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE), "pageable") &&
                  is(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_PINNED), "pinned") &&
                  is(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE), "device") &&
                  is(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_ARRAY), "array") &&
                  is(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED), "managed") &&
                  is(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC), "device_static") &&
                  is(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC), "managed_static"),
              "c3/common/copy_kinds.h differs from CUpti_ActivityMemcpyKind or "
              "CUpti_ActivityMemoryKind");

}  // namespace c3::common::check
