// How a Case maps onto device buffers: its chunk operations (ComputeOp::chunk, CommOp::chunk),
// what each touches, and where in the buffers it lives. Each chunk has its own 256-byte aligned
// slice, so the 16-byte vector kernels and cuBLASLt's alignment assumptions hold for any split.
// Pure host code: check() uses it to reject cases before anything is allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "c3/bench/descriptors.h"

namespace c3::bench::cuda {

struct ComputePiece {
  ComputeOp op;
  size_t a_off = 0, c_off = 0;  // gemm: A_i (k x m_i) and C_i (m_i x n); triad: all arrays
  int64_t elements = 0;         // triad: fp32 elements
};

struct CommPiece {
  CommOp op;
  int64_t count = 0;  // elements as passed to NCCL (CommOp::count)
  size_t send_bytes = 0, recv_bytes = 0;
  size_t send_off = 0, recv_off = 0;  // recv: in the peer's buffer for peer copies
};

struct CaseLayout {
  std::vector<ComputePiece> compute;
  std::vector<CommPiece> comm;
  // Bytes each buffer needs (0: unused by the case).
  size_t gemm_a = 0, gemm_b = 0, gemm_c = 0, triad = 0;  // triad: each of the three arrays
  size_t comm_send = 0, comm_recv = 0;
  bool peer = false;  // comm_recv lives on the next GPU (dma_p2p, sm_copy with peer)
  bool uses_nccl = false;
};

// The chunk operations of `c` and their buffers for `nranks` ranks; std::invalid_argument with
// a one-line reason when the case cannot run (sizes that do not split, empty chunks...).
CaseLayout layout_case(const Case& c, int nranks);

// 256-byte rounding of buffer offsets.
constexpr size_t align_up(size_t v) {
  return (v + 255) & ~static_cast<size_t>(255);
}

}  // namespace c3::bench::cuda
