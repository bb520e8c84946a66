#include "buffer_pool.h"

#include <algorithm>
#include <cstdlib>

namespace c3::collector {

BufferPool::BufferPool(size_t total_bytes) {
  // CUPTI works best with buffers of a few MiB; keep at least 4 so one can be decoded while
  // others fill.
  constexpr size_t kMin = size_t{64} * 1024;
  constexpr size_t kMax = size_t{8} * 1024 * 1024;
  buffer_size_ = std::clamp(total_bytes / 4, kMin, kMax);
  buffer_size_ = buffer_size_ / 8 * 8;
  max_buffers_ = std::max<size_t>(1, total_bytes / buffer_size_);
}

BufferPool::~BufferPool() {
  for (auto* b : free_) std::free(b);
}

uint8_t* BufferPool::acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!free_.empty()) {
    uint8_t* b = free_.back();
    free_.pop_back();
    return b;
  }
  if (allocated_ >= max_buffers_) return nullptr;
  void* p = std::aligned_alloc(8, buffer_size_);
  if (!p) return nullptr;
  ++allocated_;
  return static_cast<uint8_t*>(p);
}

void BufferPool::release(uint8_t* buffer) {
  if (!buffer) return;
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(buffer);
}

size_t BufferPool::in_use() const {
  std::lock_guard<std::mutex> lock(mu_);
  return allocated_ - free_.size();
}

}  // namespace c3::collector
