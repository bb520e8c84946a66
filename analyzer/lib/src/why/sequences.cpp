#include "c3/analyzer/why/sequences.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "c3/analyzer/metrics/metrics.h"
#include "time_limits.h"

namespace c3::analyzer {
namespace {

void add_sat(int64_t& sum, int64_t v) {
  if (__builtin_add_overflow(sum, v, &sum)) sum = INT64_MAX;
}

using Key = std::array<int32_t, kMaxSequenceLength>;  // normalized name indices, -1 padded

struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int32_t v : k) {
      h ^= static_cast<uint64_t>(static_cast<uint32_t>(v)) + 0x9E3779B97F4A7C15ULL + (h << 6) +
           (h >> 2);
    }
    return static_cast<size_t>(h);
  }
};

struct Stat {
  int64_t count = 0, span = 0, gpu = 0;
};

// The last `length` kernels of one stream: their normalized names and times (kept here, so an
// occurrence reads no row again).
struct Window {
  std::array<int32_t, kMaxSequenceLength> norm{};
  std::array<int64_t, kMaxSequenceLength> start{}, end{};
  size_t n = 0, next = 0;  // filled slots, where the next goes
};

}  // namespace

void KernelSequence::merge(const KernelSequence& o) {
  add_sat(count, o.count);
  add_sat(span_ns, o.span_ns);
  add_sat(gpu_ns, o.gpu_ns);
}

void sort_sequences(std::vector<KernelSequence>& v) {
  std::sort(v.begin(), v.end(), [](const KernelSequence& x, const KernelSequence& y) {
    if (x.count != y.count) return x.count > y.count;
    if (x.gpu_ns != y.gpu_ns) return x.gpu_ns > y.gpu_ns;
    return x.names < y.names;
  });
}

Sequences kernel_sequences(const Trace& t, int process, const SequenceOptions& o,
                           const Intervals* window, size_t keep) {
  Sequences out;
  const auto len = static_cast<size_t>(std::clamp(o.length, 2, kMaxSequenceLength));
  const Activities& a = t.activities;
  // Normalized names, each computed once per name index.
  std::vector<int32_t> norm(t.names.size(), -1);
  std::vector<std::string> names;
  std::unordered_map<std::string, int32_t> name_index;
  auto norm_of = [&](int32_t nm) {
    if (nm < 0 || static_cast<size_t>(nm) >= t.names.size()) return int32_t{-2};
    int32_t& n = norm[static_cast<size_t>(nm)];
    if (n < 0) {
      std::string s = normalized_kernel_name(t.names[static_cast<size_t>(nm)]);
      auto [it, fresh] = name_index.try_emplace(s, static_cast<int32_t>(names.size()));
      if (fresh) names.push_back(std::move(s));
      n = it->second;
    }
    return n;
  };
  const auto p = static_cast<int16_t>(process);
  const auto lo = std::lower_bound(a.process.begin(), a.process.end(), p);
  const auto hi = std::upper_bound(lo, a.process.end(), p);
  std::unordered_map<Key, Stat, KeyHash> stats;
  // A process has few streams: a list, searched from the last one used (a hashed index once
  // there are many, as a hostile trace may have).
  std::vector<std::pair<std::pair<int16_t, int32_t>, Window>> streams;
  std::unordered_map<uint64_t, size_t> stream_index;
  size_t last_stream = 0;
  for (auto i = static_cast<size_t>(lo - a.process.begin());
       i < static_cast<size_t>(hi - a.process.begin()); ++i) {
    if (a.kind[i] != Kind::kernel) continue;
    if (window != nullptr) {
      const auto it = std::upper_bound(window->begin(), window->end(), a.start[i],
                                       [](int64_t s, const Interval& w) { return s < w.start; });
      if (it == window->begin() || std::prev(it)->end <= a.start[i]) continue;
    }
    const std::pair<int16_t, int32_t> sk{a.device[i], a.stream[i]};
    if (last_stream >= streams.size() || streams[last_stream].first != sk) {
      const uint64_t key = (static_cast<uint64_t>(static_cast<uint16_t>(sk.first)) << 32) |
                           static_cast<uint32_t>(sk.second);
      if (streams.size() > 16) {
        auto [it, fresh] = stream_index.try_emplace(key, streams.size());
        if (fresh) streams.emplace_back(sk, Window{});
        last_stream = it->second;
      } else {
        last_stream = 0;
        while (last_stream < streams.size() && streams[last_stream].first != sk) ++last_stream;
        if (last_stream == streams.size()) streams.emplace_back(sk, Window{});
        if (streams.size() > 16) {  // from now on hashed: index every stream so far
          for (size_t k = 0; k < streams.size(); ++k) {
            const auto& f = streams[k].first;
            stream_index.emplace((static_cast<uint64_t>(static_cast<uint16_t>(f.first)) << 32) |
                                     static_cast<uint32_t>(f.second),
                                 k);
          }
        }
      }
    }
    Window& w = streams[last_stream].second;
    w.norm[w.next] = norm_of(a.name[i]);
    w.start[w.next] = a.start[i];
    w.end[w.next] = a.end[i];
    w.next = (w.next + 1) % len;
    if (w.n < len) ++w.n;
    if (w.n < len) continue;
    // The window oldest first: the slot to be written next holds the oldest.
    Key key;
    key.fill(-1);
    int64_t first = INT64_MAX, last = INT64_MIN, gpu = 0;
    for (size_t k = 0; k < len; ++k) {
      const size_t r = (w.next + k) % len;
      key[k] = w.norm[r];
      first = std::min(first, w.start[r]);
      last = std::max(last, w.end[r]);
      add_sat(gpu, w.end[r] - w.start[r]);
    }
    auto it = stats.find(key);
    if (it == stats.end()) {
      if (stats.size() >= kMaxDistinctSequences) {
        ++out.uncounted;
        continue;
      }
      it = stats.emplace(key, Stat{}).first;
    }
    ++it->second.count;
    add_capped(it->second.span, last - first);
    add_capped(it->second.gpu, gpu);
    ++out.occurrences;
  }
  // The most frequent `keep`, named.
  std::vector<std::pair<const Key*, const Stat*>> all;
  all.reserve(stats.size());
  for (const auto& [k, s] : stats) all.emplace_back(&k, &s);
  static const std::string unknown = "?";
  auto name_of = [&](int32_t n) -> const std::string& {
    return n >= 0 ? names[static_cast<size_t>(n)] : unknown;
  };
  auto before = [&](const std::pair<const Key*, const Stat*>& x,
                    const std::pair<const Key*, const Stat*>& y) {
    if (x.second->count != y.second->count) return x.second->count > y.second->count;
    if (x.second->gpu != y.second->gpu) return x.second->gpu > y.second->gpu;
    for (size_t k = 0; k < len; ++k) {
      const std::string_view a1 = name_of((*x.first)[k]), b1 = name_of((*y.first)[k]);
      if (a1 != b1) return a1 < b1;
    }
    return false;
  };
  const size_t n = std::min(keep, all.size());
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(), before);
  out.top.reserve(n);
  for (size_t k = 0; k < n; ++k) {
    KernelSequence s;
    s.names.reserve(len);
    for (size_t j = 0; j < len; ++j) s.names.push_back(name_of((*all[k].first)[j]));
    s.count = all[k].second->count;
    s.span_ns = all[k].second->span;
    s.gpu_ns = all[k].second->gpu;
    out.top.push_back(std::move(s));
  }
  return out;
}

std::vector<uint8_t> sequence_members(const Trace& t, const std::vector<std::string>& names,
                                      int process) {
  const Activities& a = t.activities;
  std::vector<uint8_t> out(a.size(), 0);
  const size_t len = names.size();
  if (len < 2 || len > static_cast<size_t>(kMaxSequenceLength)) return out;
  // For each interned name, the positions of the sequence its normalized form takes (a bit
  // each): a name is normalized once however many kernels carry it.
  std::vector<uint8_t> at(t.names.size(), 0);
  for (size_t n = 0; n < t.names.size(); ++n) {
    const std::string norm = normalized_kernel_name(t.names[n]);
    for (size_t k = 0; k < len; ++k) {
      if (norm == names[k]) at[n] = static_cast<uint8_t>(at[n] | (1u << k));
    }
  }
  // The last `len` kernels of each stream, by (process, device, stream).
  struct Recent {
    std::array<size_t, kMaxSequenceLength> rows{};
    size_t n = 0, next = 0;
  };
  std::unordered_map<uint64_t, Recent> streams;
  uint64_t last_key = UINT64_MAX;
  Recent* last = nullptr;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.kind[i] != Kind::kernel || (process >= 0 && a.process[i] != process)) continue;
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint16_t>(a.process[i])) << 48) |
                         (static_cast<uint64_t>(static_cast<uint16_t>(a.device[i])) << 32) |
                         static_cast<uint32_t>(a.stream[i]);
    if (last == nullptr || key != last_key) {
      last = &streams[key];
      last_key = key;
    }
    Recent& w = *last;
    w.rows[w.next] = i;
    w.next = (w.next + 1) % len;
    if (w.n < len) ++w.n;
    if (w.n < len) continue;
    bool match = true;
    for (size_t k = 0; k < len && match; ++k) {
      const int32_t nm = a.name[w.rows[(w.next + k) % len]];
      match = nm >= 0 && static_cast<size_t>(nm) < at.size() &&
              (at[static_cast<size_t>(nm)] & (1u << k)) != 0;
    }
    if (!match) continue;
    for (size_t k = 0; k < len; ++k) out[w.rows[k]] = 1;
  }
  return out;
}

}  // namespace c3::analyzer
