// The last stage of every importer (as trace_processor's trackers are): the one place that
// writes rows into the trace. The importers' first stages read their format (kineto_tokenize,
// the nsys queries) and turn records into rows (kineto_parse, nsys); only this class inserts,
// so what the tables receive, and the rows every importer shapes the same way (a GPU the input
// says nothing about, nested ranges), are written once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "c3/tracedb/schema.h"
#include "c3/tracedb/sink.h"

namespace c3::tracedb {
class Writer;
}

namespace c3::importer {

class ImportWriter {
 public:
  // `stats_out`: where set_stat goes (a trace file's Writer; null for a sink with no stats table).
  explicit ImportWriter(tracedb::RowSink& out, tracedb::Writer* stats_out = nullptr)
      : out_(out), stats_out_(stats_out) {}
  ImportWriter(const ImportWriter&) = delete;
  ImportWriter& operator=(const ImportWriter&) = delete;

  // Inserts one row; returns its id (a process row's is what other rows' process_id name).
  template <class Row>
  int64_t insert(const Row& row) {
    return out_.insert(row);
  }
  int64_t intern(std::string_view value) { return out_.intern(value); }
  void set_meta(std::string_view key, std::string_view value) { out_.set_meta(key, value); }
  void correlations_from(int64_t lowest) { out_.correlations_from(lowest); }
  void rows_ahead(int64_t gpu_rows, int64_t collectives) { out_.rows_ahead(gpu_rows, collectives); }
  // A whole-file counter in the stats table (only when writing a trace file).
  void set_stat(std::string_view name, int64_t value);

  // A GPU of `process_id` that the input names but does not describe: what occupancy needs
  // gets the common defaults (32 threads a warp, 2048 threads, 32 blocks and 64 K registers an
  // SM), the rest stays unknown (0).
  void unknown_device(int64_t process_id, int64_t device_id);
  // NVTX ranges and marks: sorted per (process, thread), the depth of each push/pop range set
  // by its nesting among the thread's, then inserted in that order.
  void ranges(std::vector<tracedb::NvtxRangeRow>& rows);

 private:
  tracedb::RowSink& out_;
  tracedb::Writer* stats_out_;
};

}  // namespace c3::importer
