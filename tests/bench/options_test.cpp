// c3bench's flags: the plan they make, the environment of multi-process launchers, and the one-
// line rejection of bad values.
#include "options.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

using namespace c3::bench;

namespace {

std::function<bool(std::string*)> gpu(bool present) {
  return [present](std::string* why) {
    if (!present) *why = "no GPU here";
    return present;
  };
}

std::function<const char*(const char*)> env(std::map<std::string, std::string> vars) {
  auto held = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [held](const char* name) -> const char* {
    auto it = held->find(name);
    return it == held->end() ? nullptr : it->second.c_str();
  };
}

Plan plan(const Options& o, bool gpu_present = false,
          std::map<std::string, std::string> vars = {}) {
  return make_plan(o, gpu(gpu_present), env(std::move(vars)));
}

std::string rejection(const Options& o, std::map<std::string, std::string> vars = {}) {
  try {
    plan(o, false, std::move(vars));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Options, DefaultExperiment) {
  Options o;
  o.backend = "sim";
  Plan p = plan(o);
  EXPECT_EQ(p.backend, "sim");
  EXPECT_TRUE(p.default_experiment);
  EXPECT_EQ(p.backend_options.gpus, 2);
  EXPECT_EQ(p.backend_options.world_size, 0);
  ASSERT_EQ(p.sweep.computes.size(), 1u);
  EXPECT_EQ(p.sweep.computes[0].label(), "gemm:8192x8192x8192:bf16");
  ASSERT_EQ(p.sweep.comms.size(), 4u);
  EXPECT_EQ(p.sweep.comms[3].label(), "allreduce:512M");
  EXPECT_EQ(p.sweep.chunks, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_TRUE(p.sweep.independent);
  EXPECT_EQ(build_cases(p.sweep).size(), 20u);
  EXPECT_EQ(p.sweep.warmup, 5);
  EXPECT_EQ(p.sweep.iterations, 20);
  auto j = nlohmann::json::parse(p.options_json);
  EXPECT_EQ(j.at("preset"), "h100");
  EXPECT_EQ(j.at("chunks").size(), 4u);
}

TEST(Options, AutoBackend) {
  Options o;
  Plan none = plan(o, false);
  EXPECT_EQ(none.backend, "sim");
  EXPECT_NE(none.notice.find("no GPU here"), std::string::npos) << none.notice;
  EXPECT_NE(none.notice.find("simulated"), std::string::npos);
  Plan some = plan(o, true);
  EXPECT_EQ(some.backend, "cuda");
  EXPECT_EQ(some.backend_options.gpus, 1);
  EXPECT_TRUE(some.notice.empty());
}

TEST(Options, SweepFlags) {
  Options o;
  o.backend = "sim";
  o.gpus = 8;
  o.comms = {"allgather", "sm_copy:peer"};
  o.begin = "1M";
  o.end = "512M";
  o.schedules = {"chunks=1,2,4,8"};
  o.priorities = {"comm_high", "equal"};
  o.nchannels = {0, 8};
  o.ctas = "4:16";
  Plan p = plan(o);
  EXPECT_FALSE(p.default_experiment);
  EXPECT_EQ(p.sweep.comms.size(), 20u);
  EXPECT_EQ(p.sweep.comms[10].label(), "sm_copy:1M:peer");
  EXPECT_FALSE(p.sweep.independent);
  EXPECT_EQ(p.sweep.min_ctas, 4);
  EXPECT_EQ(p.sweep.max_ctas, 16);
  // 1 compute x 20 comms x 2 priorities x 1 order x 2 channel settings x 4 schedules.
  EXPECT_EQ(build_cases(p.sweep).size(), 1u * 20 * 2 * 2 * 4);
  o.schedules = {"independent,chunks=2", "chunks=4"};
  p = plan(o);
  EXPECT_TRUE(p.sweep.independent);
  EXPECT_EQ(p.sweep.chunks, (std::vector<int>{2, 4}));
}

TEST(Options, RanksFromLaunchers) {
  EXPECT_EQ(rank_from_env(env({})).world_size, 0);
  RankEnv t = rank_from_env(env({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "3"}}));
  EXPECT_EQ(t.rank, 3);
  EXPECT_EQ(t.world_size, 8);
  EXPECT_EQ(t.local_rank, 3);
  EXPECT_EQ(t.source, "torchrun");
  RankEnv m = rank_from_env(env({{"OMPI_COMM_WORLD_RANK", "1"},
                                 {"OMPI_COMM_WORLD_SIZE", "2"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}));
  EXPECT_EQ(m.source, "Open MPI");
  RankEnv s =
      rank_from_env(env({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "1"}}));
  EXPECT_EQ(s.rank, 5);
  EXPECT_EQ(s.local_rank, 1);
  EXPECT_EQ(s.source, "Slurm");
  // One task is single-process mode.
  EXPECT_EQ(rank_from_env(env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "1"}})).world_size, 0);
  EXPECT_THROW(rank_from_env(env({{"RANK", "x"}, {"WORLD_SIZE", "2"}})), std::invalid_argument);
  EXPECT_THROW(rank_from_env(env({{"RANK", "2"}, {"WORLD_SIZE", "2"}})), std::invalid_argument);
}

TEST(Options, MultiProcessCuda) {
  Options o;
  o.backend = "cuda";
  std::map<std::string, std::string> vars = {
      {"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"}};
  EXPECT_NE(rejection(o, vars).find("--store"), std::string::npos);
  vars["C3BENCH_STORE"] = "tcp:127.0.0.1:29555";
  Plan p = plan(o, true, vars);
  EXPECT_EQ(p.backend_options.rank, 1);
  EXPECT_EQ(p.backend_options.world_size, 4);
  EXPECT_EQ(p.backend_options.local_rank, 1);
  EXPECT_EQ(p.backend_options.store, "tcp:127.0.0.1:29555");
  o.store = "file:/tmp/id";
  EXPECT_EQ(plan(o, true, vars).backend_options.store, "file:/tmp/id");
  o.gpus = 2;
  EXPECT_NE(rejection(o, vars).find("each rank drives one GPU"), std::string::npos);
}

TEST(Options, RejectsWithOneLineNamingTheValue) {
  struct Bad {
    std::function<void(Options&)> set;
    std::string needle;
  };
  const std::vector<Bad> bad = {
      {[](Options& o) { o.backend = "tpu"; }, "--backend 'tpu'"},
      {[](Options& o) { o.preset = "b300"; }, "--preset 'b300'"},
      {[](Options& o) { o.gpus = 12; }, "--gpus 12"},
      {[](Options& o) { o.factor = 1; }, "-f 1"},
      {[](Options& o) { o.iterations = 0; }, "-n 0"},
      {[](Options& o) { o.warmup = -3; }, "-w -3"},
      {[](Options& o) { o.begin = "1x"; }, "-b '1x'"},
      {[](Options& o) {
         o.comms = {"allreduce:1M"};
         o.begin = "1M";
       },
       "-b/-e"},
      {[](Options& o) { o.mode = "fast"; }, "--mode 'fast'"},
      {[](Options& o) { o.priorities = {"urgent"}; }, "--priority 'urgent'"},
      {[](Options& o) { o.orders = {"random"}; }, "--order 'random'"},
      {[](Options& o) { o.nchannels = {65}; }, "--nchannels 65"},
      {[](Options& o) { o.ctas = "16:4"; }, "--ctas '16:4'"},
      {[](Options& o) { o.ctas = "4"; }, "--ctas '4'"},
      {[](Options& o) { o.sm_partitions = {100}; }, "--sm-partition 100"},
      {[](Options& o) { o.schedules = {"chunks=65"}; }, "chunks=65"},
      {[](Options& o) { o.schedules = {"pipelined"}; }, "--schedule 'pipelined'"},
      {[](Options& o) {
         o.computes = {"none", "triad:1G"};
       },
       "--compute none"},
      {[](Options& o) {
         o.comms = {"none"};
         o.schedules = {"chunks=2"};
       },
       "needs both"},
      {[](Options& o) {
         o.comms = {"none"};
         o.mode = "concurrent";
       },
       "--mode concurrent"},
      {[](Options& o) { o.store = "file:/x"; }, "--store 'file:/x'"},
  };
  for (const auto& b : bad) {
    Options o;
    o.backend = "sim";
    b.set(o);
    const std::string msg = rejection(o);
    EXPECT_NE(msg.find(b.needle), std::string::npos) << "want '" << b.needle << "' in: " << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  Options o;
  o.backend = "sim";
  EXPECT_NE(rejection(o, {{"RANK", "0"}, {"WORLD_SIZE", "2"}}).find("--gpus 2"), std::string::npos);
}
