#include "options.h"

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "c3/common/strings.h"
#include "c3/sim/model/spec.h"
#include "c3/tracedb/version.h"

namespace c3::bench {
namespace sim = c3::sim::model;
namespace {

// The experiment `c3bench` runs when no experiment flag is given.
constexpr const char* kDefaultCompute = "gemm:8192x8192x8192:bf16";
constexpr const char* kDefaultComm = "allreduce:64M..512M";
const std::vector<int> kDefaultExperimentChunks = {1, 2, 4, 8};
constexpr int kDefaultWarmup = 5;
constexpr int kDefaultIterations = 20;
constexpr int kMaxChunks = 64;
constexpr int kMaxSimGpus = 8;

std::invalid_argument bad(const std::string& msg) {
  return std::invalid_argument(msg);
}

std::optional<int> to_int(const std::string& s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

Knobs::Priority parse_priority(const std::string& s) {
  if (auto p = common::stream_priority_from_name(s)) return *p;
  if (s == "high") return Knobs::Priority::comm_high;
  if (s == "low") return Knobs::Priority::comm_low;
  throw bad("--priority '" + s + "': expected equal, comm_high or comm_low");
}

Knobs::Order parse_order(const std::string& s) {
  if (auto o = common::launch_order_from_name(s)) return *o;
  throw bad("--order '" + s + "': expected compute_first or comm_first");
}

Mode parse_mode(const std::string& s) {
  if (s == "all") return Mode::all;
  if (s == "alone") return Mode::alone;
  if (s == "concurrent") return Mode::concurrent;
  if (s == "serial") return Mode::serial;
  throw bad("--mode '" + s + "': expected alone, concurrent, serial or all");
}

// "--schedule independent,chunks=1,2,4,8": the plain case and pipelined schedules of k chunks.
void parse_schedules(const std::vector<std::string>& specs, Sweep& sweep) {
  bool independent = false;
  std::vector<int> chunks;
  for (const std::string& spec : specs) {
    bool in_chunks = false;
    for (std::string tok : common::split(spec, ',')) {
      if (tok == "independent") {
        independent = true;
        in_chunks = false;
        continue;
      }
      if (tok.rfind("chunks=", 0) == 0) {
        tok = tok.substr(7);
        in_chunks = true;
      }
      auto k = to_int(tok);
      if (!in_chunks || !k) {
        throw bad("--schedule '" + spec +
                  "': expected 'chunks=K[,K...]' and/or 'independent' (e.g. "
                  "chunks=1,2,4,8)");
      }
      if (*k < 1 || *k > kMaxChunks) {
        std::string msg = "--schedule '" + spec + "': chunk count ";
        msg += tok + " must be 1 to " + std::to_string(kMaxChunks);
        throw bad(msg);
      }
      if (std::find(chunks.begin(), chunks.end(), *k) == chunks.end()) chunks.push_back(*k);
    }
  }
  std::sort(chunks.begin(), chunks.end());
  sweep.chunks = chunks;
  sweep.independent = independent || chunks.empty();
}

const char* env(const std::function<const char*(const char*)>& getenv_fn, const char* name) {
  const char* v = getenv_fn ? getenv_fn(name) : std::getenv(name);
  return v && *v ? v : nullptr;
}

}  // namespace

void add_options(CLI::App& app, Options& o) {
  app.set_version_flag("--version", std::string("c3bench ") + tracedb::kC3scopeVersion);
  app.add_option("--backend", o.backend,
                 "cuda (real GPUs), sim (the simulated node) or auto: cuda when this machine shows "
                 "a GPU, else sim")
      ->capture_default_str();
  app.add_option("--preset", o.preset,
                 "sim: node preset (h100, h200, a100, mi300x; --list-presets)")
      ->capture_default_str();
  app.add_option("--gpus,-g", o.gpus,
                 "GPUs driven by this process (default: sim 2, cuda 1; multi-process mode: one per "
                 "rank)");
  app.add_option(
      "--compute", o.computes,
      "compute op, repeatable: gemm:MxNxK[:fp32|fp16|bf16], triad:SIZE, fma:DURATION, or "
      "none (default gemm:8192x8192x8192:bf16)");
  app.add_option(
      "--comm", o.comms,
      "communication op, repeatable: allreduce|allgather|reducescatter|alltoall|sendrecv|"
      "dma_d2d|dma_p2p|sm_copy[:peer] with :SIZE or :BEGIN..END, or without a size to "
      "sweep -b..-e; or none (default allreduce:64M..512M)");
  app.add_option("-b,--minbytes", o.begin, "first message size of the sweep (e.g. 8M)");
  app.add_option("-e,--maxbytes", o.end, "last message size of the sweep (e.g. 1G)");
  app.add_option("-f,--stepfactor", o.factor, "size multiplication factor of the sweep")
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", o.warmup, "warm-up iterations per phase (default 5)");
  app.add_option("-n,--iters", o.iterations, "timed iterations per phase (default 20)");
  app.add_option(
         "--mode", o.mode,
         "phases to run: alone, concurrent (alone + concurrent), serial (alone + serial) or "
         "all")
      ->capture_default_str();
  app.add_option("--priority", o.priorities,
                 "stream priorities, swept: equal, comm_high, comm_low (comma-separated)")
      ->delimiter(',');
  app.add_option("--order", o.orders, "launch order, swept: compute_first, comm_first")
      ->delimiter(',');
  app.add_option("--nchannels", o.nchannels,
                 "NCCL channels, swept: ncclConfig_t minCTAs = maxCTAs, as NCCL_MIN/MAX_NCHANNELS "
                 "would set them per communicator (0: NCCL's choice)")
      ->delimiter(',');
  app.add_option("--ctas", o.ctas, "NCCL ncclConfig_t minCTAs:maxCTAs (e.g. 4:16)");
  app.add_option("--sm-partition", o.sm_partitions,
                 "SM partitioning with green contexts, swept: % of SMs for compute (1-99), the "
                 "rest for communication; 0: off")
      ->delimiter(',');
  app.add_option("--schedule", o.schedules,
                 "finer-grain schedules: chunks=K,K,... splits compute and communication into K "
                 "pipelined chunks (K=1: the unsplit baseline); add 'independent' to keep the "
                 "plain concurrent case (e.g. independent,chunks=1,2,4,8)");
  app.add_option("--json", o.json, "write the results as JSON to this file");
  app.add_option("--db", o.db,
                 "write the results into a new trace database (tables bench_run, bench_result); "
                 "under 'c3scope record' they also go into the process's own trace");
  app.add_flag("--force", o.force,
               "replace --json and --db files that exist (docs/outputs.md in the c3scope docs)");
  app.add_option("--store", o.store,
                 "multi-process mode: where ranks exchange the NCCL id, file:/shared/path or "
                 "tcp:HOST:PORT (default: $C3BENCH_STORE)");
  app.add_flag("--list-presets", o.list_presets, "list the simulated node presets and exit");
  app.add_flag("-v,--verbose", o.verbose, "say more about what the backend does");
}

RankEnv rank_from_env(const std::function<const char*(const char*)>& getenv_fn) {
  struct Source {
    const char* name;
    const char *rank, *size, *local;
  };
  const Source sources[] = {
      {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
      {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
      {"MPICH/PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
      {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
  };
  for (const Source& s : sources) {
    const char* r = env(getenv_fn, s.rank);
    const char* n = env(getenv_fn, s.size);
    if (!r || !n) continue;
    auto rank = to_int(r), size = to_int(n);
    if (!rank || !size) {
      throw bad(std::string(s.name) + " environment: " + s.rank + "='" + r + "', " + s.size + "='" +
                n + "' are not rank numbers");
    }
    if (*size <= 1) return {};  // one process: single-process mode
    RankEnv e;
    e.rank = *rank;
    e.world_size = *size;
    e.source = s.name;
    const char* l = env(getenv_fn, s.local);
    auto local = l ? to_int(l) : std::optional<int>(*rank);
    if (!local)
      throw bad(std::string(s.name) + " environment: " + s.local + "='" + l + "' is not a number");
    e.local_rank = *local;
    if (e.rank >= e.world_size) {
      throw bad(std::string(s.name) + " environment: rank " + r + " is not below world size " + n);
    }
    return e;
  }
  return {};
}

namespace {

// make_plan's stages, in order; each checks its flags and fills its part of the plan.

// --backend (auto: cuda when a GPU is visible, else the simulated node) and --preset.
void plan_backend(const Options& o, const std::function<bool(std::string*)>& gpu_visible, Plan& p) {
  if (o.backend == "auto") {
    std::string why;
    if (gpu_visible(&why)) {
      p.backend = "cuda";
    } else {
      p.backend = "sim";
      p.notice = "no GPU (" + why + "): running on the simulated node (--backend sim, preset " +
                 o.preset + "); results are predictions, not measurements";
    }
  } else if (o.backend == "cuda" || o.backend == "sim") {
    p.backend = o.backend;
  } else {
    throw bad("--backend '" + o.backend + "': expected cuda, sim or auto");
  }
  if (p.backend == "sim") {
    const auto names = sim::preset_names();
    if (std::find(names.begin(), names.end(), o.preset) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      throw bad("--preset '" + o.preset + "': unknown; presets are " + list);
    }
  }
}

// One process of a multi-process run: one GPU per rank, and a store for the NCCL id.
void plan_ranks(const Options& o, const RankEnv& re, bool sim,
                const std::function<const char*(const char*)>& getenv_fn, BackendOptions& bo) {
  if (sim) {
    throw bad("the sim backend simulates the whole node in one process, but this is rank " +
              std::to_string(re.rank) + " of " + std::to_string(re.world_size) + " (" + re.source +
              "): run one c3bench with --gpus " + std::to_string(re.world_size));
  }
  if (o.gpus && *o.gpus != 1) {
    throw bad("--gpus " + std::to_string(*o.gpus) + ": in multi-process mode (" + re.source + ", " +
              std::to_string(re.world_size) + " ranks) each rank drives one GPU");
  }
  bo.rank = re.rank;
  bo.world_size = re.world_size;
  bo.local_rank = re.local_rank;
  bo.gpus = 1;
  bo.store = o.store;
  if (bo.store.empty()) {
    if (const char* s = env(getenv_fn, "C3BENCH_STORE")) bo.store = s;
  }
  if (bo.store.empty()) {
    throw bad("multi-process run (rank " + std::to_string(re.rank) + " of " +
              std::to_string(re.world_size) + " from " + re.source +
              "): give --store file:/shared/path or tcp:HOST:PORT (or $C3BENCH_STORE) for the "
              "NCCL id exchange");
  }
}

// A single process driving --gpus GPUs.
void plan_gpus(const Options& o, bool sim, BackendOptions& bo) {
  if (!o.store.empty()) {
    throw bad("--store '" + o.store +
              "': only for multi-process runs (torchrun/mpirun/srun set the rank); this is a "
              "single process");
  }
  if (o.gpus && *o.gpus < 1)
    throw bad("--gpus " + std::to_string(*o.gpus) + ": must be at least 1");
  bo.gpus = o.gpus ? *o.gpus : (sim ? 2 : 1);
  if (sim && bo.gpus > kMaxSimGpus) {
    throw bad("--gpus " + std::to_string(bo.gpus) + ": the simulated node has 1 to " +
              std::to_string(kMaxSimGpus) + " GPUs");
  }
}

// The -b/-e size range (both or neither set afterwards).
struct SizeRange {
  std::optional<int64_t> begin, end;
};

// -w, -n, -f and the -b/-e range.
SizeRange plan_iterations(const Options& o, Sweep& s) {
  s.warmup = o.warmup.value_or(kDefaultWarmup);
  s.iterations = o.iterations.value_or(kDefaultIterations);
  if (s.warmup < 0)
    throw bad("-w " + std::to_string(s.warmup) + ": warm-up iterations must be 0 or more");
  if (s.iterations < 1)
    throw bad("-n " + std::to_string(s.iterations) + ": timed iterations must be at least 1");
  if (s.warmup > 100000 || s.iterations > 100000) throw bad("-w/-n: at most 100000 iterations");
  if (o.factor < 2)
    throw bad("-f " + std::to_string(o.factor) + ": the step factor must be 2 or more");
  SizeRange r;
  if (!o.begin.empty()) {
    r.begin = parse_size(o.begin);
    if (!r.begin || *r.begin <= 0)
      throw bad("-b '" + o.begin + "': expected a size such as 8M or 1G");
  }
  if (!o.end.empty()) {
    r.end = parse_size(o.end);
    if (!r.end || *r.end <= 0) throw bad("-e '" + o.end + "': expected a size such as 8M or 1G");
  }
  if (r.begin && !r.end) r.end = r.begin;
  if (r.end && !r.begin) r.begin = r.end;
  if (r.begin && *r.end < *r.begin) throw bad("-e " + o.end + " is below -b " + o.begin);
  return r;
}

// --compute: the ops, or none.
void plan_computes(const Options& o, Sweep& s) {
  bool none = false;
  const std::vector<std::string> computes =
      o.computes.empty() ? std::vector<std::string>{kDefaultCompute} : o.computes;
  for (const auto& c : computes) {
    if (c == "none") {
      none = true;
      continue;
    }
    s.computes.push_back(parse_compute(c));
  }
  if (none && !s.computes.empty())
    throw bad("--compute none cannot be combined with other --compute ops");
}

// --comm: the ops, or none; a spec without a size sweeps the -b..-e range.
void plan_comms(const Options& o, const SizeRange& r, Sweep& s) {
  bool none = false, used_range = false;
  std::vector<std::string> comms =
      o.comms.empty() ? std::vector<std::string>{kDefaultComm} : o.comms;
  if (o.comms.empty() && r.begin) comms = {"allreduce"};
  for (std::string c : comms) {
    if (c == "none") {
      none = true;
      continue;
    }
    const auto fields = common::split(c, ':');
    const bool has_size =
        fields.size() >= 2 && (parse_size(fields[1]) || fields[1].find("..") != std::string::npos);
    if (!has_size) {
      if (!r.begin) {
        std::string msg = "--comm '" + c + "': give a size (";
        msg += c;
        msg += ":64M, ";
        msg += c;
        msg += ":64M..1G) or a sweep with -b/-e";
        throw bad(msg);
      }
      used_range = true;
      c = fields[0] + ":" + format_size(*r.begin) + ".." + format_size(*r.end);
      for (size_t i = 1; i < fields.size(); ++i) c += ":" + fields[i];
    }
    for (auto& op : parse_comm(c, o.factor)) {
      if (op.bytes <= 0) throw bad("--comm '" + c + "': the size must be positive");
      s.comms.push_back(op);
    }
  }
  if (none && !s.comms.empty()) throw bad("--comm none cannot be combined with other --comm ops");
  if (r.begin && !used_range)
    throw bad("-b/-e apply to --comm ops given without a size; every --comm here has one");
}

// --mode, --priority, --order, --nchannels, --ctas, --sm-partition and --schedule.
void plan_knobs(const Options& o, bool default_experiment, Sweep& s) {
  s.mode = parse_mode(o.mode);
  if (!o.priorities.empty()) {
    s.priorities.clear();
    for (const auto& x : o.priorities) s.priorities.push_back(parse_priority(x));
  }
  if (!o.orders.empty()) {
    s.orders.clear();
    for (const auto& x : o.orders) s.orders.push_back(parse_order(x));
  }
  for (int n : o.nchannels) {
    if (n < 0 || n > 64)
      throw bad("--nchannels " + std::to_string(n) + ": must be 0 (NCCL's choice) to 64");
  }
  if (!o.nchannels.empty()) s.nchannels = o.nchannels;
  if (!o.ctas.empty()) {
    const auto f = common::split(o.ctas, ':');
    auto lo = f.size() == 2 ? to_int(f[0]) : std::nullopt;
    auto hi = f.size() == 2 ? to_int(f[1]) : std::nullopt;
    if (!lo || !hi || *lo < 1 || *hi < *lo || *hi > 64) {
      throw bad("--ctas '" + o.ctas + "': expected MIN:MAX with 1 <= MIN <= MAX <= 64 (e.g. 4:16)");
    }
    s.min_ctas = *lo;
    s.max_ctas = *hi;
  }
  for (int x : o.sm_partitions) {
    if (x < 0 || x > 99) {
      throw bad("--sm-partition " + std::to_string(x) +
                ": the % of SMs for compute must be 1 to 99 (0: off)");
    }
  }
  if (!o.sm_partitions.empty()) s.sm_partitions = o.sm_partitions;
  if (default_experiment) {
    s.chunks = kDefaultExperimentChunks;
    s.independent = true;
  } else {
    parse_schedules(o.schedules, s);
  }
  if (!s.chunks.empty() && (s.computes.empty() || s.comms.empty())) {
    throw bad(
        "--schedule chunks=...: a pipelined schedule splits a compute op and the communication "
        "of its result, so it needs both --compute and --comm");
  }
  const bool both = !s.computes.empty() && !s.comms.empty();
  if (!both && (s.mode == Mode::concurrent || s.mode == Mode::serial)) {
    throw bad("--mode " + o.mode + ": needs both a compute and a communication op");
  }
}

// The effective options, for bench_run.options_json and the JSON report.
std::string effective_options_json(const Options& o, const RankEnv& re, const Plan& p) {
  const BackendOptions& bo = p.backend_options;
  const Sweep& s = p.sweep;
  nlohmann::json j;
  j["backend"] = p.backend;
  if (p.backend == "sim") j["preset"] = o.preset;
  j["gpus"] = bo.gpus;
  if (bo.world_size > 0) {
    j["rank"] = bo.rank;
    j["world_size"] = bo.world_size;
    j["local_rank"] = bo.local_rank;
    j["rank_source"] = re.source;
    j["store"] = bo.store;
  }
  nlohmann::json jc = nlohmann::json::array(), jm = nlohmann::json::array();
  for (const auto& c : s.computes) jc.push_back(c.label());
  for (const auto& c : s.comms) jm.push_back(c.label());
  j["compute"] = jc;
  j["comm"] = jm;
  j["warmup"] = s.warmup;
  j["iterations"] = s.iterations;
  j["mode"] = o.mode;
  nlohmann::json jp = nlohmann::json::array(), jo = nlohmann::json::array();
  for (auto x : s.priorities) jp.push_back(common::stream_priority_name(x));
  for (auto x : s.orders) jo.push_back(common::launch_order_name(x));
  j["priority"] = jp;
  j["order"] = jo;
  j["nchannels"] = s.nchannels;
  j["min_ctas"] = s.min_ctas;
  j["max_ctas"] = s.max_ctas;
  j["sm_partition_pct"] = s.sm_partitions;
  j["chunks"] = s.chunks;
  j["independent"] = s.independent;
  j["default_experiment"] = p.default_experiment;
  return j.dump();
}

}  // namespace

Plan make_plan(const Options& o, const std::function<bool(std::string*)>& gpu_visible,
               const std::function<const char*(const char*)>& getenv_fn) {
  Plan p;
  plan_backend(o, gpu_visible, p);
  const bool sim = p.backend == "sim";
  p.backend_options.preset = o.preset;
  p.backend_options.verbose = o.verbose;
  const RankEnv re = rank_from_env(getenv_fn);
  if (re.world_size > 1) {
    plan_ranks(o, re, sim, getenv_fn, p.backend_options);
  } else {
    plan_gpus(o, sim, p.backend_options);
  }
  const SizeRange range = plan_iterations(o, p.sweep);
  p.default_experiment =
      o.computes.empty() && o.comms.empty() && o.schedules.empty() && !range.begin;
  plan_computes(o, p.sweep);
  plan_comms(o, range, p.sweep);
  if (p.sweep.computes.empty() && p.sweep.comms.empty())
    throw bad("--compute none and --comm none: nothing to run");
  plan_knobs(o, p.default_experiment, p.sweep);
  p.options_json = effective_options_json(o, re, p);
  return p;
}

void print_presets(FILE* out) {
  std::fprintf(out, "%-8s %-34s %5s %10s %10s %6s %12s %4s  %s\n", "preset", "GPU", "SMs",
               "bf16 TF/s", "HBM TB/s", "links", "link GB/s", "CEs", "topology");
  for (const auto& name : sim::preset_names()) {
    const sim::NodeSpec n = sim::preset(name, 1);
    const sim::GpuSpec& g = n.gpu;
    std::fprintf(out, "%-8s %-34s %5d %10.0f %10.2f %6d %12.0f %4d  %s\n", name.c_str(),
                 g.name.c_str(), g.sms, g.bf16_flops / 1e12, g.hbm_bytes_per_s / 1e12, g.links,
                 g.link_bytes_per_s / 1e9, g.copy_engines,
                 g.topology == sim::Topology::nvswitch ? "NVSwitch" : "full mesh");
  }
  std::fprintf(out, "Every number's source: docs/sim-model.md and docs/sim-presets-sources.md\n");
}

}  // namespace c3::bench
