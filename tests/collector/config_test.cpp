#include "config.h"

#include <gtest/gtest.h>

#include <map>

#include "process_info.h"

using namespace c3::collector;

namespace {
EnvLookup env_of(const std::map<std::string, std::string>& m) {
  return [m](const char* k) -> std::optional<std::string> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}
}  // namespace

TEST(Config, Defaults) {
  Config c = parse_config(env_of({}));
  EXPECT_EQ(c.output_pattern, "c3scope-%h-%p.sqlite");
  EXPECT_EQ(c.flush_ms, 1000);
  EXPECT_EQ(c.buffer_mb, 64);
  EXPECT_FALSE(c.cuda_api);
  EXPECT_EQ(c.log, LogLevel::info);
  EXPECT_TRUE(c.warnings.empty());
}

TEST(Config, ValuesAndBadValuesWarnNamingTheVariable) {
  Config c = parse_config(env_of({{"C3SCOPE_FLUSH_MS", "250"},
                                  {"C3SCOPE_BUFFER_MB", "lots"},
                                  {"C3SCOPE_CUDA_API", "1"},
                                  {"C3SCOPE_LOG", "loud"}}));
  EXPECT_EQ(c.flush_ms, 250);
  EXPECT_EQ(c.buffer_mb, 64);
  EXPECT_TRUE(c.cuda_api);
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_NE(c.warnings[0].find("C3SCOPE_BUFFER_MB='lots'"), std::string::npos);
  EXPECT_NE(c.warnings[1].find("C3SCOPE_LOG='loud'"), std::string::npos);
}

TEST(Config, OutOfRangeNumbersKeepTheDefaultAndSayTheRange) {
  Config c = parse_config(env_of({{"C3SCOPE_FLUSH_MS", "5"}, {"C3SCOPE_BUFFER_MB", "70000"}}));
  EXPECT_EQ(c.flush_ms, 1000);
  EXPECT_EQ(c.buffer_mb, 64);
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_EQ(c.warnings[0],
            "C3SCOPE_FLUSH_MS='5' is not a number of milliseconds from 10 to 3600000; using 1000");
  EXPECT_EQ(c.warnings[1],
            "C3SCOPE_BUFFER_MB='70000' is not a size in MiB from 1 to 65536; using 64");
}

TEST(RankInfo, LaunchersInPriorityOrder) {
  auto r = rank_info(
      env_of({{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}, {"SLURM_PROCID", "9"}}));
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(r.local_rank, 1);
  EXPECT_EQ(r.world_size, 8);
  auto mpi = rank_info(env_of({{"OMPI_COMM_WORLD_RANK", "5"},
                               {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                               {"OMPI_COMM_WORLD_SIZE", "16"}}));
  EXPECT_EQ(mpi.rank, 5);
  EXPECT_EQ(mpi.world_size, 16);
  auto slurm =
      rank_info(env_of({{"SLURM_PROCID", "2"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "4"}}));
  EXPECT_EQ(slurm.rank, 2);
  EXPECT_EQ(slurm.local_rank, 0);
  EXPECT_EQ(slurm.world_size, 4);
  auto pmi = rank_info(env_of({{"PMI_RANK", "7"}, {"PMI_SIZE", "8"}}));
  EXPECT_EQ(pmi.rank, 7);
  auto bad = rank_info(env_of({{"RANK", "x"}, {"PMIX_RANK", "4"}}));
  EXPECT_EQ(bad.rank, 4);
  EXPECT_FALSE(rank_info(env_of({})).rank.has_value());
}

TEST(OutputPattern, Expansion) {
  ProcessFacts f;
  f.pid = 1234;
  f.host = "node7";
  f.ranks.rank = 3;
  auto env = env_of({{"JOB", "j42"}});
  EXPECT_EQ(expand_output_pattern("t-%h-%p-%r.sqlite", f, env), "t-node7-1234-3.sqlite");
  EXPECT_EQ(expand_output_pattern("%q{JOB}/x%%y-%q{MISSING}.sqlite", f, env), "j42/x%y-.sqlite");
  EXPECT_EQ(expand_output_pattern("a%zb%", f, env), "a%zb%");
  f.ranks.rank.reset();
  EXPECT_EQ(expand_output_pattern("r%r", f, env), "rnorank");
  EXPECT_EQ(output_path("trace", f, env), "trace.sqlite");
  EXPECT_EQ(output_path("runs/", f, env), "runs/c3scope-node7-1234.sqlite");
  EXPECT_EQ(output_path("/tmp", f, env), "/tmp/c3scope-node7-1234.sqlite");
}

TEST(OutputPattern, AlternativeNames) {
  EXPECT_EQ(alternative_path("runs/a.sqlite", 1), "runs/a.1.sqlite");
  EXPECT_EQ(alternative_path("runs.d/a", 2), "runs.d/a.2");
}
