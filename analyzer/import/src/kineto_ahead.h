// The Kineto importer's first stage on a thread of its own: events are copied out of the stream
// in batches, a worker tokenizes each batch (kineto_tokenize.h, the costliest stage) while the
// caller splits the next (and, rather than wait for the worker, tokenizes one itself), and the
// caller applies the tokenized events to the Parser in the file's order, so every count, name id
// and message is what one thread would give. Memory stays bounded: at most kInFlight batches are
// out at once.
#pragma once

#include <simdjson.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "kineto_parse.h"

namespace c3::importer::kineto {

class TokenizeAhead {
 public:
  // Starts the worker; `parser` gets every event through Parser::apply, on the caller's thread.
  explicit TokenizeAhead(Parser& parser);
  ~TokenizeAhead();  // stops the worker (events not applied yet are dropped)
  TokenizeAhead(const TokenizeAhead&) = delete;
  TokenizeAhead& operator=(const TokenizeAhead&) = delete;

  // One element of traceEvents at byte `at` (copied: the stream's buffer moves on). Applies the
  // batches the worker finished, in order.
  void add(std::string_view text, int64_t at);
  // Applies every event added, in order (call before reading the Parser's counts).
  void finish();

 private:
  struct Item {
    size_t offset = 0, size = 0;
    int64_t at = 0;
  };
  struct Batch {
    std::string bytes;  // the events back to back, JsonStream::kPadding bytes after the last
    std::vector<Item> items;
    std::vector<Event> events;
    std::vector<const char*> why;
    std::deque<std::string> texts;  // what the events read outside `bytes` (escaped strings)
    bool done = false;              // under mu_: tokenized
  };
  static constexpr size_t kBatchBytes = size_t{256} << 10;
  static constexpr size_t kInFlight = 8;

  static void tokenize(Batch& b, simdjson::ondemand::parser& parser);
  void work();  // the worker: tokenizes the batches in order
  void hand_over();
  void apply_done(bool wait_for_one);

  Parser& parser_;
  std::unique_ptr<Batch> open_;                // being filled by add()
  std::vector<std::unique_ptr<Batch>> spare_;  // applied, kept for reuse (their buffers)
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<std::unique_ptr<Batch>> queue_;  // handed over, in order; the worker's is at next_
  size_t next_ = 0;  // under mu_: queue_ index of the first batch no thread has claimed
  simdjson::ondemand::parser own_parser_;  // the caller's, when it tokenizes a batch itself
  bool stop_ = false;
  std::exception_ptr error_;  // under mu_: what stopped the worker
  std::thread worker_;
};

}  // namespace c3::importer::kineto
