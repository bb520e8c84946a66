#include "c3/sim/model/cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace c3::sim::model {
namespace {

// Capacities as the engine sees them (bytes per ns).
double hbm_cap(const GpuSpec& g) {
  return g.hbm_bytes_per_s * g.hbm_efficiency / 1e9;
}
double link_cap(const GpuSpec& g) {
  return g.link_total_bytes_per_s() / 1e9;
}
double one_link_cap(const GpuSpec& g) {
  return g.link_bytes_per_s * g.link_efficiency / 1e9;
}
double ce_cap(const GpuSpec& g) {
  return g.copy_engines * g.copy_engine_bytes_per_s / 1e9;
}
double one_ce_cap(const GpuSpec& g) {
  return g.copy_engine_bytes_per_s / 1e9;
}
double pcie_cap(const GpuSpec& g) {
  return g.pcie_bytes_per_s / 1e9;
}
// The fraction of an SM one CTA of `threads` threads takes (thread slots).
double cta_occupancy(const GpuSpec& g, int threads) {
  return std::min(1.0, static_cast<double>(threads) / g.max_threads_per_sm);
}

// What one SM can stream from HBM: the achievable bandwidth needs sms_to_saturate_hbm SMs.
double hbm_per_sm(const GpuSpec& g) {
  return hbm_cap(g) / g.sms_to_saturate_hbm;
}

// A part whose SMs stream `hbm_bytes` through HBM, on every SM of `gpu` (gemm narrows that).
PartDemand hbm_stream(const GpuSpec& g, int gpu, double hbm_bytes) {
  PartDemand d;
  d.gpu = gpu;
  d.sm_demand = g.sms;
  d.hbm_bytes = hbm_bytes;
  d.sm_driven_bytes = hbm_bytes;
  d.bytes_per_sm_ns = hbm_per_sm(g);
  return d;
}

// A part on `gpu` whose `bytes` one copy engine streams (no SMs).
PartDemand ce_stream(const GpuSpec& g, int gpu, double bytes) {
  PartDemand d;
  d.gpu = gpu;
  d.ce_bytes = bytes;
  d.stream_bytes = bytes;
  d.stream_bytes_per_ns = one_ce_cap(g);
  return d;
}

int element_bytes(Precision p) {
  return p == Precision::fp32 ? 4 : 2;
}

}  // namespace

double peak_flops(const GpuSpec& g, Precision p) {
  switch (p) {
    case Precision::fp32:
      return g.fp32_flops;
    case Precision::fp16:
      return g.fp16_flops;
    case Precision::bf16:
      return g.bf16_flops;
  }
  return g.fp32_flops;
}

PartDemand gemm(const GpuSpec& g, int gpu, int64_t m, int64_t n, int64_t k, Precision p) {
  if (m <= 0 || n <= 0 || k <= 0) throw std::invalid_argument("gemm: dimensions must be positive");
  // Compulsory traffic: A and B read once, C written once (tiles re-read through L2).
  PartDemand d = hbm_stream(g, gpu, static_cast<double>(m * k + k * n + m * n) * element_bytes(p));
  // Output tiles of 128 x 256, one CTA per SM at a time (Hopper-class cuBLAS kernels); more
  // tiles than SMs run in waves over all SMs.
  const double tiles =
      std::ceil(static_cast<double>(m) / 128.0) * std::ceil(static_cast<double>(n) / 256.0);
  d.sm_demand = std::min(static_cast<double>(g.sms), tiles);
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const double per_sm_per_ns = peak_flops(g, p) * g.gemm_efficiency / 1e9 / g.sms;
  d.sm_work = flops / per_sm_per_ns;
  return d;
}

PartDemand triad(const GpuSpec& g, int gpu, int64_t bytes_per_array, double occupancy) {
  if (bytes_per_array <= 0) throw std::invalid_argument("triad: size must be positive");
  if (occupancy <= 0 || occupancy > 1) throw std::invalid_argument("triad: occupancy in (0, 1]");
  // Two reads, one write.
  PartDemand d = hbm_stream(g, gpu, 3.0 * static_cast<double>(bytes_per_array));
  d.sm_occupancy = occupancy;
  const double elements = static_cast<double>(bytes_per_array) / 4.0;
  d.sm_work = 2.0 * elements / (g.fp32_flops / 1e9 / g.sms);
  return d;
}

PartDemand fma_loop(const GpuSpec& g, int gpu, double target_ns) {
  if (target_ns <= 0) throw std::invalid_argument("fma: duration must be positive");
  PartDemand d;
  d.gpu = gpu;
  d.sm_demand = g.sms;
  d.sm_work = target_ns * g.sms;  // pure issue-bound work on every SM
  return d;
}

PartDemand sm_copy(const GpuSpec& g, int gpu, int64_t bytes, int ctas, int peer_gpu) {
  if (bytes <= 0 || ctas <= 0)
    throw std::invalid_argument("sm_copy: bytes and CTAs must be positive");
  PartDemand d;
  d.gpu = gpu;
  d.sm_demand = std::min(ctas, g.sms);
  d.sm_occupancy = cta_occupancy(g, kCopyThreads);
  const double b = static_cast<double>(bytes);
  if (peer_gpu < 0) {
    d.hbm_bytes = 2.0 * b;
    d.sm_driven_bytes = 2.0 * b;
    d.bytes_per_sm_ns = hbm_per_sm(g);
  } else {
    // Loads from local HBM, stores over the link into the peer's HBM: a CTA pushes what an
    // NCCL channel (itself a copy CTA) pushes.
    d.hbm_bytes = b;
    d.link_out_bytes = b;
    d.peer_gpu = peer_gpu;
    d.peer_bytes = b;
    d.sm_driven_bytes = b;
    d.bytes_per_sm_ns = g.nccl_channel_bytes_per_s / 1e9;
  }
  return d;
}

PartDemand runtime_d2d_copy(const GpuSpec& g, int gpu, int64_t bytes) {
  if (bytes <= 0) throw std::invalid_argument("d2d copy: bytes must be positive");
  return hbm_stream(g, gpu, 2.0 * static_cast<double>(bytes));
}

PartDemand dma_copy(const GpuSpec& g, Topology t, int gpu, int64_t bytes, int peer_gpu) {
  if (bytes <= 0) throw std::invalid_argument("dma copy: bytes must be positive");
  const double b = static_cast<double>(bytes);
  PartDemand d = ce_stream(g, gpu, b);
  if (peer_gpu < 0) {
    d.hbm_bytes = 2.0 * b;
  } else {
    d.hbm_bytes = b;
    d.link_out_bytes = b;
    d.peer_gpu = peer_gpu;
    d.peer_bytes = b;
    // Point-to-point over a mesh uses the one link to that peer.
    if (t == Topology::mesh)
      d.stream_bytes_per_ns = std::min(d.stream_bytes_per_ns, one_link_cap(g));
  }
  return d;
}

PartDemand host_copy(const GpuSpec& g, int gpu, int64_t bytes, HostDirection) {
  if (bytes <= 0) throw std::invalid_argument("host copy: bytes must be positive");
  const double b = static_cast<double>(bytes);
  PartDemand d = ce_stream(g, gpu, b);
  d.pcie_bytes = b;
  d.hbm_bytes = b;
  d.stream_bytes_per_ns = std::min(d.stream_bytes_per_ns, pcie_cap(g));
  return d;
}

double alone_ns(const GpuSpec& g, const PartDemand& d, double latency_ns) {
  double rate = std::numeric_limits<double>::infinity();
  if (d.sm_work > 0) rate = std::min(rate, d.sm_demand / d.sm_work);
  if (d.sm_driven_bytes > 0 && d.bytes_per_sm_ns > 0) {
    rate = std::min(rate, d.sm_demand * d.bytes_per_sm_ns / d.sm_driven_bytes);
  }
  if (d.stream_bytes > 0 && d.stream_bytes_per_ns > 0)
    rate = std::min(rate, d.stream_bytes_per_ns / d.stream_bytes);
  auto use = [&](double cap, double bytes) {
    if (bytes > 0) rate = std::min(rate, cap / bytes);
  };
  use(hbm_cap(g), d.hbm_bytes);
  use(link_cap(g), d.link_out_bytes);
  use(link_cap(g), d.link_in_bytes);
  use(ce_cap(g), d.ce_bytes);
  use(pcie_cap(g), d.pcie_bytes);
  if (d.peer_gpu >= 0) {
    use(link_cap(g), d.peer_bytes);
    use(hbm_cap(g), d.peer_bytes);
  }
  return latency_ns + (std::isinf(rate) ? 0.0 : 1.0 / rate);
}

CollectiveCost collective(const GpuSpec& g, Topology t, Collective c, const std::vector<int>& ranks,
                          int64_t bytes, int channels, bool in_place) {
  if (ranks.empty()) throw std::invalid_argument("collective: no ranks");
  if (bytes < 0) throw std::invalid_argument("collective: negative size");
  const int n = static_cast<int>(ranks.size());
  const double size = static_cast<double>(bytes);
  const int ch = channels > 0 ? std::min(channels, g.sms) : g.nccl_channels;
  CollectiveCost out;
  out.desc.name = collective_name(c);
  if (n == 1) {
    // One rank: NCCL copies the send buffer to the receive buffer (cudaMemcpyAsync), or does
    // nothing.
    PartDemand d;
    d.gpu = ranks[0];
    if (!in_place && bytes > 0) d = runtime_d2d_copy(g, ranks[0], bytes);
    out.desc.parts.push_back(d);
    out.alone_ns = alone_ns(g, d);
    return out;
  }
  if (c == Collective::sendrecv && n == 2) return point_to_point(g, t, ranks, {{0, 1, bytes}}, ch);
  const double nn = n;
  // Per rank: bytes sent (= received), and bytes combined with local data (read once more).
  // HBM traffic = sent (read) + received (written) + reduced (read).
  struct Shape {
    double sent, reduced, steps;
  };
  auto ring = [&]() -> Shape {
    switch (c) {
      case Collective::allreduce:
        return {2 * (nn - 1) / nn * size, (nn - 1) / nn * size, 2 * (nn - 1)};
      case Collective::reducescatter:
        return {(nn - 1) / nn * size, (nn - 1) / nn * size, nn - 1};
      case Collective::allgather:
      case Collective::alltoall:
        return {(nn - 1) / nn * size, 0, nn - 1};
      case Collective::broadcast:
        return {size, 0, nn - 1};
      case Collective::reduce:
        return {size, size, nn - 1};
      case Collective::sendrecv:
      case Collective::gather:
      case Collective::scatter:
      case Collective::send:
      case Collective::recv:
      case Collective::unknown:
        return {size, 0, 1};
    }
    return {size, 0, 1};
  };
  auto make = [&](Shape s, Algorithm a) {
    CollectiveCost cc;
    cc.algorithm = a;
    cc.desc.name = collective_name(c);
    cc.desc.latency_ns = g.nccl_base_latency_ns + s.steps * g.nccl_step_latency_ns;
    for (int r : ranks) {
      PartDemand d;
      d.gpu = r;
      d.sm_demand = ch;
      d.sm_occupancy = cta_occupancy(g, kNcclThreads);
      d.link_out_bytes = s.sent;
      d.link_in_bytes = s.sent;
      d.hbm_bytes = 2 * s.sent + s.reduced;
      d.sm_driven_bytes = s.sent;
      d.bytes_per_sm_ns = g.nccl_channel_bytes_per_s / 1e9;
      cc.desc.parts.push_back(d);
    }
    cc.alone_ns = alone_ns(g, cc.desc.parts[0], cc.desc.latency_ns);
    return cc;
  };
  CollectiveCost best = make(ring(), Algorithm::ring);
  if (c == Collective::allreduce && n > 2) {
    // Double binary tree: each rank sends and receives the buffer on the way up and down, in
    // 2 log2(n) steps.
    CollectiveCost tree = make({2 * size, size, 2 * std::ceil(std::log2(nn))}, Algorithm::tree);
    if (tree.alone_ns < best.alone_ns) best = std::move(tree);
  }
  return best;
}

CollectiveCost point_to_point(const GpuSpec& g, Topology t, const std::vector<int>& ranks,
                              const std::vector<Transfer>& transfers, int channels) {
  if (ranks.empty()) throw std::invalid_argument("point_to_point: no ranks");
  const int n = static_cast<int>(ranks.size());
  const int ch = channels > 0 ? std::min(channels, g.sms) : g.nccl_channels;
  CollectiveCost out;
  out.desc.name = collective_name(Collective::sendrecv);
  out.desc.latency_ns = g.nccl_base_latency_ns + g.nccl_step_latency_ns;
  // Per part: bytes out to and in from each peer (by index), and bytes copied within its GPU.
  std::vector<std::vector<double>> out_to(static_cast<size_t>(n),
                                          std::vector<double>(static_cast<size_t>(n), 0));
  std::vector<double> local(static_cast<size_t>(n), 0);
  for (const Transfer& x : transfers) {
    if (x.from < 0 || x.from >= n || x.to < 0 || x.to >= n || x.bytes < 0)
      throw std::invalid_argument("point_to_point: bad transfer");
    const double b = static_cast<double>(x.bytes);
    if (x.from == x.to) {
      local[static_cast<size_t>(x.from)] += b;
    } else {
      out_to[static_cast<size_t>(x.from)][static_cast<size_t>(x.to)] += b;
    }
  }
  for (int i = 0; i < n; ++i) {
    const auto ui = static_cast<size_t>(i);
    double sent = 0, received = 0, busiest_link = 0;
    for (int j = 0; j < n; ++j) {
      const auto uj = static_cast<size_t>(j);
      sent += out_to[ui][uj];
      received += out_to[uj][ui];
      busiest_link = std::max({busiest_link, out_to[ui][uj], out_to[uj][ui]});
    }
    PartDemand d;
    d.gpu = ranks[ui];
    d.sm_demand = ch;
    d.sm_occupancy = cta_occupancy(g, kNcclThreads);
    // The sender reads and sends, the receiver receives and writes; a local copy reads and
    // writes.
    d.link_out_bytes = sent;
    d.link_in_bytes = received;
    d.hbm_bytes = sent + received + 2 * local[ui];
    d.sm_driven_bytes = sent + local[ui];
    d.bytes_per_sm_ns = g.nccl_channel_bytes_per_s / 1e9;
    // Over a mesh each peer is one link away.
    if (t == Topology::mesh && busiest_link > 0) {
      d.stream_bytes = busiest_link;
      d.stream_bytes_per_ns = one_link_cap(g);
    }
    out.desc.parts.push_back(d);
    out.alone_ns = std::max(out.alone_ns, alone_ns(g, d, out.desc.latency_ns));
  }
  return out;
}

}  // namespace c3::sim::model
