// Hand-built traces for the timeline's tests (timeline_test.cpp, timeline_lod_test.cpp):
// processes, devices, activities, collectives and NVTX ranges, and the rows' lookups.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "c3/analyzer/metrics/classify.h"
#include "c3/gui/timeline.h"

namespace c3::gui::testing {

// A trace built by hand: processes, devices, activities, collectives, NVTX ranges.
struct Builder {
  analyzer::Trace t;

  int process(const std::string& host, std::optional<int64_t> rank, int64_t pid) {
    analyzer::Process p;
    p.host = host;
    p.rank = rank;
    p.pid = pid;
    t.processes.push_back(p);
    return static_cast<int>(t.processes.size() - 1);
  }
  void device(int process, int device, const std::string& name) {
    analyzer::Device d;
    d.process = static_cast<int16_t>(process);
    d.device = static_cast<int16_t>(device);
    d.name = name;
    t.devices.push_back(d);
  }
  int32_t name(const std::string& n) {
    for (size_t i = 0; i < t.names.size(); ++i) {
      if (t.names[i] == n) return static_cast<int32_t>(i);
    }
    t.names.push_back(n);
    return static_cast<int32_t>(t.names.size() - 1);
  }
  size_t kernel(const std::string& n, int64_t s, int64_t e, int process = 0, int device = 0,
                int stream = 7, int32_t collective = -1) {
    const size_t i = t.activities.push(s, e, name(n), stream, static_cast<int16_t>(device),
                                       static_cast<int16_t>(process), analyzer::Kind::kernel, 0);
    t.activities.collective[i] = collective;
    return i;
  }
  void copy(int64_t s, int64_t e, int process = 0, int device = 0, int stream = 9) {
    t.activities.push(s, e, name("Memcpy HtoD (Host -> Device)"), stream,
                      static_cast<int16_t>(device), static_cast<int16_t>(process),
                      analyzer::Kind::memcpy, 4096);
  }
  int32_t collective(int process, const std::string& comm, int64_t s, int64_t e) {
    analyzer::Collective c;
    c.process = static_cast<int16_t>(process);
    c.comm_id = comm;
    c.op = "AllReduce";
    c.gpu_start = s;
    c.gpu_end = e;
    t.collectives.push_back(c);
    return static_cast<int32_t>(t.collectives.size() - 1);
  }
  void range(int process, int64_t thread, const std::string& n, int64_t s, int64_t e, int depth,
             const std::string& domain = "default") {
    t.ranges.push_back({static_cast<int16_t>(process), thread, domain, n, s, e, depth});
  }
  void start_end(int process, int64_t thread, const std::string& n, int64_t s, int64_t e,
                 const std::string& domain) {
    analyzer::Range g{static_cast<int16_t>(process), thread, domain, n, s, e, 0};
    g.start_end = true;
    t.ranges.push_back(g);
  }
  analyzer::Trace& done() {
    t.activities.sort();
    analyzer::classify(t, analyzer::Rules::defaults());
    return t;
  }
};

inline std::vector<std::string> labels(const Timeline& tl, const std::vector<int>& rows) {
  std::vector<std::string> out;
  out.reserve(rows.size());
  for (int r : rows) out.push_back(tl.row(r).label);
  return out;
}

inline int find_row(const Timeline& tl, RowKind kind, int process = -1) {
  for (size_t i = 0; i < tl.rows().size(); ++i) {
    const Row& r = tl.rows()[i];
    if (r.kind == kind && (process < 0 || r.process == process)) return static_cast<int>(i);
  }
  return -1;
}

inline uint64_t total_count(const std::vector<LodItem>& items) {
  uint64_t n = 0;
  for (const LodItem& x : items) n += x.count;
  return n;
}

}  // namespace c3::gui::testing
