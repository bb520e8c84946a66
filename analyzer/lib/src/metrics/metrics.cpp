#include "c3/analyzer/metrics/metrics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>

#include "c3/common/nccl_types.h"
#include "time_limits.h"

namespace c3::analyzer {
namespace {

constexpr int kComp = static_cast<int>(Class::compute);
constexpr int kComm = static_cast<int>(Class::communication);
constexpr int kMem = static_cast<int>(Class::memory);
constexpr int kOther = static_cast<int>(Class::other);

// Rows [begin, end) of the activities in a scope: contiguous, since rows are sorted by
// (process, device, start).
struct Rows {
  size_t begin = 0, end = 0;
};

Rows rows_of(const Activities& a, int process, int device) {
  auto lo = std::lower_bound(a.process.begin(), a.process.end(), static_cast<int16_t>(process));
  auto hi = std::upper_bound(a.process.begin(), a.process.end(), static_cast<int16_t>(process));
  Rows r{static_cast<size_t>(lo - a.process.begin()), static_cast<size_t>(hi - a.process.begin())};
  if (device < 0) return r;
  auto dlo = std::lower_bound(a.device.begin() + static_cast<std::ptrdiff_t>(r.begin),
                              a.device.begin() + static_cast<std::ptrdiff_t>(r.end),
                              static_cast<int16_t>(device));
  auto dhi = std::upper_bound(dlo, a.device.begin() + static_cast<std::ptrdiff_t>(r.end),
                              static_cast<int16_t>(device));
  return {static_cast<size_t>(dlo - a.device.begin()), static_cast<size_t>(dhi - a.device.begin())};
}

bool single_device(const Activities& a, Rows r) {
  return r.begin == r.end || a.device[r.begin] == a.device[r.end - 1];
}

// Per-class unions of the rows, clipped to the window. One device's rows are sorted by start,
// so each class's union is built as the rows stream by; several devices' rows are collected
// and sorted.
std::array<Intervals, kClasses> class_intervals(const Activities& a,
                                                const std::vector<Rows>& ranges,
                                                const Intervals* window, int64_t* count) {
  std::array<Intervals, kClasses> by;
  *count = 0;
  const bool sorted = ranges.size() == 1 && single_device(a, ranges.front());
  for (const Rows& r : ranges) {
    for (size_t i = r.begin; i < r.end; ++i) {
      const Interval x{a.start[i], a.end[i]};
      // With a window, a row counts if any of it is inside (it is clipped below).
      if (window && overlap_with(x, *window) <= 0) continue;
      ++*count;
      Intervals& v = by[static_cast<size_t>(a.cls[i])];
      if (!sorted) {
        v.push_back(x);
      } else if (x.end > x.start) {
        if (!v.empty() && x.start <= v.back().end) {
          v.back().end = std::max(v.back().end, x.end);
        } else {
          v.push_back(x);
        }
      }
    }
  }
  for (auto& v : by) {
    if (!sorted) v = union_of(std::move(v));
    if (window) v = intersect(v, *window);
  }
  return by;
}

// Walks the boundaries of the class unions in time order (a 4-way merge, no allocation),
// calling fn(from, to, mask) for each stretch where the set of active classes is `mask` != 0.
template <class F>
void sweep(const std::array<Intervals, kClasses>& u, F&& fn) {
  std::array<size_t, kClasses> at{};
  int mask = 0;
  int64_t prev = 0;
  for (;;) {
    // Next boundary: the earliest start (if inactive) or end (if active) among the classes.
    int64_t next = INT64_MAX;
    for (int c = 0; c < kClasses; ++c) {
      const auto& v = u[static_cast<size_t>(c)];
      if (at[static_cast<size_t>(c)] >= v.size()) continue;
      const Interval& x = v[at[static_cast<size_t>(c)]];
      next = std::min(next, (mask >> c) & 1 ? x.end : x.start);
    }
    if (next == INT64_MAX) return;
    if (mask && next > prev) fn(prev, next, mask);
    for (int c = 0; c < kClasses; ++c) {
      const auto& v = u[static_cast<size_t>(c)];
      size_t& k = at[static_cast<size_t>(c)];
      if (k >= v.size()) continue;
      if (((mask >> c) & 1) && v[k].end == next) {
        mask &= ~(1 << c);
        ++k;
      } else if (!((mask >> c) & 1) && v[k].start == next) {
        mask |= 1 << c;
      }
    }
    prev = next;
  }
}

Breakdown from_unions(const std::array<Intervals, kClasses>& u, int64_t count) {
  Breakdown b;
  b.activities = count;
  for (int c = 0; c < kClasses; ++c)
    b.time[static_cast<size_t>(c)] = length(u[static_cast<size_t>(c)]);
  bool first = true;
  const int comp = 1 << kComp, comm = 1 << kComm, mem = 1 << kMem, other = 1 << kOther;
  sweep(u, [&](int64_t from, int64_t to, int mask) {
    const int64_t d = to - from;
    if (first) {
      b.first = from;
      first = false;
    }
    b.last = to;
    b.busy += d;
    b.by_mask[static_cast<size_t>(mask)] += d;
    if ((mask & comm) && (mask & comp)) b.overlap += d;
    if ((mask & mem) && !(mask & (comp | comm))) b.exposed_memcpy += d;
    if ((mask & other) && !(mask & (comp | comm | mem))) b.exposed_other += d;
  });
  if (first) return b;
  b.span = b.last - b.first;
  b.idle = b.span - b.busy;
  b.overlap_pct =
      b.comm() > 0 ? 100.0 * static_cast<double>(b.overlap) / static_cast<double>(b.comm()) : 0.0;
  b.exposed_comm = b.comm() - b.overlap;
  b.non_compute = b.span - b.compute() - b.idle;
  return b;
}

}  // namespace

void Breakdown::add(const Breakdown& o) {
  // Checked: sums over ranks read from summaries (std::overflow_error past int64).
  checked_add(activities, o.activities);
  if (o.span > 0) {
    first = span > 0 ? std::min(first, o.first) : o.first;
    last = span > 0 ? std::max(last, o.last) : o.last;
  }
  checked_add(span, o.span);
  checked_add(busy, o.busy);
  checked_add(idle, o.idle);
  for (size_t i = 0; i < time.size(); ++i) checked_add(time[i], o.time[i]);
  checked_add(overlap, o.overlap);
  checked_add(exposed_comm, o.exposed_comm);
  checked_add(exposed_memcpy, o.exposed_memcpy);
  checked_add(exposed_other, o.exposed_other);
  checked_add(non_compute, o.non_compute);
  for (size_t i = 0; i < by_mask.size(); ++i) checked_add(by_mask[i], o.by_mask[i]);
  overlap_pct =
      comm() > 0 ? 100.0 * static_cast<double>(overlap) / static_cast<double>(comm()) : 0.0;
}

std::string mask_name(int mask) {
  static const char* const names[kClasses] = {"COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER"};
  std::string s;
  for (int c = 0; c < kClasses; ++c) {
    if (mask & (1 << c)) s += (s.empty() ? "" : "+") + std::string(names[c]);
  }
  return s.empty() ? "IDLE" : s;
}

Breakdown breakdown(const Trace& t, Scope scope, const Intervals* window) {
  if (scope.process < 0) return overall(t, window);
  const Rows r = rows_of(t.activities, scope.process, scope.device);
  int64_t count = 0;
  auto u = class_intervals(t.activities, {r}, window, &count);
  return from_unions(u, count);
}

void span_over(Breakdown& b, const Intervals& window) {
  if (window.empty()) return;
  b.first = window.front().start;
  b.last = window.back().end;
  b.span = length(window);
  b.idle = b.span - b.busy;
  b.non_compute = b.span - b.compute() - b.idle;
}

std::vector<Breakdown> window_breakdowns(const Trace& t, int process,
                                         const std::vector<Interval>& windows) {
  const Activities& a = t.activities;
  const Rows all = rows_of(a, process, -1);
  // Per device: its rows (sorted by start) and their longest duration, which bounds how early
  // a row overlapping a window can start.
  struct DeviceRows {
    Rows rows;
    int64_t longest = 0;
  };
  std::vector<DeviceRows> devices;
  for (size_t i = all.begin; i < all.end;) {
    const Rows r = rows_of(a, process, a.device[i]);
    DeviceRows d{r, 0};
    for (size_t k = r.begin; k < r.end; ++k) d.longest = std::max(d.longest, a.end[k] - a.start[k]);
    devices.push_back(d);
    i = r.end;
  }
  std::vector<Breakdown> out;
  out.reserve(windows.size());
  std::vector<Rows> ranges;
  for (const Interval& w : windows) {
    ranges.clear();
    for (const DeviceRows& d : devices) {
      auto first = a.start.begin() + static_cast<std::ptrdiff_t>(d.rows.begin);
      auto last = a.start.begin() + static_cast<std::ptrdiff_t>(d.rows.end);
      const int64_t from = w.start < INT64_MIN + d.longest ? INT64_MIN : w.start - d.longest;
      const auto lo = std::lower_bound(first, last, from);
      const auto hi = std::lower_bound(lo, last, w.end);
      ranges.push_back(
          {static_cast<size_t>(lo - a.start.begin()), static_cast<size_t>(hi - a.start.begin())});
    }
    // One device: its rows stream in start order; several: collected and sorted, as
    // breakdown() does (the same rows either way, so the same numbers).
    if (ranges.size() > 1) {
      ranges.erase(std::remove_if(ranges.begin(), ranges.end(),
                                  [](const Rows& r) { return r.begin == r.end; }),
                   ranges.end());
    }
    const Intervals win{w};
    int64_t count = 0;
    auto u = class_intervals(a, ranges, &win, &count);
    out.push_back(from_unions(u, count));
  }
  return out;
}

Breakdown overall(const Trace& t, const Intervals* window) {
  Breakdown b;
  for (size_t p = 0; p < t.processes.size(); ++p)
    b.add(breakdown(t, {static_cast<int>(p), -1}, window));
  return b;
}

std::vector<CommOverlap> comm_overlap(const Trace& t, Scope scope, const Intervals* window) {
  const Activities& a = t.activities;
  std::vector<CommOverlap> out;
  std::vector<int> processes;
  if (scope.process >= 0) {
    processes.push_back(scope.process);
  } else {
    for (size_t p = 0; p < t.processes.size(); ++p) processes.push_back(static_cast<int>(p));
  }
  for (int p : processes) {
    const Rows all = rows_of(a, p, -1);
    // One device at a time: compute on the same device.
    for (size_t i = all.begin; i < all.end;) {
      const int dev = a.device[i];
      const Rows r = rows_of(a, p, dev);
      i = r.end;
      if (scope.device >= 0 && dev != scope.device) continue;
      Intervals comp;
      for (size_t k = r.begin; k < r.end; ++k) {
        if (a.cls[k] == Class::compute) comp.push_back({a.start[k], a.end[k]});
      }
      comp = union_sorted(comp);
      for (size_t k = r.begin; k < r.end; ++k) {
        if (a.cls[k] != Class::communication) continue;
        Interval x{a.start[k], a.end[k]};
        if (window && overlap_with(x, *window) <= 0) continue;
        CommOverlap c;
        c.activity = k;
        c.duration = x.length();
        c.overlapped = overlap_with(x, comp);
        out.push_back(c);
      }
    }
  }
  return out;
}

std::string collective_op(const Trace& t, size_t i) {
  const Activities& a = t.activities;
  if (a.collective[i] >= 0) {
    const std::string& op = t.collectives[static_cast<size_t>(a.collective[i])].op;
    if (!op.empty()) return op;
  }
  if (a.name[i] < 0) return "unknown";
  const std::string& n = t.names[static_cast<size_t>(a.name[i])];
  // ncclDevKernel_AllReduce_Sum_f32_RING_LL(...), ncclKernel_AllGather_RING_LL_Sum_int8_t(...),
  // ncclDevKernel_SendRecv(...), ncclDevKernel_Generic_1(...)
  for (const char* prefix : {"ncclDevKernel_", "ncclKernel_", "rcclKernel_"}) {
    if (n.rfind(prefix, 0) == 0) {
      const size_t b = std::char_traits<char>::length(prefix);
      size_t e = n.find_first_of("_(", b);
      if (e == std::string::npos) e = n.size();
      return n.substr(b, e - b);
    }
  }
  return "unknown";
}

double busbw_factor(const std::string& op, int n) {
  return common::nccl::busbw_factor(common::nccl::collective_from_name(op), n);
}

int64_t nccl_tests_size(const std::string& op, int64_t bytes, int nranks) {
  return common::nccl::nccl_tests_bytes(common::nccl::collective_from_name(op), bytes, nranks);
}

int64_t size_bucket_of(int64_t bytes) {
  // bit_floor on the unsigned value: no doubling loop to overflow at 2^62 (issue 24).
  return bytes <= 0 ? 0 : static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(bytes)));
}

int64_t size_bucket_end(int64_t bucket) {
  if (bucket <= 0) return 0;
  return bucket > std::numeric_limits<int64_t>::max() / 2 ? std::numeric_limits<int64_t>::max()
                                                          : bucket * 2;
}

std::vector<CollectiveStat> collective_stats(const Trace& t, const std::vector<CommOverlap>& rows) {
  std::map<std::pair<std::string, int64_t>, CollectiveStat> groups;
  for (const CommOverlap& r : rows) {
    const std::string op = collective_op(t, r.activity);
    int64_t size = 0;
    int nranks = 0;
    const int32_t ci = t.activities.collective[r.activity];
    if (ci >= 0) {
      const Collective& c = t.collectives[static_cast<size_t>(ci)];
      nranks = c.nranks;
      size = nccl_tests_size(op, c.bytes, nranks);
    }
    const int64_t bucket = size_bucket_of(size);
    CollectiveStat& g = groups[{op, bucket}];
    g.op = op;
    g.bucket = bucket;
    ++g.count;
    g.total_ns += r.duration;
    g.overlap_pct_sum += r.pct();
    g.duration.add(static_cast<double>(r.duration));
    if (size > 0 && r.duration > 0) {
      const double alg = static_cast<double>(size) / (static_cast<double>(r.duration) * 1e-9);
      g.algbw.add(alg);
      g.busbw.add(alg * busbw_factor(op, nranks));
    }
  }
  std::vector<CollectiveStat> out;
  out.reserve(groups.size());
  for (auto& [k, g] : groups) out.push_back(std::move(g));
  return out;
}

void CollectiveStat::merge(const CollectiveStat& o) {
  checked_add(count, o.count);
  checked_add(total_ns, o.total_ns);
  overlap_pct_sum += o.overlap_pct_sum;
  algbw.merge(o.algbw);
  busbw.merge(o.busbw);
  duration.merge(o.duration);
}

std::vector<CollectiveGroup> collective_groups(const std::vector<CollectiveStat>& stats) {
  std::vector<CollectiveGroup> out;
  out.reserve(stats.size());
  for (const CollectiveStat& g : stats) {
    CollectiveGroup cg;
    cg.op = g.op;
    cg.bucket_lo = g.bucket;
    cg.bucket_hi = size_bucket_end(g.bucket);
    cg.count = g.count;
    cg.total_ns = g.total_ns;
    cg.mean_overlap_pct = g.count ? g.overlap_pct_sum / static_cast<double>(g.count) : 0;
    cg.median_algbw = g.algbw.median();
    cg.median_busbw = g.busbw.median();
    out.push_back(std::move(cg));
  }
  return out;
}

std::vector<CollectiveGroup> collective_summary(const Trace& t,
                                                const std::vector<CommOverlap>& rows) {
  return collective_groups(collective_stats(t, rows));
}

std::string normalized_kernel_name(std::string_view name) {
  // NCCL: ncclKernel_<Op>_... (before 2.19) and ncclDevKernel_<Op>_... (2.19 on).
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    const size_t at = name.find(prefix);
    if (at == std::string_view::npos) continue;
    std::string_view rest = name.substr(at + prefix.size());
    const size_t end = rest.find_first_of("_(<");
    return "nccl " + std::string(rest.substr(0, end));
  }
  std::string out;
  out.reserve(name.size());
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') {
      // "operator<" and "operator<<" are names, not template arguments.
      if (depth == 0 && std::string_view(out).ends_with("operator")) {
        out += c;
        continue;
      }
      if (depth++ == 0) out += "<>";
      continue;
    }
    if (c == '>' && depth > 0) {
      --depth;
      continue;
    }
    if (depth > 0) continue;
    if (c == '(') {
      // The parameter list ends the name ("(anonymous namespace)::" does not).
      if (name.substr(i).starts_with("(anonymous namespace)")) {
        out += "(anonymous namespace)";
        i += 20;
        continue;
      }
      break;
    }
    if (c == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  // A return type before the qualified name ("void ns::kernel<>").
  for (std::string_view ret : {"void ", "static void ", "__global__ void "}) {
    if (std::string_view(out).starts_with(ret)) out.erase(0, ret.size());
  }
  if (out.empty()) return std::string(name);
  return out;
}

void KernelStat::merge(const KernelStat& o) {
  count += o.count;
  total_ns += o.total_ns;
  duration.merge(o.duration);
}

std::vector<KernelStat> kernel_stats(const Trace& t, int process, const Intervals* window) {
  const Activities& a = t.activities;
  // Per name id first (names repeat), then merged under the normalized names.
  std::map<std::pair<int32_t, Class>, KernelStat> by_id;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.process[i] != process || a.kind[i] != Kind::kernel) continue;
    if (window != nullptr) {
      const auto it = std::upper_bound(window->begin(), window->end(), a.start[i],
                                       [](int64_t s, const Interval& w) { return s < w.start; });
      if (it == window->begin() || std::prev(it)->end <= a.start[i]) continue;
    }
    KernelStat& k = by_id[{a.name[i], a.cls[i]}];
    const int64_t d = a.end[i] - a.start[i];
    ++k.count;
    k.total_ns += d;
    k.duration.add(static_cast<double>(d));
  }
  std::map<std::pair<std::string, Class>, KernelStat> merged;
  for (auto& [key, k] : by_id) {
    const auto id = static_cast<size_t>(key.first);
    std::string name =
        normalized_kernel_name(id < t.names.size() ? std::string_view(t.names[id]) : "?");
    auto [it, fresh] = merged.try_emplace({name, key.second});
    if (fresh) {
      it->second = std::move(k);
      it->second.name = std::move(name);
      it->second.cls = key.second;
    } else {
      it->second.merge(k);
    }
  }
  std::vector<KernelStat> out;
  out.reserve(merged.size());
  for (auto& [key, k] : merged) out.push_back(std::move(k));
  return out;
}

}  // namespace c3::analyzer
