#include "c3/analyzer/trace.h"

#include <algorithm>
#include <cstdint>
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
  return start.size() - 1;
}

namespace {

// Gathers v[order[i]] into `spare` (the previous column's buffer of the same type, so each type
// touches fresh memory once), then swaps: `spare` leaves with v's old buffer for the next column.
template <class T>
void permute(std::vector<T>& v, const std::vector<uint32_t>& order, std::vector<T>& spare) {
  spare.resize(order.size());
  for (size_t i = 0; i < order.size(); ++i) spare[i] = v[order[i]];
  v.swap(spare);
}

struct SortKey {
  int64_t start, end;
  uint32_t group;  // process << 16 | device, both biased to unsigned
  uint32_t row;
};

bool key_less(const SortKey& a, const SortKey& b) {
  if (a.group != b.group) return a.group < b.group;
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end < b.end;
  return a.row < b.row;
}

// Sorts keys made in row order. The rows of one stream and one kind ran one after another, so in
// load order they are usually sorted already: those runs are then merged (log2(runs) linear
// passes); otherwise a plain sort. The row index breaks ties, so the order is the same either way
// (and stable).
void sort_keys(std::vector<SortKey>& keys, const std::vector<int32_t>& stream,
               const std::vector<Kind>& kind) {
  const size_t n = keys.size();
  std::vector<uint32_t> run(n);
  std::vector<size_t> run_size;
  std::vector<SortKey> last;
  {
    // (group, stream, kind) -> run, remembering the last lookup (rows come in long stretches).
    std::unordered_map<uint64_t, uint32_t> runs;
    uint64_t last_id = UINT64_MAX;
    uint32_t last_run = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t id = (static_cast<uint64_t>(keys[i].group) << 32) ^
                          (static_cast<uint64_t>(static_cast<uint32_t>(stream[i])) << 2) ^
                          static_cast<uint64_t>(kind[i]);
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
      if (run_size[last_run] > 0 && key_less(keys[i], prev)) {
        std::sort(keys.begin(), keys.end(), key_less);
        return;
      }
      prev = keys[i];
      run[i] = last_run;
      ++run_size[last_run];
    }
  }
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
          keys.begin() + static_cast<ptrdiff_t>(lo), key_less);
      next.push_back(hi);
    }
    keys.swap(other);
    bounds.swap(next);
  }
  keys.swap(other);
}

}  // namespace

void Activities::sort() {
  const size_t n = size();
  auto less = [&](size_t a, size_t b) {
    if (process[a] != process[b]) return process[a] < process[b];
    if (device[a] != device[b]) return device[a] < device[b];
    if (start[a] != start[b]) return start[a] < start[b];
    return end[a] < end[b];
  };
  // Loaded parts usually arrive sorted: one linear check.
  bool sorted = true;
  for (size_t i = 1; i < n && sorted; ++i) sorted = !less(i, i - 1);
  if (sorted) return;
  // Sort compact keys (contiguous, no indirection).
  std::vector<SortKey> keys(n);
  for (size_t i = 0; i < n; ++i) {
    const auto p = static_cast<uint32_t>(static_cast<uint16_t>(process[i] ^ INT16_MIN));
    const auto d = static_cast<uint32_t>(static_cast<uint16_t>(device[i] ^ INT16_MIN));
    keys[i] = {start[i], end[i], (p << 16) | d, static_cast<uint32_t>(i)};
  }
  sort_keys(keys, stream, kind);
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = keys[i].row;
  keys = {};
  std::vector<int64_t> spare64;
  std::vector<int32_t> spare32;
  std::vector<int16_t> spare16;
  std::vector<Kind> spare_kind;
  std::vector<Class> spare_class;
  permute(start, order, spare64);
  permute(end, order, spare64);
  permute(bytes, order, spare64);
  permute(name, order, spare32);
  permute(stream, order, spare32);
  permute(shape, order, spare32);
  permute(collective, order, spare32);
  permute(device, order, spare16);
  permute(process, order, spare16);
  permute(kind, order, spare_kind);
  permute(cls, order, spare_class);
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
