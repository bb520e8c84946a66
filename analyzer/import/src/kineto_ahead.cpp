#include "kineto_ahead.h"

#include <cstdint>
#include <utility>

#include "json_stream.h"
#include "kineto_tokenize.h"

namespace c3::importer::kineto {

TokenizeAhead::TokenizeAhead(Parser& parser) : parser_(parser) {
  worker_ = std::thread([this] { work(); });
}

TokenizeAhead::~TokenizeAhead() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void TokenizeAhead::tokenize(Batch& b, simdjson::ondemand::parser& parser) {
  const size_t n = b.items.size();
  if (b.events.size() < n) b.events.resize(n);
  b.why.assign(n, nullptr);
  const auto begin = reinterpret_cast<uintptr_t>(b.bytes.data());
  const auto end = begin + b.bytes.size();
  for (size_t i = 0; i < n; ++i) {
    const Item& it = b.items[i];
    Event& e = b.events[i];
    e = Event{};  // here rather than all at once: the event stays in the cache
    // The fast path's texts all lie in the batch (kineto_fast.cpp).
    const simdjson::padded_string_view in(b.bytes.data() + it.offset, it.size,
                                          it.size + JsonStream::kPadding);
    if (read_event_fast(in, &e)) {
      b.why[i] = nullptr;
      continue;
    }
    e = Event{};
    b.why[i] = read_event_json(parser, in, &e);
    // Texts in the parser's buffer are overwritten by the next event's: kept with the batch.
    for_each_text(e, [&](std::string_view& t) {
      const auto at = reinterpret_cast<uintptr_t>(t.data());
      if (t.empty() || (at >= begin && at < end)) return;
      t = b.texts.emplace_back(t);
    });
  }
}

void TokenizeAhead::work() {
  simdjson::ondemand::parser parser;
  for (;;) {
    Batch* b = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [&] { return stop_ || next_ < queue_.size(); });
      if (stop_) return;
      b = queue_[next_++].get();  // claimed
    }
    try {
      tokenize(*b, parser);
    } catch (...) {  // no memory for the events: the import fails with it, on the caller's thread
      const std::lock_guard<std::mutex> lock(mu_);
      error_ = std::current_exception();
      done_cv_.notify_one();
      return;
    }
    {
      const std::lock_guard<std::mutex> lock(mu_);
      b->done = true;
    }
    done_cv_.notify_one();
  }
}

void TokenizeAhead::add(std::string_view text, int64_t at) {
  if (!open_) {
    if (spare_.empty()) {
      open_ = std::make_unique<Batch>();
    } else {
      open_ = std::move(spare_.back());
      spare_.pop_back();
    }
  }
  Batch& b = *open_;
  b.items.push_back({b.bytes.size(), text.size(), at});
  b.bytes.append(text);
  if (b.bytes.size() >= kBatchBytes) {
    hand_over();
    apply_done(false);
  }
}

void TokenizeAhead::hand_over() {
  if (!open_) return;
  // simdjson reads up to its padding past the last event.
  open_->bytes.append(JsonStream::kPadding, ' ');
  size_t in_flight = 0;
  {
    const std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(open_));
    in_flight = queue_.size();
  }
  work_cv_.notify_one();
  if (in_flight > kInFlight) apply_done(true);
}

void TokenizeAhead::apply_done(bool wait_for_one) {
  for (;;) {
    std::unique_ptr<Batch> b;
    {
      std::unique_lock<std::mutex> lock(mu_);
      // Rather than wait for the worker, the caller tokenizes the next batch itself: the two
      // share the work when the worker falls behind (batches then finish out of order; they
      // are still applied in order).
      while (wait_for_one && !error_ && !queue_.empty() && !queue_.front()->done &&
             next_ < queue_.size()) {
        Batch* mine = queue_[next_++].get();
        lock.unlock();
        tokenize(*mine, own_parser_);
        lock.lock();
        mine->done = true;
      }
      if (wait_for_one) {
        done_cv_.wait(lock, [&] { return error_ || (!queue_.empty() && queue_.front()->done); });
      }
      if (error_) std::rethrow_exception(error_);
      if (queue_.empty() || !queue_.front()->done) return;
      b = std::move(queue_.front());
      queue_.pop_front();
      --next_;  // the front was claimed: next_ >= 1
    }
    wait_for_one = false;
    for (size_t i = 0; i < b->items.size(); ++i)
      parser_.apply(b->events[i], b->why[i], b->items[i].at);
    b->bytes.clear();
    b->items.clear();
    b->texts.clear();
    b->done = false;
    spare_.push_back(std::move(b));
  }
}

void TokenizeAhead::finish() {
  hand_over();
  for (;;) {
    {
      const std::lock_guard<std::mutex> lock(mu_);
      if (queue_.empty()) return;
    }
    apply_done(true);
  }
}

}  // namespace c3::importer::kineto
