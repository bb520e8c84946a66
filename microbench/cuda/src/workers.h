// One persistent host thread per GPU (nccl-tests' single-process, multi-GPU pattern): each
// thread owns its device (cudaSetDevice once) and every CUDA call for that device runs on it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace c3::bench::cuda {

class WorkerPool {
 public:
  explicit WorkerPool(std::vector<int> devices);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int size() const { return static_cast<int>(devices_.size()); }
  int device(int i) const { return devices_[static_cast<size_t>(i)]; }

  // Runs fn(i) on every worker i and waits for all; then rethrows the earliest failure as
  // std::runtime_error("GPU <device>: <what>"). Not reentrant: one caller thread.
  void run(const std::function<void(int)>& fn);

  // True from the moment one worker of the current run() has failed: the others stop waiting
  // for GPU work that may never finish (a collective whose peer never launched).
  const std::atomic<bool>& cancelled() const { return cancelled_; }

 private:
  void loop(int i);
  void stop();

  std::vector<int> devices_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  unsigned long generation_ = 0;
  int pending_ = 0;
  int first_failed_ = -1;
  bool stop_ = false;
  std::vector<std::exception_ptr> errors_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace c3::bench::cuda
