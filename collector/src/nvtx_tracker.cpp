#include "nvtx_tracker.h"

#include <algorithm>
#include <array>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

namespace c3::collector {

namespace {

constexpr size_t kShards = 64;

void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

bool is_high_surrogate(uint32_t c) {
  return c >= 0xD800 && c <= 0xDBFF;
}
bool is_low_surrogate(uint32_t c) {
  return c >= 0xDC00 && c <= 0xDFFF;
}

}  // namespace

std::string wide_to_utf8(const wchar_t* s) {
  std::string out;
  if (s == nullptr) return out;
  for (; *s != 0; ++s) {
    // wchar_t is a signed 32-bit code unit on Linux (not a char, whatever clang-tidy thinks): a
    // negative value wraps above 0x10FFFF and becomes U+FFFD.
    using Unit = std::make_unsigned_t<wchar_t>;
    uint32_t c = static_cast<Unit>(*s);             // NOLINT(bugprone-signed-char-misuse)
    const uint32_t next = static_cast<Unit>(s[1]);  // NOLINT(bugprone-signed-char-misuse)
    if (is_high_surrogate(c) && is_low_surrogate(next)) {
      c = 0x10000 + ((c - 0xD800) << 10) + (next - 0xDC00);
      ++s;
    } else if (is_high_surrogate(c) || is_low_surrogate(c) || c > 0x10FFFF) {
      c = 0xFFFD;
    }
    append_utf8(out, c);
  }
  return out;
}

// Append-only table whose reads take no lock: entries are published with release stores and
// never move or die before the table, so a handle stays valid while another thread registers.
template <class T>
class NvtxTracker::Table {
 public:
  static constexpr size_t kSegmentSize = 1024;
  static constexpr size_t kMaxSegments = 1024;

  Table() = default;
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
  ~Table() {
    for (auto& seg_ptr : segments_) {
      Segment* seg = seg_ptr.load(std::memory_order_relaxed);
      if (seg == nullptr) continue;
      for (auto& slot : seg->slots) delete slot.load(std::memory_order_relaxed);
      delete seg;
    }
  }

  // Caller holds the registry lock. Returns false when full.
  bool append(std::unique_ptr<T> value, size_t* index) {
    if (size_ == kSegmentSize * kMaxSegments) return false;
    auto& seg_ptr = segments_[size_ / kSegmentSize];
    Segment* seg = seg_ptr.load(std::memory_order_relaxed);
    if (seg == nullptr) {
      seg = new Segment();
      seg_ptr.store(seg, std::memory_order_release);
    }
    seg->slots[size_ % kSegmentSize].store(value.release(), std::memory_order_release);
    *index = size_++;
    return true;
  }

  T* get(uint64_t index) const {
    if (index >= kSegmentSize * kMaxSegments) return nullptr;
    const Segment* seg = segments_[index / kSegmentSize].load(std::memory_order_acquire);
    if (seg == nullptr) return nullptr;
    return seg->slots[index % kSegmentSize].load(std::memory_order_acquire);
  }

 private:
  struct Segment {
    std::array<std::atomic<T*>, kSegmentSize> slots{};
  };
  std::array<std::atomic<Segment*>, kMaxSegments> segments_{};
  size_t size_ = 0;
};

struct NvtxTracker::Domain {
  using CategoryNames = std::unordered_map<uint32_t, std::string>;

  explicit Domain(std::string n) : name(std::move(n)) {}

  const std::string name;
  // Copy-on-write: readers load the current map without a lock. Old maps are kept (in
  // snapshots) because a reader may still hold one; categories are named a handful of times.
  std::atomic<const CategoryNames*> categories{nullptr};
  std::vector<std::unique_ptr<const CategoryNames>> snapshots;  // under registry_mu_
};

struct NvtxTracker::Open {
  tracedb::NvtxRangeRow row;
  const Domain* domain = nullptr;
};

namespace {

template <class Stack>
struct ThreadStacksT {
  // A thread rarely uses more than two domains: a linear search beats a map.
  std::vector<std::pair<const void*, Stack>> by_domain;

  Stack& stack(const void* domain) {
    for (auto& [d, s] : by_domain) {
      if (d == domain) return s;
    }
    return by_domain.emplace_back(domain, Stack{}).second;
  }
  Stack* find(const void* domain) {
    for (auto& [d, s] : by_domain) {
      if (d == domain) return &s;
    }
    return nullptr;
  }
};

}  // namespace

struct NvtxTracker::OpenState {
  using Stack = std::vector<Open>;
  using ThreadStacks = ThreadStacksT<Stack>;

  // One lock per shard: threads with different ids rarely share a shard, so pushes and pops on
  // 16 threads do not wait for each other; the lock only matters against close_all.
  struct alignas(64) ThreadShard {
    std::mutex mu;
    std::unordered_map<int64_t, ThreadStacks> threads;
  };
  struct alignas(64) RangeShard {
    std::mutex mu;
    std::unordered_map<uint64_t, Open> ranges;
  };

  std::array<ThreadShard, kShards> threads;
  std::array<RangeShard, kShards> ranges;

  ThreadShard& thread_shard(int64_t tid) { return threads[static_cast<uint64_t>(tid) % kShards]; }
  RangeShard& range_shard(uint64_t id) { return ranges[id % kShards]; }
};

NvtxTracker::NvtxTracker(Sink sink, CountFn count)
    : sink_(std::move(sink)),
      count_fn_(std::move(count)),
      domains_(std::make_unique<Table<Domain>>()),
      strings_(std::make_unique<Table<std::string>>()),
      open_(new OpenState()) {
  size_t index = 0;
  domains_->append(std::make_unique<Domain>("default"), &index);  // index 0 == kDefaultDomain
  domain_by_name_.emplace("default", kDefaultDomain);
}

NvtxTracker::~NvtxTracker() {
  delete open_.load(std::memory_order_relaxed);
  for (OpenState* state : abandoned_) delete state;
}

const NvtxTracker::Domain& NvtxTracker::domain(uint64_t handle) const {
  const Domain* d = domains_->get(handle);
  return d != nullptr ? *d : *domains_->get(kDefaultDomain);
}

uint64_t NvtxTracker::create_domain(std::string_view name) {
  std::lock_guard lock(registry_mu_);
  std::string key(name);
  if (auto it = domain_by_name_.find(key); it != domain_by_name_.end()) return it->second;
  size_t index = 0;
  // Full table: the domain's events go to the default domain rather than being lost.
  if (!domains_->append(std::make_unique<Domain>(key), &index)) return kDefaultDomain;
  domain_by_name_.emplace(std::move(key), index);
  return index;
}

bool NvtxTracker::destroy_domain(uint64_t handle) {
  return handle != kDefaultDomain && domains_->get(handle) != nullptr;
}

std::string NvtxTracker::domain_name(uint64_t handle) const {
  return domain(handle).name;
}

uint64_t NvtxTracker::register_string(uint64_t domain_handle, std::string_view str) {
  const uint64_t d = domains_->get(domain_handle) != nullptr ? domain_handle : kDefaultDomain;
  std::string key = std::to_string(d);
  key += ':';
  key += str;
  std::lock_guard lock(registry_mu_);
  if (auto it = string_by_key_.find(key); it != string_by_key_.end()) return it->second;
  size_t index = 0;
  if (!strings_->append(std::make_unique<std::string>(str), &index)) return 0;
  string_by_key_.emplace(std::move(key), index + 1);
  return index + 1;
}

void NvtxTracker::name_category(uint64_t domain_handle, uint32_t category, std::string_view name) {
  std::lock_guard lock(registry_mu_);
  Domain* d = domains_->get(domain_handle);
  if (d == nullptr) d = domains_->get(kDefaultDomain);
  const Domain::CategoryNames* current = d->categories.load(std::memory_order_relaxed);
  if (current != nullptr) {
    auto it = current->find(category);
    if (it != current->end() && it->second == name) return;  // no new snapshot for a repeat
  }
  auto next = current != nullptr ? std::make_unique<Domain::CategoryNames>(*current)
                                 : std::make_unique<Domain::CategoryNames>();
  (*next)[category] = std::string(name);
  d->categories.store(next.get(), std::memory_order_release);
  d->snapshots.push_back(std::move(next));
}

tracedb::NvtxRangeRow NvtxTracker::begin_row(const Domain& d, int64_t tid, int64_t ts,
                                             const NvtxAttributes& attr, const char* kind) const {
  tracedb::NvtxRangeRow row;
  row.thread_id = tid;
  row.kind = kind;
  row.domain = d.name;
  switch (attr.message) {
    case NvtxAttributes::Message::none:
      break;
    case NvtxAttributes::Message::ascii:
      if (attr.ascii != nullptr) row.name = attr.ascii;
      break;
    case NvtxAttributes::Message::wide:
      row.name = wide_to_utf8(attr.wide);
      break;
    case NvtxAttributes::Message::registered:
      if (attr.registered != 0) {
        if (const std::string* s = strings_->get(attr.registered - 1)) row.name = *s;
      }
      break;
  }
  if (attr.category != 0) row.category = attr.category;
  if (attr.has_color) row.color = attr.argb;
  switch (attr.payload) {
    case NvtxAttributes::Payload::none:
      break;
    case NvtxAttributes::Payload::int32:
    case NvtxAttributes::Payload::int64:
    case NvtxAttributes::Payload::uint32:
    case NvtxAttributes::Payload::uint64:
      // SQLite has no unsigned 64-bit integers: a uint64 above INT64_MAX keeps its bit pattern
      // and reads back negative (the caller already stored it wrapped in payload_int).
      row.payload_int = attr.payload_int;
      break;
    case NvtxAttributes::Payload::float32:
    case NvtxAttributes::Payload::float64:
      row.payload_double = attr.payload_double;
      break;
  }
  row.start_ns = ts;
  row.end_ns = ts;
  row.closed = 1;
  return row;
}

void NvtxTracker::emit(Open&& open) {
  if (open.row.category && open.domain != nullptr) {
    const auto* names = open.domain->categories.load(std::memory_order_acquire);
    if (names != nullptr) {
      auto it = names->find(static_cast<uint32_t>(*open.row.category));
      if (it != names->end()) open.row.category_name = it->second;
    }
  }
  sink_(std::move(open.row));
}

bool NvtxTracker::finish(std::optional<Open>&& open, int64_t ts,
                         std::optional<int64_t> end_thread) {
  if (!open) {
    count(Problem::unmatched_end, 1);
    return false;
  }
  open->row.end_ns = ts;
  open->row.end_thread_id = end_thread;
  emit(std::move(*open));
  return true;
}

void NvtxTracker::count(Problem p, int64_t n) {
  if (n == 0) return;
  switch (p) {
    case Problem::unclosed_range:
      unclosed_.fetch_add(n, std::memory_order_relaxed);
      break;
    case Problem::unmatched_end:
      unmatched_.fetch_add(n, std::memory_order_relaxed);
      break;
  }
  if (count_fn_) count_fn_(p, n);
}

int NvtxTracker::push(uint64_t domain_handle, int64_t tid, int64_t ts, const NvtxAttributes& attr) {
  const Domain& d = domain(domain_handle);
  Open open{begin_row(d, tid, ts, attr, "push_pop"), &d};
  auto& shard = open_.load(std::memory_order_acquire)->thread_shard(tid);
  std::lock_guard lock(shard.mu);
  auto& stack = shard.threads[tid].stack(&d);
  const int depth = static_cast<int>(stack.size());
  open.row.depth = depth;
  stack.push_back(std::move(open));
  return depth;
}

int NvtxTracker::pop(uint64_t domain_handle, int64_t tid, int64_t ts) {
  const Domain& d = domain(domain_handle);
  std::optional<Open> open;
  int depth = kError;
  {
    auto& shard = open_.load(std::memory_order_acquire)->thread_shard(tid);
    std::lock_guard lock(shard.mu);
    if (auto it = shard.threads.find(tid); it != shard.threads.end()) {
      if (auto* stack = it->second.find(&d); stack != nullptr && !stack->empty()) {
        open = std::move(stack->back());
        stack->pop_back();
        depth = static_cast<int>(stack->size());
      }
    }
  }
  return finish(std::move(open), ts, std::nullopt) ? depth : kError;
}

uint64_t NvtxTracker::start(uint64_t domain_handle, int64_t tid, int64_t ts,
                            const NvtxAttributes& attr) {
  const Domain& d = domain(domain_handle);
  Open open{begin_row(d, tid, ts, attr, "start_end"), &d};
  const uint64_t id = next_range_id_.fetch_add(1, std::memory_order_relaxed);
  auto& shard = open_.load(std::memory_order_acquire)->range_shard(id);
  std::lock_guard lock(shard.mu);
  shard.ranges.emplace(id, std::move(open));
  return id;
}

bool NvtxTracker::end(uint64_t id, int64_t tid, int64_t ts) {
  std::optional<Open> open;
  {
    auto& shard = open_.load(std::memory_order_acquire)->range_shard(id);
    std::lock_guard lock(shard.mu);
    if (auto it = shard.ranges.find(id); it != shard.ranges.end()) {
      open = std::move(it->second);
      shard.ranges.erase(it);
    }
  }
  return finish(std::move(open), ts, tid);
}

void NvtxTracker::mark(uint64_t domain_handle, int64_t tid, int64_t ts,
                       const NvtxAttributes& attr) {
  const Domain& d = domain(domain_handle);
  emit(Open{begin_row(d, tid, ts, attr, "mark"), &d});
}

void NvtxTracker::close_all(int64_t end_ts) {
  OpenState& state = *open_.load(std::memory_order_acquire);
  std::vector<Open> unclosed;
  for (auto& shard : state.threads) {
    std::unordered_map<int64_t, OpenState::ThreadStacks> threads;
    {
      std::lock_guard lock(shard.mu);
      threads.swap(shard.threads);
    }
    for (auto& [tid, stacks] : threads) {
      for (auto& [d, stack] : stacks.by_domain) {
        for (auto& open : stack) unclosed.push_back(std::move(open));
      }
    }
  }
  for (auto& shard : state.ranges) {
    std::unordered_map<uint64_t, Open> ranges;
    {
      std::lock_guard lock(shard.mu);
      ranges.swap(shard.ranges);
    }
    for (auto& [id, open] : ranges) unclosed.push_back(std::move(open));
  }
  // Hash order would make the tail of every trace differ from run to run.
  std::stable_sort(unclosed.begin(), unclosed.end(),
                   [](const Open& a, const Open& b) { return a.row.start_ns < b.row.start_ns; });
  count(Problem::unclosed_range, static_cast<int64_t>(unclosed.size()));
  for (auto& open : unclosed) {
    open.row.end_ns = end_ts;
    open.row.closed = 0;
    emit(std::move(open));
  }
}

void NvtxTracker::reset_after_fork() {
  // The parent's ranges are set aside, not freed: a parent thread may have been inside a shard
  // (lock held, map half-updated) when fork copied memory, so neither is safe to touch now.
  abandoned_.push_back(open_.exchange(new OpenState(), std::memory_order_acq_rel));
  // A registration in flight at fork time leaves registry_mu_ locked forever in the child.
  // std::mutex is trivially destructible here, so constructing it anew is the usual remedy.
  new (&registry_mu_) std::mutex();
}

NvtxTracker::Stats NvtxTracker::stats() const {
  Stats s;
  s.unclosed_ranges = unclosed_.load(std::memory_order_relaxed);
  s.unmatched_ends = unmatched_.load(std::memory_order_relaxed);
  OpenState& state = *open_.load(std::memory_order_acquire);
  for (auto& shard : state.threads) {
    std::lock_guard lock(shard.mu);
    for (const auto& [tid, stacks] : shard.threads) {
      for (const auto& [d, stack] : stacks.by_domain) {
        s.open_push_ranges += static_cast<int64_t>(stack.size());
      }
    }
  }
  for (auto& shard : state.ranges) {
    std::lock_guard lock(shard.mu);
    s.open_start_ranges += static_cast<int64_t>(shard.ranges.size());
  }
  return s;
}

}  // namespace c3::collector
