#include "c3/common/large_pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace c3::common {

bool advise_large_pages(void* p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const auto at = reinterpret_cast<uintptr_t>(p);
  if (bytes < kLargePage || at > UINTPTR_MAX - bytes) return false;
  const uintptr_t from = (at + kLargePage - 1) & ~(uintptr_t{kLargePage} - 1);
  const uintptr_t to = (at + bytes) & ~(uintptr_t{kLargePage} - 1);
  if (to <= from) return false;
  // (The aligned address as an offset from p: no integer is cast back to a pointer.)
  return ::madvise(static_cast<char*>(p) + (from - at), to - from, MADV_HUGEPAGE) == 0;
#else
  (void)p;
  (void)bytes;
  return false;
#endif
}

}  // namespace c3::common
