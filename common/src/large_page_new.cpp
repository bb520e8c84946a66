// The global operator new of the executables that read traces (c3scope, c3scope-mpi): the C++
// library's (malloc, and the new-handler until it gives memory or there is none), and an
// allocation of a huge page or more asks for huge pages (c3/common/large_pages.h). Linked into
// those executables only, and not into sanitizer builds, whose runtimes replace operator new
// themselves. libstdc++'s array and nothrow forms call this one, and its other forms of operator
// delete call the two below (free).
#include <cstdlib>
#include <new>

#include "c3/common/large_pages.h"

void* operator new(std::size_t n) {
  if (n == 0) n = 1;
  void* p = nullptr;
  // NOLINTNEXTLINE(cppcoreguidelines-no-malloc): operator new is made of malloc
  while ((p = std::malloc(n)) == nullptr) {
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
  if (n >= c3::common::kLargePage) c3::common::advise_large_pages(p, n);
  return p;
}

// And operator delete, so that allocation and release are one pair of this program's (a checker
// that interposes malloc sees malloc and free); libstdc++'s other forms call these.
void operator delete(void* p) noexcept {
  std::free(p);  // NOLINT(cppcoreguidelines-no-malloc)
}
void operator delete(void* p, std::size_t /*size*/) noexcept {
  std::free(p);  // NOLINT(cppcoreguidelines-no-malloc)
}
