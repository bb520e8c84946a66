#include "bench_grouping.h"

#include <QStringList>
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "c3/common/bench_knobs.h"
#include "c3/common/units.h"

namespace c3::gui::bench_grouping {

using analyzer::BenchConfig;
using analyzer::BenchResult;

int chunks_of(const BenchConfig& c) {
  return c.pipelined ? c.chunks : 0;
}

QString size_text(int64_t bytes) {
  return QString::fromStdString(common::format_bytes(bytes, common::BytesStyle::exact));
}

KnobValue knob_value(const BenchConfig& c, Knob k) {
  switch (k) {
    case Knob::priority:
      return {static_cast<int64_t>(c.priority), common::stream_priority_name(c.priority)};
    case Knob::order:
      return {static_cast<int64_t>(c.order), common::launch_order_name(c.order)};
    case Knob::channels:
      return {c.nchannels,
              c.nchannels == 0 ? std::string("NCCL's choice") : std::to_string(c.nchannels)};
    case Knob::ctas:
      return {int64_t{c.min_ctas} * (int64_t{1} << 31) + c.max_ctas,
              c.min_ctas == 0 && c.max_ctas == 0
                  ? std::string("default")
                  : std::to_string(c.min_ctas) + ":" + std::to_string(c.max_ctas)};
    case Knob::sm_partition:
      return {c.sm_partition_pct, c.sm_partition_pct == 0
                                      ? std::string("off")
                                      : std::to_string(c.sm_partition_pct) + "% compute"};
    case Knob::size:
      return {c.comm_bytes, size_text(c.comm_bytes).toStdString()};
    case Knob::none:
      break;
  }
  return {0, ""};
}

namespace {

// A knob's name, and what an axis of its values says.
struct KnobWords {
  const char* name;
  const char* axis_title;
};

KnobWords knob_words(Knob k) {
  switch (k) {
    case Knob::priority:
      return {"stream priority", "stream priority (communication stream vs compute stream)"};
    case Knob::order:
      return {"launch order", "launch order (which op is launched first)"};
    case Knob::channels:
      return {"NCCL channels", "NCCL channels (count)"};
    case Knob::ctas:
      return {"NCCL CTAs", "NCCL CTAs (min:max, count)"};
    case Knob::sm_partition:
      return {"SM partition", "SM partition (% of SMs for compute, green contexts)"};
    case Knob::size:
      return {"message size", "message size (bytes)"};
    case Knob::none:
      break;
  }
  return {"case", "case (compute + communication, message size)"};
}

}  // namespace

QString knob_name(Knob k) {
  return QString::fromUtf8(knob_words(k).name);
}

QString knob_axis_title(Knob k) {
  return QString::fromUtf8(knob_words(k).axis_title);
}

std::string pair_name(const BenchConfig& c) {
  return (c.compute.empty() ? std::string("-") : c.compute) + " + " +
         (c.comm_kind.empty() ? std::string("-") : c.comm_kind);
}

std::string knobs_text(const BenchConfig& c, Knob except) {
  const BenchConfig def;
  std::string s;
  auto add = [&](Knob k, const std::string& kv) {
    if (k == except) return;
    s += (s.empty() ? "" : " ") + kv;
  };
  if (c.priority != def.priority)
    add(Knob::priority, std::string("prio=") + common::stream_priority_name(c.priority));
  if (c.order != def.order)
    add(Knob::order, std::string("order=") + common::launch_order_name(c.order));
  if (c.nchannels != 0) add(Knob::channels, "nch=" + std::to_string(c.nchannels));
  if (c.min_ctas != 0 || c.max_ctas != 0)
    add(Knob::ctas, "ctas=" + std::to_string(c.min_ctas) + ":" + std::to_string(c.max_ctas));
  if (c.sm_partition_pct != 0)
    add(Knob::sm_partition, "smpart=" + std::to_string(c.sm_partition_pct) + "%");
  return s;
}

bool finite(const std::optional<double>& v) {
  return v && std::isfinite(*v);
}

std::vector<size_t> keep_baseline(const std::vector<BenchResult>& results, std::vector<size_t> rows,
                                  Knob except) {
  const BenchConfig def;
  for (Knob k : kConfigKnobs) {
    if (k == except || rows.empty()) continue;
    const KnobValue def_value = knob_value(def, k);
    std::map<KnobValue, int> count;
    for (size_t i : rows) ++count[knob_value(results[i].config, k)];
    KnobValue base = def_value;
    if (count.count(def_value) == 0) {
      int best = -1;
      for (const auto& [value, n] : count) {
        if (n > best) {
          best = n;
          base = value;
        }
      }
    }
    std::vector<size_t> kept;
    kept.reserve(rows.size());
    for (size_t i : rows) {
      if (knob_value(results[i].config, k) == base) kept.push_back(i);
    }
    rows = std::move(kept);
  }
  return rows;
}

std::vector<size_t> keep_least_chunks(const std::vector<BenchResult>& results,
                                      std::vector<size_t> rows) {
  int least = std::numeric_limits<int>::max();
  for (size_t i : rows) least = std::min(least, chunks_of(results[i].config));
  std::erase_if(rows, [&](size_t i) { return chunks_of(results[i].config) != least; });
  return rows;
}

QString provenance(const std::vector<BenchResult>& results, const std::vector<size_t>& rows) {
  bool sim = false, real = false;
  std::set<std::string> backends;
  for (size_t i : rows) {
    (results[i].simulated ? sim : real) = true;
    backends.insert(results[i].backend.empty() ? std::string("unknown") : results[i].backend);
  }
  QStringList names;
  names.reserve(static_cast<qsizetype>(backends.size()));
  for (const auto& b : backends) names << QString::fromStdString(b);
  const QString kind = sim && real ? QStringLiteral("mixed: simulated and real GPU")
                       : sim       ? QStringLiteral("simulated")
                                   : QStringLiteral("real GPU");
  return kind + QStringLiteral(" · backend") +
         (names.size() > 1 ? QStringLiteral("s ") : QStringLiteral(" ")) +
         names.join(QStringLiteral(", "));
}

std::vector<std::string> distinct_names(const std::vector<BenchConfig>& reps) {
  std::set<std::string> computes, kinds, knobs;
  std::set<int64_t> sizes;
  for (const BenchConfig& c : reps) {
    computes.insert(c.compute);
    kinds.insert(c.comm_kind);
    sizes.insert(c.comm_bytes);
    knobs.insert(knobs_text(c, Knob::none));
  }
  std::vector<std::string> out;
  out.reserve(reps.size());
  for (const BenchConfig& c : reps) {
    std::string name;
    auto add = [&](const std::string& part) { name += (name.empty() ? "" : " · ") + part; };
    if (computes.size() > 1) add(c.compute.empty() ? std::string("no compute") : c.compute);
    if (kinds.size() > 1 || (sizes.size() > 1 && computes.size() == 1))
      add(c.comm_kind.empty() ? std::string("no communication") : c.comm_kind);
    if (sizes.size() > 1)
      add(c.comm_bytes > 0 ? size_text(c.comm_bytes).toStdString() : std::string("-"));
    if (knobs.size() > 1) {
      const std::string k = knobs_text(c, Knob::none);
      add(k.empty() ? std::string("default knobs") : k);
    }
    if (name.empty())
      name = pair_name(c) + (c.comm_bytes > 0 ? " " + size_text(c.comm_bytes).toStdString() : "");
    out.push_back(name);
  }
  return out;
}

std::vector<size_t> slowdown_rows(const std::vector<BenchResult>& results, Knob knob) {
  return keep_baseline(results, slowdown_candidates(results), knob);
}

std::vector<size_t> slowdown_candidates(const std::vector<BenchResult>& results) {
  std::vector<size_t> rows;
  rows.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].config.known &&
        (finite(results[i].compute_slowdown) || finite(results[i].comm_slowdown)))
      rows.push_back(i);
  }
  return keep_least_chunks(results, std::move(rows));
}

}  // namespace c3::gui::bench_grouping
