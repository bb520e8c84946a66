// The events producers hand to the writer, in fixed-size blocks: appending never moves or
// reallocates queued events (growing one big vector on the application's thread showed up as
// page faults and moves in profiles of NVTX-heavy jobs), and the writer returns drained blocks
// for reuse. Not thread-safe: the Recorder guards it with its queue lock.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "event.h"

namespace c3::collector {

class EventQueue {
 public:
  static constexpr size_t kBlockEvents = 1024;
  struct Block {
    std::vector<Event> events;
  };
  using Blocks = std::vector<std::unique_ptr<Block>>;

  void push(Event&& e) {
    if (!current_ || current_->events.size() == kBlockEvents) {
      if (current_) filled_.push_back(std::move(current_));
      current_ = take_spare();
    }
    current_->events.push_back(std::move(e));
    ++size_;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Moves every queued block (oldest first) to the end of `out`.
  void take_all(Blocks& out) {
    for (auto& b : filled_) out.push_back(std::move(b));
    filled_.clear();
    if (current_ && !current_->events.empty()) out.push_back(std::move(current_));
    size_ = 0;
  }
  // Takes drained blocks back (keeping a few for reuse) and empties `blocks`.
  void recycle(Blocks& blocks) {
    for (auto& b : blocks) {
      b->events.clear();
      if (spare_.size() < kMaxSpare) spare_.push_back(std::move(b));
    }
    blocks.clear();
  }
  // Drops everything, keeping no memory (a forked child).
  void reset() {
    filled_.clear();
    current_.reset();
    spare_.clear();
    size_ = 0;
  }

 private:
  static constexpr size_t kMaxSpare = 8;
  std::unique_ptr<Block> take_spare() {
    if (!spare_.empty()) {
      auto b = std::move(spare_.back());
      spare_.pop_back();
      return b;
    }
    auto b = std::make_unique<Block>();
    b->events.reserve(kBlockEvents);
    return b;
  }
  Blocks filled_;
  std::unique_ptr<Block> current_;
  Blocks spare_;
  size_t size_ = 0;
};

}  // namespace c3::collector
