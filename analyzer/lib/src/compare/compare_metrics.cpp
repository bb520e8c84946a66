// The metrics of `c3scope compare` (compare_metrics.h): per-step breakdowns of the job and of
// each rank, collectives, kernels, interference, arrival skew and c3bench cases, from the
// summaries of two runs; and whether the runs can be compared at all.
#include "compare_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/metrics/cross_rank.h"
#include "c3/analyzer/metrics/interference.h"

namespace c3::analyzer {

const char* ExplainedPath::name(size_t i) {
  if (i < kPathParts) return path_part_name(static_cast<PathPart>(i));
  return i == kPathParts ? "peer_wait (off the path)" : "path";
}
namespace {

// A distribution's values, or (a sketch) up to 2,048 of its quantiles: what the test sees.
std::vector<double> samples_of(const Distribution& d) {
  if (d.exact()) return d.values();
  const int64_t n = d.count();
  const int64_t k = std::min<int64_t>(n, 2048);
  std::vector<double> out;
  out.reserve(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i) out.push_back(d.at_rank((2 * i + 1) * n / (2 * k)));
  return out;
}

std::string rank_label(const RankSummary& s, size_t index) {
  if (s.process.rank) return "rank " + std::to_string(*s.process.rank);
  return "process " + std::to_string(index);
}

// The ranks of both sides paired: by rank number when every process has a distinct one, else
// by order.
std::vector<std::pair<int, int>> pair_ranks(const JobRun* b, const JobRun& c) {
  std::vector<std::pair<int, int>> out;
  if (b == nullptr) {
    for (size_t i = 0; i < c.ranks.size(); ++i) out.emplace_back(-1, static_cast<int>(i));
    return out;
  }
  auto by_rank = [](const JobRun& r, std::map<int64_t, int>* m) {
    for (size_t i = 0; i < r.ranks.size(); ++i) {
      const auto& k = r.ranks[i].process.rank;
      if (!k || !m->emplace(*k, static_cast<int>(i)).second) return false;
    }
    return true;
  };
  std::map<int64_t, int> mb, mc;
  if (by_rank(*b, &mb) && by_rank(c, &mc)) {
    for (const auto& [k, ic] : mc) {
      const auto it = mb.find(k);
      out.emplace_back(it == mb.end() ? -1 : it->second, ic);
    }
    return out;
  }
  for (size_t i = 0; i < c.ranks.size(); ++i)
    out.emplace_back(i < b->ranks.size() ? static_cast<int>(i) : -1, static_cast<int>(i));
  return out;
}

// Per-step values of one scope: job steps (the longest rank's step time, the ranks' mean
// breakdown) or one rank's steps.
struct StepColumns {
  std::vector<double> step, compute, exposed_comm, exposed_memcpy, idle, overlap, other;
  bool any_comm = false;
  void add(double step_ns, const Breakdown& b) {
    step.push_back(step_ns);
    const auto d = [](int64_t v) { return static_cast<double>(v); };
    compute.push_back(d(b.compute()));
    exposed_comm.push_back(d(b.exposed_comm));
    exposed_memcpy.push_back(d(b.exposed_memcpy));
    idle.push_back(d(b.idle));
    overlap.push_back(b.overlap_pct);
    other.push_back(step_ns - d(b.compute()) - d(b.exposed_comm) - d(b.exposed_memcpy) - d(b.idle));
    if (b.comm() > 0) any_comm = true;
  }
};

StepColumns job_columns(const Report& r) {
  StepColumns c;
  for (const JobStep& j : r.job_steps) c.add(static_cast<double>(j.step_ns), j.mean);
  return c;
}
StepColumns rank_columns(const RankSummary& s) {
  StepColumns c;
  for (const StepSample& st : s.steps) c.add(static_cast<double>(st.end - st.start), st.b);
  return c;
}

// Matched collectives of a run: per collective the skew, per rank its waits, and how often each
// rank arrived last. Records are matched by communicator and sequence number with the clock
// offsets the reduce estimated.
struct Arrivals {
  std::vector<double> skew;
  std::vector<std::vector<double>> wait;  // per rank (JobRun::ranks index)
  std::vector<int64_t> last;              // per rank: collectives it arrived last at
  int64_t matched = 0;
};

Arrivals arrivals(const JobRun& run, const Report& r) {
  Arrivals a;
  const size_t n = run.ranks.size();
  a.wait.resize(n);
  a.last.assign(n, 0);
  std::vector<int64_t> offset(n, 0);
  for (const ClockOffset& o : r.clocks) {
    if (o.process >= 0 && static_cast<size_t>(o.process) < n)
      offset[static_cast<size_t>(o.process)] = o.offset_ns;
  }
  std::vector<int64_t> tolerance(n, 0);
  for (size_t p = 0; p < n; ++p) tolerance[p] = arrival_tolerance_ns(run.ranks[p].calls);
  // (communicator, sequence) -> earliest start per rank.
  std::map<std::pair<std::string, int64_t>, std::vector<std::pair<int, int64_t>>> calls;
  for (size_t p = 0; p < n; ++p) {
    const RankCollectives& rc = run.ranks[p].calls;
    for (const CollectiveRecord& c : rc.records) {
      if (c.comm < 0 || c.seq < 0 || c.gpu_start < 0) continue;
      auto& v = calls[{rc.comms[static_cast<size_t>(c.comm)], c.seq}];
      const int64_t start = c.gpu_start + offset[p];
      if (!v.empty() && v.back().first == static_cast<int>(p)) {
        v.back().second = std::min(v.back().second, start);
      } else {
        v.emplace_back(static_cast<int>(p), start);
      }
    }
  }
  for (const auto& [key, v] : calls) {
    if (v.size() < 2) continue;
    ++a.matched;
    int64_t lo = v[0].second, hi = v[0].second;
    for (const auto& [p, s] : v) {
      lo = std::min(lo, s);
      hi = std::max(hi, s);
    }
    a.skew.push_back(static_cast<double>(hi - lo));
    for (const auto& [p, s] : v)
      a.wait[static_cast<size_t>(p)].push_back(static_cast<double>(hi - s));
    // The rank that arrived last, when one did: ranks that arrive together have no straggler,
    // with the same tolerance as analyze's cross-rank table (arrival_tolerance_ns: 1 us between
    // whole-microsecond clocks, as Kineto's, else equal starts only).
    int late = -1;
    for (const auto& [p, s] : v) {
      if (s == hi && late < 0) late = p;
    }
    bool tie = false;
    for (const auto& [p, s] : v) {
      if (p == late) continue;
      const int64_t tol =
          std::max(tolerance[static_cast<size_t>(p)], tolerance[static_cast<size_t>(late)]);
      tie = tie || hi - s <= tol;
    }
    if (!tie) ++a.last[static_cast<size_t>(late)];
  }
  return a;
}

double quantile_of(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}
template <class T, class Key, class Merge>
std::map<Key, T> merged(const JobRun& r, const std::vector<T> RankSummary::*field,
                        Key (*key)(const T&), Merge merge) {
  std::map<Key, T> out;
  for (const RankSummary& s : r.ranks) {
    for (const T& x : s.*field) {
      auto [it, fresh] = out.try_emplace(key(x), x);
      if (!fresh) merge(it->second, x);
    }
  }
  return out;
}

std::pair<std::string, int64_t> coll_key(const CollectiveStat& c) {
  return {c.op, c.bucket};
}
std::pair<std::string, Class> kernel_key(const KernelStat& k) {
  return {k.name, k.cls};
}
std::string inter_key(const InterferenceStat& x) {
  return x.signature;
}

std::string bucket_label(int64_t bucket) {
  return bucket > 0 ? size_bucket(bucket) : "size ?";
}

// Incomparability: what the runs differ in that makes their numbers incomparable.

}  // namespace

bool bench_steps(const JobRun& r) {
  for (const RankSummary& s : r.ranks) {
    if (s.step_source == "c3bench cases") return true;
  }
  return false;
}

// The distribution-free 95% interval of the q-quantile (order statistics, normal approximation
// of the binomial).
std::pair<double, double> quantile_interval(std::vector<double> v, double q) {
  if (v.empty()) return {0, 0};
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  const double half = 1.96 * std::sqrt(n * q * (1 - q));
  const auto lo = static_cast<int64_t>(std::floor(n * q - half)) - 1;
  const auto hi = static_cast<int64_t>(std::ceil(n * q + half)) - 1;
  const auto last = static_cast<int64_t>(v.size()) - 1;
  return {v[static_cast<size_t>(std::clamp<int64_t>(lo, 0, last))],
          v[static_cast<size_t>(std::clamp<int64_t>(hi, 0, last))]};
}

std::string incomparable(const JobRun& b, const JobRun& c) {
  std::vector<std::string> why;
  auto models = [](const JobRun& r) {
    std::set<std::string> m;
    for (const RankSummary& s : r.ranks) {
      for (const Device& d : s.devices) {
        if (!d.name.empty()) m.insert(d.name);
      }
    }
    return m;
  };
  auto join = [](const std::set<std::string>& s) {
    std::string out;
    for (const std::string& x : s) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  const auto mb = models(b), mc = models(c);
  if (!mb.empty() && !mc.empty() && mb != mc)
    why.push_back("GPU model: baseline " + join(mb) + ", candidate " + join(mc));
  auto gpus = [](const JobRun& r) {
    size_t n = 0;
    for (const RankSummary& s : r.ranks) n += std::max(s.devices.size(), s.per_device.size());
    return n;
  };
  const size_t gb = gpus(b), gc = gpus(c);
  if (gb > 0 && gc > 0 && gb != gc)
    why.push_back("GPU count: baseline " + std::to_string(gb) + ", candidate " +
                  std::to_string(gc));
  auto world = [](const JobRun& r) {
    int64_t w = 0;
    for (const RankSummary& s : r.ranks) w = std::max(w, s.process.world_size.value_or(0));
    return w > 0 ? w : static_cast<int64_t>(r.ranks.size());
  };
  if (world(b) != world(c))
    why.push_back("world size: baseline " + std::to_string(world(b)) + ", candidate " +
                  std::to_string(world(c)));
  auto versions = [](const JobRun& r) {
    std::map<std::string, std::set<std::string>> v;
    for (const RankSummary& s : r.ranks) {
      for (const auto& [k, x] : s.process.versions) v[k].insert(x);
    }
    return v;
  };
  const auto vb = versions(b), vc = versions(c);
  for (const auto& [k, x] : vb) {
    const auto it = vc.find(k);
    if (it != vc.end() && it->second != x)
      why.push_back(k + " version: baseline " + join(x) + ", candidate " + join(it->second));
  }
  const SummaryOptions &ob = b.made_with, &oc = c.made_with;
  if (ob.classification != oc.classification)
    why.push_back("different classification rules (--rules)");
  if (ob.hta_rounding != oc.hta_rounding) why.push_back("--hta-rounding on one side only");
  if (ob.range != oc.range)
    why.push_back("--range: baseline '" + ob.range + "', candidate '" + oc.range + "'");
  if (ob.step != oc.step)
    why.push_back("--step: baseline '" + ob.step + "', candidate '" + oc.step + "'");
  auto backends = [](const JobRun& r) {
    std::set<std::string> s;
    for (const RankSummary& x : r.ranks) {
      for (const BenchResult& br : x.bench)
        s.insert(br.backend + (br.simulated ? " (simulated)" : ""));
    }
    return s;
  };
  const auto bb = backends(b), bc = backends(c);
  if (!bb.empty() && !bc.empty() && bb != bc)
    why.push_back("c3bench backend: baseline " + join(bb) + ", candidate " + join(bc));
  std::string out;
  for (const std::string& w : why) out += (out.empty() ? "" : "; ") + w;
  return out;
}

// Every metric of the comparison (`b` null: the candidate's only, for budgets).
std::vector<Metric> build_metrics(const JobRun* b, const Report* rb, const JobRun& c,
                                  const Report& rc, const CompareOptions& o, Comparison* out) {
  std::vector<Metric> m;
  auto add = [&](Metric x) { m.push_back(std::move(x)); };
  const bool benchy = bench_steps(c) || (b != nullptr && bench_steps(*b));
  // ---- steps ----
  auto step_metrics = [&](const StepColumns* sb, const StepColumns& sc, const std::string& suffix,
                          const std::string& group) {
    const double med_step = exact_median(sb != nullptr ? sb->step : sc.step);
    const double floor = o.step_floor * med_step;
    struct Part {
      const char* base;
      std::vector<double> StepColumns::*col;
      const char* unit;
      bool up;
      bool floor;
    };
    const Part parts[] = {
        {"step_time", &StepColumns::step, "ns", true, false},
        {"compute", &StepColumns::compute, "ns", true, true},
        {"exposed_comm", &StepColumns::exposed_comm, "ns", true, true},
        {"exposed_memcpy", &StepColumns::exposed_memcpy, "ns", true, true},
        {"idle", &StepColumns::idle, "ns", true, true},
        {"overlap_pct", &StepColumns::overlap, "%", false, false},
    };
    for (const Part& p : parts) {
      if (std::string(p.base) == "overlap_pct" && !sc.any_comm && (sb == nullptr || !sb->any_comm))
        continue;
      Metric x;
      x.base = p.base;
      x.id = x.base + suffix;
      x.group = group;
      x.unit = p.unit;
      x.up_is_worse = p.up;
      x.min_delta = p.floor ? floor : 0;
      if (std::string(p.base) == "overlap_pct") {
        x.min_delta = 100 * o.step_floor;
        x.derived = true;  // hidden / all communication: moves when communication does
      }
      if (sb != nullptr) x.b = sb->*p.col;
      x.c = sc.*p.col;
      add(std::move(x));
    }
  };
  const StepColumns jc = job_columns(rc);
  StepColumns jb;
  if (rb != nullptr) jb = job_columns(*rb);
  if (!benchy && (!jc.step.empty() || !jb.step.empty())) {
    step_metrics(rb != nullptr ? &jb : nullptr, jc, "", "job");
    if (rb != nullptr && !jb.step.empty() && !jc.step.empty()) {
      Explained& e = out->explained;
      e.available = true;
      const std::vector<double>* cols_b[] = {&jb.compute, &jb.exposed_comm, &jb.exposed_memcpy,
                                             &jb.idle};
      const std::vector<double>* cols_c[] = {&jc.compute, &jc.exposed_comm, &jc.exposed_memcpy,
                                             &jc.idle};
      double sum_b = 0, sum_c = 0;
      for (size_t i = 0; i < 4; ++i) {
        e.baseline[i] = exact_median(*cols_b[i]);
        e.candidate[i] = exact_median(*cols_c[i]);
        sum_b += e.baseline[i];
        sum_c += e.candidate[i];
      }
      e.baseline[5] = exact_median(jb.step);
      e.candidate[5] = exact_median(jc.step);
      e.baseline[4] = e.baseline[5] - sum_b;
      e.candidate[4] = e.candidate[5] - sum_c;
    }
    // Along the critical path: each part's median over the steps' joined paths.
    auto path_rows = [](const Report& r, std::array<std::vector<double>, ExplainedPath::kRows>& v) {
      if (!r.why) return false;
      for (const StepPath& p : r.paths) {
        if (p.index < 0) continue;  // the whole run (no steps)
        for (size_t k = 0; k < kPathParts; ++k) v[k].push_back(static_cast<double>(p.parts[k]));
        v[kPathParts].push_back(static_cast<double>(p.peer_wait_ns));
        v[kPathParts + 1].push_back(static_cast<double>(p.path_ns));
      }
      return !v[0].empty();
    };
    std::array<std::vector<double>, ExplainedPath::kRows> pb, pc;
    if (rb != nullptr && path_rows(*rb, pb) && path_rows(rc, pc)) {
      ExplainedPath& e = out->explained_path;
      e.available = true;
      for (size_t k = 0; k < ExplainedPath::kRows; ++k) {
        e.baseline[k] = exact_median(pb[k]);
        e.candidate[k] = exact_median(pc[k]);
      }
    }
    // Per rank, when there is more than one.
    if (c.ranks.size() > 1) {
      for (const auto& [ib, ic] : pair_ranks(b, c)) {
        const RankSummary& sc = c.ranks[static_cast<size_t>(ic)];
        if (sc.steps.empty()) continue;
        const std::string label = rank_label(sc, static_cast<size_t>(ic));
        if (b != nullptr && ib < 0) {
          out->notes.push_back(label + " of the candidate has no counterpart in the baseline");
          continue;
        }
        const StepColumns cc = rank_columns(sc);
        if (b == nullptr) {
          step_metrics(nullptr, cc, "[" + label + "]", "rank");
        } else {
          const StepColumns cb = rank_columns(b->ranks[static_cast<size_t>(ib)]);
          step_metrics(&cb, cc, "[" + label + "]", "rank");
        }
      }
    }
  }
  // Whole-run totals when there are no steps: one sample a side, threshold only. A c3bench
  // trace is compared case by case, and gets them too: they are what `analyze` reports for it
  // (its overlap %, exposed communication), so a budget on them can be checked.
  if (benchy || (jc.step.empty() && (rb == nullptr || jb.step.empty()))) {
    auto total = [&](const char* base, auto get, const char* unit, bool up) {
      Metric x;
      x.base = base;
      x.id = base;
      x.group = "job";
      x.unit = unit;
      x.up_is_worse = up;
      x.total = true;
      x.c = {get(rc.overall.b)};
      if (rb != nullptr) x.b = {get(rb->overall.b)};
      x.min_delta = std::string(unit) == "ns"
                        ? o.step_floor * static_cast<double>(
                                             (rb != nullptr ? rb->overall.b : rc.overall.b).span)
                        : 0;
      add(std::move(x));
    };
    const auto d = [](int64_t v) { return static_cast<double>(v); };
    if (rc.overall.b.activities > 0 || (rb != nullptr && rb->overall.b.activities > 0)) {
      total(
          "span", [&](const Breakdown& x) { return d(x.span); }, "ns", true);
      total(
          "compute", [&](const Breakdown& x) { return d(x.compute()); }, "ns", true);
      total(
          "exposed_comm", [&](const Breakdown& x) { return d(x.exposed_comm); }, "ns", true);
      total(
          "exposed_memcpy", [&](const Breakdown& x) { return d(x.exposed_memcpy); }, "ns", true);
      total(
          "idle", [&](const Breakdown& x) { return d(x.idle); }, "ns", true);
      if (rc.overall.b.comm() > 0 || (rb != nullptr && rb->overall.b.comm() > 0)) {
        total(
            "overlap_pct", [](const Breakdown& x) { return x.overlap_pct; }, "%", false);
        m.back().derived = true;
      }
    }
  }
  // ---- collectives ----
  const auto merge_coll = [](CollectiveStat& a, const CollectiveStat& x) { a.merge(x); };
  const auto cc = merged(c, &RankSummary::collectives, coll_key, merge_coll);
  std::map<std::pair<std::string, int64_t>, CollectiveStat> cb;
  if (b != nullptr) cb = merged(*b, &RankSummary::collectives, coll_key, merge_coll);
  for (const auto& [k, x] : cc) {
    const auto it = cb.find(k);
    if (b != nullptr && it == cb.end()) {
      out->added.push_back("collective " + k.first + " " + bucket_label(k.second));
      continue;
    }
    const std::string sel = "[" + k.first + " " + bucket_label(k.second) + "]";
    const CollectiveStat& cs = x;  // (clang before 16 lets no lambda capture a binding)
    const CollectiveStat* bs = b != nullptr ? &it->second : nullptr;
    auto samples = [&](const char* base, Distribution CollectiveStat::*field, const char* unit,
                       bool up_is_worse) {
      if ((cs.*field).empty()) return;
      Metric d;
      d.base = base;
      d.id = base + sel;
      d.group = "collective";
      d.unit = unit;
      d.up_is_worse = up_is_worse;
      d.c = samples_of(cs.*field);
      if (bs != nullptr) d.b = samples_of(bs->*field);
      if (bs == nullptr || !d.b.empty()) add(std::move(d));
    };
    samples("duration", &CollectiveStat::duration, "ns", true);
    samples("busbw", &CollectiveStat::busbw, "B/s", false);
  }
  for (const auto& [k, x] : cb) {
    if (!cc.contains(k))
      out->removed.push_back("collective " + k.first + " " + bucket_label(k.second));
  }
  // ---- kernels (top N by time) ----
  const auto merge_kernel = [](KernelStat& a, const KernelStat& x) { a.merge(x); };
  const auto kc = merged(c, &RankSummary::kernel_stats, kernel_key, merge_kernel);
  std::map<std::pair<std::string, Class>, KernelStat> kb;
  if (b != nullptr) kb = merged(*b, &RankSummary::kernel_stats, kernel_key, merge_kernel);
  {
    std::map<std::string, int> names;  // a name under two classes gets the class in its id
    for (const auto& [k, x] : kc) ++names[k.first];
    for (const auto& [k, x] : kb) {
      if (!kc.contains(k)) ++names[k.first];
    }
    std::vector<std::pair<int64_t, std::pair<std::string, Class>>> both;
    std::vector<std::pair<int64_t, std::string>> added, removed;
    auto label = [&](const std::pair<std::string, Class>& k) {
      return names[k.first] > 1 ? k.first + " (" + class_name(k.second) + ")" : k.first;
    };
    for (const auto& [k, x] : kc) {
      const auto it = kb.find(k);
      if (b != nullptr && it == kb.end()) {
        added.emplace_back(x.total_ns, label(k));
      } else {
        both.emplace_back(std::max(x.total_ns, it == kb.end() ? 0 : it->second.total_ns), k);
      }
    }
    for (const auto& [k, x] : kb) {
      if (!kc.contains(k)) removed.emplace_back(x.total_ns, label(k));
    }
    std::sort(both.begin(), both.end(),
              [](const auto& l, const auto& r) { return l.first > r.first; });
    for (size_t i = 0; i < both.size() && i < static_cast<size_t>(std::max(0, o.top)); ++i) {
      const auto& k = both[i].second;
      Metric d;
      d.base = "kernel";
      d.id = "kernel[" + label(k) + "]";
      d.group = "kernel";
      d.unit = "ns";
      d.c = samples_of(kc.at(k).duration);
      if (b != nullptr) d.b = samples_of(kb.at(k).duration);
      add(std::move(d));
    }
    auto by_time = [](auto& v) {
      std::sort(v.begin(), v.end(), [](const auto& l, const auto& r) { return l.first > r.first; });
    };
    by_time(added);
    by_time(removed);
    for (auto& [t, n] : added) out->added.push_back("kernel " + n);
    for (auto& [t, n] : removed) out->removed.push_back("kernel " + n);
  }
  // ---- interference (slowdowns) ----
  {
    const auto merge_inter = [](InterferenceStat& a, const InterferenceStat& x) { a.merge(x); };
    const auto ic = merged(c, &RankSummary::interference, inter_key, merge_inter);
    std::map<std::string, InterferenceStat> ib;
    if (b != nullptr) ib = merged(*b, &RankSummary::interference, inter_key, merge_inter);
    const int64_t need = std::max(1, c.made_with.interference.min_samples);
    auto usable = [&](const InterferenceStat& x) {
      return x.alone.count() >= need && x.overlapped.count() >= need && x.alone.median() > 0;
    };
    // Each overlapped duration over its run's median alone: the slowdown factor's samples.
    auto factors = [](const InterferenceStat& x) {
      std::vector<double> v = samples_of(x.overlapped);
      const double a = x.alone.median();
      for (double& f : v) f /= a;
      return v;
    };
    std::vector<std::pair<int64_t, std::string>> order;
    for (const auto& [k, x] : ic) {
      if (!usable(x)) continue;
      const auto it = ib.find(k);
      if (b != nullptr && (it == ib.end() || !usable(it->second))) continue;
      order.emplace_back(x.total_ns, k);
    }
    std::sort(order.begin(), order.end(),
              [](const auto& l, const auto& r) { return l.first > r.first; });
    for (size_t i = 0; i < order.size() && i < static_cast<size_t>(std::max(0, o.top)); ++i) {
      const std::string& k = order[i].second;
      Metric d;
      d.base = "slowdown";
      d.id = "slowdown[" + k + "]";
      d.group = "interference";
      d.unit = "x";
      d.derived = true;  // overlapped over alone durations
      d.c = factors(ic.at(k));
      if (b != nullptr) d.b = factors(ib.at(k));
      add(std::move(d));
    }
  }
  // ---- across ranks ----
  if (c.ranks.size() > 1) {
    const Arrivals ac = arrivals(c, rc);
    Arrivals ab;
    if (b != nullptr && rb != nullptr) ab = arrivals(*b, *rb);
    if (ac.matched > 0) {
      const double floor = jb.step.empty() && jc.step.empty()
                               ? 0
                               : o.step_floor * exact_median(jb.step.empty() ? jc.step : jb.step);
      // Who arrives last, most often, in the candidate (and how often it did in the baseline).
      std::string straggler;
      {
        size_t worst = 0;
        for (size_t p = 1; p < ac.last.size(); ++p) {
          if (ac.last[p] > ac.last[worst]) worst = p;
        }
        const double share = 100.0 * static_cast<double>(ac.last[worst]) /
                             static_cast<double>(std::max<int64_t>(1, ac.matched));
        char buf[200];
        if (ac.last[worst] == 0) {
          std::snprintf(buf, sizeof buf,
                        "no rank arrived last on its own at any of %lld matched collectives",
                        static_cast<long long>(ac.matched));
        } else {
          std::snprintf(buf, sizeof buf, "%s arrived last at %.0f%% of %lld matched collectives",
                        rank_label(c.ranks[worst], worst).c_str(), share,
                        static_cast<long long>(ac.matched));
        }
        straggler = buf;
        if (b != nullptr && ab.matched > 0 && ac.last[worst] > 0) {
          // The same rank of the baseline.
          for (const auto& [ib, icand] : pair_ranks(b, c)) {
            if (icand != static_cast<int>(worst) || ib < 0) continue;
            std::snprintf(buf, sizeof buf, " (baseline: %.0f%%)",
                          100.0 * static_cast<double>(ab.last[static_cast<size_t>(ib)]) /
                              static_cast<double>(ab.matched));
            straggler += buf;
          }
        }
      }
      Metric s;
      s.base = "skew";
      s.id = "skew";
      s.group = "skew";
      s.unit = "ns";
      s.min_delta = floor;
      s.c = ac.skew;
      s.b = ab.skew;
      s.detail = straggler;
      if (b == nullptr || !s.b.empty()) {
        Metric p99 = s;
        p99.base = "skew_p99";
        p99.id = "skew_p99";
        p99.total = true;
        p99.quantile_check = true;
        p99.c = {quantile_of(ac.skew, 0.99)};
        p99.b = ab.skew.empty() ? std::vector<double>{}
                                : std::vector<double>{quantile_of(ab.skew, 0.99)};
        add(std::move(s));
        add(std::move(p99));
      }
      for (const auto& [ib, ic] : pair_ranks(b, c)) {
        if (b != nullptr && ib < 0) continue;
        const auto pc = static_cast<size_t>(ic);
        if (ac.wait[pc].empty()) continue;
        Metric w;
        w.base = "wait";
        w.id = "wait[" + rank_label(c.ranks[pc], pc) + "]";
        w.group = "skew";
        w.unit = "ns";
        w.min_delta = floor;
        w.c = ac.wait[pc];
        if (b != nullptr) {
          if (static_cast<size_t>(ib) >= ab.wait.size() || ab.wait[static_cast<size_t>(ib)].empty())
            continue;
          w.b = ab.wait[static_cast<size_t>(ib)];
        }
        add(std::move(w));
      }
    }
  }
  // ---- c3bench cases ----
  {
    auto cases = [](const JobRun& r) {
      std::map<std::string, BenchResult> by_label;
      std::map<std::string, int> seen;
      for (const RankSummary& s : r.ranks) {
        for (const BenchResult& x : s.bench) {
          const int k = ++seen[x.label];
          by_label.emplace(k == 1 ? x.label : x.label + " #" + std::to_string(k), x);
        }
        if (!by_label.empty()) break;  // rank 0's results (every rank's times are its maxima)
      }
      return by_label;
    };
    const auto bc = cases(c);
    std::map<std::string, BenchResult> bb;
    if (b != nullptr) bb = cases(*b);
    for (const auto& [label, x] : bc) {
      const auto it = bb.find(label);
      if (b != nullptr && it == bb.end()) {
        out->added.push_back("c3bench case " + label);
        continue;
      }
      const std::string& case_label = label;  // (a structured binding cannot be captured)
      auto one = [&](const char* base, std::optional<double> vc, std::optional<double> vb,
                     const char* unit, bool up, bool absolute, bool derived = false) {
        if (!vc || (b != nullptr && !vb)) return;
        Metric d;
        d.base = base;
        d.id = std::string(base) + "[" + case_label + "]";
        d.group = "bench";
        d.unit = unit;
        d.up_is_worse = up;
        d.total = true;
        d.absolute = absolute;
        d.derived = derived;
        d.c = {*vc};
        if (vb) d.b = {*vb};
        add(std::move(d));
      };
      const BenchResult* y = b != nullptr ? &it->second : nullptr;
      auto positive = [](double v) { return v > 0 ? std::optional<double>(v) : std::nullopt; };
      auto factor = [](std::optional<double> s) {
        return s ? std::optional<double>(1 + *s) : std::nullopt;
      };
      // The measured times first; the ratios are computed from them (derived).
      one("t_c3", positive(x.t_c3), y ? positive(y->t_c3) : std::nullopt, "ns", true, false);
      one("t_comp", positive(x.t_comp), y ? positive(y->t_comp) : std::nullopt, "ns", true, false);
      one("t_comm", positive(x.t_comm), y ? positive(y->t_comm) : std::nullopt, "ns", true, false);
      one("fraction_of_ideal", x.fraction_of_ideal, y ? y->fraction_of_ideal : std::nullopt, "",
          false, true, true);
      one("compute_slowdown", factor(x.compute_slowdown),
          y ? factor(y->compute_slowdown) : std::nullopt, "x", true, false, true);
      one("comm_slowdown", factor(x.comm_slowdown), y ? factor(y->comm_slowdown) : std::nullopt,
          "x", true, false, true);
      one("busbw", x.busbw, y ? y->busbw : std::nullopt, "B/s", false, false);
    }
    for (const auto& [label, x] : bb) {
      if (!bc.contains(label)) out->removed.push_back("c3bench case " + label);
    }
  }
  return m;
}

}  // namespace c3::analyzer
