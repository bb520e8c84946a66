// Turns collector events into trace rows. Runs only on the recorder's writer thread and is the
// only code that touches the trace file (one writer owns all inserts: docs/architecture.md).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "c3/tracedb/writer.h"
#include "counters.h"
#include "cupti_api.h"
#include "decode.h"
#include "event.h"
#include "process_info.h"

namespace c3::collector {

class CuptiSession;
class BufferPool;

struct ClockAnchor {
  int64_t trace_ns = 0;
  int64_t realtime_ns = 0;
  int64_t monotonic_ns = 0;
};
ClockAnchor take_anchor();

// Whether CUPTI is recording, and why not / what it is ("" before the job initialized CUDA).
struct CuptiStatus {
  bool ok = false;
  std::string detail;
};

class TraceWriter {
 public:
  // Creates the file (never overwriting: an existing name gets .1, .2, ... appended before the
  // extension) and writes the process row. Throws tracedb::WriteError. Decoding counts into
  // `counters` (which must outlive the writer), and every commit writes them to stats.
  TraceWriter(const std::string& path, const ProcessFacts& facts, int64_t start_ns,
              const ClockAnchor& start_anchor, Counters& counters);

  // Writes one event; CUPTI buffers are decoded with `cupti` and returned to `pool`.
  //
  // Write errors (a failing or full disk): the open transaction is rolled back, its rows are
  // counted as lost (stats write_errors, write_dropped_rows, written with the next commit) and
  // writing goes on. write(), commit() and finish() throw tracedb::WriteError only when errors
  // persist (kMaxConsecutiveErrors without a successful commit) or the final commit fails
  // twice; the trace then holds what was committed before, and the caller stops writing.
  void write(Event& event, CuptiSession* cupti, BufferPool* pool);
  void commit(const CuptiStatus& cupti);
  // Process end, end anchor, final counters, indexes; leaves a single clean file.
  void finish(const CuptiStatus& cupti, const ClockAnchor& end_anchor);

  static constexpr int kMaxConsecutiveErrors = 3;
  int64_t write_errors() const { return write_errors_; }
  // Rows of transactions that could not be committed.
  int64_t dropped_rows() const { return dropped_rows_; }

  const std::string& path() const { return writer_->path(); }
  int64_t rows() const { return writer_->rows_written(); }
  // The underlying writer (for c3scope_trace_append, which lends its connection).
  tracedb::Writer& db_writer() { return *writer_; }
  // An append (c3scope_trace_append) failed to write: the open transaction is rolled back and
  // counted as any failed write is (stats write_errors, write_dropped_rows); never throws.
  void append_failed(const tracedb::WriteError& e) noexcept;

  // Decodes and writes every record of one CUPTI buffer (also used by the benchmark).
  void write_cupti_buffer(const uint8_t* data, size_t valid, const CuptiApi& api,
                          bool keep_api_calls);
  DecodeContext& decode_context() { return decode_; }

 private:
  static constexpr int64_t kProcessId = 1;
  void write_event(Event& event);  // everything but CUPTI buffers
  void write_row(Decoded& d, bool keep_api_calls, const CuptiApi* api);
  int64_t kernel_name_id(const char* mangled, std::optional<int64_t>* mangled_id);
  void write_stats(const CuptiStatus& cupti);
  void upsert_stream(const tracedb::StreamRow& row, const std::string* name);
  // Rolls back the open transaction after `e` and counts `lost_rows`; rethrows `e` when the
  // errors persist. Cached row ids inserted since the last commit are forgotten (undo_).
  void recover(const tracedb::WriteError& e, int64_t lost_rows);
  void committed();

  std::unique_ptr<tracedb::Writer> writer_;
  Counters& counters_;
  DecodeContext decode_;
  struct NameEntry {
    std::string mangled;
    int64_t name_id = 0;
    std::optional<int64_t> mangled_id;
  };
  std::unordered_map<const char*, NameEntry> kernel_names_;
  std::map<std::pair<int, uint32_t>, int64_t> api_names_;
  std::map<int64_t, int64_t> comm_rows_;    // ncclComm_t value -> communicator row id
  std::map<int64_t, int64_t> stream_rows_;  // CUPTI stream id -> stream row id
  std::map<int64_t, int64_t> device_rows_;  // device id -> device row id
  // Forgets the cache entries above that point at rows of the open transaction (run on
  // rollback, cleared on commit).
  std::vector<std::function<void()>> undo_;
  int64_t write_errors_ = 0;
  int64_t dropped_rows_ = 0;
  int consecutive_errors_ = 0;
  std::string first_error_;
};

// "0000:18:00.0" for a GPU UUID, from /proc/driver/nvidia/gpus/*/information ("" if unknown).
std::string pci_bus_id_for_uuid(const std::string& uuid);

}  // namespace c3::collector
