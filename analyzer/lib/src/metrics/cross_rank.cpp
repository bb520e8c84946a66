#include "c3/analyzer/metrics/cross_rank.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "c3/analyzer/metrics/distribution.h"
#include "time_limits.h"

namespace c3::analyzer {
namespace {

// The largest clock offset between two processes that aligns them (time_limits.h).
constexpr int64_t kOffsetLimit = kStampLimit;

// a - b for a >= b, INT64_MAX when it does not fit.
int64_t saturated_sub(int64_t a, int64_t b) {
  int64_t d = 0;
  return __builtin_sub_overflow(a, b, &d) ? INT64_MAX : d;
}

bool matchable(const CollectiveRecord& r) {
  return r.comm >= 0 && r.seq >= 0;
}

// Every communicator name of every process, sorted, and each process's local index -> the
// global one: the processes' records are then all in one (global communicator, seq) order.
struct Comms {
  std::vector<std::string> names;
  std::vector<std::vector<int32_t>> global;  // [process][local]
};

Comms comms_of(const std::vector<const RankCollectives*>& calls) {
  Comms c;
  for (const RankCollectives* r : calls)
    c.names.insert(c.names.end(), r->comms.begin(), r->comms.end());
  std::sort(c.names.begin(), c.names.end());
  c.names.erase(std::unique(c.names.begin(), c.names.end()), c.names.end());
  for (const RankCollectives* r : calls) {
    std::vector<int32_t> g;
    g.reserve(r->comms.size());
    for (const std::string& n : r->comms) {
      g.push_back(static_cast<int32_t>(std::lower_bound(c.names.begin(), c.names.end(), n) -
                                       c.names.begin()));
    }
    c.global.push_back(std::move(g));
  }
  return c;
}

// The calls of one (communicator, sequence number) across processes: (process, record), in
// process order and, within a process, in the order it made them.
using Group = std::vector<std::pair<int, const CollectiveRecord*>>;

// Visits every group in (communicator name, seq) order by merging the processes' sorted records
// (memory: one cursor per process).
template <class F>
void for_each_group(const std::vector<const RankCollectives*>& calls, const Comms& comms, F&& fn) {
  using Key = std::tuple<int32_t, int64_t, int>;  // global comm, seq, process
  std::priority_queue<Key, std::vector<Key>, std::greater<>> heap;
  std::vector<size_t> at(calls.size(), 0);
  auto key = [&](int p) -> std::optional<Key> {
    const auto& recs = calls[static_cast<size_t>(p)]->records;
    const size_t i = at[static_cast<size_t>(p)];
    if (i >= recs.size() || !matchable(recs[i])) return std::nullopt;
    const auto& g = comms.global[static_cast<size_t>(p)];
    const auto local = static_cast<size_t>(recs[i].comm);
    if (local >= g.size()) return std::nullopt;
    return Key{g[local], recs[i].seq, p};
  };
  for (size_t p = 0; p < calls.size(); ++p) {
    if (auto k = key(static_cast<int>(p))) heap.push(*k);
  }
  Group group;
  while (!heap.empty()) {
    const auto [comm, seq, first] = heap.top();
    group.clear();
    while (!heap.empty() && std::get<0>(heap.top()) == comm && std::get<1>(heap.top()) == seq) {
      const int p = std::get<2>(heap.top());
      heap.pop();
      const auto& recs = calls[static_cast<size_t>(p)]->records;
      size_t& i = at[static_cast<size_t>(p)];
      const int32_t local = recs[i].comm;
      while (i < recs.size() && matchable(recs[i]) && recs[i].comm == local && recs[i].seq == seq)
        group.emplace_back(p, &recs[i++]);
      if (auto k = key(p)) heap.push(*k);
    }
    // Processes came off the heap in process order (the key's last field).
    fn(comms.names[static_cast<size_t>(comm)], seq, group);
  }
}

}  // namespace

void RankCollectives::sort() {
  std::stable_sort(
      records.begin(), records.end(), [this](const CollectiveRecord& a, const CollectiveRecord& b) {
        const bool ma = matchable(a) && static_cast<size_t>(a.comm) < comms.size();
        const bool mb = matchable(b) && static_cast<size_t>(b.comm) < comms.size();
        if (ma != mb) return ma;
        if (!ma) return false;
        if (a.comm != b.comm) {
          const int c =
              comms[static_cast<size_t>(a.comm)].compare(comms[static_cast<size_t>(b.comm)]);
          if (c != 0) return c < 0;
        }
        return a.seq < b.seq;
      });
}

RankCollectives collectives_of(const Trace& t, int process) {
  RankCollectives r;
  std::unordered_map<std::string, int32_t> comm_ids, op_ids;
  auto id = [](std::unordered_map<std::string, int32_t>& ids, std::vector<std::string>& names,
               const std::string& v) {
    auto [it, fresh] = ids.emplace(v, static_cast<int32_t>(names.size()));
    if (fresh) names.push_back(v);
    return it->second;
  };
  for (const Collective& c : t.collectives) {
    if (c.process != process) continue;
    CollectiveRecord x;
    x.comm = c.comm_id.empty() ? -1 : id(comm_ids, r.comms, c.comm_id);
    x.op = id(op_ids, r.ops, c.op);
    x.seq = c.seq;
    x.bytes = c.bytes;
    x.nranks = c.nranks;
    x.rank = c.rank;
    x.device = c.device;
    x.gpu_start = c.gpu_start;
    x.gpu_end = c.gpu_end;
    r.records.push_back(x);
  }
  r.sort();
  return r;
}

int clock_domains(const std::vector<Process>& processes, std::vector<int>& domain) {
  const size_t n = processes.size();
  domain.assign(n, 0);
  std::map<std::string, int> host_domain;
  int domains = 0;
  for (size_t p = 0; p < n; ++p) {
    const std::string& h = processes[p].host;
    if (!h.empty()) {
      auto it = host_domain.find(h);
      if (it != host_domain.end()) {
        domain[p] = it->second;
        continue;
      }
      host_domain[h] = domains;
    }
    domain[p] = domains++;
  }
  return domains;
}

size_t append_domain_ends(std::vector<DomainEnd>& ends, std::vector<DomainEnd>& members) {
  if (members.empty()) return 0;
  std::stable_sort(members.begin(), members.end(),
                   [](const DomainEnd& x, const DomainEnd& y) { return x.domain < y.domain; });
  const size_t first = ends.size();
  for (const DomainEnd& e : members) {
    if (ends.size() > first && ends.back().domain == e.domain) {
      ends.back().end = std::max(ends.back().end, e.end);
    } else {
      ends.push_back(e);
    }
  }
  return ends.size() - first;
}

std::vector<ClockOffset> align_clocks(std::vector<Process>& processes,
                                      const std::vector<const RankCollectives*>& calls) {
  const size_t n = processes.size();
  if (n == 0) return {};
  std::vector<int> domain;
  const int domains = clock_domains(processes, domain);
  // Collective ends per (comm, seq) and domain: one array, grouped by (comm, seq) as the merge
  // of the processes' sorted records yields them, each group ordered by domain; a domain with
  // several calls of one collective (processes of one host, or one per GPU) keeps the latest
  // end, whatever order the calls were recorded in. One entry per (comm, seq, domain).
  const Comms comms = comms_of(calls);
  std::vector<DomainEnd> ends;
  std::vector<DomainEnd> members;
  std::vector<size_t> group;  // group g is ends[group[g], group[g + 1])
  for_each_group(calls, comms, [&](const std::string&, int64_t, const Group& g) {
    members.clear();
    for (const auto& [p, c] : g) {
      if (c->gpu_end >= 0 && static_cast<size_t>(p) < n)
        members.push_back({domain[static_cast<size_t>(p)], c->gpu_end});
    }
    const size_t at = ends.size();
    if (append_domain_ends(ends, members) > 0) group.push_back(at);
  });
  group.push_back(ends.size());
  return align_from_ends(processes, domain, domains, ends, group);
}

std::vector<ClockOffset> align_from_ends(std::vector<Process>& processes,
                                         const std::vector<int>& domain, int domains,
                                         const std::vector<DomainEnd>& ends,
                                         const std::vector<size_t>& group) {
  const size_t n = processes.size();
  std::vector<ClockOffset> out(n);
  if (n == 0) return out;
  // Reference: the domain of the lowest rank (else process 0).
  const size_t ref = reference_process(processes);
  std::vector<std::optional<int64_t>> offset(static_cast<size_t>(domains));
  std::vector<int64_t> matched(static_cast<size_t>(domains), 0);
  offset[static_cast<size_t>(domain[ref])] = 0;
  // Breadth-first over domains linked by matched collectives.
  for (bool grew = true; grew;) {
    grew = false;
    for (int d = 0; d < domains; ++d) {
      if (offset[static_cast<size_t>(d)]) continue;
      std::vector<double> diffs;
      for (size_t g = 0; g + 1 < group.size(); ++g) {
        const DomainEnd* mine = nullptr;
        for (size_t i = group[g]; i < group[g + 1]; ++i) {
          if (ends[i].domain == d) mine = &ends[i];
        }
        if (mine == nullptr) continue;
        for (size_t i = group[g]; i < group[g + 1]; ++i) {
          const DomainEnd& other = ends[i];
          if (other.domain != d && offset[static_cast<size_t>(other.domain)]) {
            // In integers first: with epoch timestamps (~1.7e18 ns) a double holds only every
            // 256th nanosecond, while the difference is small and exact. In double only where
            // the ends and offsets of a hostile trace lie too far apart for int64.
            const int64_t off = *offset[static_cast<size_t>(other.domain)];
            int64_t diff = 0;
            if (!__builtin_sub_overflow(other.end, mine->end, &diff) &&
                !__builtin_add_overflow(diff, off, &diff)) {
              diffs.push_back(static_cast<double>(diff));
            } else {
              diffs.push_back(static_cast<double>(other.end) + static_cast<double>(off) -
                              static_cast<double>(mine->end));
            }
            break;
          }
        }
      }
      if (diffs.empty()) continue;
      const auto samples = static_cast<int64_t>(diffs.size());
      const double median = exact_median(std::move(diffs));
      // An offset of more than 2^61 ns (73 years) aligns nothing: such clocks are not aligned.
      if (!(std::fabs(median) <= static_cast<double>(kOffsetLimit))) continue;
      matched[static_cast<size_t>(d)] = samples;
      offset[static_cast<size_t>(d)] = static_cast<int64_t>(std::llround(median));
      grew = true;
    }
  }
  for (size_t p = 0; p < n; ++p) {
    ClockOffset& o = out[p];
    o.process = static_cast<int>(p);
    const auto d = static_cast<size_t>(domain[p]);
    if (domain[p] == domain[ref]) {
      o.how = p == ref ? "reference" : "same host as the reference";
    } else if (offset[d]) {
      o.offset_ns = *offset[d];
      o.matched = matched[d];
      o.how = "matched collective ends";
    } else if (processes[p].anchor_realtime_ns != 0 && processes[ref].anchor_realtime_ns != 0) {
      // No collective in common: the wall-clock anchors (trace clock <-> CLOCK_REALTIME at start).
      const Process& me = processes[p];
      const Process& rp = processes[ref];
      // Anchors are within +-2^61 (the loader's bound), so each side's difference fits; their
      // difference is checked, and an offset beyond 2^61 aligns nothing.
      const int64_t mine = me.anchor_realtime_ns - me.anchor_trace_ns;
      const int64_t theirs = rp.anchor_realtime_ns - rp.anchor_trace_ns;
      int64_t off = 0;
      if (!__builtin_sub_overflow(mine, theirs, &off) && off >= -kOffsetLimit &&
          off <= kOffsetLimit) {
        o.offset_ns = off;
        o.how = "wall-clock anchors (no matched collective)";
      } else {
        o.how = "wall-clock anchors more than 2^61 ns apart: not aligned";
      }
    } else {
      o.how = "no matched collective and no wall-clock anchor: not aligned";
    }
    processes[p].offset_ns = o.offset_ns;
  }
  return out;
}

size_t reference_process(const std::vector<Process>& processes) {
  size_t ref = 0;
  for (size_t p = 0; p < processes.size(); ++p) {
    if (processes[p].rank && (!processes[ref].rank || *processes[p].rank < *processes[ref].rank))
      ref = p;
  }
  return ref;
}

int64_t arrival_tolerance_ns(const RankCollectives& calls) {
  bool any = false;
  for (const CollectiveRecord& r : calls.records) {
    if (r.gpu_start < 0) continue;
    if (r.gpu_start % 1000 != 0) return 0;
    any = true;
  }
  return any ? 1000 : 0;
}

std::vector<int> rank_order(const std::vector<Process>& processes) {
  std::vector<int> order(processes.size());
  for (size_t p = 0; p < order.size(); ++p) order[p] = static_cast<int>(p);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto& ra = processes[static_cast<size_t>(a)].rank;
    const auto& rb = processes[static_cast<size_t>(b)].rank;
    if (ra.has_value() != rb.has_value()) return ra.has_value();
    return ra && *ra < *rb;
  });
  return order;
}

int32_t MatchNames::op(CrossRank& out, const std::string& name) {
  const auto [it, added] = ops.try_emplace(name, static_cast<int32_t>(out.ops.size()));
  if (added) out.ops.push_back(name);
  return it->second;
}

int32_t MatchNames::comm(CrossRank& out, const std::string& name) {
  if (out.comms.empty() || out.comms.back() != name) out.comms.push_back(name);
  return static_cast<int32_t>(out.comms.size() - 1);
}

void match_collective(const std::string& comm, int64_t seq, const std::vector<GroupCall>& g,
                      const std::vector<int64_t>& offset, const std::vector<int64_t>& tolerance,
                      CrossRank& out, MatchNames& names, std::vector<RankWait>& waits) {
  // One entry per process (a process driving several GPUs records one call per GPU).
  std::vector<std::pair<int, int64_t>> start;  // (process, latest start), process order
  const std::string* op = nullptr;             // of the first call with GPU work
  bool have_op = false;
  for (const GroupCall& c : g) {
    if (c.gpu_start < 0) continue;
    if (!have_op) {
      op = c.op;
      have_op = true;
    }
    const int p = c.process;
    const int64_t s = c.gpu_start + offset[static_cast<size_t>(p)];
    if (start.empty() || start.back().first != p) {
      start.emplace_back(p, s);
    } else if (s > start.back().second) {
      start.back().second = s;
    }
  }
  if (start.empty()) return;
  if (start.size() < 2) {
    ++out.unmatched;
    return;
  }
  MatchedCollective m;
  m.comm = names.comm(out, comm);
  m.seq = seq;
  // (an op named "" reads as one not named, as before the names were indices)
  m.op = op == nullptr || op->empty() ? -1 : names.op(out, *op);
  m.ranks = static_cast<int32_t>(start.size());
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  int last = -1;
  for (const auto& [p, s] : start) {
    lo = std::min(lo, s);
    if (s > hi) {
      hi = s;
      last = p;
    }
  }
  m.skew_ns = saturated_sub(hi, lo);
  // The last one is a straggler only when no other process arrived with it (within the
  // resolution of the two processes' clocks).
  bool tie = false;
  for (const auto& [p, s] : start) {
    if (p == last) continue;
    const int64_t tol =
        std::max(tolerance[static_cast<size_t>(p)], tolerance[static_cast<size_t>(last)]);
    tie = tie || saturated_sub(hi, s) <= tol;
  }
  m.straggler = tie ? -1 : last;
  for (const auto& [p, s] : start) {
    RankWait& w = waits[static_cast<size_t>(p)];
    w.process = p;
    ++w.matched;
    // Saturating: many collectives skewed by hostile clocks must not overflow the sum.
    if (__builtin_add_overflow(w.wait_ns, saturated_sub(hi, s), &w.wait_ns)) {
      w.wait_ns = INT64_MAX;
    }
  }
  if (m.straggler >= 0) {
    ++waits[static_cast<size_t>(m.straggler)].straggler_count;
  } else {
    ++out.tied;
  }
  out.collectives.push_back(m);
}

void order_waits(CrossRank& out, const std::vector<Process>& processes,
                 const std::vector<RankWait>& waits) {
  out.ranks.clear();
  for (const int p : rank_order(processes)) {
    if (waits[static_cast<size_t>(p)].matched > 0)
      out.ranks.push_back(waits[static_cast<size_t>(p)]);
  }
  std::stable_sort(out.ranks.begin(), out.ranks.end(), [](const RankWait& x, const RankWait& y) {
    if (x.straggler_count != y.straggler_count) return x.straggler_count > y.straggler_count;
    return x.wait_ns < y.wait_ns;
  });
}

void add_arrival(LastArrivals& l, size_t process, int64_t gpu_start, int64_t offset) {
  int64_t at = 0;
  if (gpu_start < 0 || __builtin_add_overflow(gpu_start, offset, &at)) return;
  // (A rank's calls of one collective, one per GPU it drives: it arrives with the last.)
  if (at > l.first) {
    if (l.who != process) l.second = l.first;
    l.first = at;
    l.who = process;
  } else if (l.who != process) {
    l.second = std::max(l.second, at);
  }
}

CrossRank cross_rank(const std::vector<Process>& processes,
                     const std::vector<const RankCollectives*>& calls) {
  CrossRank out;
  std::vector<RankWait> waits(processes.size());
  std::vector<int64_t> tolerance(calls.size()), offset(processes.size());
  for (size_t p = 0; p < calls.size(); ++p) tolerance[p] = arrival_tolerance_ns(*calls[p]);
  for (size_t p = 0; p < processes.size(); ++p) offset[p] = processes[p].offset_ns;
  std::vector<GroupCall> group;
  MatchNames names;
  const Comms comms = comms_of(calls);
  for_each_group(calls, comms, [&](const std::string& comm, int64_t seq, const Group& g) {
    group.clear();
    for (const auto& [p, c] : g) {
      const auto& ops = calls[static_cast<size_t>(p)]->ops;
      const std::string* op = c->op >= 0 && static_cast<size_t>(c->op) < ops.size()
                                  ? &ops[static_cast<size_t>(c->op)]
                                  : nullptr;
      group.push_back({p, op, c->gpu_start, c->gpu_end});
    }
    match_collective(comm, seq, group, offset, tolerance, out, names, waits);
  });
  order_waits(out, processes, waits);
  return out;
}

namespace {
std::vector<RankCollectives> all_collectives(const Trace& t) {
  std::vector<RankCollectives> r;
  r.reserve(t.processes.size());
  for (size_t p = 0; p < t.processes.size(); ++p)
    r.push_back(collectives_of(t, static_cast<int>(p)));
  return r;
}
std::vector<const RankCollectives*> pointers(const std::vector<RankCollectives>& v) {
  std::vector<const RankCollectives*> out;
  out.reserve(v.size());
  for (const RankCollectives& r : v) out.push_back(&r);
  return out;
}
}  // namespace

std::vector<ClockOffset> align_clocks(Trace& t) {
  const std::vector<RankCollectives> calls = all_collectives(t);
  return align_clocks(t.processes, pointers(calls));
}

CrossRank cross_rank(const Trace& t) {
  const std::vector<RankCollectives> calls = all_collectives(t);
  return cross_rank(t.processes, pointers(calls));
}

}  // namespace c3::analyzer
