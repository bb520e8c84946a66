// Queue length per stream (docs/metrics.md "Why a step takes as long as it does"; HTA
// queue_length_summary and time blocked on a full queue): at time t, the stream's operations
// whose launch call has returned and that have not finished, call_end <= t < end. CUDA blocks
// a launch while a stream holds its queue's limit of pending work (1024 in HTA's model), so
// the time at the limit is host time lost to a full queue.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

struct QueueOptions {
  int64_t limit = 1024;  // CUDA's per-stream launch queue, as HTA's max_queue_length
};

struct StreamQueue {
  int process = 0;  // Trace::processes index
  int16_t device = 0;
  int32_t stream = -1;
  int64_t launches = 0;      // operations with a known launch call
  int64_t span_ns = 0;       // first call end to last end: the time the numbers cover
  int64_t max = 0;           // the longest queue
  int64_t max_at = 0;        // when it was first reached
  double mean = 0;           // time-weighted over span_ns
  int64_t p50 = 0, p90 = 0;  // time-weighted: the queue was at most this long for 50%, 90%
  int64_t at_limit_ns = 0;   // time with the queue at QueueOptions::limit or longer
};

// One point of a queue's step function: from `at` on (until the next point) it holds `length`.
struct QueuePoint {
  int64_t at = 0;
  int64_t length = 0;
};

// Per stream of process `process` that has launch calls, sorted by (device, stream); `window`
// restricts each to operations starting inside it. Empty when the trace carries none.
std::vector<StreamQueue> stream_queues(const Trace& t, int process, const QueueOptions& o,
                                       const Intervals* window = nullptr);

// The step function of one stream's queue (for the timeline's counter row): points in time
// order, the last one back at 0.
std::vector<QueuePoint> queue_series(const Trace& t, int process, int16_t device, int32_t stream);

// The step functions of every stream of process `process` that has launch calls, by (device,
// stream): one pass over the process's rows (the timeline's queue rows).
struct StreamSeries {
  int16_t device = 0;
  int32_t stream = -1;
  std::vector<QueuePoint> points;
};
std::vector<StreamSeries> queue_series(const Trace& t, int process);

}  // namespace c3::analyzer
