#include "build.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "bench_load.h"

namespace c3::analyzer {

int32_t Shapes::id(const KernelShape& s) {
  const uint64_t k1 = (static_cast<uint64_t>(s.grid) << 32) | s.block;
  const uint64_t k2 = (static_cast<uint64_t>(s.registers) << 32) | s.shared;
  // A few shapes make up most launches: a small direct-mapped cache before the hash map.
  Recent& r = recent_[(k1 * 0x9E3779B97F4A7C15ULL ^ k2) >> 58];
  if (r.id >= 0 && r.k1 == k1 && r.k2 == k2) return r.id;
  auto it = ids_.find({k1, k2});
  int32_t id = 0;
  if (it != ids_.end()) {
    id = it->second;
  } else {
    id = static_cast<int32_t>(shapes_.size());
    shapes_.push_back(s);
    ids_.emplace(std::make_pair(k1, k2), id);
  }
  r = {k1, k2, id};
  return id;
}

size_t LinkTable::sparse_find(int64_t process, int64_t correlation) const {
  if (sparse_used_ == 0) return kNone;
  const size_t mask = sparse_.size() - 1;
  for (size_t i = PairHash{}(std::pair{process, correlation}) & mask;; i = (i + 1) & mask) {
    const Entry& e = sparse_[i];
    if (!e.used) return kNone;
    if (e.process == process && e.correlation == correlation) return i;
  }
}

uint32_t& LinkTable::sparse_slot(int64_t process, int64_t correlation) {
  if (const size_t at = sparse_find(process, correlation); at != kNone) return sparse_[at].value;
  if (2 * (sparse_used_ + 1) > sparse_.size()) {  // at most half full: grow (a power of two)
    std::vector<Entry> old(std::max<size_t>(64, 2 * sparse_.size()));
    old.swap(sparse_);
    const size_t mask = sparse_.size() - 1;
    for (const Entry& e : old) {
      if (!e.used) continue;
      size_t i = PairHash{}(std::pair{e.process, e.correlation}) & mask;
      while (sparse_[i].used) i = (i + 1) & mask;
      sparse_[i] = e;
    }
  }
  const size_t mask = sparse_.size() - 1;
  size_t i = PairHash{}(std::pair{process, correlation}) & mask;
  while (sparse_[i].used) i = (i + 1) & mask;
  sparse_[i] = {process, correlation, 0, true};
  ++sparse_used_;
  sparse_lo_ = std::min(sparse_lo_, correlation);
  sparse_hi_ = std::max(sparse_hi_, correlation);
  return sparse_[i].value;
}

uint32_t& LinkTable::slot(int64_t process, int64_t correlation, bool main) {
  ++entries_;
  if (main && correlation >= dense_base_) {
    const auto i = static_cast<uint64_t>(correlation - dense_base_);
    const uint64_t bound = std::max(kDenseFloor, 16 * entries_);
    if (i < dense_.size() || i < bound) {
      if (maybe_sparse(correlation)) {  // an id that went to the hash before the vector reached it
        if (const size_t at = sparse_find(process, correlation); at != kNone)
          return sparse_[at].value;
      }
      main_process_ = process;
      if (dense_.size() <= i) {
        dense_.resize(std::max<size_t>(i + 1, std::min<uint64_t>(dense_.size() * 2, bound)), 0);
      }
      return dense_[i];
    }
    main_process_ = process;
    main_in_sparse_ = true;
  } else if (main && correlation >= 0) {  // below the vector's start (a hint that was wrong)
    main_process_ = process;
    main_in_sparse_ = true;
  }
  return sparse_slot(process, correlation);
}

void LinkTable::starts_at(int64_t lowest) {
  if (entries_ == 0 && lowest > 0) dense_base_ = lowest;
}

uint32_t LinkTable::find(int64_t process, int64_t correlation) const {
  if (process == main_process_ && correlation >= dense_base_ &&
      static_cast<uint64_t>(correlation - dense_base_) < dense_.size()) {
    const uint32_t v = dense_[static_cast<size_t>(correlation - dense_base_)];
    if (v != 0 || !maybe_sparse(correlation)) return v;
  }
  const size_t at = sparse_find(process, correlation);
  return at == kNone ? 0 : sparse_[at].value;
}

KernelShape clamp_shape(int64_t grid, int64_t block, int64_t registers, int64_t shared) {
  KernelShape shape;
  shape.grid = static_cast<uint32_t>(std::clamp<int64_t>(grid, 0, UINT32_MAX));
  shape.block = static_cast<uint32_t>(std::clamp<int64_t>(block, 0, UINT32_MAX));
  shape.registers = static_cast<uint16_t>(std::clamp<int64_t>(registers, 0, UINT16_MAX));
  shape.shared = static_cast<uint32_t>(std::clamp<int64_t>(shared, 0, UINT32_MAX));
  return shape;
}

namespace {

// Sets a field to its "unknown" value and remembers that something changed.
struct Unknown {
  bool changed = false;
  template <class T, class V>
  void operator()(T& field, V value) {
    changed = true;
    field = value;
  }
};

}  // namespace

bool make_possible(Process& p) {
  Unknown unknown;
  if (!stamp_in_limit(p.anchor_trace_ns) || !stamp_in_limit(p.anchor_realtime_ns)) {
    unknown(p.anchor_trace_ns, 0);
    unknown(p.anchor_realtime_ns, 0);
  }
  if (!stamp_in_limit(p.pid)) unknown(p.pid, 0);
  if (!stamp_in_limit(p.offset_ns)) unknown(p.offset_ns, 0);
  if (p.rank && !stamp_in_limit(*p.rank)) unknown(p.rank, std::nullopt);
  if (p.world_size && !stamp_in_limit(*p.world_size)) unknown(p.world_size, std::nullopt);
  return unknown.changed;
}

bool make_possible(Collective& c) {
  Unknown unknown;
  if (c.seq < -1 || c.seq > kStampLimit) unknown(c.seq, -1);
  if (c.bytes < 0 || c.bytes > kBytesLimit) unknown(c.bytes, 0);
  if (c.nranks < 0) unknown(c.nranks, 0);
  if (c.rank < -1) unknown(c.rank, -1);
  if (!stamp_in_limit(c.host_start)) unknown(c.host_start, 0);
  // The GPU span comes from linked activities (bounded by the loader): in a snapshot it is
  // either none (-1, -1) or an interval within the bounds.
  const bool none = c.gpu_start == -1 && c.gpu_end == -1;
  if (!none &&
      (!stamp_in_limit(c.gpu_start) || !stamp_in_limit(c.gpu_end) || c.gpu_end < c.gpu_start)) {
    unknown(c.gpu_start, -1);
    unknown(c.gpu_end, -1);
  }
  return unknown.changed;
}

bool make_possible(Device& d) {
  bool changed = false;
  for (int* x :
       {&d.sm_count, &d.max_threads_per_sm, &d.max_blocks_per_sm, &d.max_registers_per_sm}) {
    if (*x < 0) {
      *x = 0;
      changed = true;
    }
  }
  for (int64_t* x : {&d.max_shared_per_sm, &d.memory_bandwidth}) {
    if (*x < 0 || *x > kAmountLimit) {
      *x = 0;
      changed = true;
    }
  }
  return changed;
}

bool make_possible(BenchResult& b) {
  bool changed = false;
  // Medians of durations and a bandwidth: finite and not negative (what a summary reads back).
  for (double* x : {&b.t_comp, &b.t_comm, &b.t_c3}) {
    if (!std::isfinite(*x) || *x < 0) {
      *x = 0;
      changed = true;
    }
  }
  for (std::optional<double>* x :
       {&b.compute_slowdown, &b.comm_slowdown, &b.ideal_speedup, &b.realized_speedup,
        &b.fraction_of_ideal, &b.realized_over_ideal, &b.decomposition_loss_comp,
        &b.decomposition_loss_comm, &b.schedule_speedup, &b.busbw}) {
    if (*x && !std::isfinite(**x)) {
      x->reset();
      changed = true;
    }
  }
  if (b.busbw && *b.busbw < 0) {
    b.busbw.reset();
    changed = true;
  }
  if (!possible(b.config)) {
    b.config = {};
    changed = true;
  }
  return changed;
}

void skip(Trace& t, const std::string& what) {
  if (t.skipped++ == 0) t.first_skipped = what;
}

TraceBuilder::TraceBuilder(Trace& t, std::string source, std::function<void(int64_t)> tick)
    : t_(t),
      source_(std::move(source)),
      tick_(std::move(tick)),
      names_(t.names),
      shapes_(t.shapes) {}

void TraceBuilder::process(int64_t db_id, Process p) {
  if (t_.processes.size() >= static_cast<size_t>(std::numeric_limits<int16_t>::max())) {
    throw std::invalid_argument("more than 32767 processes: analyze fewer traces at once");
  }
  p.source = source_;
  p.db_id = db_id;
  make_possible(p);
  if (proc_.empty() || db_id < proc_.begin()->first) main_process_ = db_id;
  proc_[db_id] = static_cast<int16_t>(t_.processes.size());
  last_id_ = INT64_MIN;
  t_.processes.push_back(std::move(p));
}

void TraceBuilder::meta(std::string_view key, std::string_view value) {
  if (!key.ends_with("_version") || key == "schema_version" || key == "c3scope_version") return;
  std::string_view name = key.substr(0, key.size() - 8);
  auto set = [&](Process& p) {
    auto& v = p.versions;
    auto it = std::find_if(v.begin(), v.end(), [&](const auto& e) { return e.first == name; });
    if (it != v.end()) {
      it->second = value;
    } else {
      v.emplace_back(name, value);
      std::sort(v.begin(), v.end());
    }
  };
  if (name.starts_with("kineto_")) {
    // kineto_<process id>_<name>
    name.remove_prefix(7);
    const size_t us = name.find('_');
    if (us == std::string_view::npos) return;  // no name after the process id
    int64_t id = 0;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + us, id);
    if (ec != std::errc() || end != name.data() + us) return;
    name.remove_prefix(us + 1);
    const int p = process_index(id);
    if (p >= 0 && !name.empty()) set(t_.processes[static_cast<size_t>(p)]);
    return;
  }
  if (name.empty()) return;
  for (const auto& [id, p] : proc_) set(t_.processes[static_cast<size_t>(p)]);
}

void TraceBuilder::device(int64_t process_db, Device d) {
  const int p = process_index(process_db);
  if (p < 0) return;
  make_possible(d);
  d.process = static_cast<int16_t>(p);
  t_.devices.push_back(std::move(d));
}

void TraceBuilder::reserve_collectives(size_t n) {
  t_.collectives.reserve(t_.collectives.size() + n);
  next_call_.reserve(next_call_.size() + n);
  last_call_.reserve(last_call_.size() + n);
}

void TraceBuilder::reserve_rows(size_t n) {
  t_.activities.reserve(t_.activities.size() + n);
}

void TraceBuilder::collective(int64_t process_db, Collective c, int64_t external_id) {
  const int p = process_index(process_db);
  if (p < 0) return;
  c.process = static_cast<int16_t>(p);
  make_possible(c);
  const auto idx = static_cast<int32_t>(t_.collectives.size());
  uint32_t& first = ext_first_.slot(process_db, external_id, process_db == main_process_);
  next_call_.push_back(-1);
  last_call_.push_back(idx);
  if (first == 0) {
    first = static_cast<uint32_t>(idx) + 1;
  } else {
    const auto head = static_cast<size_t>(first - 1);
    next_call_[static_cast<size_t>(last_call_[head])] = idx;
    last_call_[head] = idx;
  }
  t_.collectives.push_back(std::move(c));
}

void TraceBuilder::external_correlation(int64_t process_db, int64_t correlation,
                                        int64_t external_id) {
  constexpr uint32_t kSeveral = 0x80000000u;
  if (t_.collectives.empty()) return;
  const uint32_t first = ext_first_.find(process_db, external_id);
  if (first == 0) return;
  uint32_t& slot = linked_.slot(process_db, correlation, process_db == main_process_);
  if (slot == 0) {
    slot = first;
  } else if ((slot & kSeveral) != 0) {
    several_[slot & ~kSeveral].push_back(first);
  } else if (slot != first) {
    several_.push_back({slot, first});
    slot = kSeveral | static_cast<uint32_t>(several_.size() - 1);
  }
}

// The collective of a GPU row, preferring the call on the row's own device (a group's calls
// share its work); every call it belongs to gets the row in its GPU span.
int32_t TraceBuilder::link(int64_t process_db, int64_t correlation, int16_t device, int64_t s,
                           int64_t e) {
  constexpr uint32_t kSeveral = 0x80000000u;
  if (t_.collectives.empty() || correlation < 0) return -1;
  const uint32_t slot = linked_.find(process_db, correlation);
  if (slot == 0) return -1;
  int32_t best = -1;
  auto visit = [&](uint32_t first) {
    for (int32_t c = static_cast<int32_t>(first) - 1; c >= 0;
         c = next_call_[static_cast<size_t>(c)]) {
      Collective& col = t_.collectives[static_cast<size_t>(c)];
      col.gpu_start = col.gpu_start < 0 ? s : std::min(col.gpu_start, s);
      col.gpu_end = std::max(col.gpu_end, e);
      if (best < 0 ||
          (col.device == device && t_.collectives[static_cast<size_t>(best)].device != device)) {
        best = c;
      }
    }
  };
  if ((slot & kSeveral) != 0) {
    for (const uint32_t first : several_[slot & ~kSeveral]) visit(first);
  } else {
    visit(slot);
  }
  return best;
}

int64_t TraceBuilder::row_id(int64_t row) const {
  if (row >= 0) return row;
  const int64_t place = -1 - row;
  return t_.skipped == 0 && row_id_of_ ? row_id_of_(place) : place + 1;
}

void TraceBuilder::skip_row(int64_t row, const char* table, const char* why) {
  skip(t_, source_ + ": " + table + " row " + std::to_string(row_id(row)) + " " + why);
}

void TraceBuilder::bad_row(int64_t row, const char* table, const std::string& why) {
  skip(t_, source_ + ": " + table + " row " + std::to_string(row_id(row)) + ": " + why);
}

void TraceBuilder::cut(const char* table, int64_t n, const std::string& first) {
  if (n <= 0) return;
  skip(t_, source_ + ": " + table + ": " + first + " (docs/outputs.md, Reading)");
  t_.skipped += n - 1;
}

void TraceBuilder::kernel_shape(size_t i, const KernelShape& shape, int64_t submitted) {
  t_.activities.shape[i] = shapes_.id(shape);
  const int64_t s = t_.activities.start[i];
  if (submitted >= 0 && submitted <= s) {
    t_.launch_delays.push_back({t_.activities.process[i], t_.activities.device[i], s - submitted});
  }
}

size_t TraceBuilder::memcpy(int64_t row, int64_t process_db, int64_t device, int64_t stream,
                            int64_t start, int64_t end, std::string_view copy_kind, int64_t bytes,
                            int64_t channel, int64_t correlation) {
  const int p = process_index(process_db);
  if (!check(row, p, start, end, "memcpy")) return SIZE_MAX;
  const auto dev = static_cast<int16_t>(device);
  // "Memcpy <kind>" names, interned once per kind rather than per row.
  std::string kind(copy_kind);
  auto it = copy_names_.find(kind);
  if (it == copy_names_.end()) it = copy_names_.emplace(kind, names_.id("Memcpy " + kind)).first;
  const size_t i = t_.activities.push(start, end, it->second, static_cast<int32_t>(stream), dev,
                                      static_cast<int16_t>(p), Kind::memcpy, bytes);
  t_.activities.collective[i] = link(process_db, correlation, dev, start, end);
  t_.activities.shape[i] = static_cast<int32_t>(std::clamp<int64_t>(channel, -1, INT32_MAX));
  if (expect_calls_ && correlation >= 0) launched(process_db, correlation, i);
  stream_row(p, stream, correlation, i);
  return i;
}

size_t TraceBuilder::memset(int64_t row, int64_t process_db, int64_t device, int64_t stream,
                            int64_t start, int64_t end, int64_t bytes, int64_t correlation) {
  const int p = process_index(process_db);
  if (!check(row, p, start, end, "memset")) return SIZE_MAX;
  if (memset_name_ < 0) memset_name_ = names_.id("Memset");
  const auto dev = static_cast<int16_t>(device);
  const size_t i = t_.activities.push(start, end, memset_name_, static_cast<int32_t>(stream), dev,
                                      static_cast<int16_t>(p), Kind::memset, bytes);
  // A set a collective launched counts in its GPU span (sets are not linked rows).
  link(process_db, correlation, dev, start, end);
  if (expect_calls_ && correlation >= 0) launched(process_db, correlation, i);
  stream_row(p, stream, correlation, i);
  return i;
}

void TraceBuilder::launched(int64_t process_db, int64_t correlation, size_t i) {
  if (i >= UINT32_MAX) return;
  uint32_t& slot = launched_.slot(process_db, correlation, process_db == main_process_);
  const auto row = static_cast<uint32_t>(i);
  if (slot == 0) {
    slot = row + 1;
    return;
  }
  // Appended at the chain's end, so a launch's rows stay in the order they came.
  uint32_t at = slot - 1;
  for (auto it = more_launched_.find(at); it != more_launched_.end();
       it = more_launched_.find(at)) {
    at = it->second;
  }
  more_launched_.emplace(at, row);
}

void TraceBuilder::moved(const std::vector<uint32_t>& order) {
  if (order.empty()) return;
  std::vector<uint32_t> to(order.size());  // old row -> new row
  for (size_t i = 0; i < order.size(); ++i) to[order[i]] = static_cast<uint32_t>(i);
  auto at = [&to](uint32_t row) { return row < to.size() ? to[row] : row; };
  launched_.rewrite([&](uint32_t slot) { return at(slot - 1) + 1; });
  if (!more_launched_.empty()) {
    std::unordered_map<uint32_t, uint32_t> next;
    next.reserve(more_launched_.size());
    for (const auto& [from, row] : more_launched_) next.emplace(at(from), at(row));
    more_launched_.swap(next);
  }
  for (StreamRow& s : stream_rows_) {
    if (s.row < to.size()) s.row = to[s.row];
  }
}

void TraceBuilder::api_call(int64_t row, int64_t process_db, int64_t correlation, int64_t start,
                            int64_t end, int32_t name, int32_t thread) {
  const uint32_t slot = correlation < 0 ? 0 : launched_.find(process_db, correlation);
  if (slot == 0) {
    // Not a launch: a synchronization is kept for the critical path (why/path.h).
    if (name < 0 || static_cast<size_t>(name) >= t_.names.size()) return;
    if (sync_name_.size() <= static_cast<size_t>(name)) {
      sync_name_.resize(static_cast<size_t>(name) + 1, -1);
    }
    int8_t& s = sync_name_[static_cast<size_t>(name)];
    if (s < 0) s = is_sync_call(t_.names[static_cast<size_t>(name)]) ? 1 : 0;
    const int p = s == 1 ? process_index(process_db) : -1;
    if (p >= 0 && end >= start && in_time_limit(start, end) && in_duration_limit(start, end)) {
      t_.host_syncs.push_back({static_cast<int16_t>(p), start, end, thread});
    }
    return;
  }
  if (end < start || !in_time_limit(start, end) || !in_duration_limit(start, end)) {
    skip_row(row, "api_call",
             end < start ? "ends before it starts"
                         : "has a time beyond the limits (+-2^61 ns, 2^50 ns long)");
    return;
  }
  Activities& a = t_.activities;
  for (uint32_t at = slot - 1;;) {
    if (!a.has_calls() || a.call_end[at] == kNoCall) a.set_call(at, start, end, name, thread);
    if (more_launched_.empty()) break;
    auto it = more_launched_.find(at);
    if (it == more_launched_.end()) break;
    at = it->second;
  }
}

void TraceBuilder::range(int64_t process_db, Range g) {
  const int p = process_index(process_db);
  if (p < 0) return;
  if (!in_time_limit(g.start, g.end)) {
    skip(t_, source_ + ": a range with a time beyond +-2^61 ns");
    return;
  }
  if (g.end > g.start && !in_duration_limit(g.start, g.end)) {
    skip(t_, source_ + ": a range that lasts longer than 2^50 ns (13 days)");
    return;
  }
  g.process = static_cast<int16_t>(p);
  t_.ranges.push_back(std::move(g));
}

void TraceBuilder::stream_wait(int64_t process_db, int64_t stream, int64_t correlation,
                               int64_t event) {
  const int p = process_index(process_db);
  if (p < 0 || correlation < 0 || stream < INT32_MIN || stream > INT32_MAX) return;
  waits_.push_back({static_cast<int16_t>(p), static_cast<int32_t>(stream), correlation, event});
}

void TraceBuilder::cuda_event(int64_t process_db, int64_t stream, int64_t correlation,
                              int64_t event) {
  const int p = process_index(process_db);
  if (p < 0 || correlation < 0 || stream < INT32_MIN || stream > INT32_MAX) return;
  records_.push_back({static_cast<int16_t>(p), static_cast<int32_t>(stream), correlation, event});
}

void TraceBuilder::resolve_waits() {
  if (waits_.empty() || records_.empty() || stream_rows_.empty()) return;
  auto by_stream = [](const StreamRow& x, const StreamRow& y) {
    return std::tie(x.process, x.stream, x.correlation, x.row) <
           std::tie(y.process, y.stream, y.correlation, y.row);
  };
  std::sort(stream_rows_.begin(), stream_rows_.end(), by_stream);
  std::sort(records_.begin(), records_.end(), [](const EventUse& x, const EventUse& y) {
    return std::tie(x.process, x.event, x.correlation) <
           std::tie(y.process, y.event, y.correlation);
  });
  const Activities& a = t_.activities;
  for (const EventUse& w : waits_) {
    // The event's latest record before the wait (correlation ids follow the call order).
    auto r = std::lower_bound(records_.begin(), records_.end(), w,
                              [](const EventUse& x, const EventUse& y) {
                                return std::tie(x.process, x.event, x.correlation) <
                                       std::tie(y.process, y.event, y.correlation);
                              });
    if (r == records_.begin()) continue;
    --r;
    if (r->process != w.process || r->event != w.event) continue;
    // The recording stream's last operation launched before the record.
    auto from = std::lower_bound(stream_rows_.begin(), stream_rows_.end(),
                                 StreamRow{r->process, r->stream, r->correlation, 0}, by_stream);
    if (from == stream_rows_.begin()) continue;
    --from;
    if (from->process != r->process || from->stream != r->stream) continue;
    // The waiting stream's first operation launched after the wait.
    auto to = std::upper_bound(stream_rows_.begin(), stream_rows_.end(),
                               StreamRow{w.process, w.stream, w.correlation, SIZE_MAX}, by_stream);
    if (to == stream_rows_.end() || to->process != w.process || to->stream != w.stream) continue;
    t_.stream_waits.push_back({w.process, a.device[from->row], a.device[to->row],
                               a.stream[from->row], a.stream[to->row], a.start[from->row],
                               a.start[to->row]});
  }
  std::vector<EventUse>().swap(waits_);
  std::vector<EventUse>().swap(records_);
  std::vector<StreamRow>().swap(stream_rows_);
}

void TraceBuilder::done() {
  tick_(rows_);
  rows_ = 0;
  resolve_waits();
}

// ---- Rows ------------------------------------------------------------------------------------

Process process_of(const tracedb::ProcessRow& row) {
  Process p;
  p.pid = row.pid;
  p.host = row.host;
  p.rank = row.rank;
  p.world_size = row.world_size;
  p.command_line = row.command_line;
  p.trace_clock = row.trace_clock;
  p.anchor_trace_ns = row.anchor_start_trace_ns;
  p.anchor_realtime_ns = row.anchor_start_realtime_ns;
  return p;
}

Device device_of(const tracedb::DeviceRow& row) {
  Device d;
  d.device = static_cast<int16_t>(row.device_id);
  d.name = row.name;
  d.sm_count = static_cast<int>(row.sm_count);
  d.max_threads_per_sm = static_cast<int>(row.max_threads_per_sm);
  d.max_blocks_per_sm = static_cast<int>(row.max_blocks_per_sm);
  d.max_registers_per_sm = static_cast<int>(row.max_registers_per_sm);
  d.max_shared_per_sm = row.max_shared_memory_per_sm;
  d.memory_bandwidth = row.memory_bandwidth_bytes_per_s.value_or(0);
  return d;
}

Collective collective_of(const tracedb::CollectiveRow& row) {
  Collective c;
  c.device = static_cast<int16_t>(row.device_id.value_or(-1));
  c.comm_id = row.comm_id.value_or("");
  c.seq = row.seq;
  c.op = row.op;
  c.bytes = row.bytes;
  c.nranks = static_cast<int>(row.nranks.value_or(0));
  c.rank = static_cast<int>(row.rank.value_or(-1));
  c.host_start = row.host_start_ns;
  return c;
}

Range range_of(const tracedb::NvtxRangeRow& row) {
  Range g;
  g.domain = row.domain;
  g.name = row.name;
  g.start = row.start_ns;
  g.end = row.end_ns;
  g.depth = static_cast<int>(row.depth.value_or(0));
  g.thread = row.thread_id;
  g.start_end = row.kind == "start_end";
  if (row.kind == "mark") {  // an instant: no duration, no nesting
    g.end = g.start;
    g.depth = 0;
  }
  if (row.color) g.color = *row.color & 0xffffffff;  // ARGB, whatever sign it was stored with
  return g;
}

// ---- TraceSink ------------------------------------------------------------------------------

int64_t TraceSink::insert(const tracedb::ProcessRow& row) {
  const int64_t id = row.id.value_or(++processes_);
  processes_ = std::max(processes_, id);
  b_.process(id, process_of(row));
  return id;
}

int64_t TraceSink::insert(const tracedb::DeviceRow& row) {
  b_.device(row.process_id, device_of(row));
  return 0;
}

void TraceSink::rows_ahead(int64_t gpu_rows, int64_t collectives) {
  // (A hint from the file: a hostile one asks for no more than a load would hold.)
  constexpr int64_t kMost = int64_t{1} << 28;
  b_.reserve_rows(static_cast<size_t>(std::clamp<int64_t>(gpu_rows, 0, kMost)));
  b_.reserve_collectives(static_cast<size_t>(std::clamp<int64_t>(collectives, 0, kMost)));
}

int64_t TraceSink::insert(const tracedb::CollectiveRow& row) {
  b_.collective(row.process_id, collective_of(row), row.external_id);
  return ++collectives_;
}

int64_t TraceSink::insert(const tracedb::ExternalCorrelationRow& row) {
  if (row.external_kind == "custom0") {
    b_.external_correlation(row.process_id, row.correlation_id, row.external_id);
  }
  return 0;
}

namespace {
// A product of launch dimensions as SQLite computes it for the loader's query, saturated
// instead of overflowing (SQLite turns an overflowing product into a real, read back clamped).
int64_t product(int64_t a, int64_t b, int64_t c) {
  if (a == 0 || b == 0 || c == 0) return 0;  // SQLite's real times 0 reads back as 0 too
  int64_t ab = 0, abc = 0;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) {
    return ((a < 0) != (b < 0)) != (c < 0) ? INT64_MIN : INT64_MAX;
  }
  return abc;
}
int64_t sum(int64_t a, int64_t b) {
  int64_t s = 0;
  if (__builtin_add_overflow(a, b, &s)) return a < 0 ? INT64_MIN : INT64_MAX;
  return s;
}
}  // namespace

int64_t TraceSink::insert(const tracedb::KernelRow& row) {
  const int64_t id = ++kernels_;
  const size_t i =
      b_.kernel(id, row.process_id, row.device_id, row.stream_id.value_or(-1), row.start_ns,
                row.end_ns, static_cast<int32_t>(row.name_id), row.correlation_id.value_or(-1));
  if (i != SIZE_MAX) {
    b_.kernel_shape(
        i,
        clamp_shape(product(row.grid_x, row.grid_y, row.grid_z),
                    product(row.block_x, row.block_y, row.block_z), row.registers_per_thread,
                    sum(row.static_shared_bytes, row.dynamic_shared_bytes)),
        row.submitted_ns.value_or(-1));
  }
  return id;
}

int64_t TraceSink::insert(const tracedb::MemcpyRow& row) {
  const int64_t id = ++memcpys_;
  b_.memcpy(id, row.process_id, row.device_id, row.stream_id.value_or(-1), row.start_ns, row.end_ns,
            row.copy_kind, row.bytes, row.channel_id.value_or(-1), row.correlation_id.value_or(-1));
  return id;
}

int64_t TraceSink::insert(const tracedb::MemsetRow& row) {
  const int64_t id = ++memsets_;
  b_.memset(id, row.process_id, row.device_id, row.stream_id.value_or(-1), row.start_ns, row.end_ns,
            row.bytes, row.correlation_id.value_or(-1));
  return id;
}

int64_t TraceSink::insert(const tracedb::ApiCallRow& row) {
  const int64_t id = ++api_calls_;
  b_.api_call(id, row.process_id, row.correlation_id, row.start_ns, row.end_ns,
              static_cast<int32_t>(row.name_id), fold_thread(row.thread_id));
  return id;
}

int64_t TraceSink::insert(const tracedb::SyncRow& row) {
  const int64_t id = ++syncs_;
  if (row.type == "stream_wait_event" && row.stream_id && row.correlation_id && row.cuda_event_id) {
    b_.stream_wait(row.process_id, *row.stream_id, *row.correlation_id, *row.cuda_event_id);
  }
  return id;
}

int64_t TraceSink::insert(const tracedb::CudaEventRow& row) {
  const int64_t id = ++events_;
  b_.cuda_event(row.process_id, row.stream_id, row.correlation_id, row.cuda_event_id);
  return id;
}

int64_t TraceSink::insert(const tracedb::NvtxRangeRow& row) {
  const int64_t id = ++ranges_;
  if (row.end_ns < row.start_ns) return id;  // as the loader's query
  b_.range(row.process_id, range_of(row));
  return id;
}

void check_time_span(const Trace& t, const std::string& source) {
  struct Span {
    int64_t first = INT64_MAX, last = INT64_MIN;
    int64_t busy = 0;  // sum of activity durations, capped just above the limit
  };
  std::vector<Span> spans(t.processes.size());
  auto widen = [](Span& s, int64_t start, int64_t end) {
    s.first = std::min(s.first, start);
    s.last = std::max(s.last, end);
  };
  const Activities& a = t.activities;
  for (size_t i = 0; i < a.size(); ++i) {
    Span& s = spans[static_cast<size_t>(a.process[i])];
    widen(s, a.start[i], a.end[i]);
    // Each duration is at most kAmountLimit: the sum stays below 2^51 before it is capped.
    s.busy = std::min(s.busy + (a.end[i] - a.start[i]), kAmountLimit + 1);
    // Launch calls are the rank's times too (a queue's span runs from a call to a GPU end:
    // fuzz/regressions/kineto/queue-span-out-of-range).
    if (a.has_calls() && a.call_end[i] != kNoCall) widen(s, a.call_start[i], a.call_end[i]);
  }
  for (const HostSync& h : t.host_syncs) {
    if (h.process >= 0 && static_cast<size_t>(h.process) < spans.size())
      widen(spans[static_cast<size_t>(h.process)], h.start, h.end);
  }
  for (const Range& g : t.ranges) {
    if (g.end >= g.start) widen(spans[static_cast<size_t>(g.process)], g.start, g.end);
  }
  for (size_t p = 0; p < spans.size(); ++p) {
    const Span& s = spans[p];
    if (s.first > s.last) continue;
    const std::string who = source + ": " + t.processes[p].label();
    if (s.last - s.first > kAmountLimit) {
      throw std::invalid_argument(who + " has times from " + std::to_string(s.first) + " to " +
                                  std::to_string(s.last) +
                                  " ns, more than 2^50 ns (13 days) apart: they are not of one "
                                  "recording (mixed clocks or damaged times)");
    }
    if (s.busy > kAmountLimit) {
      throw std::invalid_argument(
          who + ": its GPU activities add up to more than 2^50 ns (13 days): damaged times");
    }
  }
}

void finish_trace(Trace& t, const Rules& rules) {
  t.activities.sort();  // already sorted: one check
  classify(t, rules);
  std::sort(t.ranges.begin(), t.ranges.end(), [](const Range& a, const Range& b) {
    if (a.process != b.process) return a.process < b.process;
    return a.start < b.start;
  });
}

}  // namespace c3::analyzer
