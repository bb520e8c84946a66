#include "c3/analyzer/why/idle.h"

#include <algorithm>
#include <climits>
#include <map>

#include "rows.h"

namespace c3::analyzer {
namespace {

// The gap [from, to) before row `next` (the first activity to start when it ends): the host
// caused it when next's launch call started after the gap began (HTA compares the call's start,
// ts of the runtime event, with the previous kernel's end); else it is launch overhead when
// shorter than the threshold; else something else.
void classify(IdleCauses& c, const Trace& t, bool calls, int64_t from, int64_t to, size_t next,
              const IdleOptions& o, std::vector<CollectiveGap>* gaps) {
  const Activities& a = t.activities;
  const int64_t gap = to - from;
  ++c.gaps;
  c.idle += gap;
  if (calls && a.call_start[next] != kNoCall && a.call_start[next] > from) {
    c.host_wait += gap;
  } else if (gap < o.kernel_wait_ns) {
    c.kernel_wait += gap;
  } else {
    c.other += gap;
    const int32_t k = a.collective[next];
    if (gaps != nullptr && k >= 0 && a.cls[next] == Class::communication) {
      const Collective& col = t.collectives[static_cast<size_t>(k)];
      if (!col.comm_id.empty() && col.seq >= 0) gaps->push_back({k, from, to, next});
    }
  }
  if (o.micro_ns > 0) (gap < o.micro_ns ? c.micro : c.macro) += gap;
}

// The union gaps of pieces sorted by start.
void sweep(const std::vector<Piece>& pieces, const Trace& t, const IdleOptions& o, IdleCauses& c,
           std::vector<CollectiveGap>* gaps) {
  if (pieces.empty()) return;
  const bool calls = t.activities.has_calls();
  int64_t reach = pieces.front().end;
  for (size_t k = 1; k < pieces.size(); ++k) {
    const Piece& p = pieces[k];
    if (p.start > reach) classify(c, t, calls, reach, p.start, p.row, o, gaps);
    reach = std::max(reach, p.end);
  }
}

}  // namespace

void IdleCauses::add(const IdleCauses& o) {
  gaps += o.gaps;
  idle += o.idle;
  host_wait += o.host_wait;
  kernel_wait += o.kernel_wait;
  other += o.other;
  comm_wait += o.comm_wait;
  micro += o.micro;
  macro += o.macro;
}

std::vector<StreamIdle> stream_idle(const Trace& t, int process, const IdleOptions& o,
                                    const Intervals* window, std::vector<CollectiveGap>* gaps) {
  const Activities& a = t.activities;
  const bool calls = a.has_calls();
  struct State {
    StreamIdle s;
    int64_t reach = INT64_MIN;
    bool any = false;
  };
  std::map<std::pair<int16_t, int32_t>, State> streams;
  const Intervals all{{INT64_MIN, INT64_MAX}};
  const Intervals& parts = window != nullptr ? *window : all;
  for (const DeviceRows& d : device_rows(a, process)) {
    for (const Interval& w : parts) {
      for (auto& [key, st] : streams) st.any = false;  // each window interval on its own
      for_each_piece(a, d, w, [&](const Piece& p) {
        State& st = streams[{a.device[p.row], a.stream[p.row]}];
        if (st.s.activities == 0) {
          st.s.process = process;
          st.s.device = a.device[p.row];
          st.s.stream = a.stream[p.row];
        }
        ++st.s.activities;
        if (st.any && p.start > st.reach)
          classify(st.s.causes, t, calls, st.reach, p.start, p.row, o, gaps);
        st.reach = st.any ? std::max(st.reach, p.end) : p.end;
        st.any = true;
      });
    }
  }
  std::vector<StreamIdle> out;
  out.reserve(streams.size());
  for (auto& [key, st] : streams) out.push_back(st.s);
  return out;
}

IdleCauses idle_causes(const Trace& t, Scope scope, const IdleOptions& o, const Intervals* window,
                       std::vector<CollectiveGap>* gaps) {
  const Activities& a = t.activities;
  IdleCauses c;
  const Intervals all{{INT64_MIN, INT64_MAX}};
  std::vector<Piece> pieces;
  std::vector<DeviceRows> devices = device_rows(a, scope.process);
  if (scope.device >= 0) {
    std::erase_if(devices, [&](const DeviceRows& d) { return d.device != scope.device; });
  }
  for (const Interval& w : window != nullptr ? *window : all) {
    pieces.clear();
    for (const DeviceRows& d : devices) {
      for_each_piece(a, d, w, [&](const Piece& p) { pieces.push_back(p); });
    }
    if (devices.size() > 1) sort_pieces(pieces);
    sweep(pieces, t, o, c, gaps);
  }
  return c;
}

std::vector<IdleCauses> window_idle_causes(const Trace& t, int process,
                                           const std::vector<Interval>& windows,
                                           const IdleOptions& o,
                                           std::vector<std::vector<CollectiveGap>>* gaps) {
  const Activities& a = t.activities;
  const std::vector<DeviceRows> devices = device_rows(a, process);
  std::vector<IdleCauses> out(windows.size());
  if (gaps != nullptr) gaps->assign(windows.size(), {});
  std::vector<Piece> pieces;
  for (size_t k = 0; k < windows.size(); ++k) {
    pieces.clear();
    for (const DeviceRows& d : devices) {
      for_each_piece(a, d, windows[k], [&](const Piece& p) { pieces.push_back(p); });
    }
    if (devices.size() > 1) sort_pieces(pieces);
    sweep(pieces, t, o, out[k], gaps != nullptr ? &(*gaps)[k] : nullptr);
  }
  return out;
}

}  // namespace c3::analyzer
