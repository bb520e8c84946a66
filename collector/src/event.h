// What producers (CUPTI buffer callbacks, NVTX callbacks, NCCL wrappers) hand to the writer
// thread. Ground floor: plain data, shared by the producers, the Recorder's queue and the trace
// writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "c3/tracedb/schema.h"

namespace c3::collector {

// An NCCL communicator was finalized, destroyed or aborted.
struct CommEnd {
  int64_t comm_handle = 0;
  std::string call;
  int64_t ns = 0;
};
// nvtxNameCudaStream / nvtxNameCuStream, with the stream already resolved to CUPTI's id.
struct StreamName {
  int64_t stream_id = 0;
  std::optional<int64_t> context_id;
  std::string name;
};
// A CUPTI activity buffer handed back by CUPTI; the writer decodes it and returns it to the pool.
struct CuptiBuffer {
  uint8_t* data = nullptr;
  size_t valid = 0;
};

// The clock the trace's timestamps use from now on (process.trace_clock).
struct TraceClock {
  std::string name;
};

// std::monostate: nothing to write, but starts the trace (CUDA was initialized).
using Event =
    std::variant<std::monostate, TraceClock, tracedb::NvtxRangeRow, tracedb::CollectiveRow,
                 tracedb::CommunicatorRow, CommEnd, StreamName, CuptiBuffer>;

}  // namespace c3::collector
