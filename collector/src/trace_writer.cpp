#include "trace_writer.h"

#include <cxxabi.h>
#include <sqlite3.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "buffer_pool.h"
#include "clock.h"
#include "cupti_session.h"

namespace c3::collector {
namespace {

std::string demangle(const char* name) {
  if (!name) return "unknown";
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || !d) return name;
  std::string out(d);
  std::free(d);
  return out;
}

std::unique_ptr<tracedb::Writer> create_unique(const std::string& path) {
  for (int n = 0;; ++n) {
    std::string candidate = n == 0 ? path : alternative_path(path, n);
    try {
      return tracedb::Writer::create(candidate);
    } catch (const tracedb::WriteError& e) {
      if (e.kind() != tracedb::WriteError::Kind::exists || n >= 999) throw;
    }
  }
}

}  // namespace

ClockAnchor take_anchor() {
  ClockAnchor a;
  a.trace_ns = now_ns();
  a.monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  a.realtime_ns = clock_ns(CLOCK_REALTIME);
  return a;
}

std::string pci_bus_id_for_uuid(const std::string& uuid) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path root = "/proc/driver/nvidia/gpus";
  if (uuid.empty() || !fs::is_directory(root, ec)) return "";
  for (const auto& e : fs::directory_iterator(root, ec)) {
    std::ifstream in(e.path() / "information");
    std::string line;
    while (std::getline(in, line)) {
      // "GPU UUID:        GPU-7222db8e-..."
      if (line.rfind("GPU UUID:", 0) == 0 && line.find(uuid) != std::string::npos) {
        return e.path().filename().string();
      }
    }
  }
  return "";
}

TraceWriter::TraceWriter(const std::string& path, const ProcessFacts& facts, int64_t start_ns,
                         const ClockAnchor& a, Counters& counters)
    : writer_(create_unique(path)), counters_(counters) {
  tracedb::ProcessRow p;
  p.id = kProcessId;
  p.pid = facts.pid;
  p.ppid = facts.ppid;
  p.host = facts.host;
  p.rank = facts.ranks.rank;
  p.local_rank = facts.ranks.local_rank;
  p.world_size = facts.ranks.world_size;
  p.command_line = facts.command_line;
  if (!facts.executable.empty()) p.executable = facts.executable;
  p.start_ns = start_ns;
  p.trace_clock = trace_clock_name();
  p.anchor_start_trace_ns = a.trace_ns;
  p.anchor_start_realtime_ns = a.realtime_ns;
  p.anchor_start_monotonic_ns = a.monotonic_ns;
  // Retried: without its process row a trace means little. A lost attempt loses no other row.
  for (;;) {
    try {
      writer_->insert(p);
      writer_->commit();
      committed();
      return;
    } catch (const tracedb::WriteError& e) {
      recover(e, 0);
    }
  }
}

void TraceWriter::committed() {
  undo_.clear();
  consecutive_errors_ = 0;
}

void TraceWriter::append_failed(const tracedb::WriteError& e) noexcept {
  try {
    recover(e, writer_->rows_pending());
  } catch (...) {  // NOLINT(bugprone-empty-catch): persistent errors stop the next write instead
  }
}

void TraceWriter::recover(const tracedb::WriteError& e, int64_t lost_rows) {
  ++write_errors_;
  dropped_rows_ += lost_rows;
  if (first_error_.empty()) first_error_ = e.what();
  for (auto it = undo_.rbegin(); it != undo_.rend(); ++it) (*it)();
  undo_.clear();
  // Rolled back even when giving up, so the file holds exactly what the counters say.
  writer_->rollback();
  if (++consecutive_errors_ >= kMaxConsecutiveErrors) throw e;
}

int64_t TraceWriter::kernel_name_id(const char* mangled, std::optional<int64_t>* mangled_id) {
  // CUPTI hands out one name pointer per function; checking the text guards against a pointer
  // reused after a module unload.
  auto it = kernel_names_.find(mangled);
  if (it != kernel_names_.end() && mangled && it->second.mangled == mangled) {
    *mangled_id = it->second.mangled_id;
    return it->second.name_id;
  }
  NameEntry e;
  e.mangled = mangled ? mangled : "unknown";
  std::string pretty = demangle(mangled);
  e.name_id = writer_->intern(pretty);
  if (pretty != e.mangled) e.mangled_id = writer_->intern(e.mangled);
  *mangled_id = e.mangled_id;
  int64_t id = e.name_id;
  kernel_names_[mangled] = std::move(e);
  undo_.push_back([this, mangled] { kernel_names_.erase(mangled); });
  return id;
}

void TraceWriter::upsert_stream(const tracedb::StreamRow& row, const std::string* name) {
  auto it = stream_rows_.find(row.stream_id);
  if (it == stream_rows_.end()) {
    tracedb::StreamRow r = row;
    r.process_id = kProcessId;
    if (name) r.name = *name;
    stream_rows_[row.stream_id] = writer_->insert(r);
    undo_.push_back([this, id = row.stream_id] { stream_rows_.erase(id); });
    return;
  }
  // A name can come before or after CUPTI's stream record: merge into one row.
  std::string sql = "UPDATE stream SET ";
  if (name) {
    char* q = sqlite3_mprintf("name = %Q", name->c_str());
    sql += q;
    sqlite3_free(q);
  } else {
    sql += "device_id = " + (row.device_id ? std::to_string(*row.device_id) : "device_id") +
           ", context_id = " + (row.context_id ? std::to_string(*row.context_id) : "context_id") +
           ", priority = " + (row.priority ? std::to_string(*row.priority) : "priority") +
           ", flags = " + (row.flags ? "'" + *row.flags + "'" : std::string("flags"));
  }
  sql += " WHERE id = " + std::to_string(it->second);
  writer_->exec(sql);
}

void TraceWriter::write_row(Decoded& d, bool keep_api_calls, const CuptiApi* api) {
  std::visit(
      [&](auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Skipped>) {
          counters_.add(v.why == Skipped::Why::unknown_kind ? Counter::cupti_unknown_records
                                                            : Counter::cupti_invalid_records);
        } else if constexpr (std::is_same_v<T, DecodedKernel>) {
          v.row.process_id = kProcessId;
          v.row.name_id = kernel_name_id(v.name, &v.row.mangled_name_id);
          writer_->insert(v.row);
        } else if constexpr (std::is_same_v<T, DecodedApi>) {
          if (!keep_api_calls) return;
          v.row.process_id = kProcessId;
          auto key = std::make_pair(static_cast<int>(v.domain), static_cast<uint32_t>(v.row.cbid));
          auto it = api_names_.find(key);
          if (it == api_names_.end()) {
            std::string name = "cbid " + std::to_string(v.row.cbid);
            const char* n = nullptr;
            if (api && api->GetCallbackName &&
                api->GetCallbackName(v.domain, static_cast<CUpti_CallbackId>(v.row.cbid), &n) ==
                    CUPTI_SUCCESS &&
                n) {
              name = n;
            }
            it = api_names_.emplace(key, writer_->intern(name)).first;
            undo_.push_back([this, key] { api_names_.erase(key); });
          }
          v.row.name_id = it->second;
          writer_->insert(v.row);
        } else if constexpr (std::is_same_v<T, DecodedDevice>) {
          if (device_rows_.count(v.row.device_id)) return;  // CUPTI may repeat device records
          v.row.process_id = kProcessId;
          if (v.row.uuid) {
            std::string bus = pci_bus_id_for_uuid(*v.row.uuid);
            if (!bus.empty()) v.row.pci_bus_id = bus;
          }
          device_rows_[v.row.device_id] = writer_->insert(v.row);
          undo_.push_back([this, id = v.row.device_id] { device_rows_.erase(id); });
        } else if constexpr (std::is_same_v<T, tracedb::StreamRow>) {
          upsert_stream(v, nullptr);
        } else {
          v.process_id = kProcessId;
          writer_->insert(v);
        }
      },
      d);
}

void TraceWriter::write_cupti_buffer(const uint8_t* data, size_t valid, const CuptiApi& api,
                                     bool keep_api_calls) {
  // A record's size is the distance to the next one (see decode.h on CUPTI versions).
  CUpti_Activity* record = nullptr;
  CUpti_Activity* next = nullptr;
  auto* buf = const_cast<uint8_t*>(data);
  if (api.ActivityGetNextRecord(buf, valid, &record) != CUPTI_SUCCESS) return;
  int64_t n = 0;
  while (record) {
    next = record;
    CUptiResult r = api.ActivityGetNextRecord(buf, valid, &next);
    const auto* begin = reinterpret_cast<const uint8_t*>(record);
    size_t size = r == CUPTI_SUCCESS ? static_cast<size_t>(reinterpret_cast<uint8_t*>(next) - begin)
                                     : static_cast<size_t>(data + valid - begin);
    Decoded d = decode_record(record, size, decode_);
    try {
      write_row(d, keep_api_calls, &api);
    } catch (const tracedb::WriteError& e) {
      recover(e, writer_->rows_pending() + 1);  // and go on with the buffer's next record
    }
    ++n;
    if (r != CUPTI_SUCCESS) break;
    record = next;
  }
  counters_.add(Counter::cupti_records, n);
}

void TraceWriter::write(Event& event, CuptiSession* cupti, BufferPool* pool) {
  if (auto* b = std::get_if<CuptiBuffer>(&event)) {
    // Return the buffer to the pool even when writing fails. Write errors are handled per
    // record, inside.
    struct Release {
      BufferPool* pool;
      uint8_t* data;
      ~Release() {
        if (pool) pool->release(data);
      }
    } release{pool, b->data};
    if (cupti) {
      write_cupti_buffer(b->data, b->valid, cupti->api(), cupti->records_api_calls());
    }
    return;
  }
  try {
    write_event(event);
  } catch (const tracedb::WriteError& e) {
    recover(e, writer_->rows_pending() + 1);
  }
}

void TraceWriter::write_event(Event& event) {
  std::visit(
      [&](auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate> || std::is_same_v<T, CuptiBuffer>) {
          return;
        } else if constexpr (std::is_same_v<T, TraceClock>) {
          char* q = sqlite3_mprintf("UPDATE process SET trace_clock = %Q WHERE id = %lld",
                                    v.name.c_str(), static_cast<long long>(kProcessId));
          std::string sql = q;
          sqlite3_free(q);
          writer_->exec(sql);
        } else if constexpr (std::is_same_v<T, tracedb::CommunicatorRow>) {
          v.process_id = kProcessId;
          comm_rows_[v.comm_handle] = writer_->insert(v);
          undo_.push_back([this, h = v.comm_handle] { comm_rows_.erase(h); });
        } else if constexpr (std::is_same_v<T, CommEnd>) {
          auto it = comm_rows_.find(v.comm_handle);
          if (it == comm_rows_.end()) return;
          writer_->exec("UPDATE communicator SET ended_ns = " + std::to_string(v.ns) +
                        ", end_call = '" + v.call +
                        "' WHERE ended_ns IS NULL AND id = " + std::to_string(it->second));
        } else if constexpr (std::is_same_v<T, StreamName>) {
          tracedb::StreamRow row;
          row.stream_id = v.stream_id;
          row.context_id = v.context_id;
          upsert_stream(row, &v.name);
        } else {
          v.process_id = kProcessId;
          writer_->insert(v);
        }
      },
      event);
}

void TraceWriter::write_stats(const CuptiStatus& cupti) {
  for (size_t i = 0; i < static_cast<size_t>(Counter::count_); ++i) {
    auto c = static_cast<Counter>(i);
    writer_->set_stat(kProcessId, counter_name(c), counters_.get(c));
  }
  writer_->set_stat(kProcessId, "cupti_status", cupti.ok ? 1 : 0,
                    cupti.detail.empty() ? std::nullopt : std::optional<std::string>(cupti.detail));
  writer_->set_stat(kProcessId, "write_errors", write_errors_,
                    first_error_.empty() ? std::nullopt : std::optional<std::string>(first_error_));
  writer_->set_stat(kProcessId, "write_dropped_rows", dropped_rows_);
  writer_->set_stat(kProcessId, "rows_written", writer_->rows_written());
}

void TraceWriter::commit(const CuptiStatus& cupti) {
  const int64_t data_rows = writer_->rows_pending();  // not counting the stats rows
  try {
    write_stats(cupti);
    writer_->commit();
    committed();
  } catch (const tracedb::WriteError& e) {
    recover(e, data_rows);
  }
}

void TraceWriter::finish(const CuptiStatus& cupti, const ClockAnchor& a) {
  // A failed final commit loses the last transaction's rows; a second attempt records that loss
  // (after a transient error). When it fails too, only the caller's log line can tell.
  for (int attempt = 0;; ++attempt) {
    const int64_t data_rows = writer_->rows_pending();
    try {
      writer_->exec("UPDATE process SET end_ns = " + std::to_string(a.trace_ns) +
                    ", anchor_end_trace_ns = " + std::to_string(a.trace_ns) +
                    ", anchor_end_realtime_ns = " + std::to_string(a.realtime_ns) +
                    ", anchor_end_monotonic_ns = " + std::to_string(a.monotonic_ns) +
                    " WHERE id = " + std::to_string(kProcessId));
      write_stats(cupti);
      writer_->close();
      committed();
      return;
    } catch (const tracedb::WriteError& e) {
      recover(e, data_rows);
      if (attempt > 0) throw;
    }
  }
}

}  // namespace c3::collector
