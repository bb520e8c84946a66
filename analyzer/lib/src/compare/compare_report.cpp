// The reports of `c3scope compare` (compare.h): terminal table, Markdown, JUnit XML and JSON.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "c3/analyzer/compare/compare.h"

namespace c3::analyzer {
namespace {

__attribute__((format(printf, 1, 2))) std::string fmt(const char* f, ...) {
  char b[96];
  va_list args;
  va_start(args, f);
  std::vsnprintf(b, sizeof b, f, args);
  va_end(args);
  return b;
}

std::string time_text(double ns) {
  const double a = std::abs(ns);
  if (a >= 1e9) return fmt("%.3f s", ns / 1e9);
  if (a >= 1e6) return fmt("%.3f ms", ns / 1e6);
  if (a >= 1e3) return fmt("%.2f us", ns / 1e3);
  return fmt("%.0f ns", ns);
}

// A metric's value in its unit, for people.
std::string value_text(const std::string& unit, double v) {
  if (unit == "ns") return time_text(v);
  if (unit == "%") return fmt("%.1f %%", v);
  if (unit == "B/s") return fmt("%.1f GB/s", v / 1e9);
  if (unit == "x") return fmt("%+.1f %%", 100 * (v - 1));  // a slowdown factor as its slowdown
  return fmt("%.3f", v);
}

std::string percent(double x) {
  if (std::isinf(x)) return x > 0 ? "+inf%" : "-inf%";
  return fmt("%+.1f%%", 100 * x);
}

std::string change_text(const MetricResult& m) {
  return m.absolute ? fmt("%+.3f", m.d.change) : percent(m.d.change);
}
std::string interval_text(const MetricResult& m) {
  // A tested metric always has its interval (even [+0.0%, +0.0%], which its "why" quotes too);
  // the p99 of skew has order-statistic intervals when it was decided.
  if (!m.d.tested && (m.base != "skew_p99" || (m.d.lo == 0 && m.d.hi == 0))) return "-";
  if (m.absolute) return fmt("[%+.3f, ", m.d.lo) + fmt("%+.3f]", m.d.hi);
  return "[" + percent(m.d.lo) + ", " + percent(m.d.hi) + "]";
}
std::string threshold_text(const MetricResult& m) {
  return m.absolute ? fmt("%.3f", m.d.threshold) : fmt("%.1f%%", 100 * m.d.threshold);
}
std::string p_text(const MetricResult& m) {
  return m.d.tested ? fmt("%.2g", m.d.p_adjusted) : "-";
}

// Names from traces: at most `n` bytes (cut at a UTF-8 boundary, with "...").
std::string cut(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t k = n - 3;
  while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xC0) == 0x80) --k;
  return s.substr(0, k) + "...";
}

// Valid UTF-8 with no control characters (XML 1.0 forbids most of them): others become '?'.
std::string clean_text(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += c < 0x20 && c != '\t' ? ' ' : static_cast<char>(c);
      ++i;
      continue;
    }
    const size_t len = c >= 0xF0 && c < 0xF5 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c < 0xE0 ? 2 : 0;
    bool ok = len > 0 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k)
      ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

std::string xml(const std::string& s) {
  std::string out;
  for (char ch : clean_text(s)) {
    switch (ch) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

// A Markdown table cell: no pipes or newlines, HTML characters escaped, and no "@name" that
// GitHub would turn into a mention (a kernel or file name in a PR comment must not ping anyone):
// a zero-width space follows each '@'.
std::string md(const std::string& s, size_t n = 120) {
  std::string out;
  for (char ch : clean_text(cut(s, n))) {
    if (ch == '@') {
      out += "@\u200B";
    } else if (ch == '|') {
      out += "\\|";
    } else if (ch == '<') {
      out += "&lt;";
    } else if (ch == '>') {
      out += "&gt;";
    } else if (ch == '&') {
      out += "&amp;";
    } else if (ch == '*' || ch == '_' || ch == '`' || ch == '[' || ch == ']') {
      out += '\\';
      out += ch;
    } else {
      out += ch;
    }
  }
  return out;
}

std::string counts(const Comparison& c) {
  const int n = static_cast<int>(c.metrics.size());
  const int unchanged = n - c.regressions() - c.improvements() - c.consequences() -
                        c.not_significant() - c.inconclusive();
  std::string s = std::to_string(c.regressions()) + " regressed, " +
                  std::to_string(c.improvements()) + " improved, ";
  if (c.not_significant() > 0) s += std::to_string(c.not_significant()) + " not significant, ";
  s += std::to_string(unchanged) + " unchanged, " + std::to_string(c.inconclusive()) +
       " inconclusive of " + std::to_string(n) + " metrics";
  if (c.consequences() > 0)
    s += "; " + std::to_string(c.consequences()) +
         " derived ratios moved with a regression (not improvements)";
  if (!c.budgets.empty()) {
    s += "; " + std::to_string(c.budgets_broken()) + " of " + std::to_string(c.budgets.size()) +
         " budgets broken";
    if (c.budgets_unchecked() > 0)
      s += ", " + std::to_string(c.budgets_unchecked()) + " not checked";
  }
  return s;
}

// The metrics with verdict `v`, where an improvement is a real one (not a derived ratio that
// mirrors a regression: those are consequences()).
std::vector<const MetricResult*> with(const Comparison& c, Verdict v) {
  std::vector<const MetricResult*> out;
  for (const MetricResult& m : c.metrics) {
    if (m.d.verdict == v && m.consequence_of.empty()) out.push_back(&m);
  }
  return out;
}
std::vector<const MetricResult*> consequences(const Comparison& c) {
  std::vector<const MetricResult*> out;
  for (const MetricResult& m : c.metrics) {
    if (m.d.verdict == Verdict::improvement && !m.consequence_of.empty()) out.push_back(&m);
  }
  return out;
}

// The verdict column: a derived ratio that moved with a regression is not called "improvement".
std::string row_label(const MetricResult& m) {
  if (m.d.verdict == Verdict::improvement && !m.consequence_of.empty()) return "consequence";
  return verdict_label(m.d.verdict);
}

// A metric id for a column of `width` bytes: long ids lose their middle, so the selector's end
// (a case's "[chunks=4]", a rank) stays readable.
std::string fit_id(const std::string& id, size_t width) {
  std::string s = clean_text(id);
  if (s.size() <= width) return s;
  const size_t tail = width / 2, head = width - tail - 3;
  size_t a = head, b = s.size() - tail;
  while (a > 0 && (static_cast<unsigned char>(s[a]) & 0xC0) == 0x80) --a;
  while (b < s.size() && (static_cast<unsigned char>(s[b]) & 0xC0) == 0x80) ++b;
  return s.substr(0, a) + "..." + s.substr(b);
}

std::string budget_state(const BudgetResult& b) {
  return !b.checked ? "not checked" : b.ok ? "ok" : "broken";
}

}  // namespace

MetricText metric_text(const MetricResult& m) {
  return {value_text(m.unit, m.d.baseline_median),
          value_text(m.unit, m.d.candidate_median),
          change_text(m),
          interval_text(m),
          p_text(m),
          threshold_text(m)};
}

std::string compare_time_text(double ns) {
  return time_text(ns);
}

std::string Comparison::headline() const {
  std::string s;
  const std::string v = verdict();
  // The first three metrics of verdict `w` (then "..."); returns how many it counted.
  auto first_metrics = [&](Verdict w) {
    int k = 0;
    for (const MetricResult* m : with(*this, w)) {
      if (k++ == 3) {
        s += ", ...";
        break;
      }
      s += (k > 1 ? ", " : "") + m->id + " " + change_text(*m);
    }
    return k;
  };
  if (v == "regression") {
    s = "regression: ";
    int k = first_metrics(Verdict::regression);
    for (const BudgetResult& b : budgets) {
      if (b.ok || !b.checked || k++ >= 4) continue;
      s += (k > 1 ? ", " : "") + std::string("budget '") + b.budget.text + "' broken";
    }
  } else if (v == "inconclusive") {
    s = "inconclusive: ";
    if (!incomparable.empty()) {
      s += "the runs are not comparable (" + incomparable + ")";
    } else {
      std::string why = "no metric could be decided";
      for (const MetricResult& m : metrics) {
        if (m.id == "step_time" && m.d.verdict == Verdict::inconclusive)
          why = "step_time: " + m.d.why;
      }
      s += why;
    }
  } else if (v == "not_significant") {
    // Changes beyond their threshold the bad way that the corrected test does not confirm.
    s = "no significant regression; not significant: ";
    int k = 0;
    for (const MetricResult& m : metrics) {
      if (!m.possible_regression()) continue;
      if (k++ == 3) {
        s += ", ...";
        break;
      }
      s += (k > 1 ? ", " : "") + m.id + " " + change_text(m) + " " + interval_text(m) + " (p adj " +
           p_text(m) + ")";
    }
  } else if (v == "improvement") {
    s = "no regression; improved: ";
    first_metrics(Verdict::improvement);
  } else {
    s = has_baseline ? "no regression" : "budgets hold";
  }
  return s + " (" + counts(*this) + ")";
}

std::string compare_text(const Comparison& c, bool color) {
  std::string out;
  auto paint = [&](Verdict v, const std::string& s) {
    if (!color) return s;
    const char* code = v == Verdict::regression                                      ? "\033[1;31m"
                       : v == Verdict::improvement                                   ? "\033[32m"
                       : v == Verdict::inconclusive || v == Verdict::not_significant ? "\033[33m"
                                                                                     : "";
    return *code != 0 ? code + s + "\033[0m" : s;
  };
  out += "c3scope compare: " + c.headline() + "\n";
  if (c.has_baseline) {
    out += "  baseline:  " + clean_text(c.baseline_name) + " (" + std::to_string(c.ranks_baseline) +
           " ranks, " + std::to_string(c.baseline_steps) + " steps)\n";
  }
  out += "  candidate: " + clean_text(c.candidate_name) + " (" + std::to_string(c.ranks_candidate) +
         " ranks, " + std::to_string(c.candidate_steps) + " steps)\n";
  for (const std::string& n : c.notes) out += "  " + clean_text(n) + "\n";
  if (c.explained.available) {
    const Explained& e = c.explained;
    out += "\nmedian step time " + time_text(e.baseline[5]) + " -> " + time_text(e.candidate[5]) +
           " (" + (e.delta(5) >= 0 ? "+" : "") + time_text(e.delta(5)) + "), of which:\n";
    for (size_t i = 0; i < 5; ++i) {
      char b[160];
      std::snprintf(b, sizeof b, "  %-16s %12s -> %12s  %s%s\n", Explained::kParts[i],
                    time_text(e.baseline[i]).c_str(), time_text(e.candidate[i]).c_str(),
                    e.delta(i) >= 0 ? "+" : "", time_text(e.delta(i)).c_str());
      out += b;
    }
  }
  if (c.explained_path.available) {
    const ExplainedPath& e = c.explained_path;
    out +=
        "\nalong the critical path (median over the steps of each part; docs/analyze.md "
        "\"Critical path\"):\n";
    for (size_t i = 0; i < ExplainedPath::kRows; ++i) {
      if (e.baseline[i] == 0 && e.candidate[i] == 0 && i + 1 < ExplainedPath::kRows) continue;
      char b[200];
      std::snprintf(b, sizeof b, "  %-24s %12s -> %12s  %s%s\n", ExplainedPath::name(i),
                    time_text(e.baseline[i]).c_str(), time_text(e.candidate[i]).c_str(),
                    e.delta(i) >= 0 ? "+" : "", time_text(e.delta(i)).c_str());
      out += b;
    }
  }
  if (!c.metrics.empty()) {
    // Unchanged metrics past --top are counted, not listed.
    std::vector<const MetricResult*> shown;
    size_t unchanged_shown = 0, unchanged_left = 0;
    for (const MetricResult& m : c.metrics) {
      if (m.d.verdict == Verdict::unchanged &&
          unchanged_shown++ >= static_cast<size_t>(std::max(0, c.top))) {
        ++unchanged_left;
        continue;
      }
      shown.push_back(&m);
    }
    // The metric column fits the longest id listed (up to 72 bytes; longer ones lose their
    // middle, never the selector's end such as a case's "[chunks=4]").
    size_t width = 30;
    for (const MetricResult* m : shown) width = std::max(width, clean_text(m->id).size());
    width = std::min<size_t>(width, 72);
    auto line_of = [&](const std::string& verdict, const std::string& id, const std::string& vb,
                       const std::string& vc, const std::string& ch, const std::string& iv,
                       const std::string& p, const std::string& th, const std::string& n) {
      char b[512];
      std::snprintf(b, sizeof b, "%-15s %-*s %13s %13s %9s %20s %8s %9s %7s\n", verdict.c_str(),
                    static_cast<int>(width), id.c_str(), vb.c_str(), vc.c_str(), ch.c_str(),
                    iv.c_str(), p.c_str(), th.c_str(), n.c_str());
      return std::string(b);
    };
    out += "\n" + line_of("verdict", "metric", "baseline", "candidate", "change", "95% interval",
                          "p (adj)", "threshold", "n");
    for (const MetricResult* mp : shown) {
      const MetricResult& m = *mp;
      const std::string n = std::to_string(m.n_baseline) + "/" + std::to_string(m.n_candidate);
      const std::string word = row_label(m);
      std::string line = line_of(word, fit_id(m.id, width), value_text(m.unit, m.d.baseline_median),
                                 value_text(m.unit, m.d.candidate_median), change_text(m),
                                 interval_text(m), p_text(m), threshold_text(m), n);
      // Colour the verdict column only (the padding stays aligned); a consequence is not green.
      if (m.consequence_of.empty()) line = paint(m.d.verdict, word) + line.substr(word.size());
      out += line;
      if (m.d.verdict != Verdict::unchanged) {
        out += "                " + clean_text(m.d.why) + "\n";
        if (!m.detail.empty()) out += "                " + clean_text(m.detail) + "\n";
      }
    }
    if (unchanged_left > 0)
      out += "... and " + std::to_string(unchanged_left) +
             " more unchanged metrics (--top N shows more; --json lists every metric)\n";
  }
  if (!c.budgets.empty()) {
    out += "\nbudgets:\n";
    for (const BudgetResult& b : c.budgets) {
      const std::string state = !b.checked ? "not checked "
                                : b.ok     ? "ok          "
                                           : paint(Verdict::regression, "BROKEN      ");
      out += "  " + state + clean_text(b.budget.text) + ": " + clean_text(b.why) + "\n";
    }
  }
  auto listing = [&](const char* what, const std::vector<std::string>& v) {
    if (v.empty()) return;
    out += "\n" + std::to_string(v.size()) + " " + what + ":\n";
    for (size_t i = 0; i < v.size() && i < static_cast<size_t>(std::max(0, c.top)); ++i)
      out += "  " + clean_text(cut(v[i], 120)) + "\n";
    if (v.size() > static_cast<size_t>(std::max(0, c.top)))
      out += "  ... and " + std::to_string(v.size() - static_cast<size_t>(c.top)) + " more\n";
  };
  listing("only in the candidate", c.added);
  listing("only in the baseline", c.removed);
  return out;
}

std::string compare_markdown(const Comparison& c, size_t limit) {
  const std::string v = c.verdict();
  const char* mark = v == "regression"                               ? ":x:"
                     : v == "inconclusive" || v == "not_significant" ? ":warning:"
                                                                     : ":white_check_mark:";
  std::string head =
      std::string("**c3scope compare** ") + mark + " " + md(c.headline(), 2000) + "\n\n";
  if (c.has_baseline) {
    head += "Baseline `" + md(c.baseline_name, 200) + "` (" + std::to_string(c.ranks_baseline) +
            " ranks, " + std::to_string(c.baseline_steps) + " steps), candidate `" +
            md(c.candidate_name, 200) + "` (" + std::to_string(c.ranks_candidate) + " ranks, " +
            std::to_string(c.candidate_steps) + " steps).\n\n";
  }
  if (c.explained.available) {
    const Explained& e = c.explained;
    head += "Median step time " + time_text(e.baseline[5]) + " → " + time_text(e.candidate[5]) +
            " (" + (e.delta(5) >= 0 ? "+" : "") + time_text(e.delta(5)) + "):\n\n";
    head += "| part | baseline | candidate | change |\n|---|---:|---:|---:|\n";
    for (size_t i = 0; i < 6; ++i) {
      head += std::string("| ") + (i == 5 ? "**step time**" : Explained::kParts[i]) + " | " +
              time_text(e.baseline[i]) + " | " + time_text(e.candidate[i]) + " | " +
              (e.delta(i) >= 0 ? "+" : "") + time_text(e.delta(i)) + " |\n";
    }
    head += "\n";
  }
  const std::string header =
      "| verdict | metric | baseline | candidate | change | 95% interval | p (adj.) | threshold |\n"
      "|---|---|---:|---:|---:|---|---:|---:|\n";
  auto row = [&](const MetricResult& m) {
    return "| " + row_label(m) + " | " + md(m.id) + " | " +
           value_text(m.unit, m.d.baseline_median) + " | " +
           value_text(m.unit, m.d.candidate_median) + " | " + change_text(m) + " | " +
           interval_text(m) + " | " + p_text(m) + " | " + threshold_text(m) + " |\n";
  };
  std::string body;
  auto section = [&](const char* title, const std::vector<const MetricResult*>& rows) {
    if (rows.empty()) return;
    body += std::string("#### ") + title + "\n\n" + header;
    for (size_t i = 0; i < rows.size() && i < static_cast<size_t>(std::max(1, c.top)); ++i)
      body += row(*rows[i]);
    if (rows.size() > static_cast<size_t>(std::max(1, c.top)))
      body += "\n" + std::to_string(rows.size() - static_cast<size_t>(c.top)) +
              " more in the details below.\n";
    body += "\n";
    // The reasons of the top ones.
    for (size_t i = 0; i < rows.size() && i < 5; ++i) {
      body += "- " + md(rows[i]->id) + ": " + md(rows[i]->d.why, 400);
      if (!rows[i]->detail.empty()) body += "; " + md(rows[i]->detail, 400);
      body += "\n";
    }
    body += "\n";
  };
  // Budgets first: a broken one fails the build whatever the statistics say.
  if (!c.budgets.empty()) {
    body += "#### Budgets\n\n| | budget | value |\n|---|---|---|\n";
    for (const BudgetResult& b : c.budgets) {
      const std::string state = budget_state(b);
      body += "| " + (state == "broken" ? "**broken**" : state) + " | " + md(b.budget.text) +
              " | " + md(b.why, 300) + " |\n";
    }
    body += "\n";
  }
  section("Regressions", with(c, Verdict::regression));
  section("Not significant (the interval excludes no change; the corrected test does not reject)",
          with(c, Verdict::not_significant));
  section("Improvements", with(c, Verdict::improvement));
  section("Derived ratios that moved with a regression (not improvements)", consequences(c));
  // The collapsed details fill what is left, row by row.
  const std::string tail = "\n</details>\n";
  std::string out = head + body;
  const std::string notes_open = "<details><summary>Runs</summary>\n\n";
  std::string notes = notes_open;
  if (!c.incomparable.empty()) notes += "- not comparable: " + md(c.incomparable, 2000) + "\n";
  for (const std::string& n : c.notes) notes += "- " + md(n, 400) + "\n";
  notes += tail;
  if (out.size() + notes.size() + 200 < limit) out += notes;
  auto details = [&](const std::string& title, const std::vector<std::string>& rows,
                     const std::string& table_head) {
    if (rows.empty()) return;
    std::string d = "<details><summary>" + title + "</summary>\n\n" + table_head;
    size_t shown = 0;
    for (const std::string& r : rows) {
      if (out.size() + d.size() + r.size() + tail.size() + 200 > limit) break;
      d += r;
      ++shown;
    }
    if (shown < rows.size())
      d += "\n" + std::to_string(rows.size() - shown) +
           " rows left out to stay within GitHub's 1 MiB summary limit (--json has them all).\n";
    d += tail;
    if (out.size() + d.size() <= limit) out += d;
  };
  std::vector<std::string> all;
  all.reserve(c.metrics.size());
  for (const MetricResult& m : c.metrics) all.push_back(row(m));
  details("All " + std::to_string(c.metrics.size()) + " metrics", all, header);
  std::vector<std::string> added, removed;
  for (const std::string& a : c.added) added.push_back("- " + md(a, 300) + "\n");
  for (const std::string& r : c.removed) removed.push_back("- " + md(r, 300) + "\n");
  details(std::to_string(c.added.size()) + " only in the candidate", added, "");
  details(std::to_string(c.removed.size()) + " only in the baseline", removed, "");
  if (out.size() > limit) out.resize(limit);  // (the head alone never is)
  return out;
}

std::string compare_junit(const Comparison& c) {
  // The common JUnit schema (the one Jenkins, GitLab and GitHub reporters read): testsuites >
  // testsuite > testcase, with failure / skipped children whose text carries the numbers.
  std::string cases;
  int failures = 0, skipped = 0, tests = 0;
  for (const MetricResult& m : c.metrics) {
    ++tests;
    cases += "    <testcase name=\"" + xml(m.id) + "\" classname=\"c3scope.compare." +
             xml(m.group) + "\" time=\"0\">\n";
    std::string numbers =
        m.id + ": " + row_label(m) + "; baseline " + value_text(m.unit, m.d.baseline_median) +
        ", candidate " + value_text(m.unit, m.d.candidate_median) + ", change " + change_text(m) +
        ", interval " + interval_text(m) + ", p " +
        (m.d.tested ? fmt("%.3g", m.d.p) : std::string("-")) + " (adjusted " + p_text(m) +
        "), threshold " + threshold_text(m) + ", samples " + std::to_string(m.n_baseline) + "/" +
        std::to_string(m.n_candidate) + "; " + m.d.why + (m.detail.empty() ? "" : "; " + m.detail);
    if (!m.consequence_of.empty())
      numbers += "; not an improvement: it follows from " + m.consequence_of;
    if (m.d.verdict == Verdict::regression) {
      ++failures;
      cases += "      <failure type=\"regression\" message=\"" + xml(m.id + " " + change_text(m)) +
               "\">" + xml(numbers) + "</failure>\n";
    } else if (m.d.verdict == Verdict::inconclusive) {
      ++skipped;
      cases += "      <skipped message=\"" + xml(numbers) + "\"/>\n";
    } else {
      cases += "      <system-out>" + xml(numbers) + "</system-out>\n";
    }
    cases += "    </testcase>\n";
  }
  std::string budget_cases;
  int budget_failures = 0, budget_skipped = 0;
  for (const BudgetResult& b : c.budgets) {
    budget_cases += "    <testcase name=\"" + xml(b.budget.text) +
                    "\" classname=\"c3scope.compare.budget\" time=\"0\">\n";
    const std::string text =
        "budget '" + b.budget.text + "' (line " + std::to_string(b.budget.line) + "): " + b.why;
    if (!b.checked) {
      ++budget_skipped;
      budget_cases += "      <skipped message=\"" + xml(text) + "\"/>\n";
    } else if (!b.ok) {
      ++budget_failures;
      budget_cases += "      <failure type=\"budget\" message=\"" + xml(text) + "\">" + xml(text) +
                      "</failure>\n";
    } else {
      budget_cases += "      <system-out>" + xml(text) + "</system-out>\n";
    }
    budget_cases += "    </testcase>\n";
  }
  const int all_tests = tests + static_cast<int>(c.budgets.size());
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"c3scope compare\" tests=\"" + std::to_string(all_tests) +
         "\" failures=\"" + std::to_string(failures + budget_failures) +
         "\" errors=\"0\" skipped=\"" + std::to_string(skipped + budget_skipped) +
         "\" time=\"0\">\n";
  if (c.has_baseline) {
    out += "  <testsuite name=\"c3scope compare: metrics\" tests=\"" + std::to_string(tests) +
           "\" failures=\"" + std::to_string(failures) + "\" errors=\"0\" skipped=\"" +
           std::to_string(skipped) + "\" time=\"0\">\n";
    out += "    <properties>\n      <property name=\"baseline\" value=\"" + xml(c.baseline_name) +
           "\"/>\n      <property name=\"candidate\" value=\"" + xml(c.candidate_name) +
           "\"/>\n      <property name=\"verdict\" value=\"" + xml(c.headline()) + "\"/>\n";
    if (!c.incomparable.empty())
      out += "      <property name=\"incomparable\" value=\"" + xml(c.incomparable) + "\"/>\n";
    out += "    </properties>\n" + cases + "  </testsuite>\n";
  }
  if (!c.budgets.empty()) {
    out += "  <testsuite name=\"c3scope compare: budgets\" tests=\"" +
           std::to_string(c.budgets.size()) + "\" failures=\"" + std::to_string(budget_failures) +
           "\" errors=\"0\" skipped=\"" + std::to_string(budget_skipped) + "\" time=\"0\">\n" +
           budget_cases + "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

std::string compare_json(const Comparison& c) {
  using ojson = nlohmann::ordered_json;
  ojson j;
  j["schema"] = "c3scope-compare/1";
  j["baseline"] = c.has_baseline ? ojson(c.baseline_name) : ojson(nullptr);
  j["candidate"] = c.candidate_name;
  j["verdict"] = c.verdict();
  j["exit_code"] = c.exit_code();
  j["headline"] = c.headline();
  j["incomparable"] = c.incomparable.empty() ? ojson(nullptr) : ojson(c.incomparable);
  j["options"] = {{"alpha", c.decide.alpha},
                  {"min_samples", c.decide.min_samples},
                  {"level", c.decide.level},
                  {"threshold", c.threshold},
                  {"top", c.top}};
  j["runs"] = {{"baseline", {{"ranks", c.ranks_baseline}, {"steps", c.baseline_steps}}},
               {"candidate", {{"ranks", c.ranks_candidate}, {"steps", c.candidate_steps}}}};
  j["notes"] = c.notes;
  if (c.explained.available) {
    ojson e;
    for (size_t i = 0; i < 6; ++i) {
      e[Explained::kParts[i]] = {{"baseline_ns", c.explained.baseline[i]},
                                 {"candidate_ns", c.explained.candidate[i]},
                                 {"change_ns", c.explained.delta(i)}};
    }
    j["explained"] = std::move(e);
    if (c.explained_path.available) {
      ojson p;
      for (size_t i = 0; i < ExplainedPath::kRows; ++i) {
        const std::string key = i < kPathParts    ? std::string(ExplainedPath::name(i))
                                : i == kPathParts ? "peer_wait"
                                                  : "path";
        p[key] = {{"baseline_ns", c.explained_path.baseline[i]},
                  {"candidate_ns", c.explained_path.candidate[i]},
                  {"change_ns", c.explained_path.delta(i)}};
      }
      j["explained_path"] = std::move(p);
    } else {
      j["explained_path"] = nullptr;
    }
  } else {
    j["explained"] = nullptr;
  }
  ojson ms = ojson::array();
  for (const MetricResult& m : c.metrics) {
    const bool has_interval = !(m.d.lo == 0 && m.d.hi == 0);
    ms.push_back(
        {{"id", m.id},
         {"metric", m.base},
         {"group", m.group},
         {"unit", m.unit},
         {"up_is_worse", m.up_is_worse},
         {"absolute", m.absolute},
         {"verdict", verdict_name(m.d.verdict)},
         {"baseline", m.d.baseline_median},
         {"candidate", m.d.candidate_median},
         {"change", std::isfinite(m.d.change) ? ojson(m.d.change) : ojson(nullptr)},
         {"interval", has_interval ? ojson({m.d.lo, m.d.hi}) : ojson(nullptr)},
         {"tested", m.d.tested},
         {"p", m.d.tested ? ojson(m.d.p) : ojson(nullptr)},
         {"p_adjusted", m.d.tested ? ojson(m.d.p_adjusted) : ojson(nullptr)},
         {"threshold", m.d.threshold},
         {"samples", {m.n_baseline, m.n_candidate}},
         {"why", m.d.why},
         {"detail", m.detail},
         {"derived", m.derived},
         {"consequence_of", m.consequence_of.empty() ? ojson(nullptr) : ojson(m.consequence_of)}});
  }
  j["metrics"] = std::move(ms);
  ojson bs = ojson::array();
  for (const BudgetResult& b : c.budgets) {
    bs.push_back({{"line", b.budget.line},
                  {"budget", b.budget.text},
                  {"kind", b.budget.kind == Budget::Kind::limit ? "limit" : "threshold"},
                  {"metric", b.metric_id.empty() ? ojson(nullptr) : ojson(b.metric_id)},
                  {"value", b.metric_id.empty() ? ojson(nullptr) : ojson(b.value)},
                  {"ok", b.ok},
                  {"checked", b.checked},
                  {"why", b.why}});
  }
  j["budgets"] = std::move(bs);
  j["only_in_candidate"] = c.added;
  j["only_in_baseline"] = c.removed;
  return j.dump(2, ' ', false, ojson::error_handler_t::replace) + "\n";
}

}  // namespace c3::analyzer
