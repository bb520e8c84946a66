#include "c3/analyzer/why/queue.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>

#include "rows.h"

namespace c3::analyzer {
namespace {

struct Event {
  int64_t at = 0;
  int32_t delta = 0;  // -1 (an operation ends) sorts before +1 (a call returns) at one time
};

bool inside(const Intervals* window, int64_t s) {
  if (window == nullptr) return true;
  const auto it = std::upper_bound(window->begin(), window->end(), s,
                                   [](int64_t x, const Interval& w) { return x < w.start; });
  return it != window->begin() && std::prev(it)->end > s;
}

// A stream's launches: when each call returned and when its operation ended. A stream runs its
// operations in launch order, so both lists usually come sorted (rows are in start order): then
// merging them is linear.
struct Launches {
  std::vector<int64_t> returned, ended;
};

std::vector<Event> events_of(Launches& l) {
  for (auto* v : {&l.returned, &l.ended}) {
    if (!std::is_sorted(v->begin(), v->end())) std::sort(v->begin(), v->end());
  }
  std::vector<Event> ev;
  ev.reserve(l.returned.size() + l.ended.size());
  size_t r = 0, e = 0;
  // At one time, -1 (an operation ends) before +1 (a call returns).
  while (r < l.returned.size() || e < l.ended.size()) {
    if (e < l.ended.size() && (r == l.returned.size() || l.ended[e] <= l.returned[r])) {
      ev.push_back({l.ended[e++], -1});
    } else {
      ev.push_back({l.returned[r++], +1});
    }
  }
  return ev;
}

// Each stream's events, by (device, stream).
std::map<std::pair<int16_t, int32_t>, std::vector<Event>> stream_events(const Trace& t, int process,
                                                                        const Intervals* window,
                                                                        int16_t only_device,
                                                                        int32_t only_stream,
                                                                        bool only) {
  std::map<std::pair<int16_t, int32_t>, std::vector<Event>> out;
  const Activities& a = t.activities;
  if (!a.has_calls()) return out;
  std::map<std::pair<int16_t, int32_t>, Launches> launches;
  for (const DeviceRows& d : device_rows(a, process)) {
    if (only && d.device != only_device) continue;
    Launches* last = nullptr;
    int32_t last_stream = 0;
    for (size_t i = d.begin; i < d.end; ++i) {
      if (a.call_end[i] == kNoCall || (only && a.stream[i] != only_stream)) continue;
      if (!inside(window, a.start[i])) continue;
      if (last == nullptr || a.stream[i] != last_stream) {
        last = &launches[{d.device, a.stream[i]}];
        last_stream = a.stream[i];
      }
      // A call that returned after its work finished never left it waiting in the queue; it
      // still counts as a launch (a zero-length stay).
      last->returned.push_back(a.call_end[i]);
      last->ended.push_back(std::max(a.call_end[i], a.end[i]));
    }
  }
  for (auto& [k, l] : launches) {
    out.emplace(k, events_of(l));
    l = Launches{};
  }
  return out;
}

}  // namespace

std::vector<StreamQueue> stream_queues(const Trace& t, int process, const QueueOptions& o,
                                       const Intervals* window) {
  std::vector<StreamQueue> out;
  for (auto& [key, ev] : stream_events(t, process, window, 0, 0, false)) {
    StreamQueue q;
    q.process = process;
    q.device = key.first;
    q.stream = key.second;
    q.launches = static_cast<int64_t>(ev.size() / 2);
    std::vector<int64_t> time_at;  // ns spent at each length
    int64_t length = 0;
    for (size_t k = 0; k < ev.size();) {
      const int64_t at = ev[k].at;
      for (; k < ev.size() && ev[k].at == at; ++k) length += ev[k].delta;
      if (length > q.max) {
        q.max = length;
        q.max_at = at;
      }
      if (k < ev.size()) {
        const int64_t held = ev[k].at - at;
        if (static_cast<size_t>(length) >= time_at.size()) {
          time_at.resize(static_cast<size_t>(length) + 1, 0);
        }
        time_at[static_cast<size_t>(length)] += held;
        if (length >= o.limit) q.at_limit_ns += held;
      }
    }
    q.span_ns = ev.empty() ? 0 : ev.back().at - ev.front().at;
    if (q.span_ns > 0) {
      long double weighted = 0;
      for (size_t n = 0; n < time_at.size(); ++n) {
        weighted += static_cast<long double>(n) * static_cast<long double>(time_at[n]);
      }
      q.mean = static_cast<double>(weighted / static_cast<long double>(q.span_ns));
      auto quantile = [&](double f) {
        const auto need = static_cast<int64_t>(std::ceil(f * static_cast<double>(q.span_ns)));
        int64_t sum = 0;
        for (size_t n = 0; n < time_at.size(); ++n) {
          sum += time_at[n];
          if (sum >= need) return static_cast<int64_t>(n);
        }
        return static_cast<int64_t>(time_at.size()) - 1;
      };
      q.p50 = quantile(0.5);
      q.p90 = quantile(0.9);
    }
    out.push_back(q);
  }
  return out;
}

namespace {

std::vector<QueuePoint> series_of(const std::vector<Event>& ev) {
  std::vector<QueuePoint> out;
  int64_t length = 0;
  for (size_t k = 0; k < ev.size();) {
    const int64_t at = ev[k].at;
    for (; k < ev.size() && ev[k].at == at; ++k) length += ev[k].delta;
    if (out.empty() || out.back().length != length) out.push_back({at, length});
  }
  return out;
}

}  // namespace

std::vector<QueuePoint> queue_series(const Trace& t, int process, int16_t device, int32_t stream) {
  const auto all = stream_events(t, process, nullptr, device, stream, true);
  const auto it = all.find({device, stream});
  if (it == all.end()) return {};
  return series_of(it->second);
}

std::vector<StreamSeries> queue_series(const Trace& t, int process) {
  std::vector<StreamSeries> out;
  for (auto& [key, ev] : stream_events(t, process, nullptr, 0, 0, false)) {
    out.push_back({key.first, key.second, series_of(ev)});
    ev = {};
  }
  return out;
}

}  // namespace c3::analyzer
