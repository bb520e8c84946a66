#include "c3/gui/timeline.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "c3/analyzer/intervals.h"
#include "c3/analyzer/metrics.h"

namespace c3::gui {

using analyzer::Class;

namespace {

uint8_t bit(Class c) {
  return static_cast<uint8_t>(1u << static_cast<unsigned>(c));
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

void Timeline::build() {
  const analyzer::Trace& t = *trace_;
  const analyzer::Activities& a = t.activities;
  first_ = INT64_MAX;
  last_ = INT64_MIN;
  auto offset = [&](int p) { return t.processes[static_cast<size_t>(p)].offset_ns; };
  for (size_t i = 0; i < a.size(); ++i) {
    first_ = std::min(first_, a.start[i] + offset(a.process[i]));
    last_ = std::max(last_, a.end[i] + offset(a.process[i]));
  }
  for (const auto& g : t.ranges) {
    first_ = std::min(first_, g.start + offset(g.process));
    last_ = std::max(last_, g.end + offset(g.process));
  }
  if (first_ > last_) first_ = last_ = 0;

  // Hosts, then processes in rank order.
  std::map<std::string, std::vector<int>> hosts;
  for (size_t p = 0; p < t.processes.size(); ++p) hosts[t.processes[p].host].push_back(static_cast<int>(p));
  for (auto& [host, procs] : hosts) {
    std::sort(procs.begin(), procs.end(), [&](int x, int y) {
      const auto& px = t.processes[static_cast<size_t>(x)];
      const auto& py = t.processes[static_cast<size_t>(y)];
      if (px.rank && py.rank) return *px.rank < *py.rank;
      return x < y;
    });
    Row h;
    h.kind = RowKind::group;
    h.label = host.empty() ? "host (unknown)" : "host " + host;
    const int hi = add(std::move(h));
    for (int p : procs) {
      const auto& pr = t.processes[static_cast<size_t>(p)];
      Row pg;
      pg.kind = RowKind::group;
      pg.parent = hi;
      pg.process = p;
      pg.label = pr.label() + (pr.rank ? " (pid " + std::to_string(pr.pid) + ")" : "");
      const int pi = add(std::move(pg));
      // Devices and their streams: rows of one (process, device) are contiguous in activities.
      size_t i = 0;
      while (i < a.size() && a.process[i] != p) ++i;
      while (i < a.size() && a.process[i] == p) {
        const int dev = a.device[i];
        size_t j = i;
        while (j < a.size() && a.process[j] == p && a.device[j] == dev) ++j;
        Row dg;
        dg.kind = RowKind::group;
        dg.parent = pi;
        dg.process = p;
        dg.device = dev;
        const analyzer::Device* d = t.device(static_cast<int16_t>(p), static_cast<int16_t>(dev));
        dg.label = "GPU " + std::to_string(dev) + (d && !d->name.empty() ? ": " + d->name : "");
        const int di = add(std::move(dg));
        // Overlap row: communication hidden under compute vs exposed.
        analyzer::Intervals comp, comm;
        for (size_t k = i; k < j; ++k) {
          if (a.cls[k] == Class::compute) comp.push_back({a.start[k], a.end[k]});
          if (a.cls[k] == Class::communication) comm.push_back({a.start[k], a.end[k]});
        }
        comp = analyzer::union_sorted(comp);
        comm = analyzer::union_sorted(comm);
        Row ov;
        ov.kind = RowKind::overlap;
        ov.parent = di;
        ov.process = p;
        ov.device = dev;
        ov.label = "overlap";
        for (const auto& x : analyzer::intersect(comm, comp)) ov.spans.push_back({x.start, x.end, OverlapKind::hidden});
        for (const auto& x : analyzer::subtract(comm, comp)) ov.spans.push_back({x.start, x.end, OverlapKind::exposed});
        std::sort(ov.spans.begin(), ov.spans.end(), [](const Row::Span& x, const Row::Span& y) { return x.start < y.start; });
        const int oi = add(std::move(ov));
        finish(rows_[static_cast<size_t>(oi)]);
        // Streams in id order.
        std::map<int32_t, std::vector<uint32_t>> streams;
        for (size_t k = i; k < j; ++k) streams[a.stream[k]].push_back(static_cast<uint32_t>(k));
        for (auto& [sid, items] : streams) {
          Row s;
          s.kind = RowKind::stream;
          s.parent = di;
          s.process = p;
          s.device = dev;
          s.key = sid;
          s.label = sid >= 0 ? "stream " + std::to_string(sid) : "no stream";
          s.items = std::move(items);
          const int si = add(std::move(s));
          finish(rows_[static_cast<size_t>(si)]);
        }
        i = j;
      }
      // Collectives per communicator (their GPU time spans).
      std::map<std::string, std::vector<uint32_t>> comms;
      for (size_t c = 0; c < t.collectives.size(); ++c) {
        const auto& col = t.collectives[c];
        if (col.process == p && col.gpu_start >= 0) comms[col.comm_id].push_back(static_cast<uint32_t>(c));
      }
      for (auto& [id, items] : comms) {
        std::sort(items.begin(), items.end(), [&](uint32_t x, uint32_t y) {
          return t.collectives[x].gpu_start < t.collectives[y].gpu_start;
        });
        Row c;
        c.kind = RowKind::collectives;
        c.parent = pi;
        c.process = p;
        c.label = "NCCL " + (id.empty() ? std::string("(unknown communicator)") : short_comm(id));
        c.items = std::move(items);
        const int ci = add(std::move(c));
        finish(rows_[static_cast<size_t>(ci)]);
      }
      // NVTX: a group per thread, a row per nesting depth.
      std::map<int64_t, std::map<int, std::vector<uint32_t>>> threads;
      for (size_t g = 0; g < t.ranges.size(); ++g) {
        if (t.ranges[g].process == p) threads[t.ranges[g].thread][t.ranges[g].depth].push_back(static_cast<uint32_t>(g));
      }
      for (auto& [tid, depths] : threads) {
        Row tg;
        tg.kind = RowKind::group;
        tg.parent = pi;
        tg.process = p;
        tg.key = tid;
        tg.label = "NVTX thread " + std::to_string(tid);
        const int ti = add(std::move(tg));
        for (auto& [depth, items] : depths) {
          std::sort(items.begin(), items.end(),
                    [&](uint32_t x, uint32_t y) { return t.ranges[x].start < t.ranges[y].start; });
          Row r;
          r.kind = RowKind::nvtx;
          r.parent = ti;
          r.process = p;
          r.key = tid;
          r.nvtx_depth = depth;
          r.label = "depth " + std::to_string(depth);
          r.items = std::move(items);
          const int ri = add(std::move(r));
          finish(rows_[static_cast<size_t>(ri)]);
        }
      }
    }
  }
}

void Timeline::finish(Row& r) {
  const size_t n = size(r);
  r.max_duration = 0;
  r.block_max_end.assign((n + kBlock - 1) / kBlock, INT64_MIN);
  r.block_classes.assign(r.block_max_end.size(), 0);
  for (size_t k = 0; k < n; ++k) {
    const int64_t s = start(r, k), e = end(r, k);
    r.max_duration = std::max(r.max_duration, e - s);
    r.block_max_end[k / kBlock] = std::max(r.block_max_end[k / kBlock], e);
    r.block_classes[k / kBlock] |= classes(r, k);
  }
}

int64_t Timeline::start(const Row& r, size_t k) const {
  switch (r.kind) {
    case RowKind::stream: return trace_->activities.start[r.items[k]] + r.offset;
    case RowKind::collectives: return trace_->collectives[r.items[k]].gpu_start + r.offset;
    case RowKind::nvtx: return trace_->ranges[r.items[k]].start + r.offset;
    case RowKind::overlap: return r.spans[k].start + r.offset;
    case RowKind::group: break;
  }
  return 0;
}

int64_t Timeline::end(const Row& r, size_t k) const {
  switch (r.kind) {
    case RowKind::stream: return trace_->activities.end[r.items[k]] + r.offset;
    case RowKind::collectives: return trace_->collectives[r.items[k]].gpu_end + r.offset;
    case RowKind::nvtx: return trace_->ranges[r.items[k]].end + r.offset;
    case RowKind::overlap: return r.spans[k].end + r.offset;
    case RowKind::group: break;
  }
  return 0;
}

uint8_t Timeline::classes(const Row& r, size_t k) const {
  switch (r.kind) {
    case RowKind::stream: return bit(trace_->activities.cls[r.items[k]]);
    case RowKind::collectives: return bit(Class::communication);
    case RowKind::nvtx: return 0;
    case RowKind::overlap: return static_cast<uint8_t>(1u << static_cast<unsigned>(r.spans[k].kind));
    case RowKind::group: break;
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
    case RowKind::collectives: return t.collectives[r.items[k]].op;
    case RowKind::nvtx: return t.ranges[r.items[k]].name;
    case RowKind::overlap: return r.spans[k].kind == OverlapKind::hidden ? "hidden communication" : "exposed communication";
    case RowKind::group: break;
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
  std::swap(sib[static_cast<size_t>(pos)], sib[static_cast<size_t>(to)]);
  return true;
}

std::vector<LodItem> Timeline::lod(const Row& r, const Viewport& v, double min_px) const {
  std::vector<LodItem> out;
  const size_t n = size(r);
  if (n == 0 || r.kind == RowKind::group) return out;
  const double t0 = v.t0, t1 = v.t1();
  // First item that can reach the window: start >= t0 - longest duration.
  const double from = t0 - static_cast<double>(r.max_duration);
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (static_cast<double>(start(r, mid)) < from) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  size_t k = lo;
  auto first_at_or_after = [&](size_t begin, double t) {
    size_t l = begin, h = n;
    while (l < h) {
      const size_t m = (l + h) / 2;
      if (static_cast<double>(start(r, m)) < t) {
        l = m + 1;
      } else {
        h = m;
      }
    }
    return l;
  };
  // Max end and class bits over items [b, e): items at the edges, block maxima in between.
  auto range = [&](size_t b, size_t e, int64_t* max_end, uint8_t* cls) {
    *max_end = INT64_MIN;
    *cls = 0;
    while (b < e && b % kBlock != 0) {
      *max_end = std::max(*max_end, end(r, b));
      *cls |= classes(r, b);
      ++b;
    }
    while (b + kBlock <= e) {
      *max_end = std::max(*max_end, r.block_max_end[b / kBlock]);
      *cls |= r.block_classes[b / kBlock];
      b += kBlock;
    }
    for (; b < e; ++b) {
      *max_end = std::max(*max_end, end(r, b));
      *cls |= classes(r, b);
    }
  };
  while (k < n) {
    // Whole blocks that end before the window: skip them.
    if (k % kBlock == 0 && static_cast<double>(r.block_max_end[k / kBlock]) <= t0 && k + kBlock <= n) {
      k += kBlock;
      continue;
    }
    const int64_t s = start(r, k);
    if (static_cast<double>(s) >= t1) break;
    const int64_t e = end(r, k);
    if (static_cast<double>(e) <= t0 && e > s) {
      ++k;
      continue;
    }
    const double x0 = v.x_of(s), x1 = v.x_of(e);
    if (x1 - x0 >= min_px) {
      out.push_back({x0, x1, static_cast<uint32_t>(k), 1, classes(r, k)});
      ++k;
      continue;
    }
    // Fold everything starting in this pixel column.
    const double col = std::floor(x0);
    const size_t j = std::max(k + 1, first_at_or_after(k, v.t_of(col + 1)));
    int64_t max_end = 0;
    uint8_t cls = 0;
    range(k, j, &max_end, &cls);
    LodItem it;
    it.x0 = std::max(col, x0);
    it.x1 = std::max(col + 1, v.x_of(max_end));
    it.first = static_cast<uint32_t>(k);
    it.count = static_cast<uint32_t>(j - k);
    it.classes = cls;
    out.push_back(it);
    k = j;
  }
  return out;
}

int64_t Timeline::hit(const Row& r, double t, double slack) const {
  const size_t n = size(r);
  if (n == 0 || r.kind == RowKind::group) return -1;
  const double from = t - static_cast<double>(r.max_duration) - slack;
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (static_cast<double>(start(r, mid)) < from) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  int64_t best = -1;
  double best_d = slack + 1;
  for (size_t k = lo; k < n && static_cast<double>(start(r, k)) <= t + slack; ++k) {
    const double s = static_cast<double>(start(r, k)), e = static_cast<double>(end(r, k));
    const double d = t < s ? s - t : t > e ? t - e : 0;
    // Inside beats near; among those inside, the shortest (the most specific) wins.
    if (d < best_d || (d == 0 && best_d == 0 && best >= 0 && e - s < static_cast<double>(end(r, static_cast<size_t>(best)) - start(r, static_cast<size_t>(best))))) {
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

size_t Timeline::filter(const std::function<bool(const Row&, uint32_t)>& keep) {
  size_t kept = 0;
  for (Row& r : rows_) {
    if (r.kind == RowKind::group || r.kind == RowKind::overlap) continue;
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
    if (r.kind == RowKind::group || r.kind == RowKind::overlap) continue;
    r.items = std::move(r.all_items);
    r.all_items.clear();
    finish(r);
  }
  filtered_ = false;
}

void Timeline::reveal(int i) {
  rows_[static_cast<size_t>(i)].hidden = false;
  for (int p = rows_[static_cast<size_t>(i)].parent; p >= 0; p = rows_[static_cast<size_t>(p)].parent) {
    rows_[static_cast<size_t>(p)].expanded = true;
    rows_[static_cast<size_t>(p)].hidden = false;
  }
}

std::vector<std::array<float, analyzer::kClasses>> Timeline::overview(int buckets) const {
  std::vector<std::array<float, analyzer::kClasses>> out(static_cast<size_t>(std::max(buckets, 1)));
  const analyzer::Activities& a = trace_->activities;
  const double span = static_cast<double>(std::max<int64_t>(last_ - first_, 1));
  const double per = span / static_cast<double>(out.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t off = trace_->processes[static_cast<size_t>(a.process[i])].offset_ns;
    double s = static_cast<double>(a.start[i] + off - first_), e = static_cast<double>(a.end[i] + off - first_);
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
