// Facts about the traced process: host, pid, command line, and rank/local rank/world size as the
// launchers (torchrun, Open MPI, MPICH/PMI, PMIx, Slurm) publish them in the environment.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config.h"

namespace c3::collector {

struct RankInfo {
  std::optional<int64_t> rank;
  std::optional<int64_t> local_rank;
  std::optional<int64_t> world_size;
};

// Pure: the first variable set (and numeric) wins, in the order torchrun, Open MPI, PMI, PMIx,
// Slurm.
RankInfo rank_info(const EnvLookup& env);

struct ProcessFacts {
  int64_t pid = 0;
  int64_t ppid = 0;
  std::string host;
  std::string command_line;
  std::string executable;
  RankInfo ranks;
};

ProcessFacts read_process_facts(const EnvLookup& env);

// Expands an output pattern: %p pid, %h host, %r rank ('norank' when unknown), %q{VAR} the
// variable's value (empty if unset), %% '%'. Unknown %x sequences are kept literally. Pure.
std::string expand_output_pattern(const std::string& pattern, const ProcessFacts& facts,
                                  const EnvLookup& env);

// Where to write: the expanded pattern, or inside it when it names a directory (ends in '/' or
// is an existing directory). Adds ".sqlite" when the name has no extension.
std::string output_path(const std::string& pattern, const ProcessFacts& facts,
                        const EnvLookup& env);

// The n-th alternative name when `path` exists: a.sqlite -> a.1.sqlite, a.2.sqlite, ...
std::string alternative_path(const std::string& path, int n);

}  // namespace c3::collector
