#include "c3/analyzer/why/launch.h"

#include <algorithm>
#include <array>
#include <climits>
#include <iterator>
#include <map>
#include <utility>

#include "c3/analyzer/metrics/metrics.h"
#include "time_limits.h"

namespace c3::analyzer {
namespace {
// A rank's sums of call durations and delays are capped at kAmountLimit (add_capped: what a
// summary holds); merges of ranks' sums saturate instead of overflowing.
void add_sat(int64_t& sum, int64_t v) {
  if (__builtin_add_overflow(sum, v, &sum)) sum = INT64_MAX;
}
}  // namespace

bool is_launch_call(std::string_view name) {
  name = api_base_name(name);
  static constexpr std::array<std::string_view, 4> kCalls = {
      "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync"};
  return std::find(kCalls.begin(), kCalls.end(), name) != kCalls.end();
}

void LaunchStat::merge(const LaunchStat& o) {
  add_sat(count, o.count);
  add_sat(cpu_ns, o.cpu_ns);
  add_sat(gpu_ns, o.gpu_ns);
  add_sat(delay_ns, o.delay_ns);
  cpu.merge(o.cpu);
  gpu.merge(o.gpu);
  delay.merge(o.delay);
  add_sat(short_gpu, o.short_gpu);
  add_sat(runtime_outliers, o.runtime_outliers);
  add_sat(delay_outliers, o.delay_outliers);
}

std::vector<LaunchStat> launch_stats(const Trace& t, int process, const LaunchOptions& o,
                                     const Intervals* window) {
  const Activities& a = t.activities;
  if (!a.has_calls()) return {};
  // Whether each call name counts, decided once per name.
  std::vector<int8_t> counts(t.names.size(), -1);
  auto launch = [&](int32_t nm) {
    if (nm < 0 || static_cast<size_t>(nm) >= t.names.size()) return false;
    int8_t& c = counts[static_cast<size_t>(nm)];
    if (c < 0) c = is_launch_call(t.names[static_cast<size_t>(nm)]) ? 1 : 0;
    return c == 1;
  };
  const auto p = static_cast<int16_t>(process);
  const auto lo = std::lower_bound(a.process.begin(), a.process.end(), p);
  const auto hi = std::upper_bound(lo, a.process.end(), p);
  // Per (activity name id) first, merged under signatures below: a slot per name id (a lookup
  // per launch, so an array read rather than a search).
  std::vector<int32_t> slot(t.names.size() + 1, -1);  // the last for ids out of the table
  std::vector<std::pair<int32_t, LaunchStat>> by_id;
  for (auto i = static_cast<size_t>(lo - a.process.begin());
       i < static_cast<size_t>(hi - a.process.begin()); ++i) {
    if (a.call_end[i] == kNoCall || !launch(a.call_name[i])) continue;
    if (window != nullptr) {
      const auto it = std::upper_bound(window->begin(), window->end(), a.start[i],
                                       [](int64_t s, const Interval& w) { return s < w.start; });
      if (it == window->begin() || std::prev(it)->end <= a.start[i]) continue;
    }
    const int32_t id = a.name[i];
    const size_t at = id >= 0 && static_cast<size_t>(id) < t.names.size() ? static_cast<size_t>(id)
                                                                          : t.names.size();
    if (slot[at] < 0) {
      slot[at] = static_cast<int32_t>(by_id.size());
      by_id.emplace_back(id, LaunchStat{});
    }
    LaunchStat& s = by_id[static_cast<size_t>(slot[at])].second;
    const int64_t cpu = a.call_end[i] - a.call_start[i];
    const int64_t gpu = a.end[i] - a.start[i];
    const int64_t delay = std::max<int64_t>(0, a.start[i] - a.call_end[i]);
    ++s.count;
    add_capped(s.cpu_ns, cpu);
    add_capped(s.gpu_ns, gpu);
    add_capped(s.delay_ns, delay);
    s.cpu.add(static_cast<double>(cpu));
    s.gpu.add(static_cast<double>(gpu));
    s.delay.add(static_cast<double>(delay));
    if (cpu <= o.runtime_cutoff_ns && gpu < cpu) ++s.short_gpu;
    if (cpu > o.runtime_cutoff_ns) ++s.runtime_outliers;
    if (delay > o.delay_cutoff_ns) ++s.delay_outliers;
  }
  // In name id order, as before (merging is then the same whatever order the rows came in).
  std::sort(by_id.begin(), by_id.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  std::map<std::string, LaunchStat> merged;
  for (auto& [id, s] : by_id) {
    const auto n = static_cast<size_t>(id);
    const std::string_view raw = n < t.names.size() ? std::string_view(t.names[n]) : "?";
    std::string name = normalized_kernel_name(raw);
    auto [it, fresh] = merged.try_emplace(name);
    if (fresh) {
      it->second = std::move(s);
      it->second.name = std::move(name);
    } else {
      it->second.merge(s);
    }
  }
  std::vector<LaunchStat> out;
  out.reserve(merged.size());
  for (auto& [k, s] : merged) out.push_back(std::move(s));
  return out;
}

}  // namespace c3::analyzer
