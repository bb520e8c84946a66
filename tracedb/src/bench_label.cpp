#include "c3/tracedb/bench_label.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <optional>

#include "c3/common/bench_knobs.h"

namespace c3::tracedb {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> parse_int(std::string_view s) {
  if (s.empty()) return std::nullopt;
  int64_t v = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc() || p != end) return std::nullopt;
  return v;
}

std::optional<int64_t> parse_small_int(std::string_view s) {
  auto v = parse_int(s);
  if (!v || *v < 0 || *v > std::numeric_limits<int>::max()) return std::nullopt;
  return v;
}

// "64M", "1G", "512K", "4096", "64MB" (K/M/G/T are powers of 1024, as c3bench spells them).
std::optional<int64_t> parse_size(std::string_view s) {
  if (s.empty()) return std::nullopt;
  auto upper = [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  };
  if (upper(s.back()) == 'B' && s.size() > 1) s.remove_suffix(1);
  const std::string_view units = "KMGT";
  const size_t unit = units.find(upper(s.back()));
  const int shift = unit == std::string_view::npos ? 0 : 10 * static_cast<int>(unit + 1);
  if (shift > 0) s.remove_suffix(1);
  auto v = parse_int(s);
  if (!v || *v <= 0 || *v > (int64_t{1} << 50) >> shift) return std::nullopt;
  return *v << shift;
}

// "500us", "2ms", "1s", "100ns" (fma's sizing time).
std::optional<int64_t> parse_duration_ns(std::string_view s) {
  for (const auto& [suffix, ns] : {std::pair<std::string_view, int64_t>{"ns", 1},
                                   {"us", 1000},
                                   {"ms", 1000000},
                                   {"s", 1000000000}}) {
    if (s.size() > suffix.size() && s.ends_with(suffix)) {
      auto v = parse_int(s.substr(0, s.size() - suffix.size()));
      if (!v || *v <= 0 || *v > std::numeric_limits<int64_t>::max() / ns) return std::nullopt;
      return *v * ns;
    }
  }
  return std::nullopt;
}

bool is_dtype(std::string_view s) {
  return s == "fp32" || s == "fp16" || s == "bf16";
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  out.reserve(static_cast<size_t>(std::count(s.begin(), s.end(), sep)) + 1);
  for (;;) {
    const size_t p = s.find(sep);
    out.push_back(s.substr(0, p));
    if (p == std::string_view::npos) return out;
    s.remove_prefix(p + 1);
  }
}

struct Parse {
  BenchResultRow& row;
  std::vector<std::string>* unknown;
  void not_understood(std::string_view piece) const {
    if (unknown != nullptr) unknown->emplace_back(piece);
  }
};

// The ':'-separated parts of an operation, none for "-" (or nothing); sets its kind, and its
// name where the row has none.
std::vector<std::string_view> operation(std::string_view s, OptText& name, OptText& kind) {
  s = trim(s);
  if (s.empty() || s == "-") return {};
  if (!name) name = std::string(s);
  auto parts = split(s, ':');
  kind = std::string(parts[0]);
  return parts;
}

void parse_compute(std::string_view s, const Parse& p) {
  const auto parts = operation(s, p.row.compute, p.row.compute_kind);
  if (parts.empty()) return;
  if (parts[0] == "gemm") {
    const auto dims = parts.size() > 1 ? split(parts[1], 'x') : std::vector<std::string_view>();
    const auto m = dims.size() == 3 ? parse_int(dims[0]) : std::nullopt;
    const auto n = dims.size() == 3 ? parse_int(dims[1]) : std::nullopt;
    const auto k = dims.size() == 3 ? parse_int(dims[2]) : std::nullopt;
    if (m && n && k && *m > 0 && *n > 0 && *k > 0) {
      p.row.gemm_m = m;
      p.row.gemm_n = n;
      p.row.gemm_k = k;
    } else if (parts.size() > 1) {
      p.not_understood(parts[1]);
    }
    p.row.compute_dtype = "bf16";  // c3bench's default, which its labels always spell out
    if (parts.size() > 2 && is_dtype(parts[2])) {
      p.row.compute_dtype = std::string(parts[2]);
    } else if (parts.size() > 2) {
      p.not_understood(parts[2]);
    }
    return;
  }
  // triad and fma run on fp32.
  p.row.compute_dtype = "fp32";
  if (parts[0] == "triad" && parts.size() == 2) {
    p.row.compute_bytes = parse_size(parts[1]);
    if (!p.row.compute_bytes) p.not_understood(parts[1]);
  } else if (parts[0] == "fma" && parts.size() == 2) {
    p.row.compute_target_ns = parse_duration_ns(parts[1]);
    if (!p.row.compute_target_ns) p.not_understood(parts[1]);
  } else {
    p.row.compute_dtype.reset();
    p.not_understood(parts[0]);
  }
}

void parse_comm(std::string_view s, const Parse& p) {
  const auto parts = operation(s, p.row.comm, p.row.comm_kind);
  if (parts.empty()) return;
  p.row.comm_peer = 0;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (i == 1) {
      if (auto b = parse_size(parts[i])) {
        if (!p.row.comm_bytes) p.row.comm_bytes = b;
        continue;
      }
    }
    if (parts[i] == "peer") {
      p.row.comm_peer = 1;
    } else {
      p.not_understood(parts[i]);
    }
  }
}

void parse_knob(std::string_view kv, const Parse& p) {
  BenchResultRow& row = p.row;
  const size_t eq = kv.find('=');
  const std::string_view key = kv.substr(0, eq);
  const std::string_view value =
      eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1);
  bool ok = !value.empty();
  if (ok && (key == "prio" || key == "priority")) {
    ok = common::stream_priority_from_name(value).has_value();
    if (ok) row.priority = std::string(value);
  } else if (ok && key == "order") {
    ok = common::launch_order_from_name(value).has_value();
    if (ok) row.launch_order = std::string(value);
  } else if (ok && (key == "nch" || key == "nchannels")) {
    auto v = parse_small_int(value);
    ok = v.has_value();
    if (ok) row.nchannels = v;
  } else if (ok && key == "ctas") {
    const size_t colon = value.find(':');
    auto lo = parse_small_int(value.substr(0, colon));
    auto hi = colon == std::string_view::npos ? lo : parse_small_int(value.substr(colon + 1));
    ok = lo && hi;
    if (ok) {
      row.min_ctas = lo;
      row.max_ctas = hi;
    }
  } else if (ok && (key == "smpart" || key == "sm_partition")) {
    std::string_view pct = value;
    if (pct.back() == '%') pct.remove_suffix(1);
    auto v = parse_small_int(pct);
    ok = v && *v <= 100;
    if (ok) row.sm_partition_pct = v;
  } else if (ok && (key == "chunks" || key == "k")) {
    auto v = parse_small_int(value);
    ok = v && *v > 0;
    if (ok) {
      row.pipelined = 1;
      row.chunks = v;
    }
  } else {
    ok = false;
  }
  if (!ok) p.not_understood(kv);
}

}  // namespace

bool config_from_label(BenchResultRow& row, std::vector<std::string>* unknown) {
  // The row's own copy: parsing fills `row`, whose label must not change under it.
  const std::string label = row.label;
  std::string_view s = trim(label);
  std::string_view knobs;
  // Knobs: a trailing " [k=v k=v]".
  if (!s.empty() && s.back() == ']') {
    const size_t open = s.rfind('[');
    if (open != std::string_view::npos) {
      knobs = s.substr(open + 1, s.size() - open - 2);
      s = trim(s.substr(0, open));
    }
  }
  const size_t plus = s.find(" + ");
  if (plus == std::string_view::npos) {
    if (!s.empty() && unknown != nullptr) unknown->emplace_back(s);
    return false;
  }
  const Parse p{row, unknown};
  // The defaults c3bench leaves out of its labels.
  row.priority = "equal";
  row.launch_order = "compute_first";
  row.nchannels = row.min_ctas = row.max_ctas = row.sm_partition_pct = row.pipelined = 0;
  row.chunks = 1;
  for (std::string_view kv : split(knobs, ' ')) {
    kv = trim(kv);
    if (!kv.empty()) parse_knob(kv, p);
  }
  parse_compute(s.substr(0, plus), p);
  parse_comm(s.substr(plus + 3), p);
  return true;
}

}  // namespace c3::tracedb
