// A small CUPTI activity client for the doubles' self-test: registers buffer callbacks backed by
// malloc'd buffers, copies every delivered record, and can refuse buffers.
#pragma once

#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace c3::sim::test {

inline constexpr size_t kDefaultBufferSize = size_t{64} << 10;

struct Record {
  uint32_t kind = 0;
  std::vector<uint8_t> bytes;

  template <typename T>
  T as() const {
    T value{};
    std::memcpy(&value, bytes.data(), std::min(sizeof(T), bytes.size()));
    return value;
  }
};

class CuptiClient {
 public:
  static CuptiClient& instance();

  // Registers the buffer callbacks (buffers of `buffer_size` bytes, `max_records` per buffer).
  void start(size_t buffer_size = kDefaultBufferSize, size_t max_records = 0);
  // cuptiFinalize (delivers what is left) and forgets the records.
  void stop();

  // cuptiActivityFlushAll(0) then returns (and forgets) everything delivered so far.
  std::vector<Record> flush_and_take();
  std::vector<Record> take();

  void set_refuse_buffers(bool refuse) { refuse_.store(refuse); }
  int buffers_requested() const { return requested_.load(); }
  int buffers_completed() const { return completed_.load(); }
  std::vector<std::thread::id> completing_threads();

 private:
  static void CUPTIAPI on_requested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI on_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer, size_t size,
                                    size_t valid_size);

  std::mutex mu_;
  std::vector<Record> records_;
  std::vector<std::thread::id> completing_threads_;
  std::atomic<size_t> buffer_size_{kDefaultBufferSize};
  std::atomic<size_t> max_records_{0};
  std::atomic<bool> refuse_{false};
  std::atomic<int> requested_{0};
  std::atomic<int> completed_{0};
};

// Records of one activity kind, converted to their struct.
template <typename T>
std::vector<T> records_of(const std::vector<Record>& records, CUpti_ActivityKind kind) {
  std::vector<T> out;
  for (const Record& r : records) {
    if (r.kind == static_cast<uint32_t>(kind)) out.push_back(r.as<T>());
  }
  return out;
}

// Index of the first record of `kind` whose correlation id (as read by `corr`) matches; -1.
template <typename T, typename F>
int index_of(const std::vector<Record>& records, CUpti_ActivityKind kind, F corr, uint32_t id) {
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].kind == static_cast<uint32_t>(kind) && corr(records[i].as<T>()) == id) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

// The CUPTI API record (RUNTIME or DRIVER) with this correlation id; kind INVALID if none.
CUpti_ActivityAPI api_record(const std::vector<Record>& records, uint32_t correlation_id);
// The kernel record (KERNEL or CONCURRENT_KERNEL) with this correlation id; kind INVALID if none.
CUpti_ActivityKernel10 kernel_record(const std::vector<Record>& records, uint32_t correlation_id);

// The fixture every CUPTI-facing test uses: a started client, finalized afterwards.
void start_client(size_t buffer_size = kDefaultBufferSize, size_t max_records = 0);
void stop_client();

}  // namespace c3::sim::test
