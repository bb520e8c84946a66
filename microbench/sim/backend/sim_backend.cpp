// c3bench's `sim` backend (libc3bench-sim.so): runs cases on the simulated node. Kernels and
// copies go through the node's runtime (c3/sim/gpu/node.h); collectives through the simulated NCCL
// (libnccl.so.2 next to it) by their nccl.h names, so the collector interposes them exactly as
// it interposes the real NCCL. One host thread drives every simulated GPU (NCCL groups span the
// ranks), as a single-process multi-GPU program does.
#include <nccl.h>
#include <nvtx3/nvToolsExtCudaRt.h>

#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "c3/bench/backend.h"
#include "c3/sim/gpu/fixed_time.h"
#include "c3/sim/gpu/node.h"
#include "c3/sim/model/cost.h"

namespace c3::bench::sim_backend {
namespace {

namespace gpu = c3::sim::gpu;
namespace model = c3::sim::model;

model::Precision precision(DType t) {
  switch (t) {
    case DType::fp32:
      return model::Precision::fp32;
    case DType::fp16:
      return model::Precision::fp16;
    case DType::bf16:
      return model::Precision::bf16;
  }
  return model::Precision::bf16;
}

void check_nccl(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) {
    throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r) + " (" +
                             ncclGetLastError(nullptr) + ")");
  }
}

// Distinct, never-dereferenced buffer addresses: the simulated NCCL only compares them.
void* fake_buffer(int gpu, int which) {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an address value only, never dereferenced
  return reinterpret_cast<void*>(static_cast<uintptr_t>(0x100000000ULL) *
                                     static_cast<uintptr_t>(gpu + 1) +
                                 static_cast<uintptr_t>(which) * 0x1000);
}

class SimBackend final : public Backend {
 public:
  explicit SimBackend(const BackendOptions& o) : gpus_(o.gpus) {
    if (o.world_size > 0) {
      throw std::invalid_argument(
          "the sim backend simulates the whole node in one process: use --gpus N, not several "
          "ranks");
    }
    gpu::start(o.preset, o.gpus);
    spec_ = gpu::spec();
  }

  ~SimBackend() override {
    for (auto& [key, set] : comms_) {
      for (ncclComm_t c : set) ncclCommDestroy(c);
    }
  }
  SimBackend(const SimBackend&) = delete;
  SimBackend& operator=(const SimBackend&) = delete;

  std::string name() const override { return "sim"; }
  bool simulated() const override { return true; }
  std::string description() const override {
    return "simulated " + std::to_string(gpus_) + " x " + spec_.gpu.name + " (preset " +
           spec_.preset + ", " +
           (spec_.gpu.topology == model::Topology::nvswitch ? "NVSwitch"
                                                            : "fully connected links") +
           ")";
  }
  int gpus() const override { return gpus_; }
  int rank() const override { return 0; }
  std::string timing_overhead() const override { return "none (simulated time: events are exact)"; }

  std::string check(const Case& c) const override {
    const Knobs& k = c.knobs;
    if (k.chunks < 1) return "chunks must be at least 1";
    if (k.sm_partition_pct < 0 || k.sm_partition_pct >= 100)
      return "--sm-partition must be 1 to 99 (% of SMs for compute)";
    if (k.sm_partition_pct > 0 && compute_sms(k.sm_partition_pct) >= spec_.gpu.sms) {
      return "sm_partition_pct=" + std::to_string(k.sm_partition_pct) + ": " +
             std::to_string(compute_sms(k.sm_partition_pct)) + " of " +
             std::to_string(spec_.gpu.sms) +
             " SMs for compute (green contexts come in multiples of " +
             std::to_string(spec_.gpu.green_ctx_sm_granularity) + ") leaves none for communication";
    }
    if (k.pipelined && !(c.compute && c.comm))
      return "a chunked schedule needs both a compute and a communication op";
    if (c.compute && c.compute->kind == ComputeKind::gemm && c.compute->m < k.chunks) {
      return "GEMM M=" + std::to_string(c.compute->m) + " cannot be split into " +
             std::to_string(k.chunks) + " chunks";
    }
    if (c.comm) {
      const CommOp& m = *c.comm;
      if ((m.kind == CommKind::dma_p2p || (m.kind == CommKind::sm_copy && m.peer)) && gpus_ < 2) {
        return std::string(comm_kind_name(m.kind)) +
               " copies to the next GPU: needs --gpus 2 or more";
      }
      const int64_t unit = int64_t{4096} * k.chunks * gpus_;
      if ((m.kind == CommKind::allgather || m.kind == CommKind::reducescatter ||
           m.kind == CommKind::alltoall) &&
          m.bytes % unit != 0) {
        return "size " + format_size(m.bytes) + " does not split evenly over " +
               std::to_string(gpus_) + " ranks and " + std::to_string(k.chunks) + " chunks";
      }
      if (m.bytes < int64_t{4096} * k.chunks)
        return "size too small for " + std::to_string(k.chunks) + " chunks";
    }
    return "";
  }

  void prepare(const Case& c) override {
    streams(c.knobs);
    if (c.comm && is_collective(c.comm->kind)) comms(c.knobs);
  }

  PhaseTiming run(Phase phase, const Case& c) override {
    const Knobs& k = c.knobs;
    const auto& st = streams(k);
    const int chunks = std::max(1, k.chunks);
    struct Marks {
      void *comp0 = nullptr, *comp1 = nullptr, *comm0 = nullptr, *comm1 = nullptr;
    };
    std::vector<Marks> marks(static_cast<size_t>(gpus_));
    auto compute_chunk = [&](int g, int i, void* stream) {
      launch_compute(g, c.compute->chunk(i, chunks), stream);
    };
    auto comm_chunk = [&](int i, const std::vector<void*>& on) {
      launch_comm(c.comm->chunk(i, chunks), k, on);
    };
    std::vector<void*> comp_streams, comm_streams;
    for (int g = 0; g < gpus_; ++g) {
      comp_streams.push_back(st[static_cast<size_t>(g)].first);
      comm_streams.push_back(st[static_cast<size_t>(g)].second);
    }
    auto record_all = [&](const std::vector<void*>& on, void* Marks::*field) {
      for (int g = 0; g < gpus_; ++g)
        marks[static_cast<size_t>(g)].*field = gpu::event_record(on[static_cast<size_t>(g)]);
    };
    // Each GPU's marks sit right around its own work: one host thread drives every simulated
    // GPU, so marks recorded for all GPUs up front would count the launches of the others.
    auto computes = [&](const std::vector<void*>& on, void* Marks::*start, void* Marks::*end) {
      for (int g = 0; g < gpus_; ++g) {
        void* s = on[static_cast<size_t>(g)];
        marks[static_cast<size_t>(g)].*start = gpu::event_record(s);
        for (int i = 0; i < chunks; ++i) compute_chunk(g, i, s);
        marks[static_cast<size_t>(g)].*end = gpu::event_record(s);
      }
    };
    auto comms_all = [&](const std::vector<void*>& on, void* Marks::*start, void* Marks::*end) {
      if (!is_collective(c.comm->kind)) {  // copies: per GPU, like computes
        for (int g = 0; g < gpus_; ++g) {
          const auto gi = static_cast<size_t>(g);
          marks[gi].*start = gpu::event_record(on[gi]);
          for (int i = 0; i < chunks; ++i) launch_copy(g, c.comm->chunk(i, chunks), k, on[gi]);
          marks[gi].*end = gpu::event_record(on[gi]);
        }
        return;
      }
      record_all(on, start);
      for (int i = 0; i < chunks; ++i) comm_chunk(i, on);
      record_all(on, end);
    };

    switch (phase) {
      case Phase::compute_alone:
        computes(comp_streams, &Marks::comp0, &Marks::comp1);
        break;
      case Phase::comm_alone:
        comms_all(comm_streams, &Marks::comm0, &Marks::comm1);
        break;
      case Phase::serial:
        computes(comp_streams, &Marks::comp0, &Marks::comp1);
        comms_all(comp_streams, &Marks::comm0, &Marks::comm1);
        break;
      case Phase::concurrent:
        if (k.pipelined) {
          // Compute chunk i, then its communication once it is done (FiCCO-style pipeline). The
          // communication's start is taken after its first wait, as the cuda backend does.
          for (int i = 0; i < chunks; ++i) {
            for (int g = 0; g < gpus_; ++g) {
              const auto gi = static_cast<size_t>(g);
              if (i == 0) marks[gi].comp0 = gpu::event_record(comp_streams[gi]);
              compute_chunk(g, i, comp_streams[gi]);
              void* done = gpu::event_record(comp_streams[gi]);
              if (i + 1 == chunks) marks[gi].comp1 = done;
              gpu::stream_wait_event(comm_streams[gi], done);
              if (i == 0) marks[gi].comm0 = gpu::event_record(comm_streams[gi]);
            }
            comm_chunk(i, comm_streams);
          }
          record_all(comm_streams, &Marks::comm1);
        } else if (!is_collective(c.comm->kind)) {
          // Copies are per GPU: each GPU's two launches back to back, as one host thread per
          // GPU would issue them (the cuda backend has one).
          for (int g = 0; g < gpus_; ++g) {
            const auto gi = static_cast<size_t>(g);
            auto comp = [&] {
              marks[gi].comp0 = gpu::event_record(comp_streams[gi]);
              for (int i = 0; i < chunks; ++i) compute_chunk(g, i, comp_streams[gi]);
              marks[gi].comp1 = gpu::event_record(comp_streams[gi]);
            };
            auto comm = [&] {
              marks[gi].comm0 = gpu::event_record(comm_streams[gi]);
              for (int i = 0; i < chunks; ++i)
                launch_copy(g, c.comm->chunk(i, chunks), k, comm_streams[gi]);
              marks[gi].comm1 = gpu::event_record(comm_streams[gi]);
            };
            if (k.order == Knobs::Order::compute_first) {
              comp();
              comm();
            } else {
              comm();
              comp();
            }
          }
        } else if (k.order == Knobs::Order::compute_first) {
          computes(comp_streams, &Marks::comp0, &Marks::comp1);
          comms_all(comm_streams, &Marks::comm0, &Marks::comm1);
        } else {
          comms_all(comm_streams, &Marks::comm0, &Marks::comm1);
          computes(comp_streams, &Marks::comp0, &Marks::comp1);
        }
        break;
    }
    PhaseTiming t;
    for (const Marks& m : marks) {
      double lo = 1e300, hi = -1e300;
      auto span = [&](void* a, void* b) -> double {
        if (a == nullptr || b == nullptr) return 0;
        const double s = static_cast<double>(gpu::event_synchronize(a));
        const double e = static_cast<double>(gpu::event_synchronize(b));
        lo = std::min(lo, s);
        hi = std::max(hi, e);
        return e - s;
      };
      t.comp_ns = std::max(t.comp_ns, span(m.comp0, m.comp1));
      t.comm_ns = std::max(t.comm_ns, span(m.comm0, m.comm1));
      if (hi > lo) t.wall_ns = std::max(t.wall_ns, hi - lo);
    }
    return t;
  }

 private:
  // Compute and comm streams of every GPU for a priority/partition setting.
  const std::vector<std::pair<void*, void*>>& streams(const Knobs& k) {
    const auto key = std::make_pair(static_cast<int>(k.priority), k.sm_partition_pct);
    auto it = streams_.find(key);
    if (it != streams_.end()) return it->second;
    // CUDA: a lower number is a higher priority.
    const int comp_prio = k.priority == Knobs::Priority::comm_low ? -1 : 0;
    const int comm_prio = k.priority == Knobs::Priority::comm_high ? -1 : 0;
    std::vector<std::pair<void*, void*>> v;
    for (int g = 0; g < gpus_; ++g) {
      // Green contexts as the cuda backend makes them: the compute share (rounded up to the
      // driver's granularity) from SM 0, the rest for communication.
      int comp_part = -1, comm_part = -1;
      if (k.sm_partition_pct > 0) {
        const int n = compute_sms(k.sm_partition_pct);
        comp_part = gpu::partition_create(g, n, 0);
        comm_part = gpu::partition_create(g, spec_.gpu.sms - n, n);
      }
      void* comp = gpu::stream_create(g, comp_prio, comp_part);
      void* comm = gpu::stream_create(g, comm_prio, comm_part);
      nvtxNameCudaStreamA(static_cast<cudaStream_t>(comp),
                          ("compute gpu" + std::to_string(g)).c_str());
      nvtxNameCudaStreamA(static_cast<cudaStream_t>(comm),
                          ("comm gpu" + std::to_string(g)).c_str());
      v.emplace_back(comp, comm);
    }
    return streams_.emplace(key, std::move(v)).first->second;
  }

  // Communicators over all GPUs for a channel setting.
  const std::vector<ncclComm_t>& comms(const Knobs& k) {
    const auto key = std::make_tuple(k.nchannels, k.min_ctas, k.max_ctas);
    auto it = comms_.find(key);
    if (it != comms_.end()) return it->second;
    ncclUniqueId id;
    check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    int lo = k.min_ctas, hi = k.max_ctas;
    if (k.nchannels > 0) lo = hi = k.nchannels;
    if (lo > 0) config.minCTAs = lo;
    if (hi > 0) config.maxCTAs = hi;
    std::vector<ncclComm_t> v(static_cast<size_t>(gpus_));
    check_nccl(ncclGroupStart(), "ncclGroupStart");
    for (int g = 0; g < gpus_; ++g) {
      c3fake_set_device(g);
      check_nccl(ncclCommInitRankConfig(&v[static_cast<size_t>(g)], gpus_, id, g, &config),
                 "ncclCommInitRankConfig");
    }
    check_nccl(ncclGroupEnd(), "ncclGroupEnd");
    c3fake_set_device(0);
    return comms_.emplace(key, std::move(v)).first->second;
  }

  int compute_sms(int pct) const {
    const int gran = std::max(1, spec_.gpu.green_ctx_sm_granularity);
    const int want = std::max(1, (spec_.gpu.sms * pct + 99) / 100);
    return (want + gran - 1) / gran * gran;
  }

  void launch_compute(int g, const ComputeOp& op, void* stream) {
    gpu::Kernel kern;
    kern.block[0] = 256;
    switch (op.kind) {
      case ComputeKind::gemm:
        kern.demand = model::gemm(spec_.gpu, g, op.m, op.n, op.k, precision(op.dtype));
        kern.name = std::string("c3sim_gemm_") + dtype_name(op.dtype) + "_" + std::to_string(op.m) +
                    "x" + std::to_string(op.n) + "x" + std::to_string(op.k);
        kern.grid[0] = static_cast<unsigned>((op.m + 127) / 128);
        kern.grid[1] = static_cast<unsigned>((op.n + 255) / 256);
        kern.block[0] = 384;
        kern.registers = 168;
        kern.dynamic_smem = 213 * 1024;
        break;
      case ComputeKind::triad:
        kern.demand = model::triad(spec_.gpu, g, op.bytes);
        kern.name = "c3sim_triad";
        kern.grid[0] = static_cast<unsigned>(spec_.gpu.sms * 8);  // full occupancy, as on a GPU
        break;
      case ComputeKind::fma:
        kern.demand = model::fma_loop(spec_.gpu, g, static_cast<double>(op.target_ns));
        kern.name = "c3sim_fma_loop";
        kern.grid[0] = static_cast<unsigned>(spec_.gpu.sms * 8);
        break;
    }
    gpu::launch(stream, kern);
  }

  void launch_comm(const CommOp& op, const Knobs& k, const std::vector<void*>& on) {
    const int n = gpus_;
    if (is_collective(op.kind)) {
      const auto& cs = comms(k);
      const ncclDataType_t t = static_cast<ncclDataType_t>(nccl_datatype(op.dtype));
      const size_t count = static_cast<size_t>(op.count(n));
      check_nccl(ncclGroupStart(), "ncclGroupStart");
      for (int g = 0; g < n; ++g) {
        auto s = static_cast<cudaStream_t>(on[static_cast<size_t>(g)]);
        ncclComm_t comm = cs[static_cast<size_t>(g)];
        void* send = fake_buffer(g, 1);
        void* recv = fake_buffer(g, 2);
        switch (op.kind) {
          case CommKind::allreduce:
            check_nccl(ncclAllReduce(send, recv, count, t, ncclSum, comm, s), "ncclAllReduce");
            break;
          case CommKind::allgather:
            check_nccl(ncclAllGather(send, recv, count, t, comm, s), "ncclAllGather");
            break;
          case CommKind::reducescatter:
            check_nccl(ncclReduceScatter(send, recv, count, t, ncclSum, comm, s),
                       "ncclReduceScatter");
            break;
          case CommKind::alltoall:
            check_nccl(ncclAlltoAll(send, recv, count, t, comm, s), "ncclAlltoAll");
            break;
          case CommKind::sendrecv:
            check_nccl(ncclSend(send, count, t, (g + 1) % n, comm, s), "ncclSend");
            check_nccl(ncclRecv(recv, count, t, (g + n - 1) % n, comm, s), "ncclRecv");
            break;
          case CommKind::dma_d2d:
          case CommKind::dma_p2p:
          case CommKind::sm_copy:
            break;
        }
      }
      check_nccl(ncclGroupEnd(), "ncclGroupEnd");
      return;
    }
    for (int g = 0; g < n; ++g) launch_copy(g, op, k, on[static_cast<size_t>(g)]);
  }

  // A copy (dma_d2d, dma_p2p, sm_copy) of GPU g, to the next GPU for the peer kinds.
  void launch_copy(int g, const CommOp& op, const Knobs& k, void* s) {
    const int peer = (g + 1) % gpus_;
    if (op.kind == CommKind::sm_copy) {
      gpu::Kernel kern;
      const int ctas = k.max_ctas > 0 ? k.max_ctas : 32;
      kern.name = op.peer ? "c3sim_sm_copy_peer" : "c3sim_sm_copy";
      kern.grid[0] = static_cast<unsigned>(ctas);
      kern.block[0] = model::kCopyThreads;
      kern.demand = model::sm_copy(spec_.gpu, g, op.bytes, ctas, op.peer ? peer : -1);
      gpu::launch(s, kern);
      return;
    }
    gpu::Copy cp;
    cp.bytes = op.bytes;
    if (op.kind == CommKind::dma_p2p) {
      cp.kind = gpu::CopyKind::p2p;
      cp.peer = peer;
      cp.demand = model::dma_copy(spec_.gpu, spec_.gpu.topology, g, op.bytes, peer);
    } else {
      cp.kind = gpu::CopyKind::d2d;
      cp.demand = model::runtime_d2d_copy(spec_.gpu, g, op.bytes);
    }
    gpu::copy(s, cp);
  }

  int gpus_;
  model::NodeSpec spec_;
  std::map<std::pair<int, int>, std::vector<std::pair<void*, void*>>> streams_;
  std::map<std::tuple<int, int, int>, std::vector<ncclComm_t>> comms_;
};

}  // namespace
}  // namespace c3::bench::sim_backend

extern "C" __attribute__((visibility("default"))) c3::bench::Backend* c3bench_create_backend(
    const c3::bench::BackendOptions& options, std::string* error) {
  return c3::bench::create_backend<c3::bench::sim_backend::SimBackend>(options, error, "");
}
