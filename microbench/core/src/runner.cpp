#include "c3/bench/runner.h"

#include <nvtx3/nvToolsExt.h>

#include <map>

namespace c3::bench {
namespace {

nvtxDomainHandle_t domain() {
  static nvtxDomainHandle_t d = nvtxDomainCreateA("c3bench");
  return d;
}

// An NVTX range in c3bench's domain carrying the case id as its payload.
class Range {
 public:
  Range(const std::string& message, int case_id) {
    nvtxEventAttributes_t a{};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = message.c_str();
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = case_id;
    nvtxDomainRangePushEx(domain(), &a);
  }
  ~Range() { nvtxDomainRangePop(domain()); }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

bool wants(Mode mode, Phase p) {
  switch (mode) {
    case Mode::all:
      return true;
    case Mode::alone:
      return p == Phase::compute_alone || p == Phase::comm_alone;
    case Mode::concurrent:
      return p != Phase::serial;
    case Mode::serial:
      return p != Phase::concurrent;
  }
  return true;
}

// Key of a case without its chunking: the unsplit baseline of a chunked case.
std::string unsplit_key(const Case& c) {
  Case u = c;
  u.knobs.chunks = 1;
  u.knobs.pipelined = false;
  u.id = 0;
  return u.label();
}

}  // namespace

std::vector<Case> build_cases(const Sweep& s) {
  std::vector<std::optional<ComputeOp>> computes;
  for (const auto& c : s.computes) computes.emplace_back(c);
  if (computes.empty()) computes.emplace_back(std::nullopt);
  std::vector<std::optional<CommOp>> comms;
  for (const auto& c : s.comms) comms.emplace_back(c);
  if (comms.empty()) comms.emplace_back(std::nullopt);
  std::vector<std::pair<bool, int>> schedules;  // (pipelined, chunks)
  if (s.independent || s.chunks.empty()) schedules.emplace_back(false, 1);
  for (int k : s.chunks) schedules.emplace_back(true, k);

  std::vector<Case> out;
  for (const auto& comp : computes) {
    for (const auto& comm : comms) {
      for (auto prio : s.priorities) {
        for (auto order : s.orders) {
          for (int nch : s.nchannels) {
            for (int part : s.sm_partitions) {
              for (auto [pipelined, k] : schedules) {
                Case c;
                c.id = static_cast<int>(out.size()) + 1;
                c.compute = comp;
                c.comm = comm;
                c.knobs.priority = prio;
                c.knobs.order = order;
                c.knobs.nchannels = nch;
                c.knobs.min_ctas = s.min_ctas;
                c.knobs.max_ctas = s.max_ctas;
                c.knobs.sm_partition_pct = part;
                c.knobs.pipelined = pipelined;
                c.knobs.chunks = k;
                out.push_back(c);
              }
            }
          }
        }
      }
    }
  }
  return out;
}

Stats Runner::measure(Phase phase, const Case& c, std::vector<PhaseTiming>* all) {
  // The phase's range names its configuration too, so a timeline shows what runs where.
  Range r(std::string(phase_name(phase)) + ": " + c.label(), c.id);
  for (int i = 0; i < sweep_.warmup; ++i) backend_.run(phase, c);
  all->clear();
  for (int i = 0; i < sweep_.iterations; ++i) all->push_back(backend_.run(phase, c));
  std::vector<double> wall;
  for (const auto& t : *all) wall.push_back(t.wall_ns);
  return stats_of(wall);
}

Result Runner::run_case(const Case& c) {
  Result res;
  res.c = c;
  res.nranks = backend_.gpus();
  res.iterations = sweep_.iterations;
  res.skip_reason = backend_.check(c);
  if (!res.skip_reason.empty()) return res;
  Range range("case " + std::to_string(c.id) + ": " + c.label(), c.id);
  backend_.prepare(c);
  std::vector<PhaseTiming> t;
  auto field = [&](double PhaseTiming::*f) {
    std::vector<double> v;
    v.reserve(t.size());
    for (const auto& x : t) v.push_back(x.*f);
    return stats_of(v);
  };
  if (c.compute && wants(sweep_.mode, Phase::compute_alone)) {
    measure(Phase::compute_alone, c, &t);
    res.comp_alone = field(&PhaseTiming::comp_ns);
  }
  if (c.comm && wants(sweep_.mode, Phase::comm_alone)) {
    measure(Phase::comm_alone, c, &t);
    res.comm_alone = field(&PhaseTiming::comm_ns);
    const double secs = res.comm_alone->median * 1e-9;
    res.algbw = algbw(c.comm->bytes, secs);
    res.busbw = res.algbw * busbw_factor(c.comm->kind, res.nranks);
  }
  if (c.compute && c.comm) {
    if (wants(sweep_.mode, Phase::concurrent)) {
      res.c3_wall = measure(Phase::concurrent, c, &t);
      res.comp_c3 = field(&PhaseTiming::comp_ns);
      res.comm_c3 = field(&PhaseTiming::comm_ns);
    }
    if (wants(sweep_.mode, Phase::serial)) res.serial_wall = measure(Phase::serial, c, &t);
    if (res.comp_alone && res.comm_alone && res.c3_wall) {
      res.metrics = c3_metrics(res.comp_alone->median, res.comm_alone->median, res.comp_c3->median,
                               res.comm_c3->median, res.c3_wall->median,
                               res.serial_wall ? res.serial_wall->median : 0);
      if (c.knobs.pipelined) res.metrics->comm_slowdown.reset();
    }
  }
  return res;
}

std::vector<Result> Runner::run(const std::function<void(const Result&)>& on_result) {
  std::vector<Result> results;
  // Alone times of each unsplit case, for the decomposition loss of its chunked versions.
  std::map<std::string, std::pair<std::optional<double>, std::optional<double>>> unsplit;
  std::map<std::string, double> pipelined_base;  // T_c3 of the k = 1 pipelined schedule
  for (const Case& c : build_cases(sweep_)) {
    Result r = run_case(c);
    if (r.skip_reason.empty()) {
      const std::string key = unsplit_key(c);
      if (c.knobs.pipelined && r.c3_wall) {
        if (c.knobs.chunks <= 1) {
          pipelined_base[key] = r.c3_wall->median;
        } else if (auto b = pipelined_base.find(key);
                   b != pipelined_base.end() && r.c3_wall->median > 0) {
          r.schedule_speedup = b->second / r.c3_wall->median;
        }
      }
      if (c.knobs.chunks <= 1) {
        unsplit[key] = {r.comp_alone ? std::optional<double>(r.comp_alone->median) : std::nullopt,
                        r.comm_alone ? std::optional<double>(r.comm_alone->median) : std::nullopt};
      } else {
        auto it = unsplit.find(key);
        if (it == unsplit.end()) {
          // Measure the unsplit baseline alone now.
          Case base = c;
          base.knobs.chunks = 1;
          base.knobs.pipelined = false;
          const Mode mode = sweep_.mode;
          sweep_.mode = Mode::alone;
          Result b = run_case(base);
          sweep_.mode = mode;
          it = unsplit
                   .emplace(key, std::make_pair(
                                     b.comp_alone ? std::optional<double>(b.comp_alone->median)
                                                  : std::nullopt,
                                     b.comm_alone ? std::optional<double>(b.comm_alone->median)
                                                  : std::nullopt))
                   .first;
        }
        if (it->second.first && r.comp_alone) {
          r.decomposition_loss_comp = decomposition_loss(r.comp_alone->median, *it->second.first);
        }
        if (it->second.second && r.comm_alone) {
          r.decomposition_loss_comm = decomposition_loss(r.comm_alone->median, *it->second.second);
        }
      }
    }
    if (on_result) on_result(r);
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace c3::bench
