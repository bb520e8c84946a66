#include "c3/gui/models.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

#include "c3/analyzer/interference.h"
#include "c3/analyzer/metrics.h"
#include "c3/analyzer/names.h"
#include "c3/gui/format.h"

namespace c3::gui {

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s);
}

// "+12.3" / "-4.0" / "0.0" (one decimal, explicit sign unless it rounds to zero).
QString signed_number(double v, int decimals = 1) {
  const double scale = std::pow(10.0, decimals);
  if (std::round(v * scale) == 0) return QString::number(0.0, 'f', decimals);
  return (v > 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', decimals);
}

// "+1.20 ms", "-950 ns", "0 ns".
QString signed_duration(double ns) {
  if (ns == 0) return format_duration(0);
  return (ns > 0 ? QStringLiteral("+") : QString()) + format_duration(ns);
}

QString process_label(const analyzer::Trace& t, int process) {
  if (process < 0 || static_cast<size_t>(process) >= t.processes.size()) return QStringLiteral("?");
  return qs(t.processes[static_cast<size_t>(process)].label());
}

// Ranks sort numerically; processes without a rank after them, by index.
double process_sort(const analyzer::Trace& t, int process) {
  if (process < 0 || static_cast<size_t>(process) >= t.processes.size()) return -1;
  const analyzer::Process& p = t.processes[static_cast<size_t>(process)];
  return p.rank ? static_cast<double>(*p.rank) : 1e12 + process;
}

QString process_tooltip(const analyzer::Trace& t, int process) {
  if (process < 0 || static_cast<size_t>(process) >= t.processes.size()) return {};
  const analyzer::Process& p = t.processes[static_cast<size_t>(process)];
  QString tip = QString("pid %1").arg(p.pid);
  if (!p.host.empty()) tip += QString(" on %1").arg(qs(p.host));
  if (!p.source.empty()) tip += QString("\n%1").arg(qs(p.source));
  return tip;
}

}  // namespace

// ---- TableModel ----

TableModel::TableModel(QStringList headers, QObject* parent)
    : QAbstractTableModel(parent), headers_(std::move(headers)) {}

int TableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(headers_.size());
}

QVariant TableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o == Qt::Horizontal && role == Qt::DisplayRole && section >= 0 && section < headers_.size()) {
    return headers_[section];
  }
  return QAbstractTableModel::headerData(section, o, role);
}

QVariant TableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.parent().isValid() || index.row() >= rowCount() ||
      index.column() >= columnCount()) {
    return {};
  }
  switch (role) {
    case Qt::DisplayRole:
      return cell(index.row(), index.column()).text;
    case kSortRole:
      return cell(index.row(), index.column()).sort;
    case Qt::TextAlignmentRole: {
      const Qt::Alignment align =
          (cell(index.row(), index.column()).right ? Qt::AlignRight : Qt::AlignLeft) |
          Qt::AlignVCenter;
      return align.toInt();
    }
    case Qt::ToolTipRole: {
      const Cell c = cell(index.row(), index.column());
      if (c.tooltip.isEmpty()) return {};
      return c.tooltip;
    }
    default:
      return extra(index.row(), role);
  }
}

TableModel::Cell TableModel::text_cell(const QString& text, const QString& tooltip) {
  return {text, text, tooltip, false};
}

TableModel::Cell TableModel::label_cell(const QString& text, double sort, const QString& tooltip) {
  return {text, sort, tooltip, false};
}

TableModel::Cell TableModel::number_cell(const QString& text, double sort, const QString& tooltip) {
  return {text, sort, tooltip, true};
}

TableModel::Cell TableModel::duration_cell(double ns, const QString& tooltip) {
  return {format_duration(ns), ns, tooltip, true};
}

TableModel::Cell TableModel::absent_cell(const QString& text, const QString& tooltip) {
  return {text, -std::numeric_limits<double>::infinity(), tooltip, true};
}

// ---- SummaryModel ----

void DocumentTableModel::set(const Document* doc) {
  beginResetModel();
  doc_ = doc;
  document_changed();
  endResetModel();
}

SummaryModel::SummaryModel(const Document* doc, QObject* parent)
    : DocumentTableModel({"scope", "span", "idle", "compute", "communication", "overlap %",
                          "exposed comm", "exposed memcpy"},
                         doc, parent) {}

int SummaryModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !doc_ || doc_->report.processes.empty()) return 0;
  return static_cast<int>(doc_->report.processes.size()) + 1;
}

TableModel::Cell SummaryModel::cell(int row, int column) const {
  const analyzer::Report& r = doc_->report;
  const bool all = static_cast<size_t>(row) == r.processes.size();
  const analyzer::ScopeReport& s = all ? r.overall : r.processes[static_cast<size_t>(row)];
  const analyzer::Breakdown& b = s.b;
  const auto share = [&](int64_t ns) {
    return b.span > 0
               ? QString("%1 of the span")
                     .arg(format_pct(100.0 * static_cast<double>(ns) / static_cast<double>(b.span)))
               : QString();
  };
  switch (column) {
    case kScope: {
      if (all) {
        return label_cell(QStringLiteral("all ranks"), 1e18,
                          QString("sum over %1 process(es)").arg(r.processes.size()));
      }
      QString tip = process_tooltip(doc_->trace, s.process);
      tip += QString("\n%1 activities").arg(b.activities);
      return label_cell(process_label(doc_->trace, s.process), process_sort(doc_->trace, s.process),
                        tip);
    }
    case kSpan:
      return duration_cell(static_cast<double>(b.span),
                           QString("busy %1, %2 activities")
                               .arg(format_duration(static_cast<double>(b.busy)))
                               .arg(b.activities));
    case kIdle:
      return duration_cell(static_cast<double>(b.idle), share(b.idle));
    case kCompute:
      return duration_cell(static_cast<double>(b.compute()), share(b.compute()));
    case kCommunication:
      return duration_cell(
          static_cast<double>(b.comm()),
          QString("%1; memory %2")
              .arg(share(b.comm()), format_duration(static_cast<double>(b.memory()))));
    case kOverlap:
      if (b.comm() <= 0)
        return absent_cell(QStringLiteral("-"), QStringLiteral("no communication"));
      return number_cell(format_pct(b.overlap_pct), b.overlap_pct,
                         QString("%1 of %2 communication hidden under compute")
                             .arg(format_duration(static_cast<double>(b.overlap)),
                                  format_duration(static_cast<double>(b.comm()))));
    case kExposedComm:
      return duration_cell(static_cast<double>(b.exposed_comm),
                           QStringLiteral("communication not under compute"));
    case kExposedMemcpy:
      return duration_cell(
          static_cast<double>(b.exposed_memcpy),
          QStringLiteral("memory activity under neither compute nor communication"));
    default:
      return {};
  }
}

// ---- CollectivesModel ----

namespace {

// What the collectives table shows of one communication activity; bandwidths as nccl-tests
// (and `c3scope analyze --csv`) define them: algbw = S / t, busbw = algbw * factor(op, nranks).
struct CollectiveFacts {
  std::string op;
  int64_t bytes = 0;  // NCCL's count x size (linked), else the activity's bytes; 0 unknown
  int64_t size = 0;   // S, nccl-tests' size
  int nranks = 0;
  double algbw = 0, busbw = 0;  // bytes/s; 0 unknown
};

CollectiveFacts collective_facts(const analyzer::Trace& t, const analyzer::CommOverlap& c) {
  const analyzer::Activities& a = t.activities;
  const size_t i = c.activity;
  CollectiveFacts f;
  f.op = analyzer::collective_op(t, i);
  if (a.collective[i] >= 0) {
    const analyzer::Collective& col = t.collectives[static_cast<size_t>(a.collective[i])];
    f.bytes = col.bytes;
    f.nranks = col.nranks;
  } else {
    f.bytes = a.bytes[i];
  }
  f.size = analyzer::nccl_tests_size(f.op, f.bytes, f.nranks);
  if (f.size > 0 && c.duration > 0) {
    f.algbw = static_cast<double>(f.size) / (static_cast<double>(c.duration) * 1e-9);
    f.busbw = f.algbw * analyzer::busbw_factor(f.op, f.nranks);
  }
  return f;
}

}  // namespace

CollectivesModel::CollectivesModel(const Document* doc, QObject* parent)
    : DocumentTableModel(
          {"rank", "op", "bytes", "duration", "algbw", "busbw", "overlap %", "kernel"}, doc,
          parent) {}

int CollectivesModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !doc_) return 0;
  return static_cast<int>(doc_->report.comm.size());
}

TableModel::Cell CollectivesModel::cell(int row, int column) const {
  const analyzer::Trace& t = doc_->trace;
  const analyzer::CommOverlap& c = doc_->report.comm[static_cast<size_t>(row)];
  const analyzer::Activities& a = t.activities;
  const size_t i = c.activity;
  switch (column) {
    case kRank: {
      const int p = a.process[i];
      return label_cell(process_label(t, p), process_sort(t, p),
                        QString("%1\nGPU %2, stream %3")
                            .arg(process_tooltip(t, p))
                            .arg(a.device[i])
                            .arg(a.stream[i]));
    }
    case kOp: {
      const CollectiveFacts f = collective_facts(t, c);
      QString tip;
      if (a.collective[i] >= 0) {
        const analyzer::Collective& col = t.collectives[static_cast<size_t>(a.collective[i])];
        tip = QString("communicator %1, call %2 of %3 ranks (rank %4)")
                  .arg(col.comm_id.empty() ? QStringLiteral("?") : qs(col.comm_id))
                  .arg(col.seq)
                  .arg(col.nranks)
                  .arg(col.rank);
      } else {
        tip = QStringLiteral("not linked to an NCCL call (op from the kernel name)");
      }
      return text_cell(qs(f.op), tip);
    }
    case kBytes: {
      const CollectiveFacts f = collective_facts(t, c);
      if (f.bytes <= 0) return absent_cell(QStringLiteral("-"), QStringLiteral("size unknown"));
      QString tip = QString("%1 bytes").arg(f.bytes);
      if (f.size != f.bytes) {
        tip += QString("; nccl-tests size S = %1 (%2 ranks)")
                   .arg(format_bytes(static_cast<double>(f.size)))
                   .arg(f.nranks);
      }
      return number_cell(format_bytes(static_cast<double>(f.bytes)), static_cast<double>(f.bytes),
                         tip);
    }
    case kDuration:
      return duration_cell(static_cast<double>(c.duration), QString("start %1 ns").arg(a.start[i]));
    case kAlgbw:
    case kBusbw: {
      const CollectiveFacts f = collective_facts(t, c);
      const double v = column == kAlgbw ? f.algbw : f.busbw;
      if (v <= 0) return absent_cell(QStringLiteral("-"), QStringLiteral("size unknown"));
      return number_cell(format_bandwidth(v), v,
                         column == kAlgbw
                             ? QStringLiteral("algbw = S / t (nccl-tests)")
                             : QString("busbw = algbw x %1 (%2, %3 ranks)")
                                   .arg(analyzer::busbw_factor(f.op, f.nranks), 0, 'f', 3)
                                   .arg(qs(f.op))
                                   .arg(f.nranks));
    }
    case kOverlap:
      return number_cell(format_pct(c.pct()), c.pct(),
                         QString("%1 of %2 under compute on the same device")
                             .arg(format_duration(static_cast<double>(c.overlapped)),
                                  format_duration(static_cast<double>(c.duration))));
    case kKernel: {
      const QString name =
          a.name[i] >= 0 ? qs(t.names[static_cast<size_t>(a.name[i])]) : QString("?");
      return text_cell(name, name);
    }
    default:
      return {};
  }
}

QVariant CollectivesModel::extra(int row, int role) const {
  if (role != kActivityRole) return {};
  return QVariant::fromValue<qulonglong>(doc_->report.comm[static_cast<size_t>(row)].activity);
}

// ---- InterferenceModel ----

InterferenceModel::InterferenceModel(const Document* doc, QObject* parent)
    : DocumentTableModel({"operation", "class", "n alone", "n overlapped", "median alone",
                          "median overlapped", "slowdown"},
                         doc, parent) {}

void InterferenceModel::refresh() const {
  if (fresh_ && shown_doc_ == doc_ && shown_all_ == show_all_) return;
  rows_.clear();
  names_.clear();
  shown_doc_ = doc_;
  shown_all_ = show_all_;
  fresh_ = true;
  if (doc_ == nullptr) return;
  const auto& all = doc_->report.interference;
  std::vector<std::string> sigs;
  for (size_t i = 0; i < all.size(); ++i) {
    if (!show_all_ && !all[i].verdict()) continue;
    rows_.push_back(i);
    sigs.push_back(all[i].signature);
  }
  // Long templated names cut in the middle (the launch shape at the end tells rows apart).
  for (const std::string& s : analyzer::short_signatures(sigs)) {
    const size_t shape = s.rfind(" <<<");
    const std::string name = shape == std::string::npos ? s : s.substr(0, shape);
    const std::string tail = shape == std::string::npos ? std::string() : s.substr(shape);
    names_.push_back(qs(analyzer::elide_middle(name, 70) + tail));
  }
}

void InterferenceModel::set_show_all(bool all) {
  beginResetModel();
  show_all_ = all;
  fresh_ = false;
  endResetModel();
}

int InterferenceModel::without_verdict() const {
  if (doc_ == nullptr) return 0;
  int n = 0;
  for (const auto& x : doc_->report.interference) n += x.verdict() ? 0 : 1;
  return n;
}

int InterferenceModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !doc_) return 0;
  refresh();
  return static_cast<int>(rows_.size());
}

TableModel::Cell InterferenceModel::cell(int row, int column) const {
  refresh();
  const analyzer::InterferenceRow& x = doc_->report.interference[rows_[static_cast<size_t>(row)]];
  using PeerWait = analyzer::InterferenceRow::PeerWait;
  switch (column) {
    case kOperation:
      return text_cell(
          names_[static_cast<size_t>(row)],
          QString("%1\n%2 in all, %3 instances (%4 partly overlapped, below the threshold)")
              .arg(qs(x.signature))
              .arg(format_duration(static_cast<double>(x.total_ns)))
              .arg(x.alone + x.overlapped + x.partial)
              .arg(x.partial));
    case kClass:
      if (x.peer_wait == PeerWait::collective) {
        return text_cell(QStringLiteral("communication (incl. peer wait)"),
                         QStringLiteral("A collective's time includes waiting for the other "
                                        "ranks (see the skew table), not only interference"));
      }
      if (x.peer_wait == PeerWait::point_to_point) {
        return text_cell(QStringLiteral("point-to-point (peer wait)"),
                         QStringLiteral("Send/Recv time is mostly waiting for the peer "
                                        "(cross-rank skew): no verdict"));
      }
      return text_cell(QString::fromUtf8(analyzer::class_name(x.cls)));
    case kAlone:
      return number_cell(QString::number(x.alone), static_cast<double>(x.alone));
    case kOverlapped:
      return number_cell(QString::number(x.overlapped), static_cast<double>(x.overlapped));
    case kMedianAlone:
      if (x.alone <= 0) return absent_cell();
      return duration_cell(x.median_alone_ns);
    case kMedianOverlapped:
      if (x.overlapped <= 0) return absent_cell();
      return duration_cell(x.median_overlapped_ns);
    case kSlowdown:
      if (x.peer_wait == PeerWait::point_to_point) {
        return absent_cell(QStringLiteral("peer wait"),
                           QStringLiteral("point-to-point: the time waits for the peer"));
      }
      if (!x.enough) {
        return absent_cell(QStringLiteral("not enough samples"),
                           QStringLiteral("fewer samples alone or overlapped than required"));
      }
      return number_cell(QString("%1 % [%2 %, %3 %]")
                             .arg(signed_number(100 * x.slowdown), signed_number(100 * x.ci_low),
                                  signed_number(100 * x.ci_high)),
                         100 * x.slowdown,
                         QStringLiteral("median(overlapped) / median(alone) - 1, with its 95% "
                                        "order-statistic interval"));
    default:
      return {};
  }
}

// ---- ContentionModel ----

ContentionModel::ContentionModel(const Document* doc, QObject* parent)
    : DocumentTableModel(
          {"device", "SM oversubscribed", "top oversubscribed kernel", "copy-engine sharing",
           "launch queueing median", "launch queueing p95", "copy bandwidth share"},
          doc, parent) {}

int ContentionModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !doc_) return 0;
  return static_cast<int>(doc_->report.contention.size());
}

TableModel::Cell ContentionModel::cell(int row, int column) const {
  const analyzer::Trace& t = doc_->trace;
  const analyzer::Contention& c = doc_->report.contention[static_cast<size_t>(row)];
  switch (column) {
    case kDevice: {
      const analyzer::Device* d =
          t.device(static_cast<int16_t>(c.process), static_cast<int16_t>(c.device));
      QString tip = process_tooltip(t, c.process);
      if (d && !d->name.empty()) tip += QString("\n%1, %2 SMs").arg(qs(d->name)).arg(d->sm_count);
      return label_cell(QString("%1 GPU %2").arg(process_label(t, c.process)).arg(c.device),
                        process_sort(t, c.process) * 1e3 + c.device, tip);
    }
    case kOversubscribed: {
      const QString tip = QString("%1 kernels with known SM demand, %2 unknown")
                              .arg(c.kernels_with_demand)
                              .arg(c.kernels_unknown);
      if (c.kernels_with_demand == 0) return absent_cell(QStringLiteral("-"), tip);
      return duration_cell(static_cast<double>(c.oversubscribed_ns), tip);
    }
    case kTopKernel: {
      if (c.oversubscribed_kernels.empty()) return text_cell(QStringLiteral("-"));
      QStringList lines;
      lines.reserve(static_cast<qsizetype>(c.oversubscribed_kernels.size()));
      for (const auto& [name, ns] : c.oversubscribed_kernels) {
        lines << QString("%1: %2").arg(qs(name), format_duration(static_cast<double>(ns)));
      }
      return text_cell(qs(c.oversubscribed_kernels.front().first), lines.join('\n'));
    }
    case kCopySharing: {
      QStringList lines;
      lines.reserve(static_cast<qsizetype>(c.copy_overlap_by_kind.size()));
      for (const auto& [kind, ns] : c.copy_overlap_by_kind) {
        lines << QString("%1: %2").arg(qs(kind), format_duration(static_cast<double>(ns)));
      }
      return duration_cell(static_cast<double>(c.copy_overlap_ns),
                           lines.isEmpty() ? QStringLiteral("no same-direction copies ran together")
                                           : lines.join('\n'));
    }
    case kQueueMedian:
    case kQueueP95: {
      if (c.queued_kernels <= 0) {
        return absent_cell(
            QStringLiteral("-"),
            QStringLiteral("no submitted timestamps (record with --launch-latency)"));
      }
      const QString tip = QString("start - submitted over %1 kernels; max %2")
                              .arg(c.queued_kernels)
                              .arg(format_duration(c.queue_max_ns));
      return duration_cell(column == kQueueMedian ? c.queue_median_ns : c.queue_p95_ns, tip);
    }
    case kCopyShare: {
      if (c.copy_bandwidth_share.empty()) return absent_cell();
      QStringList parts;
      parts.reserve(static_cast<qsizetype>(c.copy_bandwidth_share.size()));
      double best = 0;
      for (const auto& [dir, share] : c.copy_bandwidth_share) {
        parts << QString("%1 %2").arg(qs(dir), format_pct(100 * share));
        best = std::max(best, share);
      }
      return number_cell(parts.join(QStringLiteral(", ")), 100 * best,
                         QStringLiteral("median share of the device's memory bandwidth, per "
                                        "direction"));
    }
    default:
      return {};
  }
}

// ---- SkewModel ----

SkewModel::SkewModel(const Document* doc, QObject* parent)
    : DocumentTableModel({"rank", "matched", "total wait", "straggler", "clock offset"}, doc,
                         parent) {}

int SkewModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !doc_) return 0;
  return static_cast<int>(doc_->report.cross.ranks.size());
}

TableModel::Cell SkewModel::cell(int row, int column) const {
  const analyzer::Trace& t = doc_->trace;
  const analyzer::RankWait& w = doc_->report.cross.ranks[static_cast<size_t>(row)];
  switch (column) {
    case kRank:
      return label_cell(process_label(t, w.process), process_sort(t, w.process),
                        process_tooltip(t, w.process));
    case kMatched:
      return number_cell(QString::number(w.matched), static_cast<double>(w.matched),
                         QStringLiteral("collectives matched with other ranks"));
    case kWait:
      return duration_cell(static_cast<double>(w.wait_ns),
                           QStringLiteral("sum over matched collectives of (latest start - its "
                                          "start)"));
    case kStraggler:
      return number_cell(QString::number(w.straggler_count), static_cast<double>(w.straggler_count),
                         QStringLiteral("collectives this rank arrived at last"));
    case kClockOffset: {
      const auto& clocks = doc_->report.clocks;
      const auto it =
          std::find_if(clocks.begin(), clocks.end(),
                       [&](const analyzer::ClockOffset& c) { return c.process == w.process; });
      if (it == clocks.end())
        return absent_cell(QStringLiteral("-"), QStringLiteral("not aligned"));
      QString tip = qs(it->how);
      if (it->matched > 0) tip += QString(", from %1 collectives").arg(it->matched);
      return number_cell(
          QString("%1 (%2)").arg(signed_duration(static_cast<double>(it->offset_ns)), qs(it->how)),
          static_cast<double>(it->offset_ns), tip);
    }
    default:
      return {};
  }
}

// ---- BenchModel ----

BenchModel::BenchModel(const Document* doc, QObject* parent)
    : DocumentTableModel(
          {"backend", "data", "label", "scenario", "T_comp", "T_comm", "T_c3", "compute slowdown",
           "comm slowdown", "ideal speedup", "realized speedup", "fraction of ideal"},
          doc, parent) {}

int BenchModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !doc_) return 0;
  return static_cast<int>(doc_->trace.bench.size());
}

TableModel::Cell BenchModel::cell(int row, int column) const {
  const analyzer::BenchResult& b = doc_->trace.bench[static_cast<size_t>(row)];
  const auto pct = [](const std::optional<double>& v, const QString& tip) {
    if (!v) return absent_cell(QStringLiteral("-"), tip);
    return number_cell(signed_number(100 * *v) + QStringLiteral(" %"), 100 * *v, tip);
  };
  const auto ratio = [](const std::optional<double>& v, const QString& tip) {
    if (!v) return absent_cell(QStringLiteral("-"), tip);
    return number_cell(QString::number(*v, 'f', 2), *v, tip);
  };
  switch (column) {
    case kBackend:
      return text_cell(qs(b.backend), process_tooltip(doc_->trace, b.process));
    case kData:
      return b.simulated
                 ? text_cell(QStringLiteral("simulated"),
                             QStringLiteral("the sim backend's predictions, not measurements"))
                 : text_cell(QStringLiteral("real"), QStringLiteral("measured on GPUs"));
    case kLabel:
      return text_cell(qs(b.label), qs(b.label));
    case kScenario:
      return text_cell(qs(b.scenario));
    case kTComp:
      return duration_cell(b.t_comp, QStringLiteral("compute alone (median)"));
    case kTComm:
      return duration_cell(b.t_comm, QStringLiteral("communication alone (median)"));
    case kTC3:
      return duration_cell(b.t_c3, QStringLiteral("both concurrently (median)"));
    case kComputeSlowdown:
      return pct(b.compute_slowdown, QStringLiteral("compute's slowdown when concurrent"));
    case kCommSlowdown:
      return pct(b.comm_slowdown, QStringLiteral("communication's slowdown when concurrent"));
    case kIdealSpeedup:
      return ratio(b.ideal_speedup, QStringLiteral("(T_comp + T_comm) / max(T_comp, T_comm)"));
    case kRealizedSpeedup:
      return ratio(b.realized_speedup, QStringLiteral("(T_comp + T_comm) / T_c3"));
    case kFractionOfIdeal:
      return ratio(b.fraction_of_ideal, QStringLiteral("share of the ideal speedup realized"));
    default:
      return {};
  }
}

// ---- CompareModel ----

namespace {

enum class Unit : uint8_t { duration, pct, count };

struct MetricValue {
  double value = 0;
  Unit unit = Unit::duration;
};

MetricValue metric_of(const Document& d, int row) {
  const analyzer::Breakdown& b = d.report.overall.b;
  const auto ns = [](int64_t v) { return MetricValue{static_cast<double>(v), Unit::duration}; };
  switch (row) {
    case CompareModel::kSpanRow:
      return ns(b.span);
    case CompareModel::kBusyRow:
      return ns(b.busy);
    case CompareModel::kIdleRow:
      return ns(b.idle);
    case CompareModel::kComputeRow:
      return ns(b.compute());
    case CompareModel::kCommunicationRow:
      return ns(b.comm());
    case CompareModel::kMemoryRow:
      return ns(b.memory());
    case CompareModel::kOverlapRow:
      return {b.overlap_pct, Unit::pct};
    case CompareModel::kExposedCommRow:
      return ns(b.exposed_comm);
    case CompareModel::kExposedMemcpyRow:
      return ns(b.exposed_memcpy);
    case CompareModel::kKernelsRow:
      return {static_cast<double>(d.report.kernels), Unit::count};
    case CompareModel::kMemcpysRow:
      return {static_cast<double>(d.report.memcpys), Unit::count};
    default:
      return {};
  }
}

QString format_metric(const MetricValue& m) {
  switch (m.unit) {
    case Unit::duration:
      return format_duration(m.value);
    case Unit::pct:
      return format_pct(m.value);
    case Unit::count:
      return QString::number(static_cast<long long>(m.value));
  }
  return {};
}

}  // namespace

CompareModel::CompareModel(const Document* a, const Document* b, QObject* parent)
    : TableModel({"metric", "A", "B", "difference"}, parent), a_(a), b_(b) {}

void CompareModel::set(const Document* a, const Document* b) {
  beginResetModel();
  a_ = a;
  b_ = b;
  endResetModel();
}

int CompareModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !a_ || !b_) return 0;
  return kMetricRows;
}

QVariant CompareModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o == Qt::Horizontal && role == Qt::ToolTipRole) {
    if (section == kA && a_) return a_->title();
    if (section == kB && b_) return b_->title();
    if (section == kDifference) return QStringLiteral("B - A");
  }
  return TableModel::headerData(section, o, role);
}

TableModel::Cell CompareModel::cell(int row, int column) const {
  static constexpr std::array<const char*, kMetricRows> kNames = {
      "span",      "busy",         "idle",           "compute", "communication", "memory",
      "overlap %", "exposed comm", "exposed memcpy", "kernels", "memcpys"};
  const MetricValue va = metric_of(*a_, row), vb = metric_of(*b_, row);
  switch (column) {
    case kMetric:
      return label_cell(QString::fromUtf8(kNames[static_cast<size_t>(row)]), row);
    case kA:
      return number_cell(format_metric(va), va.value);
    case kB:
      return number_cell(format_metric(vb), vb.value);
    case kDifference: {
      const double d = vb.value - va.value;
      QString text;
      switch (va.unit) {
        case Unit::duration:
          text = signed_duration(d);
          break;
        case Unit::pct:
          // Percentage points: a relative change of a percentage means little.
          return number_cell(signed_number(d) + QStringLiteral(" pp"), d,
                             QStringLiteral("percentage points"));
        case Unit::count:
          text = (d > 0 ? QStringLiteral("+") : QString()) +
                 QString::number(static_cast<long long>(d));
          break;
      }
      if (va.value != 0) text += QString(" (%1 %)").arg(signed_number(100 * d / va.value));
      return number_cell(text, d, QStringLiteral("B - A (relative to A)"));
    }
    default:
      return {};
  }
}

// ---- RowsModel ----

RowsModel::RowsModel(Timeline* timeline, QObject* parent)
    : QAbstractItemModel(parent), timeline_(timeline) {}

void RowsModel::set(Timeline* timeline) {
  beginResetModel();
  timeline_ = timeline;
  endResetModel();
}

const std::vector<int>& RowsModel::children(int row) const {
  return row < 0 ? timeline_->roots() : timeline_->row(row).children;
}

int RowsModel::row_of(const QModelIndex& index) const {
  if (!index.isValid() || !timeline_) return -1;
  return static_cast<int>(index.internalId());
}

QModelIndex RowsModel::index_of(int timeline_row, int column) const {
  if (!timeline_ || timeline_row < 0 ||
      static_cast<size_t>(timeline_row) >= timeline_->rows().size()) {
    return {};
  }
  const std::vector<int>& sib = children(timeline_->row(timeline_row).parent);
  const auto it = std::find(sib.begin(), sib.end(), timeline_row);
  if (it == sib.end()) return {};
  return createIndex(static_cast<int>(it - sib.begin()), column,
                     static_cast<quintptr>(timeline_row));
}

QModelIndex RowsModel::index(int row, int column, const QModelIndex& parent) const {
  if (!timeline_ || !hasIndex(row, column, parent)) return {};
  const std::vector<int>& kids = children(row_of(parent));
  return createIndex(row, column, static_cast<quintptr>(kids[static_cast<size_t>(row)]));
}

QModelIndex RowsModel::parent(const QModelIndex& child) const {
  if (!timeline_ || !child.isValid()) return {};
  return index_of(timeline_->row(row_of(child)).parent);
}

int RowsModel::rowCount(const QModelIndex& parent) const {
  if (!timeline_ || parent.column() > 0) return 0;
  return static_cast<int>(children(row_of(parent)).size());
}

int RowsModel::columnCount(const QModelIndex& /*parent*/) const {
  return 1;
}

QVariant RowsModel::data(const QModelIndex& index, int role) const {
  if (!timeline_ || !index.isValid()) return {};
  const Row& r = timeline_->row(row_of(index));
  switch (role) {
    case Qt::DisplayRole:
      return qs(r.label);
    case Qt::CheckStateRole:
      return static_cast<int>(r.hidden ? Qt::Unchecked : Qt::Checked);
    case Qt::ToolTipRole: {
      if (r.kind == RowKind::group) {
        return QString("%1 (%2 rows)").arg(qs(r.label)).arg(r.children.size());
      }
      return QString("%1: %2 items").arg(qs(r.label)).arg(timeline_->size(r));
    }
    default:
      return {};
  }
}

bool RowsModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!timeline_ || !index.isValid() || role != Qt::CheckStateRole) return false;
  Row& r = timeline_->row(row_of(index));
  const bool hidden = value.toInt() == static_cast<int>(Qt::Unchecked);
  if (r.hidden != hidden) {
    r.hidden = hidden;
    emit dataChanged(index, index, {Qt::CheckStateRole});
    emit rowsChangedInTimeline();
  }
  return true;
}

Qt::ItemFlags RowsModel::flags(const QModelIndex& index) const {
  if (!index.isValid()) return Qt::NoItemFlags;
  return Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable;
}

bool RowsModel::move(const QModelIndex& index, int delta) {
  const int row = row_of(index);
  if (row < 0 || delta == 0) return false;
  const std::vector<int>& sib = children(timeline_->row(row).parent);
  const int to = index.row() + delta;
  if (to < 0 || to >= static_cast<int>(sib.size())) return false;
  const QList<QPersistentModelIndex> parents{QPersistentModelIndex(index.parent())};
  emit layoutAboutToBeChanged(parents);
  const QModelIndexList before = persistentIndexList();
  const bool moved = timeline_->move(row, delta);
  QModelIndexList after;
  after.reserve(before.size());
  for (const QModelIndex& p : before) after << index_of(row_of(p), p.column());
  changePersistentIndexList(before, after);
  emit layoutChanged(parents);
  if (moved) emit rowsChangedInTimeline();
  return moved;
}

void RowsModel::sync_children(int row) {
  const std::vector<int>& kids = children(row);
  if (kids.empty()) return;
  const QModelIndex first = index_of(kids.front()), last = index_of(kids.back());
  emit dataChanged(first, last, {Qt::CheckStateRole});
  for (int k : kids) sync_children(k);
}

void RowsModel::sync() {
  if (!timeline_) return;
  sync_children(-1);
}

}  // namespace c3::gui
