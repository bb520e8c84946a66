// NVTX semantics, without NVTX: push/pop stacks per thread and domain, start/end ranges that may
// end on another thread, marks, domains, registered strings and category names, turned into
// complete nvtx_range rows. The injection glue (nvtx_injection.cpp) translates NVTX calls into
// these operations; keeping the state machine free of the NVTX export tables, the Recorder and
// the clock (every operation takes its thread id and timestamp) makes it testable on its own.
//
// Thread safety: every member may be called from any thread at the same time, except
// reset_after_fork (single-threaded forked child). Rows are handed to the sink outside any lock,
// on the thread whose call finished the row; the sink must not call back into the tracker.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "c3/tracedb/schema.h"

namespace c3::collector {

// The fields of nvtxEventAttributes_t, in our own words. Strings are only borrowed for the call.
struct NvtxAttributes {
  enum class Message : uint8_t { none, ascii, wide, registered };
  enum class Payload : uint8_t { none, int32, int64, uint32, uint64, float32, float64 };

  Message message = Message::none;
  const char* ascii = nullptr;    // Message::ascii (bytes are kept as given: UTF-8 passes)
  const wchar_t* wide = nullptr;  // Message::wide, converted to UTF-8
  uint64_t registered = 0;        // Message::registered: a register_string() handle
  uint32_t category = 0;          // 0: no category (NVTX's default value)
  bool has_color = false;         // NVTX colorType == NVTX_COLOR_ARGB
  uint32_t argb = 0;
  Payload payload = Payload::none;
  int64_t payload_int = 0;      // int32, int64, uint32 (widened); uint64 bit pattern
  double payload_double = 0.0;  // float32 (widened), float64

  static NvtxAttributes text(const char* s) {
    NvtxAttributes a;
    a.message = Message::ascii;
    a.ascii = s;
    return a;
  }
  static NvtxAttributes text(const wchar_t* s) {
    NvtxAttributes a;
    a.message = Message::wide;
    a.wide = s;
    return a;
  }
};

// wchar_t text (UTF-32 on Linux; UTF-16 surrogate pairs are joined too) to UTF-8. Invalid code
// points become U+FFFD. nullptr gives "".
std::string wide_to_utf8(const wchar_t* s);

class NvtxTracker {
 public:
  using Sink = std::function<void(tracedb::NvtxRangeRow&&)>;
  enum class Problem { unclosed_range, unmatched_end };
  using CountFn = std::function<void(Problem, int64_t)>;

  // Handle of the default domain (NVTX passes a null nvtxDomainHandle_t for it).
  static constexpr uint64_t kDefaultDomain = 0;
  // Returned by push/pop on error (NVTX: "a negative value").
  static constexpr int kError = -1;

  struct Stats {
    int64_t unclosed_ranges = 0;
    int64_t unmatched_ends = 0;
    int64_t open_push_ranges = 0;   // now, across all threads
    int64_t open_start_ranges = 0;  // now
  };

  explicit NvtxTracker(Sink sink, CountFn count = {});
  ~NvtxTracker();
  NvtxTracker(const NvtxTracker&) = delete;
  NvtxTracker& operator=(const NvtxTracker&) = delete;

  // Domains. The same name always gives the same handle (never 0), so a library that creates
  // its domain in several places, or after a destroy, keeps one timeline. destroy only checks
  // the handle: a domain lives as long as the tracker, because other threads may still be
  // inside a call with it. Unknown handles passed to the other operations mean the default
  // domain.
  uint64_t create_domain(std::string_view name);
  bool destroy_domain(uint64_t domain);
  std::string domain_name(uint64_t domain) const;

  // nvtxDomainRegisterString: a handle (never 0) for NvtxAttributes::registered. The same
  // string in the same domain gets the same handle again. Returns 0 when the table is full
  // (about a million strings); messages with that handle then read as "".
  uint64_t register_string(uint64_t domain, std::string_view str);
  // nvtxNameCategory/nvtxDomainNameCategory. Looked up when a row is finished, so a name given
  // while a range is open applies to it.
  void name_category(uint64_t domain, uint32_t category, std::string_view name);

  // nvtxRangePush: the 0-based level of the range started (its depth column).
  int push(uint64_t domain, int64_t tid, int64_t ts, const NvtxAttributes& attr);
  // nvtxRangePop: the level of the range ended, or kError (counted unmatched) when the thread
  // has no open push range in that domain.
  int pop(uint64_t domain, int64_t tid, int64_t ts);
  // nvtxRangeStart: an id, unique in the process and never 0.
  uint64_t start(uint64_t domain, int64_t tid, int64_t ts, const NvtxAttributes& attr);
  // nvtxRangeEnd, from any thread. False (counted unmatched) for an unknown or already ended id.
  bool end(uint64_t id, int64_t tid, int64_t ts);
  void mark(uint64_t domain, int64_t tid, int64_t ts, const NvtxAttributes& attr);

  // Process end: emits every open range with closed = 0 and end_ns = end_ts (start/end ranges
  // get no end_thread_id), counts them as unclosed, and forgets them.
  void close_all(int64_t end_ts);
  // In a forked child: forgets the parent's open ranges without emitting them. Domains,
  // registered strings and category names stay valid, as their handles do in the child.
  void reset_after_fork();

  Stats stats() const;

 private:
  struct Domain;
  struct Open;
  struct OpenState;
  template <class T>
  class Table;

  const Domain& domain(uint64_t handle) const;
  tracedb::NvtxRangeRow begin_row(const Domain& d, int64_t tid, int64_t ts,
                                  const NvtxAttributes& attr, const char* kind) const;
  void emit(Open&& open);
  // Ends a range taken out of the open state (pop, end) at `ts` and emits it; none (nullopt) is
  // an unmatched end, counted, and gives false. Start/end ranges record the ending thread.
  bool finish(std::optional<Open>&& open, int64_t ts, std::optional<int64_t> end_thread);
  void count(Problem p, int64_t n);

  Sink sink_;
  CountFn count_fn_;
  std::atomic<int64_t> unclosed_{0};
  std::atomic<int64_t> unmatched_{0};
  std::atomic<uint64_t> next_range_id_{1};

  // Writers of the registry (domains, strings, category names) take registry_mu_; readers go
  // through the append-only tables without locking, so events never wait for a registration.
  std::mutex registry_mu_;
  std::unique_ptr<Table<Domain>> domains_;
  std::unique_ptr<Table<std::string>> strings_;
  std::unordered_map<std::string, uint64_t> domain_by_name_;
  std::unordered_map<std::string, uint64_t> string_by_key_;  // "<domain handle>:<string>"

  // Open ranges, sharded by thread id (push/pop) and range id (start/end). Replaced, not
  // cleared, after fork: another thread of the parent may have been inside it. The replaced
  // ones wait in abandoned_ for the destructor, which only tests reach (the collector's
  // tracker lives as long as the process).
  std::atomic<OpenState*> open_;
  std::vector<OpenState*> abandoned_;
};

}  // namespace c3::collector
