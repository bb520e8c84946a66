// Budgets files of `c3scope compare` (compare.h, docs/compare.md "Budgets"): the grammar, and
// the thresholds and limits applied to a comparison's metrics (compare_metrics.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string_view>

#include "c3/analyzer/compare/compare.h"
#include "c3/analyzer/metrics/distribution.h"
#include "c3/tracedb/output_file.h"
#include "compare_metrics.h"

namespace c3::analyzer {
namespace {

struct Dim {
  const char* base;
  const char* kind;  // "time", "pct", "bw", "factor", "fraction"
};
constexpr Dim kDims[] = {
    {"step_time", "time"},
    {"span", "time"},
    {"compute", "time"},
    {"exposed_comm", "time"},
    {"exposed_memcpy", "time"},
    {"idle", "time"},
    {"overlap_pct", "pct"},
    {"duration", "time"},
    {"busbw", "bw"},
    {"kernel", "time"},
    {"slowdown", "factor"},
    {"skew", "time"},
    {"skew_p99", "time"},
    {"wait", "time"},
    {"t_c3", "time"},
    {"t_comp", "time"},
    {"t_comm", "time"},
    {"fraction_of_ideal", "fraction"},
    {"compute_slowdown", "factor"},
    {"comm_slowdown", "factor"},
};

const Dim* dim_of(const std::string& base) {
  for (const Dim& d : kDims) {
    if (base == d.base) return &d;
  }
  return nullptr;
}

// The factor from a budget's unit to the metric's own (ns, %, B/s, factor, fraction); 0 when the
// unit does not fit.
double unit_scale(const std::string& kind, const std::string& unit) {
  if (kind == "time") {
    if (unit == "ns") return 1;
    if (unit == "us") return 1e3;
    if (unit == "ms") return 1e6;
    if (unit == "s") return 1e9;
  } else if (kind == "bw") {
    if (unit == "gbps") return 1e9;
    if (unit == "mbps") return 1e6;
    if (unit == "bps") return 1;
  } else if (kind == "pct") {
    if (unit.empty()) return 1;
  } else if (kind == "factor" || kind == "fraction") {
    if (unit == "pct") return 0.01;
    if (unit.empty() || unit == "x") return 1;
  }
  return 0;
}
const char* units_of(const std::string& kind) {
  if (kind == "time") return "_ns, _us, _ms or _s";
  if (kind == "bw") return "_gbps, _mbps or _bps";
  if (kind == "pct") return "no unit (it is a percentage)";
  return "_pct or no unit";
}

// Text of the budgets file inside an error line: control characters and NUL escaped, at most
// 60 bytes (cut at a UTF-8 boundary), so a bad line of any length or content gives one short line.
std::string shown(const std::string& s) {
  std::string out = tracedb::printable(s);
  if (out.size() <= 60) return out;
  size_t k = 57;
  while (k > 0 && (static_cast<unsigned char>(out[k]) & 0xC0) == 0x80) --k;
  return out.substr(0, k) + "...";
}

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r");
  return s.substr(a, e - a + 1);
}

// Commas to spaces, runs of spaces to one, trimmed.
std::string canonical_selector(const std::string& s) {
  std::string out;
  for (char ch : s) {
    const char x = ch == ',' || ch == '\t' ? ' ' : ch;
    if (x == ' ' && (out.empty() || out.back() == ' ')) continue;
    out += x;
  }
  return trim(out);
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// "busbw_gbps[AllReduce,1G..2G]" -> base busbw, unit gbps, selector "AllReduce 1G..2G".
void parse_name(const std::string& word, Budget* b, const std::string& where) {
  std::string name = word;
  const size_t open = word.find('[');
  if (open != std::string::npos) {
    if (word.back() != ']')
      throw std::invalid_argument(where + "'" + shown(word) + "': a '[' without its ']'");
    b->selector = canonical_selector(word.substr(open + 1, word.size() - open - 2));
    if (b->selector.empty())
      throw std::invalid_argument(where + "'" + shown(word) + "': an empty selector");
    name = word.substr(0, open);
  }
  if (dim_of(name) != nullptr) {
    b->metric = name;
    return;
  }
  const size_t us = name.rfind('_');
  if (us != std::string::npos && dim_of(name.substr(0, us)) != nullptr) {
    b->metric = name.substr(0, us);
    b->unit = name.substr(us + 1);
    return;
  }
  std::string known;
  for (const Dim& d : kDims) known += std::string(known.empty() ? "" : ", ") + d.base;
  throw std::invalid_argument(where + "unknown metric '" + shown(name) + "' (metrics: " + known +
                              ")");
}

double parse_number(const std::string& s, const std::string& where) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != s.size() || !std::isfinite(v))
    throw std::invalid_argument(where + "'" + shown(s) + "' is not a number");
  return v;
}

// The selector a metric id holds ("exposed_comm[rank 3]" -> "rank 3").
std::string selector_of(const std::string& id) {
  const size_t open = id.find('[');
  return open == std::string::npos ? std::string() : id.substr(open + 1, id.size() - open - 2);
}

bool selector_matches(const std::string& budget, const std::string& metric) {
  return lower(canonical_selector(budget)) == lower(canonical_selector(metric));
}

// Why a run may lack a metric a budget names (docs/compare.md "Budgets").
const char* absent_because(const std::string& metric) {
  if (metric == "overlap_pct")
    return "no GPU communication in the run: a run without collectives, or c3bench results "
           "saved without `c3scope record`, has no timeline to measure overlap on";
  if (metric == "step_time" || metric == "wait" || metric == "skew" || metric == "skew_p99")
    return "it needs steps (or several ranks): see --step";
  return "no activity of that kind in the run";
}

// A budget's value for people: in the metric tables' units and precision, so a budget line and
// the metric it checks read alike ("79.8 GB/s", "12.34 us", "17.3 %", "+4.1 %" of slowdown);
// `precise` gives six digits, for a value and a limit that would otherwise print the same.
std::string budget_value_text(const Dim& dim, const Budget& bu, double v, bool precise) {
  const std::string kind = dim.kind;
  char b[96];
  if (kind == "time" && !precise) return compare_time_text(v);
  if (kind == "time") {
    std::snprintf(b, sizeof b, "%.6g ns", v);
  } else if (kind == "bw") {
    std::snprintf(b, sizeof b, precise ? "%.6g GB/s" : "%.1f GB/s", v / 1e9);
  } else if (kind == "pct") {
    std::snprintf(b, sizeof b, precise ? "%.6g %%" : "%.1f %%", v);
  } else if (kind == "factor") {
    std::snprintf(b, sizeof b, precise ? "%+.6g %%" : "%+.1f %%", 100 * (v - 1));
  } else if (bu.unit == "pct") {
    std::snprintf(b, sizeof b, precise ? "%.6g %%" : "%.1f %%", 100 * v);
  } else {
    std::snprintf(b, sizeof b, precise ? "%.6g" : "%.3f", v);
  }
  return b;
}

}  // namespace

Budgets parse_budgets(const std::string& input, const std::string& file) {
  Budgets out;
  out.file = file;
  // A UTF-8 byte-order mark (editors on Windows write one) is not part of the first line.
  const std::string_view bom = "\xEF\xBB\xBF";
  const std::string text = input.starts_with(bom) ? input.substr(bom.size()) : input;
  if (text.find('\0') != std::string::npos)
    throw std::invalid_argument(tracedb::printable(file) +
                                ": holds a NUL byte: a budgets file is text (docs/compare.md)");
  size_t at = 0;
  int line = 0;
  while (at <= text.size()) {
    const size_t nl = text.find('\n', at);
    std::string raw = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? text.size() + 1 : nl + 1;
    ++line;
    const size_t hash = raw.find('#');
    if (hash != std::string::npos) raw.resize(hash);
    const std::string s = trim(raw);
    if (s.empty()) continue;
    const std::string where = tracedb::printable(file) + ":" + std::to_string(line) + ": ";
    Budget b;
    b.line = line;
    b.text = s;
    // Words, where a [...] selector may hold spaces.
    std::vector<std::string> words;
    {
      std::string w;
      int depth = 0;
      for (char ch : s) {
        if (ch == '[') ++depth;
        if (ch == ']') depth = std::max(0, depth - 1);
        if ((ch == ' ' || ch == '\t') && depth == 0) {
          if (!w.empty()) words.push_back(std::move(w));
          w.clear();
        } else {
          w += ch;
        }
      }
      if (depth != 0) throw std::invalid_argument(where + "a '[' without its ']'");
      if (!w.empty()) words.push_back(std::move(w));
    }
    if (words[0] == "threshold") {
      if (words.size() != 3)
        throw std::invalid_argument(
            where + "expected 'threshold METRIC PERCENT%', e.g. 'threshold step_time 3%'");
      b.kind = Budget::Kind::threshold;
      parse_name(words[1], &b, where);
      if (!b.unit.empty())
        throw std::invalid_argument(where + "a threshold names the metric without a unit ('" +
                                    b.metric + "')");
      b.any_selector = b.selector.empty();
      std::string pct = words[2];
      if (pct.empty() || pct.back() != '%')
        throw std::invalid_argument(
            where + std::string("the threshold '").append(shown(pct)).append("' needs a % sign"));
      pct.pop_back();
      const double v = parse_number(pct, where);
      if (v < 0 || v > 1000)
        throw std::invalid_argument(
            where +
            std::string("the threshold ").append(shown(pct)).append("% must be 0% to 1000%"));
      b.value = v / 100;
      out.items.push_back(std::move(b));
      continue;
    }
    // METRIC OP NUMBER, with or without spaces around the operator.
    std::string joined;
    for (const std::string& w : words) joined += w;
    size_t op_at = std::string::npos;
    {
      int depth = 0;
      for (size_t i = 0; i < joined.size(); ++i) {
        if (joined[i] == '[') ++depth;
        if (joined[i] == ']') --depth;
        if (depth == 0 && (joined[i] == '<' || joined[i] == '>' || joined[i] == '=')) {
          op_at = i;
          break;
        }
      }
    }
    if (op_at == std::string::npos || op_at == 0)
      throw std::invalid_argument(
          where + "expected 'METRIC <= NUMBER' (or <, >=, >) or 'threshold METRIC PERCENT%'");
    size_t op_end = op_at + 1;
    if (op_end < joined.size() && joined[op_end] == '=') ++op_end;
    b.op = joined.substr(op_at, op_end - op_at);
    if (b.op != "<=" && b.op != "<" && b.op != ">=" && b.op != ">")
      throw std::invalid_argument(where + "unknown comparison '" + shown(b.op) +
                                  "' (use <=, <, >= or >)");
    parse_name(joined.substr(0, op_at), &b, where);
    const Dim* dim = dim_of(b.metric);
    const double scale = unit_scale(dim->kind, b.unit);
    if (scale == 0) {
      throw std::invalid_argument(where + "'" + b.metric +
                                  (b.unit.empty() ? "" : "_" + shown(b.unit)) + "': " + b.metric +
                                  " takes " + units_of(dim->kind));
    }
    const std::string number = joined.substr(op_end);
    double v = parse_number(number, where) * scale;
    if (!std::isfinite(v))  // 1e300 GB/s is a number, but not one a metric can be compared with
      throw std::invalid_argument(where + "'" + shown(number) + "' is out of range for " +
                                  b.metric);
    if (std::string(dim->kind) == "factor") v += b.unit == "pct" ? 1 : 0;  // a slowdown % -> factor
    b.value = v;
    out.items.push_back(std::move(b));
  }
  return out;
}

std::vector<double> metric_thresholds(const std::vector<Metric>& metrics, double fallback,
                                      const Budgets* budgets) {
  std::vector<double> thresholds(metrics.size(), fallback);
  if (budgets == nullptr) return thresholds;
  for (const Budget& bu : budgets->items) {
    if (bu.kind != Budget::Kind::threshold) continue;
    for (size_t i = 0; i < metrics.size(); ++i) {
      if (metrics[i].base != bu.metric) continue;
      if (!bu.any_selector && !selector_matches(bu.selector, selector_of(metrics[i].id))) continue;
      thresholds[i] = bu.value;
    }
  }
  return thresholds;
}

std::vector<BudgetResult> check_limits(const std::vector<Metric>& metrics, const Budgets& budgets) {
  std::vector<BudgetResult> out;
  for (const Budget& bu : budgets.items) {
    if (bu.kind != Budget::Kind::limit) continue;
    BudgetResult br;
    br.budget = bu;
    const Metric* hit = nullptr;
    for (const Metric& m : metrics) {
      if (m.base != bu.metric) continue;
      const std::string sel = selector_of(m.id);
      if (bu.selector.empty() ? sel.empty() : selector_matches(bu.selector, sel)) {
        hit = &m;
        break;
      }
    }
    const Dim* dim = dim_of(bu.metric);
    const double scale = unit_scale(dim->kind, bu.unit);
    if (hit == nullptr || hit->c.empty()) {
      std::string like;
      int n = 0;
      for (const Metric& m : metrics) {
        if (m.base == bu.metric && n++ < 5) like += std::string(like.empty() ? "" : ", ") + m.id;
      }
      br.checked = false;
      br.why = "the candidate has no metric " + bu.metric +
               (bu.selector.empty() ? "" : "[" + bu.selector + "]") +
               (like.empty() ? " (" + std::string(absent_because(bu.metric)) + ")"
                             : " (it has " + like + (n > 5 ? ", ..." : "") + ")");
      out.push_back(std::move(br));
      continue;
    }
    br.metric_id = hit->id;
    const double v = exact_median(hit->c);
    const double limit = bu.value;
    br.ok = bu.op == "<="   ? v <= limit
            : bu.op == "<"  ? v < limit
            : bu.op == ">=" ? v >= limit
                            : v > limit;
    double shown = v / scale;
    if (std::string(dim->kind) == "factor" && bu.unit == "pct") shown = (v - 1) / scale;
    br.value = shown;
    // In the reports' own units ("79.8 GB/s", as the metric tables say), the limit likewise.
    std::string vt = budget_value_text(*dim, bu, v, false);
    std::string lt = budget_value_text(*dim, bu, limit, false);
    if (vt == lt && v != limit) {
      vt = budget_value_text(*dim, bu, v, true);
      lt = budget_value_text(*dim, bu, limit, true);
    }
    br.why = hit->id;
    br.why.append(" median ").append(vt).append(br.ok ? " is " : " is not ");
    br.why.append(bu.op).append(" ").append(lt);
    if (hit->total) br.why += " (a whole-run value)";
    out.push_back(std::move(br));
  }
  return out;
}

}  // namespace c3::analyzer
