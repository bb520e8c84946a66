#include "c3/analyzer/trace.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

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
template <class V>
void permute(V& v, const std::vector<uint32_t>& order) {
  V out;
  out.reserve(v.size());
  for (uint32_t i : order) out.push_back(v[i]);
  v.swap(out);
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
  // Sort compact keys (contiguous, no indirection); the row index breaks ties, so the order is
  // stable.
  struct Key {
    int64_t start, end;
    uint32_t group;  // process << 16 | device, both biased to unsigned
    uint32_t row;
  };
  std::vector<Key> keys(n);
  for (size_t i = 0; i < n; ++i) {
    const auto p = static_cast<uint32_t>(static_cast<uint16_t>(process[i] ^ INT16_MIN));
    const auto d = static_cast<uint32_t>(static_cast<uint16_t>(device[i] ^ INT16_MIN));
    keys[i] = {start[i], end[i], (p << 16) | d, static_cast<uint32_t>(i)};
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.group != b.group) return a.group < b.group;
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end < b.end;
    return a.row < b.row;
  });
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = keys[i].row;
  keys = {};
  permute(start, order);
  permute(end, order);
  permute(name, order);
  permute(stream, order);
  permute(device, order);
  permute(process, order);
  permute(kind, order);
  permute(cls, order);
  permute(bytes, order);
  permute(shape, order);
  permute(collective, order);
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
