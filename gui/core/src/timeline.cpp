#include "c3/gui/timeline.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <queue>
#include <type_traits>

#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/metrics/metrics.h"
#include "c3/common/workers.h"

namespace c3::gui {

using analyzer::Class;

namespace {

// The first index in [lo, hi) for which `before` is false, `before` holding for a prefix of the
// range (a lower bound over positions rather than over an iterator's values).
template <class Before>
size_t first_not(size_t lo, size_t hi, Before before) {
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (before(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Rows for one thread and domain's start/end ranges (an application starting thousands that
// overlap would otherwise get thousands of rows).
constexpr size_t kMaxStartEndRows = 32;

uint8_t bit(Class c) {
  return static_cast<uint8_t>(1u << static_cast<unsigned>(c));
}

// A thread's label says what its ranges are (issue 24: a gloo thread of a PyTorch trace was
// called an "NVTX thread"): NVTX ranges (and their domain when there is one domain other than the
// default), PyTorch annotations (the Kineto importer's "pytorch" domain), or CPU-side collectives
// when every range is one (gloo:all_reduce, ...).
template <class Domains>
std::string thread_label(const analyzer::Trace& t, int64_t tid, const Domains& domains) {
  bool pytorch = true, collectives = true;
  for (const auto& [domain, d] : domains) {
    pytorch = pytorch && domain == "pytorch";
    auto each = [&](const std::vector<uint32_t>& items) {
      for (const uint32_t g : items) {
        const std::string& n = t.ranges[g].name;
        if (n.rfind("gloo:", 0) != 0 && n.rfind("nccl:", 0) != 0 && n.rfind("mpi:", 0) != 0)
          collectives = false;
      }
    };
    for (const auto& [depth, items] : d.depths) each(items);
    each(d.start_end);
    each(d.marks);
  }
  std::string label = "thread " + std::to_string(tid);
  if (collectives) return label + " (CPU collectives)";
  if (pytorch) return label + " (PyTorch annotations)";
  const std::string& only = domains.begin()->first;
  if (domains.size() == 1 && only != "default" && !only.empty())
    return label + " (NVTX " + only + ")";
  return label + " (NVTX)";
}

std::string short_comm(const std::string& id) {
  if (id.size() <= 12) return id;
  return id.substr(0, 12) + "…";
}

}  // namespace

Timeline::Timeline(const analyzer::Trace& trace) : trace_(&trace) {
  build();
}

int Timeline::add(Row r) {
  const int i = static_cast<int>(rows_.size());
  if (r.process >= 0) r.offset = trace_->processes[static_cast<size_t>(r.process)].offset_ns;
  if (r.parent >= 0) {
    rows_[static_cast<size_t>(r.parent)].children.push_back(i);
  } else {
    roots_.push_back(i);
  }
  rows_.push_back(std::move(r));
  return i;
}

// The rows of one process, with parents local to the returned vector (index 0 is the process
// group itself; -1 means "the host"): processes are built in parallel, then spliced in.
std::vector<Row> Timeline::build_process(int p, size_t begin, size_t end,
                                         const std::vector<uint32_t>& colls,
                                         const std::vector<uint32_t>& ranges) const {
  const analyzer::Trace& t = *trace_;
  const analyzer::Activities& a = t.activities;
  std::vector<Row> rows;
  auto add = [&](Row r) {
    const auto i = static_cast<int>(rows.size());
    if (r.parent >= 0) rows[static_cast<size_t>(r.parent)].children.push_back(i);
    r.offset = t.processes[static_cast<size_t>(p)].offset_ns;
    rows.push_back(std::move(r));
    return i;
  };
  // Rows with items: their level-of-detail index built once they are in place.
  auto add_finished = [&](Row r) { finish(rows[static_cast<size_t>(add(std::move(r)))]); };
  // A row of this process under `parent` (-1: none, the process group itself).
  auto make_row = [p](RowKind kind, int parent, std::string label) {
    Row r;
    r.kind = kind;
    r.parent = parent;
    r.process = p;
    r.label = std::move(label);
    return r;
  };
  const auto& pr = t.processes[static_cast<size_t>(p)];
  add(make_row(RowKind::group, -1,
               pr.label() + (pr.rank ? " (pid " + std::to_string(pr.pid) + ")" : "")));
  // Devices and their streams: rows of one (process, device) are contiguous in activities.
  size_t i = begin;
  while (i < end) {
    const int dev = a.device[i];
    size_t j = i;
    while (j < end && a.device[j] == dev) ++j;
    const analyzer::Device* d = t.device(static_cast<int16_t>(p), static_cast<int16_t>(dev));
    Row dg = make_row(RowKind::group, 0,
                      "GPU " + std::to_string(dev) + (d && !d->name.empty() ? ": " + d->name : ""));
    dg.device = dev;
    const int di = add(std::move(dg));
    // Overlap row: communication hidden under compute vs exposed.
    analyzer::Intervals comp, comm;
    for (size_t k = i; k < j; ++k) {
      if (a.cls[k] == Class::compute) comp.push_back({a.start[k], a.end[k]});
      if (a.cls[k] == Class::communication) comm.push_back({a.start[k], a.end[k]});
    }
    comp = analyzer::union_sorted(comp);
    comm = analyzer::union_sorted(comm);
    Row ov = make_row(RowKind::overlap, di, "overlap");
    ov.device = dev;
    const analyzer::Intervals hidden = analyzer::intersect(comm, comp);
    const analyzer::Intervals exposed = analyzer::subtract(comm, comp);
    ov.spans.reserve(hidden.size() + exposed.size());
    // Both lists are sorted and disjoint: merge them in order.
    size_t h = 0, x = 0;
    while (h < hidden.size() || x < exposed.size()) {
      if (x >= exposed.size() || (h < hidden.size() && hidden[h].start < exposed[x].start)) {
        ov.spans.push_back({hidden[h].start, hidden[h].end, OverlapKind::hidden});
        ++h;
      } else {
        ov.spans.push_back({exposed[x].start, exposed[x].end, OverlapKind::exposed});
        ++x;
      }
    }
    add_finished(std::move(ov));
    // Streams in id order (a device has few; the last one seen is the likely next).
    std::vector<std::pair<int32_t, std::vector<uint32_t>>> streams;
    size_t last = 0;
    for (size_t k = i; k < j; ++k) {
      const int32_t sid = a.stream[k];
      if (last >= streams.size() || streams[last].first != sid) {
        last = 0;
        while (last < streams.size() && streams[last].first != sid) ++last;
        if (last == streams.size()) streams.emplace_back(sid, std::vector<uint32_t>{});
      }
      streams[last].second.push_back(static_cast<uint32_t>(k));
    }
    std::sort(streams.begin(), streams.end(),
              [](const auto& x1, const auto& x2) { return x1.first < x2.first; });
    for (auto& [sid, items] : streams) {
      Row s =
          make_row(RowKind::stream, di, sid >= 0 ? "stream " + std::to_string(sid) : "no stream");
      s.device = dev;
      s.key = sid;
      s.items = std::move(items);
      add_finished(std::move(s));
    }
    i = j;
  }
  // Collectives per communicator (their GPU time spans).
  std::vector<std::pair<std::string, std::vector<uint32_t>>> comms;
  size_t last = 0;
  for (const uint32_t c : colls) {
    const std::string& id = t.collectives[c].comm_id;
    if (last >= comms.size() || comms[last].first != id) {
      last = 0;
      while (last < comms.size() && comms[last].first != id) ++last;
      if (last == comms.size()) comms.emplace_back(id, std::vector<uint32_t>{});
    }
    comms[last].second.push_back(c);
  }
  std::sort(comms.begin(), comms.end(),
            [](const auto& x1, const auto& x2) { return x1.first < x2.first; });
  for (auto& [id, items] : comms) {
    std::stable_sort(items.begin(), items.end(), [&](uint32_t x1, uint32_t x2) {
      return t.collectives[x1].gpu_start < t.collectives[x2].gpu_start;
    });
    Row c =
        make_row(RowKind::collectives, 0,
                 "NCCL " + (id.empty() ? std::string("(unknown communicator)") : short_comm(id)));
    c.items = std::move(items);
    add_finished(std::move(c));
  }
  // NVTX, as Nsight Systems lays it out: a group per thread; under it each domain's push/pop
  // ranges, a row per nesting depth, and its start/end ranges (which may overlap) packed onto
  // rows of their own. A thread with ranges of several domains gets a group per domain.
  struct DomainRanges {
    std::map<int, std::vector<uint32_t>> depths;  // push/pop
    std::vector<uint32_t> start_end;
    std::vector<uint32_t> marks;  // instants (nvtxMark: no duration)
  };
  std::map<int64_t, std::map<std::string, DomainRanges>> threads;
  for (const uint32_t g : ranges) {
    const analyzer::Range& rg = t.ranges[g];
    DomainRanges& d = threads[rg.thread][rg.domain];
    if (rg.start == rg.end && !rg.start_end) {
      d.marks.push_back(g);
    } else if (rg.start_end) {
      d.start_end.push_back(g);
    } else {
      d.depths[rg.depth].push_back(g);
    }
  }
  auto by_start = [&](std::vector<uint32_t>& items) {
    std::stable_sort(items.begin(), items.end(), [&](uint32_t x1, uint32_t x2) {
      return t.ranges[x1].start < t.ranges[x2].start;
    });
  };
  auto nvtx_row = [&](int parent, int64_t tid, int depth, std::string label,
                      std::vector<uint32_t> items, bool marks = false) {
    Row r = make_row(RowKind::nvtx, parent, std::move(label));
    r.key = tid;
    r.nvtx_depth = depth;
    r.marks = marks;
    r.items = std::move(items);
    add_finished(std::move(r));
  };
  for (auto& [tid, domains] : threads) {
    Row tg = make_row(RowKind::group, 0, thread_label(t, tid, domains));
    tg.key = tid;
    tg.thread = true;
    const int ti = add(std::move(tg));
    for (auto& [domain, d] : domains) {
      int parent = ti;
      if (domains.size() > 1) {
        Row dg = make_row(RowKind::group, ti,
                          "domain " + (domain.empty() ? std::string("default") : domain));
        dg.key = tid;
        parent = add(std::move(dg));
      }
      for (auto& [depth, items] : d.depths) {
        by_start(items);
        nvtx_row(parent, tid, depth, "depth " + std::to_string(depth), std::move(items));
      }
      // Start/end ranges: each onto the row that frees up first, a new one when none is free at
      // its start (greedy interval partitioning: as few rows as the deepest overlap needs, at
      // most kMaxStartEndRows; beyond that, ranges share the row that frees up first).
      by_start(d.start_end);
      std::vector<std::vector<uint32_t>> lanes;
      using LaneEnd = std::pair<int64_t, size_t>;  // (end of its last range, lane)
      std::priority_queue<LaneEnd, std::vector<LaneEnd>, std::greater<>> free_at;
      for (const uint32_t g : d.start_end) {
        size_t lane = lanes.size();
        if (!free_at.empty() &&
            (free_at.top().first <= t.ranges[g].start || lanes.size() >= kMaxStartEndRows)) {
          lane = free_at.top().second;
          const int64_t lane_end = std::max(free_at.top().first, t.ranges[g].end);
          free_at.pop();
          free_at.emplace(lane_end, lane);
        } else {
          lanes.emplace_back();
          free_at.emplace(t.ranges[g].end, lane);
        }
        lanes[lane].push_back(g);
      }
      for (size_t l = 0; l < lanes.size(); ++l) {
        nvtx_row(
            parent, tid, static_cast<int>(l),
            lanes.size() == 1 ? std::string("start/end") : "start/end " + std::to_string(l + 1),
            std::move(lanes[l]));
      }
      // Marks (instants) on a row of their own, drawn as ticks; search finds them by name.
      if (!d.marks.empty()) {
        by_start(d.marks);
        nvtx_row(parent, tid, 0, "marks", std::move(d.marks), true);
      }
    }
  }
  return rows;
}

void Timeline::build() {
  const analyzer::Trace& t = *trace_;
  const analyzer::Activities& a = t.activities;
  const size_t np = t.processes.size();
  first_ = INT64_MAX;
  last_ = INT64_MIN;
  // One pass: the time span, and where each process's rows begin and end (rows are sorted by
  // process first).
  std::vector<size_t> begin(np, 0), end(np, 0);
  for (size_t i = 0; i < a.size(); ++i) {
    const auto p = static_cast<size_t>(a.process[i]);
    const int64_t off = t.processes[p].offset_ns;
    first_ = std::min(first_, a.start[i] + off);
    last_ = std::max(last_, a.end[i] + off);
    if (i == 0 || a.process[i - 1] != a.process[i]) begin[p] = i;
    end[p] = i + 1;
  }
  for (const auto& g : t.ranges) {
    const int64_t off = t.processes[static_cast<size_t>(g.process)].offset_ns;
    first_ = std::min(first_, g.start + off);
    last_ = std::max(last_, g.end + off);
  }
  if (first_ > last_) first_ = last_ = 0;
  std::vector<std::vector<uint32_t>> colls(np), ranges(np);
  for (size_t c = 0; c < t.collectives.size(); ++c) {
    if (t.collectives[c].gpu_start >= 0)
      colls[static_cast<size_t>(t.collectives[c].process)].push_back(static_cast<uint32_t>(c));
  }
  for (size_t g = 0; g < t.ranges.size(); ++g)
    ranges[static_cast<size_t>(t.ranges[g].process)].push_back(static_cast<uint32_t>(g));

  // Each process's rows on a worker (they only read the trace).
  std::vector<std::vector<Row>> sub(np);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t p = next++; p < np; p = next++)
      sub[p] = build_process(static_cast<int>(p), begin[p], end[p], colls[p], ranges[p]);
  };
  common::run_workers(np, work);

  // Hosts, then processes in rank order; each process's rows spliced in.
  std::map<std::string, std::vector<int>> by_host;
  for (size_t p = 0; p < np; ++p) by_host[t.processes[p].host].push_back(static_cast<int>(p));
  auto rank_order = [&](int x, int y) {
    const auto& px = t.processes[static_cast<size_t>(x)];
    const auto& py = t.processes[static_cast<size_t>(y)];
    // Ranked processes first, by rank (a number: 2 before 10); then the others in load order (a
    // strict weak order).
    if (px.rank.has_value() != py.rank.has_value()) return px.rank.has_value();
    if (px.rank && py.rank && *px.rank != *py.rank) return *px.rank < *py.rank;
    return x < y;
  };
  std::vector<std::pair<std::string, std::vector<int>>> hosts(by_host.begin(), by_host.end());
  for (auto& [host, procs] : hosts) std::sort(procs.begin(), procs.end(), rank_order);
  // Hosts in the order of their first rank (node10 holds ranks after node2's), not by name.
  std::stable_sort(hosts.begin(), hosts.end(), [&](const auto& x, const auto& y) {
    return rank_order(x.second.front(), y.second.front());
  });
  for (auto& [host, procs] : hosts) {
    Row h;
    h.kind = RowKind::group;
    h.label = host.empty() ? "host (unknown)" : "host " + host;
    const int hi = add(std::move(h));
    for (const int p : procs) {
      auto& rows = sub[static_cast<size_t>(p)];
      const auto base = static_cast<int>(rows_.size());
      rows_[static_cast<size_t>(hi)].children.push_back(base);
      for (Row& r : rows) {
        r.parent = r.parent < 0 ? hi : r.parent + base;
        for (int& c : r.children) c += base;
        rows_.push_back(std::move(r));
      }
      rows = {};
    }
  }
}

void Timeline::finish(Row& r) const {
  const size_t n = size(r);
  if (r.kind == RowKind::queue) {
    r.leaves = (n + kLeaf - 1) / kLeaf;
    r.tree_max_length.assign(2 * r.leaves, 0);
    r.max_length = 0;
    for (size_t k = 0; k < n; ++k) {
      int64_t& leaf = r.tree_max_length[r.leaves + k / kLeaf];
      leaf = std::max(leaf, r.points[k].length);
      r.max_length = std::max(r.max_length, r.points[k].length);
    }
    for (size_t i = r.leaves; i-- > 1;)
      r.tree_max_length[i] = std::max(r.tree_max_length[2 * i], r.tree_max_length[2 * i + 1]);
    return;
  }
  r.max_duration = 0;
  r.leaves = (n + kLeaf - 1) / kLeaf;
  r.tree_max_end.assign(2 * r.leaves, INT64_MIN);
  r.tree_classes.assign(2 * r.leaves, 0);
  r.leaf_start.resize(r.leaves);
  // The row's own copies of its items' times and classes (overlap rows' spans are contiguous
  // already): stream rows gather the activity columns directly, the others use the accessors.
  const bool copy = r.kind != RowKind::overlap;
  r.item_start.resize(copy ? n : 0);
  r.item_end.resize(copy ? n : 0);
  r.item_classes.resize(copy ? n : 0);
  if (r.kind == RowKind::stream) {
    const analyzer::Activities& a = trace_->activities;
    for (size_t k = 0; k < n; ++k) {
      const uint32_t i = r.items[k];
      r.item_start[k] = a.start[i] + r.offset;
      r.item_end[k] = a.end[i] + r.offset;
      r.item_classes[k] = bit(a.cls[i]);
    }
  } else if (copy) {
    for (size_t k = 0; k < n; ++k) {
      r.item_start[k] = start(r, k);
      r.item_end[k] = end(r, k);
      r.item_classes[k] = classes(r, k);
    }
  }
  for (size_t k = 0; k < n; ++k) {
    const int64_t s = copy ? r.item_start[k] : r.spans[k].start + r.offset;
    const int64_t e = copy ? r.item_end[k] : r.spans[k].end + r.offset;
    const uint8_t c = copy ? r.item_classes[k] : classes(r, k);
    if (k % kLeaf == 0) r.leaf_start[k / kLeaf] = s;
    r.max_duration = std::max(r.max_duration, e - s);
    const size_t leaf = r.leaves + k / kLeaf;
    r.tree_max_end[leaf] = std::max(r.tree_max_end[leaf], e);
    r.tree_classes[leaf] |= c;
  }
  if (!copy) {
    r.hidden_prefix.assign(n + 1, 0);
    r.exposed_prefix.assign(n + 1, 0);
    for (size_t k = 0; k < n; ++k) {
      const int64_t d = r.spans[k].end - r.spans[k].start;
      const bool hid = r.spans[k].kind == OverlapKind::hidden;
      r.hidden_prefix[k + 1] = r.hidden_prefix[k] + (hid ? d : 0);
      r.exposed_prefix[k + 1] = r.exposed_prefix[k] + (hid ? 0 : d);
    }
  }
  r.leaf_reach.resize(r.leaves);
  for (size_t l = 0; l < r.leaves; ++l) {
    r.leaf_reach[l] =
        std::max(l > 0 ? r.leaf_reach[l - 1] : INT64_MIN, r.tree_max_end[r.leaves + l]);
  }
  for (size_t i = r.leaves; i-- > 1;) {
    r.tree_max_end[i] = std::max(r.tree_max_end[2 * i], r.tree_max_end[2 * i + 1]);
    r.tree_classes[i] = r.tree_classes[2 * i] | r.tree_classes[2 * i + 1];
  }
}

namespace {

// The start (or end) of item k of a row, aligned: Timeline::start and end.
int64_t item_bound(const analyzer::Trace& t, const Row& r, size_t k, bool at_end) {
  switch (r.kind) {
    case RowKind::stream:
      return (at_end ? t.activities.end : t.activities.start)[r.items[k]] + r.offset;
    case RowKind::collectives: {
      const analyzer::Collective& c = t.collectives[r.items[k]];
      return (at_end ? c.gpu_end : c.gpu_start) + r.offset;
    }
    case RowKind::nvtx: {
      const analyzer::Range& range = t.ranges[r.items[k]];
      return (at_end ? range.end : range.start) + r.offset;
    }
    case RowKind::overlap:
      return (at_end ? r.spans[k].end : r.spans[k].start) + r.offset;
    case RowKind::queue:
      return (at_end && k + 1 < r.points.size() ? r.points[k + 1] : r.points[k]).at + r.offset;
    case RowKind::group:
      break;
  }
  return 0;
}

}  // namespace

int64_t Timeline::start(const Row& r, size_t k) const {
  return item_bound(*trace_, r, k, false);
}

int64_t Timeline::end(const Row& r, size_t k) const {
  return item_bound(*trace_, r, k, true);
}

uint8_t Timeline::classes(const Row& r, size_t k) const {
  switch (r.kind) {
    case RowKind::stream:
      return bit(trace_->activities.cls[r.items[k]]);
    case RowKind::collectives:
      return bit(Class::communication);
    case RowKind::nvtx:
      return 0;
    case RowKind::overlap:
      return static_cast<uint8_t>(1u << static_cast<unsigned>(r.spans[k].kind));
    case RowKind::queue:
    case RowKind::group:
      break;
  }
  return 0;
}

std::string Timeline::name(const Row& r, size_t k) const {
  const analyzer::Trace& t = *trace_;
  switch (r.kind) {
    case RowKind::stream: {
      const int32_t n = t.activities.name[r.items[k]];
      return n >= 0 ? t.names[static_cast<size_t>(n)] : "?";
    }
    case RowKind::collectives:
      return t.collectives[r.items[k]].op;
    case RowKind::nvtx:
      return t.ranges[r.items[k]].name;
    case RowKind::overlap:
      return r.spans[k].kind == OverlapKind::hidden ? "hidden communication"
                                                    : "exposed communication";
    case RowKind::queue:
      return "queue length " + std::to_string(r.points[k].length);
    case RowKind::group:
      break;
  }
  return "";
}

std::vector<int> Timeline::visible_rows() const {
  std::vector<int> out;
  std::vector<int> stack(roots_.rbegin(), roots_.rend());
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    const Row& r = rows_[static_cast<size_t>(i)];
    if (r.hidden) continue;
    out.push_back(i);
    if (r.expanded) {
      for (auto it = r.children.rbegin(); it != r.children.rend(); ++it) stack.push_back(*it);
    }
  }
  return out;
}

bool Timeline::move(int i, int delta) {
  const Row& r = rows_[static_cast<size_t>(i)];
  std::vector<int>& sib = r.parent >= 0 ? rows_[static_cast<size_t>(r.parent)].children : roots_;
  auto it = std::find(sib.begin(), sib.end(), i);
  const auto pos = it - sib.begin();
  const auto to = pos + delta;
  if (to < 0 || to >= static_cast<std::ptrdiff_t>(sib.size())) return false;
  // Shift the row, keeping the others' order.
  if (to > pos) {
    std::rotate(sib.begin() + pos, sib.begin() + pos + 1, sib.begin() + to + 1);
  } else {
    std::rotate(sib.begin() + to, sib.begin() + pos, sib.begin() + pos + 1);
  }
  return true;
}

namespace {

// Item accessors the fold is instantiated with: rows read their own contiguous copies, overlap
// rows their spans.
struct ItemAccess {  // the row's own copies of its items' times and classes
  const int64_t *starts, *ends;
  const uint8_t* cls;
  int64_t start(size_t k) const { return starts[k]; }
  int64_t end(size_t k) const { return ends[k]; }
  uint8_t classes(size_t k) const { return cls[k]; }
};
struct SpanAccess {  // overlap rows: as many spans as their busiest stream has items
  const Row::Span* spans;
  int64_t offset;
  const int64_t *hidden, *exposed;  // Row::hidden_prefix, exposed_prefix
  // The hidden share of spans [b, e)'s time (zero-length spans count by their kind).
  float hidden_share(size_t b, size_t e) const {
    const int64_t h = hidden[e] - hidden[b], x = exposed[e] - exposed[b];
    if (h + x > 0) return static_cast<float>(static_cast<double>(h) / static_cast<double>(h + x));
    return spans[b].kind == OverlapKind::hidden ? 1.0f : 0.0f;
  }
  int64_t start(size_t k) const { return spans[k].start + offset; }
  int64_t end(size_t k) const { return spans[k].end + offset; }
  uint8_t classes(size_t k) const {
    return static_cast<uint8_t>(1u << static_cast<unsigned>(spans[k].kind));
  }
};

template <class Access>
std::vector<LodItem> fold(const Row& r, const Viewport& v, double min_px, size_t n,
                          const Access& acc) {
  std::vector<LodItem> out;
  auto start = [&](const Row&, size_t k) { return acc.start(k); };
  auto end = [&](const Row&, size_t k) { return acc.end(k); };
  auto classes = [&](const Row&, size_t k) { return acc.classes(k); };
  const double t0 = v.t0, t1 = v.t1();
  // First item that can reach the window: start >= t0 - longest duration.
  const double from = t0 - static_cast<double>(r.max_duration);  // window time
  const size_t lo = first_not(0, n, [&](size_t i) { return v.rel(start(r, i)) < from; });
  // Leaves whose items all end by t0 are skipped below; those before the first leaf reaching
  // past t0 all at once (a long item early in the row would otherwise make that a linear walk).
  const auto reach = std::partition_point(r.leaf_reach.begin(), r.leaf_reach.end(),
                                          [&](int64_t e) { return v.rel(e) <= t0; });
  size_t k = std::max(lo, std::min(n, static_cast<size_t>(reach - r.leaf_reach.begin()) * kLeaf));
  // First item at or after `begin` starting at or after t: galloping over the leaves' first
  // starts (contiguous), then a binary search inside one leaf.
  auto first_at_or_after = [&](size_t begin, double t) {
    size_t leaf = begin / kLeaf + 1, step = 1;  // find the first leaf starting at or after t
    size_t lo_leaf = leaf;
    while (leaf < r.leaves && v.rel(r.leaf_start[leaf]) < t) {
      lo_leaf = leaf + 1;
      leaf += step;
      step *= 2;
    }
    lo_leaf = first_not(lo_leaf, std::min(leaf, r.leaves),
                        [&](size_t m) { return v.rel(r.leaf_start[m]) < t; });
    // Leaf lo_leaf starts at or after t (or is past the end): the answer is in the leaf before.
    return first_not(std::max(begin, (lo_leaf > 0 ? lo_leaf - 1 : 0) * kLeaf),
                     std::min(n, lo_leaf * kLeaf),
                     [&](size_t m) { return v.rel(start(r, m)) < t; });
  };
  // Max end and class bits over items [b, e): items at the edges, tree nodes in between.
  auto range = [&](size_t b, size_t e, int64_t* max_end, uint8_t* cls) {
    *max_end = INT64_MIN;
    *cls = 0;
    while (b < e && b % kLeaf != 0) {
      *max_end = std::max(*max_end, end(r, b));
      *cls |= classes(r, b);
      ++b;
    }
    while (e > b && e % kLeaf != 0) {
      --e;
      *max_end = std::max(*max_end, end(r, e));
      *cls |= classes(r, e);
    }
    for (size_t lo2 = b / kLeaf + r.leaves, hi2 = e / kLeaf + r.leaves; lo2 < hi2;
         lo2 /= 2, hi2 /= 2) {
      if (lo2 & 1) {
        *max_end = std::max(*max_end, r.tree_max_end[lo2]);
        *cls |= r.tree_classes[lo2++];
      }
      if (hi2 & 1) {
        --hi2;
        *max_end = std::max(*max_end, r.tree_max_end[hi2]);
        *cls |= r.tree_classes[hi2];
      }
    }
  };
  while (k < n) {
    // Whole leaves that end before the window: skip them.
    if (k % kLeaf == 0 && k + kLeaf <= n && v.rel(r.tree_max_end[r.leaves + k / kLeaf]) <= t0) {
      k += kLeaf;
      continue;
    }
    const int64_t s = start(r, k);
    if (v.rel(s) >= t1) break;
    const int64_t e = end(r, k);
    // Entirely before the window (a zero-length item exactly at t0 is still shown).
    if (v.rel(e) <= t0 && v.rel(s) < t0) {
      ++k;
      continue;
    }
    const double x0 = v.x_of(s), x1 = v.x_of(e);
    if (x1 - x0 >= min_px) {
      out.push_back({x0, x1, static_cast<uint32_t>(k), 1, classes(r, k)});
      if constexpr (std::is_same_v<Access, SpanAccess>)
        out.back().hidden = acc.hidden_share(k, k + 1);
      ++k;
      continue;
    }
    // Fold everything starting in this pixel column, except a last item that is wide itself: it
    // is drawn on its own (in rows whose items do not overlap, only the last item of a column
    // can reach past it; folded in, it would lose its own colour to a sliver's).
    const double col = std::floor(x0);
    size_t j = std::max(k + 1, first_at_or_after(k, v.rel_at(col + 1)));
    if (j - 1 > k && v.x_of(end(r, j - 1)) - v.x_of(start(r, j - 1)) >= min_px) --j;
    int64_t max_end = 0;
    uint8_t cls = 0;
    range(k, j, &max_end, &cls);
    LodItem it;
    it.x0 = std::max(col, x0);
    it.x1 = std::max(col + 1, v.x_of(max_end));
    it.first = static_cast<uint32_t>(k);
    it.count = static_cast<uint32_t>(j - k);
    it.classes = cls;
    if constexpr (std::is_same_v<Access, SpanAccess>) it.hidden = acc.hidden_share(k, j);
    out.push_back(it);
    k = j;
  }
  return out;
}

}  // namespace

namespace {

// A queue row's step function in a viewport: a block per point wide enough to see, and per
// pixel column the longest queue of the points starting in it (the segment tree answers each
// column in O(log n)), so a burst of launches shows its peak at any zoom.
std::vector<LodItem> queue_lod(const Row& r, const Viewport& v, double min_px) {
  std::vector<LodItem> out;
  const size_t n = r.points.size();
  if (n < 2) return out;
  auto x_of = [&](size_t k) { return v.x_of(r.points[k].at + r.offset); };
  auto longest = [&](size_t b, size_t e) {  // over points [b, e)
    int64_t m = 0;
    while (b < e && b % kLeaf != 0) m = std::max(m, r.points[b++].length);
    while (e > b && e % kLeaf != 0) m = std::max(m, r.points[--e].length);
    for (size_t lo = b / kLeaf + r.leaves, hi = e / kLeaf + r.leaves; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) m = std::max(m, r.tree_max_length[lo++]);
      if (hi & 1) m = std::max(m, r.tree_max_length[--hi]);
    }
    return m;
  };
  // The point holding at the window's left edge (or the first one).
  const double left = v.t0;
  size_t k = first_not(0, n, [&](size_t i) { return v.rel(r.points[i].at + r.offset) <= left; });
  k = k > 0 ? k - 1 : 0;
  double x = std::max(x_of(k), 0.0);
  const auto width = static_cast<double>(v.width);
  // Point k holds from x (its start, or where the previous block ended) to point k + 1.
  while (k + 1 < n && x < width) {
    const double x1 = x_of(k + 1);
    if (x1 <= x) {  // a fold ended just where this point ends: nothing of it is left
      ++k;
      continue;
    }
    if (x1 - x >= min_px) {
      if (r.points[k].length > 0) {
        LodItem it;
        it.x0 = x;
        it.x1 = x1;
        it.first = static_cast<uint32_t>(k);
        it.length = r.points[k].length;
        out.push_back(it);
      }
      x = x1;
      ++k;
      continue;
    }
    // Point k and the points starting before the column's right edge fold into one block (the
    // longest queue among them); the last of them holds on past it, into the next block.
    const double col_end = std::floor(x) + 1;
    const size_t j = first_not(k + 1, n, [&](size_t i) { return x_of(i) < col_end; });
    LodItem it;
    it.x0 = x;
    it.x1 = col_end;
    it.first = static_cast<uint32_t>(k);
    it.count = static_cast<uint32_t>(j - k);
    it.length = longest(k, j);
    if (it.length > 0) out.push_back(it);
    x = col_end;
    k = j - 1;
  }
  return out;
}

}  // namespace

std::vector<LodItem> Timeline::lod(const Row& r, const Viewport& v, double min_px) const {
  const size_t n = size(r);
  if (n == 0 || r.kind == RowKind::group) return {};
  if (r.kind == RowKind::queue) return queue_lod(r, v, min_px);
  if (r.kind == RowKind::overlap)
    return fold(
        r, v, min_px, n,
        SpanAccess{r.spans.data(), r.offset, r.hidden_prefix.data(), r.exposed_prefix.data()});
  // finish() gave every other row its own copies of its items.
  return fold(r, v, min_px, n,
              ItemAccess{r.item_start.data(), r.item_end.data(), r.item_classes.data()});
}

int64_t Timeline::hit(const Row& r, int64_t t, int64_t slack) const {
  const size_t n = size(r);
  if (n == 0 || r.kind == RowKind::group) return -1;
  if (r.kind == RowKind::queue) {  // the point holding at t (a step function has no gaps)
    const size_t k = first_not(0, n, [&](size_t i) { return r.points[i].at + r.offset <= t; });
    if (k == 0 || k == n) return -1;  // before the first launch or after the last end
    return static_cast<int64_t>(k - 1);
  }
  slack = std::max<int64_t>(slack, 0);
  const int64_t from = t - r.max_duration - slack;
  const size_t lo = first_not(0, n, [&](size_t i) { return start(r, i) < from; });
  int64_t best = -1;
  int64_t best_d = slack + 1;
  for (size_t k = lo; k < n && start(r, k) <= t + slack; ++k) {
    const int64_t s = start(r, k), e = end(r, k);
    const int64_t d = t < s ? s - t : t > e ? t - e : 0;
    // Inside beats near; among those inside, the shortest (the most specific) wins.
    if (d < best_d ||
        (d == 0 && best_d == 0 && best >= 0 &&
         e - s < end(r, static_cast<size_t>(best)) - start(r, static_cast<size_t>(best)))) {
      best_d = d;
      best = static_cast<int64_t>(k);
    }
  }
  return best_d <= slack ? best : -1;
}

std::pair<int, int64_t> Timeline::find_activity(size_t act) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    if (r.kind != RowKind::stream || r.items.empty()) continue;
    if (r.items.front() > act || r.items.back() < act) continue;
    // A stream row's items are increasing activity indices (activities are sorted by start).
    auto it = std::lower_bound(r.items.begin(), r.items.end(), static_cast<uint32_t>(act));
    if (it != r.items.end() && *it == act) return {static_cast<int>(i), it - r.items.begin()};
  }
  return {-1, -1};
}

std::pair<int, int64_t> Timeline::find_collective(size_t c) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    const Row& r = rows_[i];
    if (r.kind != RowKind::collectives) continue;
    for (size_t k = 0; k < r.items.size(); ++k) {
      if (r.items[k] == c) return {static_cast<int>(i), static_cast<int64_t>(k)};
    }
  }
  return {-1, -1};
}

size_t Timeline::show_queues(bool on) {
  if (on && !queues_built_) build_queues();
  size_t n = 0;
  for (Row& r : rows_) {
    if (r.kind != RowKind::queue) continue;
    r.hidden = !on;
    ++n;
  }
  return n;
}

void Timeline::build_queues() {
  queues_built_ = true;
  const analyzer::Trace& t = *trace_;
  const size_t np = t.processes.size();
  std::vector<std::vector<analyzer::StreamSeries>> series(np);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t p = next++; p < np; p = next++)
      series[p] = analyzer::queue_series(t, static_cast<int>(p));
  };
  common::run_workers(np, work);
  // Each queue row goes right after its stream row (appended to rows_, so no row's index moves).
  const size_t existing = rows_.size();
  for (size_t i = 0; i < existing; ++i) {
    if (rows_[i].kind != RowKind::stream || rows_[i].process < 0) continue;
    auto& mine = series[static_cast<size_t>(rows_[i].process)];
    const auto q = std::find_if(mine.begin(), mine.end(), [&](const analyzer::StreamSeries& x) {
      return x.device == rows_[i].device && x.stream == rows_[i].key;
    });
    if (q == mine.end() || q->points.empty()) continue;
    Row qr;
    qr.kind = RowKind::queue;
    qr.parent = rows_[i].parent;
    qr.process = rows_[i].process;
    qr.device = rows_[i].device;
    qr.key = rows_[i].key;
    qr.offset = rows_[i].offset;
    qr.label = rows_[i].label + " queue";
    qr.hidden = true;
    qr.points = std::move(q->points);
    finish(qr);
    const int at = static_cast<int>(rows_.size());
    rows_.push_back(std::move(qr));
    std::vector<int>& sib =
        rows_[static_cast<size_t>(rows_[static_cast<size_t>(at)].parent)].children;
    auto after = std::find(sib.begin(), sib.end(), static_cast<int>(i));
    if (after != sib.end()) ++after;
    sib.insert(after, at);
  }
}

size_t Timeline::filter(const std::function<bool(const Row&, uint32_t)>& keep) {
  size_t kept = 0;
  for (Row& r : rows_) {
    if (r.kind == RowKind::group || r.kind == RowKind::overlap || r.kind == RowKind::queue)
      continue;
    if (!filtered_) r.all_items = std::move(r.items);
    r.items.clear();
    for (const uint32_t x : r.all_items) {
      if (keep(r, x)) r.items.push_back(x);
    }
    kept += r.items.size();
    finish(r);
  }
  filtered_ = true;
  return kept;
}

void Timeline::clear_filter() {
  if (!filtered_) return;
  for (Row& r : rows_) {
    if (r.kind == RowKind::group || r.kind == RowKind::overlap || r.kind == RowKind::queue)
      continue;
    r.items = std::move(r.all_items);
    r.all_items.clear();
    finish(r);
  }
  filtered_ = false;
}

void Timeline::reveal(int i) {
  rows_[static_cast<size_t>(i)].hidden = false;
  for (int p = rows_[static_cast<size_t>(i)].parent; p >= 0;
       p = rows_[static_cast<size_t>(p)].parent) {
    rows_[static_cast<size_t>(p)].expanded = true;
    rows_[static_cast<size_t>(p)].hidden = false;
  }
}

bool Timeline::collapse_threads_to_fit(size_t max_rows) {
  if (visible_rows().size() <= max_rows) return false;
  bool any = false;
  for (Row& r : rows_) {
    if (r.thread && r.expanded) {
      r.expanded = false;
      any = true;
    }
  }
  return any;
}

std::vector<std::array<float, analyzer::kClasses>> Timeline::overview(int buckets) const {
  std::vector<std::array<float, analyzer::kClasses>> out(static_cast<size_t>(std::max(buckets, 1)));
  const analyzer::Activities& a = trace_->activities;
  const double span = static_cast<double>(std::max<int64_t>(last_ - first_, 1));
  const double per = span / static_cast<double>(out.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t off = trace_->processes[static_cast<size_t>(a.process[i])].offset_ns;
    double s = static_cast<double>(a.start[i] + off - first_),
           e = static_cast<double>(a.end[i] + off - first_);
    auto b = static_cast<size_t>(std::clamp(s / per, 0.0, static_cast<double>(out.size() - 1)));
    const auto c = static_cast<size_t>(a.cls[i]);
    while (s < e && b < out.size()) {
      const double edge = static_cast<double>(b + 1) * per;
      const double part = std::min(e, edge) - s;
      out[b][c] += static_cast<float>(part / per);
      s = edge;
      ++b;
    }
  }
  return out;
}

}  // namespace c3::gui
