// The small grammars users write (docs/fuzzing.md): classification rules files (--rules,
// classify.h), budgets files (compare --budget, compare.h; a parsed file is applied to a real
// run and every report is written), the regular expressions of --range/--step (pattern.h), and
// the collector's environment (C3SCOPE_*, config.h; the output path pattern with %p %h %r %q{}
// and the launchers' rank variables, process_info.h).
//
// Input: a selector byte, then the text.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "c3/analyzer/compare/compare.h"
#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/metrics/pattern.h"
#include "common.h"
#include "config.h"
#include "process_info.h"

namespace {

using namespace c3::analyzer;

volatile size_t g_sink = 0;

const char* const kNames[] = {
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1",
    "Memcpy HtoD (Pageable -> Device)",
    "Memset (Device)",
    "cudaStreamSynchronize",
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float> >",
    "",
};

void rules(const std::string& text) {
  Rules r;
  try {
    r = Rules::parse(text, "fuzz.rules");
  } catch (const std::invalid_argument&) {
    return;
  }
  for (const char* name : kNames) {
    for (Kind k : {Kind::kernel, Kind::memcpy, Kind::memset}) {
      g_sink = g_sink + static_cast<size_t>(r.classify(name, k));
    }
  }
  g_sink = g_sink + rules_text(r).size();
}

// The run budgets are checked against: the c3bench summary of the compare tests.
const JobRun& candidate() {
  static const JobRun run = [] {
    JobRun r;
    r.name = "c3bench-sim.summary.json";
    std::ifstream f(C3_SOURCE_DIR "/tests/data/compare/c3bench-sim.summary.json");
    std::stringstream text;
    text << f.rdbuf();
    r.ranks = summaries_from_json(text.str(), r.name, &r.made_with);
    return r;
  }();
  return run;
}

void budgets(const std::string& text) {
  Budgets b;
  try {
    b = parse_budgets(text, "fuzz.budgets");
  } catch (const std::invalid_argument&) {
    return;
  }
  CompareOptions o;
  o.budgets = &b;
  const Comparison c = compare(nullptr, candidate(), o);
  g_sink = g_sink + compare_text(c, false).size() + compare_markdown(c, 4096).size() +
           compare_junit(c).size() + compare_json(c).size() + static_cast<size_t>(c.exit_code());
}

void pattern(const std::string& text) {
  // The pattern, then (after the first newline) the text it is applied to.
  const size_t nl = text.find('\n');
  const std::string re = text.substr(0, nl);
  const std::string subject = nl == std::string::npos ? text : text.substr(nl + 1);
  Pattern p;
  try {
    p = Pattern::compile(re, "--step");
  } catch (const std::invalid_argument&) {
    return;
  }
  g_sink = g_sink + (p.search(subject) ? 1 : 0) + (p.match_prefix(subject) ? 1 : 0);
  for (const char* name : kNames) g_sink = g_sink + (p.search(name) ? 1 : 0);
}

void environment(const std::string& text) {
  // KEY=VALUE lines; a key given twice keeps its first value, as getenv would see one.
  std::vector<std::pair<std::string, std::string>> vars;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    vars.emplace_back(line.substr(0, eq), line.substr(eq + 1));
  }
  const c3::collector::EnvLookup env = [&vars](const char* name) -> std::optional<std::string> {
    for (const auto& [k, v] : vars) {
      if (k == name) return v;
    }
    return std::nullopt;
  };
  const c3::collector::Config cfg = c3::collector::parse_config(env);
  c3::collector::ProcessFacts facts;
  facts.pid = 4242;
  facts.host = "node-7";
  facts.ranks = c3::collector::rank_info(env);
  const std::string expanded = c3::collector::expand_output_pattern(cfg.output_pattern, facts, env);
  const std::string path = c3::collector::output_path(cfg.output_pattern, facts, env);
  g_sink = g_sink + expanded.size() + c3::collector::alternative_path(path, 3).size() +
           cfg.warnings.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      rules(text);
      break;
    case 1:
      budgets(text);
      break;
    case 2:
      pattern(text);
      break;
    default:
      environment(text);
      break;
  }
  return 0;
}
