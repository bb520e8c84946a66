#include "layout.h"

#include <stdexcept>
#include <string>

namespace c3::bench::cuda {
namespace {

constexpr int kMaxChunks = 4096;

std::string which(int i, int k) {
  return k == 1 ? "" : " (chunk " + std::to_string(i) + " of " + std::to_string(k) + ")";
}

void layout_compute(const ComputeOp& whole, int k, CaseLayout* lay) {
  for (int i = 0; i < k; ++i) {
    ComputePiece p;
    p.op = k == 1 ? whole : whole.chunk(i, k);
    const ComputeOp& op = p.op;
    switch (op.kind) {
      case ComputeKind::gemm: {
        if (op.m <= 0 || op.n <= 0 || op.k <= 0) {
          throw std::invalid_argument(whole.label() + ": empty gemm " + std::to_string(op.m) + "x" +
                                      std::to_string(op.n) + "x" + std::to_string(op.k) +
                                      which(i, k));
        }
        if (op.n != whole.n || op.k != whole.k || op.dtype != whole.dtype) {
          throw std::invalid_argument(whole.label() + ": a gemm chunk must split M only" +
                                      which(i, k));
        }
        auto es = static_cast<size_t>(dtype_bytes(op.dtype));
        auto m = static_cast<size_t>(op.m), n = static_cast<size_t>(op.n),
             kk = static_cast<size_t>(op.k);
        p.a_off = lay->gemm_a;
        p.c_off = lay->gemm_c;
        lay->gemm_a += align_up(kk * m * es);
        lay->gemm_c += align_up(m * n * es);
        lay->gemm_b = align_up(kk * n * es);
        break;
      }
      case ComputeKind::triad:
        p.elements = op.bytes / 4;
        if (p.elements <= 0) {
          throw std::invalid_argument(whole.label() + ": no fp32 element to process" + which(i, k));
        }
        p.a_off = lay->triad;
        lay->triad += align_up(static_cast<size_t>(p.elements) * 4);
        break;
      case ComputeKind::fma:
        if (op.target_ns <= 0) {
          throw std::invalid_argument(whole.label() + ": fma needs a positive duration" +
                                      which(i, k));
        }
        break;
    }
    lay->compute.push_back(p);
  }
}

void layout_comm(const CommOp& whole, int k, int nranks, CaseLayout* lay) {
  auto n = static_cast<int64_t>(nranks);
  for (int i = 0; i < k; ++i) {
    CommPiece p;
    p.op = k == 1 ? whole : whole.chunk(i, k);
    const CommOp& op = p.op;
    if (op.bytes <= 0) {
      throw std::invalid_argument(whole.label() + ": nothing to move" + which(i, k));
    }
    int64_t es = dtype_bytes(op.dtype);
    int64_t send = op.bytes, recv = op.bytes;
    if (is_collective(op.kind)) {
      p.count = op.count(nranks);
      int64_t per_rank = 0;  // bytes the count stands for, times the ranks it is per
      switch (op.kind) {
        case CommKind::allreduce:
        case CommKind::sendrecv:
          per_rank = p.count * es;
          send = recv = per_rank;
          break;
        case CommKind::allgather:
          per_rank = p.count * es * n;
          send = p.count * es;
          recv = per_rank;
          break;
        case CommKind::reducescatter:
          per_rank = p.count * es * n;
          send = per_rank;
          recv = p.count * es;
          break;
        case CommKind::alltoall:
          per_rank = p.count * es * n;
          send = recv = per_rank;
          break;
        default:
          break;
      }
      if (p.count <= 0 || per_rank != op.bytes) {
        bool by_ranks = op.kind == CommKind::allgather || op.kind == CommKind::reducescatter ||
                        op.kind == CommKind::alltoall;
        throw std::invalid_argument(
            op.label() + ": " + std::to_string(op.bytes) + " bytes do not divide evenly into " +
            (by_ranks ? std::to_string(nranks) + " ranks x " : std::string()) +
            dtype_name(op.dtype) + " elements" + which(i, k));
      }
      lay->uses_nccl = true;
    } else if (op.kind == CommKind::dma_p2p || (op.kind == CommKind::sm_copy && op.peer)) {
      lay->peer = true;
    }
    p.send_bytes = static_cast<size_t>(send);
    p.recv_bytes = static_cast<size_t>(recv);
    p.send_off = lay->comm_send;
    p.recv_off = lay->comm_recv;
    lay->comm_send += align_up(p.send_bytes);
    lay->comm_recv += align_up(p.recv_bytes);
    lay->comm.push_back(p);
  }
}

}  // namespace

CaseLayout layout_case(const Case& c, int nranks) {
  if (!c.compute && !c.comm) {
    throw std::invalid_argument("the case has neither a compute nor a communication operation");
  }
  int k = c.knobs.chunks;
  if (k < 1 || k > kMaxChunks) {
    throw std::invalid_argument("chunks=" + std::to_string(k) + " is not in 1.." +
                                std::to_string(kMaxChunks));
  }
  CaseLayout lay;
  if (c.compute) layout_compute(*c.compute, k, &lay);
  if (c.comm) layout_comm(*c.comm, k, nranks, &lay);
  return lay;
}

}  // namespace c3::bench::cuda
