// Large allocations on transparent huge pages (2 MiB instead of 4 KiB).
//
// Reading one 200k-activity PyTorch trace writes about 150 MB of fresh memory (the events, the
// trace's columns, the analyses' tables, vectors that grow): about 40,000 page faults of 4 KiB,
// a sixth of `c3scope analyze`'s CPU time on 2 cores (perf stat: 39,000 faults; docs/analyze.md).
// Where the kernel's transparent huge pages are in "madvise" mode (Debian's and Ubuntu's default)
// a region gets 2 MiB pages only when the program asks (madvise MADV_HUGEPAGE); in "always" mode
// it has them already; in "never" mode, or without THP, asking changes nothing.
#pragma once

#include <cstddef>

namespace c3::common {

constexpr size_t kLargePage = size_t{2} << 20;

// Asks for huge pages over the whole 2 MiB-aligned pages inside [p, p + bytes) (none: nothing is
// asked). Returns whether the kernel took the advice. Memory not touched yet stays unused: a
// huge page is only made when the program first writes to it.
bool advise_large_pages(void* p, size_t bytes);

}  // namespace c3::common
