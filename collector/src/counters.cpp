#include "counters.h"

namespace c3::collector {

const char* counter_name(Counter c) {
  switch (c) {
    case Counter::cupti_records:
      return "cupti_records";
    case Counter::cupti_dropped_records:
      return "cupti_dropped_records";
    case Counter::cupti_buffers:
      return "cupti_buffers";
    case Counter::buffer_pool_exhausted:
      return "buffer_pool_exhausted";
    case Counter::cupti_unknown_records:
      return "cupti_unknown_records";
    case Counter::cupti_invalid_records:
      return "cupti_invalid_records";
    case Counter::nvtx_events:
      return "nvtx_events";
    case Counter::nvtx_unclosed_ranges:
      return "nvtx_unclosed_ranges";
    case Counter::nvtx_unmatched_ends:
      return "nvtx_unmatched_ends";
    case Counter::nccl_calls:
      return "nccl_calls";
    case Counter::queue_dropped_rows:
      return "queue_dropped_rows";
    case Counter::collector_overhead_ns:
      return "collector_overhead_ns";
    case Counter::writer_ns:
      return "writer_ns";
    case Counter::flushes:
      return "flushes";
    case Counter::count_:
      break;
  }
  return "unknown";
}

}  // namespace c3::collector
