#include "common.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "c3/analyzer/report/report.h"
#include "c3/analyzer/summary/pipeline.h"

namespace c3::fuzz {

bool verbose() {
  static const bool v = std::getenv("C3_FUZZ_VERBOSE") != nullptr;
  return v;
}

TempFile::TempFile(std::string_view bytes, const char* suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string tmpl =
      std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/c3fuzz-XXXXXX" + suffix;
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  const int fd = ::mkstemps(name.data(), static_cast<int>(std::string_view(suffix).size()));
  if (fd < 0) {
    std::perror("c3fuzz: mkstemps");
    std::abort();  // not a finding: the machine is out of temporary space
  }
  path_ = name.data();
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      std::perror("c3fuzz: write");
      std::abort();
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

TempFile::~TempFile() {
  ::unlink(path_.c_str());
}

void analyze(const std::string& path, analyzer::InputFormat want) {
  analyzer::PipelineOptions po;
  po.workers = 1;
  std::string csv;
  po.csv = [&csv](const std::string& rows) { csv += rows; };
  std::vector<analyzer::Input> inputs;
  std::vector<analyzer::RankSummary> summaries;
  try {
    inputs = analyzer::resolve_inputs({path});
    if (inputs.size() != 1 || inputs[0].format != want) {
      if (verbose()) std::fprintf(stderr, "c3fuzz: not this harness's format\n");
      return;
    }
    // The options of a summary input are the job's (map_inputs), for the reduce too.
    summaries = analyzer::map_inputs(inputs, po, &po.analyze);
  } catch (const std::exception& e) {  // bad input, reported as such
    if (verbose()) std::fprintf(stderr, "c3fuzz: refused: %s\n", e.what());
    return;
  }
  if (verbose()) std::fprintf(stderr, "c3fuzz: accepted, %zu ranks\n", summaries.size());
  reduce_and_report(std::move(summaries), analyzer::input_names(inputs), po.analyze);
}

void reduce_and_report(std::vector<analyzer::RankSummary>&& summaries,
                       const std::vector<std::string>& names, const analyzer::SummaryOptions& o) {
  const std::string summary_json = analyzer::summaries_to_json(summaries, o);
  try {
    // What analyze --summary writes must read back: it is an input of analyze. Regressions:
    // fuzz/regressions/kineto/summary-span-out-of-range,
    // fuzz/regressions/nsys/summary-device-limit-out-of-range.
    analyzer::summaries_from_json(summary_json, "the summary of a fuzz input");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "c3fuzz: a summary does not read back: %s\n", e.what());
    std::abort();
  }
  analyzer::Report r;
  try {
    r = analyzer::reduce(std::move(summaries), names, o, o.align);
  } catch (const std::invalid_argument& e) {
    // Totals past int64 (8,193 ranks at the per-rank bound:
    // regressions/summary/reduce-sums-8193-ranks-at-bound.summary.json.gz)
    // are refused, naming the summary.
    if (verbose()) std::fprintf(stderr, "c3fuzz: refused by the reduce: %s\n", e.what());
    return;
  }
  analyzer::PrintOptions print;
  print.steps = true;
  if (std::FILE* devnull = std::fopen("/dev/null", "w")) {
    analyzer::print_text(devnull, r, print);
    std::fclose(devnull);
  }
  const std::string json = analyzer::to_json(r);
}

}  // namespace c3::fuzz
