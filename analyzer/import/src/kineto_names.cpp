#include "kineto_names.h"

#include <cctype>

#include "c3/common/copy_kinds.h"
#include "c3/common/nccl_types.h"

namespace c3::importer::kineto {

void memcpy_kinds(std::string_view name, std::string* kind, std::string* src, std::string* dst) {
  *kind = common::copy_kind_in_name(name);
  *src = *dst = "unknown";
  const size_t lp = name.find('('), arrow = name.find(" -> "), rp = name.rfind(')');
  if (lp != std::string_view::npos && arrow != std::string_view::npos &&
      rp != std::string_view::npos && lp < arrow && arrow < rp) {
    *src = std::string(name.substr(lp + 1, arrow - lp - 1));
    *dst = std::string(name.substr(arrow + 4, rp - arrow - 4));
  }
}

namespace {
std::string lower_without_underscores(std::string_view s) {
  std::string n;
  for (char c : s) {
    if (c != '_') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return n;
}
}  // namespace

std::string nccl_op(std::string_view s) {
  using common::nccl::Collective;
  // A name holding another is tried first: "sendrecv" before "send", "allreduce" and
  // "reducescatter" before "reduce", "allgather" before "gather".
  static constexpr Collective kByContainment[] = {
      Collective::allreduce, Collective::allgather, Collective::reducescatter, Collective::alltoall,
      Collective::broadcast, Collective::sendrecv,  Collective::send,          Collective::recv,
      Collective::reduce,    Collective::gather,    Collective::scatter};
  const std::string n = lower_without_underscores(s);
  for (Collective c : kByContainment) {
    const char* name = common::nccl::collective_name(c);
    if (n.find(lower_without_underscores(name)) != std::string::npos) return name;
  }
  if (n.find("barrier") != std::string::npos) return "Barrier";
  return std::string(s);
}

std::string op_from_kernel(std::string_view name) {
  for (const char* prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    const size_t len = std::char_traits<char>::length(prefix);
    if (name.substr(0, len) == prefix) {
      size_t e = name.find_first_of("_(", len);
      if (e == std::string_view::npos) e = name.size();
      return std::string(name.substr(len, e - len));
    }
  }
  return "unknown";
}

int dtype_size(std::string_view t) {
  std::string n;
  for (char c : t) n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "double" || n == "long" || n == "int64" || n == "uint64" || n == "float64") return 8;
  if (n == "half" || n == "bfloat16" || n == "float16" || n == "short" || n == "bf16" ||
      n == "fp16")
    return 2;
  if (n == "char" || n == "byte" || n == "bool" || n == "int8" || n == "uint8" ||
      n.rfind("float8", 0) == 0)
    return 1;
  return 4;  // Float, Int
}

int max_blocks_per_sm(int major, int minor) {
  // CUDA occupancy tables (programming guide, "Compute Capabilities").
  if (major >= 9) return 32;
  if (major == 8) return (minor == 6 || minor == 7 || minor == 9) ? (minor == 7 ? 32 : 16) : 32;
  if (major == 7) return minor == 5 ? 16 : 32;
  return 32;
}

}  // namespace c3::importer::kineto
