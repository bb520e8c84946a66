#include "c3/bench/descriptors.h"

#include <cctype>
#include <cmath>
#include <stdexcept>

#include "c3/bench/backend.h"
#include "c3/common/nccl_types.h"
#include "c3/common/strings.h"
#include "c3/common/units.h"

namespace c3::bench {
namespace {

std::optional<DType> parse_dtype(const std::string& s) {
  if (s == "fp32" || s == "f32" || s == "float32") return DType::fp32;
  if (s == "fp16" || s == "f16" || s == "float16") return DType::fp16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  return std::nullopt;
}

}  // namespace

const char* dtype_name(DType t) {
  switch (t) {
    case DType::fp32:
      return "fp32";
    case DType::fp16:
      return "fp16";
    case DType::bf16:
      return "bf16";
  }
  return "?";
}

int dtype_bytes(DType t) {
  return t == DType::fp32 ? 4 : 2;
}

common::nccl::DataType nccl_datatype(DType t) {
  switch (t) {
    case DType::fp32:
      return common::nccl::DataType::float32;
    case DType::fp16:
      return common::nccl::DataType::float16;
    case DType::bf16:
      return common::nccl::DataType::bfloat16;
  }
  return common::nccl::DataType::float32;
}

const char* compute_kind_name(ComputeKind k) {
  switch (k) {
    case ComputeKind::gemm:
      return "gemm";
    case ComputeKind::triad:
      return "triad";
    case ComputeKind::fma:
      return "fma";
  }
  return "?";
}

const char* comm_kind_name(CommKind k) {
  switch (k) {
    case CommKind::allreduce:
      return "allreduce";
    case CommKind::allgather:
      return "allgather";
    case CommKind::reducescatter:
      return "reducescatter";
    case CommKind::alltoall:
      return "alltoall";
    case CommKind::sendrecv:
      return "sendrecv";
    case CommKind::dma_d2d:
      return "dma_d2d";
    case CommKind::dma_p2p:
      return "dma_p2p";
    case CommKind::sm_copy:
      return "sm_copy";
  }
  return "?";
}

bool is_collective(CommKind k) {
  switch (k) {
    case CommKind::allreduce:
    case CommKind::allgather:
    case CommKind::reducescatter:
    case CommKind::alltoall:
    case CommKind::sendrecv:
      return true;
    case CommKind::dma_d2d:
    case CommKind::dma_p2p:
    case CommKind::sm_copy:
      return false;
  }
  return false;
}

std::string ComputeOp::label() const {
  switch (kind) {
    case ComputeKind::gemm:
      return "gemm:" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + ":" +
             dtype_name(dtype);
    case ComputeKind::triad:
      return "triad:" + format_size(bytes);
    case ComputeKind::fma:
      return "fma:" + std::to_string(target_ns / 1000) + "us";
  }
  return "?";
}

double ComputeOp::flops() const {
  switch (kind) {
    case ComputeKind::gemm:
      return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
    case ComputeKind::triad:
      return 2.0 * static_cast<double>(bytes) / 4.0;
    case ComputeKind::fma:
      return 0;
  }
  return 0;
}

ComputeOp ComputeOp::chunk(int i, int kk) const {
  ComputeOp c = *this;
  if (kk <= 1) return c;
  auto part = [&](int64_t total) { return total * (i + 1) / kk - total * i / kk; };
  switch (kind) {
    case ComputeKind::gemm:
      c.m = part(m);
      break;
    case ComputeKind::triad:
      c.bytes = part(bytes / 4) * 4;
      break;
    case ComputeKind::fma:
      c.target_ns = part(target_ns);
      break;
  }
  return c;
}

std::string CommOp::label() const {
  std::string s = std::string(comm_kind_name(kind)) + ":" + format_size(bytes);
  if (kind == CommKind::sm_copy && peer) s += ":peer";
  return s;
}

int64_t CommOp::count(int nranks) const {
  const int64_t elems = bytes / dtype_bytes(dtype);
  switch (kind) {
    case CommKind::allgather:
    case CommKind::reducescatter:
    case CommKind::alltoall:
      return elems / std::max(1, nranks);  // per-rank (AlltoAll: per peer) count
    case CommKind::allreduce:
    case CommKind::sendrecv:
    case CommKind::dma_d2d:
    case CommKind::dma_p2p:
    case CommKind::sm_copy:
      return elems;
  }
  return elems;
}

CommOp CommOp::chunk(int i, int k) const {
  CommOp c = *this;
  if (k <= 1) return c;
  const int64_t unit = 4096;  // keep chunks aligned (and divisible for AllGather/ReduceScatter)
  const int64_t units = bytes / unit;
  c.bytes = (units * (i + 1) / k - units * i / k) * unit;
  return c;
}

double busbw_factor(CommKind k, int n) {
  using common::nccl::Collective;
  const Collective c = k == CommKind::allreduce       ? Collective::allreduce
                       : k == CommKind::allgather     ? Collective::allgather
                       : k == CommKind::reducescatter ? Collective::reducescatter
                       : k == CommKind::alltoall      ? Collective::alltoall
                       : k == CommKind::sendrecv      ? Collective::sendrecv
                                                      : Collective::unknown;  // copies: 1
  return common::nccl::busbw_factor(c, n);
}

std::string Knobs::label() const {
  std::string s;
  auto add = [&](const std::string& kv) { s += (s.empty() ? "" : " ") + kv; };
  if (priority != Priority::equal)
    add(std::string("prio=") + common::stream_priority_name(priority));
  if (order != Order::compute_first) add(std::string("order=") + common::launch_order_name(order));
  if (nchannels > 0) add("nch=" + std::to_string(nchannels));
  if (min_ctas > 0 || max_ctas > 0)
    add("ctas=" + std::to_string(min_ctas) + ":" + std::to_string(max_ctas));
  if (sm_partition_pct > 0) add("smpart=" + std::to_string(sm_partition_pct) + "%");
  if (pipelined) add("chunks=" + std::to_string(chunks));
  return s;
}

std::string Case::label() const {
  std::string s = compute ? compute->label() : std::string("-");
  s += " + ";
  s += comm ? comm->label() : std::string("-");
  const std::string k = knobs.label();
  if (!k.empty()) s += " [" + k + "]";
  return s;
}

std::optional<int64_t> parse_size(const std::string& in) {
  if (in.empty()) return std::nullopt;
  std::string s = in;
  int64_t mult = 1;
  char last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  if (last == 'B' && s.size() > 1) {
    s.pop_back();
    last = static_cast<char>(std::toupper(static_cast<unsigned char>(s.back())));
  }
  if (last == 'K' || last == 'M' || last == 'G' || last == 'T') {
    mult = last == 'K'   ? int64_t{1} << 10
           : last == 'M' ? int64_t{1} << 20
           : last == 'G' ? int64_t{1} << 30
                         : int64_t{1} << 40;
    s.pop_back();
  }
  auto v = common::parse_int(s);
  if (!v || *v <= 0 || *v > (int64_t{1} << 50) / mult) return std::nullopt;
  return *v * mult;
}

std::string format_size(int64_t b) {
  return common::format_bytes(b, common::BytesStyle::compact);
}

std::optional<int64_t> parse_duration_ns(const std::string& s) {
  struct Unit {
    const char* suffix;
    int64_t ns;
  };
  for (const Unit u :
       {Unit{"ns", 1}, Unit{"us", 1000}, Unit{"ms", 1000000}, Unit{"s", 1000000000}}) {
    const std::string suf = u.suffix;
    if (s.size() > suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0) {
      auto v = common::parse_int(s.substr(0, s.size() - suf.size()));
      if (!v || *v <= 0) return std::nullopt;
      return *v * u.ns;
    }
  }
  return std::nullopt;
}

ComputeOp parse_compute(const std::string& spec) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(
        "--compute '" + spec + "': " + why +
        " (expected gemm:MxNxK[:fp32|fp16|bf16], triad:SIZE or fma:DURATION)");
  };
  auto parts = common::split(spec, ':');
  ComputeOp op;
  if (parts[0] == "gemm") {
    if (parts.size() < 2 || parts.size() > 3) throw bad("wrong number of fields");
    auto dims = common::split(parts[1], 'x');
    if (dims.size() != 3) throw bad("GEMM shape must be MxNxK");
    auto m = common::parse_int(dims[0]), n = common::parse_int(dims[1]),
         k = common::parse_int(dims[2]);
    if (!m || !n || !k || *m <= 0 || *n <= 0 || *k <= 0)
      throw bad("GEMM dimensions must be positive integers");
    op.kind = ComputeKind::gemm;
    op.m = *m;
    op.n = *n;
    op.k = *k;
    if (parts.size() == 3) {
      auto t = parse_dtype(parts[2]);
      if (!t) throw bad("unknown type '" + parts[2] + "'");
      op.dtype = *t;
    }
    return op;
  }
  if (parts[0] == "triad") {
    if (parts.size() != 2) throw bad("wrong number of fields");
    auto b = parse_size(parts[1]);
    if (!b) throw bad("bad size '" + parts[1] + "'");
    op.kind = ComputeKind::triad;
    op.bytes = *b;
    op.dtype = DType::fp32;
    return op;
  }
  if (parts[0] == "fma") {
    if (parts.size() != 2) throw bad("wrong number of fields");
    auto d = parse_duration_ns(parts[1]);
    if (!d) throw bad("bad duration '" + parts[1] + "'");
    op.kind = ComputeKind::fma;
    op.target_ns = *d;
    op.dtype = DType::fp32;
    return op;
  }
  throw bad("unknown operation '" + parts[0] + "'");
}

std::vector<int64_t> size_sweep(int64_t begin, int64_t end, int64_t factor) {
  std::vector<int64_t> out;
  if (begin <= 0 || end < begin || factor < 2) return {begin};
  for (int64_t s = begin; s <= end; s *= factor) {
    out.push_back(s);
    if (s > end / factor) break;
  }
  return out;
}

std::vector<CommOp> parse_comm(const std::string& spec, int64_t factor) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("--comm '" + spec + "': " + why +
                                 " (expected allreduce|allgather|reducescatter|alltoall|sendrecv|"
                                 "dma_d2d|dma_p2p|sm_copy[:peer] with :SIZE or :BEGIN..END)");
  };
  auto parts = common::split(spec, ':');
  CommOp base;
  bool found = false;
  for (CommKind k :
       {CommKind::allreduce, CommKind::allgather, CommKind::reducescatter, CommKind::alltoall,
        CommKind::sendrecv, CommKind::dma_d2d, CommKind::dma_p2p, CommKind::sm_copy}) {
    if (parts[0] == comm_kind_name(k)) {
      base.kind = k;
      found = true;
    }
  }
  if (!found) throw bad("unknown operation '" + parts[0] + "'");
  if (parts.size() < 2) throw bad("missing size");
  size_t i = 2;
  if (parts.size() >= 3 && parts[2] == "peer") {
    if (base.kind != CommKind::sm_copy) throw bad("':peer' applies to sm_copy only");
    base.peer = true;
    ++i;
  }
  for (; i < parts.size(); ++i) {
    auto t = parse_dtype(parts[i]);
    if (!t) throw bad("unknown field '" + parts[i] + "'");
    base.dtype = *t;
  }
  std::vector<CommOp> out;
  const std::string& sz = parts[1];
  const size_t dots = sz.find("..");
  if (dots == std::string::npos) {
    auto b = parse_size(sz);
    if (!b) throw bad("bad size '" + sz + "'");
    base.bytes = *b;
    out.push_back(base);
    return out;
  }
  auto b = parse_size(sz.substr(0, dots));
  auto e = parse_size(sz.substr(dots + 2));
  if (!b || !e) throw bad("bad size range '" + sz + "'");
  if (*e < *b) throw bad("range end is below its beginning");
  for (int64_t s : size_sweep(*b, *e, factor)) {
    CommOp c = base;
    c.bytes = s;
    out.push_back(c);
  }
  return out;
}

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::compute_alone:
      return "compute alone";
    case Phase::comm_alone:
      return "comm alone";
    case Phase::concurrent:
      return "concurrent";
    case Phase::serial:
      return "serial";
  }
  return "?";
}

}  // namespace c3::bench
