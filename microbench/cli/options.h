// c3bench's command line: the flags, and the plan they make (backend, its options, the sweep).
// make_plan is pure apart from the environment it reads (ranks), so tests drive it directly.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "c3/bench/backend.h"
#include "c3/bench/runner.h"

namespace c3::bench {

struct Options {
  std::string backend = "auto";
  std::string preset = "h100";
  // Unset: the backend's default (sim 2 GPUs, cuda 1; 5 warm-up and 20 timed iterations). Given
  // values are checked, never replaced by defaults (-n -1 and --gpus 0 are errors).
  std::optional<int> gpus;
  std::vector<std::string> computes, comms;
  std::string begin, end;  // -b / -e
  int64_t factor = 2;      // -f
  std::optional<int> warmup, iterations;
  std::string mode = "all";
  std::vector<std::string> priorities, orders;
  std::vector<int> nchannels;
  std::string ctas;
  std::vector<int> sm_partitions;
  std::vector<std::string> schedules;
  std::string json, db, store;
  bool list_presets = false;
  bool force = false;  // --force: replace existing --json / --db files
  bool verbose = false;
};

void add_options(CLI::App& app, Options& o);

struct Plan {
  std::string backend;  // "cuda" or "sim"
  BackendOptions backend_options;
  Sweep sweep;
  std::string options_json;  // the effective options (bench_run.options_json)
  std::string notice;        // one line for stderr (e.g. why auto chose sim), or ""
  bool default_experiment = false;
};

// Where the process's rank comes from in multi-process mode.
struct RankEnv {
  int rank = 0, world_size = 0, local_rank = 0;
  std::string source;  // "torchrun", "Open MPI", "MPICH/PMI", "Slurm" or "" (single process)
};
RankEnv rank_from_env(const std::function<const char*(const char*)>& getenv_fn);

// Checks every flag and builds the plan; throws std::invalid_argument with one line naming the
// flag, the value and what is accepted. `gpu_visible` decides --backend auto.
Plan make_plan(const Options& o, const std::function<bool(std::string*)>& gpu_visible,
               const std::function<const char*(const char*)>& getenv_fn = nullptr);

// --list-presets: the simulated node presets and their main numbers.
void print_presets(FILE* out);

}  // namespace c3::bench
