#include "c3/analyzer/why/path.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>

#include "c3/analyzer/metrics/metrics.h"
#include "c3/analyzer/metrics/pattern.h"
#include "c3/analyzer/why/path_join.h"
#include "rows.h"

namespace c3::analyzer {

const char* path_part_name(PathPart p) {
  switch (p) {
    case PathPart::compute:
      return "compute";
    case PathPart::communication:
      return "communication";
    case PathPart::memory:
      return "memory";
    case PathPart::other_gpu:
      return "other_gpu";
    case PathPart::host:
      return "host";
    case PathPart::idle:
      return "idle";
  }
  return "?";
}

const std::string& RankPath::last_name(const PathChain& c) const {
  static const std::string none;
  return c.last_name >= 0 && static_cast<size_t>(c.last_name) < names.size()
             ? names[static_cast<size_t>(c.last_name)]
             : none;
}

int32_t RankPath::add_name(const std::string& name,
                           std::unordered_map<std::string, int32_t>& seen) {
  const auto [it, added] = seen.emplace(name, static_cast<int32_t>(names.size()));
  if (added) names.push_back(name);
  return it->second;
}

namespace {

PathPart part_of(Class c) {
  switch (c) {
    case Class::compute:
      return PathPart::compute;
    case Class::communication:
      return PathPart::communication;
    case Class::memory:
      return PathPart::memory;
    case Class::other:
      return PathPart::other_gpu;
  }
  return PathPart::other_gpu;
}

// A host call on the rank's timeline: a launch call (its GPU row) or a synchronization.
struct HostCall {
  int64_t start = 0, end = 0;
  int64_t row = -1;    // the launched row; -1: a synchronization
  int32_t thread = 0;  // fold_thread of the calling thread
};

// Sorts `v`, made of runs [bounds[k], bounds[k + 1]) that each usually come sorted: a run that
// does not is sorted on its own, then the runs are merged pairwise (O(n log runs)).
template <class T, class Less>
void sort_runs(std::vector<T>& v, std::vector<size_t> bounds, Less less) {
  for (size_t k = 0; k + 1 < bounds.size(); ++k) {
    const auto b = v.begin() + static_cast<std::ptrdiff_t>(bounds[k]);
    const auto e = v.begin() + static_cast<std::ptrdiff_t>(bounds[k + 1]);
    if (!std::is_sorted(b, e, less)) std::sort(b, e, less);
  }
  while (bounds.size() > 2) {
    std::vector<size_t> next{0};
    for (size_t k = 0; k + 2 < bounds.size(); k += 2) {
      std::inplace_merge(v.begin() + static_cast<std::ptrdiff_t>(bounds[k]),
                         v.begin() + static_cast<std::ptrdiff_t>(bounds[k + 1]),
                         v.begin() + static_cast<std::ptrdiff_t>(bounds[k + 2]), less);
      next.push_back(bounds[k + 2]);
    }
    if (bounds.size() % 2 == 0) next.push_back(bounds.back());  // an odd run: carried over
    bounds = std::move(next);
  }
}

// One rank's graph, built once for all its steps: stream predecessors, host calls by end, GPU
// rows by end, and each collective's first row.
class RankGraph {
 public:
  RankGraph(const Trace& t, int process) : t_(t), a_(t.activities), process_(process) {
    devices_ = device_rows(a_, process);
    if (!devices_.empty()) {
      begin_ = devices_.front().begin;
      end_ = devices_.back().end;
    }
    const size_t n = end_ - begin_;
    prev_.assign(n, -1);
    // (device, stream) -> its index; rows' stream indices. A process has few streams, and runs
    // of one stream's rows are common, so the last one used is tried first, then a hash.
    std::unordered_map<uint64_t, uint32_t> index;
    std::vector<int64_t> last_row;  // per stream: its last row so far
    std::vector<uint32_t> stream_of(n);
    uint64_t hot_key = UINT64_MAX;
    uint32_t hot = 0;
    const bool calls = a_.has_calls();
    for (size_t i = begin_; i < end_; ++i) {
      const uint64_t key = (static_cast<uint64_t>(static_cast<uint16_t>(a_.device[i])) << 32) |
                           static_cast<uint32_t>(a_.stream[i]);
      if (last_row.empty() || key != hot_key) {
        auto [it, fresh] = index.try_emplace(key, static_cast<uint32_t>(last_row.size()));
        if (fresh) last_row.push_back(-1);
        hot = it->second;
        hot_key = key;
      }
      stream_of[i - begin_] = hot;
      prev_[i - begin_] = last_row[hot];
      last_row[hot] = static_cast<int64_t>(i);
      const int32_t c = a_.collective[i];
      if (c >= 0 && a_.cls[i] == Class::communication) {
        const Collective& col = t.collectives[static_cast<size_t>(c)];
        if (!col.comm_id.empty() && col.seq >= 0) {
          first_row_.emplace_back(c, static_cast<int64_t>(i));
          if (is_boundary_.empty()) is_boundary_.assign(t.collectives.size(), 0);
          is_boundary_[static_cast<size_t>(c)] = 1;
        }
      }
    }
    // Each collective's first row: the earliest start (ties: the first in row order).
    std::sort(first_row_.begin(), first_row_.end(), [&](const auto& x, const auto& y) {
      if (x.first != y.first) return x.first < y.first;
      const int64_t sx = a_.start[static_cast<size_t>(x.second)];
      const int64_t sy = a_.start[static_cast<size_t>(y.second)];
      return sx != sy ? sx < sy : x.second < y.second;
    });
    first_row_.erase(std::unique(first_row_.begin(), first_row_.end(),
                                 [](const auto& x, const auto& y) { return x.first == y.first; }),
                     first_row_.end());
    // GPU rows by end and host calls by end: grouped by stream first, where both usually come
    // sorted already (a stream runs its work in launch order), then the streams' runs merged:
    // O(n log streams) rather than a sort of every row.
    std::vector<size_t> bounds(last_row.size() + 1, 0);
    for (const uint32_t sidx : stream_of) ++bounds[sidx + 1];
    for (size_t k = 1; k < bounds.size(); ++k) bounds[k] += bounds[k - 1];
    std::vector<size_t> at(bounds.begin(), bounds.end() - 1);
    std::vector<size_t> grouped(n);
    for (size_t i = 0; i < n; ++i) grouped[at[stream_of[i]]++] = begin_ + i;
    by_end_.reserve(n);
    calls_.reserve(calls ? n : 0);
    for (const size_t i : grouped) by_end_.emplace_back(a_.end[i], static_cast<int64_t>(i));
    sort_runs(by_end_, bounds, std::less<>());
    std::vector<size_t> call_bounds{0};
    for (size_t k = 0; k + 1 < bounds.size(); ++k) {
      for (size_t g = bounds[k]; g < bounds[k + 1] && calls; ++g) {
        const size_t i = grouped[g];
        if (a_.call_end[i] != kNoCall && a_.call_start[i] <= a_.start[i]) {
          calls_.push_back({a_.call_start[i], a_.call_end[i], static_cast<int64_t>(i),
                            a_.call_thread.empty() ? 0 : a_.call_thread[i]});
        }
      }
      call_bounds.push_back(calls_.size());
    }
    for (const HostSync& s : t.host_syncs) {
      if (s.process == process) calls_.push_back({s.start, s.end, -1, s.thread});
    }
    call_bounds.push_back(calls_.size());
    sort_runs(calls_, call_bounds, [](const HostCall& x, const HostCall& y) {
      if (x.end != y.end) return x.end < y.end;
      if (x.start != y.start) return x.start < y.start;
      return x.row < y.row;
    });
    // Each thread's calls in end order, and where each call is in its thread's list.
    std::unordered_map<int32_t, uint32_t> thread_index;
    thread_pos_.resize(calls_.size());
    int32_t hot_thread = 0;
    uint32_t hot_slot = UINT32_MAX;  // the last thread seen (runs of one thread's calls)
    for (size_t k = 0; k < calls_.size(); ++k) {
      if (hot_slot == UINT32_MAX || calls_[k].thread != hot_thread) {
        auto [it, fresh] =
            thread_index.try_emplace(calls_[k].thread, static_cast<uint32_t>(thread_calls_.size()));
        if (fresh) thread_calls_.emplace_back();
        hot_thread = calls_[k].thread;
        hot_slot = it->second;
      }
      thread_pos_[k] = {hot_slot, static_cast<uint32_t>(thread_calls_[hot_slot].size())};
      thread_calls_[hot_slot].push_back(static_cast<int64_t>(k));
    }
    call_index_.assign(n, -1);
    for (size_t k = 0; k < calls_.size(); ++k) {
      if (calls_[k].row >= 0)
        call_index_[static_cast<size_t>(calls_[k].row) - begin_] = static_cast<int64_t>(k);
    }
    // Cross-stream event waits: each waiting row's source (the latest-ending one when a row
    // waits on several).
    for (const StreamWait& w : t.stream_waits) {
      if (w.process != process) continue;
      const int64_t from = find_row(w.from_device, w.from_stream, w.from_start);
      const int64_t to = find_row(w.to_device, w.to_stream, w.to_start);
      if (from < 0 || to < 0 || from == to) continue;
      if (wait_from_.empty()) wait_from_.assign(n, -1);
      int64_t& src = wait_from_[static_cast<size_t>(to) - begin_];
      if (src < 0 || a_.end[static_cast<size_t>(from)] > a_.end[static_cast<size_t>(src)]) {
        src = from;
      }
    }
  }

  const Activities& a() const { return a_; }
  const Trace& trace() const { return t_; }
  int process() const { return process_; }
  size_t begin() const { return begin_; }
  size_t end() const { return end_; }
  size_t calls() const { return calls_.size(); }
  const std::vector<DeviceRows>& devices() const { return devices_; }
  // The collectives with rows here (Trace::collectives index, its first row), by index.
  const std::vector<std::pair<int32_t, int64_t>>& collectives() const { return first_row_; }
  int64_t prev_on_stream(int64_t i) const { return prev_[static_cast<size_t>(i) - begin_]; }
  // A collective row (one whose end is a boundary): its Trace::collectives index, else -1.
  int32_t boundary(int64_t i) const {
    const int32_t c = a_.collective[static_cast<size_t>(i)];
    return c >= 0 && static_cast<size_t>(c) < is_boundary_.size() &&
                   is_boundary_[static_cast<size_t>(c)] != 0
               ? c
               : -1;
  }
  // The GPU row with the latest end <= t (ties: the one that started first), or -1.
  int64_t last_end_by(int64_t t) const {
    auto it = std::upper_bound(by_end_.begin(), by_end_.end(), std::make_pair(t, INT64_MAX));
    if (it == by_end_.begin()) return -1;
    --it;
    const int64_t e = it->first;
    int64_t best = it->second;
    while (it != by_end_.begin() && std::prev(it)->first == e) {
      --it;
      if (a_.start[static_cast<size_t>(it->second)] < a_.start[static_cast<size_t>(best)]) {
        best = it->second;
      }
    }
    return best;
  }
  // The host call with the latest end <= t other than `self` (index into calls), or -1. With
  // `self` -1: of any thread. Else self's thread's previous call (a thread's calls run one after
  // another; another thread's calls do not wait for them), unless the thread made no call for
  // longer than kBlockedThreadNs before t: it was blocked on something the trace does not show
  // (PyTorch's main thread inside backward() while the autograd thread launches the backward
  // pass), and the latest call of any thread is taken as what it waited for.
  static constexpr int64_t kBlockedThreadNs = 1'000'000;
  int64_t host_before(int64_t t, int64_t self) const {
    if (self < 0 || static_cast<size_t>(self) >= calls_.size()) return any_before(t, self);
    const int64_t own = thread_before(t, self);
    if (own >= 0 && t - calls_[static_cast<size_t>(own)].end <= kBlockedThreadNs) return own;
    const int64_t any = any_before(t, self);
    if (own < 0) return any;
    return any >= 0 && calls_[static_cast<size_t>(any)].end > calls_[static_cast<size_t>(own)].end
               ? any
               : own;
  }
  // The latest call of any thread ending by t other than `self`, or -1.
  int64_t any_before(int64_t t, int64_t self) const {
    if (self > 0 && static_cast<size_t>(self) < calls_.size()) {  // most often the one before
      const auto k = static_cast<size_t>(self);
      if (calls_[k - 1].end <= t && calls_[k].end > t &&
          (k + 1 == calls_.size() || calls_[k + 1].end > t))
        return self - 1;
    }
    auto it = std::upper_bound(calls_.begin(), calls_.end(), t,
                               [](int64_t x, const HostCall& c) { return x < c.end; });
    while (it != calls_.begin()) {
      --it;
      const auto k = static_cast<int64_t>(it - calls_.begin());
      if (k != self) return k;
    }
    return -1;
  }
  // The latest call of self's thread ending by t other than `self`, or -1.
  int64_t thread_before(int64_t t, int64_t self) const {
    const auto [slot, pos] = thread_pos_[static_cast<size_t>(self)];
    const std::vector<int64_t>& list = thread_calls_[slot];
    auto end_of = [&](size_t j) { return calls_[static_cast<size_t>(list[j])].end; };
    // From a call's start, the call ending just before it is most often the one before it on
    // its thread: checked first, in O(1), before the search.
    if (pos > 0 && end_of(pos - 1) <= t && end_of(pos) > t) return list[pos - 1];
    size_t lo = 0, hi = list.size();  // the first with end > t
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (end_of(mid) <= t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    while (lo > 0) {
      --lo;
      if (list[lo] != self) return list[lo];
    }
    return -1;
  }
  const HostCall& call(int64_t k) const { return calls_[static_cast<size_t>(k)]; }
  // The host call of row i (its launch), as an index into calls, or -1.
  int64_t call_of(int64_t row) const { return call_index_[static_cast<size_t>(row) - begin_]; }
  // The row whose end row `row` waited for through a CUDA event (Trace::stream_waits), or -1.
  int64_t waited_for(int64_t row) const {
    return wait_from_.empty() ? -1 : wait_from_[static_cast<size_t>(row) - begin_];
  }
  // The row of this process on (device, stream) that starts at `start`, or -1.
  int64_t find_row(int16_t device, int32_t stream, int64_t start) const {
    for (const DeviceRows& d : devices_) {
      if (d.device != device) continue;
      const auto first = a_.start.begin() + static_cast<std::ptrdiff_t>(d.begin);
      const auto last = a_.start.begin() + static_cast<std::ptrdiff_t>(d.end);
      for (auto it = std::lower_bound(first, last, start); it != last && *it == start; ++it) {
        const auto i = static_cast<size_t>(it - a_.start.begin());
        if (a_.stream[i] == stream) return static_cast<int64_t>(i);
      }
    }
    return -1;
  }
  // The GPU row running at (or ending last before) t: the one reaching furthest toward t among
  // those that started before it (ties: the earliest start), or -1.
  int64_t at_end_of(int64_t t) const {
    int64_t best = -1, reach = INT64_MIN;
    for (const DeviceRows& d : devices_) {
      const auto first = a_.start.begin() + static_cast<std::ptrdiff_t>(d.begin);
      const auto last = a_.start.begin() + static_cast<std::ptrdiff_t>(d.end);
      const auto hi = std::lower_bound(first, last, t);
      const int64_t from = t < INT64_MIN + d.longest ? INT64_MIN : t - d.longest;
      for (auto it = std::lower_bound(first, hi, from); it != hi; ++it) {
        const auto i = static_cast<size_t>(it - a_.start.begin());
        const int64_t r = std::min(a_.end[i], t);
        if (r > reach || (r == reach && a_.start[i] < a_.start[static_cast<size_t>(best)])) {
          reach = r;
          best = static_cast<int64_t>(i);
        }
      }
    }
    // A row that ended earlier than the rows still running could reach: the latest end.
    const int64_t e = last_end_by(t);
    if (e >= 0 && a_.end[static_cast<size_t>(e)] > reach) best = e;
    return best;
  }

 private:
  const Trace& t_;
  const Activities& a_;
  int process_ = 0;
  std::vector<DeviceRows> devices_;
  size_t begin_ = 0, end_ = 0;
  std::vector<int64_t> prev_;
  std::vector<std::pair<int64_t, int64_t>> by_end_;
  std::vector<HostCall> calls_;
  std::vector<std::vector<int64_t>> thread_calls_;         // per thread: its calls, by end
  std::vector<std::pair<uint32_t, uint32_t>> thread_pos_;  // call -> (thread, index in it)
  std::vector<int64_t> call_index_;  // row - begin_ -> its launch call's index in calls_, or -1
  std::vector<int64_t> wait_from_;   // row - begin_ -> the row it waited for, or -1 (or empty)
  std::vector<std::pair<int32_t, int64_t>> first_row_;  // (Trace::collectives index, first row)
  std::vector<uint8_t> is_boundary_;  // Trace::collectives index -> in first_row_ (or empty)
};

// Matching the what-ifs that the map can judge (parts and kernel signatures) against segments.
class WhatIfMatcher {
 public:
  WhatIfMatcher(const Trace& t, const PathOptions& o) : t_(t), o_(o) {
    for (const WhatIf& w : o.what_ifs) {
      patterns_.push_back(w.kind == WhatIf::Kind::kernel ? Pattern::compile(w.pattern, "--what-if")
                                                         : Pattern());
    }
  }
  void add(std::vector<int64_t>& removed, PathPart part, int64_t ns, int64_t row) {
    removed.resize(o_.what_ifs.size(), 0);
    for (size_t k = 0; k < o_.what_ifs.size(); ++k) {
      const WhatIf& w = o_.what_ifs[k];
      bool hit = false;
      if (w.kind == WhatIf::Kind::part) {
        hit = w.part == part;
      } else if (w.kind == WhatIf::Kind::kernel && row >= 0 && part == PathPart::compute) {
        hit = matches(k, t_.activities.name[static_cast<size_t>(row)]);
      }
      if (hit) {
        removed[k] += std::llround(static_cast<double>(ns) * (1.0 - w.keep));
      }
    }
  }

 private:
  bool matches(size_t k, int32_t name) {
    auto key = std::make_pair(k, name);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    const auto n = static_cast<size_t>(name);
    const bool hit =
        n < t_.names.size() && patterns_[k].search(normalized_kernel_name(t_.names[n]));
    cache_.emplace(key, hit);
    return hit;
  }
  const Trace& t_;
  const PathOptions& o_;
  std::vector<Pattern> patterns_;
  std::map<std::pair<size_t, int32_t>, bool> cache_;
};

// What a walk found from a host call's start on (walks of one window share the host's chain:
// without this, each collective's walk would follow the host back to the step's start again).
struct Memo {
  PathParts parts{};
  std::vector<int64_t> removed;
  int32_t boundary = -1;
  int64_t boundary_at = 0;
  PathPart last = PathPart::idle;
  int64_t last_row = -2;
};
// The memos of one window, by host call: a slot per call (a walk asks at every call it passes,
// so the lookup is an array read), cleared between windows by the calls it holds.
class Memos {
 public:
  explicit Memos(size_t calls) : slot_(calls, 0) {}
  const Memo* find(int64_t call) const {
    const auto c = static_cast<size_t>(call);
    return c < slot_.size() && slot_[c] != 0 ? &memos_[slot_[c] - 1].second : nullptr;
  }
  void add(int64_t call, Memo m) {
    const auto c = static_cast<size_t>(call);
    if (c >= slot_.size() || slot_[c] != 0) return;  // the first one stays (as emplace)
    memos_.emplace_back(call, std::move(m));
    slot_[c] = static_cast<uint32_t>(memos_.size());
  }
  void clear() {
    for (const auto& [call, m] : memos_) slot_[static_cast<size_t>(call)] = 0;
    memos_.clear();
  }

 private:
  std::vector<uint32_t> slot_;  // call -> 1 + its memos_ index; 0: none
  std::vector<std::pair<int64_t, Memo>> memos_;
};

// A walk back from one node to the window's start or, with `stop_at_collectives`, to the end of
// a collective (a boundary). Each step hands the time to the binding dependency.
struct Walk {
  Walk(const RankGraph& graph, int64_t window_start, bool stop)
      : g(graph), ws(window_start), stop_at_collectives(stop) {}
  const RankGraph& g;
  int64_t ws;  // the window's start: the walk ends there
  bool stop_at_collectives;
  // Out:
  PathParts parts{};
  std::vector<PathSegment>* segments = nullptr;
  int32_t boundary = -1;  // Trace::collectives index of the collective whose end it reached
  int64_t boundary_at = 0;
  PathPart last = PathPart::idle;
  int64_t last_row = -2;  // -2: nothing yet
  WhatIfMatcher* whatif = nullptr;
  std::vector<int64_t> removed;
  bool done = false;
  Memos* memo = nullptr;  // shared by the walks of one window (same start)
  struct Visit {
    int64_t call = 0;
    PathParts parts{};
    std::vector<int64_t> removed;
    // The first non-idle segment after the visit (-2: none yet).
    PathPart next_part = PathPart::idle;
    int64_t next_row = -2;
  };
  std::vector<Visit> visits;
  size_t unset = 0;  // visits[unset..] have no next segment yet
  void worked(PathPart part, int64_t row) {
    for (; unset < visits.size(); ++unset) {
      visits[unset].next_part = part;
      visits[unset].next_row = row;
    }
  }

  // Stores what the walk found from each host call it passed, once it is done.
  void remember() {
    if (memo == nullptr) return;
    for (const Visit& v : visits) {
      Memo m;
      for (size_t p = 0; p < kPathParts; ++p) m.parts[p] = parts[p] - v.parts[p];
      m.removed = removed;
      for (size_t k = 0; k < m.removed.size(); ++k) {
        m.removed[k] -= k < v.removed.size() ? v.removed[k] : 0;
      }
      m.boundary = boundary;
      m.boundary_at = boundary_at;
      if (v.next_row != -2) {
        m.last = v.next_part;
        m.last_row = v.next_row;
      }
      memo->add(v.call, std::move(m));
    }
  }
  // Takes over a remembered walk from host call `k`; false when there is none.
  bool reuse(int64_t k) {
    if (memo == nullptr) return false;
    const Memo* found = memo->find(k);
    if (found == nullptr) return false;
    const Memo& m = *found;
    for (size_t p = 0; p < kPathParts; ++p) parts[p] += m.parts[p];
    removed.resize(std::max(removed.size(), m.removed.size()), 0);
    for (size_t k2 = 0; k2 < m.removed.size(); ++k2) removed[k2] += m.removed[k2];
    boundary = m.boundary;
    boundary_at = m.boundary_at;
    if (last_row == -2 && m.last_row != -2) {
      last = m.last;
      last_row = m.last_row;
    }
    if (m.last_row != -2) worked(m.last, m.last_row);
    done = true;
    return true;
  }

  // Adds [from, to) (clipped at the window's start); returns false when the walk is done.
  bool add(PathPart part, int64_t from, int64_t to, int64_t row) {
    if (to <= ws) {
      done = true;
      return false;
    }
    from = std::max(from, ws);
    if (to > from) {
      parts[static_cast<size_t>(part)] += to - from;
      // What the rank did last: its last work before the end, passing over the gaps.
      if (part != PathPart::idle) worked(part, row);
      if (last_row == -2 && part != PathPart::idle) {
        last = part;
        last_row = row;
      }
      if (segments) segments->push_back({from, to, part, row, g.process()});
      if (whatif) whatif->add(removed, part, to - from, row);
    }
    if (from <= ws) done = true;
    return !done;
  }

  enum class Node : uint8_t { op_start, op_end, call_start, call_end };

  void run(Node node, int64_t id, int64_t at) {
    follow(node, id, at);
    remember();
  }

  void follow(Node node, int64_t id, int64_t at) {
    const Activities& a = g.a();
    // Each step moves to an earlier time, or at one time to an earlier row of a stream or the
    // host: a walk visits each node once, except through a hostile trace's calls of no duration
    // at one time, which the cap on steps at one time ends.
    int64_t same = 0, before = at;
    for (; !done && same < kMaxSameTime; same = at == before ? same + 1 : 0) {
      before = at;
      switch (node) {
        case Node::op_end: {
          const auto i = static_cast<size_t>(id);
          if (stop_at_collectives) {
            if (const int32_t c = g.boundary(id); c >= 0) {
              boundary = c;
              boundary_at = at;
              done = true;
              return;
            }
          }
          if (!add(part_of(a.cls[i]), a.start[i], std::min(at, a.end[i]), id)) return;
          node = Node::op_start;
          at = a.start[i];
          break;
        }
        case Node::op_start: {
          const int64_t p = g.prev_on_stream(id);
          const int64_t ep = p >= 0 ? a.end[static_cast<size_t>(p)] : INT64_MIN;
          const int64_t k = g.call_of(id);
          const int64_t lc = k >= 0 ? std::min(g.call(k).end, at) : INT64_MIN;
          // A wait on another stream's work (an event): binding when that work ended last.
          int64_t wf = g.waited_for(id);
          const int64_t ew = wf >= 0 ? a.end[static_cast<size_t>(wf)] : INT64_MIN;
          if (ew > at) wf = -1;  // it ended after this one started: not what it waited for
          if (p < 0 && k < 0 && wf < 0) {
            add(PathPart::idle, ws, at, -1);  // nothing known before it
            done = true;
            return;
          }
          if (wf >= 0 && ew > ep && ew >= lc) {  // the other stream
            if (ew < at && !add(PathPart::idle, ew, at, -1)) return;
            node = Node::op_end;
            id = wf;
            at = ew;
          } else if (ep >= lc) {  // the stream (ties: the GPU)
            if (ep < at && !add(PathPart::idle, ep, at, -1)) return;
            node = Node::op_end;
            id = p;
            at = std::min(ep, at);
          } else {  // the launch call: the call and its latency to the GPU
            if (!add(PathPart::host, g.call(k).start, at, id)) return;
            node = Node::call_start;
            id = k;
            at = g.call(k).start;
          }
          break;
        }
        case Node::call_start: {
          // Every kMemoEvery-th call a walk passes is remembered: a later walk that joins this
          // one's chain takes it over at most that many calls on (the map's cost stays linear
          // in the calls, and the memo small).
          if (stop_at_collectives && memo != nullptr) {
            if (reuse(id)) return;
            if (++passed % kMemoEvery == 0) visits.push_back({id, parts, removed});
          }
          const int64_t k = g.host_before(at, id);
          if (k < 0) {
            add(PathPart::host, ws, at, -1);
            done = true;
            return;
          }
          const HostCall& c = g.call(k);
          if (c.end < at && !add(PathPart::host, c.end, at, -1)) return;
          node = Node::call_end;
          id = k;
          at = std::min(c.end, at);
          break;
        }
        case Node::call_end: {
          const HostCall& c = g.call(id);
          // A call that returned only after GPU work ended (a synchronization, a blocking copy)
          // waited for that work: the latest GPU end within it.
          int64_t waited = -1;
          if (c.row < 0) {
            waited = g.last_end_by(at);
          } else if (a.end[static_cast<size_t>(c.row)] <= at) {
            waited = c.row;
          }
          if (waited >= 0 && a.end[static_cast<size_t>(waited)] >= c.start) {
            const int64_t e = a.end[static_cast<size_t>(waited)];
            if (e < at && !add(PathPart::host, e, at, -1)) return;
            node = Node::op_end;
            id = waited;
            at = std::min(e, at);
          } else {
            if (!add(PathPart::host, c.start, at, c.row)) return;
            node = Node::call_start;
            at = c.start;
          }
          break;
        }
      }
    }
    if (!done) {  // the cap: the rest of the window is time the walk could not follow
      add(PathPart::idle, ws, at, -1);
      done = true;
    }
  }
  static constexpr int64_t kMaxSameTime = 4096;
  static constexpr int64_t kMemoEvery = 8;
  int64_t passed = 0;
};

// Starts a walk at a window's end `we`: the later of the GPU row reaching furthest toward it and
// the host call that ended last before it.
void walk_from_end(Walk& w, const RankGraph& g, int64_t we) {
  const Activities& a = g.a();
  const int64_t op = g.at_end_of(we);
  const int64_t k = g.host_before(we, -1);
  const int64_t op_at = op >= 0 ? std::min(a.end[static_cast<size_t>(op)], we) : INT64_MIN;
  const int64_t call_at = k >= 0 ? g.call(k).end : INT64_MIN;
  if (op < 0 && k < 0) {
    w.add(PathPart::idle, w.ws, we, -1);
    return;
  }
  if (op_at >= call_at) {
    if (op_at < we && !w.add(PathPart::host, op_at, we, -1)) return;
    w.run(Walk::Node::op_end, op, op_at);
  } else {
    if (call_at < we && !w.add(PathPart::host, call_at, we, -1)) return;
    w.run(Walk::Node::call_end, k, call_at);
  }
}

// `normalized`: each name's normalized form, filled as names come (a rank's chains end at a few
// kernels, thousands of times).
std::string last_name(const Trace& t, const Walk& w,
                      std::unordered_map<int32_t, std::string>& normalized) {
  if (w.last_row < 0) return w.last == PathPart::host ? "host time between calls" : "";
  const auto i = static_cast<size_t>(w.last_row);
  const int32_t nm = t.activities.name[i];
  auto it = normalized.find(nm);
  if (it == normalized.end()) {
    const auto n = static_cast<size_t>(nm);
    it =
        normalized.emplace(nm, n < t.names.size() ? normalized_kernel_name(t.names[n]) : "?").first;
  }
  std::string name = it->second;
  if (w.last == PathPart::host) name = "launch of " + name;
  return name;
}

// The single-rank path of a window from its chains: the tail chain and, back through each
// collective a chain starts from, the collective's own time on this rank (its first kernel's
// start to where the walk reached its end) and the chain that led to it. (A walk that passed
// through collectives would find the same path: at a collective's end it goes on from the
// collective's start, where that collective's chain starts.)
void local_path(RankPath& rp, const Interval& win) {
  // (comm, seq) -> the first chain that ends at it, sorted for a binary search.
  std::vector<std::tuple<int32_t, int64_t, const PathChain*>> arrival;
  for (const PathChain& ch : rp.chains) {
    if (ch.to_comm >= 0) arrival.emplace_back(ch.to_comm, ch.to_seq, &ch);
  }
  std::stable_sort(arrival.begin(), arrival.end(), [](const auto& x, const auto& y) {
    return std::tie(std::get<0>(x), std::get<1>(x)) < std::tie(std::get<0>(y), std::get<1>(y));
  });
  auto find_arrival = [&](int32_t comm, int64_t seq) -> const PathChain* {
    auto it = std::lower_bound(arrival.begin(), arrival.end(), std::make_pair(comm, seq),
                               [](const auto& x, const std::pair<int32_t, int64_t>& k) {
                                 return std::tie(std::get<0>(x), std::get<1>(x)) <
                                        std::tie(k.first, k.second);
                               });
    if (it == arrival.end() || std::get<0>(*it) != comm || std::get<1>(*it) != seq) return nullptr;
    return std::get<2>(*it);
  };
  const PathChain* cur = &rp.chains.back();
  auto& comm = rp.local[static_cast<size_t>(PathPart::communication)];
  for (size_t guard = 0; cur != nullptr && guard <= rp.chains.size(); ++guard) {
    for (size_t p = 0; p < kPathParts; ++p) rp.local[p] += cur->parts[p];
    if (cur->from_ns <= win.start) break;
    const PathChain* before = nullptr;
    if (cur->from_comm >= 0) {
      const PathChain* a = find_arrival(cur->from_comm, cur->from_seq);
      if (a != nullptr && a->to_ns <= cur->from_ns) before = a;
    }
    // Without the chain that led to it, the collective began before the window (or is not
    // named): the rest of the window is its time.
    comm += cur->from_ns - (before != nullptr ? before->to_ns : win.start);
    cur = before;
  }
  for (int64_t v : rp.local) rp.local_ns += v;
}

}  // namespace

std::vector<RankPath> rank_paths(const Trace& t, int process, const std::vector<Interval>& windows,
                                 const std::vector<std::string>& comms,
                                 const std::vector<std::string>& ops, const PathOptions& o) {
  std::vector<RankPath> out(windows.size());
  const RankGraph g(t, process);
  WhatIfMatcher matcher(t, o);
  std::unordered_map<std::string, int32_t> comm_index;
  for (size_t k = 0; k < comms.size(); ++k) comm_index.emplace(comms[k], static_cast<int32_t>(k));
  std::unordered_map<std::string, int32_t> op_index;
  for (size_t k = 0; k < ops.size(); ++k) op_index.emplace(ops[k], static_cast<int32_t>(k));
  auto name_of = [&](int32_t c, int32_t* comm, int64_t* seq) {
    const Collective& col = t.collectives[static_cast<size_t>(c)];
    auto it = comm_index.find(col.comm_id);
    *comm = it == comm_index.end() ? -1 : it->second;
    *seq = col.seq;
  };
  // Collectives by their first row's start, to find each window's.
  struct Arrival {
    int64_t start;
    int32_t c;
    int64_t row;
  };
  std::vector<Arrival> arrivals;
  arrivals.reserve(g.collectives().size());
  for (const auto& [c, row] : g.collectives()) {
    arrivals.push_back({t.activities.start[static_cast<size_t>(row)], c, row});
  }
  std::sort(arrivals.begin(), arrivals.end(), [](const Arrival& x, const Arrival& y) {
    return x.start != y.start ? x.start < y.start : x.c < y.c;
  });
  std::unordered_map<int32_t, std::string> normalized;
  Memos memo(g.calls());
  std::unordered_map<std::string, int32_t> seen;
  for (size_t k = 0; k < windows.size(); ++k) {
    const Interval& win = windows[k];
    RankPath& rp = out[k];
    seen.clear();
    auto finish = [&](Walk& w, PathChain& ch, int64_t to) {
      ch.to_ns = to;
      ch.parts = w.parts;
      if (w.boundary >= 0) {
        name_of(w.boundary, &ch.from_comm, &ch.from_seq);
        ch.from_ns = w.boundary_at;
      } else {
        ch.from_ns = win.start;
      }
      ch.last = w.last;
      ch.last_name = rp.add_name(last_name(t, w, normalized), seen);
      ch.removed = std::move(w.removed);
      ch.removed.resize(o.what_ifs.size(), 0);
    };
    memo.clear();
    auto lo = std::lower_bound(arrivals.begin(), arrivals.end(), win.start,
                               [](const Arrival& x, int64_t at) { return x.start < at; });
    for (auto it = lo; it != arrivals.end() && it->start < win.end; ++it) {
      Walk w(g, win.start, true);
      w.whatif = o.what_ifs.empty() ? nullptr : &matcher;
      w.memo = &memo;
      PathChain ch;
      name_of(it->c, &ch.to_comm, &ch.to_seq);
      if (ch.to_comm < 0) continue;
      const Collective& col = t.collectives[static_cast<size_t>(it->c)];
      const auto op = op_index.find(col.op);
      ch.to_op = op == op_index.end() ? -1 : op->second;
      ch.to_end_ns = std::max(col.gpu_end, it->start);
      ch.to_bytes = std::max<int64_t>(col.bytes, 0);
      ch.to_nranks = std::max(col.nranks, 0);
      w.run(Walk::Node::op_start, it->row, it->start);
      finish(w, ch, it->start);
      rp.chains.push_back(std::move(ch));
    }
    Walk w(g, win.start, true);
    w.whatif = o.what_ifs.empty() ? nullptr : &matcher;
    w.memo = &memo;
    walk_from_end(w, g, win.end);
    PathChain tail;
    finish(w, tail, win.end);
    rp.chains.push_back(std::move(tail));
    local_path(rp, win);
  }
  return out;
}

std::vector<PathSegment> path_segments(const Trace& t, int process, const Interval& window) {
  std::vector<PathSegment> out;
  const RankGraph g(t, process);
  Walk w(g, window.start, false);
  w.segments = &out;
  walk_from_end(w, g, window.end);
  return out;
}

std::vector<PathSegment> route_segments(const Trace& t, const std::vector<StepPath>& paths,
                                        std::vector<size_t>* step) {
  std::vector<PathSegment> out;
  std::map<int, std::unique_ptr<RankGraph>> graphs;
  for (size_t pi = 0; pi < paths.size(); ++pi) {
    if (step != nullptr) step->resize(out.size(), pi == 0 ? 0 : pi - 1);
    for (const PathLeg& leg : paths[pi].route) {
      if (leg.process < 0 || static_cast<size_t>(leg.process) >= t.processes.size()) continue;
      auto& g = graphs[leg.process];
      if (!g) g = std::make_unique<RankGraph>(t, leg.process);
      // The leg's collective on this rank: its first row.
      int64_t row = -1;
      if (!leg.comm.empty()) {
        for (const auto& [c, r] : g->collectives()) {
          const Collective& col = t.collectives[static_cast<size_t>(c)];
          if (col.comm_id == leg.comm && col.seq == leg.seq) {
            row = r;
            break;
          }
        }
      }
      if (leg.collective) {
        if (leg.to_ns > leg.from_ns) {
          out.push_back({leg.from_ns, leg.to_ns, PathPart::communication, row, leg.process});
        }
        continue;
      }
      Walk w(*g, leg.from_ns, false);
      w.segments = &out;
      if (row >= 0) {
        w.run(Walk::Node::op_start, row, t.activities.start[static_cast<size_t>(row)]);
      } else {
        walk_from_end(w, *g, leg.to_ns);
      }
    }
  }
  if (step != nullptr) step->resize(out.size(), paths.empty() ? 0 : paths.size() - 1);
  return out;
}

std::vector<Slack> slack(const Trace& t, int process, const Interval& window) {
  const RankGraph g(t, process);
  const Activities& a = t.activities;
  const int64_t ws = window.start, we = window.end;
  // Nodes: the rows and calls that end inside the window. An edge p -> x with `lag` bounds p's
  // latest finish: by x's latest start less lag, or (to_end) by x's latest finish less lag.
  struct Edge {
    int64_t from = 0;
    int64_t lag = 0;
    bool to_end = false;
  };
  const size_t rows = g.end() - g.begin(), n = rows + g.calls();
  auto row_node = [&](int64_t i) { return static_cast<size_t>(i) - g.begin(); };
  std::vector<uint8_t> in(n, 0);
  std::vector<int64_t> start(n, 0), end(n, 0);
  for (size_t i = g.begin(); i < g.end(); ++i) {
    start[i - g.begin()] = a.start[i];
    end[i - g.begin()] = a.end[i];
  }
  for (size_t k = 0; k < g.calls(); ++k) {
    start[rows + k] = g.call(static_cast<int64_t>(k)).start;
    end[rows + k] = g.call(static_cast<int64_t>(k)).end;
  }
  for (size_t x = 0; x < n; ++x) in[x] = end[x] > ws && end[x] <= we && start[x] <= end[x];
  std::vector<std::vector<Edge>> preds(n);
  std::vector<int64_t> succs(n, 0);
  auto edge = [&](size_t x, int64_t from, int64_t lag, bool to_end) {
    if (from < 0 || static_cast<size_t>(from) >= n || static_cast<size_t>(from) == x) return;
    if (!in[static_cast<size_t>(from)]) return;
    preds[x].push_back({from, lag, to_end});
    ++succs[static_cast<size_t>(from)];
  };
  for (size_t x = 0; x < n; ++x) {
    if (!in[x]) continue;
    if (x < rows) {
      // The binding dependency (the one the path's walk takes) keeps the time from its end to
      // this start (the gap the path calls idle, or the launch's latency: the path's); the
      // others bound only by this start.
      const auto i = static_cast<int64_t>(g.begin() + x);
      const int64_t p = g.prev_on_stream(i);
      const int64_t ep = p >= 0 ? a.end[static_cast<size_t>(p)] : INT64_MIN;
      const int64_t k = g.call_of(i);
      const int64_t lc = k >= 0 ? std::min(g.call(k).end, start[x]) : INT64_MIN;
      int64_t wf = g.waited_for(i);
      const int64_t ew = wf >= 0 ? a.end[static_cast<size_t>(wf)] : INT64_MIN;
      if (ew > start[x]) wf = -1;
      const int binding = wf >= 0 && ew > ep && ew >= lc ? 2 : (p >= 0 && ep >= lc ? 0 : 1);
      auto lag = [&](int which, int64_t from_end) {
        return which == binding ? std::max<int64_t>(0, start[x] - from_end)
                                : std::min<int64_t>(0, start[x] - from_end);
      };
      if (p >= 0) edge(x, static_cast<int64_t>(row_node(p)), lag(0, ep), false);
      if (wf >= 0) edge(x, static_cast<int64_t>(row_node(wf)), lag(2, ew), false);
      // A call that returned after its row started (a blocking one) keeps that overlap.
      if (k >= 0) edge(x, static_cast<int64_t>(rows) + k, lag(1, g.call(k).end), false);
    } else {
      const auto k = static_cast<int64_t>(x - rows);
      const HostCall& c = g.call(k);
      const int64_t before = g.host_before(c.start, k);
      if (before >= 0) {  // the host's own time between the calls is kept
        edge(x, static_cast<int64_t>(rows) + before, c.start - g.call(before).end, false);
      }
      int64_t waited = -1;
      if (c.row < 0) {
        waited = g.last_end_by(c.end);
      } else if (a.end[static_cast<size_t>(c.row)] <= c.end) {
        waited = c.row;
      }
      if (waited >= 0 && a.end[static_cast<size_t>(waited)] >= c.start) {
        edge(x, static_cast<int64_t>(row_node(waited)), c.end - a.end[static_cast<size_t>(waited)],
             true);
      }
    }
  }
  // A collective's own time: from the last arrival of the other ranks (Collective::gpu_start,
  // clocks aligned by Process::offset_ns) to its end; the time before, waiting for them, can
  // absorb a delay of the work before it.
  std::vector<int64_t> length(n);
  for (size_t x = 0; x < n; ++x) length[x] = end[x] - start[x];
  if (!g.collectives().empty()) {
    std::unordered_map<std::string, int64_t> others;  // comm \x1f seq -> latest other arrival
    auto key = [](const Collective& c) { return c.comm_id + '\x1f' + std::to_string(c.seq); };
    std::unordered_map<std::string, bool> wanted;
    for (const auto& [c, row] : g.collectives()) wanted[key(t.collectives[static_cast<size_t>(c)])];
    for (const Collective& c : t.collectives) {
      if (c.process == process || c.gpu_start < 0 || c.comm_id.empty()) continue;
      const auto q = static_cast<size_t>(c.process);
      if (q >= t.processes.size()) continue;
      const std::string k = key(c);
      if (wanted.count(k) == 0) continue;
      const int64_t at = c.gpu_start + t.processes[q].offset_ns;
      auto [it, fresh] = others.try_emplace(k, at);
      if (!fresh) it->second = std::max(it->second, at);
    }
    const int64_t own_offset = static_cast<size_t>(process) < t.processes.size()
                                   ? t.processes[static_cast<size_t>(process)].offset_ns
                                   : 0;
    for (const auto& [c, row] : g.collectives()) {
      auto it = others.find(key(t.collectives[static_cast<size_t>(c)]));
      if (it == others.end()) continue;
      const size_t x = row_node(row);
      const int64_t last = it->second - own_offset;
      length[x] = end[x] - std::clamp(last, start[x], end[x]);
    }
  }
  // Backward from the sinks (Kahn's order on the reversed edges); a hostile trace's cycle leaves
  // its nodes with what their processed successors gave. The window's end waits for what the
  // path's walk starts from (the GPU work reaching furthest toward it, or the host's last call:
  // the time after it is the host's own); anything else only for the window's end.
  std::vector<int64_t> latest(n);
  for (size_t x = 0; x < n; ++x) latest[x] = std::max(we, end[x]);
  {
    const int64_t op = g.at_end_of(we);
    const int64_t k = g.host_before(we, -1);
    const int64_t op_at = op >= 0 ? std::min(a.end[static_cast<size_t>(op)], we) : INT64_MIN;
    const int64_t call_at = k >= 0 ? g.call(k).end : INT64_MIN;
    const int64_t last = op_at >= call_at ? (op >= 0 ? static_cast<int64_t>(row_node(op)) : -1)
                                          : static_cast<int64_t>(rows) + k;
    if (last >= 0 && in[static_cast<size_t>(last)]) {
      latest[static_cast<size_t>(last)] = end[static_cast<size_t>(last)];
    }
  }
  std::vector<size_t> ready;
  for (size_t x = 0; x < n; ++x) {
    if (in[x] && succs[x] == 0) ready.push_back(x);
  }
  while (!ready.empty()) {
    const size_t x = ready.back();
    ready.pop_back();
    const int64_t ls = latest[x] - length[x];
    for (const Edge& e : preds[x]) {
      const auto p = static_cast<size_t>(e.from);
      latest[p] = std::min(latest[p], (e.to_end ? latest[x] : ls) - e.lag);
      if (--succs[p] == 0) ready.push_back(p);
    }
  }
  std::vector<Slack> out;
  for (size_t x = 0; x < n; ++x) {
    if (!in[x]) continue;
    Slack sl;
    sl.call = x >= rows;
    sl.row =
        sl.call ? g.call(static_cast<int64_t>(x - rows)).row : static_cast<int64_t>(g.begin() + x);
    sl.slack_ns = std::max<int64_t>(0, latest[x] - end[x]);
    out.push_back(sl);
  }
  return out;
}

}  // namespace c3::analyzer
