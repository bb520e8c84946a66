// The analysis pipeline on whole jobs (issue 10 "Bounded memory"): synthetic training jobs of
// 8, 32 and 128 ranks x 250k GPU activities are written as trace files, then the pipeline runs
// on each job in a child process, as `c3scope analyze DIR` runs it (run_pipeline, then the text
// report); the benchmark prints its wall time and peak RSS (from wait4), the memory the rank
// summaries hold, and the growth of the peak without them from the smallest job to the largest
// (target: within 1.25x). The baseline in the same run is a child that reads every trace file
// once (`cat > /dev/null`): the least any analysis of the files must do.
//
// --why (issue 25): the cost of the why/ analyses, on the 8-rank job above written twice: as
// `c3scope record` writes it by default (no API calls) and as `c3scope record --cuda-api` does
// (one launch call per GPU row). Each is analyzed as before issue 25 (no launch calls read, no
// why/ analyses: the baseline), with the launch calls read but no why/ analyses (the second
// job), and as now, in interleaved rounds (the machines are noisy: medians of 5 of each, wall
// and CPU time); it prints the added time of each (target: at most +30%).
//
//   build/bin/c3_perf_pipeline [--ranks 8,32,128] [--activities 250000] [--keep DIR] [--why]
#include "c3/analyzer/summary/pipeline.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "synthetic.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// This process's peak resident memory (VmHWM): of this program image only. (A forked child's
// ru_maxrss starts at its parent's resident size, which after writing a big job is large.)
long own_peak_kb() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  long kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) kb = std::atol(line + 6);
  }
  std::fclose(f);
  return kb;
}

struct Child {
  int status = -1;
  double seconds = 0;
  double cpu_seconds = 0;  // user + system, of the child
  std::string out;         // its standard output
};

// Runs argv (a fresh program image) and collects its standard output (or discards it) and wall
// time.
Child run(const std::vector<std::string>& argv, bool capture = true) {
  Child c;
  int fds[2];
  if (pipe(fds) != 0) return c;
  std::fflush(stdout);
  const auto t0 = Clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const int null = open("/dev/null", O_WRONLY);
    dup2(capture ? fds[1] : null, STDOUT_FILENO);
    close(fds[1]);
    close(null);
    std::vector<char*> a;
    a.reserve(argv.size() + 1);
    for (const auto& x : argv) a.push_back(const_cast<char*>(x.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  close(fds[1]);
  char buf[4096];
  ssize_t got = 0;
  while ((got = read(fds[0], buf, sizeof buf)) > 0) c.out.append(buf, static_cast<size_t>(got));
  close(fds[0]);
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  c.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  c.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return c;
}

// The measured child (`--map DIR`): the pipeline as `c3scope analyze DIR` runs it, then one line
// "PEAK_KB SUMMARY_BYTES RECORDS".
int map_child(const std::string& dir, bool why, bool calls) {
  const auto inputs = c3::analyzer::resolve_inputs({dir});
  c3::analyzer::PipelineOptions po;
  po.analyze.why = why;
  po.open.launch_calls = calls;
  std::vector<c3::analyzer::RankSummary> summaries = c3::analyzer::map_inputs(inputs, po);
  uint64_t bytes = 0, records = 0;
  for (const auto& s : summaries) {
    bytes += s.bytes();
    records += s.calls.records.size();
  }
  const c3::analyzer::Report rep =
      c3::analyzer::reduce(std::move(summaries), c3::analyzer::input_names(inputs), {});
  FILE* null = std::fopen("/dev/null", "w");
  if (null != nullptr) {
    c3::analyzer::print_text(null, rep);
    std::fclose(null);
  }
  std::printf("%ld %llu %llu\n", own_peak_kb(), static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(records));
  return 0;
}

// --why: the 8-rank job without and with API calls, each mode of each run in interleaved
// rounds; the medians count.
int why_cost(const std::string& self, int64_t per_rank, const std::string& keep) {
  const fs::path root = keep.empty()
                            ? fs::temp_directory_path() / ("c3perf-why-" + std::to_string(getpid()))
                            : fs::path(keep);
  c3::gui::testing::SyntheticJob job;
  job.small_kernels = 12;
  job.ranks = 2;
  const int64_t per_step = c3::gui::testing::synthetic_activities_per_rank(job) / job.steps;
  job.steps = static_cast<int>(std::max<int64_t>(1, per_rank / per_step));
  job.ranks = 8;
  // mode: "--no-why" (the baseline), "--calls-only" (launch calls read, no why/), "" (now).
  struct Mode {
    std::string dir, flag, label;
    std::vector<double> wall = {}, cpu = {};
    long peak_kb = 0;
  };
  std::vector<Mode> modes;
  for (const bool calls : {false, true}) {
    job.api_calls = calls;
    const fs::path dir = root / (calls ? "job8-cuda-api" : "job8");
    fs::remove_all(dir);
    fs::create_directories(dir);
    c3::gui::testing::write_synthetic_job(dir.string(), job);
    modes.push_back({dir.string(), "--no-why", "before issue 25 (no launch calls, no why/)"});
    if (calls) modes.push_back({dir.string(), "--calls-only", "launch calls read, no why/"});
    modes.push_back({dir.string(), "", "now (idle causes, launches, queues, path)"});
  }
  constexpr int kRounds = 5;
  for (int k = 0; k < kRounds; ++k) {
    for (Mode& m : modes) {
      std::vector<std::string> argv = {self, "--map", m.dir};
      if (!m.flag.empty()) argv.push_back(m.flag);
      const Child c = run(argv);
      long kb = 0;
      if (c.status != 0 || std::sscanf(c.out.c_str(), "%ld", &kb) != 1) {
        std::fprintf(stderr, "c3_perf_pipeline: the pipeline exited %d on %s\n", c.status,
                     m.dir.c_str());
        if (keep.empty()) fs::remove_all(root);
        return 1;
      }
      m.peak_kb = std::max(m.peak_kb, kb);
      m.wall.push_back(c.seconds);
      m.cpu.push_back(c.cpu_seconds);
    }
  }
  if (keep.empty()) fs::remove_all(root);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf(
      "c3_perf_pipeline --why: 8 ranks x %lld GPU activities; analyze, median of %d interleaved "
      "runs (wall s, CPU s, peak MB; change against the job's baseline)\n",
      static_cast<long long>(job.steps) * per_step, kRounds);
  double base_wall = 0, base_cpu = 0;
  for (size_t k = 0; k < modes.size(); ++k) {
    const Mode& m = modes[k];
    if (m.flag == "--no-why") {
      std::printf("%s\n",
                  m.dir == modes.front().dir
                      ? " the job as `c3scope record` writes it (no API calls):"
                      : " the same job recorded with --cuda-api (a launch call per GPU row):");
      base_wall = median(m.wall);
      base_cpu = median(m.cpu);
    }
    const double wall = median(m.wall), cpu = median(m.cpu);
    std::printf("  %-43s %5.2f s %+6.1f%%  CPU %5.2f s %+6.1f%%  peak %5.1f MB\n", m.label.c_str(),
                wall, 100.0 * (wall / base_wall - 1), cpu, 100.0 * (cpu / base_cpu - 1),
                static_cast<double>(m.peak_kb) / 1024);
    if (m.flag.empty()) {
      const double added = 100.0 * (wall / base_wall - 1);
      std::printf("  added time: %+.1f%% (target: at most +30%%: %s)\n", added,
                  added <= 30 ? "met" : "NOT met");
    }
  }
  return 0;
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> out;
  for (const char* p = s; *p;) {
    out.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ranks = {8, 32, 128};
  int64_t per_rank = 250'000;
  std::string keep;
  if (argc >= 3 && std::strcmp(argv[1], "--map") == 0) {
    const std::string mode = argc == 4 ? argv[3] : "";
    return map_child(argv[2], mode.empty(), mode != "--no-why");
  }
  bool why = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--ranks") == 0 && i + 1 < argc) {
      ranks = parse_list(argv[++i]);
    } else if (std::strcmp(argv[i], "--activities") == 0 && i + 1 < argc) {
      per_rank = std::atoll(argv[++i]);
    } else if (std::strcmp(argv[i], "--keep") == 0 && i + 1 < argc) {
      keep = argv[++i];
    } else if (std::strcmp(argv[i], "--why") == 0) {
      why = true;
    } else {
      std::fprintf(stderr, "usage: %s [--ranks 8,32,128] [--activities N] [--keep DIR] [--why]\n",
                   argv[0]);
      return 2;
    }
  }
  if (ranks.empty() || per_rank < 1000) {
    std::fprintf(stderr, "c3_perf_pipeline: --ranks needs sizes, --activities at least 1000\n");
    return 2;
  }
  for (int r : ranks) {
    if (r < 2 || r > 4096) {
      std::fprintf(stderr, "c3_perf_pipeline: --ranks sizes must be 2..4096, not %d\n", r);
      return 2;
    }
  }
  const std::string self = fs::canonical("/proc/self/exe").string();
  if (why) return why_cost(self, per_rank, keep);
  const fs::path root =
      keep.empty() ? fs::temp_directory_path() / ("c3perf-pipeline-" + std::to_string(getpid()))
                   : fs::path(keep);
  c3::gui::testing::SyntheticJob job;
  job.small_kernels = 12;  // a training-like mix: many short kernels per collective
  job.api_calls = false;
  job.ranks = 2;
  const int64_t per_step = c3::gui::testing::synthetic_activities_per_rank(job) / job.steps;
  job.steps = static_cast<int>(std::max<int64_t>(1, per_rank / per_step));
  std::printf(
      "c3_perf_pipeline: jobs of %lld GPU activities per rank (%d steps), the pipeline of "
      "c3scope analyze on each (workers: one per core, %u cores)\n",
      static_cast<long long>(job.steps) * per_step, job.steps,
      std::max(1u, std::thread::hardware_concurrency()));
  std::printf("%6s %12s %8s %8s %10s %8s %9s %11s %9s %11s\n", "ranks", "activities", "write s",
              "read s", "analyze s", "ratio", "peak MB", "summaries", "rest MB", "B/record");
  double first_peak = 0, last_peak = 0;
  int rc = 0;
  for (int r : ranks) {
    job.ranks = r;
    const fs::path dir = root / ("job" + std::to_string(r));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const auto w0 = Clock::now();
    const std::vector<std::string> files = c3::gui::testing::write_synthetic_job(dir.string(), job);
    const double write_s = std::chrono::duration<double>(Clock::now() - w0).count();
    std::vector<std::string> cat = {"/bin/cat"};
    cat.insert(cat.end(), files.begin(), files.end());
    const Child base = run(cat, /*capture=*/false);
    const Child an = run({self, "--map", dir.string()});
    long peak_kb = 0;
    unsigned long long sbytes = 0, records = 0;
    if (an.status != 0 || base.status != 0 ||
        std::sscanf(an.out.c_str(), "%ld %llu %llu", &peak_kb, &sbytes, &records) != 3) {
      std::fprintf(stderr, "c3_perf_pipeline: the pipeline exited %d on %s\n", an.status,
                   dir.c_str());
      rc = 1;
      break;
    }
    const double peak = static_cast<double>(peak_kb) / 1024.0;
    const double summaries = static_cast<double>(sbytes) / (1024.0 * 1024.0);
    const double rest = peak - summaries;
    if (first_peak == 0) first_peak = rest;
    last_peak = rest;
    std::printf("%6d %12lld %8.1f %8.2f %10.2f %7.1fx %9.1f %8.1f MB %9.1f %11.0f\n", r,
                static_cast<long long>(job.steps) * per_step * r, write_s, base.seconds, an.seconds,
                an.seconds / std::max(base.seconds, 1e-6), peak, summaries, rest,
                records ? static_cast<double>(sbytes) / static_cast<double>(records) : 0.0);
    if (keep.empty()) fs::remove_all(dir);
  }
  if (keep.empty()) fs::remove_all(root);
  if (rc == 0 && ranks.size() > 1) {
    std::printf(
        "peak RSS without the summaries, largest job / smallest: %.2fx (target <= 1.25x: %s); "
        "summaries: every byte a rank summary holds, per collective record in the last column\n",
        last_peak / first_peak, last_peak <= 1.25 * first_peak ? "met" : "NOT met");
  }
  return rc;
}
