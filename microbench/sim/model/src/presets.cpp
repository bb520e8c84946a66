// Datasheet presets of the simulated node. Every number has its source next to it (and in
// preset_sources(), which docs/sim-model.md lists). "Estimate" marks a model parameter no
// datasheet gives, with the reasoning; tests/bench check the model's behaviour, never these
// values against a paper's result.
#include <stdexcept>

#include "c3/sim/model/spec.h"

namespace c3::sim::model {
namespace {

constexpr double kG = 1e9;
constexpr double kT = 1e12;
constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMiB = 1024.0 * 1024;

const char* const kH100Sheet =
    "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100), SXM5 column";
const char* const kH200Sheet =
    "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200), SXM column";
const char* const kA100Sheet =
    "NVIDIA A100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/a100), 80GB SXM column";
const char* const kMi300xSheet =
    "AMD Instinct MI300X data sheet (amd.com/en/products/accelerators/instinct/mi300/mi300x.html)";
const char* const kHopperWp = "NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022)";
const char* const kAmpereWp = "NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020)";
const char* const kMeasuredH200 =
    "measured here on an NVIDIA H200 (scripts/gpu-validate, 2026-11-30)";

// Shared model parameters; docs/sim-presets-sources.md gives the measurements behind them.
void common(GpuSpec& g) {
  g.launch_latency_ns = 4000;            // estimate: launch-to-start on an idle GPU, 4-5 us
  g.launch_api_ns = 4500;                // measured H200: 220k launches/s in a launch loop
  g.nccl_step_latency_ns = 600;          // NCCL tuning.cc: NVLink LL hardware latency per step
  g.nccl_base_latency_ns = 6600;         // NCCL tuning.cc: ring LL base latency
  g.nccl_channels = 24;                  // NCCL logs on 8x A100 and 8x H100: 24 coll channels
  g.nccl_channel_bytes_per_s = 20 * kG;  // NCCL search.cc/topo.h: ~20 GB/s per channel (bwIntra)
}

GpuSpec h100() {
  GpuSpec g;
  g.name = "H100 SXM5 80GB";
  g.sms = 132;                // Hopper whitepaper: 132 SMs per GPU
  g.clock_ghz = 1.83;         // whitepaper tensor peaks / (132 SMs x 4096 FLOP/clk)
  g.fp32_flops = 66.9 * kT;   // whitepaper table 3
  g.tf32_flops = 494.7 * kT;  // whitepaper table 3, dense
  g.fp16_flops = 989.4 * kT;  // whitepaper table 3, dense
  g.bf16_flops = 989.4 * kT;  // whitepaper table 3, dense
  g.gemm_efficiency = 0.78;   // measured H200 (same SMs, clocks): 8192^3 bf16 at 769-798 TFLOP/s
  g.hbm_bytes = 80 * kGiB;    // whitepaper: 80 GB HBM3
  g.hbm_bytes_per_s = 3.35 * kT;    // datasheet: 3.35 TB/s
  g.hbm_efficiency = 0.90;          // estimate: A100 STREAM 88%, H200 copy 90% of peak
  g.l2_bytes = 50 * kMiB;           // Hopper tuning guide: 50 MB
  g.copy_engines = 3;               // deviceQuery on H100 80GB HBM3: 3 copy engines
  g.topology = Topology::nvswitch;  // HGX: NVSwitch, full bandwidth between any pair
  g.links = 18;                     // Hopper tuning guide: 18 NVLink4 links
  g.link_bytes_per_s = 25 * kG;     // tuning guide: 50 GB/s bidirectional per link
  g.link_efficiency = 0.82;         // measured: ring busbw 365-370 of 450 GB/s (nccl #1455)
  g.link_latency_ns = 600;
  g.pcie_bytes_per_s = 64 * kG;  // whitepaper: PCIe Gen5, 64 GB/s each direction
  g.max_threads_per_sm = 2048;   // Hopper tuning guide (cc 9.0)
  g.max_blocks_per_sm = 32;
  g.green_ctx_sm_granularity = 8;  // measured H200: 75% of 132 SMs gives 104 (99 rounded to 8s)
  g.registers_per_sm = 65536;
  g.shared_bytes_per_sm = 228 * 1024;
  common(g);
  // A copy engine moves about half the achievable HBM bandwidth (it reads and writes HBM;
  // estimate). One SM streams about 75 GB/s of HBM traffic (measured on an H200, same SM: a
  // 32-CTA copy kernel moves 2.4 TB/s), so 40 SMs saturate the achievable 3.0 TB/s.
  g.copy_engine_bytes_per_s = g.hbm_bytes_per_s * g.hbm_efficiency / 2;
  g.sms_to_saturate_hbm = 40;
  return g;
}

GpuSpec h200() {
  GpuSpec g = h100();  // same GH100 configuration, NVLink and PCIe (H200 datasheet)
  g.name = "H200 SXM 141GB";
  g.hbm_bytes = 141e9;           // datasheet: 141 GB HBM3e
  g.hbm_bytes_per_s = 4.8 * kT;  // datasheet: 4.8 TB/s
  g.l2_bytes = 60 * kMiB;        // device-reported on an H200 here (KINDS.md)
  g.copy_engine_bytes_per_s = g.hbm_bytes_per_s * g.hbm_efficiency / 2;
  g.sms_to_saturate_hbm = 58;  // measured: 75 GB/s of HBM traffic per SM, 4.32 TB/s achievable
  return g;
}

GpuSpec a100() {
  GpuSpec g;
  g.name = "A100 SXM4 80GB";
  g.sms = 108;                      // Ampere whitepaper: 108 SMs
  g.clock_ghz = 1.41;               // Ampere blog table 3: boost 1410 MHz
  g.fp32_flops = 19.5 * kT;         // A100 datasheet
  g.tf32_flops = 156 * kT;          // A100 datasheet, dense
  g.fp16_flops = 312 * kT;          // A100 datasheet, dense
  g.bf16_flops = 312 * kT;          // A100 datasheet, dense
  g.gemm_efficiency = 0.80;         // estimate: 80-90% for large square bf16 GEMMs
  g.hbm_bytes = 80 * kGiB;          // A100 datasheet: 80 GB HBM2e
  g.hbm_bytes_per_s = 2.039 * kT;   // A100 datasheet: 2,039 GB/s
  g.hbm_efficiency = 0.88;          // measured: STREAM triad 1791 of 2039 GB/s
  g.l2_bytes = 40 * kMiB;           // Ampere tuning guide: 40 MB
  g.copy_engines = 3;               // deviceQuery on A100-SXM4-80GB: 3 copy engines
  g.topology = Topology::nvswitch;  // HGX A100: 6 NVSwitches, all-to-all
  g.links = 12;                     // Ampere whitepaper: 12 NVLink3 links
  g.link_bytes_per_s = 25 * kG;     // whitepaper: 25 GB/s each direction per link
  g.link_efficiency = 0.80;         // NCCL models NVLink3 at 20 of 25 GB/s (nccl #1054)
  g.link_latency_ns = 600;
  g.pcie_bytes_per_s = 31.5 * kG;  // whitepaper: PCIe Gen4 x16, 31.5 GB/s each direction
  g.max_threads_per_sm = 2048;     // Ampere tuning guide (cc 8.0)
  g.max_blocks_per_sm = 32;
  g.green_ctx_sm_granularity =
      2;  // estimate: CUDA driver API, cuDevSmResourceSplitByCount (cc 8.x)
  g.registers_per_sm = 65536;
  g.shared_bytes_per_sm = 164 * 1024;
  common(g);
  g.copy_engine_bytes_per_s = g.hbm_bytes_per_s * g.hbm_efficiency / 2;
  g.sms_to_saturate_hbm = 27;  // Little's law with A100's bandwidth (estimate)
  return g;
}

GpuSpec mi300x() {
  GpuSpec g;
  g.name = "MI300X 192GB";
  g.sms = 304;                   // ROCm MI300 microarchitecture: 304 CUs
  g.clock_ghz = 2.1;             // 1307.4 TFLOPS / (304 CUs x 2048 FLOP/clk)
  g.fp32_flops = 163.4 * kT;     // ROCm MI300 table: vector FP32 (packed)
  g.tf32_flops = 653.7 * kT;     // ROCm MI300 table
  g.fp16_flops = 1307.4 * kT;    // ROCm MI300 table: matrix FP16
  g.bf16_flops = 1307.4 * kT;    // ROCm MI300 table: matrix BF16
  g.gemm_efficiency = 0.47;      // measured (SemiAnalysis, Dec 2024): ~620 TFLOP/s bf16
  g.hbm_bytes = 192 * kGiB;      // ROCm specs: 192 GB HBM3
  g.hbm_bytes_per_s = 5.3 * kT;  // ROCm MI300: 5.3 TB/s peak
  g.hbm_efficiency = 0.80;       // estimate (chiplet NUMA effects; low confidence)
  g.l2_bytes = 32 * kMiB;        // ROCm specs: 4 MB L2 per XCD (plus 256 MB Infinity Cache)
  g.copy_engines = 2;            // estimate: SDMA engine count not found
  g.topology = Topology::mesh;   // ROCm MI300: 7 links form a fully connected 8-GPU system
  g.links = 7;
  g.link_bytes_per_s = 64 * kG;  // AMD: 128 GB/s bidirectional per link
  g.link_efficiency = 0.75;      // AMD ROCm blog: ~48 of 64 GB/s usable per link
  g.link_latency_ns = 800;
  g.pcie_bytes_per_s = 63 * kG;       // PCIe Gen5 x16 arithmetic
  g.max_threads_per_sm = 2048;        // 32 waves x 64 (LLVM AMDGPU: 8 waves x 4 SIMDs)
  g.max_blocks_per_sm = 16;           // LLVM AMDGPU getMaxWorkGroupsPerCU (multi-wave groups)
  g.registers_per_sm = 131072;        // 512 KiB VGPR file per CU
  g.shared_bytes_per_sm = 64 * 1024;  // ROCm specs: 64 KiB LDS
  common(g);
  g.nccl_channels = 28;                  // estimate: RCCL spreads rings over the 7 links
  g.nccl_channel_bytes_per_s = 16 * kG;  // estimate: 28 channels fill 7 x 48 GB/s
  g.copy_engine_bytes_per_s = g.hbm_bytes_per_s * g.hbm_efficiency / 2;
  g.sms_to_saturate_hbm = 140;  // Little's law with MI300X's bandwidth (estimate)
  return g;
}

}  // namespace

NodeSpec preset(const std::string& name, int gpus) {
  if (gpus < 1 || gpus > 64) {
    throw std::invalid_argument("--gpus " + std::to_string(gpus) +
                                ": a simulated node has 1 to 64 GPUs");
  }
  NodeSpec n;
  n.preset = name;
  n.gpus = gpus;
  if (name == "h100")
    n.gpu = h100();
  else if (name == "h200")
    n.gpu = h200();
  else if (name == "a100")
    n.gpu = a100();
  else if (name == "mi300x")
    n.gpu = mi300x();
  else
    throw std::invalid_argument("--preset '" + name +
                                "' is not a preset (h100, h200, a100, mi300x)");
  return n;
}

std::vector<std::string> preset_names() {
  return {"h100", "h200", "a100", "mi300x"};
}

const std::vector<Source>& preset_sources() {
  // The full list, with quotes and links, is docs/sim-presets-sources.md.
  static const std::vector<Source> sources = {
      {"h100", "132 SMs, 66.9/494.7/989.4/989.4 TFLOPS fp32/tf32/fp16/bf16 dense", "", kHopperWp},
      {"h100", "80 GB at 3.35 TB/s; PCIe Gen5 64 GB/s per direction", "", kH100Sheet},
      {"h100", "18 NVLink4 links, 25 GB/s per direction each; 50 MB L2; cc 9.0 limits", "",
       "NVIDIA Hopper tuning guide"},
      {"h100", "3 copy engines", "", "deviceQuery on H100 80GB HBM3"},
      {"h100", "ring AllReduce busbw 365-370 GB/s on 8 GPUs (link efficiency 0.82)", "",
       "NVIDIA/nccl issue 1455"},
      {"h200", "141 GB at 4.8 TB/s; compute, NVLink, PCIe as H100", "", kH200Sheet},
      {"h200", "132 SMs, 60 MB L2, bf16 GEMM 769-798 TFLOP/s, 220k launches/s", "", kMeasuredH200},
      {"a100", "108 SMs, 1410 MHz, 12 NVLink3 links at 25 GB/s, PCIe Gen4 31.5 GB/s", "",
       kAmpereWp},
      {"a100", "19.5/156/312/312 TFLOPS, 80 GB at 2,039 GB/s", "", kA100Sheet},
      {"a100", "STREAM triad 1791 GB/s; 3 copy engines", "",
       "NVIDIA-STREAM and deviceQuery outputs"},
      {"mi300x", "304 CUs, 163.4/653.7/1307.4/1307.4 TFLOPS, 192 GB at 5.3 TB/s, 7 links", "",
       std::string(kMi300xSheet) +
           "; AMD ROCm docs: MI300 microarchitecture and GPU specifications"},
      {"mi300x", "128 GB/s per link bidirectional, ~48 GB/s usable per direction", "",
       "AMD ROCm blog: Understanding RCCL Bandwidth and xGMI Performance on MI300X"},
      {"all", "24 channels, ~20 GB/s per channel, LL latency 6.6 us + 0.6 us per step", "",
       "NVIDIA/nccl src/graph/tuning.cc, search.cc, topo.h; NCCL logs"},
  };
  return sources;
}

}  // namespace c3::sim::model
