// Work spread over threads: one worker function run on this thread and on more, each copy taking
// items from a shared counter until none is left (the analyzer's loader and pipeline, the GUI's
// timeline rows).
#pragma once

#include <cstddef>
#include <functional>

namespace c3::common {

// Runs `worker` on this thread and on up to `threads` - 1 more (0: the hardware's thread count),
// never more copies than `items`, and returns once every copy has returned. Where the system
// gives fewer threads, the copies that started (this thread's at least) do the work. `worker`
// must not throw: each catches its own errors and keeps them for the caller.
void run_workers(size_t items, const std::function<void()>& worker, unsigned threads = 0);

}  // namespace c3::common
