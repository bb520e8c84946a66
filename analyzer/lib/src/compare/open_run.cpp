// Opening one side of a comparison and its budgets (compare.h: open_run, read_budgets), shared by
// `c3scope compare` and the Python module.
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "c3/analyzer/compare/compare.h"

namespace c3::analyzer {
namespace {

std::string read_head(const std::string& path, size_t n) {
  std::ifstream f(path, std::ios::binary);
  std::string s(n, '\0');
  f.read(s.data(), static_cast<std::streamsize>(n));
  s.resize(static_cast<size_t>(f.gcount()));
  return s;
}

bool regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

JobRun open_run(const std::string& path, const PipelineOptions& po) {
  if (regular_file(path)) {
    const std::string head = read_head(path, 4096);
    if (looks_like_bench_json(head)) {
      std::ifstream f(path, std::ios::binary);
      const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      return run_from_bench_json(text, path);
    }
  }
  JobRun run;
  run.name = path;
  run.made_with = po.analyze;
  const std::vector<Input> inputs = resolve_inputs({path});
  if (inputs.size() == 1 && inputs[0].format == InputFormat::summary) {
    run.ranks = read_summary_file(inputs[0].path, &run.made_with);
    return run;
  }
  run.ranks = map_inputs(inputs, po);
  return run;
}

JobRun open_run(Comm& comm, const std::string& path, const PipelineOptions& po) {
  // Process 0 looks first: c3bench results or a lone summary are read there alone; a line of
  // error is every process's.
  const bool root = comm.rank() == 0;
  std::vector<Input> inputs;
  std::string error;
  bool alone = false;
  JobRun run;
  if (root) {
    try {
      if (regular_file(path) && looks_like_bench_json(read_head(path, 4096))) {
        alone = true;
      } else {
        inputs = resolve_inputs({path});
        alone = inputs.size() == 1 && inputs[0].format == InputFormat::summary;
      }
      if (alone) run = open_run(path, po);
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  const std::string said = comm.broadcast(root ? (alone ? "a" : "m") + error : std::string(), 0);
  if (said.size() > 1) throw AgreedError(said.substr(1));
  if (said[0] == 'a') return run;
  const Deal deal = deal_inputs(comm, inputs, false, "");
  DistributedOutputs want;
  want.ranks = true;
  DistributedResult res = run_distributed(comm, deal, po, want);
  if (!res.ok) {
    if (res.error.empty()) throw Cancelled();  // every process's too
    throw AgreedError(res.error);
  }
  run.name = path;
  run.made_with = po.analyze;
  run.ranks = std::move(res.ranks);
  return run;
}

double percent_arg(std::string s, const char* flag) {
  if (!s.empty() && s.back() == '%') s.pop_back();
  size_t used = 0;
  double v = -1;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !(v >= 0 && v <= 1000))
    throw std::invalid_argument(std::string(flag) + " '" + s +
                                "': give a percentage from 0 to 1000, e.g. 5 or 5%");
  return v / 100;
}

Budgets read_budgets(const std::string& path) {
  // Checked before opening: opening a FIFO would wait for a writer forever.
  if (!regular_file(path))
    throw std::invalid_argument("--budget " + path + ": not a readable file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::invalid_argument("--budget " + path + ": cannot read it");
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return parse_budgets(text, path);
}

}  // namespace c3::analyzer
