// Copy and memory kinds (c3/common/copy_kinds.h). The values against cupti_activity.h's:
// copy_kinds_check.h, included here and in the collector's decoder.
#include "c3/common/copy_kinds.h"

#include <gtest/gtest.h>

#include "c3/common/copy_kinds_check.h"

namespace c3::common {
namespace {

TEST(CopyKinds, Names) {
  EXPECT_STREQ(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD), "H2D");
  EXPECT_STREQ(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD), "D2D");
  EXPECT_STREQ(copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP), "P2P");
  for (int64_t bad : {int64_t{0}, int64_t{-1}, int64_t{11}, int64_t{0x7fffffff}}) {
    EXPECT_STREQ(copy_kind_name(bad), "unknown") << bad;
  }
}

TEST(CopyKinds, MemoryKinds) {
  EXPECT_STREQ(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE), "pageable");
  EXPECT_STREQ(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_PINNED), "pinned");
  EXPECT_STREQ(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC), "device_static");
  EXPECT_STREQ(memory_kind_name(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC), "managed_static");
  for (int64_t bad : {int64_t{0}, int64_t{-3}, int64_t{8}}) {
    EXPECT_STREQ(memory_kind_name(bad), "unknown") << bad;
  }
}

TEST(CopyKinds, SpelledTheCudaWayInAName) {
  EXPECT_STREQ(copy_kind_in_name("Memcpy DtoH (Device -> Pinned)"), "D2H");
  EXPECT_STREQ(copy_kind_in_name("Memcpy HtoD (Pageable -> Device)"), "H2D");
  EXPECT_STREQ(copy_kind_in_name("Memcpy PtoP (Device -> Device)"), "P2P");
  EXPECT_STREQ(copy_kind_in_name("Memset (Device)"), "unknown");
  EXPECT_STREQ(copy_kind_in_name(""), "unknown");
  // Every kind's CUDA spelling reads back as its name.
  for (int k = 1; k < kNumCopyKinds; ++k) {
    EXPECT_STREQ(copy_kind_in_name(kCopyKinds[k].cuda_name), copy_kind_name(k));
  }
}

}  // namespace
}  // namespace c3::common
