#include "c3/analyzer/report/report.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "c3/analyzer/metrics/names.h"
#include "c3/analyzer/open/load.h"
#include "c3/analyzer/summary/summary.h"
#include "c3/common/units.h"
#include "c3/tracedb/output_file.h"

namespace c3::analyzer {
namespace {

// Text from a trace (names, hosts, labels) as the terminal may show it: control characters,
// escape sequences, invalid UTF-8 and bidirectional overrides escaped (tracedb::printable).
std::string tx(const std::string& s) {
  return tracedb::printable(s);
}

// A process's label for text output.
std::string label_of(const Report& r, int p) {
  return tx(r.process_info[static_cast<size_t>(p)].label());
}

// An overlap % (or another share) that has no denominator is null in JSON, not 0: "0% hidden"
// would read "all exposed".
nlohmann::json ratio(bool defined, double v) {
  return defined ? nlohmann::json(v) : nlohmann::json(nullptr);
}

// A size, bandwidth or count that is 0 when unknown: null in JSON.
template <class T>
nlohmann::json known(T v) {
  return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::string ms(int64_t ns) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", static_cast<double>(ns) / 1e6);
  return b;
}

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", v);
  return b;
}

std::string gbps(double bytes_per_s) {
  if (bytes_per_s <= 0) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", bytes_per_s / 1e9);
  return b;
}

std::string duration(double ns) {
  return common::format_duration(ns, common::DurationStyle::report);
}

// Report::order, or index order for a report the reduce did not make.
std::vector<int> order_of(const Report& r) {
  if (r.order.size() == r.process_info.size()) return r.order;
  std::vector<int> o(r.process_info.size());
  for (size_t p = 0; p < o.size(); ++p) o[p] = static_cast<int>(p);
  return o;
}

nlohmann::json breakdown_json(const Breakdown& b) {
  nlohmann::json j;
  j["activities"] = b.activities;
  j["first_ns"] = b.first;
  j["last_ns"] = b.last;
  j["span_ns"] = b.span;
  j["busy_ns"] = b.busy;
  j["idle_ns"] = b.idle;
  j["compute_ns"] = b.compute();
  j["comm_ns"] = b.comm();
  j["memory_ns"] = b.memory();
  j["other_ns"] = b.time[static_cast<size_t>(Class::other)];
  j["overlap_ns"] = b.overlap;
  j["overlap_pct"] = ratio(b.comm() > 0, b.overlap_pct);
  j["exposed_comm_ns"] = b.exposed_comm;
  j["exposed_memcpy_ns"] = b.exposed_memcpy;
  j["exposed_other_ns"] = b.exposed_other;
  j["non_compute_ns"] = b.non_compute;
  nlohmann::json kinds = nlohmann::json::object();
  for (size_t m = 1; m < b.by_mask.size(); ++m) {
    if (b.by_mask[m] > 0) kinds[mask_name(static_cast<int>(m))] = b.by_mask[m];
  }
  j["kernel_type_breakdown_ns"] = kinds;
  return j;
}

nlohmann::json process_json(const Report& r, int p) {
  const Process& pr = r.process_info[static_cast<size_t>(p)];
  nlohmann::json j;
  j["rank"] = pr.rank ? nlohmann::json(*pr.rank) : nlohmann::json(nullptr);
  j["pid"] = pr.pid;
  j["host"] = pr.host;
  j["source"] = pr.source;
  j["label"] = pr.label();
  return j;
}

// The name column of the interference table: kernel names shortened as Nsight Systems shows
// them, cut in the middle so that the launch shape stays whole.
std::vector<std::string> interference_names(const std::vector<const InterferenceRow*>& rows) {
  std::vector<std::string> sigs;
  sigs.reserve(rows.size());
  for (const InterferenceRow* x : rows) sigs.push_back(x->signature);
  std::vector<std::string> out = short_signatures(sigs);
  for (size_t i = 0; i < out.size(); ++i) {
    const size_t shape = out[i].rfind(" <<<");
    const size_t tail = shape == std::string::npos ? 0 : out[i].size() - shape;
    const size_t room = tail < 46 ? 52 - tail : 6;
    out[i] = tx(elide_middle(out[i].substr(0, out[i].size() - tail), room) +
                out[i].substr(out[i].size() - tail));
    if (rows[i]->peer_wait == InterferenceRow::PeerWait::collective) out[i] += " *";
  }
  return out;
}

void print_interference(FILE* out, const Report& r) {
  if (!r.interference.empty()) {
    // Rows with a verdict; the others are counted (all of them are in --json).
    std::vector<const InterferenceRow*> shown;
    int64_t few = 0, p2p = 0;
    for (const auto& x : r.interference) {
      if (x.peer_wait == InterferenceRow::PeerWait::point_to_point) {
        ++p2p;
      } else if (!x.enough) {
        ++few;
      } else if (shown.size() < 15) {
        shown.push_back(&x);
      }
    }
    int64_t verdicts = 0;
    for (const auto& x : r.interference) verdicts += x.verdict() ? 1 : 0;
    std::fprintf(out,
                 "\nInterference: duration alone vs overlapped (>= 50%% of it) with the other kind "
                 "on the same device; %" PRId64 " signature(s) with a verdict%s\n",
                 verdicts, verdicts > 15 ? ", the 15 with the most time" : "");
    if (!shown.empty()) {
      std::fprintf(out, "%-52s %6s %6s %10s %10s %9s %18s\n", "operation", "alone", "overl",
                   "med alone", "med overl", "slowdown", "95% interval");
      const std::vector<std::string> names = interference_names(shown);
      bool starred = false;
      for (size_t i = 0; i < shown.size(); ++i) {
        const InterferenceRow& x = *shown[i];
        char slow[32], ci[64];
        std::snprintf(slow, sizeof slow, "%+.1f%%", 100 * x.slowdown);
        std::snprintf(ci, sizeof ci, "[%+.1f%%, %+.1f%%]", 100 * x.ci_low, 100 * x.ci_high);
        std::fprintf(out, "%-52s %6" PRId64 " %6" PRId64 " %10s %10s %9s %18s\n", names[i].c_str(),
                     x.alone, x.overlapped, duration(x.median_alone_ns).c_str(),
                     duration(x.median_overlapped_ns).c_str(), slow, ci);
        starred = starred || x.peer_wait == InterferenceRow::PeerWait::collective;
      }
      if (starred) {
        std::fprintf(out,
                     "  * a collective: its time includes waiting for the other ranks (see "
                     "\"Across ranks\"), not only interference\n");
      }
    }
    if (few > 0) {
      std::fprintf(out,
                   "  %" PRId64 " %s without enough samples alone and overlapped for a verdict\n",
                   few, shown.empty() ? "signature(s)" : "more");
    }
    if (p2p > 0) {
      std::fprintf(out,
                   "  %" PRId64
                   " point-to-point signature(s) (Send/Recv) left out: their time is mostly "
                   "waiting for the peer (cross-rank skew)\n",
                   p2p);
    }
    if (few > 0 || p2p > 0) std::fprintf(out, "  (every row: analyze --json)\n");
  }
  if (!r.bench.empty()) {
    std::fprintf(out, "\nControlled experiments (c3bench results in the trace%s)\n",
                 r.bench.front().simulated ? "; SIMULATED predictions" : "");
    std::fprintf(out, "%-58s %9s %9s %7s %7s %6s %6s  %s\n", "case", "slow_cp", "slow_cm", "ideal",
                 "real", "frac", "r/i", "class");
    auto p = [](const std::optional<double>& v) {
      if (!v) return std::string("-");
      char b[32];
      std::snprintf(b, sizeof b, "%+.1f%%", 100 * *v);
      return std::string(b);
    };
    auto x = [](const std::optional<double>& v) {
      if (!v) return std::string("-");
      char b[32];
      std::snprintf(b, sizeof b, "%.2f", *v);
      return std::string(b);
    };
    int64_t marked = 0;
    for (const auto& b : r.bench) {
      const bool lost = b.fraction_of_ideal && *b.fraction_of_ideal < 0;
      marked += lost ? 1 : 0;
      std::fprintf(out,
                   lost ? "%-58.58s %9s %9s %7s %7s %6s %6s  %-11s%s\n"
                        : "%-58.58s %9s %9s %7s %7s %6s %6s  %s%s\n",
                   tx(b.label).c_str(), p(b.compute_slowdown).c_str(), p(b.comm_slowdown).c_str(),
                   x(b.ideal_speedup).c_str(), x(b.realized_speedup).c_str(),
                   x(b.fraction_of_ideal).c_str(), x(b.realized_over_ideal).c_str(),
                   tx(b.scenario).c_str(), lost ? " !frac<0" : "");
    }
    // The columns in words (docs/c3bench.md), so that the table reads without the docs.
    std::fprintf(out,
                 "  slow_cp, slow_cm: compute and comm slowdown while concurrent (T_concurrent / "
                 "T_alone - 1)\n"
                 "  ideal: (T_comp + T_comm) / max(T_comp, T_comm); real: (T_comp + T_comm) / "
                 "T_c3; frac: (real - 1) / (ideal - 1); r/i: real / ideal\n"
                 "  class: compute-long, comm-long or balanced (at 1.15x); -: not measured or not "
                 "defined for the case\n");
    if (marked > 0) {
      std::fprintf(out,
                   "  !frac<0 (%" PRId64
                   " case(s)): running both together took longer than one after the other\n",
                   marked);
    }
  }
}

void print_contention(FILE* out, const Report& r) {
  bool any = false;
  for (const auto& c : r.contention)
    any = any || c.kernels_with_demand > 0 || c.copy_overlap_ns > 0 || c.queued_kernels > 0;
  if (!any) return;
  std::fprintf(out, "\nContention per device\n");
  for (const auto& c : r.contention) {
    std::fprintf(out,
                 "  %s device %d: SM oversubscribed %s ms (%" PRId64
                 " kernels with known SM demand, %" PRId64
                 " unknown); same-direction copies together %s ms\n",
                 label_of(r, c.process).c_str(), c.device, ms(c.oversubscribed_ns).c_str(),
                 c.kernels_with_demand, c.kernels_unknown, ms(c.copy_overlap_ns).c_str());
    for (size_t i = 0; i < c.oversubscribed_kernels.size() && i < 3; ++i) {
      std::fprintf(
          out, "    oversubscribed with %s: %s\n",
          tx(elide_middle(short_kernel_name(c.oversubscribed_kernels[i].first), 60)).c_str(),
          duration(static_cast<double>(c.oversubscribed_kernels[i].second)).c_str());
    }
    for (const auto& [dir, share] : c.copy_bandwidth_share) {
      std::fprintf(out, "    %s copies: median %.1f%% of the device's memory bandwidth\n",
                   tx(dir).c_str(), 100 * share);
    }
    if (c.queued_kernels > 0) {
      std::fprintf(out,
                   "    launch queueing (start - submitted) over %" PRId64
                   " kernels: median %s, p95 %s, max %s\n",
                   c.queued_kernels, duration(c.queue_median_ns).c_str(),
                   duration(c.queue_p95_ns).c_str(), duration(c.queue_max_ns).c_str());
    }
  }
}

void print_cross_rank(FILE* out, const Report& r) {
  if (r.cross.collectives.empty()) return;
  std::fprintf(out,
               "\nAcross ranks: %zu collectives matched by communicator and sequence (%" PRId64
               " seen by one process only)\n",
               r.cross.collectives.size(), r.cross.unmatched);
  std::vector<int64_t> skews;
  for (const auto& m : r.cross.collectives) skews.push_back(m.skew_ns);
  std::sort(skews.begin(), skews.end());
  std::fprintf(
      out, "  arrival skew: median %s, p95 %s, max %s\n",
      duration(static_cast<double>(skews[skews.size() / 2])).c_str(),
      duration(static_cast<double>(
                   skews[static_cast<size_t>(0.95 * static_cast<double>(skews.size() - 1))]))
          .c_str(),
      duration(static_cast<double>(skews.back())).c_str());
  if (r.cross.tied > 0) {
    std::fprintf(out,
                 "  %" PRId64
                 " collective(s) without a straggler: the latest ranks arrived together (equal "
                 "starts; within 1 us where a trace has whole microseconds)\n",
                 r.cross.tied);
  }
  std::fprintf(out, "  %-22s %9s %14s %11s\n", "rank", "matched", "waited (ms)", "straggler");
  for (const auto& w : r.cross.ranks) {
    std::fprintf(out, "  %-22s %9" PRId64 " %14s %11" PRId64 "\n", label_of(r, w.process).c_str(),
                 w.matched, ms(w.wait_ns).c_str(), w.straggler_count);
  }
  for (const auto& c : r.clocks) {
    if (c.how == "reference") continue;
    std::fprintf(out, "  clock of %s: %s%s\n", label_of(r, c.process).c_str(), tx(c.how).c_str(),
                 c.matched ? (", offset " + duration(static_cast<double>(c.offset_ns)) + " from " +
                              std::to_string(c.matched) + " collectives")
                                 .c_str()
                           : "");
  }
}

nlohmann::json idle_json(const IdleCauses& c) {
  nlohmann::json j = {{"gaps", c.gaps},
                      {"idle_ns", c.idle},
                      {"host_wait_ns", c.host_wait},
                      {"kernel_wait_ns", c.kernel_wait},
                      {"other_ns", c.other},
                      {"comm_wait_ns", c.comm_wait}};
  if (c.micro + c.macro > 0) {
    j["micro_ns"] = c.micro;
    j["macro_ns"] = c.macro;
  }
  return j;
}

void add_capped(int64_t& sum, int64_t v) {
  if (__builtin_add_overflow(sum, v, &sum)) sum = INT64_MAX;
}

std::string share(int64_t part, int64_t whole) {
  if (whole <= 0) return "-";
  return pct(100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// The job's most frequent kernel sequences (--why).
void print_sequences(FILE* out, const Report& r) {
  const int len = r.sequence_options.length;
  std::fprintf(out,
               "\nFrequent kernel sequences (%d consecutive kernels of one stream, by normalized "
               "name; count = occurrences over every rank and stream; span = first start to last "
               "end, summed)\n",
               len);
  if (!r.sequences_known) {
    std::fprintf(out, "  not in these summaries (schema 4 or older)\n");
    return;
  }
  if (r.sequences.empty()) {
    std::fprintf(out, "  none: no stream ran %d kernels\n", len);
    return;
  }
  std::fprintf(out, "%4s %10s %11s %11s %11s  %s\n", "#", "count", "span ms", "gpu ms", "mean us",
               "kernels");
  const size_t n = std::min<size_t>(r.sequences.size(), 10);
  for (size_t k = 0; k < n; ++k) {
    const KernelSequence& q = r.sequences[k];
    std::string names;
    for (const std::string& x : q.names) names += (names.empty() ? "" : " > ") + tx(x);
    std::fprintf(
        out, "%4zu %10" PRId64 " %11s %11s %11.2f  %s\n", k + 1, q.count, ms(q.span_ns).c_str(),
        ms(q.gpu_ns).c_str(),
        q.count > 0 ? static_cast<double>(q.span_ns) / static_cast<double>(q.count) / 1e3 : 0.0,
        names.c_str());
  }
  if (r.sequences.size() > n) {
    std::fprintf(out, "  (%zu more in --json)\n", r.sequences.size() - n);
  }
  if (r.sequences_uncounted > 0) {
    std::fprintf(out,
                 "  %" PRId64
                 " occurrences of sequences past %zu distinct per rank were not "
                 "counted\n",
                 r.sequences_uncounted, kMaxDistinctSequences);
  }
}

// Idle causes per rank (and device, when a rank has several), always; per stream, launch
// statistics and queues with --why.
void print_idle(FILE* out, const Report& r, const PrintOptions& po) {
  if (!r.why) {
    std::fprintf(out,
                 "\nIdle causes: not in these summaries (schema 3 or older); analyze the traces, "
                 "or summaries made by this c3scope\n");
    return;
  }
  const IdleOptions& o = r.idle_options;
  const bool micro = o.micro_ns > 0;
  std::fprintf(out,
               "\nIdle causes (ms): host wait = the next work's launch call started after the GPU "
               "went idle;\n  kernel wait = other gaps under %s; comm wait = the rest of a gap "
               "before a collective while another rank had not arrived; other = the rest\n",
               duration(static_cast<double>(o.kernel_wait_ns)).c_str());
  if (!r.comm_wait_known) {
    std::fprintf(out,
                 "  comm wait: not in these summaries (schema 4 or older): counted in other\n");
  }
  if (!r.launch_calls) {
    std::fprintf(out,
                 "  no launch calls in the trace(s) (record with --cuda-api, or a PyTorch or "
                 "Nsight trace): host wait cannot be told apart and counts as kernel wait or "
                 "other\n");
  }
  std::fprintf(out, "%-22s %6s %11s %11s %8s %11s %8s %11s %8s %11s %8s %8s", "scope", "device",
               "idle", "host-wait", "%", "kernel-wait", "%", "comm-wait", "%", "other", "%",
               "gaps");
  if (micro) std::fprintf(out, " %11s %11s", "micro", "macro");
  std::fprintf(out, "\n");
  auto row = [&](const std::string& scope, const std::string& dev, const IdleCauses& c) {
    std::fprintf(out, "%-22s %6s %11s %11s %8s %11s %8s %11s %8s %11s %8s %8" PRId64, scope.c_str(),
                 dev.c_str(), ms(c.idle).c_str(), ms(c.host_wait).c_str(),
                 share(c.host_wait, c.idle).c_str(), ms(c.kernel_wait).c_str(),
                 share(c.kernel_wait, c.idle).c_str(), ms(c.comm_wait).c_str(),
                 share(c.comm_wait, c.idle).c_str(), ms(c.other).c_str(),
                 share(c.other, c.idle).c_str(), c.gaps);
    if (micro) std::fprintf(out, " %11s %11s", ms(c.micro).c_str(), ms(c.macro).c_str());
    std::fprintf(out, "\n");
  };
  for (const ScopeReport& s : r.processes) {
    row(label_of(r, s.process), "all", s.idle);
    size_t n = 0;
    for (const ScopeReport& d : r.devices) n += d.process == s.process;
    if (n > 1) {
      for (const ScopeReport& d : r.devices) {
        if (d.process == s.process) row("", std::to_string(d.device), d.idle);
      }
    }
  }
  if (r.processes.size() > 1) row("overall (sum)", "", r.overall.idle);
  if (!po.why) return;
  std::fprintf(out,
               "\nIdle causes per stream (ms; HTA's idle time breakdown: the gaps between one "
               "stream's operations)\n");
  std::fprintf(out, "%-22s %6s %8s %10s %11s %11s %11s %11s %11s\n", "scope", "device", "stream",
               "activities", "idle", "host-wait", "kernel-wait", "comm-wait", "other");
  for (const StreamIdle& x : r.streams) {
    std::fprintf(out, "%-22s %6d %8d %10" PRId64 " %11s %11s %11s %11s %11s\n",
                 label_of(r, x.process).c_str(), x.device, x.stream, x.activities,
                 ms(x.causes.idle).c_str(), ms(x.causes.host_wait).c_str(),
                 ms(x.causes.kernel_wait).c_str(), ms(x.causes.comm_wait).c_str(),
                 ms(x.causes.other).c_str());
  }
  const LaunchOptions& lo = r.launch_options;
  std::fprintf(out,
               "\nLaunch statistics (cudaLaunchKernel, cudaLaunchKernelExC, cudaMemcpyAsync, "
               "cudaMemsetAsync); delay = GPU start - call end; outliers: GPU shorter than "
               "the call, call > %s, delay > %s\n",
               duration(static_cast<double>(lo.runtime_cutoff_ns)).c_str(),
               duration(static_cast<double>(lo.delay_cutoff_ns)).c_str());
  if (r.launches.empty()) {
    std::fprintf(out, "  none: the trace(s) carry no launch calls\n");
  } else {
    std::fprintf(out, "%-40s %8s %10s %10s %10s %10s %8s %8s %8s\n", "signature", "count",
                 "call med", "gpu med", "delay med", "delay max", "short", "slow-call", "late");
    std::vector<const LaunchStat*> rows;
    for (const LaunchStat& x : r.launches) rows.push_back(&x);
    std::stable_sort(rows.begin(), rows.end(), [](const LaunchStat* a, const LaunchStat* b) {
      return a->delay_ns > b->delay_ns;
    });
    int64_t count = 0, cpu = 0, gpu = 0, delay = 0;
    constexpr size_t kShown = 20;  // by total launch delay; JSON has every signature
    for (size_t k = 0; k < rows.size(); ++k) {
      const LaunchStat* x = rows[k];
      add_capped(count, x->count);
      add_capped(cpu, x->cpu_ns);
      add_capped(gpu, x->gpu_ns);
      add_capped(delay, x->delay_ns);
      if (k >= kShown) continue;
      std::fprintf(
          out, "%-40.40s %8" PRId64 " %10s %10s %10s %10s %8" PRId64 " %8" PRId64 " %8" PRId64 "\n",
          tx(x->name).c_str(), x->count, duration(x->cpu.median()).c_str(),
          duration(x->gpu.median()).c_str(), duration(x->delay.median()).c_str(),
          duration(x->delay.quantile(1.0)).c_str(), x->short_gpu, x->runtime_outliers,
          x->delay_outliers);
    }
    if (rows.size() > kShown) {
      std::fprintf(out, "  ... %zu more signature(s) with less launch delay (all in --json)\n",
                   rows.size() - kShown);
    }
    std::fprintf(out, "%-40s %8" PRId64 " sums: call %s ms, gpu %s ms, delay %s ms\n", "all", count,
                 ms(cpu).c_str(), ms(gpu).c_str(), ms(delay).c_str());
  }
  std::fprintf(out,
               "\nQueue length per stream (operations launched and not finished; time-weighted; "
               "at limit = time with %" PRId64 " or more)\n",
               r.queue_options.limit);
  if (r.queues.empty()) {
    std::fprintf(out, "  none: the trace(s) carry no launch calls\n");
  } else {
    std::fprintf(out, "%-22s %6s %8s %10s %8s %8s %8s %8s %11s\n", "scope", "device", "stream",
                 "launches", "max", "mean", "p50", "p90", "at limit");
  }
  for (const StreamQueue& q : r.queues) {
    std::fprintf(out,
                 "%-22s %6d %8d %10" PRId64 " %8" PRId64 " %8.2f %8" PRId64 " %8" PRId64 " %11s\n",
                 label_of(r, q.process).c_str(), q.device, q.stream, q.launches, q.max, q.mean,
                 q.p50, q.p90, ms(q.at_limit_ns).c_str());
  }
  print_sequences(out, r);
}

nlohmann::json parts_json(const PathParts& p) {
  nlohmann::json j;
  for (size_t k = 0; k < kPathParts; ++k) {
    j[std::string(path_part_name(static_cast<PathPart>(k))) + "_ns"] = p[k];
  }
  return j;
}

double median_of(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? static_cast<double>(v[n / 2])
               : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2;
}

// Per late rank: how often it was the late arrival on a step's path, by how much, and what it
// did just before (its most frequent cause).
struct LateRank {
  int process = 0;
  int64_t count = 0, late_ns = 0;
  std::set<int64_t> steps;
  std::map<std::string, int64_t> causes;  // "part: name" -> count
};
std::vector<LateRank> late_ranks(const Report& r) {
  std::map<int, LateRank> by;
  for (const StepPath& p : r.paths) {
    for (const LateArrival& l : p.late) {
      LateRank& x = by[l.late];
      x.process = l.late;
      ++x.count;
      if (__builtin_add_overflow(x.late_ns, l.late_ns, &x.late_ns)) x.late_ns = INT64_MAX;
      x.steps.insert(p.index);
      ++x.causes[std::string(path_part_name(l.cause)) +
                 (l.cause_name.empty() ? "" : ": " + l.cause_name)];
    }
  }
  std::vector<LateRank> out;
  out.reserve(by.size());
  for (auto& [p, x] : by) out.push_back(std::move(x));
  std::stable_sort(out.begin(), out.end(), [](const LateRank& a, const LateRank& b) {
    return a.count != b.count ? a.count > b.count : a.late_ns > b.late_ns;
  });
  return out;
}

std::string top_cause(const LateRank& x) {
  std::string best;
  int64_t n = 0;
  for (const auto& [c, k] : x.causes) {
    if (k > n) {
      n = k;
      best = c;
    }
  }
  return best;
}

void print_path(FILE* out, const Report& r, const PrintOptions& po) {
  if (!r.why || r.paths.empty()) return;
  PathParts total{};
  std::vector<int64_t> steps;
  int64_t path_sum = 0;
  for (const StepPath& p : r.paths) {
    for (size_t k = 0; k < kPathParts; ++k) add_capped(total[k], p.parts[k]);
    steps.push_back(p.step_ns);
    add_capped(path_sum, p.path_ns);
  }
  const bool whole = r.paths.size() == 1 && r.paths[0].index == -1;
  std::fprintf(out,
               "\nCritical path %s (across ranks: a collective waits for its last rank's "
               "arrival); where its time went, %s\n",
               whole ? "of the whole run (no steps)" : "of each step",
               whole ? "ms" : "summed over the steps (ms)");
  std::fprintf(out, "  %-14s %12s %8s\n", "part", "ms", "share");
  for (size_t k = 0; k < kPathParts; ++k) {
    if (total[k] == 0) continue;
    std::fprintf(out, "  %-14s %12s %8s\n", path_part_name(static_cast<PathPart>(k)),
                 ms(total[k]).c_str(), share(total[k], path_sum).c_str());
  }
  int64_t waited = 0;
  for (const StepPath& p : r.paths) add_capped(waited, p.peer_wait_ns);
  if (waited > 0) {
    std::fprintf(out,
                 "  the path went through late ranks: the ranks it came from waited %s ms in "
                 "those collectives (peer wait, off the path)\n",
                 ms(waited).c_str());
  }
  const std::vector<LateRank> late = late_ranks(r);
  if (late.empty()) {
    std::fprintf(out, "  no rank arrived late at a collective on the path\n");
  } else {
    std::fprintf(out,
                 "  late arrivals on the path (straggler causes: what the late rank did "
                 "just before arriving):\n");
    for (size_t k = 0; k < late.size() && k < 8; ++k) {
      const LateRank& x = late[k];
      std::fprintf(out,
                   "  %-22s late %" PRId64
                   " time(s) in %zu of %zu step(s), %s ms in all; "
                   "most often after %s\n",
                   label_of(r, x.process).c_str(), x.count, x.steps.size(), r.paths.size(),
                   ms(x.late_ns).c_str(), tx(top_cause(x)).c_str());
    }
  }
  if (!r.what_ifs.empty()) {
    std::vector<int64_t> replayed;
    for (const StepPath& p : r.paths) replayed.push_back(p.replayed_ns);
    const double base = median_of(replayed);
    std::fprintf(out,
                 "  what-if (the recorded schedule replayed along the path's dependencies with "
                 "the change; no contention model: a bound on the gain), median step %.3f ms "
                 "replayed:\n",
                 base / 1e6);
    for (size_t w = 0; w < r.what_ifs.size(); ++w) {
      std::vector<int64_t> v;
      for (const StepPath& p : r.paths) v.push_back(w < p.what_if_ns.size() ? p.what_if_ns[w] : 0);
      const double m = median_of(v);
      std::fprintf(out, "    %-34s median step %10.3f ms (%+.1f%%)\n",
                   tx(r.what_ifs[w].text).c_str(), m / 1e6,
                   base > 0 ? 100.0 * (m / base - 1) : 0.0);
    }
  }
  if (!po.steps || whole) return;
  std::fprintf(out, "%8s %11s %11s %11s %11s %11s %11s %5s %11s\n", "step", "path ms", "compute",
               "comm", "host", "idle", "memory", "hops", "peer-wait");
  for (const StepPath& p : r.paths) {
    auto at = [&](PathPart x) { return ms(p.parts[static_cast<size_t>(x)]); };
    std::fprintf(out, "%8" PRId64 " %11s %11s %11s %11s %11s %11s %5d %11s\n", p.index,
                 ms(p.path_ns).c_str(), at(PathPart::compute).c_str(),
                 at(PathPart::communication).c_str(), at(PathPart::host).c_str(),
                 at(PathPart::idle).c_str(), at(PathPart::memory).c_str(), p.hops,
                 ms(p.peer_wait_ns).c_str());
  }
}

nlohmann::json path_json(const Report& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepPath& p : r.paths) {
    nlohmann::json late = nlohmann::json::array();
    for (const LateArrival& l : p.late) {
      late.push_back({{"communicator", l.comm},
                      {"seq", l.seq},
                      {"op", l.op},
                      {"late_rank", process_json(r, l.late)["rank"]},
                      {"late_process", r.process_info[static_cast<size_t>(l.late)].label()},
                      {"waiting_process", r.process_info[static_cast<size_t>(l.waiting)].label()},
                      {"late_ns", l.late_ns},
                      {"cause", path_part_name(l.cause)},
                      {"cause_name", l.cause_name},
                      {"before", parts_json(l.before)}});
    }
    // How the path went, from the step's end back: each leg a rank's stretch of work (its own
    // clock) or a collective's own time on it.
    nlohmann::json route = nlohmann::json::array();
    for (const PathLeg& leg : p.route) {
      const bool known =
          leg.process >= 0 && static_cast<size_t>(leg.process) < r.process_info.size();
      route.push_back(
          {{"process",
            known ? nlohmann::json(r.process_info[static_cast<size_t>(leg.process)].label())
                  : nlohmann::json(nullptr)},
           {"rank", known && r.process_info[static_cast<size_t>(leg.process)].rank
                        ? nlohmann::json(*r.process_info[static_cast<size_t>(leg.process)].rank)
                        : nlohmann::json(nullptr)},
           {"from_ns", leg.from_ns},
           {"to_ns", leg.to_ns},
           {"collective", leg.collective},
           {"communicator", leg.comm.empty() ? nlohmann::json(nullptr) : nlohmann::json(leg.comm)},
           {"seq", leg.comm.empty() ? nlohmann::json(nullptr) : nlohmann::json(leg.seq)}});
    }
    nlohmann::json wi = nlohmann::json::array();
    for (size_t w = 0; w < p.what_if_ns.size() && w < r.what_ifs.size(); ++w) {
      wi.push_back({{"what_if", r.what_ifs[w].text}, {"step_ns", p.what_if_ns[w]}});
    }
    steps.push_back(
        {{"index", p.index},
         {"name", p.name},
         {"step_ns", p.step_ns},
         {"path_ns", p.path_ns},
         {"parts", parts_json(p.parts)},
         {"end_process",
          p.end_process >= 0
              ? nlohmann::json(r.process_info[static_cast<size_t>(p.end_process)].label())
              : nlohmann::json(nullptr)},
         {"hops", p.hops},
         {"peer_wait_ns", p.peer_wait_ns},
         {"late_arrivals", std::move(late)},
         {"route", std::move(route)},
         {"replayed_ns", p.replayed_ns},
         {"what_if", std::move(wi)}});
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (const LateRank& x : late_ranks(r)) {
    ranks.push_back({{"rank", process_json(r, x.process)["rank"]},
                     {"process", r.process_info[static_cast<size_t>(x.process)].label()},
                     {"late_count", x.count},
                     {"late_steps", x.steps.size()},
                     {"late_ns", x.late_ns},
                     {"most_frequent_cause", top_cause(x)}});
  }
  nlohmann::json wis = nlohmann::json::array();
  for (const WhatIf& w : r.what_ifs) wis.push_back(w.text);
  return {{"steps", std::move(steps)}, {"late_ranks", std::move(ranks)}, {"what_ifs", wis}};
}

// The why/ analyses: their options, per-stream idle causes, launch statistics, queues.
nlohmann::json why_json(const Report& r) {
  nlohmann::json w;
  w["available"] = r.why;
  w["launch_calls"] = r.launch_calls;
  w["comm_wait_known"] = r.comm_wait_known;
  w["options"] = {{"kernel_wait_ns", r.idle_options.kernel_wait_ns},
                  {"micro_idle_ns", r.idle_options.micro_ns},
                  {"runtime_cutoff_ns", r.launch_options.runtime_cutoff_ns},
                  {"delay_cutoff_ns", r.launch_options.delay_cutoff_ns},
                  {"queue_limit", r.queue_options.limit}};
  nlohmann::json streams = nlohmann::json::array();
  for (const StreamIdle& x : r.streams) {
    nlohmann::json o = idle_json(x.causes);
    o["rank"] = process_json(r, x.process)["rank"];
    o["process"] = r.process_info[static_cast<size_t>(x.process)].label();
    o["device"] = x.device;
    o["stream"] = x.stream;
    o["activities"] = x.activities;
    streams.push_back(std::move(o));
  }
  w["idle_per_stream"] = std::move(streams);
  nlohmann::json launches = nlohmann::json::array();
  for (const LaunchStat& x : r.launches) {
    auto dist = [](const Distribution& d) {
      return nlohmann::json{{"median_ns", d.count() > 0 ? d.median() : 0.0},
                            {"p90_ns", d.count() > 0 ? d.quantile(0.9) : 0.0},
                            {"max_ns", d.count() > 0 ? d.quantile(1.0) : 0.0}};
    };
    launches.push_back({{"signature", x.name},
                        {"count", x.count},
                        {"cpu_duration_ns", x.cpu_ns},
                        {"gpu_duration_ns", x.gpu_ns},
                        {"launch_delay_ns", x.delay_ns},
                        {"cpu_duration", dist(x.cpu)},
                        {"gpu_duration", dist(x.gpu)},
                        {"launch_delay", dist(x.delay)},
                        {"short_gpu", x.short_gpu},
                        {"runtime_outliers", x.runtime_outliers},
                        {"delay_outliers", x.delay_outliers}});
  }
  w["launches"] = std::move(launches);
  nlohmann::json queues = nlohmann::json::array();
  for (const StreamQueue& q : r.queues) {
    queues.push_back({{"rank", process_json(r, q.process)["rank"]},
                      {"process", r.process_info[static_cast<size_t>(q.process)].label()},
                      {"device", q.device},
                      {"stream", q.stream},
                      {"launches", q.launches},
                      {"span_ns", q.span_ns},
                      {"max", q.max},
                      {"max_at_ns", q.max_at},
                      {"mean", q.mean},
                      {"p50", q.p50},
                      {"p90", q.p90},
                      {"at_limit_ns", q.at_limit_ns}});
  }
  w["queues"] = std::move(queues);
  nlohmann::json seqs = nlohmann::json::array();
  for (const KernelSequence& q : r.sequences) {
    seqs.push_back(
        {{"kernels", q.names}, {"count", q.count}, {"span_ns", q.span_ns}, {"gpu_ns", q.gpu_ns}});
  }
  w["sequences"] = {{"available", r.sequences_known},
                    {"length", r.sequence_options.length},
                    {"occurrences", r.sequence_occurrences},
                    {"uncounted", r.sequences_uncounted},
                    {"top", std::move(seqs)}};
  w["critical_path"] = path_json(r);
  return w;
}

// Step time median and p90 over the job's steps; the per-step table on request.
void print_steps(FILE* out, const Report& r, const PrintOptions& po) {
  if (r.job_steps.empty()) return;
  std::vector<int64_t> t;
  for (const JobStep& j : r.job_steps) t.push_back(j.step_ns);
  std::sort(t.begin(), t.end());
  const size_t n = t.size();
  const double med = n % 2
                         ? static_cast<double>(t[n / 2])
                         : (static_cast<double>(t[n / 2 - 1]) + static_cast<double>(t[n / 2])) / 2;
  // Nearest rank: the smallest step time with at least 90% of the steps at or below it.
  const auto rank90 = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  const double p90 = static_cast<double>(t[std::max<size_t>(rank90, 1) - 1]);
  std::fprintf(out,
               "\nSteps (%s): %zu; step time (longest rank) median %.3f ms, p90 %.3f ms, min %.3f "
               "ms, max %.3f ms\n",
               tx(r.step_source).c_str(), n, med / 1e6, p90 / 1e6,
               static_cast<double>(t.front()) / 1e6, static_cast<double>(t.back()) / 1e6);
  if (!po.steps) return;
  std::fprintf(out, "%8s %-28s %5s %11s %11s %11s %11s %11s %11s %11s %9s\n", "step", "name",
               "ranks", "step ms", "compute", "exp-comm", "exp-mem", "idle", "host-wait",
               "comm-wait", "overlap%");
  for (const JobStep& j : r.job_steps) {
    const Breakdown& b = j.mean;
    std::fprintf(out, "%8" PRId64 " %-28.28s %5d %11s %11s %11s %11s %11s %11s %11s %9s\n", j.index,
                 tx(j.name).c_str(), j.ranks, ms(j.step_ns).c_str(), ms(b.compute()).c_str(),
                 ms(b.exposed_comm).c_str(), ms(b.exposed_memcpy).c_str(), ms(b.idle).c_str(),
                 r.why ? ms(j.idle.host_wait).c_str() : "-",
                 r.comm_wait_known ? ms(j.idle.comm_wait).c_str() : "-",
                 b.comm() > 0 ? pct(b.overlap_pct).c_str() : "-");
  }
  std::fprintf(out, "(per step: compute and the other columns are means over the ranks)\n");
}

}  // namespace

bool is_simulated(const Process& p, const std::vector<Device>& devices,
                  const std::vector<BenchResult>& bench) {
  if (p.trace_clock.starts_with("simulated node")) return true;
  for (const Device& d : devices) {
    if (d.name.starts_with("Simulated ")) return true;
  }
  for (const BenchResult& b : bench) {
    if (b.simulated) return true;
  }
  return false;
}

void order_by_rank(Report& r) {
  r.order = rank_order(r.process_info);
  std::vector<size_t> pos(r.process_info.size(), 0);
  for (size_t i = 0; i < r.order.size(); ++i) pos[static_cast<size_t>(r.order[i])] = i;
  // Stable: within a process, each list keeps its order (devices by ordinal, ranges by time).
  auto by_rank = [&](auto& v) {
    std::stable_sort(v.begin(), v.end(), [&](const auto& a, const auto& b) {
      return pos[static_cast<size_t>(a.process)] < pos[static_cast<size_t>(b.process)];
    });
  };
  by_rank(r.processes);
  by_rank(r.devices);
  by_rank(r.ranges);
  by_rank(r.contention);
  by_rank(r.bench);
  by_rank(r.clocks);
  by_rank(r.streams);
  by_rank(r.queues);
}

Report analyze(Trace& t, const std::vector<std::string>& inputs, const AnalyzeOptions& o) {
  load_kernel_shapes(t);
  std::vector<CommOverlap> comm;
  const std::vector<RankSummary> ranks =
      summarize(t, o, [&](const Trace&, const std::vector<CommOverlap>& rows) {
        comm.insert(comm.end(), rows.begin(), rows.end());
      });
  Report r = reduce(ranks, inputs, o, o.align);
  r.comm = std::move(comm);
  for (const ClockOffset& c : r.clocks)
    t.processes[static_cast<size_t>(c.process)].offset_ns = c.offset_ns;
  return r;
}

Report analyze_aligned(const Trace& t, const std::vector<std::string>& inputs,
                       const AnalyzeOptions& o) {
  if (!t.pending_shapes.empty()) {
    throw std::logic_error(
        "analyze_aligned: the kernel shapes of a deferred load are still "
        "pending (call load_kernel_shapes first)");
  }
  std::vector<CommOverlap> comm;
  const std::vector<RankSummary> ranks =
      summarize(t, o, [&](const Trace&, const std::vector<CommOverlap>& rows) {
        comm.insert(comm.end(), rows.begin(), rows.end());
      });
  Report r = reduce(ranks, inputs, o, /*align=*/false);
  r.comm = std::move(comm);
  return r;
}

void print_text(FILE* out, const Report& r, const PrintOptions& po) {
  std::fprintf(out,
               "c3scope analyze: %zu trace(s), %zu process(es), %" PRId64 " kernels, %" PRId64
               " memcpy, %" PRId64 " memset\n",
               r.inputs.size(), r.process_info.size(), r.kernels, r.memcpys, r.memsets);
  if (r.overall.simulated) {
    std::string who;
    size_t n = 0;
    for (const ScopeReport& s : r.processes) {
      if (!s.simulated) continue;
      if (++n <= 4) who += (who.empty() ? "" : ", ") + label_of(r, s.process);
    }
    if (n > 4) who += " and " + std::to_string(n - 4) + " more";
    std::fprintf(out,
                 "SIMULATED: %s ran on c3bench's simulated node; every number of %s is a "
                 "prediction of its model, not a measurement\n",
                 n == r.processes.size() ? "every process" : who.c_str(),
                 n == r.processes.size() ? "this report" : "theirs");
  }
  if (r.skipped > 0) {
    std::fprintf(out, "warning: %" PRId64 " row(s) skipped; the first: %s\n", r.skipped,
                 tx(r.first_skipped).c_str());
  }
  if (r.kernels + r.memcpys + r.memsets == 0) {
    std::fprintf(out,
                 "no GPU activity: the trace(s) hold no kernels, copies or sets (a CPU-only "
                 "profile?), so compute, communication and overlap below are 0\n");
  }
  for (const std::string& line : cpu_collective_lines(r.cpu_collectives))
    std::fprintf(out, "%s\n", line.c_str());
  if (!r.ranges.empty() || r.matching_ranges > 0) {
    std::fprintf(out,
                 "restricted to %" PRId64
                 " matching range(s): spans are the time inside them, idle what GPU work "
                 "leaves of it\n",
                 r.matching_ranges);
  }
  std::fprintf(
      out,
      "\nTime breakdown (ms); overlap %% = share of communication time hidden under compute\n");
  std::fprintf(out, "%-22s %6s %11s %11s %11s %11s %11s %9s %11s %11s %9s\n", "scope", "device",
               "span", "idle", "compute", "non-compute", "comm", "overlap%", "exposed-comm",
               "exposed-mem", "activities");
  auto row = [&](const std::string& scope, const std::string& dev, const Breakdown& b) {
    std::fprintf(out, "%-22s %6s %11s %11s %11s %11s %11s %9s %11s %11s %9" PRId64 "\n",
                 scope.c_str(), dev.c_str(), ms(b.span).c_str(), ms(b.idle).c_str(),
                 ms(b.compute()).c_str(), ms(b.non_compute).c_str(), ms(b.comm()).c_str(),
                 b.comm() > 0 ? pct(b.overlap_pct).c_str() : "-", ms(b.exposed_comm).c_str(),
                 ms(b.exposed_memcpy).c_str(), b.activities);
  };
  for (const ScopeReport& s : r.processes) {
    row(label_of(r, s.process), "all", s.b);
    size_t n = 0;
    for (const ScopeReport& d : r.devices) n += d.process == s.process;
    if (n > 1) {
      for (const ScopeReport& d : r.devices) {
        if (d.process == s.process) row("", std::to_string(d.device), d.b);
      }
    }
  }
  if (r.processes.size() > 1) row("overall (sum)", "", r.overall.b);

  std::fprintf(out,
               "\nKernel-type breakdown (overall): time during which exactly these classes run, "
               "and its share of the busy time\n");
  const Breakdown& o = r.overall.b;
  for (size_t m = 1; m < o.by_mask.size(); ++m) {
    if (o.by_mask[m] <= 0) continue;
    std::fprintf(
        out, "  %-42s %12s ms %6.2f%% of busy\n", mask_name(static_cast<int>(m)).c_str(),
        ms(o.by_mask[m]).c_str(),
        o.busy > 0 ? 100.0 * static_cast<double>(o.by_mask[m]) / static_cast<double>(o.busy) : 0.0);
  }
  if (!r.collectives.empty()) {
    std::fprintf(out,
                 "\nCollectives by op and size (S as nccl-tests counts it; bandwidth when sizes "
                 "are known)\n");
    std::fprintf(out, "%-16s %-12s %8s %12s %10s %10s %10s\n", "op", "size", "count", "total ms",
                 "overlap%", "algbw GB/s", "busbw GB/s");
    for (const auto& g : r.collectives) {
      const std::string size = g.bucket_lo > 0 ? size_bucket(g.bucket_lo) : "unknown";
      std::fprintf(out, "%-16s %-12s %8" PRId64 " %12s %10s %10s %10s\n", tx(g.op).c_str(),
                   size.c_str(), g.count, ms(g.total_ns).c_str(),
                   g.total_ns > 0 ? pct(g.mean_overlap_pct).c_str() : "-",
                   gbps(g.median_algbw).c_str(), gbps(g.median_busbw).c_str());
    }
  }
  print_idle(out, r, po);
  print_path(out, r, po);
  print_interference(out, r);
  print_contention(out, r);
  print_cross_rank(out, r);
  print_steps(out, r, po);
  if (!r.ranges.empty()) {
    std::fprintf(out, "\nPer range (ms)\n");
    std::fprintf(out, "%-22s %-28s %11s %11s %11s %11s %9s %11s\n", "scope", "range", "length",
                 "idle", "compute", "comm", "overlap%", "exposed-comm");
    for (const RangeReport& g : r.ranges) {
      std::fprintf(out, "%-22s %-28.28s %11s %11s %11s %11s %9s %11s\n",
                   label_of(r, g.process).c_str(), tx(g.name).c_str(), ms(g.end - g.start).c_str(),
                   ms(g.b.idle).c_str(), ms(g.b.compute()).c_str(), ms(g.b.comm()).c_str(),
                   g.b.comm() > 0 ? pct(g.b.overlap_pct).c_str() : "-",
                   ms(g.b.exposed_comm).c_str());
    }
  }
  if (!r.hta_paths.empty()) {
    std::fprintf(out,
                 "\nHTA's critical path (--hta-critical-path: HTA 0.5.0's model, whose edges give "
                 "no weight to the time between top-level CPU ops, a blocking call's own time and "
                 "synchronizations; not c3scope's path, which spans the step; us)\n");
    std::fprintf(out, "%-36s %-20s %11s %11s %9s %9s %11s %11s %9s %7s\n", "input", "step", "step",
                 "length", "cpu", "launch", "kernel-kern", "compute", "comm", "edges");
    for (const HtaPath& h : r.hta_paths) {
      const std::string name = tx(std::filesystem::path(h.input).filename().string());
      if (!h.refused.empty()) {
        std::fprintf(out, "%-36.36s %-20.20s %11.0f  HTA refuses this graph: %s\n", name.c_str(),
                     tx(h.step).c_str(), h.end_us - h.start_us, h.refused.c_str());
        continue;
      }
      std::fprintf(out, "%-36.36s %-20.20s %11.0f %11.0f %9.0f %9.0f %11.0f %11.0f %9.0f %7lld\n",
                   name.c_str(), tx(h.step).c_str(), h.end_us - h.start_us, h.length_us, h.cpu_us,
                   h.launch_us, h.kernel_kernel_us, h.compute_us, h.communication_us,
                   static_cast<long long>(h.path_edges));
    }
  }
}

std::vector<std::string> cpu_collective_lines(
    const std::map<std::pair<std::string, std::string>, int64_t>& seen) {
  std::vector<std::string> lines;
  std::string backend, ops;
  auto flush = [&] {
    if (!backend.empty()) {
      lines.push_back(
          "CPU-side collectives (" +
          (backend == "unnamed" ? std::string("backend not named in the trace") : backend) +
          "): " + ops + " seen; not analysed: c3scope analyses GPU collectives (NCCL kernels)");
    }
  };
  for (const auto& [key, n] : seen) {
    if (key.first != backend) {
      flush();
      backend = key.first;
      ops.clear();
    }
    ops += (ops.empty() ? "" : ", ") + std::to_string(n) + " " + key.second;
  }
  flush();
  return lines;
}

namespace {

std::string dump2(const nlohmann::json& v) {
  return v.dump(2, ' ', true, nlohmann::json::error_handler_t::replace);
}

// `v` appended with its lines after the first indented `by` more (a dump's strings hold no raw
// line breaks).
void append_indented(std::string& out, std::string_view v, size_t by) {
  size_t from = 0;
  for (size_t nl = v.find('\n'); nl != std::string_view::npos; nl = v.find('\n', from)) {
    out.append(v.substr(from, nl + 1 - from));
    out.append(by, ' ');
    from = nl + 1;
  }
  out.append(v.substr(from));
}

// A long list of the report (every matched collective, every rank's steps) written an element at
// a time, each made, dumped, written out and freed, as dump(2) writes an array that is the value
// of a key of an object written alone, one level deeper: a report of thousands of ranks never
// holds these lists, as a tree or as text. In the object it stands in for the value, a marker
// string (kListMark) where write_json writes the list.
class ListText {
 public:
  explicit ListText(const std::function<void(std::string_view)>& out) : out_(out) {}
  void add(const nlohmann::json& e) {
    std::string piece = first_ ? "[\n    " : ",\n    ";
    first_ = false;
    append_indented(piece, dump2(e), 4);
    put(piece);
  }
  void close() { put(first_ ? "[]" : "\n  ]"); }

 private:
  void put(std::string_view piece) {
    std::string t;
    append_indented(t, piece, 2);
    out_(t);
  }
  const std::function<void(std::string_view)>& out_;
  bool first_ = true;
};
constexpr char kListMark[] = "\x01list\x01";

}  // namespace

std::string to_json(const Report& r) {
  std::string text;
  write_json(r, [&text](std::string_view piece) { text.append(piece); });
  return text;
}

void write_json(const Report& r, const std::function<void(std::string_view)>& sink) {
  nlohmann::json j;
  // (top-level key, its key): the lists written apart, each by a writer of its elements.
  std::map<std::pair<std::string, std::string>, std::function<void(ListText&)>> lists;
  j["schema"] = "c3scope-analyze/1";
  j["inputs"] = r.inputs;
  j["simulated"] = r.overall.simulated;
  j["counts"] = {{"processes", r.process_info.size()},
                 {"kernels", r.kernels},
                 {"memcpy", r.memcpys},
                 {"memset", r.memsets},
                 {"skipped_rows", r.skipped}};
  if (!r.cpu_collectives.empty()) {
    nlohmann::json ops = nlohmann::json::array();
    for (const auto& [key, n] : r.cpu_collectives)
      ops.push_back({{"backend", key.first}, {"op", key.second}, {"count", n}});
    j["cpu_collectives"] = {{"analysed", false},
                            {"why", "c3scope analyses GPU collectives (NCCL kernels)"},
                            {"ops", ops}};
  }
  nlohmann::json ranks = nlohmann::json::array();
  for (const ScopeReport& s : r.processes) {
    nlohmann::json p = process_json(r, s.process);
    nlohmann::json b = breakdown_json(s.b);
    p.update(b);
    p["simulated"] = s.simulated;
    if (r.why) p["idle_causes"] = idle_json(s.idle);
    nlohmann::json devs = nlohmann::json::array();
    for (const ScopeReport& d : r.devices) {
      if (d.process != s.process) continue;
      nlohmann::json dj = breakdown_json(d.b);
      dj["device"] = d.device;
      if (r.why) dj["idle_causes"] = idle_json(d.idle);
      devs.push_back(std::move(dj));
    }
    p["devices"] = std::move(devs);
    ranks.push_back(std::move(p));
  }
  j["ranks"] = std::move(ranks);
  j["overall"] = breakdown_json(r.overall.b);
  if (r.why) j["overall"]["idle_causes"] = idle_json(r.overall.idle);
  j["why"] = why_json(r);
  nlohmann::json colls = nlohmann::json::array();
  for (const auto& g : r.collectives) {
    colls.push_back({{"op", g.op},
                     {"size_min_bytes", known(g.bucket_lo)},
                     {"size_max_bytes", known(g.bucket_hi)},
                     {"count", g.count},
                     {"total_ns", g.total_ns},
                     {"mean_overlap_pct", ratio(g.total_ns > 0, g.mean_overlap_pct)},
                     {"median_algbw_bytes_per_s", known(g.median_algbw)},
                     {"median_busbw_bytes_per_s", known(g.median_busbw)}});
  }
  j["collectives"] = std::move(colls);
  nlohmann::json ranges = nlohmann::json::array();
  for (const RangeReport& g : r.ranges) {
    nlohmann::json rj = breakdown_json(g.b);
    rj["rank"] = process_json(r, g.process)["rank"];
    rj["process"] = r.process_info[static_cast<size_t>(g.process)].label();
    rj["name"] = g.name;
    rj["start_ns"] = g.start;
    rj["end_ns"] = g.end;
    ranges.push_back(std::move(rj));
  }
  j["ranges"] = std::move(ranges);
  if (!r.hta_paths.empty()) {
    nlohmann::json hp = nlohmann::json::array();
    for (const HtaPath& h : r.hta_paths) {
      nlohmann::json x = {
          {"input", h.input},     {"annotation", h.annotation}, {"instance", h.instance},
          {"step", h.step},       {"start_us", h.start_us},     {"end_us", h.end_us},
          {"rounded", h.rounded}, {"nodes", h.nodes},           {"edges", h.edges}};
      if (h.refused.empty()) {
        x["length_us"] = h.length_us;
        x["longest_us"] = h.longest_us;
        x["path_edges"] = h.path_edges;
        x["bound_by_us"] = {{"cpu", h.cpu_us},
                            {"launch", h.launch_us},
                            {"kernel_kernel", h.kernel_kernel_us},
                            {"compute", h.compute_us},
                            {"communication", h.communication_us}};
      } else {
        x["refused"] = h.refused;
      }
      hp.push_back(std::move(x));
    }
    j["hta_critical_path"] = std::move(hp);
  }
  nlohmann::json inter = nlohmann::json::array();
  for (const auto& x : r.interference) {
    nlohmann::json o = {
        {"signature", x.signature},
        {"class", class_name(x.cls)},
        {"alone", x.alone},
        {"overlapped", x.overlapped},
        {"partial", x.partial},
        {"median_alone_ns", x.median_alone_ns},
        {"median_overlapped_ns", x.median_overlapped_ns},
        {"total_ns", x.total_ns},
        {"enough_samples", x.enough},
        {"peer_wait", x.peer_wait == InterferenceRow::PeerWait::point_to_point ? "point_to_point"
                      : x.peer_wait == InterferenceRow::PeerWait::collective   ? "collective"
                                                                               : "none"},
        {"verdict", x.verdict()}};
    if (x.enough) {
      o["slowdown"] = x.slowdown;
      o["slowdown_ci95"] = {x.ci_low, x.ci_high};
    }
    inter.push_back(std::move(o));
  }
  j["interference"] = std::move(inter);
  nlohmann::json bench = nlohmann::json::array();
  auto opt = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  for (const auto& b : r.bench) {
    nlohmann::json o = {{"label", b.label},         {"backend", b.backend},
                        {"simulated", b.simulated}, {"t_comp_ns", b.t_comp},
                        {"t_comm_ns", b.t_comm},    {"t_c3_ns", b.t_c3},
                        {"scenario", b.scenario}};
    for (const BenchRatio& x : kBenchRatios) o[x.name] = opt(b.*x.value);
    bench.push_back(std::move(o));
  }
  j["controlled_experiments"] = std::move(bench);
  nlohmann::json cont = nlohmann::json::array();
  for (const auto& c : r.contention) {
    nlohmann::json o = {{"rank", process_json(r, c.process)["rank"]},
                        {"device", c.device},
                        {"sm_oversubscribed_ns", c.oversubscribed_ns},
                        {"kernels_with_sm_demand", c.kernels_with_demand},
                        {"kernels_unknown_demand", c.kernels_unknown},
                        {"copy_overlap_ns", c.copy_overlap_ns},
                        {"queued_kernels", c.queued_kernels},
                        {"launch_queue_median_ns", ratio(c.queued_kernels > 0, c.queue_median_ns)},
                        {"launch_queue_p95_ns", ratio(c.queued_kernels > 0, c.queue_p95_ns)},
                        {"launch_queue_max_ns", ratio(c.queued_kernels > 0, c.queue_max_ns)}};
    nlohmann::json inv = nlohmann::json::array();
    for (const auto& [n, ns] : c.oversubscribed_kernels) inv.push_back({{"kernel", n}, {"ns", ns}});
    o["oversubscribed_kernels"] = std::move(inv);
    nlohmann::json cp = nlohmann::json::object();
    for (const auto& [d, ns] : c.copy_overlap_by_kind) cp[d] = ns;
    o["copy_overlap_by_direction_ns"] = std::move(cp);
    nlohmann::json bw = nlohmann::json::object();
    for (const auto& [d, share] : c.copy_bandwidth_share) bw[d] = share;
    o["copy_bandwidth_share_median"] = std::move(bw);
    cont.push_back(std::move(o));
  }
  j["contention"] = std::move(cont);
  nlohmann::json xr;
  xr["matched"] = r.cross.collectives.size();
  xr["unmatched"] = r.cross.unmatched;
  xr["tied"] = r.cross.tied;
  nlohmann::json waits = nlohmann::json::array();
  for (const auto& w : r.cross.ranks) {
    nlohmann::json o = process_json(r, w.process);
    o["matched"] = w.matched;
    o["wait_ns"] = w.wait_ns;
    o["straggler_count"] = w.straggler_count;
    waits.push_back(std::move(o));
  }
  xr["ranks"] = std::move(waits);
  xr["collectives"] = kListMark;
  lists[{"cross_rank", "collectives"}] = [&r](ListText& skews) {
    for (const auto& m : r.cross.collectives) {
      skews.add({{"comm_id", r.cross.comm_of(m)},
                 {"seq", m.seq},
                 {"op", r.cross.op_of(m)},
                 {"ranks", m.ranks},
                 {"arrival_skew_ns", m.skew_ns},
                 {"straggler", m.straggler >= 0 ? process_json(r, m.straggler)["label"]
                                                : nlohmann::json(nullptr)}});
    }
  };
  nlohmann::json clocks = nlohmann::json::array();
  for (const auto& c : r.clocks) {
    clocks.push_back({{"process", process_json(r, c.process)["label"]},
                      {"offset_ns", c.offset_ns},
                      {"matched", c.matched},
                      {"how", c.how}});
  }
  xr["clock_offsets"] = std::move(clocks);
  j["cross_rank"] = std::move(xr);
  nlohmann::json steps;
  steps["source"] = r.step_source;
  lists[{"steps", "per_rank"}] = [&r](ListText& per_rank) {
    for (const int pi : order_of(r)) {
      const auto p = static_cast<size_t>(pi);
      if (p >= r.steps.size()) continue;
      for (const StepSample& st : r.steps[p]) {
        nlohmann::json o = breakdown_json(st.b);
        o["rank"] = process_json(r, static_cast<int>(p))["rank"];
        o["process"] = r.process_info[p].label();
        o["index"] = st.index;
        o["name"] = st.name;
        o["start_ns"] = st.start;
        o["end_ns"] = st.end;
        o["step_ns"] = st.end - st.start;
        if (r.why) {
          o["idle_causes"] = idle_json(st.idle);
          o["critical_path_local"] = parts_json(st.path.local);
        }
        per_rank.add(o);
      }
    }
  };
  steps["per_rank"] = kListMark;
  nlohmann::json job = nlohmann::json::array();
  for (const JobStep& js : r.job_steps) {
    nlohmann::json o = breakdown_json(js.mean);
    o["index"] = js.index;
    o["name"] = js.name;
    o["ranks"] = js.ranks;
    o["step_ns"] = js.step_ns;
    if (r.why) o["idle_causes"] = idle_json(js.idle);
    job.push_back(std::move(o));
  }
  steps["job"] = std::move(job);
  j["steps"] = std::move(steps);
  // The schema first (readers that look at a file's start, such as open's detection, find it
  // whatever the report's size), then the other keys in their sorted order: the object written
  // a key at a time (each value dumped, indented one level, and freed), so that the report is
  // never held twice (a job of thousands of ranks has a report of hundreds of MB).
  // Names from traces need not be UTF-8: bytes that are not are replaced, not fatal. All but
  // ASCII is written as \uXXXX: the library escapes control characters, and this the C1
  // controls and bidirectional overrides too, so the file is inert in a terminal (cat, less).
  // Written out in pieces of about 1 MiB.
  std::string text = "{";
  bool first = true;
  auto flush = [&](bool always) {
    if (always || text.size() >= (size_t{1} << 20)) {
      sink(text);
      text.clear();
    }
  };
  const std::function<void(std::string_view)> put = [&](std::string_view piece) {
    text.append(piece);
    flush(false);
  };
  auto add = [&](const std::string& key, nlohmann::json& value) {
    text += first ? "\n  " : ",\n  ";
    first = false;
    text += dump2(nlohmann::json(key));
    text += ": ";
    const std::string v = dump2(value);
    value = nullptr;  // written: freed
    // The value one level deeper, its lists in their places: a key of the value's own (indented
    // 2 in its dump: no deeper key, no string, has that line) holding kListMark.
    std::string_view rest = v;
    for (auto it = lists.lower_bound({key, ""}); it != lists.end() && it->first.first == key;
         ++it) {
      const std::string mark = dump2(nlohmann::json(kListMark));
      const std::string line = "\n  " + dump2(nlohmann::json(it->first.second)) + ": " + mark;
      const size_t at = rest.find(line);
      if (at == std::string_view::npos) continue;
      const size_t cut = at + line.size() - mark.size();
      append_indented(text, rest.substr(0, cut), 2);
      ListText list(put);
      it->second(list);
      list.close();
      rest = rest.substr(cut + mark.size());
    }
    append_indented(text, rest, 2);
    flush(false);
  };
  add("schema", j.at("schema"));
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.key() != "schema") add(it.key(), it.value());
  }
  text += first ? "}\n" : "\n}\n";
  flush(true);
}

std::string collectives_csv_header() {
  return "rank,pid,device,stream,op,kernel,start_ns,duration_ns,overlapped_ns,overlap_pct,bytes,"
         "nranks,algbw_bytes_per_s,busbw_bytes_per_s\n";
}

std::string collectives_csv(const Trace& t, const Report& r) {
  return collectives_csv_header() + collectives_csv_rows(t, r.comm);
}

std::string collectives_csv_rows(const Trace& t, const std::vector<CommOverlap>& rows) {
  std::ostringstream o;
  // Text fields: quoted, control characters and bidirectional overrides escaped (a file shown
  // in a terminal), and a leading = + - @ made literal for spreadsheets (OWASP "CSV injection").
  auto quote = [](const std::string& raw) {
    const std::string s = tracedb::printable(raw);
    std::string q = "\"";
    if (!s.empty() && std::string_view("=+-@").find(s.front()) != std::string_view::npos) q += '\'';
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  const Activities& a = t.activities;
  for (const CommOverlap& c : rows) {
    const size_t i = c.activity;
    const Process& p = t.processes[static_cast<size_t>(a.process[i])];
    const std::string op = collective_op(t, i);
    int64_t bytes = 0;
    int nranks = 0;
    if (a.collective[i] >= 0) {
      const Collective& col = t.collectives[static_cast<size_t>(a.collective[i])];
      nranks = col.nranks;
      // S and the bus factor of AllGather, ReduceScatter, AllReduce, AllToAll need the rank
      // count: without it they are unknown, not the per-rank size or a factor of 1.
      const bool per_rank = nccl_tests_size(op, 1, 2) != 1;
      bytes = nranks > 0 || !per_rank ? nccl_tests_size(op, col.bytes, nranks) : 0;
    }
    double alg = 0, bus = 0;
    if (bytes > 0 && c.duration > 0) {
      alg = static_cast<double>(bytes) / (static_cast<double>(c.duration) * 1e-9);
      bus = nranks > 0 || busbw_factor(op, 2) == 1.0 ? alg * busbw_factor(op, nranks) : 0;
    }
    // Unknown values (no communication time, no size, no rank count) are empty, not 0.
    char num[64] = "";
    if (c.duration > 0) std::snprintf(num, sizeof num, "%.3f", c.pct());
    auto count = [](int64_t v) { return v > 0 ? std::to_string(v) : std::string(); };
    o << (p.rank ? std::to_string(*p.rank) : "") << ',' << p.pid << ',' << a.device[i] << ','
      << a.stream[i] << ',' << quote(op) << ','
      << quote(a.name[i] >= 0 ? t.names[static_cast<size_t>(a.name[i])] : "") << ',' << a.start[i]
      << ',' << c.duration << ',' << c.overlapped << ',' << num << ',' << count(bytes) << ','
      << count(nranks) << ',';
    auto rate = [](double v) {
      char b[64] = "";
      if (v > 0) std::snprintf(b, sizeof b, "%.0f", v);
      return std::string(b);
    };
    o << rate(alg) << ',' << rate(bus) << '\n';
  }
  return o.str();
}

}  // namespace c3::analyzer
