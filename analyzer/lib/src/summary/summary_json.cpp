// Summary files (summary.h): JSON, schema "c3scope-summary/5" (docs/analyze.md "Summaries");
// schema 1 to 4 files are read as well (2 added kernels, collective durations, c3bench busbw and
// process versions; 3 added the CPU-side collectives seen; 4 the why/ analyses: idle causes,
// launch statistics, queues and critical-path chains; 5 the gaps before collectives that
// communication wait needs; what a file lacks stays empty).
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/summary/summary.h"
#include "c3/analyzer/why/whatif.h"
#include "c3/common/text_limits.h"
#include "json_scan.h"
#include "time_limits.h"

namespace c3::analyzer {
namespace {

using ojson = nlohmann::ordered_json;
using json = nlohmann::json;

constexpr const char* kSchema = "c3scope-summary/5";
constexpr const char* kSchemaV4 = "c3scope-summary/4";
constexpr const char* kSchemaV3 = "c3scope-summary/3";
constexpr const char* kSchemaV2 = "c3scope-summary/2";
constexpr const char* kSchemaV1 = "c3scope-summary/1";
// The deepest nesting a summary may have (it has 6: ranks, a rank, steps, samples, a breakdown,
// its by_mask).
constexpr size_t kSummaryDepthLimit = 32;
// The most what-ifs one analysis takes (analyze --what-if, repeated).
constexpr size_t kMaxWhatIfs = 16;

ojson breakdown_out(const Breakdown& b) {
  ojson j;
  j["activities"] = b.activities;
  j["first"] = b.first;
  j["last"] = b.last;
  j["span"] = b.span;
  j["busy"] = b.busy;
  j["idle"] = b.idle;
  j["time"] = b.time;
  j["overlap"] = b.overlap;
  j["exposed_comm"] = b.exposed_comm;
  j["exposed_memcpy"] = b.exposed_memcpy;
  j["exposed_other"] = b.exposed_other;
  j["non_compute"] = b.non_compute;
  j["by_mask"] = b.by_mask;
  return j;
}

// Numbers read from a summary are whole numbers in ranges that keep every sum and difference
// the reduce makes within int64 (a hostile file that is valid JSON must not overflow):
// timestamps within +-2^61 ns, a rank's durations and counts within [0, 2^50] (13 days of ns;
// sums over 8,191 ranks still fit; the reduce checks every sum).

int64_t whole(const json& v, const std::string& what, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) throw std::invalid_argument(what + " is not a whole number");
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    throw std::invalid_argument(what + " is out of range");
  const auto x = v.get<int64_t>();
  if (x < lo || x > hi) throw std::invalid_argument(what + " is out of range");
  return x;
}

// A timestamp (or pid, index): within +-2^61.
int64_t stamp(const json& o, const char* key) {
  return whole(o.at(key), key, -kStampLimit, kStampLimit);
}
// A duration or count: within [0, 2^50].
int64_t amount(const json& o, const char* key) {
  return whole(o.at(key), key, 0, kAmountLimit);
}
int small(const json& o, const char* key, int lo = 0, int hi = INT32_MAX) {
  return static_cast<int>(whole(o.at(key), key, lo, hi));
}

// A finite number within [lo, hi] (doubles: a hostile file must not bring inf, NaN or a negative
// duration into the sums and the reports).
double real_value(const json& v, const std::string& what, double lo, double hi) {
  if (!v.is_number()) throw std::invalid_argument(what + " is not a number");
  const auto x = v.get<double>();
  if (!std::isfinite(x) || x < lo || x > hi) {
    char b[96];
    std::snprintf(b, sizeof b, " is out of range (%g to %g)", lo, hi);
    throw std::invalid_argument(what + b);
  }
  return x;
}
double real(const json& o, const char* key, double lo, double hi) {
  return real_value(o.at(key), key, lo, hi);
}
// A duration in ns as a double: [0, 2^62].
double real_ns(const json& o, const char* key) {
  return real(o, key, 0, static_cast<double>(int64_t{1} << 62));
}

// A string of at most `limit` bytes (common/text_limits.h; summaries_to_json cuts what it writes
// to the same caps).
std::string string_value(const json& v, const std::string& what,
                         size_t limit = common::kNameLimit) {
  if (!v.is_string()) throw std::invalid_argument(what + " is not a string");
  const auto& x = v.get_ref<const std::string&>();
  if (x.size() > limit)
    throw std::invalid_argument(what + " is longer than " + std::to_string(limit) +
                                " bytes (c3scope's cap, docs/analyze.md \"Limits\")");
  return x;
}
std::string string_in(const json& o, const char* key, size_t limit = common::kNameLimit) {
  return string_value(o.at(key), key, limit);
}
std::vector<std::string> strings_in(const json& o, const char* key) {
  const json& a = o.at(key);
  if (!a.is_array()) throw std::invalid_argument(std::string(key) + " is not a list");
  std::vector<std::string> out;
  out.reserve(a.size());
  for (const json& x : a) out.push_back(string_value(x, key));
  return out;
}
template <size_t N>
std::array<int64_t, N> amounts(const json& o, const char* key) {
  const json& a = o.at(key);
  if (!a.is_array() || a.size() != N)
    throw std::invalid_argument(std::string(key) + " must hold " + std::to_string(N) + " numbers");
  std::array<int64_t, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = whole(a[i], key, 0, kAmountLimit);
  return out;
}
std::vector<std::pair<std::string, int64_t>> named_amounts(const json& o, const char* key) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const json& e : o.at(key)) {
    if (!e.is_array() || e.size() != 2)
      throw std::invalid_argument(std::string(key) + ": bad entry");
    out.emplace_back(string_value(e[0], key), whole(e[1], key, 0, kAmountLimit));
  }
  return out;
}

Breakdown breakdown_in(const json& j) {
  Breakdown b;
  b.activities = amount(j, "activities");
  b.first = stamp(j, "first");
  b.last = stamp(j, "last");
  b.span = amount(j, "span");
  b.busy = amount(j, "busy");
  b.idle = amount(j, "idle");
  b.time = amounts<kClasses>(j, "time");
  b.overlap = amount(j, "overlap");
  b.exposed_comm = amount(j, "exposed_comm");
  b.exposed_memcpy = amount(j, "exposed_memcpy");
  b.exposed_other = amount(j, "exposed_other");
  b.non_compute = amount(j, "non_compute");
  b.by_mask = amounts<1 << kClasses>(j, "by_mask");
  b.overlap_pct =
      b.comm() > 0 ? 100.0 * static_cast<double>(b.overlap) / static_cast<double>(b.comm()) : 0.0;
  return b;
}

ojson idle_out(const IdleCauses& c) {
  return {{"gaps", c.gaps},           {"idle", c.idle},
          {"host_wait", c.host_wait}, {"kernel_wait", c.kernel_wait},
          {"other", c.other},         {"micro", c.micro},
          {"macro", c.macro}};
}

// The parts must add up: a file whose do not is refused (a report would show parts that are not
// of the whole).
IdleCauses idle_in(const json& j) {
  IdleCauses c;
  c.gaps = amount(j, "gaps");
  c.idle = amount(j, "idle");
  c.host_wait = amount(j, "host_wait");
  c.kernel_wait = amount(j, "kernel_wait");
  c.other = amount(j, "other");
  c.micro = amount(j, "micro");
  c.macro = amount(j, "macro");
  if (c.host_wait + c.kernel_wait + c.other != c.idle ||
      (c.micro + c.macro != 0 && c.micro + c.macro != c.idle)) {
    throw std::invalid_argument("idle causes do not add up to idle");
  }
  return c;
}

// A rank's critical path through a step (why/path.h): its single-rank parts and its chains,
// each chain one array: [to_comm, to_seq, to_op, to_end_ns, from_comm, from_seq, from_ns, to_ns,
// [parts], last part, last name, [removed per what-if], to_bytes, to_nranks] (schema 4 has no
// to_bytes and to_nranks).
ojson path_out(const RankPath& p) {
  ojson chains = ojson::array();
  for (const PathChain& c : p.chains) {
    chains.push_back(ojson::array(
        {c.to_comm, c.to_seq, c.to_op, c.to_end_ns, c.from_comm, c.from_seq, c.from_ns, c.to_ns,
         c.parts, static_cast<int>(c.last), p.last_name(c), c.removed, c.to_bytes, c.to_nranks}));
  }
  return {{"local", p.local}, {"local_ns", p.local_ns}, {"chains", std::move(chains)}};
}

// Every number within the summaries' limits, and parts that add up to the chain's length.
RankPath path_in(const json& j, size_t what_ifs) {
  RankPath p;
  p.local = amounts<kPathParts>(j, "local");
  p.local_ns = amount(j, "local_ns");
  int64_t local = 0;
  for (int64_t v : p.local) local += v;
  if (local != p.local_ns) throw std::invalid_argument("path: local parts do not add up");
  std::unordered_map<std::string, int32_t> seen;
  for (const json& c : j.at("chains")) {
    if (!c.is_array() || (c.size() != 12 && c.size() != 14))
      throw std::invalid_argument("path: a chain is not 12 or 14 values");
    PathChain x;
    auto index = [](const json& v, const char* what) {
      return static_cast<int32_t>(whole(v, what, -1, INT32_MAX));
    };
    x.to_comm = index(c[0], "chain to_comm");
    x.to_seq = whole(c[1], "chain to_seq", -1, kStampLimit);
    x.to_op = index(c[2], "chain to_op");
    x.to_end_ns = whole(c[3], "chain to_end_ns", -kStampLimit, kStampLimit);
    x.from_comm = index(c[4], "chain from_comm");
    x.from_seq = whole(c[5], "chain from_seq", -1, kStampLimit);
    x.from_ns = whole(c[6], "chain from_ns", -kStampLimit, kStampLimit);
    x.to_ns = whole(c[7], "chain to_ns", -kStampLimit, kStampLimit);
    if (!c[8].is_array() || c[8].size() != kPathParts) throw std::invalid_argument("path: parts");
    int64_t sum = 0;
    for (size_t k = 0; k < kPathParts; ++k) {
      x.parts[k] = whole(c[8][k], "chain part", 0, kAmountLimit);
      sum += x.parts[k];
    }
    if (x.to_ns < x.from_ns || sum != x.to_ns - x.from_ns)
      throw std::invalid_argument("path: a chain's parts do not add up to its length");
    x.last = static_cast<PathPart>(whole(c[9], "chain last", 0, kPathParts - 1));
    x.last_name = p.add_name(string_value(c[10], "chain last name"), seen);
    if (!c[11].is_array() || c[11].size() != what_ifs)
      throw std::invalid_argument("path: a chain's what-ifs are not the summary's");
    for (const json& v : c[11]) x.removed.push_back(whole(v, "chain removed", 0, kAmountLimit));
    if (c.size() == 14) {
      x.to_bytes = whole(c[12], "chain to_bytes", 0, kBytesLimit);
      x.to_nranks = static_cast<int32_t>(whole(c[13], "chain to_nranks", 0, INT32_MAX));
    }
    p.chains.push_back(std::move(x));
  }
  return p;
}

ojson dist_out(const Distribution& d) {
  ojson j;
  if (d.exact()) {
    j["values"] = d.values();
  } else {
    j["bins"] = d.bins();
    j["zeros"] = d.zeros();
  }
  return j;
}

Distribution dist_in(const json& j) {
  if (j.contains("values"))
    return Distribution::from_values(j.at("values").get<std::vector<double>>());
  std::vector<std::pair<int32_t, int64_t>> bins;
  for (const json& b : j.at("bins")) {
    if (!b.is_array() || b.size() != 2) throw std::invalid_argument("bins: bad entry");
    // Keys of values from 1e-300 to 1e300 lie within +-70,000.
    bins.emplace_back(static_cast<int32_t>(whole(b[0], "bin key", -100000, 100000)),
                      whole(b[1], "bin count", 1, kAmountLimit));
  }
  return Distribution::from_bins(std::move(bins), amount(j, "zeros"));
}

template <class T>
ojson opt_out(const std::optional<T>& v) {
  return v ? ojson(*v) : ojson(nullptr);
}
template <class T>
std::optional<T> opt_in(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(whole(j.at(key), key, -kStampLimit, kStampLimit));
  } else {
    return j.at(key).get<T>();
  }
}

// The largest double a summary holds: any finite value (the loader's make_possible keeps them
// all, and a finite double's JSON text reads back).
constexpr double kHuge = std::numeric_limits<double>::max();

std::optional<double> opt_real(const json& j, const char* key, double lo, double hi) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return real(j, key, lo, hi);
}

int16_t i16(const json& j, const char* key) {
  return static_cast<int16_t>(whole(j.at(key), key, INT16_MIN, INT16_MAX));
}

ojson rank_out(const RankSummary& s) {
  ojson r;
  const Process& p = s.process;
  r["process"] = {{"source", p.source},
                  {"pid", p.pid},
                  {"host", p.host},
                  {"rank", opt_out(p.rank)},
                  {"world_size", opt_out(p.world_size)},
                  {"command_line", p.command_line},
                  {"trace_clock", p.trace_clock},
                  {"anchor_trace_ns", p.anchor_trace_ns},
                  {"anchor_realtime_ns", p.anchor_realtime_ns},
                  {"offset_ns", p.offset_ns},
                  {"versions", p.versions}};
  ojson devs = ojson::array();
  for (const Device& d : s.devices) {
    devs.push_back({{"device", d.device},
                    {"name", d.name},
                    {"sm_count", d.sm_count},
                    {"max_threads_per_sm", d.max_threads_per_sm},
                    {"max_blocks_per_sm", d.max_blocks_per_sm},
                    {"max_registers_per_sm", d.max_registers_per_sm},
                    {"max_shared_per_sm", d.max_shared_per_sm},
                    {"memory_bandwidth", d.memory_bandwidth}});
  }
  r["devices"] = std::move(devs);
  r["counts"] = {{"kernels", s.kernels},
                 {"memcpy", s.memcpys},
                 {"memset", s.memsets},
                 {"skipped_rows", s.skipped},
                 {"first_skipped", s.first_skipped}};
  ojson cpu = ojson::array();
  for (const auto& [key, n] : s.cpu_collectives)
    cpu.push_back(ojson::array({key.first, key.second, std::min(n, kAmountLimit)}));
  r["counts"]["cpu_collectives"] = std::move(cpu);
  r["total"] = breakdown_out(s.total);
  ojson pd = ojson::array();
  for (const auto& [d, b] : s.per_device) {
    ojson j = breakdown_out(b);
    j["device"] = d;
    pd.push_back(std::move(j));
  }
  r["per_device"] = std::move(pd);
  r["matching_ranges"] = s.matching_ranges;
  ojson ranges = ojson::array();
  for (const RangeReport& g : s.ranges) {
    ranges.push_back({{"name", g.name},
                      {"start_ns", g.start},
                      {"end_ns", g.end},
                      {"breakdown", breakdown_out(g.b)}});
  }
  r["ranges"] = std::move(ranges);
  ojson steps = ojson::array();
  for (const StepSample& st : s.steps) {
    ojson x = {{"index", st.index},
               {"name", st.name},
               {"start_ns", st.start},
               {"end_ns", st.end},
               {"breakdown", breakdown_out(st.b)}};
    if (s.why) {
      x["idle"] = idle_out(st.idle);
      x["path"] = path_out(st.path);
    }
    steps.push_back(std::move(x));
  }
  r["steps"] = {{"source", s.step_source}, {"samples", std::move(steps)}};
  ojson colls = ojson::array();
  for (const CollectiveStat& c : s.collectives) {
    colls.push_back({{"op", c.op},
                     {"bucket_bytes", c.bucket},
                     {"count", c.count},
                     {"total_ns", c.total_ns},
                     {"overlap_pct_sum", c.overlap_pct_sum},
                     {"algbw", dist_out(c.algbw)},
                     {"busbw", dist_out(c.busbw)},
                     {"duration_ns", dist_out(c.duration)}});
  }
  r["collectives"] = std::move(colls);
  ojson kernels = ojson::array();
  for (const KernelStat& k : s.kernel_stats) {
    kernels.push_back({{"name", k.name},
                       {"class", class_name(k.cls)},
                       {"count", k.count},
                       {"total_ns", k.total_ns},
                       {"duration_ns", dist_out(k.duration)}});
  }
  r["kernels"] = std::move(kernels);
  ojson inter = ojson::array();
  for (const InterferenceStat& x : s.interference) {
    inter.push_back({{"signature", x.signature},
                     {"class", class_name(x.cls)},
                     {"alone_ns", dist_out(x.alone)},
                     {"overlapped_ns", dist_out(x.overlapped)},
                     {"partial", x.partial},
                     {"total_ns", x.total_ns}});
  }
  r["interference"] = std::move(inter);
  ojson cont = ojson::array();
  for (const Contention& c : s.contention) {
    cont.push_back({{"device", c.device},
                    {"kernels_with_demand", c.kernels_with_demand},
                    {"kernels_unknown", c.kernels_unknown},
                    {"oversubscribed_ns", c.oversubscribed_ns},
                    {"oversubscribed_kernels", c.oversubscribed_kernels},
                    {"copy_overlap_ns", c.copy_overlap_ns},
                    {"copy_overlap_by_kind", c.copy_overlap_by_kind},
                    {"queued_kernels", c.queued_kernels},
                    {"queue_median_ns", c.queue_median_ns},
                    {"queue_p95_ns", c.queue_p95_ns},
                    {"queue_max_ns", c.queue_max_ns},
                    {"copy_bandwidth_share", c.copy_bandwidth_share}});
  }
  r["contention"] = std::move(cont);
  ojson bench = ojson::array();
  for (const BenchResult& b : s.bench) {
    ojson o = {{"backend", b.backend},   {"simulated", b.simulated}, {"label", b.label},
               {"scenario", b.scenario}, {"t_comp", b.t_comp},       {"t_comm", b.t_comm},
               {"t_c3", b.t_c3}};
    for (const BenchRatio& x : kBenchRatios) o[x.name] = opt_out(b.*x.value);
    o["busbw"] = opt_out(b.busbw);
    bench.push_back(std::move(o));
  }
  r["bench"] = std::move(bench);
  if (s.why) {
    ojson w;
    w["launch_calls"] = s.launch_calls;
    w["idle"] = idle_out(s.idle);
    ojson dev = ojson::array();
    for (const auto& [d, c] : s.device_idle) {
      ojson j = idle_out(c);
      j["device"] = d;
      dev.push_back(std::move(j));
    }
    w["devices"] = std::move(dev);
    ojson streams = ojson::array();
    for (const StreamIdle& x : s.stream_idle) {
      ojson j = idle_out(x.causes);
      j["device"] = x.device;
      j["stream"] = x.stream;
      j["activities"] = x.activities;
      streams.push_back(std::move(j));
    }
    w["streams"] = std::move(streams);
    ojson launches = ojson::array();
    for (const LaunchStat& x : s.launches) {
      launches.push_back({{"name", x.name},
                          {"count", x.count},
                          {"cpu_ns", x.cpu_ns},
                          {"gpu_ns", x.gpu_ns},
                          {"delay_ns", x.delay_ns},
                          {"cpu", dist_out(x.cpu)},
                          {"gpu", dist_out(x.gpu)},
                          {"delay", dist_out(x.delay)},
                          {"short_gpu", x.short_gpu},
                          {"runtime_outliers", x.runtime_outliers},
                          {"delay_outliers", x.delay_outliers}});
    }
    w["launches"] = std::move(launches);
    ojson queues = ojson::array();
    for (const StreamQueue& q : s.queues) {
      queues.push_back({{"device", q.device},
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
    w["run_start_ns"] = s.run_start;
    w["run_end_ns"] = s.run_end;
    w["run_path"] = path_out(s.run_path);
    // Schema 5: [scope, device, stream, step, comm, seq, from_ns, to_ns] per gap; the key only
    // where the gaps were kept (a summary of schema 4 read and written again has none).
    if (s.comm_gaps_known) {
      ojson gaps = ojson::array();
      for (const CommGap& g : s.comm_gaps) {
        gaps.push_back(ojson::array(
            {static_cast<int>(g.scope), g.device, g.stream, g.step, g.comm, g.seq, g.from, g.to}));
      }
      w["comm_gaps"] = std::move(gaps);
    }
    ojson seqs = ojson::array();
    for (const KernelSequence& q : s.sequences.top) {
      seqs.push_back(
          {{"names", q.names}, {"count", q.count}, {"span_ns", q.span_ns}, {"gpu_ns", q.gpu_ns}});
    }
    w["sequences"] = {{"occurrences", s.sequences.occurrences},
                      {"uncounted", s.sequences.uncounted},
                      {"top", std::move(seqs)}};
    r["why"] = std::move(w);
  }
  r["comms"] = s.calls.comms;
  r["ops"] = s.calls.ops;
  // Records as columns, one array per field, each entry the difference from the one before it
  // (the first from 0; two's-complement, so any values round-trip), and the GPU end as a
  // duration: calls come in runs of one communicator, op and size, so most entries are 0 or a
  // few digits instead of 19.
  ojson rec;
  auto col = [&](const char* name, auto get) {
    ojson a = ojson::array();
    uint64_t prev = 0;
    for (const CollectiveRecord& c : s.calls.records) {
      const auto v = static_cast<uint64_t>(static_cast<int64_t>(get(c)));
      a.push_back(static_cast<int64_t>(v - prev));
      prev = v;
    }
    rec[name] = std::move(a);
  };
  col("comm", [](const CollectiveRecord& c) { return c.comm; });
  col("op", [](const CollectiveRecord& c) { return c.op; });
  col("seq", [](const CollectiveRecord& c) { return c.seq; });
  col("bytes", [](const CollectiveRecord& c) { return c.bytes; });
  col("nranks", [](const CollectiveRecord& c) { return c.nranks; });
  col("rank", [](const CollectiveRecord& c) { return c.rank; });
  col("device", [](const CollectiveRecord& c) { return c.device; });
  col("gpu_start_ns", [](const CollectiveRecord& c) { return c.gpu_start; });
  col("gpu_duration_ns", [](const CollectiveRecord& c) {
    return static_cast<int64_t>(static_cast<uint64_t>(c.gpu_end) -
                                static_cast<uint64_t>(c.gpu_start));
  });
  r["records"] = std::move(rec);
  return r;
}

RankSummary rank_in(const json& r, size_t what_ifs) {
  RankSummary s;
  const json& p = r.at("process");
  s.process.source = string_in(p, "source", common::kCommandLineLimit);
  s.process.pid = stamp(p, "pid");
  s.process.host = string_in(p, "host");
  s.process.rank = opt_in<int64_t>(p, "rank");
  s.process.world_size = opt_in<int64_t>(p, "world_size");
  s.process.command_line = string_in(p, "command_line", common::kCommandLineLimit);
  s.process.trace_clock = string_in(p, "trace_clock");
  s.process.anchor_trace_ns = stamp(p, "anchor_trace_ns");
  s.process.anchor_realtime_ns = stamp(p, "anchor_realtime_ns");
  s.process.offset_ns = stamp(p, "offset_ns");
  if (p.contains("versions")) {
    for (const json& v : p.at("versions")) {
      if (!v.is_array() || v.size() != 2) throw std::invalid_argument("versions: bad entry");
      s.process.versions.emplace_back(string_value(v[0], "versions"),
                                      string_value(v[1], "versions"));
    }
    std::sort(s.process.versions.begin(), s.process.versions.end());
  }
  for (const json& d : r.at("devices")) {
    Device v;
    v.device = i16(d, "device");
    v.name = string_in(d, "name");
    v.sm_count = small(d, "sm_count");
    v.max_threads_per_sm = small(d, "max_threads_per_sm");
    v.max_blocks_per_sm = small(d, "max_blocks_per_sm");
    v.max_registers_per_sm = small(d, "max_registers_per_sm");
    v.max_shared_per_sm = amount(d, "max_shared_per_sm");
    v.memory_bandwidth = amount(d, "memory_bandwidth");
    s.devices.push_back(std::move(v));
  }
  const json& c = r.at("counts");
  s.kernels = amount(c, "kernels");
  s.memcpys = amount(c, "memcpy");
  s.memsets = amount(c, "memset");
  s.skipped = amount(c, "skipped_rows");
  s.first_skipped = string_in(c, "first_skipped", common::kCommandLineLimit);
  if (c.contains("cpu_collectives")) {  // schema 3
    const json& cpu = c.at("cpu_collectives");
    if (!cpu.is_array()) throw std::invalid_argument("cpu_collectives is not a list");
    for (const json& e : cpu) {
      if (!e.is_array() || e.size() != 3)
        throw std::invalid_argument("cpu_collectives: an entry is not [backend, op, count]");
      int64_t& v = s.cpu_collectives[{string_value(e[0], "cpu_collectives backend"),
                                      string_value(e[1], "cpu_collectives op")}];
      v = std::min(v + whole(e[2], "cpu_collectives count", 0, kAmountLimit), kAmountLimit);
    }
  }
  s.total = breakdown_in(r.at("total"));
  for (const json& d : r.at("per_device"))
    s.per_device.emplace_back(i16(d, "device"), breakdown_in(d));
  s.matching_ranges = amount(r, "matching_ranges");
  for (const json& g : r.at("ranges")) {
    RangeReport rr;
    rr.name = string_in(g, "name");
    rr.start = stamp(g, "start_ns");
    rr.end = stamp(g, "end_ns");
    rr.b = breakdown_in(g.at("breakdown"));
    if (rr.end < rr.start) throw std::invalid_argument("a range ends before it starts");
    s.ranges.push_back(std::move(rr));
  }
  const json& st = r.at("steps");
  s.step_source = string_in(st, "source");
  for (const json& g : st.at("samples")) {
    StepSample x;
    x.index = stamp(g, "index");
    x.name = string_in(g, "name");
    x.start = stamp(g, "start_ns");
    x.end = stamp(g, "end_ns");
    x.b = breakdown_in(g.at("breakdown"));
    if (x.end < x.start) throw std::invalid_argument("a step ends before it starts");
    if (g.contains("idle")) x.idle = idle_in(g.at("idle"));  // schema 4
    if (g.contains("path")) x.path = path_in(g.at("path"), what_ifs);
    s.steps.push_back(std::move(x));
  }
  for (const json& g : r.at("collectives")) {
    CollectiveStat x;
    x.op = string_in(g, "op");
    x.bucket = whole(g.at("bucket_bytes"), "bucket_bytes", 0, int64_t{1} << 62);
    if (x.bucket != 0 && (x.bucket & (x.bucket - 1)) != 0)
      throw std::invalid_argument("bucket_bytes is not a power of two");
    x.count = amount(g, "count");
    x.total_ns = amount(g, "total_ns");
    // Each activity's overlap is 0 to 100 %.
    x.overlap_pct_sum =
        real(g, "overlap_pct_sum", 0, 100.0 * static_cast<double>(x.count) * (1 + 1e-9));
    x.algbw = dist_in(g.at("algbw"));
    x.busbw = dist_in(g.at("busbw"));
    if (g.contains("duration_ns")) x.duration = dist_in(g.at("duration_ns"));
    s.collectives.push_back(std::move(x));
  }
  if (r.contains("kernels")) {
    for (const json& g : r.at("kernels")) {
      KernelStat k;
      k.name = string_in(g, "name");
      if (!parse_class(string_in(g, "class"), &k.cls)) throw std::invalid_argument("unknown class");
      k.count = amount(g, "count");
      k.total_ns = amount(g, "total_ns");
      k.duration = dist_in(g.at("duration_ns"));
      s.kernel_stats.push_back(std::move(k));
    }
  }
  for (const json& g : r.at("interference")) {
    InterferenceStat x;
    x.signature = string_in(g, "signature");
    if (!parse_class(string_in(g, "class"), &x.cls)) throw std::invalid_argument("unknown class");
    x.alone = dist_in(g.at("alone_ns"));
    x.overlapped = dist_in(g.at("overlapped_ns"));
    x.partial = amount(g, "partial");
    x.total_ns = amount(g, "total_ns");
    s.interference.push_back(std::move(x));
  }
  for (const json& g : r.at("contention")) {
    Contention x;
    x.device = small(g, "device", INT16_MIN, INT16_MAX);
    x.kernels_with_demand = amount(g, "kernels_with_demand");
    x.kernels_unknown = amount(g, "kernels_unknown");
    x.oversubscribed_ns = amount(g, "oversubscribed_ns");
    x.oversubscribed_kernels = named_amounts(g, "oversubscribed_kernels");
    x.copy_overlap_ns = amount(g, "copy_overlap_ns");
    x.copy_overlap_by_kind = named_amounts(g, "copy_overlap_by_kind");
    x.queued_kernels = amount(g, "queued_kernels");
    x.queue_median_ns = real_ns(g, "queue_median_ns");
    x.queue_p95_ns = real_ns(g, "queue_p95_ns");
    x.queue_max_ns = real_ns(g, "queue_max_ns");
    for (const json& e : g.at("copy_bandwidth_share")) {
      if (!e.is_array() || e.size() != 2)
        throw std::invalid_argument("copy_bandwidth_share: bad entry");
      // A share of the peak: a trace may report copies faster than the device's peak (> 1),
      // never more than 2^63 bytes in 1 ns on 1 byte/s.
      x.copy_bandwidth_share.emplace_back(string_value(e[0], "copy_bandwidth_share"),
                                          real_value(e[1], "copy_bandwidth_share", 0, 1e30));
    }
    s.contention.push_back(std::move(x));
  }
  for (const json& g : r.at("bench")) {
    BenchResult b;
    b.backend = string_in(g, "backend");
    b.simulated = g.at("simulated").get<bool>();
    b.label = string_in(g, "label");
    b.scenario = string_in(g, "scenario");
    // Medians in ns, non-negative (the loader's make_possible); ratios any finite value.
    b.t_comp = real(g, "t_comp", 0, kHuge);
    b.t_comm = real(g, "t_comm", 0, kHuge);
    b.t_c3 = real(g, "t_c3", 0, kHuge);
    for (const BenchRatio& x : kBenchRatios) b.*x.value = opt_real(g, x.name, -kHuge, kHuge);
    b.busbw = opt_real(g, "busbw", 0, kHuge);
    s.bench.push_back(std::move(b));
  }
  s.calls.comms = strings_in(r, "comms");
  s.calls.ops = strings_in(r, "ops");
  const json& rec = r.at("records");
  // Undoes the difference coding of rank_out.
  auto column = [&](const char* name) {
    const json& a = rec.at(name);
    if (!a.is_array())
      throw std::invalid_argument(std::string("records: ") + name + " is not a list");
    std::vector<int64_t> v;
    v.reserve(a.size());
    uint64_t sum = 0;
    for (const json& x : a) {
      sum += static_cast<uint64_t>(whole(x, name, INT64_MIN, INT64_MAX));
      v.push_back(static_cast<int64_t>(sum));
    }
    return v;
  };
  const auto comm = column("comm"), op = column("op"), seq = column("seq"), bytes = column("bytes"),
             nranks = column("nranks"), rank = column("rank"), device = column("device"),
             gs = column("gpu_start_ns"), dur = column("gpu_duration_ns");
  const size_t n = comm.size();
  for (size_t len : {op.size(), seq.size(), bytes.size(), nranks.size(), rank.size(), device.size(),
                     gs.size(), dur.size()}) {
    if (len != n) throw std::invalid_argument("records: columns of different lengths");
  }
  auto i32 = [](int64_t v) {
    if (v < INT32_MIN || v > INT32_MAX)
      throw std::invalid_argument("records: a value out of range");
    return static_cast<int32_t>(v);
  };
  s.calls.records.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (comm[i] < -1 || comm[i] >= static_cast<int64_t>(s.calls.comms.size()) || op[i] < -1 ||
        op[i] >= static_cast<int64_t>(s.calls.ops.size()))
      throw std::invalid_argument("records: communicator or op index out of range");
    if (device[i] < INT16_MIN || device[i] > INT16_MAX)
      throw std::invalid_argument("records: a device out of range");
    const int64_t end =
        static_cast<int64_t>(static_cast<uint64_t>(gs[i]) + static_cast<uint64_t>(dur[i]));
    auto time_ok = [](int64_t t) { return t >= -kStampLimit && t <= kStampLimit; };
    if (seq[i] < -1 || seq[i] > kStampLimit || bytes[i] < 0 || bytes[i] > kBytesLimit ||
        !time_ok(gs[i]) || !time_ok(end))
      throw std::invalid_argument("records: a sequence number, size or time out of range");
    CollectiveRecord& out = s.calls.records[i];
    out.comm = i32(comm[i]);
    out.op = i32(op[i]);
    out.seq = seq[i];
    out.bytes = bytes[i];
    out.nranks = i32(nranks[i]);
    out.rank = i32(rank[i]);
    out.device = static_cast<int16_t>(device[i]);
    out.gpu_start = gs[i];
    out.gpu_end =
        static_cast<int64_t>(static_cast<uint64_t>(gs[i]) + static_cast<uint64_t>(dur[i]));
  }
  s.calls.sort();  // cross-rank merging needs the order (a file written by hand may lack it)
  if (r.contains("why")) {  // schema 4
    const json& w = r.at("why");
    s.why = true;
    s.launch_calls = w.at("launch_calls").get<bool>();
    s.idle = idle_in(w.at("idle"));
    for (const json& d : w.at("devices")) s.device_idle.emplace_back(i16(d, "device"), idle_in(d));
    for (const json& g : w.at("streams")) {
      StreamIdle x;
      x.device = i16(g, "device");
      x.stream = static_cast<int32_t>(whole(g.at("stream"), "stream", INT32_MIN, INT32_MAX));
      x.activities = amount(g, "activities");
      x.causes = idle_in(g);
      s.stream_idle.push_back(x);
    }
    for (const json& g : w.at("launches")) {
      LaunchStat x;
      x.name = string_in(g, "name");
      x.count = amount(g, "count");
      x.cpu_ns = amount(g, "cpu_ns");
      x.gpu_ns = amount(g, "gpu_ns");
      x.delay_ns = amount(g, "delay_ns");
      x.cpu = dist_in(g.at("cpu"));
      x.gpu = dist_in(g.at("gpu"));
      x.delay = dist_in(g.at("delay"));
      x.short_gpu = amount(g, "short_gpu");
      x.runtime_outliers = amount(g, "runtime_outliers");
      x.delay_outliers = amount(g, "delay_outliers");
      s.launches.push_back(std::move(x));
    }
    for (const json& g : w.at("queues")) {
      StreamQueue q;
      q.device = i16(g, "device");
      q.stream = static_cast<int32_t>(whole(g.at("stream"), "stream", INT32_MIN, INT32_MAX));
      q.launches = amount(g, "launches");
      q.span_ns = amount(g, "span_ns");
      q.max = amount(g, "max");
      q.max_at = stamp(g, "max_at_ns");
      q.mean = real(g, "mean", 0, static_cast<double>(kAmountLimit));
      q.p50 = amount(g, "p50");
      q.p90 = amount(g, "p90");
      q.at_limit_ns = amount(g, "at_limit_ns");
      s.queues.push_back(q);
    }
    s.run_start = stamp(w, "run_start_ns");
    s.run_end = stamp(w, "run_end_ns");
    if (s.run_end < s.run_start) throw std::invalid_argument("the run ends before it starts");
    s.run_path = path_in(w.at("run_path"), what_ifs);
    if (w.contains("comm_gaps")) {  // schema 5
      s.comm_gaps_known = true;
      for (const json& g : w.at("comm_gaps")) {
        if (!g.is_array() || g.size() != 8)
          throw std::invalid_argument("a comm gap is not 8 numbers");
        CommGap x;
        x.scope = static_cast<CommGap::Scope>(whole(g[0], "comm gap scope", 0, 3));
        x.device = static_cast<int16_t>(whole(g[1], "comm gap device", INT16_MIN, INT16_MAX));
        x.stream = static_cast<int32_t>(whole(g[2], "comm gap stream", INT32_MIN, INT32_MAX));
        x.step = static_cast<int32_t>(
            whole(g[3], "comm gap step", -1, static_cast<int64_t>(s.steps.size()) - 1));
        x.comm = static_cast<int32_t>(
            whole(g[4], "comm gap comm", 0, static_cast<int64_t>(s.calls.comms.size()) - 1));
        x.seq = whole(g[5], "comm gap seq", 0, INT64_MAX);
        x.from = whole(g[6], "comm gap from", -kStampLimit, kStampLimit);
        x.to = whole(g[7], "comm gap to", x.from, kStampLimit);
        if ((x.scope == CommGap::Scope::step) != (x.step >= 0))
          throw std::invalid_argument("a comm gap's step does not fit its scope");
        s.comm_gaps.push_back(x);
      }
    }
    if (w.contains("sequences")) {  // schema 5
      const json& q = w.at("sequences");
      s.sequences_known = true;
      s.sequences.occurrences = amount(q, "occurrences");
      s.sequences.uncounted = amount(q, "uncounted");
      const json& top = q.at("top");
      if (!top.is_array() || top.size() > kSequencesKept)
        throw std::invalid_argument("sequences: not a list of at most 50");
      for (const json& g : top) {
        KernelSequence x;
        x.names = strings_in(g, "names");
        if (x.names.size() < 2 || x.names.size() > static_cast<size_t>(kMaxSequenceLength))
          throw std::invalid_argument("a sequence of fewer than 2 or more than 8 kernels");
        x.count = amount(g, "count");
        x.span_ns = amount(g, "span_ns");
        x.gpu_ns = amount(g, "gpu_ns");
        s.sequences.top.push_back(std::move(x));
      }
    }
  }
  return s;
}

}  // namespace

namespace {

// `s` as valid UTF-8 of at most `limit` bytes: bytes that are not UTF-8 become U+FFFD (as the
// JSON writer would make them, so that the cut holds after it), then cut (text_limits.h).
std::string capped(const std::string& s, size_t limit) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    // The length of a well-formed sequence at i (RFC 3629: no overlongs, surrogates or code
    // points past U+10FFFF); 0 if there is none.
    size_t len = 0;
    auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) {
      if (i + k >= s.size()) return false;
      const auto b = static_cast<unsigned char>(s[i + k]);
      return b >= lo && b <= hi;
    };
    if (c < 0x80) {
      len = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = cont(1) ? 2 : 0;
    } else if (c >= 0xE0 && c <= 0xEF) {
      const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
      len = cont(1, lo, hi) && cont(2) ? 3 : 0;
    } else if (c >= 0xF0 && c <= 0xF4) {
      const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
      len = cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
    }
    const std::string_view piece =
        len > 0 ? std::string_view(s).substr(i, len) : std::string_view("\xEF\xBF\xBD");
    if (out.size() + piece.size() > limit) break;
    out += piece;
    i += len > 0 ? len : 1;
  }
  return out;
}

// Every string of `j` within the caps the reader holds it to (a name from a trace may be longer:
// the trace readers cut or refuse at the same caps, this makes sure).
void cap_strings(ojson& j, size_t limit) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    // Plain ASCII within the cap (nearly every string) is kept as it is.
    if (s.size() <= limit / 3 || (s.size() <= limit && std::all_of(s.begin(), s.end(), [](char c) {
                                    return static_cast<unsigned char>(c) < 0x80;
                                  })))
      return;
    j = capped(s, limit);
  } else if (j.is_object()) {
    for (auto& [k, v] : j.items()) {
      const bool long_text =
          k == "command_line" || k == "classification" || k == "source" || k == "first_skipped";
      cap_strings(v, long_text ? common::kCommandLineLimit : common::kNameLimit);
    }
  } else if (j.is_array()) {
    for (auto& v : j) cap_strings(v, limit);
  }
}

// How deep `text` nests arrays and objects (outside strings), counted up to just past
// kSummaryDepthLimit.
size_t nesting_depth(std::string_view text) {
  JsonScan scan;
  for (const char c : text) {
    scan.feed(c);
    if (scan.deepest > kSummaryDepthLimit) break;
  }
  return scan.deepest;
}

}  // namespace

std::string summaries_to_json(const std::vector<RankSummary>& ranks, const SummaryOptions& o) {
  ojson j;
  j["schema"] = kSchema;
  j["options"] = {{"range", o.range},
                  {"step", o.step},
                  {"overlap_fraction", o.interference.overlap_fraction},
                  {"min_samples", o.interference.min_samples},
                  {"classification", o.classification},
                  {"hta_rounding", o.hta_rounding},
                  {"kernel_wait_ns", o.idle.kernel_wait_ns},
                  {"micro_idle_ns", o.idle.micro_ns},
                  {"runtime_cutoff_ns", o.launch.runtime_cutoff_ns},
                  {"delay_cutoff_ns", o.launch.delay_cutoff_ns},
                  {"queue_limit", o.queue.limit},
                  {"sequence_length", o.sequences.length}};
  ojson wi = ojson::array();
  for (const WhatIf& w : o.what_ifs) wi.push_back(w.text);
  j["options"]["what_if"] = std::move(wi);
  ojson rs = ojson::array();
  for (const RankSummary& s : ranks) rs.push_back(rank_out(s));
  j["ranks"] = std::move(rs);
  cap_strings(j, common::kNameLimit);
  // Names from traces need not be UTF-8: bytes that are not are replaced, not fatal.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string gzip_bytes(const std::string& data) {
  z_stream zs{};
  // 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib: cannot start compressing");
  std::string out;
  char buf[1 << 16];
  size_t at = 0;
  int rc = Z_OK;
  // Fed in pieces: zlib counts in 32 bits.
  do {
    const size_t piece = std::min<size_t>(data.size() - at, size_t{1} << 30);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + at));
    zs.avail_in = static_cast<uInt>(piece);
    at += piece;
    const int flush = at == data.size() ? Z_FINISH : Z_NO_FLUSH;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buf);
      zs.avail_out = sizeof buf;
      rc = deflate(&zs, flush);
      out.append(buf, sizeof buf - zs.avail_out);
    } while (zs.avail_out == 0);
  } while (at < data.size());
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::runtime_error("zlib: cannot compress the summary");
  return out;
}

std::vector<RankSummary> summaries_from_json(const std::string& text, const std::string& where,
                                             SummaryOptions* made_with) {
  if (text.size() > kSummaryTextLimit) {
    throw std::invalid_argument(where + ": not a valid c3scope summary: larger than " +
                                std::to_string(kSummaryTextLimit >> 30) +
                                " GiB of JSON (c3scope's cap, docs/analyze.md \"Limits\"); "
                                "summarize the job in parts and give analyze every part");
  }
  // A summary nests a few levels deep; a file of millions of '[' would build as many nested
  // values (gigabytes) before any field is checked.
  if (const size_t depth = nesting_depth(text); depth > kSummaryDepthLimit) {
    throw std::invalid_argument(where + ": not a valid c3scope summary: nested " +
                                std::to_string(depth) + "+ levels deep (a summary has at most " +
                                std::to_string(kSummaryDepthLimit) + ")");
  }
  try {
    const json j = json::parse(text);
    const std::string schema = string_in(j, "schema");
    if (schema != kSchema && schema != kSchemaV4 && schema != kSchemaV3 && schema != kSchemaV2 &&
        schema != kSchemaV1) {
      throw std::invalid_argument("schema '" + schema + "', this c3scope reads " +
                                  std::string(kSchema) + ", " + kSchemaV4 + ", " + kSchemaV3 +
                                  ", " + kSchemaV2 + " and " + kSchemaV1 +
                                  " (a newer c3scope wrote it?)");
    }
    // The what-ifs (schema 4): read always, since the chains carry one number per what-if.
    std::vector<WhatIf> what_ifs;
    if (const json& o = j.at("options"); o.contains("what_if")) {
      if (!o.at("what_if").is_array() || o.at("what_if").size() > kMaxWhatIfs)
        throw std::invalid_argument("what_if is not a list of at most 16");
      for (const json& w : o.at("what_if"))
        what_ifs.push_back(parse_what_if(string_value(w, "what_if")));
    }
    if (made_with != nullptr) {
      made_with->what_ifs = what_ifs;
      const json& o = j.at("options");
      made_with->range = string_in(o, "range");
      made_with->step = string_in(o, "step");
      made_with->interference.overlap_fraction = real(o, "overlap_fraction", 0, 1);
      made_with->interference.min_samples = small(o, "min_samples", 1, 1 << 30);
      made_with->classification = string_in(o, "classification", common::kCommandLineLimit);
      made_with->hta_rounding = o.at("hta_rounding").get<bool>();
      if (o.contains("kernel_wait_ns")) {  // schema 4
        made_with->idle.kernel_wait_ns = amount(o, "kernel_wait_ns");
        made_with->idle.micro_ns = amount(o, "micro_idle_ns");
        made_with->launch.runtime_cutoff_ns = amount(o, "runtime_cutoff_ns");
        made_with->launch.delay_cutoff_ns = amount(o, "delay_cutoff_ns");
        made_with->queue.limit = amount(o, "queue_limit");
      }
      if (o.contains("sequence_length")) {  // schema 5
        made_with->sequences.length = static_cast<int>(
            whole(o.at("sequence_length"), "sequence_length", 2, kMaxSequenceLength));
      }
    }
    std::vector<RankSummary> out;
    for (const json& r : j.at("ranks")) out.push_back(rank_in(r, what_ifs.size()));
    return out;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(where + ": not a valid c3scope summary: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(where + ": not a valid c3scope summary: " + e.what());
  }
}

}  // namespace c3::analyzer
