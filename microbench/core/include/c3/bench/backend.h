// A c3bench backend runs Cases on real GPUs (cuda) or on the simulated node (sim). Backends are
// plugins (libc3bench-cuda.so, libc3bench-sim.so) loaded by c3bench at run time, so that a cuda
// run never loads the simulator's libraries and a sim run needs no CUDA at all.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "c3/bench/descriptors.h"

namespace c3::bench {

struct BackendOptions {
  int gpus = 1;                 // GPUs driven by this process (single-process mode only)
  std::string preset = "h100";  // sim: the node preset
  // Multi-process mode (torchrun/mpirun/srun): this process is `rank` of `world_size`, one GPU
  // each (local_rank picks it); the NCCL unique id goes through `store` ("file:/path" or
  // "tcp:host:port"). world_size 0: single process driving `gpus` GPUs.
  int rank = 0;
  int world_size = 0;
  int local_rank = 0;
  std::string store;
  bool verbose = false;
};

enum class Phase {
  compute_alone,  // the compute op (its k chunks back to back) on the compute stream, alone
  comm_alone,     // the communication op (its k chunks back to back) on the comm stream, alone
  // Both on their own streams, launched together in knobs.order. Independent unless
  // knobs.pipelined: then comm chunk i waits (event) for compute chunk i.
  concurrent,
  serial,  // all compute chunks, then all communication chunks, on the compute stream
};
const char* phase_name(Phase p);

// One iteration of a phase, in nanoseconds of GPU time, taken as the maximum over this
// process's GPUs: comp and comm span each op's own first start to last end (0 when absent);
// wall spans the first start to the last end of everything in the phase.
struct PhaseTiming {
  double comp_ns = 0;
  double comm_ns = 0;
  double wall_ns = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "cuda" or "sim"
  virtual bool simulated() const = 0;
  // e.g. "8 x NVIDIA H100 80GB HBM3 (CUDA driver 13.0, NCCL 2.28.9)" or "simulated 2 x ..."
  virtual std::string description() const = 0;
  virtual int gpus() const = 0;  // GPUs in the experiment (all ranks)
  virtual int rank() const = 0;  // this process's rank (0 in single-process mode)
  // "" if the case can run here, else one line saying why not (e.g. green contexts need
  // CUDA 12.4 driver support; dma_p2p needs 2 GPUs). The driver reports it and skips the case.
  virtual std::string check(const Case& c) const = 0;
  // Allocates buffers and handles for a case; outside any timing.
  virtual void prepare(const Case& c) = 0;
  // Runs one iteration of a phase and returns its timing (the driver loops warm-up and timed
  // iterations and wraps them in NVTX ranges).
  virtual PhaseTiming run(Phase phase, const Case& c) = 0;
  // What the backend's timing machinery itself costs (events, host synchronization), measured
  // at start-up and reported with the results.
  virtual std::string timing_overhead() const = 0;
};

// The symbol each backend plugin exports. Returns nullptr and sets *error on failure.
using CreateBackendFn = Backend* (*)(const BackendOptions& options, std::string* error);
inline constexpr const char* kCreateBackendSymbol = "c3bench_create_backend";

// The body of a plugin's c3bench_create_backend: a new B, or nullptr with why in *error
// (`prefix` + the exception's message); no exception leaves the plugin.
template <typename B>
Backend* create_backend(const BackendOptions& options, std::string* error, const char* prefix) {
  try {
    return new B(options);
  } catch (const std::exception& e) {
    if (error != nullptr) *error = std::string(prefix) + e.what();
  } catch (...) {
    if (error != nullptr) *error = std::string(prefix) + "unknown error";
  }
  return nullptr;
}

}  // namespace c3::bench
