// Bounded pool of CUPTI activity buffers (C3SCOPE_BUFFER_MB in all). When every buffer is in
// flight, CUPTI gets none and drops records, which it counts; the job is never stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace c3::collector {

class BufferPool {
 public:
  explicit BufferPool(size_t total_bytes);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // A buffer of buffer_size() bytes, 8-byte aligned as CUPTI requires, or nullptr when the pool
  // is exhausted. Thread-safe.
  uint8_t* acquire();
  void release(uint8_t* buffer);
  size_t buffer_size() const { return buffer_size_; }
  size_t capacity() const { return max_buffers_; }
  size_t in_use() const;

 private:
  size_t buffer_size_;
  size_t max_buffers_;
  mutable std::mutex mu_;
  std::vector<uint8_t*> free_;
  size_t allocated_ = 0;
};

}  // namespace c3::collector
