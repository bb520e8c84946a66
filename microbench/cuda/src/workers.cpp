#include "workers.h"

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "check.h"

namespace c3::bench::cuda {

WorkerPool::WorkerPool(std::vector<int> devices)
    : devices_(std::move(devices)), errors_(devices_.size()) {
  for (int i = 0; i < size(); ++i) threads_.emplace_back([this, i] { loop(i); });
  try {
    // Binds each thread to its device and creates the device's primary context there.
    run([this](int i) {
      C3_CUDA(cudaSetDevice(device(i)));
      C3_CUDA(cudaFree(nullptr));
    });
  } catch (...) {
    stop();
    throw;
  }
}

WorkerPool::~WorkerPool() {
  stop();
}

void WorkerPool::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::loop(int i) {
  unsigned long seen = 0;
  for (;;) {
    const std::function<void(int)>* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    std::exception_ptr error;
    try {
      (*job)(i);
    } catch (...) {
      error = std::current_exception();
      cancelled_ = true;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      errors_[static_cast<size_t>(i)] = error;
      // The first failure in time is the cause; later ones are often its consequences.
      if (error && first_failed_ < 0) first_failed_ = i;
      if (--pending_ == 0) done_.notify_all();
    }
  }
}

void WorkerPool::run(const std::function<void(int)>& fn) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    pending_ = size();
    for (auto& e : errors_) e = nullptr;
    first_failed_ = -1;
    cancelled_ = false;
    ++generation_;
  }
  wake_.notify_all();
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return pending_ == 0; });
  job_ = nullptr;
  if (first_failed_ >= 0) {
    int i = first_failed_;
    std::exception_ptr e = errors_[static_cast<size_t>(i)];
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      throw std::runtime_error("GPU " + std::to_string(device(i)) + ": " + ex.what());
    } catch (...) {
      throw std::runtime_error("GPU " + std::to_string(device(i)) + ": unknown error");
    }
  }
}

}  // namespace c3::bench::cuda
