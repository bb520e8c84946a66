// One iteration of a phase on one GPU: the launches in the order the knobs ask for, events
// around each operation, the wait for completion, and the times read back (backend.h Phase).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>

#include "check.h"
#include "device.h"

namespace c3::bench::cuda {
namespace {

// How long one phase may run before the backend stops waiting: a collective whose peer never
// launched (another rank failed) would otherwise hang c3bench for ever.
std::chrono::seconds phase_timeout() {
  static const long seconds = [] {
    const char* v = std::getenv("C3BENCH_CUDA_TIMEOUT_S");
    long s = v != nullptr ? std::strtol(v, nullptr, 10) : 0;
    return s > 0 ? s : 300L;
  }();
  return std::chrono::seconds(seconds);
}

// Runs `body` between ncclGroupStart and ncclGroupEnd, closing the group on failure too.
template <typename Body>
void nccl_group(Body&& body) {
  C3_NCCL(ncclGroupStart());
  try {
    body();
  } catch (...) {
    ncclGroupEnd();
    throw;
  }
  C3_NCCL(ncclGroupEnd());
}

}  // namespace

void DeviceState::launch_compute(const ComputePiece& p, cudaStream_t s) {
  auto i = static_cast<size_t>(&p - prep_.compute.data());
  int sms = props_.multiProcessorCount;
  switch (p.op.kind) {
    case ComputeKind::gemm:
      prep_.gemm[i]->run(lt_, gemm_a_.at(p.a_off), gemm_b_.ptr, gemm_c_.at(p.c_off), workspace_, s);
      break;
    case ComputeKind::triad: {
      // One wave over all SMs, fewer blocks when the chunk is too small to use them.
      int64_t per_block = 4LL * kTriadThreads;
      int64_t needed = (p.elements + per_block - 1) / per_block;
      int64_t full = static_cast<int64_t>(sms) * occupancy_.triad_blocks_per_sm;
      int grid = static_cast<int>(std::max<int64_t>(1, std::min(full, needed)));
      C3_CUDA(launch_triad(reinterpret_cast<float*>(triad_a_.at(p.a_off)),
                           reinterpret_cast<const float*>(triad_b_.at(p.a_off)),
                           reinterpret_cast<const float*>(triad_c_.at(p.a_off)), 3.0f, p.elements,
                           grid, s));
      break;
    }
    case ComputeKind::fma:
      C3_CUDA(launch_fma(fma_out_, prep_.fma_iterations[i], sms * occupancy_.fma_blocks_per_sm, s));
      break;
  }
}

void DeviceState::launch_comm(const CommPiece& p, cudaStream_t s) {
  char* send = send_.at(p.send_off);
  char* recv = recv_.ptr != nullptr ? recv_.at(p.recv_off) : nullptr;
  auto count = static_cast<size_t>(p.count);
  ncclDataType_t dt = static_cast<ncclDataType_t>(nccl_datatype(p.op.dtype));
  ncclComm_t comm = prep_.comm;
  int n = prep_.nranks, r = prep_.rank;
  switch (p.op.kind) {
    case CommKind::allreduce:
      C3_NCCL(ncclAllReduce(send, recv, count, dt, ncclSum, comm, s));
      break;
    case CommKind::allgather:
      C3_NCCL(ncclAllGather(send, recv, count, dt, comm, s));
      break;
    case CommKind::reducescatter:
      C3_NCCL(ncclReduceScatter(send, recv, count, dt, ncclSum, comm, s));
      break;
    case CommKind::alltoall: {
      // Grouped send/recv (as nccl-tests does) rather than ncclAlltoAll, which only NCCL 2.28+
      // has: the plugin then loads with any NCCL 2.x the host program brings.
      size_t block = count * static_cast<size_t>(dtype_bytes(p.op.dtype));
      nccl_group([&] {
        for (int peer = 0; peer < n; ++peer) {
          C3_NCCL(ncclSend(send + static_cast<size_t>(peer) * block, count, dt, peer, comm, s));
          C3_NCCL(ncclRecv(recv + static_cast<size_t>(peer) * block, count, dt, peer, comm, s));
        }
      });
      break;
    }
    case CommKind::sendrecv:
      nccl_group([&] {
        C3_NCCL(ncclSend(send, count, dt, (r + 1) % n, comm, s));
        C3_NCCL(ncclRecv(recv, count, dt, (r + n - 1) % n, comm, s));
      });
      break;
    case CommKind::dma_d2d:
      C3_CUDA(cudaMemcpyAsync(recv, send, p.send_bytes, cudaMemcpyDeviceToDevice, s));
      break;
    case CommKind::dma_p2p:
      C3_CUDA(cudaMemcpyPeerAsync(prep_.peer_dst + p.recv_off, prep_.peer_device, send, device_,
                                  p.send_bytes, s));
      break;
    case CommKind::sm_copy: {
      char* dst = p.op.peer ? prep_.peer_dst + p.recv_off : recv;
      C3_CUDA(launch_copy(dst, send, static_cast<int64_t>(p.send_bytes), prep_.copy_ctas, s));
      break;
    }
  }
}

void DeviceState::launch_compute_all(StreamSet& ss, cudaEvent_t start, cudaEvent_t end) {
  CtxScope scope(ss.api(), ss.compute_ctx());
  C3_CUDA(cudaEventRecord(start, ss.compute));
  for (const ComputePiece& p : prep_.compute) launch_compute(p, ss.compute);
  C3_CUDA(cudaEventRecord(end, ss.compute));
}

void DeviceState::launch_comm_all(StreamSet& ss, cudaStream_t s, CUcontext ctx, cudaEvent_t start,
                                  cudaEvent_t end) {
  CtxScope scope(ss.api(), ctx);
  C3_CUDA(cudaEventRecord(start, s));
  for (const CommPiece& p : prep_.comm_pieces) launch_comm(p, s);
  C3_CUDA(cudaEventRecord(end, s));
}

// Comm chunk i can only be enqueued once compute chunk i's event is recorded (a stream waits
// for an event's latest record at the time of the call), so the host interleaves the two
// streams chunk by chunk whatever knobs.order says. The comm op's start is taken after its
// first wait: its time is its own, not the wait for the first compute chunk.
void DeviceState::launch_pipelined(StreamSet& ss) {
  size_t k = prep_.compute.size();
  if (k != prep_.comm_pieces.size() || ss.chunk_done.size() < k) {
    throw std::logic_error("pipelined schedule needs as many compute as comm chunks");
  }
  for (size_t i = 0; i < k; ++i) {
    {
      CtxScope scope(ss.api(), ss.compute_ctx());
      if (i == 0) C3_CUDA(cudaEventRecord(ss.comp_start, ss.compute));
      launch_compute(prep_.compute[i], ss.compute);
      C3_CUDA(cudaEventRecord(ss.chunk_done[i], ss.compute));
      if (i + 1 == k) C3_CUDA(cudaEventRecord(ss.comp_end, ss.compute));
    }
    {
      CtxScope scope(ss.api(), ss.comm_ctx());
      C3_CUDA(cudaStreamWaitEvent(ss.comm, ss.chunk_done[i], 0));
      if (i == 0) C3_CUDA(cudaEventRecord(ss.comm_start, ss.comm));
      launch_comm(prep_.comm_pieces[i], ss.comm);
      if (i + 1 == k) C3_CUDA(cudaEventRecord(ss.comm_end, ss.comm));
    }
  }
}

void DeviceState::wait_for(cudaEvent_t e, CUcontext ctx, const GreenApi* api,
                           const std::atomic<bool>& cancelled) {
  CtxScope scope(api, ctx);
  auto deadline = std::chrono::steady_clock::now() + phase_timeout();
  // Polling instead of cudaEventSynchronize: a failed peer or a cancelled run must be able to
  // stop the wait. Host cost only; the GPU times come from the events.
  for (int spins = 0;; ++spins) {
    cudaError_t r = cudaEventQuery(e);
    if (r == cudaSuccess) break;
    if (r != cudaErrorNotReady) throw_cuda(r, "cudaEventQuery (end of phase)");
    if (cancelled) throw std::runtime_error("stopped waiting: another GPU of this process failed");
    if (prep_.comm != nullptr) {
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(prep_.comm, &async) == ncclSuccess && async != ncclSuccess &&
          async != ncclInProgress) {
        throw_nccl(async, "ncclCommGetAsyncError");
      }
    }
    if (std::chrono::steady_clock::now() > deadline) {
      throw std::runtime_error("the phase did not finish within " +
                               std::to_string(phase_timeout().count()) +
                               " s (a collective waiting for a rank that failed?); "
                               "C3BENCH_CUDA_TIMEOUT_S sets the limit");
    }
    if (spins < 2000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  cudaGetLastError();  // some runtimes also record cudaErrorNotReady as the last error
}

double DeviceState::elapsed_ns(cudaEvent_t a, cudaEvent_t b, CUcontext ctx, const GreenApi* api) {
  CtxScope scope(api, ctx);
  float ms = 0;
  C3_CUDA(cudaEventElapsedTime(&ms, a, b));
  return static_cast<double>(ms) * 1e6;
}

PhaseTiming DeviceState::run_phase(Phase phase, std::barrier<>& sync,
                                   const std::atomic<bool>& cancelled) {
  sync.arrive_and_wait();  // first: nothing may throw before every worker has arrived
  cudaGetLastError();      // a stale non-sticky error must not be blamed on these launches
  StreamSet& ss = *prep_.streams;
  const GreenApi* api = ss.api();
  CUcontext cctx = ss.compute_ctx(), mctx = ss.comm_ctx();
  bool comp = !prep_.compute.empty(), comm = !prep_.comm_pieces.empty();
  PhaseTiming t;
  switch (phase) {
    case Phase::compute_alone:
      if (!comp) return t;
      launch_compute_all(ss, ss.comp_start, ss.comp_end);
      wait_for(ss.comp_end, cctx, api, cancelled);
      t.comp_ns = t.wall_ns = elapsed_ns(ss.comp_start, ss.comp_end, cctx, api);
      return t;
    case Phase::comm_alone:
      if (!comm) return t;
      launch_comm_all(ss, ss.comm, mctx, ss.comm_start, ss.comm_end);
      wait_for(ss.comm_end, mctx, api, cancelled);
      t.comm_ns = t.wall_ns = elapsed_ns(ss.comm_start, ss.comm_end, mctx, api);
      return t;
    case Phase::serial: {
      if (comp) launch_compute_all(ss, ss.comp_start, ss.comp_end);
      if (comm) launch_comm_all(ss, ss.compute, cctx, ss.comm_start_c, ss.comm_end_c);
      wait_for(comm ? ss.comm_end_c : ss.comp_end, cctx, api, cancelled);
      if (comp) t.comp_ns = elapsed_ns(ss.comp_start, ss.comp_end, cctx, api);
      if (comm) t.comm_ns = elapsed_ns(ss.comm_start_c, ss.comm_end_c, cctx, api);
      t.wall_ns = elapsed_ns(comp ? ss.comp_start : ss.comm_start_c,
                             comm ? ss.comm_end_c : ss.comp_end, cctx, api);
      return t;
    }
    case Phase::concurrent:
      break;
  }
  bool anchored = ss.green != nullptr && comp && comm;
  if (anchored) {
    C3_CUDA(cudaEventRecord(ss.anchor_start, ss.anchor));
    {
      CtxScope scope(api, cctx);
      C3_CUDA(cudaStreamWaitEvent(ss.compute, ss.anchor_start, 0));
    }
    CtxScope scope(api, mctx);
    C3_CUDA(cudaStreamWaitEvent(ss.comm, ss.anchor_start, 0));
  }
  if (comp && comm && prep_.pipelined) {
    launch_pipelined(ss);
  } else if (prep_.comm_first) {
    if (comm) launch_comm_all(ss, ss.comm, mctx, ss.comm_start, ss.comm_end);
    if (comp) launch_compute_all(ss, ss.comp_start, ss.comp_end);
  } else {
    if (comp) launch_compute_all(ss, ss.comp_start, ss.comp_end);
    if (comm) launch_comm_all(ss, ss.comm, mctx, ss.comm_start, ss.comm_end);
  }
  if (anchored) {
    C3_CUDA(cudaStreamWaitEvent(ss.anchor, ss.comp_end, 0));
    C3_CUDA(cudaStreamWaitEvent(ss.anchor, ss.comm_end, 0));
    C3_CUDA(cudaEventRecord(ss.anchor_end, ss.anchor));
  }
  if (comp) wait_for(ss.comp_end, cctx, api, cancelled);
  if (comm) wait_for(ss.comm_end, mctx, api, cancelled);
  if (anchored) wait_for(ss.anchor_end, nullptr, nullptr, cancelled);
  if (comp) t.comp_ns = elapsed_ns(ss.comp_start, ss.comp_end, cctx, api);
  if (comm) t.comm_ns = elapsed_ns(ss.comm_start, ss.comm_end, mctx, api);
  if (anchored) {
    t.wall_ns = elapsed_ns(ss.anchor_start, ss.anchor_end, nullptr, nullptr);
  } else if (comp && comm) {
    // Both streams are in the primary context: times relative to the compute start, signed.
    // Whether the driver returns negative elapsed times is not documented, so each offset is
    // read in the direction that makes it positive.
    auto offset = [&](cudaEvent_t e) {
      double fwd = elapsed_ns(ss.comp_start, e, nullptr, nullptr);
      if (fwd > 0) return fwd;
      double back = elapsed_ns(e, ss.comp_start, nullptr, nullptr);
      return back > 0 ? -back : 0.0;
    };
    double comm_start = offset(ss.comm_start), comm_end = offset(ss.comm_end);
    t.wall_ns = std::max(t.comp_ns, comm_end) - std::min(0.0, comm_start);
  } else {
    t.wall_ns = comp ? t.comp_ns : t.comm_ns;
  }
  return t;
}

}  // namespace c3::bench::cuda
