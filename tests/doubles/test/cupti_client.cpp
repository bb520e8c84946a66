#include "cupti_client.h"

#include <cstdlib>

namespace c3::sim::test {

CuptiClient& CuptiClient::instance() {
  static CuptiClient client;
  return client;
}

void CuptiClient::start(size_t buffer_size, size_t max_records) {
  buffer_size_.store(buffer_size);
  max_records_.store(max_records);
  refuse_.store(false);
  requested_.store(0);
  completed_.store(0);
  {
    std::lock_guard lock(mu_);
    records_.clear();
    completing_threads_.clear();
  }
  cuptiActivityRegisterCallbacks(&CuptiClient::on_requested, &CuptiClient::on_completed);
}

void CuptiClient::stop() {
  cuptiFinalize();
  std::lock_guard lock(mu_);
  records_.clear();
  completing_threads_.clear();
}

std::vector<Record> CuptiClient::flush_and_take() {
  cuptiActivityFlushAll(0);
  return take();
}

std::vector<Record> CuptiClient::take() {
  std::lock_guard lock(mu_);
  std::vector<Record> out;
  out.swap(records_);
  return out;
}

std::vector<std::thread::id> CuptiClient::completing_threads() {
  std::lock_guard lock(mu_);
  return completing_threads_;
}

void CUPTIAPI CuptiClient::on_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  CuptiClient& c = instance();
  c.requested_.fetch_add(1);
  if (c.refuse_.load()) {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
    return;
  }
  const size_t bytes = c.buffer_size_.load();
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, (bytes + 7) / 8 * 8));
  *size = bytes;
  *max_records = c.max_records_.load();
}

void CUPTIAPI CuptiClient::on_completed(CUcontext ctx, uint32_t stream_id, uint8_t* buffer,
                                        size_t size, size_t valid_size) {
  static_cast<void>(ctx);
  static_cast<void>(stream_id);
  static_cast<void>(size);
  CuptiClient& c = instance();
  std::vector<Record> got;
  CUpti_Activity* record = nullptr;
  const uint8_t* previous = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    const auto* p = reinterpret_cast<const uint8_t*>(record);
    if (previous != nullptr) got.back().bytes.assign(previous, p);
    Record r;
    r.kind = static_cast<uint32_t>(record->kind);
    got.push_back(std::move(r));
    previous = p;
  }
  if (previous != nullptr)
    got.back().bytes.assign(previous, static_cast<const uint8_t*>(buffer + valid_size));
  std::free(buffer);
  c.completed_.fetch_add(1);
  std::lock_guard lock(c.mu_);
  for (Record& r : got) c.records_.push_back(std::move(r));
  c.completing_threads_.push_back(std::this_thread::get_id());
}

CUpti_ActivityAPI api_record(const std::vector<Record>& records, uint32_t correlation_id) {
  for (const Record& r : records) {
    if (r.kind == CUPTI_ACTIVITY_KIND_RUNTIME || r.kind == CUPTI_ACTIVITY_KIND_DRIVER) {
      const auto api = r.as<CUpti_ActivityAPI>();
      if (api.correlationId == correlation_id) return api;
    }
  }
  return CUpti_ActivityAPI{};
}

CUpti_ActivityKernel10 kernel_record(const std::vector<Record>& records, uint32_t correlation_id) {
  for (const Record& r : records) {
    if (r.kind == CUPTI_ACTIVITY_KIND_KERNEL || r.kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      const auto k = r.as<CUpti_ActivityKernel10>();
      if (k.correlationId == correlation_id) return k;
    }
  }
  return CUpti_ActivityKernel10{};
}

void start_client(size_t buffer_size, size_t max_records) {
  CuptiClient::instance().start(buffer_size, max_records);
}

void stop_client() {
  CuptiClient::instance().stop();
}

}  // namespace c3::sim::test
