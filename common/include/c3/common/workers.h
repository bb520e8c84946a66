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

// The same, for work nested in other work (a summary's parts inside the pipeline's map of
// inputs): the copies beyond the caller's run only on threads free in this process, so that
// nested calls do not oversubscribe the cores. Free: the hardware's thread count less one (the
// process's first thread) and less the threads that run_workers and this function have started
// and that are still running; each call takes up to `threads` - 1 of them (0: as many as are
// free) at once, atomically, and gives them back when its copies return. With none free, the
// caller's copy does all the work. The pipeline's map of one input on 2 cores (one copy, the
// caller's) leaves one free; two inputs or more on 2 cores leave none.
void run_on_free_threads(size_t items, const std::function<void()>& worker, unsigned threads = 0);

// Hands the allocator's free pages back to the system (glibc's malloc_trim), so that a worker
// that freed a large trace does not leave the peak at the sum of all traces. Safe to call from
// any number of workers at once: calls are serialized. Does nothing where malloc is not glibc's
// (builds with AddressSanitizer, ThreadSanitizer or MemorySanitizer replace it, and glibc's
// malloc_trim there would initialize an arena nobody uses, racing with other threads).
void release_free_memory();

}  // namespace c3::common
