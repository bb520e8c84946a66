#include "c3/analyzer/cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace fs = std::filesystem;

namespace c3::analyzer {

namespace {

constexpr char kMagic[8] = {'C', '3', 'S', 'C', 'A', 'C', 'H', 'E'};
// Bump whenever Trace, the loader or this format changes meaning.
constexpr int64_t kFormat = 1;
constexpr int64_t kEndMarker = 0x3e3e454e44433343;  // "C3CDNE>>"

// Buffered writer: fields go to a 4 MiB buffer, flushed in large writes.
class Out {
 public:
  explicit Out(std::FILE* f) : f_(f) { buf_.reserve(kChunk); }
  ~Out() { flush(); }
  Out(const Out&) = delete;
  Out& operator=(const Out&) = delete;
  bool ok() const { return ok_; }
  void flush() {
    if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_) != buf_.size()) ok_ = false;
    buf_.clear();
  }
  void raw(const void* p, size_t n) {
    if (n == 0) return;
    if (n >= kChunk) {
      flush();
      if (std::fwrite(p, 1, n, f_) != n) ok_ = false;
      return;
    }
    if (buf_.size() + n > kChunk) flush();
    const auto* c = static_cast<const char*>(p);
    buf_.insert(buf_.end(), c, c + n);
  }
  void i64(int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    i64(static_cast<int64_t>(s.size()));
    raw(s.data(), s.size());
  }
  void opt(const std::optional<int64_t>& v) {
    i64(v ? 1 : 0);
    i64(v.value_or(0));
  }
  void optd(const std::optional<double>& v) {
    i64(v ? 1 : 0);
    f64(v.value_or(0));
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    i64(static_cast<int64_t>(v.size()));
    raw(v.data(), v.size() * sizeof(T));
  }

 private:
  static constexpr size_t kChunk = size_t{4} << 20;
  std::FILE* f_;
  std::vector<char> buf_;
  bool ok_ = true;
};

struct Damaged {};

// Reader over the whole file mapped into memory.
class In {
 public:
  In(const char* data, size_t size) : p_(data), left_(size) {}
  void raw(void* out, size_t n) {
    if (n == 0) return;  // (an empty vector's data() may be null)
    if (n > left_) throw Damaged{};
    std::memcpy(out, p_, n);
    p_ += n;
    left_ -= n;
  }
  int64_t i64() {
    int64_t v = 0;
    raw(&v, sizeof v);
    return v;
  }
  double f64() {
    double v = 0;
    raw(&v, sizeof v);
    return v;
  }
  size_t count(size_t elem) {
    const int64_t n = i64();
    if (n < 0 || static_cast<uint64_t>(n) > left_ / std::max<size_t>(elem, 1)) throw Damaged{};
    return static_cast<size_t>(n);
  }
  std::string str() {
    const size_t n = count(1);
    std::string s(p_, n);
    p_ += n;
    left_ -= n;
    return s;
  }
  std::optional<int64_t> opt() {
    const int64_t has = i64(), v = i64();
    return has != 0 ? std::optional<int64_t>(v) : std::nullopt;
  }
  std::optional<double> optd() {
    const int64_t has = i64();
    const double v = f64();
    return has != 0 ? std::optional<double>(v) : std::nullopt;
  }
  template <class T>
  void vec(std::vector<T>& v) {
    v.resize(count(sizeof(T)));
    raw(v.data(), v.size() * sizeof(T));
  }

 private:
  const char* p_;
  size_t left_;
};

void write_trace(Out& o, const Trace& t) {
  o.i64(static_cast<int64_t>(t.processes.size()));
  for (const Process& p : t.processes) {
    o.str(p.source);
    o.i64(p.db_id);
    o.i64(p.pid);
    o.str(p.host);
    o.opt(p.rank);
    o.opt(p.world_size);
    o.str(p.command_line);
    o.str(p.trace_clock);
    o.i64(p.anchor_trace_ns);
    o.i64(p.anchor_realtime_ns);
  }
  o.i64(static_cast<int64_t>(t.devices.size()));
  for (const Device& d : t.devices) {
    o.i64(d.process);
    o.i64(d.device);
    o.str(d.name);
    o.i64(d.sm_count);
    o.i64(d.max_threads_per_sm);
    o.i64(d.max_blocks_per_sm);
    o.i64(d.max_registers_per_sm);
    o.i64(d.max_shared_per_sm);
    o.i64(d.memory_bandwidth);
  }
  o.i64(static_cast<int64_t>(t.names.size()));
  for (const std::string& n : t.names) o.str(n);
  o.vec(t.shapes);
  const Activities& a = t.activities;
  o.vec(a.start);
  o.vec(a.end);
  o.vec(a.name);
  o.vec(a.stream);
  o.vec(a.device);
  o.vec(a.process);
  o.vec(a.kind);
  o.vec(a.cls);
  o.vec(a.bytes);
  o.vec(a.shape);
  o.vec(a.collective);
  o.i64(static_cast<int64_t>(t.collectives.size()));
  for (const Collective& c : t.collectives) {
    o.i64(c.process);
    o.i64(c.device);
    o.str(c.comm_id);
    o.i64(c.seq);
    o.str(c.op);
    o.i64(c.bytes);
    o.i64(c.nranks);
    o.i64(c.rank);
    o.i64(c.host_start);
    o.i64(c.gpu_start);
    o.i64(c.gpu_end);
  }
  o.i64(static_cast<int64_t>(t.ranges.size()));
  for (const Range& g : t.ranges) {
    o.i64(g.process);
    o.i64(g.thread);
    o.str(g.domain);
    o.str(g.name);
    o.i64(g.start);
    o.i64(g.end);
    o.i64(g.depth);
  }
  o.vec(t.launch_delays);
  o.i64(static_cast<int64_t>(t.bench.size()));
  for (const BenchResult& b : t.bench) {
    o.i64(b.process);
    o.str(b.backend);
    o.i64(b.simulated ? 1 : 0);
    o.str(b.label);
    o.str(b.scenario);
    o.f64(b.t_comp);
    o.f64(b.t_comm);
    o.f64(b.t_c3);
    for (const auto* v :
         {&b.compute_slowdown, &b.comm_slowdown, &b.ideal_speedup, &b.realized_speedup,
          &b.fraction_of_ideal, &b.realized_over_ideal, &b.decomposition_loss_comp,
          &b.decomposition_loss_comm, &b.schedule_speedup}) {
      o.optd(*v);
    }
  }
  o.i64(t.skipped);
  o.str(t.first_skipped);
}

Trace read_trace(In& in) {
  Trace t;
  t.processes.resize(in.count(64));
  for (Process& p : t.processes) {
    p.source = in.str();
    p.db_id = in.i64();
    p.pid = in.i64();
    p.host = in.str();
    p.rank = in.opt();
    p.world_size = in.opt();
    p.command_line = in.str();
    p.trace_clock = in.str();
    p.anchor_trace_ns = in.i64();
    p.anchor_realtime_ns = in.i64();
  }
  t.devices.resize(in.count(64));
  for (Device& d : t.devices) {
    d.process = static_cast<int16_t>(in.i64());
    d.device = static_cast<int16_t>(in.i64());
    d.name = in.str();
    d.sm_count = static_cast<int>(in.i64());
    d.max_threads_per_sm = static_cast<int>(in.i64());
    d.max_blocks_per_sm = static_cast<int>(in.i64());
    d.max_registers_per_sm = static_cast<int>(in.i64());
    d.max_shared_per_sm = in.i64();
    d.memory_bandwidth = in.i64();
  }
  t.names.resize(in.count(8));
  for (std::string& n : t.names) n = in.str();
  in.vec(t.shapes);
  Activities& a = t.activities;
  in.vec(a.start);
  in.vec(a.end);
  in.vec(a.name);
  in.vec(a.stream);
  in.vec(a.device);
  in.vec(a.process);
  in.vec(a.kind);
  in.vec(a.cls);
  in.vec(a.bytes);
  in.vec(a.shape);
  in.vec(a.collective);
  const size_t n = a.start.size();
  for (const size_t m :
       {a.end.size(), a.name.size(), a.stream.size(), a.device.size(), a.process.size(),
        a.kind.size(), a.cls.size(), a.bytes.size(), a.shape.size(), a.collective.size()}) {
    if (m != n) throw Damaged{};
  }
  t.collectives.resize(in.count(88));
  for (Collective& c : t.collectives) {
    c.process = static_cast<int16_t>(in.i64());
    c.device = static_cast<int16_t>(in.i64());
    c.comm_id = in.str();
    c.seq = in.i64();
    c.op = in.str();
    c.bytes = in.i64();
    c.nranks = static_cast<int>(in.i64());
    c.rank = static_cast<int>(in.i64());
    c.host_start = in.i64();
    c.gpu_start = in.i64();
    c.gpu_end = in.i64();
  }
  t.ranges.resize(in.count(56));
  for (Range& g : t.ranges) {
    g.process = static_cast<int16_t>(in.i64());
    g.thread = in.i64();
    g.domain = in.str();
    g.name = in.str();
    g.start = in.i64();
    g.end = in.i64();
    g.depth = static_cast<int>(in.i64());
  }
  in.vec(t.launch_delays);
  t.bench.resize(in.count(64));
  for (BenchResult& b : t.bench) {
    b.process = static_cast<int16_t>(in.i64());
    b.backend = in.str();
    b.simulated = in.i64() != 0;
    b.label = in.str();
    b.scenario = in.str();
    b.t_comp = in.f64();
    b.t_comm = in.f64();
    b.t_c3 = in.f64();
    for (auto* v : {&b.compute_slowdown, &b.comm_slowdown, &b.ideal_speedup, &b.realized_speedup,
                    &b.fraction_of_ideal, &b.realized_over_ideal, &b.decomposition_loss_comp,
                    &b.decomposition_loss_comm, &b.schedule_speedup}) {
      *v = in.optd();
    }
  }
  t.skipped = in.i64();
  t.first_skipped = in.str();
  // Indices that point into other tables must be in range: a damaged snapshot never reaches
  // the metrics.
  const auto np = static_cast<int64_t>(t.processes.size());
  const auto nn = static_cast<int64_t>(t.names.size());
  const auto nc = static_cast<int64_t>(t.collectives.size());
  const auto ns = static_cast<int64_t>(t.shapes.size());
  for (size_t i = 0; i < n; ++i) {
    if (a.process[i] < 0 || a.process[i] >= np || a.name[i] >= nn || a.collective[i] >= nc ||
        static_cast<uint8_t>(a.kind[i]) > 2 || static_cast<uint8_t>(a.cls[i]) >= kClasses ||
        (a.kind[i] == Kind::kernel && a.shape[i] >= ns)) {
      throw Damaged{};
    }
  }
  for (const Collective& c : t.collectives) {
    if (c.process < 0 || c.process >= np) throw Damaged{};
  }
  for (const Range& g : t.ranges) {
    if (g.process < 0 || g.process >= np) throw Damaged{};
  }
  for (const Device& d : t.devices) {
    if (d.process < 0 || d.process >= np) throw Damaged{};
  }
  for (const LaunchDelay& l : t.launch_delays) {
    if (l.process < 0 || l.process >= np) throw Damaged{};
  }
  for (const BenchResult& b : t.bench) {
    if (b.process < 0 || b.process >= np) throw Damaged{};
  }
  return t;
}

}  // namespace

std::string cache_key(const std::vector<std::string>& files, const std::string& rules_tag) {
  std::string key = "format " + std::to_string(kFormat) + "; rules " + rules_tag;
  for (const std::string& f : files) {
    std::error_code ec;
    const fs::path p = fs::canonical(f, ec);
    if (ec) throw std::invalid_argument("'" + f + "' cannot be examined: " + ec.message());
    const auto size = fs::file_size(p, ec);
    if (ec) throw std::invalid_argument("'" + f + "' cannot be examined: " + ec.message());
    const auto mtime = fs::last_write_time(p, ec).time_since_epoch().count();
    key += "; " + p.string() + " " + std::to_string(size) + " " + std::to_string(mtime);
  }
  return key;
}

std::string cache_path(const std::string& dir, const std::string& key) {
  char name[40];
  std::snprintf(name, sizeof name, "%016zx.c3cache", std::hash<std::string>()(key));
  return (fs::path(dir) / name).string();
}

bool save_cache(const Trace& t, const std::string& key, const std::string& path, int keep) {
  std::error_code ec;
  const fs::path target(path);
  fs::create_directories(target.parent_path(), ec);
  const fs::path tmp =
      target.string() + ".tmp" + std::to_string(std::hash<std::string>()(key) & 0xffff);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = false;
  {
    Out o(f);
    o.raw(kMagic, sizeof kMagic);
    o.i64(kFormat);
    o.str(key);
    write_trace(o, t);
    o.i64(kEndMarker);
    o.flush();
    ok = o.ok();
  }
  ok = std::fclose(f) == 0 && ok;
  if (!ok) {
    fs::remove(tmp, ec);
    return false;
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  // Keep the `keep` most recently written or used snapshots.
  std::vector<std::pair<fs::file_time_type, fs::path>> all;
  for (const auto& e : fs::directory_iterator(target.parent_path(), ec)) {
    if (e.path().extension() == ".c3cache")
      all.emplace_back(fs::last_write_time(e.path(), ec), e.path());
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = static_cast<size_t>(std::max(keep, 1)); i < all.size(); ++i)
    fs::remove(all[i].second, ec);
  return true;
}

std::optional<Trace> load_cache(const std::string& path, const std::string& key) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) {
    ::close(fd);
    return std::nullopt;
  }
  const auto size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return std::nullopt;
  ::madvise(map, size, MADV_SEQUENTIAL);
  std::optional<Trace> out;
  try {
    In in(static_cast<const char*>(map), size);
    char magic[sizeof kMagic];
    in.raw(magic, sizeof magic);
    if (std::memcmp(magic, kMagic, sizeof magic) == 0 && in.i64() == kFormat && in.str() == key) {
      Trace t = read_trace(in);
      if (in.i64() == kEndMarker) out = std::move(t);
    }
  } catch (const Damaged&) {
    out.reset();
  } catch (const std::bad_alloc&) {
    out.reset();
  }
  ::munmap(map, size);
  if (out) {
    // Mark it used, for save_cache's eviction.
    std::error_code ec;
    fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
  }
  return out;
}

}  // namespace c3::analyzer
