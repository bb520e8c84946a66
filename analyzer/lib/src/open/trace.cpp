#include "c3/analyzer/open/trace.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <unordered_map>

namespace c3::analyzer {

const char* class_name(Class c) {
  switch (c) {
    case Class::compute:
      return "compute";
    case Class::communication:
      return "communication";
    case Class::memory:
      return "memory";
    case Class::other:
      return "other";
  }
  return "?";
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kernel:
      return "kernel";
    case Kind::memcpy:
      return "memcpy";
    case Kind::memset:
      return "memset";
  }
  return "?";
}

void Activities::reserve(size_t n) {
  start.reserve(n);
  end.reserve(n);
  name.reserve(n);
  stream.reserve(n);
  device.reserve(n);
  process.reserve(n);
  kind.reserve(n);
  cls.reserve(n);
  bytes.reserve(n);
  shape.reserve(n);
  collective.reserve(n);
}

size_t Activities::push(int64_t s, int64_t e, int32_t name_id, int32_t stream_id, int16_t device_id,
                        int16_t process_idx, Kind k, int64_t nbytes) {
  start.push_back(s);
  end.push_back(e);
  name.push_back(name_id);
  stream.push_back(stream_id);
  device.push_back(device_id);
  process.push_back(process_idx);
  kind.push_back(k);
  cls.push_back(Class::compute);
  bytes.push_back(nbytes);
  shape.push_back(-1);
  collective.push_back(-1);
  if (has_calls()) {
    call_start.push_back(kNoCall);
    call_end.push_back(kNoCall);
    call_name.push_back(-1);
    call_thread.push_back(0);
  }
  return start.size() - 1;
}

std::string_view api_base_name(std::string_view name) {
  for (;;) {
    const size_t u = name.rfind('_');
    if (u == std::string_view::npos) break;
    const std::string_view tail = name.substr(u + 1);
    const bool version = tail.size() > 1 && tail[0] == 'v' &&
                         tail.find_first_not_of("0123456789", 1) == std::string_view::npos;
    if (!version && tail != "ptsz" && tail != "ptds") break;
    name = name.substr(0, u);
  }
  return name;
}

bool is_sync_call(std::string_view name) {
  name = api_base_name(name);
  for (const std::string_view s :
       {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
        "cuCtxSynchronize", "cuStreamSynchronize", "cuEventSynchronize"}) {
    if (name == s) return true;
  }
  return false;
}

void Activities::set_call(size_t i, int64_t entry, int64_t exit, int32_t name_id, int32_t thread) {
  if (!has_calls()) {
    call_start.assign(size(), kNoCall);
    call_end.assign(size(), kNoCall);
    call_name.assign(size(), -1);
    call_thread.assign(size(), 0);
  }
  call_start[i] = entry;
  call_end[i] = exit;
  call_name[i] = name_id;
  call_thread[i] = thread;
}

namespace {

// v[i] = old v[order[i]] for every i: a gather into `scratch`, then a swap (the buffer the swap
// frees is the next column's of the same type). `order` is mostly a merge of a few runs that were
// sorted already, so the reads are a few sequential streams; the in-place cycle walk this
// replaces read in cycle order, a cache miss per row past a few million rows, for every column
// (4M rows: 3.4 s of a 10 s load). The scratch column, 8 bytes per row at most, exists after the
// sort keys (16 bytes per row of the largest group, twice while sorting) are freed, so the peak
// is the keys', as before.
template <class T>
void permute(std::vector<T>& v, const std::vector<uint32_t>& order, std::vector<T>& scratch) {
  scratch.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) scratch[i] = v[order[i]];
  v.swap(scratch);
}

// One row of one (process, device) group: its start, and the row for the rest of the order
// (end, then the row itself, read through the columns on the rare equal starts). 16 bytes, so
// that sorting a group of n rows needs 2 x 16 n bytes of keys, not the columns' 46 n again.
struct SortKey {
  int64_t start;
  uint32_t row;
};

// Sorts keys made in row order (one group's rows). The rows of one stream and one kind ran one
// after another, so in load order they are usually sorted already: those runs are then merged
// (log2(runs) linear passes); otherwise a plain sort. The row index breaks ties, so the order is
// the same either way (and stable).
void sort_keys(std::vector<SortKey>& keys, const std::vector<int64_t>& end,
               const std::vector<int32_t>& stream, const std::vector<Kind>& kind) {
  auto less = [&end](const SortKey& a, const SortKey& b) {
    if (a.start != b.start) return a.start < b.start;
    const int64_t ea = end[a.row], eb = end[b.row];
    if (ea != eb) return ea < eb;
    return a.row < b.row;
  };
  const size_t n = keys.size();
  std::vector<uint32_t> run(n);
  std::vector<size_t> run_size;
  std::vector<SortKey> last;
  {
    // (stream, kind) -> run, remembering the last lookup (rows come in long stretches).
    std::unordered_map<uint64_t, uint32_t> runs;
    uint64_t last_id = UINT64_MAX;
    uint32_t last_run = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t row = keys[i].row;
      const uint64_t id = (static_cast<uint64_t>(static_cast<uint32_t>(stream[row])) << 2) ^
                          static_cast<uint64_t>(kind[row]);
      if (id != last_id) {
        auto [it, added] = runs.emplace(id, static_cast<uint32_t>(run_size.size()));
        if (added) {
          run_size.push_back(0);
          last.push_back(keys[i]);
        }
        last_id = id;
        last_run = it->second;
      }
      SortKey& prev = last[last_run];
      if (run_size[last_run] > 0 && less(keys[i], prev)) {
        std::sort(keys.begin(), keys.end(), less);
        return;
      }
      prev = keys[i];
      run[i] = last_run;
      ++run_size[last_run];
    }
  }
  if (run_size.size() <= 1) return;  // one run, already in order
  // Runs laid out one after another (stable counting sort), then merged pairwise.
  std::vector<size_t> bounds(run_size.size() + 1, 0);
  for (size_t r = 0; r < run_size.size(); ++r) bounds[r + 1] = bounds[r] + run_size[r];
  std::vector<SortKey> other(n);
  {
    std::vector<size_t> at(bounds.begin(), bounds.end() - 1);
    for (size_t i = 0; i < n; ++i) other[at[run[i]]++] = keys[i];
  }
  run = {};
  while (bounds.size() > 2) {
    std::vector<size_t> next{0};
    for (size_t r = 0; r + 1 < bounds.size(); r += 2) {
      const size_t lo = bounds[r], mid = bounds[r + 1];
      const size_t hi = r + 2 < bounds.size() ? bounds[r + 2] : mid;
      std::merge(
          other.begin() + static_cast<ptrdiff_t>(lo), other.begin() + static_cast<ptrdiff_t>(mid),
          other.begin() + static_cast<ptrdiff_t>(mid), other.begin() + static_cast<ptrdiff_t>(hi),
          keys.begin() + static_cast<ptrdiff_t>(lo), less);
      next.push_back(hi);
    }
    keys.swap(other);
    bounds.swap(next);
  }
  keys.swap(other);
}

}  // namespace

bool Activities::before(size_t a, size_t b) const {
  if (process[a] != process[b]) return process[a] < process[b];
  if (device[a] != device[b]) return device[a] < device[b];
  if (start[a] != start[b]) return start[a] < start[b];
  return end[a] < end[b];
}

bool Activities::sorted() const {
  for (size_t i = 1; i < size(); ++i) {
    if (before(i, i - 1)) return false;
  }
  return true;
}

std::vector<uint32_t> Activities::sort() {
  const size_t n = size();
  // Loaded parts usually arrive sorted: one linear check.
  if (sorted()) return {};
  // Rows grouped by (process, device), stably (a counting sort into `order`), then each group
  // sorted on its own: the temporary keys are those of the largest group, not of every row.
  auto group_of = [&](size_t i) {
    const auto p = static_cast<uint32_t>(static_cast<uint16_t>(process[i] ^ INT16_MIN));
    const auto d = static_cast<uint32_t>(static_cast<uint16_t>(device[i] ^ INT16_MIN));
    return (p << 16) | d;
  };
  std::map<uint32_t, size_t> group_size;
  {
    uint32_t last = 0;
    std::map<uint32_t, size_t>::iterator it = group_size.end();
    for (size_t i = 0; i < n; ++i) {
      const uint32_t g = group_of(i);
      if (it == group_size.end() || g != last) {
        it = group_size.try_emplace(g, 0).first;
        last = g;
      }
      ++it->second;
    }
  }
  std::map<uint32_t, size_t> at;
  size_t total = 0;
  for (const auto& [g, count] : group_size) {
    at[g] = total;
    total += count;
  }
  std::vector<uint32_t> order(n);
  {
    uint32_t last = 0;
    std::map<uint32_t, size_t>::iterator it = at.end();
    for (size_t i = 0; i < n; ++i) {
      const uint32_t g = group_of(i);
      if (it == at.end() || g != last) {
        it = at.find(g);
        last = g;
      }
      order[it->second++] = static_cast<uint32_t>(i);
    }
  }
  std::vector<SortKey> keys;
  size_t begin = 0;
  for (const auto& [g, count] : group_size) {
    keys.resize(count);
    for (size_t k = 0; k < count; ++k) {
      const uint32_t row = order[begin + k];
      keys[k] = {start[row], row};
    }
    sort_keys(keys, end, stream, kind);
    for (size_t k = 0; k < count; ++k) order[begin + k] = keys[k].row;
    begin += count;
  }
  keys = {};
  // One scratch column per type at a time (8 bytes per row at most, less than the keys were).
  {
    std::vector<int64_t> scratch;
    for (std::vector<int64_t>* c : {&start, &end, &bytes}) permute(*c, order, scratch);
    if (has_calls()) {
      for (std::vector<int64_t>* c : {&call_start, &call_end}) permute(*c, order, scratch);
    }
  }
  {
    std::vector<int32_t> scratch;
    for (std::vector<int32_t>* c : {&name, &stream, &shape, &collective})
      permute(*c, order, scratch);
    if (has_calls()) {
      for (std::vector<int32_t>* c : {&call_name, &call_thread}) permute(*c, order, scratch);
    }
  }
  {
    std::vector<int16_t> scratch;
    for (std::vector<int16_t>* c : {&device, &process}) permute(*c, order, scratch);
  }
  {
    std::vector<Kind> scratch;
    permute(kind, order, scratch);
  }
  {
    std::vector<Class> scratch;
    permute(cls, order, scratch);
  }
  return order;
}

std::string Process::label() const {
  if (rank) return "rank " + std::to_string(*rank);
  return "pid " + std::to_string(pid) + (host.empty() ? "" : "@" + host);
}

const KernelShape& Trace::shape_of(size_t i) const {
  static const KernelShape none;
  const int32_t s = activities.kind[i] == Kind::kernel ? activities.shape[i] : -1;
  return s >= 0 ? shapes[static_cast<size_t>(s)] : none;
}

int32_t Trace::add_shape(const KernelShape& s) {
  for (size_t i = shapes.size(); i-- > 0 && i + 64 >= shapes.size();) {
    if (shapes[i] == s) return static_cast<int32_t>(i);
  }
  shapes.push_back(s);
  return static_cast<int32_t>(shapes.size() - 1);
}

const Device* Trace::device(int16_t proc, int16_t dev) const {
  for (const auto& d : devices) {
    if (d.process == proc && d.device == dev) return &d;
  }
  return nullptr;
}

}  // namespace c3::analyzer
