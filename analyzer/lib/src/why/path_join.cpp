#include "c3/analyzer/why/path_join.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "c3/analyzer/metrics/metrics.h"

namespace c3::analyzer {
namespace {

// (communicator, sequence number): the communicator as its index in the step's communicators
// sorted by id (Communicators), so keys order as the ids do and compare as integers.
using Key = std::pair<int32_t, int64_t>;

// The communicator ids of a step's ranks, each once, in id order; -1 names none.
struct Communicators {
  std::vector<std::string> ids;
  explicit Communicators(const std::vector<StepRankPath>& ranks) {
    for (const StepRankPath& r : ranks) {
      if (r.calls != nullptr) ids.insert(ids.end(), r.calls->comms.begin(), r.calls->comms.end());
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  int32_t index(const std::string& id) const {
    const auto it = std::lower_bound(ids.begin(), ids.end(), id);
    return it != ids.end() && *it == id ? static_cast<int32_t>(it - ids.begin()) : -1;
  }
  const std::string& id(int32_t k) const {
    static const std::string none;
    return k >= 0 && static_cast<size_t>(k) < ids.size() ? ids[static_cast<size_t>(k)] : none;
  }
};

// A rank's view of one step: its arrival chains by collective, its tail.
struct RankSide {
  const StepRankPath* r = nullptr;
  // Its chains into collectives, sorted by key (the first of a key kept): a sorted vector is
  // searched as fast as a map and built and walked faster (a whole run holds thousands).
  std::vector<std::pair<Key, const PathChain*>> arrivals;
  const PathChain* tail = nullptr;
  // The arrivals index of `key`, or -1.
  int64_t find(const Key& key) const {
    const auto it = std::lower_bound(
        arrivals.begin(), arrivals.end(), key,
        [](const std::pair<Key, const PathChain*>& x, const Key& k) { return x.first < k; });
    return it != arrivals.end() && it->first == key ? it - arrivals.begin() : -1;
  }
  std::vector<int32_t> comm;  // the rank's RankCollectives::comms index -> Communicators index
  Key key_of(int32_t c, int64_t seq) const {
    const auto k = static_cast<size_t>(c);
    return {c >= 0 && k < comm.size() ? comm[k] : -1, seq};
  }
  std::string op_of(const PathChain& ch) const {
    const auto o = static_cast<size_t>(ch.to_op);
    return ch.to_op >= 0 && o < r->calls->ops.size() ? r->calls->ops[o] : "unknown";
  }
};

int64_t sum(const PathParts& p) {
  int64_t s = 0;
  for (int64_t v : p) s += v;
  return s;
}

int64_t sat_add(int64_t a, int64_t b) {
  int64_t s = 0;
  return __builtin_add_overflow(a, b, &s) ? (b < 0 ? INT64_MIN : INT64_MAX) : s;
}

// The step replayed forward with one change (`w`, or none): each collective in the order of its
// recorded last arrival; each rank's arrival = where its chain starts (the step's start or its
// replayed end of an earlier collective) + the chain's length less what the change removes;
// each rank's end of a collective = the last replayed arrival + its own communication time.
int64_t replay(const std::vector<RankSide>& sides, const WhatIf* w, size_t wi) {
  // Every rank's arrivals (its side, its arrivals index, the chain), grouped by collective: each
  // side's are sorted, so this is a merge by key. A collective's are a run of `all`, not a vector
  // of its own (a whole run holds tens of thousands).
  struct Arrival {
    Key key;
    size_t side = 0, index = 0;
    const PathChain* chain = nullptr;
  };
  struct Coll {
    int64_t last_arrival = INT64_MIN;  // recorded, aligned
    size_t begin = 0, end = 0;         // its arrivals in `all`
    Key key;
  };
  std::vector<Arrival> all;
  size_t total = 0;
  for (const RankSide& side : sides) total += side.arrivals.size();
  all.reserve(total);
  for (size_t s = 0; s < sides.size(); ++s) {
    for (size_t k = 0; k < sides[s].arrivals.size(); ++k)
      all.push_back({sides[s].arrivals[k].first, s, k, sides[s].arrivals[k].second});
  }
  std::sort(all.begin(), all.end(), [](const Arrival& x, const Arrival& y) {
    return x.key != y.key ? x.key < y.key : x.side < y.side;
  });
  std::vector<Coll> colls;
  for (size_t i = 0; i < all.size(); ++i) {
    const Arrival& a = all[i];
    if (colls.empty() || colls.back().key != a.key) colls.push_back({INT64_MIN, i, i, a.key});
    Coll& c = colls.back();
    c.last_arrival = std::max(c.last_arrival, sat_add(a.chain->to_ns, sides[a.side].r->offset_ns));
    c.end = i + 1;
  }
  std::vector<std::pair<int64_t, const Coll*>> order;
  order.reserve(colls.size());
  for (const Coll& c : colls) order.emplace_back(c.last_arrival, &c);
  std::sort(order.begin(), order.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second->key < y.second->key;
  });
  // Replayed ends: per side, per arrivals index, the aligned time (kUnset: not replayed yet).
  constexpr int64_t kUnset = INT64_MIN;
  std::vector<std::vector<int64_t>> ended(sides.size());
  for (size_t s = 0; s < sides.size(); ++s) ended[s].assign(sides[s].arrivals.size(), kUnset);
  auto length = [&](const PathChain& ch) {
    int64_t len = ch.to_ns - ch.from_ns;
    if (w != nullptr && wi < ch.removed.size()) len -= ch.removed[wi];
    return std::max<int64_t>(len, 0);
  };
  auto from_of = [&](size_t s, const PathChain& ch) {
    const StepRankPath& r = *sides[s].r;
    if (ch.from_comm < 0) return sat_add(r.start, r.offset_ns);
    const int64_t k = sides[s].find(sides[s].key_of(ch.from_comm, ch.from_seq));
    // A collective of an earlier step (its chain is not in this one): its recorded end.
    return k >= 0 && ended[s][static_cast<size_t>(k)] != kUnset ? ended[s][static_cast<size_t>(k)]
                                                                : sat_add(ch.from_ns, r.offset_ns);
  };
  const bool hidden = w != nullptr && w->kind == WhatIf::Kind::part &&
                      w->part == PathPart::communication && w->keep == 0;
  std::vector<int64_t> arrive;  // the collective's replayed arrivals, in its order in `all`
  for (const auto& [at, cp] : order) {
    const Coll& c = *cp;
    const size_t n = c.end - c.begin;
    arrive.assign(n, 0);
    int64_t last = INT64_MIN, recorded_last = INT64_MIN;
    for (size_t k = 0; k < n; ++k) {
      const Arrival& a = all[c.begin + k];
      arrive[k] = sat_add(from_of(a.side, *a.chain), length(*a.chain));
      recorded_last = std::max(recorded_last, sat_add(a.chain->to_ns, sides[a.side].r->offset_ns));
    }
    // A rank on time: never later than the latest of the others.
    if (w != nullptr && w->kind == WhatIf::Kind::rank_on_time) {
      for (size_t k = 0; k < n; ++k) {
        if (sides[all[c.begin + k].side].r->rank != w->rank) continue;
        int64_t others = INT64_MIN;
        for (size_t j = 0; j < n; ++j) {
          if (j != k) others = std::max(others, arrive[j]);
        }
        if (others != INT64_MIN) arrive[k] = std::min(arrive[k], others);
      }
    }
    for (int64_t v : arrive) last = std::max(last, v);
    for (size_t k = 0; k < n; ++k) {
      const size_t s = all[c.begin + k].side;
      const PathChain* ch = all[c.begin + k].chain;
      const int64_t off = sides[s].r->offset_ns;
      // Its own communication: from the later of its arrival and the recorded last arrival to
      // its recorded end.
      const int64_t own = std::max<int64_t>(
          0, sat_add(ch->to_end_ns, off) - std::max(sat_add(ch->to_ns, off), recorded_last));
      int64_t comm = own;
      if (w != nullptr) {
        const bool op = w->kind == WhatIf::Kind::collective && sides[s].op_of(*ch) == w->pattern;
        if (op && w->busbw_gbps > 0) {
          // At a bus bandwidth: bytes x the op's bus factor / GB/s is ns. Unknown sizes keep
          // their recorded time.
          if (ch->to_bytes > 0 && ch->to_nranks > 0) {
            const double f = busbw_factor(sides[s].op_of(*ch), ch->to_nranks);
            const double ns = static_cast<double>(ch->to_bytes) * f / w->busbw_gbps;
            comm = ns < 9e18 ? std::llround(ns) : INT64_MAX / 4;
          }
        } else if (op || (w->kind == WhatIf::Kind::part && w->part == PathPart::communication)) {
          comm = std::llround(static_cast<double>(own) * w->keep);
        }
      }
      ended[s][all[c.begin + k].index] =
          hidden ? arrive[k] : sat_add(std::max(last, arrive[k]), comm);
    }
  }
  int64_t longest = 0;
  for (size_t s = 0; s < sides.size(); ++s) {
    if (sides[s].tail == nullptr) continue;
    const StepRankPath& r = *sides[s].r;
    const int64_t end = sat_add(from_of(s, *sides[s].tail), length(*sides[s].tail));
    longest = std::max(longest, end - sat_add(r.start, r.offset_ns));
  }
  return longest;
}

}  // namespace

StepPath join_step(int64_t index, const std::string& name, const std::vector<StepRankPath>& ranks,
                   const std::vector<WhatIf>& what_ifs) {
  StepPath out;
  out.index = index;
  out.name = name;
  std::vector<RankSide> sides(ranks.size());
  const Communicators comms(ranks);
  size_t longest = 0;
  for (size_t s = 0; s < ranks.size(); ++s) {
    RankSide& side = sides[s];
    side.r = &ranks[s];
    if (ranks[s].calls != nullptr) {
      for (const std::string& id : ranks[s].calls->comms) side.comm.push_back(comms.index(id));
    }
    for (const PathChain& ch : ranks[s].path->chains) {
      if (ch.to_comm < 0) {
        side.tail = &ch;
      } else {
        side.arrivals.emplace_back(side.key_of(ch.to_comm, ch.to_seq), &ch);
      }
    }
    // Sorted by key; of chains into one collective, the first is kept (as a map's emplace did).
    std::stable_sort(side.arrivals.begin(), side.arrivals.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    side.arrivals.erase(
        std::unique(side.arrivals.begin(), side.arrivals.end(),
                    [](const auto& x, const auto& y) { return x.first == y.first; }),
        side.arrivals.end());
    const int64_t len = ranks[s].end - ranks[s].start;
    if (len > out.step_ns) {
      out.step_ns = len;
      longest = s;
    }
  }
  if (ranks.empty() || sides[longest].tail == nullptr) return out;
  // The walk back: chains of one rank, joined at collectives to the last arrival's rank.
  size_t s = longest;
  const PathChain* ch = sides[s].tail;
  out.end_process = ranks[s].process;
  size_t guard = 0, chains = 0;
  for (const RankSide& side : sides) chains += side.arrivals.size() + 1;
  while (ch != nullptr && guard++ <= chains) {
    for (size_t p = 0; p < kPathParts; ++p) out.parts[p] = sat_add(out.parts[p], ch->parts[p]);
    {
      PathLeg leg;
      leg.process = ranks[s].process;
      leg.from_ns = ch->from_ns;
      leg.to_ns = ch->to_ns;
      if (ch->to_comm >= 0) {
        const Key to = sides[s].key_of(ch->to_comm, ch->to_seq);
        leg.comm = comms.id(to.first);
        leg.seq = to.second;
      }
      out.route.push_back(std::move(leg));
    }
    if (ch->from_comm < 0) break;
    const Key key = sides[s].key_of(ch->from_comm, ch->from_seq);
    auto collective_leg = [&](int64_t from) {
      PathLeg leg;
      leg.process = ranks[s].process;
      leg.from_ns = std::min(from, ch->from_ns);
      leg.to_ns = ch->from_ns;
      leg.collective = true;
      leg.comm = comms.id(key.first);
      leg.seq = key.second;
      out.route.push_back(std::move(leg));
    };
    const int64_t end_s = sat_add(ch->from_ns, ranks[s].offset_ns);
    // Every rank's arrival at it (aligned); the last one, preferring this rank on a tie.
    int64_t last = INT64_MIN, second = INT64_MIN;
    size_t last_side = s;
    const PathChain* own = nullptr;
    for (size_t q = 0; q < sides.size(); ++q) {
      const int64_t k = sides[q].find(key);
      if (k < 0) continue;
      const PathChain* at_q = sides[q].arrivals[static_cast<size_t>(k)].second;
      const int64_t at = sat_add(at_q->to_ns, ranks[q].offset_ns);
      if (q == s) own = at_q;
      if (at > last || (at == last && q == s)) {
        if (at > last) second = last;
        last = at;
        last_side = q;
      } else {
        second = std::max(second, at);
      }
    }
    if (own == nullptr) {  // it started before this rank's step: the rest is that collective
      const int64_t from = sat_add(ranks[s].start, ranks[s].offset_ns);
      out.parts[static_cast<size_t>(PathPart::communication)] =
          sat_add(out.parts[static_cast<size_t>(PathPart::communication)],
                  std::max<int64_t>(0, end_s - from));
      collective_leg(ranks[s].start);
      break;
    }
    const int64_t arrival = sat_add(own->to_ns, ranks[s].offset_ns);
    const int64_t begin = std::max(arrival, std::min(last, end_s));
    const size_t comm = static_cast<size_t>(PathPart::communication);
    out.parts[comm] = sat_add(out.parts[comm], std::max<int64_t>(0, end_s - begin));
    collective_leg(begin - ranks[s].offset_ns);
    if (last_side != s) {
      out.peer_wait_ns = sat_add(out.peer_wait_ns, std::max<int64_t>(0, begin - arrival));
      const PathChain* theirs =
          sides[last_side].arrivals[static_cast<size_t>(sides[last_side].find(key))].second;
      LateArrival la;
      la.comm = comms.id(key.first);
      la.seq = key.second;
      la.op = sides[last_side].op_of(*theirs);
      la.late = ranks[last_side].process;
      la.waiting = ranks[s].process;
      la.late_ns = second == INT64_MIN ? 0 : last - second;
      la.cause = theirs->last;
      la.cause_name = ranks[last_side].path->last_name(*theirs);
      la.before = theirs->parts;
      out.late.push_back(std::move(la));
      ++out.hops;
      s = last_side;
      ch = theirs;
    } else {
      ch = own;
    }
  }
  out.path_ns = sum(out.parts);
  out.replayed_ns = replay(sides, nullptr, 0);
  for (size_t w = 0; w < what_ifs.size(); ++w) {
    out.what_if_ns.push_back(replay(sides, &what_ifs[w], w));
  }
  return out;
}

}  // namespace c3::analyzer
