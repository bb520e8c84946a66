// The simulated node's timeline: a deterministic fluid model of GPUs running kernels, collectives
// and copies that compete for shared resources (docs/sim-model.md).
//
// Each operation has a demand on resources of one or more GPUs (a collective has one part per
// rank). At every event (an operation becomes ready, finishes its fixed latency, or completes)
// the engine divides the resources among the running operations:
//   1. SMs of each GPU, as the block scheduler hands them out (a stream in a green-context
//      partition is limited to that partition's SMs): a
//      kernel part that is ready takes the least occupied SMs that still have room for its CTAs
//      (its sm_occupancy of each SM), up to sm_demand of them; parts waiting for SMs are served
//      highest stream priority first, then in the order they became ready (then launched).
//      Nothing is taken back from a running part (CUDA priorities do not preempt resident
//      CTAs); a part that got fewer SMs than it wants takes more as others finish. A part
//      starts (its kernel start) when it gets its first SMs; a collective runs once every
//      rank's part has started, and holds its SMs while it waits for its peers, as NCCL
//      kernels do.
//   2. Bandwidth (HBM, link out/in, copy engines, PCIe, per GPU): max-min fair (water-filling):
//      operations that need less than an equal share of a saturated resource get what they
//      need, the others split the rest equally.
// An operation's cap comes from its SMs (compute work / SMs; data an SM can move / SMs) and
// from its own limits (one copy engine). Slowdown under concurrency is therefore a result of
// these two rules, never a constant.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "c3/sim/model/spec.h"

namespace c3::sim::model {

using OpId = int64_t;
using StreamId = int32_t;
using EventId = int32_t;

// One GPU's share of an operation. Byte counts are the totals the operation moves there.
struct PartDemand {
  int gpu = 0;
  double sm_demand = 0;  // SMs the part occupies alone (0: no SMs, e.g. a DMA copy)
  // Fraction of each of those SMs its CTAs take (threads, registers, shared memory): 1 leaves
  // no room for another kernel's CTAs there; 0.25 lets three more such kernels in.
  double sm_occupancy = 1.0;
  double sm_work = 0;  // SM-nanoseconds of work: alone it takes sm_work / sm_demand
  double hbm_bytes = 0;
  double link_out_bytes = 0;
  double link_in_bytes = 0;
  double ce_bytes = 0;    // through this GPU's copy engines
  double pcie_bytes = 0;  // over the host link (either direction)
  // Bytes the part's SMs must move themselves (loads/stores), limited per SM:
  // sm_driven_bytes / (sms * bytes_per_sm_ns) is a floor on its time.
  double sm_driven_bytes = 0;
  double bytes_per_sm_ns = 0;
  // A single stream of data (one copy engine, one peer link) moves `stream_bytes` at no more
  // than `stream_bytes_per_ns`; 0: no such cap.
  double stream_bytes = 0;
  double stream_bytes_per_ns = 0;
  // Data that lands on another GPU (peer copies): that GPU's inbound link and HBM, which the
  // part uses without a stream or SMs there.
  int peer_gpu = -1;
  double peer_bytes = 0;
};

struct OpDesc {
  std::string name;       // what the runtime reports (kernel name)
  int kind = 0;           // opaque to the engine (kernel, memcpy, ...)
  double latency_ns = 0;  // fixed time before the data moves (protocol steps)
  std::vector<PartDemand> parts;
};

// Where and when each part ran.
struct PartTiming {
  int gpu = 0;
  StreamId stream = 0;
  double ready = 0;  // it started on that GPU: got its first SMs (kernel start), or, for a part
                     // without SMs, its stream reached it and it was launched
  double end = 0;
};

struct CompletedOp {
  OpId id = 0;
  const OpDesc* desc = nullptr;
  std::vector<PartTiming> parts;
};

class Engine {
 public:
  explicit Engine(const NodeSpec& spec);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const NodeSpec& spec() const { return spec_; }

  // A green context of `gpu`: `sms` of its SMs from `first_sm` on (-1: the last `sms`). Kernels
  // on its streams use only those SMs; the GPU's own partition (streams without one) spans all
  // SMs, so kernels of both compete for the shared ones.
  int add_partition(int gpu, double sms, int first_sm = -1);
  // priority: larger is served first (CUDA's "greatest priority" maps to the largest value).
  StreamId add_stream(int gpu, int priority, int partition = -1);

  // Enqueues part `part` of op `op` on `stream`, launched by the host at `launch_ns`. An op is
  // created by `create` and runs once every part is enqueued and ready.
  OpId create(OpDesc desc);
  void enqueue(OpId op, int part, StreamId stream, double launch_ns);
  // Convenience for single-part ops.
  OpId submit(OpDesc desc, StreamId stream, double launch_ns);

  // Stream-ordered events (cudaEventRecord / cudaStreamWaitEvent).
  EventId record(StreamId stream, double launch_ns);
  void wait(StreamId stream, EventId event, double launch_ns);
  // When the event completed, or a negative value while it has not.
  double event_time(EventId event) const;

  // Advances simulated GPU time to `t` (processing every event up to it).
  void run_until(double t);
  // Runs until the op completes (or nothing can make progress) and returns its end time.
  double run_until_done(OpId op);
  double run_until_event(EventId event);
  // Runs until every enqueued item finished; returns the time.
  double run_until_idle();
  double now() const { return now_; }

  // Called for every op as it completes, in completion order.
  void on_complete(std::function<void(const CompletedOp&)> fn) { on_complete_ = std::move(fn); }

  // Ops finished so far, and allocation steps taken (for benchmarks and tests).
  int64_t completed() const { return completed_; }
  int64_t steps() const { return steps_; }

  struct Impl;  // engine.cpp

 private:
  NodeSpec spec_;
  Impl* impl_;
  double now_ = 0;
  int64_t completed_ = 0;
  int64_t steps_ = 0;
  std::function<void(const CompletedOp&)> on_complete_;
};

}  // namespace c3::sim::model
