// The simulated node's hardware: per-GPU resources and the interconnect, from datasheet presets
// (presets.cpp cites a source for every number; docs/sim-model.md explains the model).
#pragma once

#include <string>
#include <vector>

namespace c3::sim::model {

enum class Topology {
  nvswitch,  // every GPU reaches every other at its full link bandwidth (HGX with NVSwitch)
  mesh,      // fully connected point-to-point links (MI300X Infinity Fabric): one link per peer
};

// All rates are per second in the spec; the engine converts to per nanosecond.
struct GpuSpec {
  std::string name;
  int sms = 0;                 // streaming multiprocessors (CUs on AMD)
  double clock_ghz = 0;        // boost clock
  double fp32_flops = 0;       // dense, non-tensor
  double tf32_flops = 0;       // dense tensor
  double fp16_flops = 0;       // dense tensor
  double bf16_flops = 0;       // dense tensor
  double gemm_efficiency = 0;  // achievable fraction of tensor peak for large GEMMs
  double hbm_bytes = 0;
  double hbm_bytes_per_s = 0;  // peak
  double hbm_efficiency = 0;   // achievable fraction of peak (STREAM-like)
  double l2_bytes = 0;
  // SMs a bandwidth-bound kernel needs to reach the achievable HBM bandwidth: below that, its
  // throughput scales with the SMs it has.
  double sms_to_saturate_hbm = 0;
  int copy_engines = 0;
  double copy_engine_bytes_per_s = 0;  // one engine
  Topology topology = Topology::nvswitch;
  int links = 0;                // NVLink / Infinity Fabric links per GPU
  double link_bytes_per_s = 0;  // one link, one direction
  double link_efficiency = 0;   // achievable fraction for large transfers
  double link_latency_ns = 0;   // one hop, small message
  double pcie_bytes_per_s = 0;  // host link, one direction
  // Occupancy limits per SM (CUDA compute capability tables).
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int green_ctx_sm_granularity = 1;  // a green context's SM count is rounded up to this
  int registers_per_sm = 0;
  int shared_bytes_per_sm = 0;
  // Host and launch costs.
  double launch_api_ns = 0;      // host time of one kernel launch call
  double launch_latency_ns = 0;  // launch call to kernel start on an idle GPU
  // NCCL on this platform.
  int nccl_channels = 0;                // default channels (one CTA on one SM each)
  double nccl_channel_bytes_per_s = 0;  // what one channel moves over the link
  double nccl_step_latency_ns = 0;      // per algorithm step (LL small messages)
  double nccl_base_latency_ns = 0;      // per collective call

  // Aggregate link bandwidth of one GPU in one direction (all links, achievable).
  double link_total_bytes_per_s() const { return links * link_bytes_per_s * link_efficiency; }
};

struct NodeSpec {
  std::string preset;  // "h100", "h200", "a100", "mi300x" or "custom"
  GpuSpec gpu;
  int gpus = 1;
};

// A named preset with `gpus` GPUs; throws std::invalid_argument naming the preset and the
// valid names when unknown.
NodeSpec preset(const std::string& name, int gpus);
std::vector<std::string> preset_names();

// Where each preset number comes from (for docs/sim-model.md and --help).
struct Source {
  std::string preset;
  std::string what;
  std::string note;
  std::string source;
};
const std::vector<Source>& preset_sources();

}  // namespace c3::sim::model
