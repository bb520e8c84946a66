// c3scope's operator new (common/src/large_page_new.cpp, linked into this test as into c3scope):
// a buffer of several huge pages asks for them, a small one does not, and what is written reads
// back.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <new>
#include <vector>

#include "c3/common/large_pages.h"
#include "large_pages_check.h"

namespace c3::common {
namespace {

TEST(LargePageNew, LargeAllocationsAskForHugePages) {
  if (!test::huge_pages_available()) GTEST_SKIP() << "no transparent huge pages here";
  std::vector<char> large(4 * kLargePage, 'x');
  // The huge page in the middle of the buffer lies wholly inside it, wherever malloc put it.
  EXPECT_TRUE(test::advised_huge(large.data() + 2 * kLargePage));
  EXPECT_EQ(large[2 * kLargePage], 'x');
  auto small = std::make_unique<char[]>(64 << 10);
  EXPECT_FALSE(test::advised_huge(small.get()));
  // The nothrow form goes through it too (libstdc++'s calls operator new(size_t)).
  std::unique_ptr<char[]> nothrow(new (std::nothrow) char[4 * kLargePage]);
  ASSERT_NE(nothrow, nullptr);
  std::memset(nothrow.get(), 1, 4 * kLargePage);
  EXPECT_TRUE(test::advised_huge(nothrow.get() + 2 * kLargePage));
}

TEST(LargePageNew, AFailedAllocationStillThrows) {
  // More than any address space: malloc fails, no new-handler is set, bad_alloc as before.
  // (A call of operator new, not a new-expression, which the compiler may leave out.)
  const volatile size_t huge = size_t{1} << 62;
  EXPECT_THROW(::operator delete(::operator new(huge)), std::bad_alloc);
}

}  // namespace
}  // namespace c3::common
