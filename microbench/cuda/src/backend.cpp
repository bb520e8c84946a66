// The `cuda` backend of c3bench (backend.h): GPUs driven by one host thread each, NCCL
// communicators cached per NCCL knob setting, and the plugin's single exported symbol.
#include "c3/bench/backend.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "c3/bench/store.h"
#include "check.h"
#include "device.h"
#include "green.h"
#include "layout.h"
#include "workers.h"

namespace c3::bench::cuda {
namespace {

constexpr int kStoreTimeoutMs = 300000;  // ranks may start minutes apart under a scheduler
constexpr const char* kGreenPrefix =
    "SM partitioning needs CUDA green contexts (driver 550+/CUDA 12.4+): ";

std::string cuda_version(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

// NCCL's CTA bounds for the knobs. nchannels becomes minCTAs = maxCTAs = nchannels (each
// channel is one CTA of a collective's kernel, and NCCL clamps its channel count to these
// bounds exactly as it does to NCCL_MIN/MAX_NCHANNELS); an explicit min_ctas/max_ctas wins on
// its side. The environment variables are not used: NCCL reads each once per process and
// caches it, so they would bind every later communicator to the first case's value.
std::pair<int, int> cta_bounds(const Knobs& k) {
  return {k.min_ctas > 0 ? k.min_ctas : k.nchannels, k.max_ctas > 0 ? k.max_ctas : k.nchannels};
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(const BackendOptions& o);
  ~CudaBackend() override { shutdown(); }
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override { return "cuda"; }
  bool simulated() const override { return false; }
  std::string description() const override { return description_; }
  int gpus() const override { return multi() ? opts_.world_size : pool_->size(); }
  int rank() const override { return multi() ? opts_.rank : 0; }
  std::string check(const Case& c) const override;
  void prepare(const Case& c) override;
  PhaseTiming run(Phase phase, const Case& c) override;
  std::string timing_overhead() const override { return overhead_; }

 private:
  struct CommSet {
    std::string name;               // ncclConfig_t::commName points here: a map node does not move
    std::vector<ncclComm_t> comms;  // one per local GPU
  };
  using CommKey = std::tuple<int, int, int>;  // (nchannels, min_ctas, max_ctas)

  bool multi() const { return opts_.world_size > 0; }
  int nranks() const { return multi() ? opts_.world_size : pool_->size(); }
  int rank_of(int local) const { return multi() ? opts_.rank : local; }
  CommSet& comms_for(const Knobs& k);
  // Multi-process mode: each field the maximum over all ranks (a small NCCL AllReduce on the
  // default communicator, after the phase and outside its timing), as nccl-tests reports the
  // slowest rank.
  PhaseTiming max_over_ranks(const PhaseTiming& t);
  void destroy(CommSet& set, bool abort);
  void fail(const std::string& why);
  void shutdown();

  BackendOptions opts_;
  GreenApi green_;
  std::unique_ptr<WorkerPool> pool_;
  std::vector<std::unique_ptr<DeviceState>> dev_;
  std::unique_ptr<Store> store_;
  std::map<CommKey, CommSet> comms_;
  FmaTable fma_;
  std::string description_, overhead_;
  bool prepared_ = false;
  int prepared_id_ = -1;
  std::string prepared_label_;
  std::string broken_;
  double* timing_buf_ = nullptr;  // device buffer of max_over_ranks (on the rank's GPU)
  cudaStream_t timing_stream_ = nullptr;
};

CudaBackend::CudaBackend(const BackendOptions& o) : opts_(o) {
  int count = 0;
  C3_CUDA(cudaGetDeviceCount(&count));
  std::vector<int> devices;
  if (opts_.world_size < 0) throw std::invalid_argument("world_size must not be negative");
  if (multi()) {
    if (opts_.rank < 0 || opts_.rank >= opts_.world_size) {
      throw std::invalid_argument("rank " + std::to_string(opts_.rank) + " is not in 0.." +
                                  std::to_string(opts_.world_size - 1));
    }
    if (opts_.local_rank < 0 || opts_.local_rank >= count) {
      throw std::invalid_argument("local_rank " + std::to_string(opts_.local_rank) +
                                  " has no GPU: this machine shows " + std::to_string(count));
    }
    if (opts_.store.empty()) {
      throw std::invalid_argument(
          "multi-process mode needs a store (file:/path or tcp:host:port) for the NCCL id");
    }
    devices.push_back(opts_.local_rank);  // one GPU per process; options.gpus does not apply
  } else {
    if (opts_.gpus < 1 || opts_.gpus > count) {
      throw std::invalid_argument("asked for " + std::to_string(opts_.gpus) +
                                  " GPUs; this machine shows " + std::to_string(count));
    }
    for (int d = 0; d < opts_.gpus; ++d) devices.push_back(d);
  }
  pool_ = std::make_unique<WorkerPool>(devices);
  dev_.resize(devices.size());
  try {
    pool_->run([&](int i) {
      dev_[static_cast<size_t>(i)] =
          std::make_unique<DeviceState>(pool_->device(i), &green_, opts_.verbose);
    });
    if (multi()) store_ = Store::open(opts_.store, opts_.rank, opts_.world_size);
    pool_->run([&](int i) {
      if (i == 0) overhead_ = dev_[0]->measure_overhead();
    });
    const cudaDeviceProp& p = dev_[0]->props();
    int driver = 0, runtime = 0, nccl = 0;
    C3_CUDA(cudaDriverGetVersion(&driver));
    C3_CUDA(cudaRuntimeGetVersion(&runtime));
    C3_NCCL(ncclGetVersion(&nccl));
    description_ = std::to_string(gpus()) + " x " + p.name + " (" +
                   std::to_string(p.multiProcessorCount) + " SMs, driver " + cuda_version(driver) +
                   ", runtime " + cuda_version(runtime) + ", NCCL " + std::to_string(nccl / 10000) +
                   "." + std::to_string(nccl % 10000 / 100) + "." + std::to_string(nccl % 100) +
                   ")";
    if (multi()) {
      description_ +=
          ", rank " + std::to_string(opts_.rank) + " of " + std::to_string(opts_.world_size);
    }
  } catch (...) {
    shutdown();
    throw;
  }
}

void CudaBackend::shutdown() {
  if (pool_) {
    try {
      // Each GPU's state is torn down on its own thread (its device is current there).
      pool_->run([&](int i) { dev_[static_cast<size_t>(i)].reset(); });
    } catch (...) {
    }
  }
  if (timing_stream_ != nullptr) {
    cudaSetDevice(pool_ ? pool_->device(0) : 0);
    cudaStreamSynchronize(timing_stream_);
    cudaStreamDestroy(timing_stream_);
    cudaFree(timing_buf_);
    timing_stream_ = nullptr;
    timing_buf_ = nullptr;
  }
  for (auto& [key, set] : comms_) destroy(set, !broken_.empty());
  comms_.clear();
  dev_.clear();
  pool_.reset();
  store_.reset();
}

void CudaBackend::destroy(CommSet& set, bool abort) {
  for (ncclComm_t& c : set.comms) {
    if (c == nullptr) continue;
    // Abort does not wait for the other ranks, which after a failure may never come.
    if (abort) {
      ncclCommAbort(c);
    } else {
      ncclCommDestroy(c);
    }
    c = nullptr;
  }
}

void CudaBackend::fail(const std::string& why) {
  if (broken_.empty()) broken_ = why;
  for (auto& [key, set] : comms_) destroy(set, true);
  comms_.clear();
  prepared_ = false;
}

CudaBackend::CommSet& CudaBackend::comms_for(const Knobs& k) {
  CommKey key{k.nchannels, k.min_ctas, k.max_ctas};
  auto it = comms_.find(key);
  if (it != comms_.end()) return it->second;
  CommSet& set = comms_[key];
  set.name = "c3bench nchannels=" + std::to_string(k.nchannels) +
             " min_ctas=" + std::to_string(k.min_ctas) + " max_ctas=" + std::to_string(k.max_ctas);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
  auto [min_ctas, max_ctas] = cta_bounds(k);
  if (min_ctas > 0) config.minCTAs = min_ctas;
  if (max_ctas > 0) config.maxCTAs = max_ctas;
  config.commName = set.name.c_str();
  std::vector<ncclConfig_t> configs(static_cast<size_t>(pool_->size()), config);
  set.comms.assign(configs.size(), nullptr);
  try {
    ncclUniqueId id;
    std::memset(&id, 0, sizeof id);
    if (!multi()) {
      C3_NCCL(ncclGetUniqueId(&id));
      // One thread creating every rank's communicator must group the calls (NCCL docs).
      // No throw between start and end: an open group would capture later NCCL calls.
      C3_NCCL(ncclGroupStart());
      ncclResult_t first = ncclSuccess;
      cudaError_t device_error = cudaSuccess;
      for (int i = 0; i < pool_->size() && device_error == cudaSuccess; ++i) {
        device_error = cudaSetDevice(pool_->device(i));
        if (device_error != cudaSuccess) break;
        auto u = static_cast<size_t>(i);
        ncclResult_t r = ncclCommInitRankConfig(&set.comms[u], pool_->size(), id, i, &configs[u]);
        if (first == ncclSuccess) first = r;
      }
      ncclResult_t end = ncclGroupEnd();
      check_cuda(device_error, "cudaSetDevice");
      check_nccl(first, "ncclCommInitRankConfig");
      check_nccl(end, "ncclGroupEnd (ncclCommInitRankConfig)");
    } else {
      // The key names the knob setting: every rank creates the same communicators in the
      // same order, and each gets its own id.
      std::string store_key = "nccl-id/" + std::to_string(k.nchannels) + "/" +
                              std::to_string(k.min_ctas) + "/" + std::to_string(k.max_ctas);
      if (opts_.rank == 0) {
        C3_NCCL(ncclGetUniqueId(&id));
        store_->publish(store_key, std::string(reinterpret_cast<const char*>(&id), sizeof id));
      } else {
        std::string v = store_->fetch(store_key, kStoreTimeoutMs);
        if (v.size() != sizeof id) {
          throw std::runtime_error("store " + store_->spec() + ": " + store_key + " holds " +
                                   std::to_string(v.size()) + " bytes, not an ncclUniqueId");
        }
        std::memcpy(&id, v.data(), sizeof id);
      }
      C3_CUDA(cudaSetDevice(pool_->device(0)));
      C3_NCCL(ncclCommInitRankConfig(&set.comms[0], opts_.world_size, id, opts_.rank, &configs[0]));
    }
  } catch (...) {
    destroy(set, true);
    comms_.erase(key);
    throw;
  }
  if (opts_.verbose) {
    std::fprintf(stderr, "c3bench-cuda: NCCL communicator '%s' (minCTAs %d, maxCTAs %d)\n",
                 set.name.c_str(), min_ctas, max_ctas);
  }
  return set;
}

std::string CudaBackend::check(const Case& c) const {
  if (!broken_.empty()) return "the cuda backend is unusable after an earlier failure: " + broken_;
  CaseLayout lay;
  try {
    lay = layout_case(c, nranks());
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  const Knobs& k = c.knobs;
  if (k.nchannels < 0 || k.min_ctas < 0 || k.max_ctas < 0) {
    return "nchannels, min_ctas and max_ctas must not be negative";
  }
  auto [min_ctas, max_ctas] = cta_bounds(k);
  if (lay.uses_nccl && min_ctas > 0 && max_ctas > 0 && min_ctas > max_ctas) {
    return "NCCL minCTAs " + std::to_string(min_ctas) + " > maxCTAs " + std::to_string(max_ctas) +
           " (from nchannels, min_ctas, max_ctas)";
  }
  if (k.sm_partition_pct != 0) {
    if (!green_.available()) return kGreenPrefix + green_.unavailable_reason();
    try {
      green_.plan(pool_->device(0), k.sm_partition_pct);
    } catch (const std::out_of_range& e) {
      return "sm_partition_pct=" + std::to_string(k.sm_partition_pct) + ": " + e.what();
    } catch (const std::exception& e) {
      return kGreenPrefix + std::string(e.what());
    }
  }
  if (lay.peer) {
    std::string what = c.comm->label();
    if (pool_->size() < 2) {
      return what + " needs 2 GPUs in this process, which drives 1" +
             (multi() ? " (multi-process mode: one GPU per rank)" : "");
    }
    if (c.comm->kind == CommKind::sm_copy) {
      for (int i = 0; i < pool_->size(); ++i) {
        int from = pool_->device(i), to = pool_->device((i + 1) % pool_->size()), can = 0;
        if (cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess || can == 0) {
          cudaGetLastError();
          return what + " needs peer access from GPU " + std::to_string(from) + " to GPU " +
                 std::to_string(to) + ", which this system does not allow";
        }
      }
    }
  }
  return "";
}

void CudaBackend::prepare(const Case& c) {
  prepared_ = false;
  std::string why = check(c);
  if (!why.empty()) throw std::runtime_error("cannot prepare " + c.label() + ": " + why);
  CaseLayout lay = layout_case(c, nranks());
  CommSet* comms = lay.uses_nccl ? &comms_for(c.knobs) : nullptr;
  int n = pool_->size();
  auto at = [](int i) { return static_cast<size_t>(i); };
  pool_->run([&](int i) {
    dev_[at(i)]->allocate(c, lay);
    if (lay.peer) dev_[at(i)]->enable_peer_access(pool_->device((i + 1) % n));
  });
  std::vector<int64_t> missing;
  for (const ComputePiece& p : lay.compute) {
    if (p.op.kind == ComputeKind::fma && fma_.count(p.op.target_ns) == 0) {
      missing.push_back(p.op.target_ns);
    }
  }
  if (!missing.empty()) {
    // Calibrated on the first GPU and used on all of them, so that every GPU of the process
    // does the same work (the GPUs of one node are one model).
    FmaTable table;
    pool_->run([&](int i) {
      if (i == 0) table = dev_[0]->calibrate_fma(missing);
    });
    fma_.insert(table.begin(), table.end());
  }
  pool_->run([&](int i) {
    int next = (i + 1) % n;
    dev_[at(i)]->finish_prepare(c, lay, comms ? comms->comms[at(i)] : nullptr, rank_of(i), nranks(),
                                lay.peer ? dev_[at(next)]->peer_recv() : nullptr,
                                lay.peer ? pool_->device(next) : -1, fma_);
  });
  prepared_ = true;
  prepared_id_ = c.id;
  prepared_label_ = c.label();
}

PhaseTiming CudaBackend::run(Phase phase, const Case& c) {
  if (!broken_.empty()) {
    throw std::runtime_error("the cuda backend is unusable after an earlier failure: " + broken_);
  }
  if (!prepared_ || c.id != prepared_id_ || c.label() != prepared_label_) {
    throw std::logic_error("run(" + std::string(phase_name(phase)) + ") for case " +
                           std::to_string(c.id) + " (" + c.label() + ") without prepare()");
  }
  std::barrier<> sync(pool_->size());
  std::vector<PhaseTiming> t(static_cast<size_t>(pool_->size()));
  try {
    pool_->run([&](int i) {
      auto u = static_cast<size_t>(i);
      t[u] = dev_[u]->run_phase(phase, sync, pool_->cancelled());
    });
  } catch (const std::exception& e) {
    // GPU work may still be stuck (a collective missing a peer): the communicators are
    // aborted and no further case is run on this state.
    fail(e.what());
    throw;
  }
  PhaseTiming out;
  for (const PhaseTiming& g : t) {
    out.comp_ns = std::max(out.comp_ns, g.comp_ns);
    out.comm_ns = std::max(out.comm_ns, g.comm_ns);
    out.wall_ns = std::max(out.wall_ns, g.wall_ns);
  }
  if (multi()) {
    try {
      out = max_over_ranks(out);
    } catch (const std::exception& e) {
      fail(e.what());
      throw;
    }
  }
  return out;
}

PhaseTiming CudaBackend::max_over_ranks(const PhaseTiming& t) {
  CommSet& set = comms_for(Knobs{});
  C3_CUDA(cudaSetDevice(pool_->device(0)));
  if (timing_buf_ == nullptr) {
    C3_CUDA(cudaStreamCreateWithFlags(&timing_stream_, cudaStreamNonBlocking));
    C3_CUDA(cudaMalloc(reinterpret_cast<void**>(&timing_buf_), 3 * sizeof(double)));
  }
  double h[3] = {t.comp_ns, t.comm_ns, t.wall_ns};
  C3_CUDA(cudaMemcpyAsync(timing_buf_, h, sizeof h, cudaMemcpyHostToDevice, timing_stream_));
  C3_NCCL(ncclAllReduce(timing_buf_, timing_buf_, 3, ncclFloat64, ncclMax, set.comms[0],
                        timing_stream_));
  C3_CUDA(cudaMemcpyAsync(h, timing_buf_, sizeof h, cudaMemcpyDeviceToHost, timing_stream_));
  C3_CUDA(cudaStreamSynchronize(timing_stream_));
  PhaseTiming out;
  out.comp_ns = h[0];
  out.comm_ns = h[1];
  out.wall_ns = h[2];
  return out;
}

}  // namespace
}  // namespace c3::bench::cuda

extern "C" __attribute__((visibility("default"))) c3::bench::Backend* c3bench_create_backend(
    const c3::bench::BackendOptions& options, std::string* error) {
  return c3::bench::create_backend<c3::bench::cuda::CudaBackend>(options, error, "cuda backend: ");
}

static_assert(std::is_same_v<decltype(&c3bench_create_backend), c3::bench::CreateBackendFn>,
              "c3bench_create_backend must match backend.h's CreateBackendFn");
