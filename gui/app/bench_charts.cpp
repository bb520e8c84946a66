#include "bench_charts.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLineSeries>
#include <QSignalBlocker>
#include <QTabWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <utility>

namespace c3::gui {
namespace {

using analyzer::BenchResult;

// ---- label parsing ----

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

std::optional<int> parse_small_int(std::string_view s) {
  auto v = parse_int(s);
  if (!v || *v < 0 || *v > std::numeric_limits<int>::max()) return std::nullopt;
  return static_cast<int>(*v);
}

// "64M", "1G", "512K", "4096", "64MB" (K/M/G/T are powers of 1024, as c3bench spells them).
std::optional<int64_t> parse_size(std::string_view s) {
  if (s.empty()) return std::nullopt;
  auto upper = [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  };
  if (upper(s.back()) == 'B' && s.size() > 1) s.remove_suffix(1);
  int shift = 0;
  switch (upper(s.back())) {
    case 'K':
      shift = 10;
      break;
    case 'M':
      shift = 20;
      break;
    case 'G':
      shift = 30;
      break;
    case 'T':
      shift = 40;
      break;
    default:
      break;
  }
  if (shift > 0) s.remove_suffix(1);
  auto v = parse_int(s);
  if (!v || *v <= 0 || *v > (int64_t{1} << 50) >> shift) return std::nullopt;
  return *v << shift;
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

void parse_compute(std::string_view s, BenchCase& c) {
  s = trim(s);
  if (s.empty() || s == "-") return;
  c.compute = std::string(s);
  c.compute_kind = std::string(s.substr(0, s.find(':')));
}

void parse_comm(std::string_view s, BenchCase& c) {
  s = trim(s);
  if (s.empty() || s == "-") return;
  c.comm = std::string(s);
  const auto parts = split(s, ':');
  c.comm_kind = std::string(parts[0]);
  for (size_t i = 1; i < parts.size(); ++i) {
    if (i == 1) {
      if (auto b = parse_size(parts[i])) {
        c.bytes = *b;
        continue;
      }
    }
    if (parts[i] == "peer") {
      c.peer = true;
    } else {
      c.unknown.emplace_back(parts[i]);
    }
  }
}

void parse_knob(std::string_view kv, BenchCase& c) {
  const size_t eq = kv.find('=');
  const std::string_view key = kv.substr(0, eq);
  const std::string_view value =
      eq == std::string_view::npos ? std::string_view() : kv.substr(eq + 1);
  bool ok = !value.empty();
  if (ok && (key == "prio" || key == "priority")) {
    c.priority = std::string(value);
  } else if (ok && key == "order") {
    c.order = std::string(value);
  } else if (ok && (key == "nch" || key == "nchannels")) {
    auto v = parse_small_int(value);
    ok = v.has_value();
    if (ok) c.nchannels = *v;
  } else if (ok && key == "ctas") {
    const size_t colon = value.find(':');
    auto lo = parse_small_int(value.substr(0, colon));
    auto hi = colon == std::string_view::npos ? lo : parse_small_int(value.substr(colon + 1));
    ok = lo && hi;
    if (ok) {
      c.min_ctas = *lo;
      c.max_ctas = *hi;
    }
  } else if (ok && (key == "smpart" || key == "sm_partition")) {
    std::string_view pct = value;
    if (pct.back() == '%') pct.remove_suffix(1);
    auto v = parse_small_int(pct);
    ok = v && *v <= 100;
    if (ok) c.sm_partition_pct = *v;
  } else if (ok && (key == "chunks" || key == "k")) {
    auto v = parse_small_int(value);
    ok = v && *v > 0;
    if (ok) c.chunks = *v;
  } else {
    ok = false;
  }
  if (!ok) c.unknown.emplace_back(kv);
}

// ---- what the charts group by ----

enum class Knob { priority, order, channels, ctas, sm_partition, size, none };
constexpr Knob kConfigKnobs[] = {Knob::priority, Knob::order, Knob::channels, Knob::ctas,
                                 Knob::sm_partition};

using KnobValue = std::pair<int64_t, std::string>;  // sort key, text

constexpr const char* kSizeUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};

QString size_text(int64_t bytes) {
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return QStringLiteral("%1 %2").arg(bytes).arg(QLatin1String(kSizeUnits[unit]));
}

KnobValue knob_value(const BenchCase& c, Knob k) {
  switch (k) {
    case Knob::priority: {
      const int64_t key = c.priority == "equal"       ? 0
                          : c.priority == "comm_high" ? 1
                          : c.priority == "comm_low"  ? 2
                                                      : 3;
      return {key, c.priority};
    }
    case Knob::order:
      return {c.order == "compute_first" ? 0 : c.order == "comm_first" ? 1 : 2, c.order};
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
      return {c.bytes, size_text(c.bytes).toStdString()};
    case Knob::none:
      break;
  }
  return {0, ""};
}

QString knob_name(Knob k) {
  switch (k) {
    case Knob::priority:
      return QStringLiteral("stream priority");
    case Knob::order:
      return QStringLiteral("launch order");
    case Knob::channels:
      return QStringLiteral("NCCL channels");
    case Knob::ctas:
      return QStringLiteral("NCCL CTAs");
    case Knob::sm_partition:
      return QStringLiteral("SM partition");
    case Knob::size:
      return QStringLiteral("message size");
    case Knob::none:
      break;
  }
  return QStringLiteral("case");
}

QString knob_axis_title(Knob k) {
  switch (k) {
    case Knob::priority:
      return QStringLiteral("stream priority (communication stream vs compute stream)");
    case Knob::order:
      return QStringLiteral("launch order (which op is launched first)");
    case Knob::channels:
      return QStringLiteral("NCCL channels (count)");
    case Knob::ctas:
      return QStringLiteral("NCCL CTAs (min:max, count)");
    case Knob::sm_partition:
      return QStringLiteral("SM partition (% of SMs for compute, green contexts)");
    case Knob::size:
      return QStringLiteral("message size (bytes)");
    case Knob::none:
      break;
  }
  return QStringLiteral("case (compute + communication, message size)");
}

std::string pair_name(const BenchCase& c) {
  return (c.compute.empty() ? std::string("-") : c.compute) + " + " +
         (c.comm_kind.empty() ? std::string("-") : c.comm_kind);
}

// The knob settings other than `except` (and the chunk count), as c3bench spells them.
std::string knobs_text(const BenchCase& c, Knob except) {
  const BenchCase def;
  std::string s;
  auto add = [&](Knob k, const std::string& kv) {
    if (k == except) return;
    s += (s.empty() ? "" : " ") + kv;
  };
  if (c.priority != def.priority) add(Knob::priority, "prio=" + c.priority);
  if (c.order != def.order) add(Knob::order, "order=" + c.order);
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

struct Mean {
  double sum = 0;
  int n = 0;
  void add(double v) {
    sum += v;
    ++n;
  }
  double value() const { return n > 0 ? sum / n : 0.0; }
};

// The rows of `rows` whose configuration knobs other than `except` sit at one baseline
// setting each: the default where some row has it, else the most common value.
std::vector<size_t> keep_baseline(const std::vector<BenchCase>& cases, std::vector<size_t> rows,
                                  Knob except) {
  const BenchCase def;
  for (Knob k : kConfigKnobs) {
    if (k == except || rows.empty()) continue;
    const KnobValue def_value = knob_value(def, k);
    std::map<KnobValue, int> count;
    for (size_t i : rows) ++count[knob_value(cases[i], k)];
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
      if (knob_value(cases[i], k) == base) kept.push_back(i);
    }
    rows = std::move(kept);
  }
  return rows;
}

// Rows of the unsplit schedule: independent streams where there are any, else the pipelined
// schedule with the fewest chunks.
std::vector<size_t> keep_least_chunks(const std::vector<BenchCase>& cases,
                                      std::vector<size_t> rows) {
  int least = std::numeric_limits<int>::max();
  for (size_t i : rows) least = std::min(least, cases[i].chunks);
  std::erase_if(rows, [&](size_t i) { return cases[i].chunks != least; });
  return rows;
}

// "simulated · backend sim", "real GPU · backend cuda", "mixed: simulated and real GPU ·
// backends cuda, sim".
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

QColor blend(const QColor& a, const QColor& b, float t) {
  return QColor::fromRgbF(a.redF() * (1 - t) + b.redF() * t, a.greenF() * (1 - t) + b.greenF() * t,
                          a.blueF() * (1 - t) + b.blueF() * t);
}

// An x axis whose positions are log2 of `values`, each labelled.
QCategoryAxis* log2_axis(const std::set<int64_t>& values,
                         const std::function<QString(int64_t)>& label, const QString& title) {
  auto* axis = new QCategoryAxis();
  axis->setStartValue(std::log2(static_cast<double>(*values.begin())) - 0.5);
  for (int64_t v : values) axis->append(label(v), std::log2(static_cast<double>(v)));
  axis->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  const double lo = std::log2(static_cast<double>(*values.begin()));
  const double hi = std::log2(static_cast<double>(*values.rbegin()));
  axis->setRange(lo - 0.5, hi + 0.5);
  axis->setTitleText(title);
  return axis;
}

// A value axis over [lo, hi] with some room; an axis of values that are all >= 0 starts at 0 at
// the lowest (bars).
QValueAxis* value_axis(double lo, double hi, const QString& title, const char* format) {
  if (!(hi > lo)) {
    lo -= 0.5;
    hi += 0.5;
  }
  const double pad = (hi - lo) * 0.08;
  auto* axis = new QValueAxis();
  axis->setRange(lo >= 0 && lo - pad < 0 ? 0.0 : lo - pad, hi + pad);
  axis->applyNiceNumbers();
  axis->setLabelFormat(QLatin1String(format));
  axis->setTitleText(title);
  return axis;
}

// Names that tell configurations apart by what differs among them: the compute op, the
// communication op, the message size, the other knobs.
std::vector<std::string> distinct_names(const std::vector<BenchCase>& reps) {
  std::set<std::string> computes, kinds, knobs;
  std::set<int64_t> sizes;
  for (const BenchCase& c : reps) {
    computes.insert(c.compute);
    kinds.insert(c.comm_kind);
    sizes.insert(c.bytes);
    knobs.insert(knobs_text(c, Knob::none));
  }
  std::vector<std::string> out;
  out.reserve(reps.size());
  for (const BenchCase& c : reps) {
    std::string name;
    auto add = [&](const std::string& part) { name += (name.empty() ? "" : " · ") + part; };
    if (computes.size() > 1) add(c.compute.empty() ? std::string("no compute") : c.compute);
    if (kinds.size() > 1 || (sizes.size() > 1 && computes.size() == 1))
      add(c.comm_kind.empty() ? std::string("no communication") : c.comm_kind);
    if (sizes.size() > 1) add(c.bytes > 0 ? size_text(c.bytes).toStdString() : std::string("-"));
    if (knobs.size() > 1) {
      const std::string k = knobs_text(c, Knob::none);
      add(k.empty() ? std::string("default knobs") : k);
    }
    if (name.empty())
      name = pair_name(c) + (c.bytes > 0 ? " " + size_text(c.bytes).toStdString() : "");
    out.push_back(name);
  }
  return out;
}

// A bottom legend when its names fit in a row, else a column on the right.
void place_legend(QChart* chart) {
  qsizetype chars = 0;
  for (const QAbstractSeries* s : chart->series()) chars += s->name().size() + 4;
  chart->legend()->setAlignment(chars > 90 ? Qt::AlignRight : Qt::AlignBottom);
}

// Slowdown rows for `knob`: results with slowdowns, of the unsplit schedule, the other knobs at
// their baseline.
std::vector<size_t> slowdown_rows(const std::vector<BenchResult>& results,
                                  const std::vector<BenchCase>& cases, Knob knob) {
  std::vector<size_t> rows;
  rows.reserve(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    if (cases[i].parsed &&
        (finite(results[i].compute_slowdown) || finite(results[i].comm_slowdown)))
      rows.push_back(i);
  }
  rows = keep_least_chunks(cases, std::move(rows));
  return keep_baseline(cases, std::move(rows), knob);
}

}  // namespace

BenchCase parse_bench_label(const std::string& label) {
  BenchCase c;
  std::string_view s = trim(label);
  // Knobs: a trailing " [k=v k=v]".
  if (!s.empty() && s.back() == ']') {
    const size_t open = s.rfind('[');
    if (open != std::string_view::npos) {
      const std::string_view knobs = s.substr(open + 1, s.size() - open - 2);
      for (std::string_view kv : split(knobs, ' ')) {
        kv = trim(kv);
        if (!kv.empty()) parse_knob(kv, c);
      }
      s = trim(s.substr(0, open));
    }
  }
  const size_t plus = s.find(" + ");
  if (plus == std::string_view::npos) {
    if (!s.empty()) c.unknown.emplace_back(s);
    return c;
  }
  parse_compute(s.substr(0, plus), c);
  parse_comm(s.substr(plus + 3), c);
  c.parsed = true;
  return c;
}

BenchCharts::BenchCharts(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  summary_ = new QLabel(this);
  summary_->setObjectName(QStringLiteral("bench_summary"));
  summary_->setTextFormat(Qt::PlainText);
  summary_->setWordWrap(true);
  empty_ = new QLabel(this);
  empty_->setObjectName(QStringLiteral("bench_empty"));
  empty_->setTextFormat(Qt::PlainText);
  empty_->setAlignment(Qt::AlignCenter);
  empty_->setWordWrap(true);
  tabs_ = new QTabWidget(this);
  tabs_->setObjectName(QStringLiteral("bench_tabs"));
  layout->addWidget(summary_);
  layout->addWidget(empty_, 1);
  layout->addWidget(tabs_, 1);
  rebuild();
}

BenchCharts::~BenchCharts() = default;

void BenchCharts::set(const c3::analyzer::Trace* trace) {
  results_.clear();
  cases_.clear();
  if (trace != nullptr) results_ = trace->bench;
  cases_.reserve(results_.size());
  for (const auto& r : results_) cases_.push_back(parse_bench_label(r.label));
  knob_index_ = 0;
  case_index_ = 0;
  slow_cases_.clear();
  rebuild();
}

int BenchCharts::chart_count() const {
  return (speedup_view_ != nullptr ? 1 : 0) + (slowdown_view_ != nullptr ? 1 : 0) +
         (chunk_view_ != nullptr ? 1 : 0);
}

QStringList BenchCharts::chart_titles() const {
  QStringList out;
  for (const QChartView* v : {speedup_view_, slowdown_view_, chunk_view_}) {
    if (v != nullptr) out << v->chart()->title();
  }
  return out;
}

QStringList BenchCharts::slowdown_knobs() const {
  QStringList out;
  out.reserve(static_cast<qsizetype>(knobs_.size()));
  for (int k : knobs_) out << knob_name(static_cast<Knob>(k));
  return out;
}

QStringList BenchCharts::slowdown_cases() const {
  QStringList out;
  if (slow_cases_.size() < 2) return out;
  out.reserve(static_cast<qsizetype>(slow_cases_.size()));
  for (const auto& [pair, bytes] : slow_cases_) {
    out << QString::fromStdString(pair) +
               (bytes > 0 ? QStringLiteral(" · ") + size_text(bytes) : QString());
  }
  return out;
}

void BenchCharts::set_slowdown_knob(int index) {
  if (index < 0 || index >= static_cast<int>(knobs_.size()) || index == knob_index_) return;
  knob_index_ = index;
  if (knob_box_ != nullptr && knob_box_->currentIndex() != index) {
    const QSignalBlocker block(knob_box_);
    knob_box_->setCurrentIndex(index);
  }
  show_slowdown_chart();
}

void BenchCharts::set_slowdown_case(int index) {
  if (index < 0 || index >= static_cast<int>(slow_cases_.size()) || index == case_index_) return;
  case_index_ = index;
  if (case_box_ != nullptr && case_box_->currentIndex() != index) {
    const QSignalBlocker block(case_box_);
    case_box_->setCurrentIndex(index);
  }
  show_slowdown_chart();
}

void BenchCharts::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange && tabs_ != nullptr && !rebuilding_) rebuild();
}

void BenchCharts::rebuild() {
  rebuilding_ = true;
  const int tab = tabs_->currentIndex();
  speedup_view_ = slowdown_view_ = chunk_view_ = nullptr;
  knob_box_ = case_box_ = nullptr;
  case_label_ = nullptr;
  slowdown_layout_ = nullptr;
  while (tabs_->count() > 0) {
    QWidget* page = tabs_->widget(0);
    tabs_->removeTab(0);
    delete page;
  }
  knobs_.clear();

  if (results_.empty()) {
    summary_->hide();
    tabs_->hide();
    empty_->setText(
        QStringLiteral("No c3bench results in these traces (record `c3scope record -- "
                       "c3bench ...` to get some)."));
    empty_->show();
    rebuilding_ = false;
    return;
  }
  empty_->hide();

  std::vector<size_t> all;
  all.reserve(results_.size());
  for (size_t i = 0; i < results_.size(); ++i) all.push_back(i);
  const auto unparsed =
      std::count_if(cases_.begin(), cases_.end(), [](const BenchCase& c) { return !c.parsed; });
  bool sim = false;
  for (const auto& r : results_) sim = sim || r.simulated;
  QString summary = QStringLiteral("%1 c3bench result%2 — %3")
                        .arg(results_.size())
                        .arg(results_.size() == 1 ? "" : "s")
                        .arg(provenance(results_, all));
  if (sim) {
    summary += QStringLiteral(
        ". Simulated numbers are predictions of the node model, not "
        "measurements");
  }
  if (unparsed > 0)
    summary += QStringLiteral(". %1 label(s) not understood, left out").arg(unparsed);
  summary_->setText(summary + QStringLiteral("."));
  summary_->show();
  tabs_->show();

  // 1. Speedup against message size.
  speedup_view_ = make_speedup_chart();
  if (speedup_view_ != nullptr) {
    tabs_->addTab(speedup_view_, QStringLiteral("Speedup"));
  } else {
    tabs_->addTab(text_page(QStringLiteral("No speedups vs message size in these results (they "
                                           "need both a compute and a communication op).")),
                  QStringLiteral("Speedup"));
  }

  // 2. Slowdowns against the knob the results vary (a selector when several do).
  const std::vector<size_t> slow = slowdown_rows(results_, cases_, Knob::none);
  std::vector<size_t> varied;  // rows for finding what varies: any baseline
  varied.reserve(results_.size());
  for (size_t i : all) {
    if (cases_[i].parsed &&
        (finite(results_[i].compute_slowdown) || finite(results_[i].comm_slowdown)))
      varied.push_back(i);
  }
  varied = keep_least_chunks(cases_, std::move(varied));
  for (Knob k : kConfigKnobs) {
    std::set<KnobValue> values;
    for (size_t i : varied) values.insert(knob_value(cases_[i], k));
    if (values.size() > 1) knobs_.push_back(static_cast<int>(k));
  }
  if (knobs_.empty()) {
    std::set<int64_t> sizes;
    for (size_t i : slow) sizes.insert(cases_[i].bytes);
    knobs_.push_back(static_cast<int>(sizes.size() > 1 ? Knob::size : Knob::none));
  }
  if (knob_index_ >= static_cast<int>(knobs_.size())) knob_index_ = 0;
  auto* page = new QWidget();
  slowdown_layout_ = new QVBoxLayout(page);
  slowdown_layout_->setContentsMargins(0, 0, 0, 0);
  auto* row = new QHBoxLayout();
  if (knobs_.size() > 1) {
    row->addWidget(new QLabel(QStringLiteral("Slowdown against:"), page));
    knob_box_ = new QComboBox(page);
    knob_box_->setObjectName(QStringLiteral("bench_knob"));
    knob_box_->addItems(slowdown_knobs());
    knob_box_->setCurrentIndex(knob_index_);
    knob_box_->setToolTip(
        QStringLiteral("The knob on the x axis; the other knobs stay at their default (or most "
                       "common) setting."));
    connect(knob_box_, &QComboBox::currentIndexChanged, this,
            [this](int index) { set_slowdown_knob(index); });
    row->addWidget(knob_box_);
  }
  case_label_ = new QLabel(QStringLiteral("for:"), page);
  case_box_ = new QComboBox(page);
  case_box_->setObjectName(QStringLiteral("bench_case"));
  case_box_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  connect(case_box_, &QComboBox::currentIndexChanged, this,
          [this](int index) { set_slowdown_case(index); });
  row->addWidget(case_label_);
  row->addWidget(case_box_);
  row->addStretch(1);
  slowdown_layout_->addLayout(row);
  tabs_->addTab(page, QStringLiteral("Slowdowns"));
  show_slowdown_chart();

  // 3. Chunk-count sweep.
  chunk_view_ = make_chunk_chart();
  if (chunk_view_ != nullptr) {
    tabs_->addTab(chunk_view_, QStringLiteral("Chunk sweep"));
  } else {
    tabs_->addTab(text_page(QStringLiteral("No chunk sweep in these results (record one with "
                                           "`c3bench --schedule chunks=1,2,4,8`).")),
                  QStringLiteral("Chunk sweep"));
  }
  if (tab >= 0 && tab < tabs_->count()) tabs_->setCurrentIndex(tab);
  rebuilding_ = false;
}

void BenchCharts::show_slowdown_chart() {
  if (slowdown_layout_ == nullptr || knobs_.empty()) return;
  // The page holds the selector row (a layout) and one widget: the chart or its text.
  for (int i = slowdown_layout_->count() - 1; i >= 0; --i) {
    QWidget* w = slowdown_layout_->itemAt(i)->widget();
    if (w != nullptr) {
      slowdown_layout_->removeWidget(w);
      delete w;
    }
  }
  slowdown_view_ = nullptr;

  // The configurations left once the knob is chosen; one at a time when there are several
  // (all side by side when no knob varies).
  const auto knob = static_cast<Knob>(knobs_[static_cast<size_t>(knob_index_)]);
  std::vector<size_t> rows = slowdown_rows(results_, cases_, knob);
  const auto previous = case_index_ >= 0 && case_index_ < static_cast<int>(slow_cases_.size())
                            ? std::optional(slow_cases_[static_cast<size_t>(case_index_)])
                            : std::nullopt;
  slow_cases_.clear();
  if (knob != Knob::none) {
    std::set<std::pair<std::string, int64_t>> keys;
    for (size_t i : rows)
      keys.emplace(pair_name(cases_[i]), knob == Knob::size ? 0 : cases_[i].bytes);
    slow_cases_.assign(keys.begin(), keys.end());
  }
  case_index_ = 0;
  for (size_t i = 0; i < slow_cases_.size(); ++i) {
    if (previous && slow_cases_[i] == *previous) case_index_ = static_cast<int>(i);
  }
  if (slow_cases_.size() > 1) {
    const auto& key = slow_cases_[static_cast<size_t>(case_index_)];
    std::erase_if(rows, [&](size_t i) {
      return pair_name(cases_[i]) != key.first || (key.second > 0 && cases_[i].bytes != key.second);
    });
  }
  if (case_box_ != nullptr) {
    // Refilled only when the list changes (not from within its own signal, on a pick).
    const QSignalBlocker block(case_box_);
    const QStringList labels = slowdown_cases();
    QStringList shown;
    shown.reserve(case_box_->count());
    for (int i = 0; i < case_box_->count(); ++i) shown << case_box_->itemText(i);
    if (shown != labels) {
      case_box_->clear();
      case_box_->addItems(labels);
    }
    case_box_->setCurrentIndex(case_index_);
    case_box_->setVisible(slow_cases_.size() > 1);
    case_label_->setVisible(slow_cases_.size() > 1);
  }

  slowdown_view_ = make_slowdown_chart(static_cast<int>(knob), rows);
  if (slowdown_view_ != nullptr) {
    slowdown_layout_->addWidget(slowdown_view_, 1);
  } else {
    slowdown_layout_->addWidget(
        text_page(QStringLiteral("No slowdowns in these results (they need the concurrent "
                                 "phase: c3bench --mode concurrent or all).")),
        1);
  }
}

QChart* BenchCharts::new_chart(const QString& title) const {
  const QPalette pal = palette();
  const QColor window = pal.color(QPalette::Window);
  const QColor text = pal.color(QPalette::WindowText);
  auto* chart = new QChart();
  // The theme first (it resets colours), then the palette's own background and text.
  chart->setTheme(window.lightness() < 128 ? QChart::ChartThemeDark : QChart::ChartThemeLight);
  chart->setBackgroundBrush(window);
  chart->setBackgroundRoundness(0);
  chart->setPlotAreaBackgroundVisible(false);
  chart->setTitleBrush(text);
  QFont font = chart->titleFont();
  font.setBold(true);
  chart->setTitleFont(font);
  chart->setTitle(title);
  chart->legend()->setLabelColor(text);
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
  chart->setAnimationOptions(QChart::NoAnimation);
  return chart;
}

QChartView* BenchCharts::new_view(QChart* chart) const {
  // Axes were added by the caller: give them the palette's text and a grid between text and
  // background.
  const QPalette pal = palette();
  const QColor window = pal.color(QPalette::Window);
  const QColor text = pal.color(QPalette::WindowText);
  for (QAbstractAxis* axis : chart->axes()) {
    axis->setLabelsBrush(text);
    axis->setTitleBrush(text);
    axis->setLinePenColor(blend(window, text, 0.5f));
    axis->setGridLineColor(blend(window, text, 0.2f));
  }
  place_legend(chart);
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing, true);
  view->setRenderHint(QPainter::TextAntialiasing, true);
  view->setMinimumSize(320, 240);
  view->setBackgroundBrush(window);
  return view;
}

QWidget* BenchCharts::text_page(const QString& text) const {
  auto* label = new QLabel(text);
  label->setTextFormat(Qt::PlainText);
  label->setAlignment(Qt::AlignCenter);
  label->setWordWrap(true);
  return label;
}

QChartView* BenchCharts::make_speedup_chart() const {
  std::vector<size_t> rows;
  rows.reserve(results_.size());
  for (size_t i = 0; i < results_.size(); ++i) {
    const BenchCase& c = cases_[i];
    if (c.parsed && c.bytes > 0 && !c.compute.empty() && finite(results_[i].ideal_speedup) &&
        finite(results_[i].realized_speedup))
      rows.push_back(i);
  }
  rows = keep_least_chunks(cases_, std::move(rows));
  rows = keep_baseline(cases_, std::move(rows), Knob::none);
  if (rows.empty()) return nullptr;

  // One pair of lines per (compute op, comm op), the mean over rows of the same size.
  std::vector<std::string> pairs;
  std::vector<BenchCase> reps;
  std::map<std::string, std::map<int64_t, std::pair<Mean, Mean>>> points;  // ideal, realized
  std::set<int64_t> sizes;
  double lo = 1.0, hi = 1.0;
  for (size_t i : rows) {
    const std::string pair = pair_name(cases_[i]);
    if (points.count(pair) == 0) {
      pairs.push_back(pair);
      BenchCase rep = cases_[i];
      rep.bytes = 0;  // named by the pair only
      reps.push_back(rep);
    }
    auto& [ideal, realized] = points[pair][cases_[i].bytes];
    ideal.add(*results_[i].ideal_speedup);
    realized.add(*results_[i].realized_speedup);
    sizes.insert(cases_[i].bytes);
    lo = std::min({lo, *results_[i].ideal_speedup, *results_[i].realized_speedup});
    hi = std::max({hi, *results_[i].ideal_speedup, *results_[i].realized_speedup});
  }
  const std::vector<std::string> names = distinct_names(reps);

  const BenchCase& first = cases_[rows.front()];
  QString setting = QString::fromStdString(knobs_text(first, Knob::none));
  if (first.chunks > 0) {
    setting +=
        (setting.isEmpty() ? "" : " ") +
        QStringLiteral("pipelined, %1 chunk%2").arg(first.chunks).arg(first.chunks == 1 ? "" : "s");
  }
  QString title = QStringLiteral("Ideal and realized speedup vs message size");
  if (!setting.isEmpty()) title += QStringLiteral(" [%1]").arg(setting);
  title += QStringLiteral(" — ") + provenance(results_, rows);
  QChart* chart = new_chart(title);

  auto* x = log2_axis(sizes, size_text, QStringLiteral("message size (bytes, log₂ scale)"));
  auto* y = value_axis(lo, hi, QStringLiteral("speedup over serial (×)"), "%.2f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  for (size_t p = 0; p < pairs.size(); ++p) {
    const QString suffix =
        pairs.size() > 1 ? QStringLiteral(": ") + QString::fromStdString(names[p]) : QString();
    auto* realized = new QLineSeries();
    realized->setName(QStringLiteral("realized") + suffix);
    auto* ideal = new QLineSeries();
    ideal->setName(QStringLiteral("ideal") + suffix);
    for (const auto& [bytes, means] : points[pairs[p]]) {
      const double px = std::log2(static_cast<double>(bytes));
      ideal->append(px, means.first.value());
      realized->append(px, means.second.value());
    }
    chart->addSeries(realized);  // the theme picks its colour; the ideal line shares it, dashed
    QPen pen(realized->color());
    pen.setWidthF(2.5);
    realized->setPen(pen);
    realized->setPointsVisible(true);
    pen.setWidthF(1.8);
    pen.setStyle(Qt::DashLine);
    ideal->setPen(pen);
    ideal->setPointsVisible(true);
    chart->addSeries(ideal);
    for (QLineSeries* s : {realized, ideal}) {
      s->attachAxis(x);
      s->attachAxis(y);
    }
  }
  auto* view = new_view(chart);
  view->setObjectName(QStringLiteral("bench_speedup_chart"));
  return view;
}

QChartView* BenchCharts::make_slowdown_chart(int knob_id, const std::vector<size_t>& rows) const {
  const auto knob = static_cast<Knob>(knob_id);
  if (rows.empty()) return nullptr;

  // Categories: the knob's values; with no knob, the configurations side by side.
  using Key = std::tuple<KnobValue, std::string, int64_t>;  // knob value, op pair, bytes
  std::map<Key, std::pair<Mean, Mean>> bars;                // compute, comm slowdown (%)
  std::map<Key, BenchCase> reps;
  bool any_comm = false;
  double lo = 0, hi = 0;
  for (size_t i : rows) {
    const BenchCase& c = cases_[i];
    const Key key{knob_value(c, knob), knob == Knob::none ? pair_name(c) : std::string(),
                  knob == Knob::none ? c.bytes : 0};
    reps.emplace(key, c);
    auto& [comp, comm] = bars[key];
    if (finite(results_[i].compute_slowdown)) comp.add(*results_[i].compute_slowdown * 100.0);
    if (finite(results_[i].comm_slowdown)) {
      comm.add(*results_[i].comm_slowdown * 100.0);
      any_comm = true;
    }
  }
  std::vector<BenchCase> rep_list;
  rep_list.reserve(reps.size());
  for (const auto& [key, c] : reps) rep_list.push_back(c);
  const std::vector<std::string> case_names = distinct_names(rep_list);

  QStringList categories;
  categories.reserve(static_cast<qsizetype>(bars.size()));
  auto* comp_set = new QBarSet(QStringLiteral("compute slowdown"));
  auto* comm_set = new QBarSet(any_comm ? QStringLiteral("communication slowdown")
                                        : QStringLiteral("communication slowdown (not reported)"));
  size_t n = 0;
  for (const auto& [key, means] : bars) {
    categories << QString::fromStdString(knob == Knob::none ? case_names[n]
                                                            : std::get<0>(key).second);
    ++n;
    comp_set->append(means.first.value());
    comm_set->append(means.second.value());
    lo = std::min({lo, means.first.value(), means.second.value()});
    hi = std::max({hi, means.first.value(), means.second.value()});
  }
  if (lo > -0.05) lo = 0;  // -0.0 % is no speedup
  auto* series = new QBarSeries();
  series->append(comp_set);
  series->append(comm_set);
  series->setLabelsVisible(true);
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  series->setLabelsFormat(QStringLiteral("@value %"));
  series->setLabelsPrecision(3);
  for (QBarSet* set : {comp_set, comm_set})
    set->setLabelColor(palette().color(QPalette::WindowText));

  const BenchCase& first = cases_[rows.front()];
  QString title = knob == Knob::none ? QStringLiteral("Compute and communication slowdown")
                                     : QStringLiteral("Slowdowns vs %1").arg(knob_name(knob));
  if (knob != Knob::none) {
    title += QStringLiteral(" — ") + QString::fromStdString(pair_name(first));
    if (knob != Knob::size && first.bytes > 0)
      title += QStringLiteral(" ") + size_text(first.bytes);
  }
  const QString others = QString::fromStdString(knobs_text(first, knob));
  if (!others.isEmpty()) title += QStringLiteral(" [%1]").arg(others);
  title += QStringLiteral(" — ") + provenance(results_, rows);
  QChart* chart = new_chart(title);
  chart->legend()->setMarkerShape(QLegend::MarkerShapeRectangle);
  chart->addSeries(series);
  auto* x = new QBarCategoryAxis();
  x->append(categories);
  x->setTitleText(knob_axis_title(knob));
  auto* y = value_axis(lo, hi, QStringLiteral("slowdown while concurrent (%)"), "%.0f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  auto* view = new_view(chart);
  view->setObjectName(QStringLiteral("bench_slowdown_chart"));
  return view;
}

QChartView* BenchCharts::make_chunk_chart() const {
  std::vector<size_t> rows;
  rows.reserve(results_.size());
  for (size_t i = 0; i < results_.size(); ++i) {
    if (cases_[i].parsed && cases_[i].chunks > 0) rows.push_back(i);
  }
  rows = keep_baseline(cases_, std::move(rows), Knob::none);
  std::set<int64_t> ks;
  for (size_t i : rows) ks.insert(cases_[i].chunks);
  if (ks.size() < 2) return nullptr;

  // One line per configuration (op pair, size): schedule speedup over its k = 1 schedule as
  // c3bench reports it, else from T_c3.
  struct Line {
    BenchCase rep;
    std::map<int64_t, Mean> speedup;
    Mean t_c3_k1;
    std::map<int64_t, Mean> t_c3;
  };
  std::vector<Line> lines;
  std::map<std::pair<std::string, int64_t>, size_t> index;
  for (size_t i : rows) {
    const BenchCase& c = cases_[i];
    auto [it, added] = index.emplace(std::pair(pair_name(c), c.bytes), lines.size());
    if (added) lines.push_back(Line{c, {}, {}, {}});
    Line& line = lines[it->second];
    const BenchResult& r = results_[i];
    if (finite(r.schedule_speedup)) {
      line.speedup[c.chunks].add(*r.schedule_speedup);
    } else if (c.chunks == 1) {
      line.speedup[1].add(1.0);
    }
    if (r.t_c3 > 0) {
      line.t_c3[c.chunks].add(r.t_c3);
      if (c.chunks == 1) line.t_c3_k1.add(r.t_c3);
    }
  }
  double lo = 1.0, hi = 1.0;
  std::vector<BenchCase> reps;
  reps.reserve(lines.size());
  for (Line& line : lines) {
    for (const auto& [k, t] : line.t_c3) {
      if (line.speedup.count(k) == 0 && line.t_c3_k1.n > 0 && t.value() > 0)
        line.speedup[k].add(line.t_c3_k1.value() / t.value());
    }
    for (const auto& [k, s] : line.speedup) {
      lo = std::min(lo, s.value());
      hi = std::max(hi, s.value());
    }
    reps.push_back(line.rep);
  }
  const std::vector<std::string> names = distinct_names(reps);

  QString title = QStringLiteral("Chunk-count sweep: schedule speedup over k = 1");
  const QString others = QString::fromStdString(knobs_text(cases_[rows.front()], Knob::none));
  if (!others.isEmpty()) title += QStringLiteral(" [%1]").arg(others);
  title += QStringLiteral(" — ") + provenance(results_, rows);
  QChart* chart = new_chart(title);
  auto* x = log2_axis(
      ks, [](int64_t k) { return QString::number(k); },
      QStringLiteral("chunks k (pipelined pieces, log₂ scale)"));
  auto* y = value_axis(lo, hi, QStringLiteral("schedule speedup over k = 1 (×)"), "%.2f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  // A colour per message size, a line style per op pair (and other knobs).
  std::map<int64_t, QColor> size_colour;
  std::map<std::string, Qt::PenStyle> pair_style;
  constexpr Qt::PenStyle kStyles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                      Qt::DashDotDotLine};
  for (size_t l = 0; l < lines.size(); ++l) {
    if (lines[l].speedup.empty()) continue;
    auto* series = new QLineSeries();
    series->setName(QString::fromStdString(names[l]));
    for (const auto& [k, s] : lines[l].speedup)
      series->append(std::log2(static_cast<double>(k)), s.value());
    series->setPointsVisible(true);
    chart->addSeries(series);  // the theme's next colour, unless the size has one already
    const QColor colour = size_colour.emplace(lines[l].rep.bytes, series->color()).first->second;
    const std::string style_key =
        pair_name(lines[l].rep) + " " + knobs_text(lines[l].rep, Knob::none);
    const Qt::PenStyle style =
        pair_style.emplace(style_key, kStyles[pair_style.size() % std::size(kStyles)])
            .first->second;
    QPen pen(colour);
    pen.setWidthF(2.2);
    pen.setStyle(style);
    series->setPen(pen);
    series->attachAxis(x);
    series->attachAxis(y);
  }
  auto* view = new_view(chart);
  view->setObjectName(QStringLiteral("bench_chunk_chart"));
  return view;
}

}  // namespace c3::gui
