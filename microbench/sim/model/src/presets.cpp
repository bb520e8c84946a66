// Datasheet presets of the simulated node. Every number has its source next to it (and in
// preset_sources(), which docs/sim-model.md lists). "Estimate" marks a model parameter no
// datasheet gives, with the reasoning; tests/bench check the model's behaviour, never these
// values against a paper's result.
#include <stdexcept>

#include "c3/sim/spec.h"

namespace c3::sim {
namespace {

constexpr double G = 1e9;
constexpr double T = 1e12;
constexpr double GiB = 1024.0 * 1024 * 1024;
constexpr double MiB = 1024.0 * 1024;

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
const char* const kCudaGuide =
    "CUDA C++ Programming Guide, table 'Technical Specifications per Compute Capability'";
const char* const kMeasuredH200 =
    "measured here on an NVIDIA H200 (scripts/gpu-validate, 2026-11-30)";

// Shared model parameters (estimates; docs/sim-model.md gives the reasoning).
void common_estimates(GpuSpec& g) {
  // cuBLAS reaches about 70-80% of dense tensor peak on large square GEMMs; 0.75 is the middle.
  g.gemm_efficiency = 0.75;
  // STREAM-like kernels reach about 90% of peak HBM bandwidth on recent GPUs.
  g.hbm_efficiency = 0.90;
  // Large NVLink/IF transfers reach about 80-85% of the raw link rate (protocol overhead).
  g.link_efficiency = 0.85;
  g.launch_latency_ns = 4000;
  g.nccl_step_latency_ns = 1500;
}

GpuSpec h100() {
  GpuSpec g;
  g.name = "H100 SXM5 80GB";
  g.sms = 132;                 // Hopper whitepaper: H100 SXM5 has 132 SMs
  g.clock_ghz = 1.98;          // Hopper whitepaper: max boost clock, SXM5
  g.fp32_flops = 67 * T;       // datasheet: FP32 67 TFLOPS
  g.tf32_flops = 494.5 * T;    // datasheet: TF32 989 TFLOPS with sparsity -> half dense
  g.fp16_flops = 989.5 * T;    // datasheet: FP16 1,979 TFLOPS with sparsity -> half dense
  g.bf16_flops = 989.5 * T;    // datasheet: BF16 1,979 TFLOPS with sparsity -> half dense
  g.hbm_bytes = 80 * GiB;      // datasheet: 80GB
  g.hbm_bytes_per_s = 3.35 * T;  // datasheet: 3.35TB/s
  g.l2_bytes = 50 * MiB;       // Hopper whitepaper: 50 MB L2
  g.copy_engines = 2;          // estimate: CUDA asyncEngineCount of datacenter GPUs (2: both directions)
  g.copy_engine_bytes_per_s = 0;  // set below
  g.topology = Topology::nvswitch;  // HGX H100 8-GPU: NVSwitch, all-to-all
  g.links = 18;                // datasheet: NVLink 900GB/s; whitepaper: 18 NVLink4 links
  g.link_bytes_per_s = 25 * G;  // 900 GB/s bidirectional / 18 links / 2 directions
  g.link_latency_ns = 1000;
  g.pcie_bytes_per_s = 64 * G;  // datasheet: PCIe Gen5 128GB/s (both directions)
  g.max_threads_per_sm = 2048;  // CUDA guide, cc 9.0
  g.max_blocks_per_sm = 32;
  g.registers_per_sm = 65536;
  g.shared_bytes_per_sm = 228 * 1024;
  common_estimates(g);
  // A copy engine moves about half the HBM bandwidth (it reads and writes HBM); estimate.
  g.copy_engine_bytes_per_s = g.hbm_bytes_per_s * g.hbm_efficiency / 2;
  // Little's law: achievable bandwidth x ~600 ns memory latency ~ 1.8 MB in flight; an SM keeps
  // about 48 KB in flight -> about a third of the SMs saturate HBM (estimate).
  g.sms_to_saturate_hbm = 44;
  g.launch_api_ns = 4500;  // measured H200 (same Hopper host path): 220k launches/s
  // NCCL on NVSwitch uses 16-32 channels; 16 CTAs must fill 450 GB/s x 0.85 per direction, so a
  // channel moves about 24 GB/s (estimate from the channel count that saturates the link).
  g.nccl_channels = 16;
  g.nccl_channel_bytes_per_s = 24 * G;
  return g;
}

GpuSpec h200() {
  GpuSpec g = h100();
  g.name = "H200 SXM 141GB";
  g.hbm_bytes = 141e9;           // datasheet: 141GB
  g.hbm_bytes_per_s = 4.8 * T;   // datasheet: 4.8TB/s
  // datasheet: same compute rates, NVLink 900GB/s and PCIe Gen5 as H100 SXM5
  g.copy_engine_bytes_per_s = g.hbm_bytes_per_s * g.hbm_efficiency / 2;
  g.sms_to_saturate_hbm = 63;  // Little's law as for H100, scaled with the bandwidth (estimate)
  return g;
}

GpuSpec a100() {
  GpuSpec g;
  g.name = "A100 SXM4 80GB";
  g.sms = 108;                 // Ampere whitepaper: A100 has 108 SMs
  g.clock_ghz = 1.41;          // Ampere whitepaper: boost clock
  g.fp32_flops = 19.5 * T;     // datasheet: FP32 19.5 TFLOPS
  g.tf32_flops = 156 * T;      // datasheet: TF32 156 TFLOPS (312 with sparsity)
  g.fp16_flops = 312 * T;      // datasheet: FP16 312 TFLOPS (624 with sparsity)
  g.bf16_flops = 312 * T;      // datasheet: BF16 312 TFLOPS (624 with sparsity)
  g.hbm_bytes = 80 * GiB;      // datasheet: 80GB HBM2e
  g.hbm_bytes_per_s = 2.039 * T;  // datasheet: 2,039 GB/s
  g.l2_bytes = 40 * MiB;       // Ampere whitepaper: 40 MB L2
  g.copy_engines = 2;          // estimate, as for H100
  g.topology = Topology::nvswitch;  // HGX A100 8-GPU: NVSwitch
  g.links = 12;                // Ampere whitepaper: 12 NVLink3 links, 600 GB/s total
  g.link_bytes_per_s = 25 * G;  // 600 GB/s / 12 links / 2 directions
  g.link_latency_ns = 1000;
  g.pcie_bytes_per_s = 32 * G;  // datasheet: PCIe Gen4 64GB/s (both directions)
  g.max_threads_per_sm = 2048;  // CUDA guide, cc 8.0
  g.max_blocks_per_sm = 32;
  g.registers_per_sm = 65536;
  g.shared_bytes_per_sm = 164 * 1024;
  common_estimates(g);
  g.copy_engine_bytes_per_s = g.hbm_bytes_per_s * g.hbm_efficiency / 2;
  g.sms_to_saturate_hbm = 27;  // Little's law as for H100 with A100's bandwidth (estimate)
  g.launch_api_ns = 4500;
  g.nccl_channels = 12;  // 12 CTAs fill 300 GB/s x 0.85 at the same per-channel rate (estimate)
  g.nccl_channel_bytes_per_s = 24 * G;
  return g;
}

GpuSpec mi300x() {
  GpuSpec g;
  g.name = "MI300X 192GB";
  g.sms = 304;                 // data sheet: 304 compute units
  g.clock_ghz = 2.1;           // data sheet: peak engine clock 2100 MHz
  g.fp32_flops = 163.4 * T;    // data sheet: FP32 vector 163.4 TFLOPS
  g.tf32_flops = 653.7 * T;    // data sheet: TF32 matrix 653.7 TFLOPS
  g.fp16_flops = 1307.4 * T;   // data sheet: FP16 matrix 1307.4 TFLOPS (dense)
  g.bf16_flops = 1307.4 * T;   // data sheet: BF16 matrix 1307.4 TFLOPS (dense)
  g.hbm_bytes = 192 * GiB;     // data sheet: 192 GB HBM3
  g.hbm_bytes_per_s = 5.3 * T;  // data sheet: 5.3 TB/s
  g.l2_bytes = 256 * MiB;      // data sheet: 256 MB Infinity Cache
  g.copy_engines = 2;          // estimate (SDMA engines used per direction)
  g.topology = Topology::mesh;  // 8-GPU platform: every GPU linked to the 7 others
  g.links = 7;                 // data sheet: 7 Infinity Fabric links
  g.link_bytes_per_s = 64 * G;  // data sheet: 128 GB/s peak per link (both directions)
  g.link_latency_ns = 1500;
  g.pcie_bytes_per_s = 64 * G;  // data sheet: PCIe Gen5 x16 (128 GB/s both directions)
  // CDNA3: up to 2048 work-items per CU, 64 KB LDS per CU, 512 KB VGPR file per CU.
  g.max_threads_per_sm = 2048;
  g.max_blocks_per_sm = 32;
  g.registers_per_sm = 131072;
  g.shared_bytes_per_sm = 64 * 1024;
  common_estimates(g);
  g.copy_engine_bytes_per_s = g.hbm_bytes_per_s * g.hbm_efficiency / 2;
  g.sms_to_saturate_hbm = 140;  // Little's law with MI300X's bandwidth (estimate)
  g.launch_api_ns = 5000;
  g.nccl_channels = 16;  // RCCL: channels cover the 7 links (estimate)
  g.nccl_channel_bytes_per_s = 24 * G;
  return g;
}

}  // namespace

NodeSpec preset(const std::string& name, int gpus) {
  if (gpus < 1 || gpus > 64) {
    throw std::invalid_argument("--gpus " + std::to_string(gpus) + ": a simulated node has 1 to 64 GPUs");
  }
  NodeSpec n;
  n.preset = name;
  n.gpus = gpus;
  if (name == "h100") n.gpu = h100();
  else if (name == "h200") n.gpu = h200();
  else if (name == "a100") n.gpu = a100();
  else if (name == "mi300x") n.gpu = mi300x();
  else throw std::invalid_argument("--preset '" + name + "' is not a preset (h100, h200, a100, mi300x)");
  return n;
}

std::vector<std::string> preset_names() { return {"h100", "h200", "a100", "mi300x"}; }

const std::vector<Source>& preset_sources() {
  static const std::vector<Source> sources = {
      {"h100", "SMs, boost clock, L2, NVLink links", "132, 1.98 GHz, 50 MB, 18", kHopperWp},
      {"h100", "FP32 / TF32 / FP16 / BF16 dense", "67 / 494.5 / 989.5 / 989.5 TFLOPS",
       std::string(kH100Sheet) + " (tensor figures with sparsity halved)"},
      {"h100", "HBM", "80 GB, 3.35 TB/s", kH100Sheet},
      {"h100", "NVLink, PCIe", "900 GB/s total (25 GB/s per link per direction), Gen5 128 GB/s", kH100Sheet},
      {"h100", "per-SM limits", "2048 threads, 32 blocks, 64K registers, 228 KB shared", kCudaGuide},
      {"h200", "HBM", "141 GB, 4.8 TB/s", kH200Sheet},
      {"h200", "compute, NVLink, PCIe", "as H100 SXM5", kH200Sheet},
      {"h200", "SMs", "132", kMeasuredH200},
      {"h100, h200", "launch API cost", "4.5 us (220k launches/s in a loop)", kMeasuredH200},
      {"a100", "SMs, boost clock, L2, NVLink links", "108, 1.41 GHz, 40 MB, 12", kAmpereWp},
      {"a100", "FP32 / TF32 / FP16 / BF16 dense", "19.5 / 156 / 312 / 312 TFLOPS", kA100Sheet},
      {"a100", "HBM", "80 GB, 2,039 GB/s", kA100Sheet},
      {"a100", "NVLink, PCIe", "600 GB/s total, Gen4 64 GB/s", kA100Sheet},
      {"a100", "per-SM limits", "2048 threads, 32 blocks, 64K registers, 164 KB shared", kCudaGuide},
      {"mi300x", "CUs, peak clock, Infinity Cache", "304, 2.1 GHz, 256 MB", kMi300xSheet},
      {"mi300x", "FP32 vector / TF32 / FP16 / BF16 dense", "163.4 / 653.7 / 1307.4 / 1307.4 TFLOPS", kMi300xSheet},
      {"mi300x", "HBM", "192 GB, 5.3 TB/s", kMi300xSheet},
      {"mi300x", "Infinity Fabric, PCIe", "7 links x 128 GB/s, Gen5 x16", kMi300xSheet},
      {"all", "GEMM efficiency 0.75, HBM efficiency 0.90, link efficiency 0.85, copy engine = half of HBM, SMs to saturate HBM (Little's law), NCCL channels and per-channel rate, launch latency 4 us, NCCL step latency 1.5 us",
       "see docs/sim-model.md", "estimates (model parameters), reasoning in docs/sim-model.md"},
  };
  return sources;
}

}  // namespace c3::sim
