// Large allocations on transparent huge pages (c3/common/large_pages.h): the advice covers the
// whole 2 MiB-aligned pages of a region and nothing else, and the kernel records it on the
// mapping (VmFlags "hg" in /proc/self/smaps).
#include "c3/common/large_pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>

#include "large_pages_check.h"

namespace c3::common {
namespace {

TEST(LargePages, OnlyWholeAlignedHugePagesAreAdvised) {
  if (!test::huge_pages_available()) GTEST_SKIP() << "no transparent huge pages here";
  const size_t size = 8 * kLargePage;
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(map, MAP_FAILED);
  const auto base = reinterpret_cast<uintptr_t>(map);
  char* page =
      static_cast<char*>(map) + (((base + kLargePage - 1) & ~(uintptr_t{kLargePage} - 1)) - base);
  // Less than a huge page, or a huge page's worth that no aligned page lies inside: no advice.
  EXPECT_FALSE(advise_large_pages(page, kLargePage - 4096));
  EXPECT_FALSE(advise_large_pages(page + 4096, kLargePage));
  EXPECT_FALSE(test::advised_huge(page + 4096));
  // [page + 4096, page + 4096 + 6 MiB) holds two whole aligned huge pages, the second and third.
  EXPECT_TRUE(advise_large_pages(page + 4096, 3 * kLargePage));
  EXPECT_FALSE(test::advised_huge(page));
  EXPECT_TRUE(test::advised_huge(page + kLargePage));
  EXPECT_TRUE(test::advised_huge(page + 3 * kLargePage - 1));
  EXPECT_FALSE(test::advised_huge(page + 3 * kLargePage));
  // A size that would wrap past the end of the address space is refused, not advised.
  EXPECT_FALSE(advise_large_pages(page, SIZE_MAX - kLargePage));
  ::munmap(map, size);
}

}  // namespace
}  // namespace c3::common
