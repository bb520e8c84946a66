#include "c3/analyzer/open/cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "bench_load.h"
#include "build.h"

namespace fs = std::filesystem;

namespace c3::analyzer {

namespace {

constexpr char kMagic[8] = {'C', '3', 'S', 'C', 'A', 'C', 'H', 'E'};
// Bump whenever Trace, the loader or this format changes meaning.
// 2: c3bench busbw, process versions; 3: NVTX range kind and colour. Format 2 still reads (its
// ranges as push/pop without a colour); a cache's key names its format, so a user's cache of
// format 2 is rebuilt, and what reads one is the fuzzers' regressions, which stay meaningful.
// 4: c3bench results' typed configuration (BenchConfig); older formats get it from the label.
// 5: the loader keeps NVTX marks (ranges of no duration); the layout is format 4's, so a format 4
// snapshot still reads (without marks), and a user's cache of format 4 is rebuilt.
// 6: the activities' launch calls (Activities::call_start/call_end); older formats read without.
// 7: streams' waits on other streams (Trace::stream_waits); older formats read without.
// 8: each launch call's and synchronization's thread (Activities::call_thread, HostSync::thread);
// older formats read as one thread per process.
constexpr int64_t kFormat = 8;
constexpr int64_t kOldestFormat = 2;
constexpr int64_t kEndMarker = 0x3e3e454e44433343;  // "C3CDNE>>"

// Buffered writer: fields go to a 4 MiB buffer, flushed in large writes.
class Out {
 public:
  explicit Out(std::FILE* f) : f_(f) { buf_.reserve(kChunk); }
  int64_t format() const { return kFormat; }
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
  // The field visitor's side (visit() below names each field once for writing and reading).
  template <class T>
  void field(const T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      str(v);
    } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
      opt(v);
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
      optd(v);
    } else if constexpr (std::is_floating_point_v<T>) {
      f64(v);
    } else {
      i64(static_cast<int64_t>(v));
    }
  }
  template <class T, class F>
  void list(const std::vector<T>& v, F&& each, size_t /*min_bytes*/) {
    i64(static_cast<int64_t>(v.size()));
    for (const T& x : v) each(x);
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
  int64_t format() const { return format_; }
  void set_format(int64_t f) { format_ = f; }
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
  template <class T>
  void field(T& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      v = str();
    } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
      v = opt();
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
      v = optd();
    } else if constexpr (std::is_same_v<T, bool>) {
      v = i64() != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      v = f64();
    } else {
      v = static_cast<T>(i64());
    }
  }
  // `min_bytes`: the least an element takes in the file (bounds the count a damaged file claims).
  template <class T, class F>
  void list(std::vector<T>& v, F&& each, size_t min_bytes) {
    v.resize(count(min_bytes));
    for (T& x : v) each(x);
  }

 private:
  const char* p_;
  size_t left_;
  int64_t format_ = kFormat;
};

// Fields in order, each as its type is written or read (Out::field, In::field).
template <class IO, class... T>
void fields(IO& io, T&... v) {
  (io.field(v), ...);
}

// Every field of a Trace, in file order, for writing (Out, const Trace) and reading (In, Trace).
template <class IO, class T>
void visit(IO& io, T& t) {
  io.list(
      t.processes,
      [&](auto& p) {
        fields(io, p.source, p.db_id, p.pid, p.host, p.rank, p.world_size, p.command_line,
               p.trace_clock, p.anchor_trace_ns, p.anchor_realtime_ns);
        io.list(
            p.versions, [&](auto& v) { fields(io, v.first, v.second); }, 16);
      },
      64);
  io.list(
      t.devices,
      [&](auto& d) {
        fields(io, d.process, d.device, d.name, d.sm_count, d.max_threads_per_sm,
               d.max_blocks_per_sm, d.max_registers_per_sm, d.max_shared_per_sm,
               d.memory_bandwidth);
      },
      64);
  io.list(
      t.names, [&](auto& n) { io.field(n); }, 8);
  io.vec(t.shapes);
  auto& a = t.activities;
  io.vec(a.start);
  io.vec(a.end);
  io.vec(a.name);
  io.vec(a.stream);
  io.vec(a.device);
  io.vec(a.process);
  io.vec(a.kind);
  io.vec(a.cls);
  io.vec(a.bytes);
  io.vec(a.shape);
  io.vec(a.collective);
  if (io.format() >= 6) {
    io.vec(a.call_start);
    io.vec(a.call_end);
    io.vec(a.call_name);
    io.list(
        t.host_syncs,
        [&](auto& s) {
          fields(io, s.process, s.start, s.end);
          if (io.format() >= 8) fields(io, s.thread);
        },
        18);
  }
  if (io.format() >= 8) {
    io.vec(a.call_thread);
  } else if constexpr (!std::is_const_v<T>) {
    if (a.has_calls()) a.call_thread.assign(a.call_end.size(), 0);  // one thread per process
  }
  if (io.format() >= 7) {
    io.list(
        t.stream_waits,
        [&](auto& w) {
          fields(io, w.process, w.from_device, w.to_device, w.from_stream, w.to_stream,
                 w.from_start, w.to_start);
        },
        30);
  }
  io.list(
      t.collectives,
      [&](auto& c) {
        fields(io, c.process, c.device, c.comm_id, c.seq, c.op, c.bytes, c.nranks, c.rank,
               c.host_start, c.gpu_start, c.gpu_end);
      },
      88);
  io.list(
      t.ranges,
      [&](auto& g) {
        fields(io, g.process, g.thread, g.domain, g.name, g.start, g.end, g.depth);
        if (io.format() >= 3) fields(io, g.start_end, g.color);
      },
      io.format() >= 3 ? 72 : 56);
  io.vec(t.launch_delays);
  io.list(
      t.bench,
      [&](auto& b) {
        fields(io, b.process, b.backend, b.simulated, b.label, b.scenario);
        if (io.format() >= 4) {
          auto& c = b.config;
          fields(io, c.known, c.compute, c.compute_kind, c.compute_dtype, c.comm, c.comm_kind,
                 c.comm_dtype, c.gemm_m, c.gemm_n, c.gemm_k, c.compute_bytes, c.compute_target_ns,
                 c.comm_bytes, c.comm_peer, c.priority, c.order, c.nchannels, c.min_ctas,
                 c.max_ctas, c.sm_partition_pct, c.chunks, c.pipelined);
        } else if constexpr (!std::is_const_v<std::remove_reference_t<decltype(b)>>) {
          b.config = bench_config_from_label(b.label);
        }
        fields(io, b.t_comp, b.t_comm, b.t_c3, b.compute_slowdown, b.comm_slowdown, b.ideal_speedup,
               b.realized_speedup, b.fraction_of_ideal, b.realized_over_ideal,
               b.decomposition_loss_comp, b.decomposition_loss_comm, b.schedule_speedup, b.busbw);
      },
      io.format() >= 4 ? 224 : 64);
  fields(io, t.skipped, t.first_skipped);
}

Trace read_trace(In& in) {
  Trace t;
  visit(in, t);
  const Activities& a = t.activities;
  const size_t n = a.start.size();
  for (const size_t m :
       {a.end.size(), a.name.size(), a.stream.size(), a.device.size(), a.process.size(),
        a.kind.size(), a.cls.size(), a.bytes.size(), a.shape.size(), a.collective.size()}) {
    if (m != n) throw Damaged{};
  }
  // Launch calls: none, or one (possibly kNoCall) per row, each within the limits.
  if (a.call_start.size() != a.call_end.size() || a.call_name.size() != a.call_end.size() ||
      a.call_thread.size() != a.call_end.size() || (a.has_calls() && a.call_end.size() != n)) {
    throw Damaged{};
  }
  for (const HostSync& s : t.host_syncs) {
    if (s.process < 0 || s.process >= static_cast<int16_t>(t.processes.size()) || s.end < s.start ||
        !in_time_limit(s.start, s.end) || !in_duration_limit(s.start, s.end)) {
      throw Damaged{};
    }
  }
  for (const StreamWait& w : t.stream_waits) {
    if (w.process < 0 || w.process >= static_cast<int16_t>(t.processes.size()) ||
        !in_time_limit(w.from_start, w.to_start)) {
      throw Damaged{};
    }
  }
  const auto names_n = static_cast<int64_t>(t.names.size());
  for (size_t i = 0; i < a.call_end.size(); ++i) {
    const int64_t cs = a.call_start[i], ce = a.call_end[i];
    if (a.call_name[i] < -1 || a.call_name[i] >= names_n) throw Damaged{};
    if (cs == kNoCall && ce == kNoCall) continue;
    if (ce < cs || !in_time_limit(cs, ce) || !in_duration_limit(cs, ce)) throw Damaged{};
  }
  // Indices that point into other tables must be in range: a damaged snapshot never reaches
  // the metrics.
  const auto np = static_cast<int64_t>(t.processes.size());
  const auto nn = static_cast<int64_t>(t.names.size());
  const auto nc = static_cast<int64_t>(t.collectives.size());
  const auto ns = static_cast<int64_t>(t.shapes.size());
  for (size_t i = 0; i < n; ++i) {
    // Issue 12: a negative name index passed (only the upper bounds were checked); every index
    // has both bounds, and times their order.
    if (a.process[i] < 0 || a.process[i] >= np || a.name[i] < 0 || a.name[i] >= nn ||
        a.collective[i] < -1 || a.collective[i] >= nc || a.shape[i] < -1 ||
        static_cast<uint8_t>(a.kind[i]) > 2 || static_cast<uint8_t>(a.cls[i]) >= kClasses ||
        (a.kind[i] == Kind::kernel && a.shape[i] >= ns) || a.end[i] < a.start[i] ||
        !in_time_limit(a.start[i], a.end[i]) || !in_duration_limit(a.start[i], a.end[i])) {
      throw Damaged{};
    }
  }
  // The loader's row order, which every analysis relies on (a walk of the critical path that met
  // a row starting before the one before it on its stream went forward in time and counted more
  // than its chain's length: fuzz/regressions/snapshot/activities-out-of-order).
  if (!a.sorted()) throw Damaged{};
  for (const Collective& c : t.collectives) {
    Collective copy = c;
    if (c.process < 0 || c.process >= np || make_possible(copy)) throw Damaged{};
  }
  for (const Process& p : t.processes) {
    Process copy = p;
    if (make_possible(copy)) throw Damaged{};
  }
  for (const Range& g : t.ranges) {
    if (g.process < 0 || g.process >= np || !in_time_limit(g.start, g.end) ||
        (g.end > g.start && !in_duration_limit(g.start, g.end)) || g.color < -1 ||
        g.color > 0xffffffff) {
      throw Damaged{};
    }
  }
  for (const Device& d : t.devices) {
    Device copy = d;
    if (d.process < 0 || d.process >= np || make_possible(copy)) throw Damaged{};
  }
  for (const LaunchDelay& l : t.launch_delays) {
    // A start minus a submission at or before it, both within the time limit (the loader's).
    if (l.process < 0 || l.process >= np || l.delay_ns < 0 || l.delay_ns > 2 * kStampLimit)
      throw Damaged{};
  }
  for (const BenchResult& b : t.bench) {
    BenchResult copy = b;
    if (b.process < 0 || b.process >= np || make_possible(copy)) throw Damaged{};
  }
  if (t.skipped < 0 || t.skipped > kAmountLimit) throw Damaged{};
  // What the loader refuses (a process's times not of one recording) is damage here: the
  // snapshot was written from a trace that loaded (fuzz/regressions/snapshot/).
  try {
    check_time_span(t, "snapshot");
  } catch (const std::invalid_argument&) {
    throw Damaged{};
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
  if (!t.pending_shapes.empty()) return false;  // a deferred load is not complete yet
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
    visit(o, t);
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
    const bool ours = std::memcmp(magic, kMagic, sizeof magic) == 0;
    const int64_t format = ours ? in.i64() : 0;
    in.set_format(format);
    if (ours && format >= kOldestFormat && format <= kFormat && in.str() == key) {
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
