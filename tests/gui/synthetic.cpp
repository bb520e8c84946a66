#include "synthetic.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "c3/tracedb/writer.h"

namespace c3::gui::testing {

namespace {

using tracedb::Writer;

constexpr int64_t kUs = 1000;
constexpr int kComputeStream = 7, kCommStream = 13, kCopyStream = 20;
constexpr int64_t kAllReduceBytes = int64_t{64} << 20;
constexpr int64_t kTensorBytes = int64_t{8} << 20;

// One rank's writer state.
struct Rank {
  std::unique_ptr<Writer> w;
  int64_t pid = 0, tid = 0;
  int64_t offset = 0;  // this rank's clock minus rank 0's
  int64_t correlation = 0, external = 0;
  std::map<std::string, int64_t> seq;  // per communicator
  int64_t gemm_fwd = 0, gemm_bwd = 0, nccl = 0, elementwise = 0, launch = 0;
  std::vector<int64_t> small;  // names of the short kernels
  bool api = true;
};

// A communicator's name and its members (ranks).
struct Group {
  std::string id;
  std::vector<size_t> members;
};

void api_call(Rank& r, int64_t at, int64_t corr) {
  if (!r.api) return;
  tracedb::ApiCallRow a;
  a.process_id = 1;
  a.thread_id = r.tid;
  a.api = "runtime";
  a.cbid = 211;
  a.name_id = r.launch;
  a.correlation_id = corr;
  a.start_ns = at - 9 * kUs;
  a.end_ns = at - 5 * kUs;
  r.w->insert(a);
}

int64_t kernel(Rank& r, int64_t name, int stream, int64_t s, int64_t e, int64_t grid, int64_t block,
               int64_t regs, int64_t shared) {
  tracedb::KernelRow k;
  k.process_id = 1;
  k.device_id = 0;
  k.context_id = 1;
  k.stream_id = stream;
  k.correlation_id = ++r.correlation;
  k.start_ns = s + r.offset;
  k.end_ns = e + r.offset;
  k.name_id = name;
  k.grid_x = grid;
  k.grid_y = 1;
  k.grid_z = 1;
  k.block_x = block;
  k.block_y = 1;
  k.block_z = 1;
  k.registers_per_thread = regs;
  k.static_shared_bytes = shared;
  k.dynamic_shared_bytes = 0;
  k.launch_type = "regular";
  k.device_launched = 0;
  r.w->insert(k);
  api_call(r, s + r.offset, k.correlation_id.value_or(0));
  return *k.correlation_id;
}

// The colour the application gives its step ranges (nvtxEventAttributes_t.color, ARGB).
constexpr int64_t kStepColor = 0xff76b900;

// One NVTX row of rank r's thread, in its clock.
tracedb::NvtxRangeRow nvtx_row(const Rank& r, const char* kind, const char* domain,
                               const std::string& name, int64_t s, int64_t e) {
  tracedb::NvtxRangeRow g;
  g.process_id = 1;
  g.thread_id = r.tid;
  g.kind = kind;
  g.domain = domain;
  g.name = name;
  g.start_ns = s + r.offset;
  g.end_ns = e + r.offset;
  g.closed = 1;
  return g;
}

void range(Rank& r, const std::string& name, int64_t s, int64_t e, int depth,
           std::optional<int64_t> payload, std::optional<int64_t> color = std::nullopt) {
  tracedb::NvtxRangeRow g = nvtx_row(r, "push_pop", "default", name, s, e);
  g.payload_int = payload;
  g.color = color;
  g.depth = depth;
  r.w->insert(g);
}

// A data loader's nvtxDomainRangeStartEx/End range in its own domain: they overlap (the next
// batch is fetched while the last one is still in use), so they have no depth.
// An AllReduce of `bytes` by rank `ri` of group `g` on `stream`, its kernel from `s` to `e`
// (rank 0's clock); returns `e`.
int64_t all_reduce(Rank& r, const Group& g, size_t ri, int64_t s, int64_t e, int64_t bytes,
                   int stream) {
  const int64_t corr = kernel(r, r.nccl, stream, s, e, 24, 512, 96, 0);
  tracedb::CollectiveRow c;
  c.process_id = 1;
  c.thread_id = r.tid;
  c.device_id = 0;
  c.stream_id = stream;
  c.stream_handle = 0x7f0000002000;
  c.comm_id = g.id;
  c.comm_handle = 0x7f0000001000;
  c.rank = std::find(g.members.begin(), g.members.end(), ri) - g.members.begin();
  c.nranks = static_cast<int64_t>(g.members.size());
  c.op = "AllReduce";
  c.datatype = "bfloat16";
  c.count = bytes / 2;
  c.bytes = bytes;
  c.reduce_op = "sum";
  c.seq = r.seq[g.id]++;
  c.external_id = ++r.external;
  c.host_start_ns = s - 30 * kUs + r.offset;
  c.host_end_ns = s - 22 * kUs + r.offset;
  c.result = 0;
  r.w->insert(c);
  tracedb::ExternalCorrelationRow x;
  x.process_id = 1;
  x.external_kind = "custom0";
  x.external_id = c.external_id;
  x.correlation_id = corr;
  r.w->insert(x);
  return e;
}

void start_end_range(Rank& r, const std::string& name, int64_t s, int64_t e) {
  tracedb::NvtxRangeRow g = nvtx_row(r, "start_end", "data", name, s, e);
  g.category = 1;
  g.category_name = "prefetch";
  r.w->insert(g);
}

}  // namespace

int64_t synthetic_activities_per_rank(const SyntheticJob& job) {
  // Per step: forward GEMMs, backward GEMMs and AllReduces, the short kernels of both passes,
  // 4 optimizer kernels, 1 copy; the tensor-parallel AllReduces, the embedding AllReduce.
  return static_cast<int64_t>(job.steps) *
         (int64_t{3 + 2 * job.small_kernels + (job.tensor_parallel > 1 ? 1 : 0)} * job.layers + 4 +
          1 + (job.pipeline_parallel > 1 ? 1 : 0));
}

namespace {

// The communicators of a rank layout: tensor, data and pipeline parallel (synthetic.h).
struct Layout {
  int tp = 1, dp = 1, pp = 1;
  std::vector<Group> tensor, data, pipeline;
  std::vector<size_t> tensor_of, data_of, pipeline_of;  // per rank: its group's index
};

Layout layout_of(const SyntheticJob& job) {
  Layout l;
  l.tp = job.tensor_parallel;
  l.pp = job.pipeline_parallel;
  l.dp = job.ranks / (l.tp * l.pp);
  const auto n = static_cast<size_t>(job.ranks);
  l.tensor_of.resize(n);
  l.data_of.resize(n);
  l.pipeline_of.resize(n);
  std::map<std::tuple<int, int, int>, size_t> index;  // (kind, key1, key2) -> group
  auto add = [&](std::vector<Group>& gs, std::vector<size_t>& of, int kind, int k1, int k2,
                 size_t r, const std::string& name) {
    auto [it, fresh] = index.try_emplace({kind, k1, k2}, gs.size());
    if (fresh) gs.push_back({name, {}});
    gs[it->second].members.push_back(r);
    of[r] = it->second;
  };
  for (size_t r = 0; r < n; ++r) {
    const int ri = static_cast<int>(r);
    const int t = ri % l.tp, d = (ri / l.tp) % l.dp, st = ri / (l.tp * l.dp);
    char name[64];
    std::snprintf(name, sizeof name, "0x7e00%04x%04x0000", d, st);
    add(l.tensor, l.tensor_of, 0, d, st, r, name);
    // The data-parallel communicator of the default job keeps its one name.
    if (l.tp == 1 && l.pp == 1) {
      std::snprintf(name, sizeof name, "0x5eed5eed5eed5eed");
    } else {
      std::snprintf(name, sizeof name, "0xda00%04x%04x0000", t, st);
    }
    add(l.data, l.data_of, 1, t, st, r, name);
    std::snprintf(name, sizeof name, "0x9900%04x%04x0000", t, d);
    add(l.pipeline, l.pipeline_of, 2, t, d, r, name);
  }
  return l;
}

}  // namespace

std::vector<std::string> write_synthetic_job(const std::string& dir, const SyntheticJob& job) {
  if (job.tensor_parallel < 1 || job.pipeline_parallel < 1 || job.ranks_per_host < 1 ||
      job.ranks % (job.tensor_parallel * job.pipeline_parallel) != 0)
    throw std::invalid_argument("ranks must be a multiple of tensor x pipeline parallel");
  const Layout lay = layout_of(job);
  std::filesystem::create_directories(dir);
  std::vector<Rank> ranks(static_cast<size_t>(job.ranks));
  std::vector<std::string> paths;
  paths.reserve(ranks.size());
  for (int ri = 0; ri < job.ranks; ++ri) {
    Rank& r = ranks[static_cast<size_t>(ri)];
    const std::string path =
        (std::filesystem::path(dir) / ("rank" + std::to_string(ri) + ".sqlite")).string();
    std::filesystem::remove(path);
    paths.push_back(path);
    r.w = Writer::create(path);
    r.pid = 4000 + ri;
    r.tid = r.pid;
    const int host = ri / job.ranks_per_host;
    r.offset = host * job.clock_skew_ns;
    r.api = job.api_calls;
    tracedb::ProcessRow p;
    p.id = 1;
    p.pid = r.pid;
    p.host = "node" + std::to_string(host);
    p.rank = ri;
    p.local_rank = ri % job.ranks_per_host;
    p.world_size = job.ranks;
    p.command_line = "python train.py --synthetic";
    p.start_ns = job.start_ns - 1'000'000 + r.offset;
    p.trace_clock = "CLOCK_MONOTONIC";
    p.anchor_start_trace_ns = p.start_ns;
    // Hosts' wall clocks agree to within NTP error; the matched collectives do better.
    p.anchor_start_realtime_ns =
        1'790'000'000'000'000'000 + (job.start_ns - 1'000'000) + int64_t{150'000} * host;
    p.anchor_start_monotonic_ns = p.start_ns;
    r.w->insert(p);
    tracedb::DeviceRow d;
    d.process_id = 1;
    d.device_id = 0;
    d.name = "NVIDIA H100 80GB HBM3";
    d.sm_count = 132;
    d.cc_major = 9;
    d.cc_minor = 0;
    d.memory_bytes = int64_t{80} << 30;
    d.memory_bandwidth_bytes_per_s = 3'350'000'000'000;
    d.copy_engines = 3;
    d.warp_size = 32;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.max_registers_per_sm = 65536;
    d.max_shared_memory_per_sm = 233472;
    d.max_threads_per_block = 1024;
    d.max_registers_per_block = 65536;
    d.max_shared_memory_per_block = 232448;
    r.w->insert(d);
    for (const auto& [sid, prio, name] :
         {std::tuple{kComputeStream, 0, "compute"}, std::tuple{kCommStream, -1, "nccl"},
          std::tuple{kCopyStream, 0, "h2d"}}) {
      tracedb::StreamRow s;
      s.process_id = 1;
      s.device_id = 0;
      s.context_id = 1;
      s.stream_id = sid;
      s.priority = prio;
      s.flags = "non_blocking";
      s.name = name;
      r.w->insert(s);
    }
    const auto rs = static_cast<size_t>(ri);
    int64_t handle = 0x7f0000001000;
    for (const Group* g : {&lay.data[lay.data_of[rs]], &lay.tensor[lay.tensor_of[rs]],
                           &lay.pipeline[lay.pipeline_of[rs]]}) {
      if (g->members.size() < 2 && !(job.tensor_parallel == 1 && job.pipeline_parallel == 1 &&
                                     g == &lay.data[lay.data_of[rs]]))
        continue;
      tracedb::CommunicatorRow c;
      c.process_id = 1;
      c.comm_id = g->id;
      c.comm_handle = handle;
      handle += 0x1000;
      c.init_call = "ncclCommInitRank";
      c.rank = std::find(g->members.begin(), g->members.end(), rs) - g->members.begin();
      c.nranks = static_cast<int64_t>(g->members.size());
      c.device_id = 0;
      c.created_ns = p.start_ns;
      c.result = 0;
      r.w->insert(c);
    }
    r.gemm_fwd = r.w->intern(
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_"
        "segment_k_off_kernel__5x_cublas");
    r.gemm_bwd = r.w->intern(
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize256x128x64_warpgroupsize2x1x1_execute_"
        "segment_k_off_kernel__5x_cublas");
    r.nccl =
        r.w->intern("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)");
    r.elementwise = r.w->intern(
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
        "at::detail::Array<char*, 1>)");
    r.launch = r.w->intern("cudaLaunchKernel");
    for (const char* n :
         {"void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, "
          "float>",
          "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, "
          "cutlass::bfloat16_t>>",
          "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl>",
          "void at::native::vectorized_elementwise_kernel<4, "
          "at::native::CUDAFunctor_add<c10::BFloat16>>",
          "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8>>",
          "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16, "
          "float>"}) {
      r.small.push_back(r.w->intern(n));
    }
  }

  // Time on rank 0's clock; each rank keeps its own cursor and waits for the collectives.
  std::vector<int64_t> t(ranks.size(), job.start_ns);
  for (int step = 0; step < job.steps; ++step) {
    std::vector<int64_t> step_start = t;
    std::vector<int64_t> fwd_end(ranks.size()), bwd_start(ranks.size());
    for (size_t ri = 0; ri < ranks.size(); ++ri) {
      Rank& r = ranks[ri];
      // Input batch to the GPU.
      tracedb::MemcpyRow m;
      m.process_id = 1;
      m.device_id = 0;
      m.context_id = 1;
      m.stream_id = kCopyStream;
      m.correlation_id = ++r.correlation;
      m.start_ns = t[ri] + r.offset;
      m.end_ns = t[ri] + 180 * kUs + r.offset;
      m.copy_kind = "H2D";
      m.bytes = int64_t{96} << 20;
      m.src_kind = "pinned";
      m.dst_kind = "device";
      m.async = 1;
      m.channel_id = 2;
      m.channel_type = "async_memcpy";
      m.copy_count = 1;
      r.w->insert(m);
      t[ri] += 190 * kUs;
    }
    for (int l = 0; l < job.layers; ++l) {
      for (size_t ri = 0; ri < ranks.size(); ++ri) {
        Rank& r = ranks[ri];
        const double slow = ri + 1 == ranks.size() && ranks.size() > 1 ? job.slow_rank_factor : 1.0;
        const auto d =
            static_cast<int64_t>(static_cast<double>((280 + int64_t{15} * l) * kUs) * slow);
        kernel(r, r.gemm_fwd, kComputeStream, t[ri], t[ri] + d, 264, 384, 168, int64_t{213} * 1024);
        t[ri] += d + 6 * kUs;
      }
      // Tensor parallel: the layer's output AllReduced in the group before the next kernel.
      for (const Group& g : lay.tensor) {
        if (g.members.size() < 2) continue;
        int64_t all_ready = 0;
        for (const size_t ri : g.members) all_ready = std::max(all_ready, t[ri]);
        for (const size_t ri : g.members)
          t[ri] = all_reduce(ranks[ri], g, ri, t[ri], all_ready + 60 * kUs, kTensorBytes,
                             kComputeStream) +
                  4 * kUs;
      }
      for (size_t ri = 0; ri < ranks.size(); ++ri) {
        Rank& r = ranks[ri];
        for (int k = 0; k < job.small_kernels; ++k) {
          const int64_t sd = (18 + 7 * int64_t{k % 5}) * kUs;
          kernel(r, r.small[static_cast<size_t>(k) % 4], kComputeStream, t[ri], t[ri] + sd, 1056,
                 256, 40, 0);
          t[ri] += sd + 3 * kUs;
        }
      }
    }
    for (size_t ri = 0; ri < ranks.size(); ++ri) {
      fwd_end[ri] = t[ri];
      bwd_start[ri] = t[ri];
    }
    // Backward: layer l's gradient AllReduce starts on each rank when its GEMM is done and ends
    // when the slowest rank's data arrived plus the transfer; the next GEMM runs under it.
    std::vector<int64_t> comm_free(ranks.size());
    for (size_t ri = 0; ri < ranks.size(); ++ri) comm_free[ri] = t[ri];
    for (int l = 0; l < job.layers; ++l) {
      std::vector<int64_t> ready(ranks.size());
      for (size_t ri = 0; ri < ranks.size(); ++ri) {
        Rank& r = ranks[ri];
        const double slow = ri + 1 == ranks.size() && ranks.size() > 1 ? job.slow_rank_factor : 1.0;
        const auto d =
            static_cast<int64_t>(static_cast<double>((520 + int64_t{20} * l) * kUs) * slow);
        for (int k = 0; k < job.small_kernels; ++k) {
          const int64_t sd = (25 + 9 * int64_t{k % 4}) * kUs;
          kernel(r, r.small[2 + static_cast<size_t>(k) % 4], kComputeStream, t[ri], t[ri] + sd,
                 1056, 256, 40, 0);
          t[ri] += sd + 3 * kUs;
        }
        kernel(r, r.gemm_bwd, kComputeStream, t[ri], t[ri] + d, 264, 384, 168, int64_t{213} * 1024);
        t[ri] += d + 6 * kUs;
        ready[ri] = std::max(t[ri], comm_free[ri]);
      }
      for (const Group& g : lay.data) {
        int64_t all_ready = 0;
        for (const size_t ri : g.members) all_ready = std::max(all_ready, ready[ri]);
        for (const size_t ri : g.members)
          comm_free[ri] = all_reduce(ranks[ri], g, ri, ready[ri], all_ready + 450 * kUs,
                                     kAllReduceBytes, kCommStream);
      }
    }
    for (size_t ri = 0; ri < ranks.size(); ++ri) t[ri] = std::max(t[ri], comm_free[ri]);
    // Pipeline parallel: the tied embeddings' gradients AllReduced over the stages.
    for (const Group& g : lay.pipeline) {
      if (g.members.size() < 2) continue;
      int64_t all_ready = 0;
      for (const size_t ri : g.members) all_ready = std::max(all_ready, t[ri]);
      for (const size_t ri : g.members)
        t[ri] =
            all_reduce(ranks[ri], g, ri, t[ri], all_ready + 120 * kUs, kTensorBytes, kCommStream);
    }
    for (size_t ri = 0; ri < ranks.size(); ++ri) {
      Rank& r = ranks[ri];
      // The optimizer waits for the last gradients.
      const int64_t opt_start = t[ri];
      for (int k = 0; k < 4; ++k) {
        kernel(r, r.elementwise, kComputeStream, t[ri], t[ri] + 60 * kUs, 4096, 128, 16, 0);
        t[ri] += 64 * kUs;
      }
      range(r, "step " + std::to_string(step), step_start[ri], t[ri], 0, step, kStepColor);
      // The next batch is fetched from mid-step well into the next step.
      start_end_range(r, "prefetch batch " + std::to_string(step + 1), fwd_end[ri],
                      fwd_end[ri] + (t[ri] - step_start[ri]) * 13 / 10);
      range(r, "forward", step_start[ri], fwd_end[ri], 1, std::nullopt);
      range(r, "backward", bwd_start[ri], opt_start, 1, std::nullopt);
      range(r, "optimizer", opt_start, t[ri], 1, std::nullopt);
      t[ri] += 40 * kUs;
    }
    // Steps start together (the next batch waits for every rank's optimizer).
    const int64_t next = *std::max_element(t.begin(), t.end());
    std::fill(t.begin(), t.end(), next);
  }
  for (Rank& r : ranks) {
    r.w->close();
    r.w.reset();
  }
  return paths;
}

}  // namespace c3::gui::testing
