// Trace database -> Chrome trace JSON for ui.perfetto.dev and chrome://tracing.
//
// Tracks: each traced process's threads (NVTX ranges, CUDA API calls, NCCL calls) under its
// pid; each GPU of each process as its own "process" (pid 1000000 + 1000 * process row + device)
// with one thread per stream (kernels, copies, sets). Flow arrows go from each launching API
// call to its GPU work (CUPTI correlation ids), and from each NCCL call to the first kernel it
// launched on its own GPU; every arrow ends at a slice's start on that slice's track.
// Timestamps are microseconds with nanosecond decimals.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "c3/importer/exporter.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"

namespace c3::importer {
namespace {

// Ids and durations from a trace's columns, in arithmetic that wraps or clamps: the export reads
// the file as it is (no loader bounds), and a hostile trace must not overflow int64.
int64_t wrap(uint64_t v) {
  return static_cast<int64_t>(v);
}
int64_t flow_id(int64_t process_row, int64_t correlation) {
  return wrap(static_cast<uint64_t>(process_row) * 1'000'000'000'000u +
              static_cast<uint64_t>(correlation));
}
int64_t duration(int64_t start, int64_t end) {
  int64_t d = 0;
  if (end <= start || __builtin_sub_overflow(end, start, &d)) return 0;
  return d;
}

// (process row, correlation or external id).
using Key = std::pair<int64_t, int64_t>;
struct KeyHash {
  size_t operator()(const Key& k) const noexcept {
    return std::hash<uint64_t>()(static_cast<uint64_t>(k.first) * 0x9E3779B97F4A7C15ULL ^
                                 static_cast<uint64_t>(k.second));
  }
};

// Where GPU work ran: its device and stream (the track of its slices), and its first start.
struct Place {
  int64_t device = 0, stream = 0, start = 0;
};
// A correlation is one API call, so its work runs on one stream; a damaged trace may spread one
// over any number of tracks. Keeping a few of them keeps the export linear (each external id's
// correlations are walked with their places), and any place kept is a real slice's start.
constexpr size_t kMaxPlacesPerCorrelation = 16;
// An NCCL call's work on one GPU (stream = -1) or one stream of it: (process row, external id,
// device, stream).
struct CallKey {
  int64_t process = 0, external = 0, device = 0, stream = 0;
  bool operator==(const CallKey&) const = default;
};
struct CallKeyHash {
  size_t operator()(const CallKey& k) const noexcept {
    uint64_t h = 0;
    for (int64_t v : {k.process, k.external, k.device, k.stream})
      h = (h ^ static_cast<uint64_t>(v)) * 0x9E3779B97F4A7C15ULL + (h >> 29);
    return std::hash<uint64_t>()(h);
  }
};

// The length of the valid UTF-8 sequence that starts at s[i] (a byte >= 0x80), 0 when none does
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
size_t utf8_length(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return n;
}

class Out {
 public:
  explicit Out(FILE* f) : f_(f) {}
  void raw(const char* s) { std::fputs(s, f_); }
  // A JSON string: quotes, backslashes and control characters escaped, valid UTF-8 copied,
  // and every byte that does not start a valid UTF-8 sequence written as U+FFFD (names in a
  // damaged trace: the export must stay valid JSON; found by the issue 12 probes).
  void str(const std::string& s) {
    std::fputc('"', f_);
    for (size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x80) {
        const size_t n = utf8_length(s, i);
        if (n == 0) {
          std::fputs("\\ufffd", f_);
          ++i;
        } else {
          std::fwrite(s.data() + i, 1, n, f_);
          i += n;
        }
        continue;
      }
      ++i;
      switch (c) {
        case '"':
          std::fputs("\\\"", f_);
          break;
        case '\\':
          std::fputs("\\\\", f_);
          break;
        case '\n':
          std::fputs("\\n", f_);
          break;
        case '\r':
          std::fputs("\\r", f_);
          break;
        case '\t':
          std::fputs("\\t", f_);
          break;
        default:
          if (c < 0x20) {
            std::fprintf(f_, "\\u%04x", c);
          } else {
            std::fputc(c, f_);
          }
      }
    }
    std::fputc('"', f_);
  }
  void ts(int64_t ns) {
    const bool neg = ns < 0;
    // In unsigned arithmetic: INT64_MIN has no positive int64 (a hostile trace may hold it).
    const uint64_t a = neg ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
    std::fprintf(f_, "%s%" PRIu64 ".%03" PRIu64, neg ? "-" : "", a / 1000, a % 1000);
  }
  // Starts an event object (comma-separated from the previous one).
  void begin() {
    raw(first_ ? "\n" : ",\n");
    first_ = false;
  }
  FILE* file() { return f_; }

 private:
  FILE* f_;
  bool first_ = true;
};

}  // namespace

ExportStats export_perfetto(const std::string& trace, tracedb::OutputFile& out) {
  return export_perfetto(std::vector<ExportInput>{{trace, {}}}, out);
}

ExportStats export_perfetto(const std::vector<ExportInput>& inputs, tracedb::OutputFile& out) {
  FILE* f = out.stream();
  ExportStats st;
  Out o(f);
  o.raw("{\"displayTimeUnit\": \"ns\", \"traceEvents\": [");
  // Several traces (one per rank): process rows number from 1 in every file, so each file's
  // rows are numbered on from the last file's (GPU pids, flow ids), and a host pid another
  // file already took (pid 4000 on two hosts) gets a free one, the real pid in its name.
  int64_t base = 0;
  std::set<int64_t> taken;
  int64_t next_free = 900000;
  for (const ExportInput& in : inputs) {
    auto r = tracedb::Reader::open(in.trace);
    // Clock alignment: the offset of each process row (0 when none is given).
    auto at = [&](int64_t process_row, int64_t t) {
      const auto it = in.offset_ns.find(process_row);
      int64_t shifted = t;
      if (it != in.offset_ns.end() && __builtin_add_overflow(t, it->second, &shifted)) return t;
      return shifted;
    };
    int64_t rows = 0;  // the highest process row of this file
    std::unordered_map<int64_t, std::string> names;
    {
      auto q = r->query("SELECT id, value FROM string");
      while (q.step()) names.emplace(q.i64(0), q.text(1));
    }
    auto name = [&](int64_t id) {
      auto it = names.find(id);
      return it == names.end() ? std::string("?") : it->second;
    };
    std::map<int64_t, int64_t> pid;  // process row -> OS pid
    // Correlations that have a launching API call in the trace: only those get flow arrows.
    std::unordered_set<Key, KeyHash> launched;
    {
      auto q = r->query("SELECT process_id, correlation_id FROM api_call");
      while (q.step()) launched.insert({q.i64(0), q.i64(1)});
    }
    // ... and GPU work that has them: an API call starts a flow only when something ends it.
    // With where each correlation's work ran (per device and stream, its first start), where NCCL
    // calls' flows end.
    std::unordered_map<Key, std::vector<Place>, KeyHash> work_places;
    {
      auto q = r->query(
          "SELECT process_id, correlation_id, device_id, IFNULL(stream_id, 0), MIN(start_ns) "
          "FROM (SELECT process_id, correlation_id, device_id, stream_id, start_ns FROM kernel "
          "UNION ALL SELECT process_id, correlation_id, device_id, stream_id, start_ns FROM "
          "memcpy UNION ALL SELECT process_id, correlation_id, device_id, stream_id, start_ns "
          "FROM memset) WHERE correlation_id IS NOT NULL GROUP BY process_id, correlation_id, "
          "device_id, IFNULL(stream_id, 0) ORDER BY 5");
      while (q.step()) {
        auto& places = work_places[Key{q.i64(0), q.i64(1)}];
        if (places.size() < kMaxPlacesPerCorrelation)
          places.push_back({q.i64(2), q.i64(3), q.i64(4)});
      }
    }
    // Each NCCL call's first GPU work on its own GPU: all calls of a group share the group's
    // work (one external id), which spans every GPU the group drives, so a call's flow ends on
    // the first slice of its own device, on the call's stream when it has work there: the
    // group's first start (collective_gpu's start_ns) may be another GPU's kernel, and an arrow
    // to it left on the call's own track points at nothing (issue 13: 2,100 of 9,600 NCCL flows
    // of the demo trace). Built from the external correlations and work_places above instead of
    // the view, whose row per (call, linked activity) made 20,000 kernels sharing one
    // correlation id 400 million rows and took 43 s (issue 12; bench/export_bench.cpp).
    std::unordered_map<CallKey, Place, CallKeyHash> call_work;  // first per stream, and per GPU
    {
      auto q = r->query(
          "SELECT process_id, external_id, correlation_id FROM external_correlation WHERE "
          "external_kind = 'custom0'");
      while (q.step()) {
        const auto w = work_places.find({q.i64(0), q.i64(2)});
        if (w == work_places.end()) continue;
        for (const Place& place : w->second) {
          for (const int64_t stream : {place.stream, int64_t{-1}}) {
            auto [it, fresh] =
                call_work.emplace(CallKey{q.i64(0), q.i64(1), place.device, stream}, place);
            if (!fresh && place.start < it->second.start) it->second = place;
          }
        }
      }
    }
    std::map<int64_t, int64_t> os_pid;  // process row -> its pid as recorded
    {
      auto q = r->query("SELECT id, pid, host, rank, command_line FROM process");
      while (q.step()) {
        rows = std::max(rows, q.i64(0));
        os_pid[q.i64(0)] = q.i64(1);
        int64_t shown = q.i64(1);
        // GPU tracks take pids from 1000000 on: a real pid there is moved too.
        if (shown >= 1000000 || !taken.insert(shown).second) {
          while (!taken.insert(next_free).second) ++next_free;
          shown = next_free;
        }
        pid[q.i64(0)] = shown;
        std::string label = q.text(4);
        if (shown != q.i64(1)) label += " (pid " + std::to_string(q.i64(1)) + ")";
        if (!q.text(2).empty()) label += " on " + q.text(2);
        if (auto rank = q.opt_i64(3)) label.insert(0, "rank " + std::to_string(*rank) + ": ");
        o.begin();
        std::fprintf(f,
                     "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %" PRId64
                     ", \"args\": {\"name\": ",
                     shown);
        o.str(label);
        o.raw("}}");
      }
    }
    auto gpu_pid = [&](int64_t process_row, int64_t device) {
      return wrap(1000000u + 1000u * static_cast<uint64_t>(base + process_row) +
                  static_cast<uint64_t>(device));
    };
    {
      auto q = r->query("SELECT process_id, device_id, name FROM device");
      while (q.step()) {
        o.begin();
        std::fprintf(f,
                     "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %" PRId64
                     ", \"args\": {\"name\": ",
                     gpu_pid(q.i64(0), q.i64(1)));
        o.str("GPU " + std::to_string(q.i64(1)) + " (" + q.text(2) + ") of pid " +
              std::to_string(os_pid[q.i64(0)]));
        o.raw("}}");
      }
    }
    {
      auto q = r->query(
          "SELECT process_id, IFNULL(device_id, 0), stream_id, IFNULL(name, ''), priority FROM "
          "stream");
      while (q.step()) {
        std::string label = "stream " + std::to_string(q.i64(2));
        if (!q.text(3).empty()) label += " (" + q.text(3) + ")";
        if (auto p = q.opt_i64(4); p && *p != 0) label += " prio " + std::to_string(*p);
        o.begin();
        std::fprintf(f,
                     "{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %" PRId64
                     ", \"tid\": %" PRId64 ", \"args\": {\"name\": ",
                     gpu_pid(q.i64(0), q.i64(1)), q.i64(2));
        o.str(label);
        o.raw("}}");
      }
    }
    // GPU activities, with the end of each correlation's flow.
    auto gpu = [&](const std::string& sql, const char* cat) {
      auto q = r->query(sql);
      while (q.step()) {
        const int64_t p = q.i64(0), dev = q.i64(1), stream = q.opt_i64(2).value_or(0);
        o.begin();
        std::fprintf(f, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
        o.str(q.text(5));
        std::fprintf(f, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", gpu_pid(p, dev),
                     stream);
        o.ts(at(p, q.i64(3)));
        o.raw(", \"dur\": ");
        o.ts(duration(q.i64(3), q.i64(4)));
        o.raw(", \"args\": {");
        std::fprintf(f, "\"device\": %" PRId64 ", \"stream\": %" PRId64, dev, stream);
        if (auto c = q.opt_i64(6)) std::fprintf(f, ", \"correlation\": %" PRId64, *c);
        o.raw(", \"detail\": ");
        o.str(q.text(7));
        o.raw("}}");
        ++st.gpu_events;
        if (auto c = q.opt_i64(6); c && launched.count({p, *c})) {
          // Flow end, bound to this slice.
          o.begin();
          std::fprintf(f,
                       "{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"launch\", \"name\": \"launch\", "
                       "\"id\": %" PRId64 ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
                       flow_id(base + p, *c), gpu_pid(p, dev), stream);
          o.ts(at(p, q.i64(3)));
          o.raw("}");
          ++st.flows;
        }
      }
    };
    // Kernel names are resolved in C++ (the string table), so select the ids and patch.
    {
      auto q = r->query(
          "SELECT process_id, device_id, stream_id, start_ns, end_ns, name_id, correlation_id, "
          "'grid ' || grid_x || 'x' || grid_y || 'x' || grid_z || ', block ' || block_x || 'x' || "
          "block_y || "
          "'x' || block_z || ', ' || registers_per_thread || ' registers, ' || "
          "(static_shared_bytes + "
          "dynamic_shared_bytes) || ' B shared' FROM kernel ORDER BY start_ns");
      while (q.step()) {
        const int64_t p = q.i64(0), dev = q.i64(1), stream = q.opt_i64(2).value_or(0);
        o.begin();
        o.raw("{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ");
        o.str(name(q.i64(5)));
        std::fprintf(f, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", gpu_pid(p, dev),
                     stream);
        o.ts(at(p, q.i64(3)));
        o.raw(", \"dur\": ");
        o.ts(duration(q.i64(3), q.i64(4)));
        std::fprintf(f, ", \"args\": {\"device\": %" PRId64 ", \"stream\": %" PRId64, dev, stream);
        if (auto c = q.opt_i64(6)) std::fprintf(f, ", \"correlation\": %" PRId64, *c);
        o.raw(", \"detail\": ");
        o.str(q.text(7));
        o.raw("}}");
        ++st.gpu_events;
        if (auto c = q.opt_i64(6); c && launched.count({p, *c})) {
          o.begin();
          std::fprintf(f,
                       "{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"launch\", \"name\": \"launch\", "
                       "\"id\": %" PRId64 ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
                       flow_id(base + p, *c), gpu_pid(p, dev), stream);
          o.ts(at(p, q.i64(3)));
          o.raw("}");
          ++st.flows;
        }
      }
    }
    gpu("SELECT process_id, device_id, stream_id, start_ns, end_ns, 'Memcpy ' || copy_kind, "
        "correlation_id, "
        "bytes || ' bytes, ' || src_kind || ' -> ' || dst_kind FROM memcpy ORDER BY start_ns",
        "memcpy");
    gpu("SELECT process_id, device_id, stream_id, start_ns, end_ns, 'Memset', correlation_id, "
        "bytes || ' bytes' FROM memset ORDER BY start_ns",
        "memset");
    // API calls: slices on their threads, each the start of its correlation's flow.
    {
      auto q = r->query(
          "SELECT process_id, thread_id, name_id, start_ns, end_ns, correlation_id FROM api_call "
          "ORDER BY start_ns");
      while (q.step()) {
        const int64_t p = q.i64(0);
        o.begin();
        o.raw("{\"ph\": \"X\", \"cat\": \"cuda_api\", \"name\": ");
        o.str(name(q.i64(2)));
        std::fprintf(f, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", pid[p], q.i64(1));
        o.ts(at(p, q.i64(3)));
        o.raw(", \"dur\": ");
        o.ts(duration(q.i64(3), q.i64(4)));
        std::fprintf(f, ", \"args\": {\"correlation\": %" PRId64 "}}", q.i64(5));
        ++st.cpu_events;
        if (!work_places.count({p, q.i64(5)})) continue;
        o.begin();
        std::fprintf(f,
                     "{\"ph\": \"s\", \"cat\": \"launch\", \"name\": \"launch\", \"id\": %" PRId64
                     ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
                     flow_id(base + p, q.i64(5)), pid[p], q.i64(1));
        o.ts(at(p, q.i64(3)));
        o.raw("}");
      }
    }
    // NCCL calls with their arguments, and a flow to their first GPU work.
    {
      auto q = r->query(
          "SELECT c.process_id, c.thread_id, c.op, c.host_start_ns, c.host_end_ns, "
          "IFNULL(c.comm_id, ''), c.seq, c.bytes, IFNULL(c.nranks, 0), IFNULL(c.rank, -1), "
          "c.datatype, c.external_id, c.device_id, c.stream_id, c.id FROM collective c ORDER BY "
          "c.host_start_ns");
      while (q.step()) {
        const int64_t p = q.i64(0);
        o.begin();
        o.raw("{\"ph\": \"X\", \"cat\": \"nccl\", \"name\": ");
        o.str("nccl" + q.text(2));
        std::fprintf(f, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", pid[p], q.i64(1));
        o.ts(at(p, q.i64(3)));
        o.raw(", \"dur\": ");
        o.ts(duration(q.i64(3), q.i64(4)));
        o.raw(", \"args\": {\"comm\": ");
        o.str(q.text(5));
        std::fprintf(f,
                     ", \"seq\": %" PRId64 ", \"bytes\": %" PRId64 ", \"nranks\": %" PRId64
                     ", \"rank\": %" PRId64 ", \"datatype\": ",
                     q.i64(6), q.i64(7), q.i64(8), q.i64(9));
        o.str(q.text(10));
        o.raw("}}");
        ++st.cpu_events;
        const auto ext = q.opt_i64(11);
        const auto dev = q.opt_i64(12);
        if (!ext || !dev) continue;
        // Its first work on the call's stream, else its first on its GPU: the arrow ends on
        // that slice's own track. No work on its GPU, no arrow (never one to nothing).
        auto work = call_work.find(CallKey{p, *ext, *dev, q.opt_i64(13).value_or(-1)});
        if (work == call_work.end()) work = call_work.find(CallKey{p, *ext, *dev, -1});
        if (work == call_work.end()) continue;
        const Place* end = &work->second;
        // Negative, apart from the API calls' flow ids; wraps rather than overflows.
        const int64_t id = wrap(0 - (static_cast<uint64_t>(base + p) * 1'000'000'000u +
                                     static_cast<uint64_t>(q.i64(14))));
        o.begin();
        std::fprintf(f,
                     "{\"ph\": \"s\", \"cat\": \"nccl\", \"name\": \"nccl\", \"id\": %" PRId64
                     ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
                     id, pid[p], q.i64(1));
        o.ts(at(p, q.i64(3)));
        o.raw("}");
        o.begin();
        std::fprintf(f,
                     "{\"ph\": \"f\", \"bp\": \"e\", \"cat\": \"nccl\", \"name\": \"nccl\", "
                     "\"id\": %" PRId64 ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ",
                     id, gpu_pid(p, end->device), end->stream);
        o.ts(at(p, end->start));
        o.raw("}");
        ++st.flows;
      }
    }
    // NVTX ranges and marks on their threads.
    {
      auto q = r->query(
          "SELECT process_id, thread_id, kind, domain, name, start_ns, end_ns, payload_int FROM "
          "nvtx_range "
          "ORDER BY start_ns");
      while (q.step()) {
        const int64_t p = q.i64(0);
        const bool mark = q.text(2) == "mark";
        o.begin();
        o.raw(mark ? "{\"ph\": \"i\", \"s\": \"t\", \"cat\": " : "{\"ph\": \"X\", \"cat\": ");
        o.str("nvtx:" + q.text(3));
        o.raw(", \"name\": ");
        o.str(q.text(4));
        std::fprintf(f, ", \"pid\": %" PRId64 ", \"tid\": %" PRId64 ", \"ts\": ", pid[p], q.i64(1));
        o.ts(at(p, q.i64(5)));
        if (!mark) {
          o.raw(", \"dur\": ");
          o.ts(duration(q.i64(5), q.i64(6)));
        }
        if (auto pl = q.opt_i64(7)) std::fprintf(f, ", \"args\": {\"payload\": %" PRId64 "}", *pl);
        o.raw("}");
        ++st.cpu_events;
      }
    }
    base += rows + 1;
  }
  o.raw("\n]}\n");
  out.commit();
  return st;
}

}  // namespace c3::importer
