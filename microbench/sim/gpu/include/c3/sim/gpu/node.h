// The simulated node as a CUDA-like runtime: devices, streams, events, kernels, copies and
// collectives whose times come from the model (c3/sim/model/engine.h), reported through the same
// CUPTI facade the collector attaches to in any process (one facade: libcupti.so.13 here).
//
// Time: the node runs on a virtual clock. Host time advances by each API call's cost and jumps
// forward at synchronization; GPU work is placed by the engine. Everything the process reports
// (CUPTI records, and, through c3scope_trace_clock_ns, the collector's NVTX and NCCL times) is
// on that clock, which starts at the CLOCK_MONOTONIC of start(), so runs are deterministic and
// far faster than the simulated time.
//
// Single host thread: the node is driven from the thread that started it (c3bench's sim
// backend drives all simulated GPUs from one thread).
#pragma once

#include <cstdint>
#include <string>

#include "c3/sim/model/engine.h"
#include "c3/sim/model/spec.h"

#define C3SIM_API __attribute__((visibility("default")))

namespace c3::sim::gpu {

// Starts the node: `preset` with `gpus` GPUs (1 to 8). Like cuInit, it runs
// CUDA_INJECTION64_PATH's InitializeInjection (so the collector attaches) and reports the
// devices. Throws std::invalid_argument for a bad preset or count, std::logic_error when the
// process already started a node or used the explicit-duration driver.
C3SIM_API void start(const std::string& preset, int gpus);
C3SIM_API bool started();
C3SIM_API const model::NodeSpec& spec();

// Host time on the virtual clock (ns, trace clock).
C3SIM_API int64_t now_ns();

// cudaStreamCreateWithPriority: CUDA's convention, a lower number is a higher priority (the
// greatest priority is negative). `partition`: a green context from partition_create, or -1.
C3SIM_API void* stream_create(int gpu, int cuda_priority, int partition = -1);
// A green context on `gpu` holding `sms` SMs from `first_sm` on (-1: the last ones); streams
// without one use all of the GPU's SMs (the primary context).
C3SIM_API int partition_create(int gpu, int sms, int first_sm = -1);

struct Kernel {
  std::string name;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  int registers = 32;
  int static_smem = 0;
  int dynamic_smem = 0;
  model::PartDemand demand;  // its gpu must be the stream's
};
// cudaLaunchKernel; returns the correlation id.
C3SIM_API uint32_t launch(void* stream, const Kernel& kernel);

enum class CopyKind { d2d, p2p, h2d, d2h };
struct Copy {
  CopyKind kind = CopyKind::d2d;
  int64_t bytes = 0;
  int peer = -1;  // destination GPU of a p2p copy
  model::PartDemand demand;
};
// cudaMemcpyAsync / cudaMemcpyPeerAsync; returns the correlation id.
C3SIM_API uint32_t copy(void* stream, const Copy& copy);

C3SIM_API void* event_record(void* stream);
C3SIM_API void stream_wait_event(void* stream, void* event);
// cudaEventSynchronize: host time moves to the event; returns the event's GPU time.
C3SIM_API int64_t event_synchronize(void* event);
C3SIM_API void stream_synchronize(void* stream);
C3SIM_API void device_synchronize();

// Collectives (the simulated NCCL): one op with a part per rank, created once and enqueued by
// each rank as its own launch call; it runs once every rank's part is there. With `is_copy`
// the op is a copy-engine transfer (a 1-rank collective) reported as a memcpy.
struct CollectiveLaunch {
  std::string kernel_name;
  unsigned grid = 1;
  unsigned block = 1;
  bool is_copy = false;
};
C3SIM_API int64_t collective_create(const model::OpDesc& desc, const CollectiveLaunch& how);
C3SIM_API uint32_t collective_enqueue(int64_t collective, int part, void* stream);

// Operations the node has run, and engine allocation steps (for benchmarks).
C3SIM_API int64_t operations_completed();

}  // namespace c3::sim::gpu

// The clock the collector uses for its own timestamps when it attaches to this CUPTI: the
// node's virtual host clock once started, CLOCK_MONOTONIC before (the two meet at start()).
extern "C" C3SIM_API int64_t c3scope_trace_clock_ns(void);
// Its name while the node runs, else nullptr (then the collector keeps its own clock).
extern "C" C3SIM_API const char* c3scope_trace_clock_name(void);
