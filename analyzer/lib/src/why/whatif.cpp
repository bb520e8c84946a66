#include "c3/analyzer/why/whatif.h"

#include <charconv>
#include <stdexcept>

#include "c3/analyzer/metrics/pattern.h"

namespace c3::analyzer {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw std::invalid_argument(
      "--what-if '" + text + "': " + why +
      " (accepted: PART=-X% with PART compute, communication, comm, memory, other_gpu, host or "
      "idle; comm=hidden; kernel:REGEX=-X%; nccl:OP=-X%; nccl:OP=NGB/s; rank:N=on-time)");
}

// "-X%" with 0 <= X <= 100 -> the share that remains.
double keep_of(const std::string& text, const std::string& v) {
  if (v.size() < 3 || v.front() != '-' || v.back() != '%') bad(text, "the change must be -X%");
  double x = 0;
  const char* b = v.data() + 1;
  const char* e = v.data() + v.size() - 1;
  const auto [end, ec] = std::from_chars(b, e, x);
  if (ec != std::errc() || end != e || !(x >= 0 && x <= 100)) {
    bad(text, "X in -X% must be a number from 0 to 100");
  }
  return 1.0 - x / 100.0;
}

}  // namespace

WhatIf parse_what_if(const std::string& text) {
  WhatIf w;
  w.text = text;
  const size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) bad(text, "no '=' between what changes and how");
  const std::string what = text.substr(0, eq), how = text.substr(eq + 1);
  if (what.rfind("kernel:", 0) == 0) {
    w.kind = WhatIf::Kind::kernel;
    w.pattern = what.substr(7);
    if (w.pattern.empty()) bad(text, "kernel: needs a regular expression");
    Pattern::compile(w.pattern, "--what-if '" + text + "'");
    w.keep = keep_of(text, how);
    return w;
  }
  if (what.rfind("nccl:", 0) == 0) {
    w.kind = WhatIf::Kind::collective;
    w.pattern = what.substr(5);
    if (w.pattern.empty()) bad(text, "nccl: needs an op (AllReduce, AllGather, ...)");
    if (how.size() > 4 && how.compare(how.size() - 4, 4, "GB/s") == 0) {
      const char* b = how.data();
      const char* e = how.data() + how.size() - 4;
      const auto [end, ec] = std::from_chars(b, e, w.busbw_gbps);
      if (ec != std::errc() || end != e || !(w.busbw_gbps > 0 && w.busbw_gbps <= 1e6)) {
        bad(text, "N in NGB/s must be a bus bandwidth above 0 and at most 1000000");
      }
      return w;
    }
    w.keep = keep_of(text, how);
    return w;
  }
  if (what.rfind("rank:", 0) == 0) {
    w.kind = WhatIf::Kind::rank_on_time;
    const std::string n = what.substr(5);
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), w.rank);
    if (n.empty() || ec != std::errc() || end != n.data() + n.size() || w.rank < 0) {
      bad(text, "rank: needs a rank number");
    }
    if (how != "on-time") bad(text, "a rank's change is on-time");
    return w;
  }
  static constexpr std::pair<const char*, PathPart> kPartNames[] = {
      {"compute", PathPart::compute},
      {"communication", PathPart::communication},
      {"comm", PathPart::communication},
      {"memory", PathPart::memory},
      {"other_gpu", PathPart::other_gpu},
      {"host", PathPart::host},
      {"idle", PathPart::idle}};
  for (const auto& [name, part] : kPartNames) {
    if (what != name) continue;
    w.kind = WhatIf::Kind::part;
    w.part = part;
    if (how == "hidden") {
      if (part != PathPart::communication) bad(text, "only communication can be hidden");
      w.keep = 0;
    } else {
      w.keep = keep_of(text, how);
    }
    return w;
  }
  bad(text, "unknown '" + what + "'");
}

}  // namespace c3::analyzer
