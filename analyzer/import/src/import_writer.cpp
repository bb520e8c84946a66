#include "import_writer.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "c3/tracedb/writer.h"

namespace c3::importer {

void ImportWriter::set_stat(std::string_view name, int64_t value) {
  if (stats_out_ != nullptr) stats_out_->set_stat(std::nullopt, name, value);
}

void ImportWriter::unknown_device(int64_t process_id, int64_t device_id) {
  tracedb::DeviceRow d;
  d.process_id = process_id;
  d.device_id = device_id;
  d.name = "unknown GPU";
  d.warp_size = 32;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.max_registers_per_sm = 65536;
  out_.insert(d);
}

void ImportWriter::ranges(std::vector<tracedb::NvtxRangeRow>& rows) {
  // Outer ranges before the ranges they hold: by start, the longer first.
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    if (a.process_id != b.process_id) return a.process_id < b.process_id;
    if (a.thread_id != b.thread_id) return a.thread_id < b.thread_id;
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  });
  std::vector<int64_t> open_ends;  // of the thread's push/pop ranges still open
  std::pair<int64_t, int64_t> thread{-1, -1};
  for (auto& r : rows) {
    if (std::pair{r.process_id, r.thread_id} != thread) {
      open_ends.clear();
      thread = {r.process_id, r.thread_id};
    }
    if (r.kind == "push_pop") {
      while (!open_ends.empty() && open_ends.back() <= r.start_ns) open_ends.pop_back();
      r.depth = static_cast<int64_t>(open_ends.size());
      open_ends.push_back(r.end_ns);
    }
    out_.insert(r);
  }
}

}  // namespace c3::importer
