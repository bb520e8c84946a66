#include "c3/analyzer/metrics/interference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/metrics/metrics.h"
#include "c3/common/units.h"
#include "time_limits.h"

namespace c3::analyzer {
namespace {

// Rows of one (process, device), contiguous (rows are sorted by process, device, start).
template <class F>
void for_each_device(const Activities& a, F&& fn) {
  size_t i = 0;
  while (i < a.size()) {
    size_t j = i;
    while (j < a.size() && a.process[j] == a.process[i] && a.device[j] == a.device[i]) ++j;
    fn(i, j);
    i = j;
  }
}

}  // namespace

std::string size_bucket(int64_t bytes) {
  const int64_t lo = size_bucket_of(bytes);
  if (lo == 0) return "size ?";
  // The top bucket's end, 2^63, is past int64: 2^63 / 2^40 T.
  const int64_t end = size_bucket_end(lo);
  const std::string hi = end == std::numeric_limits<int64_t>::max()
                             ? std::to_string((uint64_t{1} << 63) >> 40) + "T"
                             : common::format_bytes(end, common::BytesStyle::compact_b);
  return common::format_bytes(lo, common::BytesStyle::compact_b) + ".." + hi;
}

std::string interference_signature(const Trace& t, size_t i) {
  const Activities& a = t.activities;
  if (a.cls[i] == Class::compute) {
    std::string sig = a.name[i] >= 0 ? t.names[static_cast<size_t>(a.name[i])] : std::string("?");
    sig += " <<<";
    sig += std::to_string(t.shape_of(i).grid);
    sig += ", ";
    sig += std::to_string(t.shape_of(i).block);
    sig += ">>>";
    return sig;
  }
  if (a.cls[i] != Class::communication) return {};
  int64_t bytes = 0;
  const std::string op = collective_op(t, i);
  if (a.collective[i] >= 0) {
    const Collective& col = t.collectives[static_cast<size_t>(a.collective[i])];
    bytes = nccl_tests_size(op, col.bytes, col.nranks);
  }
  return op + " " + size_bucket(bytes);
}

void InterferenceStat::merge(const InterferenceStat& o) {
  alone.merge(o.alone);
  overlapped.merge(o.overlapped);
  checked_add(partial, o.partial);
  checked_add(total_ns, o.total_ns);
}

std::vector<InterferenceStat> interference_stats(const Trace& t, const InterferenceOptions& o,
                                                 int process) {
  if (!t.pending_shapes.empty()) {
    throw std::logic_error("interference: kernel shapes are still pending (load_kernel_shapes)");
  }
  const Activities& a = t.activities;
  // Grouped by a small key, the signature string made once per group: compute kernels by
  // (name, grid, block), communication by (op, size bucket).
  struct Key {
    int32_t name;  // compute: name id; communication: op id
    int64_t x, y;  // compute: grid, block; communication: bucket bytes (S), -1
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const {
      const uint64_t h = (static_cast<uint64_t>(static_cast<uint32_t>(k.name)) << 40) ^
                         (static_cast<uint64_t>(k.x) << 20) ^ static_cast<uint64_t>(k.y);
      return std::hash<uint64_t>()(h);
    }
  };
  std::unordered_map<Key, size_t, KeyHash> index;
  std::vector<InterferenceStat> stats;
  std::vector<std::string> ops;
  std::unordered_map<std::string, int32_t> op_ids;
  std::unordered_map<int32_t, int32_t> name_op;  // unlinked kernels: op parsed from the name once
  auto op_id = [&](size_t i) {
    auto id_of = [&](const std::string& op) {
      auto [it, fresh] = op_ids.emplace(op, static_cast<int32_t>(ops.size()));
      if (fresh) ops.push_back(op);
      return it->second;
    };
    if (a.collective[i] >= 0) return id_of(collective_op(t, i));
    auto it = name_op.find(a.name[i]);
    if (it == name_op.end()) it = name_op.emplace(a.name[i], id_of(collective_op(t, i))).first;
    return it->second;
  };
  for_each_device(a, [&](size_t b, size_t e) {
    if (process >= 0 && a.process[b] != process) return;
    Intervals comp, comm;
    for (size_t i = b; i < e; ++i) {
      if (a.cls[i] == Class::compute) comp.push_back({a.start[i], a.end[i]});
      if (a.cls[i] == Class::communication) comm.push_back({a.start[i], a.end[i]});
    }
    comp = union_sorted(comp);
    comm = union_sorted(comm);
    // The overlap cursors only move forward: rows are sorted by start.
    size_t ci = 0, mi = 0;
    for (size_t i = b; i < e; ++i) {
      const Class c = a.cls[i];
      if (c != Class::compute && c != Class::communication) continue;
      const int64_t dur = a.end[i] - a.start[i];
      if (dur <= 0) continue;
      Key k{};
      if (c == Class::compute) {
        const KernelShape& sh = t.shape_of(i);
        k = {a.name[i], sh.grid, sh.block};
      } else {
        const int32_t op = op_id(i);
        int64_t bytes = 0;
        if (a.collective[i] >= 0) {
          const Collective& col = t.collectives[static_cast<size_t>(a.collective[i])];
          bytes = nccl_tests_size(ops[static_cast<size_t>(op)], col.bytes, col.nranks);
        }
        k = {op, size_bucket_of(bytes), -1};
      }
      auto [it, fresh] = index.emplace(k, stats.size());
      if (fresh) {
        InterferenceStat st;
        st.signature = interference_signature(t, i);
        st.cls = c;
        stats.push_back(std::move(st));
      }
      InterferenceStat& s = stats[it->second];
      s.total_ns += dur;
      const Intervals& other = c == Class::compute ? comm : comp;
      size_t& cur = c == Class::compute ? mi : ci;
      while (cur < other.size() && other[cur].end <= a.start[i]) ++cur;
      int64_t ov = 0;
      for (size_t j = cur; j < other.size() && other[j].start < a.end[i]; ++j)
        ov += std::min(other[j].end, a.end[i]) - std::max(other[j].start, a.start[i]);
      if (ov == 0) {
        s.alone.add(static_cast<double>(dur));
      } else if (static_cast<double>(ov) >= o.overlap_fraction * static_cast<double>(dur)) {
        s.overlapped.add(static_cast<double>(dur));
      } else {
        ++s.partial;
      }
    }
  });
  std::sort(stats.begin(), stats.end(),
            [](const auto& x, const auto& y) { return x.signature < y.signature; });
  return stats;
}

std::vector<InterferenceRow> interference_rows(const std::vector<InterferenceStat>& stats,
                                               const InterferenceOptions& o) {
  std::vector<InterferenceRow> out;
  out.reserve(stats.size());
  for (const InterferenceStat& s : stats) {
    InterferenceRow r;
    r.signature = s.signature;
    r.cls = s.cls;
    r.alone = s.alone.count();
    r.overlapped = s.overlapped.count();
    r.partial = s.partial;
    r.total_ns = s.total_ns;
    r.median_alone_ns = s.alone.median();
    r.median_overlapped_ns = s.overlapped.median();
    r.enough = r.alone >= o.min_samples && r.overlapped >= o.min_samples;
    if (s.cls == Class::communication) {
      // The signature is "OP SIZE" (interference_signature).
      const std::string op = s.signature.substr(0, s.signature.find(' '));
      r.peer_wait = op == "Send" || op == "Recv" || op == "SendRecv"
                        ? InterferenceRow::PeerWait::point_to_point
                        : InterferenceRow::PeerWait::collective;
    }
    if (r.enough && r.median_alone_ns > 0) {
      r.slowdown = r.median_overlapped_ns / r.median_alone_ns - 1;
      std::tie(r.ci_low, r.ci_high) = slowdown_interval(s.alone, s.overlapped);
    }
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    if (x.total_ns != y.total_ns) return x.total_ns > y.total_ns;
    return x.signature < y.signature;
  });
  return out;
}

std::vector<InterferenceRow> interference(const Trace& t, const InterferenceOptions& o) {
  return interference_rows(interference_stats(t, o), o);
}

Occupancy occupancy(const Device& d, uint32_t grid, uint32_t block, int registers, int64_t shared) {
  Occupancy oc;
  if (d.sm_count <= 0 || d.max_threads_per_sm <= 0 || block == 0 || grid == 0) return oc;
  const int64_t warps = (static_cast<int64_t>(block) + 31) / 32;
  int64_t blocks = d.max_blocks_per_sm > 0 ? d.max_blocks_per_sm : 32;
  blocks = std::min<int64_t>(blocks, d.max_threads_per_sm / (warps * 32));
  if (registers > 0 && d.max_registers_per_sm > 0) {
    // Registers are allocated per warp in units of 256.
    const int64_t per_warp = (static_cast<int64_t>(registers) * 32 + 255) / 256 * 256;
    const int64_t warps_fit = d.max_registers_per_sm / per_warp;
    blocks = std::min<int64_t>(blocks, warps_fit / warps);
  }
  if (shared > 0 && d.max_shared_per_sm > 0)
    blocks = std::min<int64_t>(blocks, d.max_shared_per_sm / shared);
  oc.blocks_per_sm = static_cast<int>(std::max<int64_t>(blocks, 0));
  if (oc.blocks_per_sm == 0) {
    oc.sm_demand = 1;  // does not fit: it cannot share an SM with anything
    return oc;
  }
  oc.sm_demand = std::min(1.0, static_cast<double>(grid) / (static_cast<double>(oc.blocks_per_sm) *
                                                            static_cast<double>(d.sm_count)));
  return oc;
}

std::vector<Contention> contention(const Trace& t) {
  const Activities& a = t.activities;
  std::vector<Contention> out;
  for_each_device(a, [&](size_t b, size_t e) {
    Contention c;
    c.process = a.process[b];
    c.device = a.device[b];
    const Device* dev = t.device(a.process[b], a.device[b]);
    // SM demand sweep.
    struct Edge {
      int64_t t;
      double demand;
      int32_t name;
    };
    std::vector<Edge> edges;
    if (dev != nullptr) edges.reserve(2 * (e - b));  // (at most a start and an end per row)
    for (size_t i = b; i < e; ++i) {
      if (a.kind[i] != Kind::kernel || a.end[i] <= a.start[i]) continue;
      if (!dev) {
        ++c.kernels_unknown;
        continue;
      }
      const KernelShape& sh = t.shape_of(i);
      const Occupancy oc = occupancy(*dev, sh.grid, sh.block, sh.registers, sh.shared);
      if (oc.sm_demand <= 0) {
        ++c.kernels_unknown;
        continue;
      }
      ++c.kernels_with_demand;
      edges.push_back({a.start[i], oc.sm_demand, a.name[i]});
      edges.push_back({a.end[i], -oc.sm_demand, a.name[i]});
    }
    std::sort(edges.begin(), edges.end(), [](const Edge& x, const Edge& y) {
      return x.t < y.t || (x.t == y.t && x.demand < y.demand);  // ends before starts
    });
    double load = 0;
    // The names running now (a few at a time: a short list, not a map of every name seen) and how
    // many of each.
    std::vector<std::pair<int32_t, int>> running;
    std::unordered_map<int32_t, int64_t> involved;
    for (size_t k = 0; k < edges.size();) {
      const int64_t now = edges[k].t;
      while (k < edges.size() && edges[k].t == now) {
        load += edges[k].demand;
        const int32_t name = edges[k].name;
        auto r = std::find_if(running.begin(), running.end(),
                              [name](const auto& x) { return x.first == name; });
        if (r == running.end()) r = running.insert(running.end(), {name, 0});
        r->second += edges[k].demand > 0 ? 1 : -1;
        if (r->second == 0) running.erase(r);
        ++k;
      }
      if (k < edges.size() && load > 1.0 + 1e-9) {
        const int64_t dt = edges[k].t - now;
        c.oversubscribed_ns += dt;
        for (const auto& [name, n] : running) {
          if (n > 0) involved[name] += dt;
        }
      }
    }
    std::vector<std::pair<std::string, int64_t>> inv;
    inv.reserve(involved.size());
    for (const auto& [name, ns] : involved)
      inv.emplace_back(name >= 0 ? t.names[static_cast<size_t>(name)] : "?", ns);
    // Longest first; equal times by name (not by the order a hash map keeps).
    std::sort(inv.begin(), inv.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    });
    if (inv.size() > 10) inv.resize(10);
    c.oversubscribed_kernels = std::move(inv);
    // Same-direction copies that overlap: the time at least two run together.
    std::map<std::string, std::vector<Interval>> copies;
    std::map<std::string, std::vector<double>> shares;
    for (size_t i = b; i < e; ++i) {
      if (a.kind[i] != Kind::memcpy || a.end[i] <= a.start[i]) continue;
      const std::string& n = t.names[static_cast<size_t>(a.name[i])];
      const std::string dir = n.rfind("Memcpy ", 0) == 0 ? n.substr(7) : n;
      // Copies on one hardware channel (when CUPTI reported it) share that channel's engine.
      const int32_t ch = a.channel(i);
      copies[ch >= 0 ? dir + " channel " + std::to_string(ch) : dir].push_back(
          {a.start[i], a.end[i]});
      if (dev && dev->memory_bandwidth > 0 && a.bytes[i] > 0) {
        const double bw =
            static_cast<double>(a.bytes[i]) / (static_cast<double>(a.end[i] - a.start[i]) * 1e-9);
        shares[dir].push_back(bw / static_cast<double>(dev->memory_bandwidth));
      }
    }
    for (auto& [dir, v] : copies) {
      std::vector<std::pair<int64_t, int>> ev;
      for (const Interval& x : v) {
        ev.emplace_back(x.start, 1);
        ev.emplace_back(x.end, -1);
      }
      std::sort(ev.begin(), ev.end());
      int n = 0;
      int64_t shared_ns = 0;
      for (size_t k = 0; k < ev.size(); ++k) {
        n += ev[k].second;
        if (n >= 2 && k + 1 < ev.size()) shared_ns += ev[k + 1].first - ev[k].first;
      }
      if (shared_ns > 0) c.copy_overlap_by_kind.emplace_back(dir, shared_ns);
      c.copy_overlap_ns += shared_ns;
    }
    for (auto& [dir, v] : shares)
      c.copy_bandwidth_share.emplace_back(dir, exact_median(std::move(v)));
    // Launch queueing.
    std::vector<double> q;
    for (const LaunchDelay& l : t.launch_delays) {
      if (l.process == c.process && l.device == c.device)
        q.push_back(static_cast<double>(l.delay_ns));
    }
    if (!q.empty()) {
      std::sort(q.begin(), q.end());
      c.queued_kernels = static_cast<int64_t>(q.size());
      c.queue_median_ns = exact_median(q);
      c.queue_p95_ns = q[static_cast<size_t>(0.95 * static_cast<double>(q.size() - 1))];
      c.queue_max_ns = q.back();
    }
    out.push_back(std::move(c));
  });
  return out;
}

}  // namespace c3::analyzer
