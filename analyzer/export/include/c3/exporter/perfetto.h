// The Perfetto exporter: a c3scope trace as Chrome trace JSON.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace c3::tracedb {
class OutputFile;
}

namespace c3::exporter {

struct ExportStats {
  int64_t gpu_events = 0, cpu_events = 0, flows = 0;
  // PyTorch CPU ops the imports did not keep (stats import_cpu_ops_not_kept): the trace has no
  // table for them, so the export has none of them either.
  int64_t cpu_ops_not_kept = 0;
  ExportStats& operator+=(const ExportStats& o);  // several traces' together
};

// Chrome trace JSON for ui.perfetto.dev / chrome://tracing: process, GPU and stream tracks,
// NVTX ranges and marks, CUDA API calls, NCCL calls with their arguments, flow arrows from API
// calls and NCCL calls to their GPU work. Written into `out` and committed (moved into place)
// at the end. Throws tracedb::ReadError for a bad trace, tracedb::OutputError when `out` cannot
// be written.
ExportStats export_perfetto(const std::string& trace, tracedb::OutputFile& out);

// One trace of several exported into one file (the ranks of a job): `offset_ns` per process row
// (process.id) is added to its times, the clock alignment analyze works out (align_clocks).
struct ExportInput {
  std::string trace;
  std::map<int64_t, int64_t> offset_ns;
};
// Several traces into one JSON: each file's processes get GPU pids and flow ids of their own,
// and a host pid already taken by another file a free one (the real pid in the process name).
ExportStats export_perfetto(const std::vector<ExportInput>& inputs, tracedb::OutputFile& out);

// The same file from traces rendered apart (c3scope-mpi export: each process renders its share,
// process 0 writes the file): place_traces numbers every trace's tracks from the processes of
// the traces before it, render_perfetto writes one trace's events with that numbering, and
// PerfettoFile puts the rendered traces together, in order, byte for byte export_perfetto's file.
//
// What a trace's tracks need of the traces before it: their process rows and recorded pids.
struct TraceProcesses {
  int64_t rows = 0;                               // the highest process row (0: none)
  std::vector<std::pair<int64_t, int64_t>> pids;  // (process row, recorded pid), in table order
};
TraceProcesses trace_processes(const std::string& trace);  // throws tracedb::ReadError
// Where one trace's tracks go: its process rows are numbered on from `base` (GPU pids, flow ids),
// and each row's track shows pid[row].
struct TracePlace {
  int64_t base = 0;
  std::map<int64_t, int64_t> pid;
};
// For the traces of one file, in its order.
std::vector<TracePlace> place_traces(const std::vector<TraceProcesses>& traces);
// One trace's events, as export_perfetto writes them at that place, into `out`; each event,
// the first too, is preceded by a comma (PerfettoFile::append takes the file's first away).
// Throws tracedb::ReadError for a bad trace (or one whose processes changed since
// trace_processes read them).
ExportStats render_perfetto(const ExportInput& in, const TracePlace& place, FILE* out);

// The file: its head when made, the rendered traces' bytes in order (in pieces of any size), its
// tail and the commit (OutputFile::commit: throws tracedb::OutputError) at the end.
class PerfettoFile {
 public:
  explicit PerfettoFile(tracedb::OutputFile& out);
  void append(std::string_view piece);
  void commit();

 private:
  tracedb::OutputFile& out_;
  bool any_ = false;  // an event was appended
};

}  // namespace c3::exporter
