#include "c3/analyzer/summary/summary.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <climits>
#include <exception>
#include <functional>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "c3/analyzer/metrics/pattern.h"
#include "c3/common/workers.h"
#include "time_limits.h"

namespace c3::analyzer {
namespace {

// Step windows of process p: (index, name, start, end), sorted by start.
std::vector<StepSample> step_windows(const Trace& t, int p, const Pattern* step,
                                     std::string* source) {
  std::vector<StepSample> out;
  static const Pattern profiler = Pattern::compile("^ProfilerStep#[0-9]+$", "steps");
  auto take = [&](auto&& keep) {
    for (const Range& g : t.ranges) {
      if (g.process != p || g.end <= g.start || !keep(g)) continue;
      StepSample s;
      s.name = g.name;
      s.start = g.start;
      s.end = g.end;
      s.index = -1;
      out.push_back(std::move(s));
    }
  };
  if (step != nullptr) {
    take([&](const Range& g) { return step->search(g.name); });
    if (!out.empty()) *source = "--step '" + step->text() + "'";
  } else {
    take([&](const Range& g) { return profiler.match_prefix(g.name); });
    if (!out.empty()) {
      *source = "ProfilerStep#N";
      for (StepSample& s : out) {
        // The N of ProfilerStep#N; one past the summary's limit for indices (2^61: a
        // ProfilerStep#9223372036854775807 made a summary that did not read back) keeps its
        // order index instead.
        const char* b = s.name.data() + 13;
        int64_t n = -1;
        const auto [end, ec] = std::from_chars(b, s.name.data() + s.name.size(), n);
        s.index =
            ec == std::errc() && end == s.name.data() + s.name.size() && n <= kStampLimit ? n : -1;
      }
    } else {
      take([&](const Range& g) { return g.domain == "c3bench" && g.name.rfind("case ", 0) == 0; });
      if (!out.empty()) *source = "c3bench cases";
    }
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const StepSample& a, const StepSample& b) { return a.start < b.start; });
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].index < 0) out[i].index = static_cast<int64_t>(i);
  }
  return out;
}

using CollectiveGroups = std::map<std::pair<std::string, int64_t>, CollectiveStat>;

// a += b, field by field, throwing std::overflow_error past int64 (as checked_add).
void add_checked(IdleCauses& a, const IdleCauses& b) {
  checked_add(a.gaps, b.gaps);
  checked_add(a.idle, b.idle);
  checked_add(a.host_wait, b.host_wait);
  checked_add(a.kernel_wait, b.kernel_wait);
  checked_add(a.other, b.other);
  checked_add(a.comm_wait, b.comm_wait);
  checked_add(a.micro, b.micro);
  checked_add(a.macro, b.macro);
}

// A summary's independent parts, each writing only results of its own: run on this thread and,
// where this process has threads free (common::run_on_free_threads: the map of one input on
// 2 cores leaves one, the map of many inputs none), side by side. Which thread runs which part
// changes no result; an error is the first one in the order the parts were added (the order in
// which they ran one after the other), whichever started first.
class Parts {
 public:
  // `early`: started before the others (a long part, so that the others fill the other thread).
  void add(std::function<void()> part, bool early = false) {
    parts_.push_back(std::move(part));
    if (early) ++early_;
    order_.insert(early ? order_.begin() + static_cast<std::ptrdiff_t>(early_ - 1) : order_.end(),
                  parts_.size() - 1);
  }
  void run() {
    std::vector<std::exception_ptr> errors(parts_.size());
    std::atomic<size_t> next{0};
    common::run_on_free_threads(parts_.size(), [&] {
      for (size_t k = next++; k < order_.size(); k = next++) {
        try {
          parts_[order_[k]]();
        } catch (...) {
          errors[order_[k]] = std::current_exception();
        }
      }
    });
    parts_.clear();
    order_.clear();
    early_ = 0;
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }

 private:
  std::vector<std::function<void()>> parts_;
  std::vector<size_t> order_;  // the order they start in
  size_t early_ = 0;
};

// What the why/ parts of one rank found apart from the summary's own fields: the gaps that
// ended at a collective in each scope (turned into CommGap once the rank's collectives are
// known), the steps' idle causes and critical paths.
struct WhyParts {
  std::vector<CollectiveGap> rank_gaps, stream_gaps;
  std::vector<std::vector<CollectiveGap>> device_gaps, step_gaps;
  std::vector<IdleCauses> step_idle;
  std::vector<RankPath> step_paths;
};

// Why the GPU waited, for rank `pi` of the map (why/): idle causes of the rank, its devices,
// streams and steps, launch statistics and queues, over the same window as its breakdowns, as
// parts added to `parts` (`windows`: the steps', s.steps). The critical paths (why_paths) need
// the rank's collective records and run in the part that makes them; finish_why completes `s`
// once the parts have run.
void add_why_parts(Parts& parts, const Trace& t, const SummaryOptions& o, int pi,
                   const Intervals* win, const std::vector<int16_t>& devs,
                   const std::vector<Interval>& windows, RankSummary& s, WhyParts& w) {
  s.why = true;
  s.comm_gaps_known = true;
  s.sequences_known = true;
  parts.add([&t, &o, pi, win, &devs, &s, &w] {
    s.idle = idle_causes(t, {pi, -1}, o.idle, win, &w.rank_gaps);
    // One device: the rank's causes are the device's.
    w.device_gaps.resize(devs.size());
    for (size_t k = 0; k < devs.size(); ++k) {
      s.device_idle.emplace_back(devs[k], devs.size() == 1 ? s.idle
                                                           : idle_causes(t, {pi, devs[k]}, o.idle,
                                                                         win, &w.device_gaps[k]));
    }
  });
  parts.add([&t, &o, pi, win, &s, &w] {
    s.stream_idle = stream_idle(t, pi, o.idle, win, &w.stream_gaps);
    for (StreamIdle& x : s.stream_idle) x.process = 0;
  });
  parts.add([&t, &o, pi, win, &s] { s.launches = launch_stats(t, pi, o.launch, win); });
  parts.add([&t, &o, pi, win, &s] {
    s.queues = stream_queues(t, pi, o.queue, win);
    for (StreamQueue& q : s.queues) q.process = 0;
  });
  parts.add([&t, &o, pi, win, &s] { s.sequences = kernel_sequences(t, pi, o.sequences, win); });
  parts.add([&t, &o, pi, &windows, &w] {
    w.step_idle = window_idle_causes(t, pi, windows, o.idle, &w.step_gaps);
  });
}

// The critical path of each step, or of the whole run without steps (needs s.calls).
void why_paths(const Trace& t, const SummaryOptions& o, int pi,
               const std::vector<Interval>& windows, RankSummary& s, WhyParts& w) {
  const Activities& a = t.activities;
  PathOptions po;
  po.what_ifs = o.what_ifs;
  if (!windows.empty()) {
    w.step_paths = rank_paths(t, pi, windows, s.calls.comms, s.calls.ops, po);
  } else {
    int64_t first = INT64_MAX, last = INT64_MIN;
    const auto p = static_cast<int16_t>(pi);
    const auto lo = std::lower_bound(a.process.begin(), a.process.end(), p);
    const auto hi = std::upper_bound(lo, a.process.end(), p);
    for (auto i = static_cast<size_t>(lo - a.process.begin());
         i < static_cast<size_t>(hi - a.process.begin()); ++i) {
      first = std::min(first, a.has_calls() && a.call_start[i] != kNoCall
                                  ? std::min(a.call_start[i], a.start[i])
                                  : a.start[i]);
      last = std::max(last, a.end[i]);
    }
    if (first < last) {
      s.run_start = first;
      s.run_end = last;
      s.run_path = std::move(rank_paths(t, pi, {{first, last}}, s.calls.comms, s.calls.ops, po)[0]);
    }
  }
}

// After the parts: whether the trace has launch calls, the gaps that ended at a collective (for
// the reduce's communication wait; in the order rank, devices, streams, steps), the steps' idle
// causes and paths.
void finish_why(const Trace& t, int pi, RankSummary& s, WhyParts& w) {
  const Activities& a = t.activities;
  if (a.has_calls()) {
    const auto p = static_cast<int16_t>(pi);
    const auto lo = std::lower_bound(a.process.begin(), a.process.end(), p);
    const auto hi = std::upper_bound(lo, a.process.end(), p);
    for (auto i = static_cast<size_t>(lo - a.process.begin());
         i < static_cast<size_t>(hi - a.process.begin()) && !s.launch_calls; ++i) {
      s.launch_calls = a.call_end[i] != kNoCall;
    }
  }
  std::unordered_map<std::string, int32_t> comm_index;
  for (size_t k = 0; k < s.calls.comms.size(); ++k) {
    comm_index.emplace(s.calls.comms[k], static_cast<int32_t>(k));
  }
  auto keep = [&](const std::vector<CollectiveGap>& found, CommGap::Scope scope, int32_t step) {
    for (const CollectiveGap& g : found) {
      const Collective& col = t.collectives[static_cast<size_t>(g.collective)];
      auto it = comm_index.find(col.comm_id);
      if (it == comm_index.end()) continue;
      s.comm_gaps.push_back(
          {scope, a.device[g.row], a.stream[g.row], step, it->second, col.seq, g.from, g.to});
    }
  };
  keep(w.rank_gaps, CommGap::Scope::rank, -1);
  for (const std::vector<CollectiveGap>& found : w.device_gaps)
    keep(found, CommGap::Scope::device, -1);
  keep(w.stream_gaps, CommGap::Scope::stream, -1);
  for (size_t k = 0; k < s.steps.size(); ++k) {
    s.steps[k].idle = w.step_idle[k];
    keep(w.step_gaps[k], CommGap::Scope::step, static_cast<int32_t>(k));
  }
  for (size_t k = 0; k < w.step_paths.size(); ++k) s.steps[k].path = std::move(w.step_paths[k]);
}

// What the reduce keeps of a rank once it is added (Reducer::add): what the communication wait
// and the critical path need after the clocks are aligned. (Its process and collective records are
// kept beside, for the alignment and the matching.)
struct KeptRank {
  std::vector<CommGap> comm_gaps;
  bool comm_gaps_known = false;
  bool one_device = false;  // its device_idle has one device
  RankPath run_path;
  int64_t run_start = 0, run_end = 0;
};

// Adds rank `pi` to the report's totals and to the groups and steps being merged (the reduce's
// loop body, apart from what it keeps pointers to). Throws std::overflow_error past int64.
void reduce_rank(Report& r, const RankSummary& s, int pi, CollectiveGroups& groups,
                 std::map<std::string, InterferenceStat>& inter, std::map<int64_t, JobStep>& steps,
                 std::map<std::string, LaunchStat>& launches,
                 std::map<std::vector<std::string>, KernelSequence>& sequences) {
  r.process_info.push_back(s.process);
  checked_add(r.kernels, s.kernels);
  checked_add(r.memcpys, s.memcpys);
  checked_add(r.memsets, s.memsets);
  if (r.skipped == 0 && s.skipped > 0) r.first_skipped = s.first_skipped;
  checked_add(r.skipped, s.skipped);
  for (const auto& [key, n] : s.cpu_collectives) {
    int64_t& v = r.cpu_collectives[key];
    if (__builtin_add_overflow(v, n, &v)) v = INT64_MAX;
  }
  ScopeReport sr;
  sr.process = pi;
  sr.b = s.total;
  sr.idle = s.idle;
  add_checked(r.overall.idle, s.idle);
  r.why = r.why && s.why;
  r.launch_calls = r.launch_calls || s.launch_calls;
  for (StreamIdle x : s.stream_idle) {
    x.process = pi;
    r.streams.push_back(x);
  }
  for (StreamQueue q : s.queues) {
    q.process = pi;
    r.queues.push_back(q);
  }
  for (const LaunchStat& x : s.launches) {
    auto [it, fresh] = launches.try_emplace(x.name, x);
    if (!fresh) it->second.merge(x);
  }
  r.sequences_known = r.sequences_known && s.sequences_known;
  checked_add(r.sequence_occurrences, s.sequences.occurrences);
  checked_add(r.sequences_uncounted, s.sequences.uncounted);
  for (const KernelSequence& x : s.sequences.top) {
    auto [it, fresh] = sequences.try_emplace(x.names, x);
    if (!fresh) it->second.merge(x);
  }
  sr.simulated = is_simulated(s.process, s.devices, s.bench);
  r.overall.simulated = r.overall.simulated || sr.simulated;
  r.overall.b.add(s.total);
  r.processes.push_back(sr);
  for (const auto& [dev, b] : s.per_device) {
    ScopeReport ds;
    ds.process = pi;
    ds.device = dev;
    ds.b = b;
    for (const auto& [d, c] : s.device_idle) {
      if (d == dev) ds.idle = c;
    }
    r.devices.push_back(ds);
  }
  checked_add(r.matching_ranges, s.matching_ranges);
  for (RangeReport g : s.ranges) {
    g.process = pi;
    r.ranges.push_back(std::move(g));
  }
  for (const CollectiveStat& c : s.collectives) {
    auto [it, fresh] = groups.try_emplace({c.op, c.bucket}, c);
    if (!fresh) it->second.merge(c);
  }
  for (const InterferenceStat& x : s.interference) {
    auto [it, fresh] = inter.try_emplace(x.signature, x);
    if (!fresh) it->second.merge(x);
  }
  for (Contention c : s.contention) {
    c.process = pi;
    r.contention.push_back(std::move(c));
  }
  for (BenchResult b : s.bench) {
    b.process = static_cast<int16_t>(pi);
    r.bench.push_back(std::move(b));
  }
  if (r.step_source.empty()) r.step_source = s.step_source;
  for (const StepSample& st : s.steps) {
    JobStep& j = steps[st.index];
    j.index = st.index;
    if (j.name.empty()) j.name = st.name;
    ++j.ranks;
    j.step_ns = std::max(j.step_ns, st.end - st.start);
    j.mean.add(st.b);
    add_checked(j.idle, st.idle);
  }
}

// Moves the communication wait found in gaps (GapWait) from other to comm_wait, in every total
// its scope is part of. `steps` are the job steps being summed.
void apply_waits(Report& r, const std::vector<KeptRank>& ranks, std::map<int64_t, JobStep>& steps,
                 const std::vector<GapWait>& waits) {
  for (const GapWait& g : waits) {
    const auto i = static_cast<size_t>(g.rank);
    if (g.rank < 0 || i >= ranks.size() || g.wait <= 0) continue;
    const int64_t wait = g.wait;
    auto move = [wait](IdleCauses& x) {
      const int64_t w = std::min(wait, x.other);
      x.other -= w;
      x.comm_wait += w;
    };
    const int pi = g.rank;
    switch (g.scope) {
      case CommGap::Scope::rank:
        move(r.processes[i].idle);
        move(r.overall.idle);
        if (ranks[i].one_device) {
          for (ScopeReport& d : r.devices) {
            if (d.process == pi) move(d.idle);
          }
        }
        break;
      case CommGap::Scope::device:
        for (ScopeReport& d : r.devices) {
          if (d.process == pi && d.device == g.device) move(d.idle);
        }
        break;
      case CommGap::Scope::stream:
        for (StreamIdle& x : r.streams) {
          if (x.process == pi && x.device == g.device && x.stream == g.stream) move(x.causes);
        }
        break;
      case CommGap::Scope::step: {
        const auto k = static_cast<size_t>(g.step);
        if (g.step < 0 || k >= r.steps[i].size()) break;
        StepSample& st = r.steps[i][k];
        move(st.idle);
        auto it = steps.find(st.index);
        if (it != steps.end()) move(it->second.idle);
        break;
      }
    }
  }
}

// Communication wait (why/idle.h): the part of each CommGap before the last other rank's
// arrival at its collective moves from other to comm_wait, in every total the gap is part of.
// Runs after the clocks are aligned. `given`: the waits as the collectives' owners found them
// (distributed.h; the ranks' gaps are not here then).
void apply_comm_wait(Report& r, const std::vector<KeptRank>& ranks,
                     const std::vector<Process>& processes,
                     const std::vector<const RankCollectives*>& calls,
                     std::map<int64_t, JobStep>& steps, const std::vector<GapWait>* given) {
  r.comm_wait_known = !ranks.empty();
  for (const KeptRank& k : ranks) r.comm_wait_known = r.comm_wait_known && k.comm_gaps_known;
  if (given != nullptr) {
    apply_waits(r, ranks, steps, *given);
    return;
  }
  using Key = std::pair<std::string, int64_t>;
  std::map<Key, LastArrivals> last;
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (const CommGap& g : ranks[i].comm_gaps) {
      const auto c = static_cast<size_t>(g.comm);
      if (g.comm >= 0 && c < calls[i]->comms.size()) last.try_emplace({calls[i]->comms[c], g.seq});
    }
  }
  if (last.empty()) return;
  for (size_t i = 0; i < calls.size(); ++i) {
    const RankCollectives& rc = *calls[i];
    for (const CollectiveRecord& rec : rc.records) {
      const auto c = static_cast<size_t>(rec.comm);
      if (rec.comm < 0 || c >= rc.comms.size() || rec.gpu_start < 0) continue;
      auto it = last.find({rc.comms[c], rec.seq});
      if (it == last.end()) continue;
      add_arrival(it->second, i, rec.gpu_start, processes[i].offset_ns);
    }
  }
  std::vector<GapWait> waits;
  for (size_t i = 0; i < ranks.size(); ++i) {
    for (const CommGap& g : ranks[i].comm_gaps) {
      const auto c = static_cast<size_t>(g.comm);
      if (g.comm < 0 || c >= calls[i]->comms.size()) continue;
      const int64_t wait =
          gap_wait(g, last.at({calls[i]->comms[c], g.seq}), i, processes[i].offset_ns);
      if (wait > 0)
        waits.push_back({static_cast<int32_t>(i), g.scope, g.device, g.stream, g.step, wait});
    }
  }
  apply_waits(r, ranks, steps, waits);
}

// The critical path of each job step across ranks (why/path_join.h), after the clocks are aligned.
void join_paths(Report& r, const std::vector<KeptRank>& ranks,
                const std::vector<Process>& processes,
                const std::vector<const RankCollectives*>& calls, const SummaryOptions& o) {
  r.what_ifs = o.what_ifs;
  if (!r.why) return;
  std::map<int64_t, std::pair<std::string, std::vector<StepRankPath>>> steps;
  bool any_steps = false;
  for (size_t i = 0; i < r.steps.size() && i < ranks.size(); ++i) {
    for (const StepSample& st : r.steps[i]) {
      any_steps = true;
      auto& [name, v] = steps[st.index];
      if (name.empty()) name = st.name;
      v.push_back({static_cast<int>(i), processes[i].rank.value_or(-1), st.start, st.end,
                   processes[i].offset_ns, &st.path, calls[i]});
    }
  }
  if (!any_steps) {
    auto& [name, v] = steps[-1];
    name = "whole run";
    for (size_t i = 0; i < ranks.size(); ++i) {
      if (ranks[i].run_end <= ranks[i].run_start) continue;
      v.push_back({static_cast<int>(i), processes[i].rank.value_or(-1), ranks[i].run_start,
                   ranks[i].run_end, processes[i].offset_ns, &ranks[i].run_path, calls[i]});
    }
    if (v.empty()) steps.clear();
  }
  for (const auto& [index, entry] : steps) {
    r.paths.push_back(join_step(index, entry.first, entry.second, o.what_ifs));
  }
}

}  // namespace

int64_t gap_wait(const CommGap& g, const LastArrivals& l, size_t rank, int64_t offset) {
  const int64_t others = l.who == rank ? l.second : l.first;
  int64_t local = 0;  // the other ranks' last arrival on this rank's clock
  if (others == INT64_MIN || __builtin_sub_overflow(others, offset, &local)) return 0;
  if (g.to < g.from) return 0;
  return std::clamp<int64_t>(local, g.from, g.to) - g.from;
}

size_t RankSummary::bytes() const {
  auto str = [](const std::string& x) { return x.capacity() > 15 ? x.capacity() + 1 : 0; };
  size_t b = sizeof(*this) + str(first_skipped) + str(step_source) + str(process.source) +
             str(process.host) + str(process.command_line);
  b += devices.capacity() * sizeof(Device) + per_device.capacity() * sizeof(per_device[0]);
  b += ranges.capacity() * sizeof(RangeReport) + steps.capacity() * sizeof(StepSample);
  for (const RangeReport& g : ranges) b += str(g.name);
  for (const StepSample& st : steps) b += str(st.name);
  b += collectives.capacity() * sizeof(CollectiveStat);
  for (const CollectiveStat& c : collectives)
    b += str(c.op) + c.algbw.bytes() + c.busbw.bytes() + c.duration.bytes();
  b += kernel_stats.capacity() * sizeof(KernelStat);
  for (const KernelStat& k : kernel_stats) b += str(k.name) + k.duration.bytes();
  b += process.versions.capacity() * sizeof(process.versions[0]);
  for (const auto& [k, v] : process.versions) b += str(k) + str(v);
  b += interference.capacity() * sizeof(InterferenceStat);
  for (const InterferenceStat& x : interference)
    b += str(x.signature) + x.alone.bytes() + x.overlapped.bytes();
  b += contention.capacity() * sizeof(Contention) + bench.capacity() * sizeof(BenchResult);
  b += calls.records.capacity() * sizeof(CollectiveRecord);
  b += device_idle.capacity() * sizeof(device_idle[0]) +
       stream_idle.capacity() * sizeof(StreamIdle) + queues.capacity() * sizeof(StreamQueue);
  b += launches.capacity() * sizeof(LaunchStat) + comm_gaps.capacity() * sizeof(CommGap);
  b += sequences.top.capacity() * sizeof(KernelSequence);
  for (const KernelSequence& q : sequences.top) {
    b += q.names.capacity() * sizeof(std::string);
    for (const std::string& x : q.names) b += str(x);
  }
  auto path_bytes = [&](const RankPath& p) {
    size_t n = p.chains.capacity() * sizeof(PathChain);
    n += p.names.capacity() * sizeof(std::string);
    for (const std::string& x : p.names) n += str(x);
    for (const PathChain& c : p.chains) n += c.removed.capacity() * 8;
    return n;
  };
  b += path_bytes(run_path);
  for (const StepSample& st : steps) b += path_bytes(st.path);
  for (const LaunchStat& x : launches)
    b += str(x.name) + x.cpu.bytes() + x.gpu.bytes() + x.delay.bytes();
  for (const std::string& x : calls.comms) b += sizeof(std::string) + str(x);
  for (const std::string& x : calls.ops) b += sizeof(std::string) + str(x);
  return b;
}

std::vector<RankSummary> summarize(const Trace& t, const SummaryOptions& o, const CommRows& rows) {
  if (!t.pending_shapes.empty()) {
    throw std::logic_error("summarize: kernel shapes are still pending (load_kernel_shapes)");
  }
  Pattern range_re, step_re;
  if (!o.range.empty()) range_re = Pattern::compile(o.range, "--range");
  if (!o.step.empty()) step_re = Pattern::compile(o.step, "--step");
  const Activities& a = t.activities;
  std::vector<RankSummary> out(t.processes.size());
  for (size_t i = 0; i < a.size(); ++i) {
    RankSummary& s = out[static_cast<size_t>(a.process[i])];
    switch (a.kind[i]) {
      case Kind::kernel:
        ++s.kernels;
        break;
      case Kind::memcpy:
        ++s.memcpys;
        break;
      case Kind::memset:
        ++s.memsets;
        break;
    }
  }
  // The contention of the whole trace, side by side with the first process's parts.
  std::vector<Contention> cont;
  if (t.processes.empty()) cont = contention(t);
  for (size_t p = 0; p < t.processes.size(); ++p) {
    const int pi = static_cast<int>(p);
    RankSummary& s = out[p];
    s.process = t.processes[p];
    if (p == 0) {
      s.skipped = t.skipped;
      s.first_skipped = t.first_skipped;
      s.cpu_collectives = t.cpu_collectives;
    }
    for (Device d : t.devices) {
      if (d.process != pi) continue;
      d.process = 0;
      s.devices.push_back(std::move(d));
    }
    Intervals window;
    if (!o.range.empty()) {
      for (const Range& g : t.ranges) {
        // An NVTX mark (no duration) is no window.
        if (g.process != pi || g.end <= g.start || !range_re.search(g.name)) continue;
        ++s.matching_ranges;
        window.push_back({g.start, g.end});
        RangeReport rr;
        rr.process = 0;
        rr.name = g.name;
        rr.start = g.start;
        rr.end = g.end;
        const Intervals w{{g.start, g.end}};
        rr.b = breakdown(t, {pi, -1}, &w);
        span_over(rr.b, w);
        s.ranges.push_back(std::move(rr));
      }
      window = union_of(std::move(window));
    }
    const Intervals* win = o.range.empty() ? nullptr : &window;
    std::vector<int16_t> devs;
    for (const Device& d : s.devices) devs.push_back(d.device);
    // Devices that have activities but no device row.
    for (size_t i = 0; i < a.size(); ++i) {
      if (a.process[i] == pi && std::find(devs.begin(), devs.end(), a.device[i]) == devs.end())
        devs.push_back(a.device[i]);
    }
    std::sort(devs.begin(), devs.end());
    s.steps = step_windows(t, pi, o.step.empty() ? nullptr : &step_re, &s.step_source);
    std::vector<Interval> windows;
    windows.reserve(s.steps.size());
    for (const StepSample& st : s.steps) windows.push_back({st.start, st.end});
    // The parts, in the order they ran one after the other (the order of their errors); the
    // longest (the critical paths, after the collective records they need) starts first.
    Parts parts;
    if (p == 0) parts.add([&t, &cont] { cont = contention(t); });
    std::vector<CommOverlap> comm;
    std::vector<Breakdown> step_b;
    WhyParts why;
    parts.add([&t, pi, win, &s] {
      s.total = breakdown(t, {pi, -1}, win);
      // Over ranges, spans are the time inside them (span_over).
      if (win != nullptr) span_over(s.total, *win);
    });
    parts.add([&t, pi, win, &devs, &s] {
      for (int16_t d : devs) {
        s.per_device.emplace_back(d, breakdown(t, {pi, d}, win));
        if (win != nullptr) span_over(s.per_device.back().second, *win);
      }
    });
    parts.add([&t, pi, win, &comm, &s] {
      comm = comm_overlap(t, {pi, -1}, win);
      s.collectives = collective_stats(t, comm);
    });
    parts.add([&t, pi, win, &s] { s.kernel_stats = kernel_stats(t, pi, win); });
    parts.add([&t, pi, &windows, &step_b] { step_b = window_breakdowns(t, pi, windows); });
    // (Its errors come before the other why/ parts', the paths' included.)
    parts.add(
        [&t, &o, pi, &windows, &s, &why] {
          s.calls = collectives_of(t, pi);
          if (o.why) why_paths(t, o, pi, windows, s, why);
        },
        true);
    if (o.why) add_why_parts(parts, t, o, pi, win, devs, windows, s, why);
    parts.add([&t, &o, pi, &s] { s.interference = interference_stats(t, o.interference, pi); });
    parts.run();
    // The rows on the caller's thread, rank after rank.
    if (rows) rows(t, comm);
    for (size_t k = 0; k < s.steps.size(); ++k) s.steps[k].b = step_b[k];
    if (o.why) finish_why(t, pi, s, why);
    for (Contention& c : cont) {
      if (c.process != pi) continue;
      c.process = 0;
      s.contention.push_back(std::move(c));
    }
    for (BenchResult b : t.bench) {
      if (b.process != pi) continue;
      b.process = 0;
      s.bench.push_back(std::move(b));
    }
    // The sketches' counting arrays give way to their bins: a summary is held until the reduce.
    for (CollectiveStat& c : s.collectives) {
      for (Distribution* d : {&c.algbw, &c.busbw, &c.duration}) d->settle();
    }
    for (KernelStat& k : s.kernel_stats) k.duration.settle();
    for (InterferenceStat& x : s.interference) {
      x.alone.settle();
      x.overlapped.settle();
    }
    for (LaunchStat& x : s.launches) {
      for (Distribution* d : {&x.cpu, &x.gpu, &x.delay}) d->settle();
    }
  }
  return out;
}

struct Reducer::State {
  SummaryOptions o;
  Report r;
  CollectiveGroups groups;
  std::map<std::string, InterferenceStat> inter;
  std::map<int64_t, JobStep> steps;
  std::map<std::string, LaunchStat> launches;
  std::map<std::vector<std::string>, KernelSequence> sequences;
  // Per rank, in the job's order: clock alignment and matching run on the processes and their
  // collective records only.
  std::vector<Process> processes;
  std::vector<RankCollectives> calls;
  std::vector<KeptRank> kept;
};

Reducer::Reducer(std::vector<std::string> inputs, const SummaryOptions& o)
    : s_(std::make_unique<State>()) {
  s_->o = o;
  Report& r = s_->r;
  r.inputs = std::move(inputs);
  r.overall.process = -1;
  r.why = true;  // (until a rank without them)
  r.sequences_known = true;
  r.sequence_options = o.sequences;
  r.idle_options = o.idle;
  r.launch_options = o.launch;
  r.queue_options = o.queue;
}

Reducer::~Reducer() = default;

size_t Reducer::ranks() const {
  return s_->processes.size();
}

const std::vector<Process>& Reducer::processes() const {
  return s_->processes;
}

void Reducer::add(RankSummary&& s) {
  State& x = *s_;
  const size_t i = x.processes.size();
  const int pi = static_cast<int>(i);
  // Every sum is checked: a summary's numbers are each within the limits (time_limits.h), but
  // the totals of 8,192 ranks or more at those limits pass int64.
  try {
    reduce_rank(x.r, s, pi, x.groups, x.inter, x.steps, x.launches, x.sequences);
  } catch (const std::overflow_error&) {
    const std::string& where = s.input.empty() ? s.process.source : s.input;
    throw std::invalid_argument(
        "'" + where + "': adding rank " + std::to_string(i) +
        " (counting from 0) to the job's totals passes int64 (2^63): its numbers are out of "
        "range, or the job has 8,192 ranks or more at a summary's per-rank limits; analyze fewer "
        "at a time");
  }
  x.processes.push_back(std::move(s.process));
  x.calls.push_back(std::move(s.calls));
  KeptRank k;
  k.comm_gaps = std::move(s.comm_gaps);
  k.comm_gaps_known = s.comm_gaps_known;
  k.one_device = s.device_idle.size() == 1;
  k.run_path = std::move(s.run_path);
  k.run_start = s.run_start;
  k.run_end = s.run_end;
  x.kept.push_back(std::move(k));
  // The report takes the per-rank steps over (they are most of a summary's bytes).
  x.r.steps.push_back(std::move(s.steps));
}

Report Reducer::finish(bool align, CrossRankParts* parts) {
  State& x = *s_;
  Report r = std::move(x.r);
  const SummaryOptions& o = x.o;
  std::vector<Process>& processes = x.processes;
  std::vector<const RankCollectives*> calls;
  calls.reserve(x.calls.size());
  for (const RankCollectives& c : x.calls) calls.push_back(&c);
  // (every rank had them; with no rank, no)
  r.why = r.why && !processes.empty();
  r.sequences_known = r.sequences_known && !processes.empty();
  if (parts != nullptr) {
    for (size_t i = 0; i < processes.size() && i < parts->offsets.size(); ++i)
      processes[i].offset_ns = parts->offsets[i];
    if (align) r.clocks = parts->clocks;
  } else if (align) {
    r.clocks = align_clocks(processes, calls);
  }
  apply_comm_wait(r, x.kept, processes, calls, x.steps, parts ? &parts->waits : nullptr);
  for (auto& [k, j] : x.steps) {
    // Means over the ranks that have the step.
    Breakdown& m = j.mean;
    const int64_t n = j.ranks;
    auto div = [n](int64_t& v) { v /= n; };
    // (first and last stay the earliest start and latest end.)
    for (int64_t* v : {&m.activities, &m.span, &m.busy, &m.idle, &m.overlap, &m.exposed_comm,
                       &m.exposed_memcpy, &m.exposed_other, &m.non_compute})
      div(*v);
    for (int64_t& v : m.time) div(v);
    for (int64_t* v : {&j.idle.gaps, &j.idle.idle, &j.idle.host_wait, &j.idle.kernel_wait,
                       &j.idle.other, &j.idle.comm_wait, &j.idle.micro, &j.idle.macro})
      div(*v);
    for (int64_t& v : m.by_mask) div(v);
    m.overlap_pct =
        m.comm() > 0 ? 100.0 * static_cast<double>(m.overlap) / static_cast<double>(m.comm()) : 0.0;
    r.job_steps.push_back(j);
  }
  std::vector<CollectiveStat> cs;
  cs.reserve(x.groups.size());
  for (auto& [k, g] : x.groups) cs.push_back(std::move(g));
  r.collectives = collective_groups(cs);
  std::vector<InterferenceStat> merged;
  merged.reserve(x.inter.size());
  for (auto& [k, v] : x.inter) merged.push_back(std::move(v));
  r.interference = interference_rows(merged, o.interference);
  for (auto& [k, v] : x.launches) r.launches.push_back(std::move(v));
  // The job's most frequent sequences: each rank's kept ones summed (a sequence frequent over
  // the job but kept by no rank is missed: docs/analyze.md).
  for (auto& [k, v] : x.sequences) r.sequences.push_back(std::move(v));
  sort_sequences(r.sequences);
  if (r.sequences.size() > kSequencesKept) r.sequences.resize(kSequencesKept);
  if (parts != nullptr && parts->joined) {
    r.what_ifs = o.what_ifs;
    if (r.why) r.paths = std::move(parts->paths);
  } else {
    join_paths(r, x.kept, processes, calls, o);
  }
  r.cross = parts ? std::move(parts->cross) : cross_rank(processes, calls);
  order_by_rank(r);
  s_ = std::make_unique<State>();  // (finished: what it held is given back)
  return r;
}

Report reduce(const std::vector<RankSummary>& ranks, const std::vector<std::string>& inputs,
              const SummaryOptions& o, bool align) {
  std::vector<RankSummary> copy = ranks;
  return reduce(std::move(copy), inputs, o, align);
}

Report reduce(std::vector<RankSummary>&& ranks, const std::vector<std::string>& inputs,
              const SummaryOptions& o, bool align, CrossRankParts* parts) {
  Reducer red(inputs, o);
  for (RankSummary& s : ranks) {
    red.add(std::move(s));
    s = {};  // (merged: its memory is given back as the reduce goes)
  }
  return red.finish(align, parts);
}

}  // namespace c3::analyzer
