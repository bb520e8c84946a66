// A Google Benchmark console reporter that also keeps each benchmark's items/s, so a benchmark's
// main() can print the ratio against its baseline measured in the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace c3::perf {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      auto it = r.counters.find("items_per_second");
      if (it != r.counters.end()) rate_[r.benchmark_name()] = it->second.value;
    }
    ConsoleReporter::ReportRuns(runs);
  }
  // items/s of a benchmark, 0 if it did not run.
  double rate(const std::string& name) const {
    auto it = rate_.find(name);
    return it == rate_.end() ? 0.0 : it->second;
  }

 private:
  std::map<std::string, double> rate_;
};

}  // namespace c3::perf
