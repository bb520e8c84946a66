#include "process_info.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "c3/common/strings.h"

namespace c3::collector {
namespace {

std::optional<int64_t> env_int(const EnvLookup& env, const char* name) {
  auto v = env(name);
  if (!v) return std::nullopt;
  return common::parse_int(*v);
}

std::optional<int64_t> first_of(const EnvLookup& env, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (auto v = env_int(env, n)) return v;
  }
  return std::nullopt;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

RankInfo rank_info(const EnvLookup& env) {
  RankInfo r;
  r.rank = first_of(env, {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"});
  r.local_rank = first_of(env, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                "PALS_LOCAL_RANKID", "SLURM_LOCALID"});
  r.world_size = first_of(env, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"});
  return r;
}

ProcessFacts read_process_facts(const EnvLookup& env) {
  ProcessFacts f;
  f.pid = getpid();
  f.ppid = getppid();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) f.host = host;
  if (f.host.empty()) f.host = "unknown-host";
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  f.command_line = raw;
  char exe[4096] = {};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) f.executable.assign(exe, static_cast<size_t>(n));
  f.ranks = rank_info(env);
  return f;
}

std::string expand_output_pattern(const std::string& pattern, const ProcessFacts& facts,
                                  const EnvLookup& env) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%' || i + 1 == pattern.size()) {
      out += c;
      continue;
    }
    char k = pattern[i + 1];
    if (k == 'p') {
      out += std::to_string(facts.pid);
      ++i;
    } else if (k == 'h') {
      out += facts.host;
      ++i;
    } else if (k == 'r') {
      out += facts.ranks.rank ? std::to_string(*facts.ranks.rank) : std::string("norank");
      ++i;
    } else if (k == '%') {
      out += '%';
      ++i;
    } else if (k == 'q' && i + 2 < pattern.size() && pattern[i + 2] == '{') {
      size_t close = pattern.find('}', i + 3);
      if (close == std::string::npos) {
        out += c;
        continue;
      }
      std::string var = pattern.substr(i + 3, close - (i + 3));
      if (auto v = env(var.c_str())) out += *v;
      i = close;
    } else {
      out += c;
    }
  }
  return out;
}

std::string output_path(const std::string& pattern, const ProcessFacts& facts,
                        const EnvLookup& env) {
  std::string path = expand_output_pattern(pattern, facts, env);
  if (path.empty()) path = expand_output_pattern("c3scope-%h-%p.sqlite", facts, env);
  if (path.back() == '/' || is_directory(path)) {
    if (path.back() != '/') path += '/';
    path += expand_output_pattern("c3scope-%h-%p.sqlite", facts, env);
  }
  size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.find('.') == std::string::npos) path += ".sqlite";
  return path;
}

std::string alternative_path(const std::string& path, int n) {
  size_t slash = path.find_last_of('/');
  size_t dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
    return path + "." + std::to_string(n);
  }
  return path.substr(0, dot) + "." + std::to_string(n) + path.substr(dot);
}

}  // namespace c3::collector
