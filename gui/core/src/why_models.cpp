// The Why tab's tables (models.h): idle causes per scope, the critical path per step and the
// frequent kernel sequences.
#include <algorithm>
#include <vector>

#include "c3/gui/format.h"
#include "c3/gui/models.h"
#include "model_text.h"

namespace c3::gui {

namespace {

// "12.5 % of idle" for a cause's tooltip.
QString share_of_idle(int64_t ns, int64_t idle) {
  return idle > 0
             ? QString("%1 of idle")
                   .arg(format_pct(100.0 * static_cast<double>(ns) / static_cast<double>(idle)))
             : QString();
}

}  // namespace

// ---- IdleCausesModel ----

IdleCausesModel::IdleCausesModel(const Document* doc, QObject* parent)
    : DocumentTableModel(
          {"scope", "idle", "host wait", "kernel wait", "comm wait", "other", "gaps"}, doc,
          parent) {
  IdleCausesModel::document_changed();
}

void IdleCausesModel::document_changed() {
  ranks_.clear();
  streams_.clear();
  if (doc_ == nullptr) return;
  ranks_ = by_rank(doc_->trace, doc_->report.processes);
  streams_ = by_rank(doc_->trace, doc_->report.streams);
}

int IdleCausesModel::rows() const {
  if (doc_->report.processes.empty()) return 0;
  return 1 + static_cast<int>(doc_->report.processes.size() + doc_->report.streams.size());
}

TableModel::Cell IdleCausesModel::cell(int row, int column) const {
  const analyzer::Report& r = doc_->report;
  const analyzer::Trace& t = doc_->trace;
  const auto k = static_cast<size_t>(row);
  const analyzer::IdleCauses* c = nullptr;
  double sort = 0;
  QString label, tip;
  if (k == 0) {
    c = &r.overall.idle;
    label = QStringLiteral("all ranks");
    sort = -1;
    tip = QStringLiteral("every rank's GPUs (each device's union of streams)");
  } else if (k - 1 < r.processes.size()) {
    const analyzer::ScopeReport& s = r.processes[ordered(ranks_, k - 1)];
    c = &s.idle;
    label = process_label(t, s.process);
    sort = process_sort(t, s.process);
    tip = process_tooltip(t, s.process);
  } else {
    const analyzer::StreamIdle& s = r.streams[ordered(streams_, k - 1 - r.processes.size())];
    c = &s.causes;
    label = QString("%1 · GPU %2 · stream %3")
                .arg(process_label(t, s.process))
                .arg(s.device)
                .arg(s.stream);
    sort = 1e6 + process_sort(t, s.process) * 1e4 + s.device * 1e3 + s.stream;
    tip = QString(
              "%1 activities on this stream; its own gaps (another stream's work does not "
              "fill them)")
              .arg(s.activities);
  }
  switch (column) {
    case kScope:
      return label_cell(label, sort, tip);
    case kIdle:
      return duration_cell(static_cast<double>(c->idle),
                           QStringLiteral("gaps between GPU work: host wait + kernel wait + "
                                          "comm wait + other"));
    case kHostWait:
      return duration_cell(static_cast<double>(c->host_wait),
                           share_of_idle(c->host_wait, c->idle) +
                               QStringLiteral(": the next operation's launch call started after "
                                              "the gap began (the host was late)"));
    case kKernelWait:
      return duration_cell(
          static_cast<double>(c->kernel_wait),
          share_of_idle(c->kernel_wait, c->idle) +
              QString(": other gaps shorter than %1 (launch overhead between "
                      "kernels)")
                  .arg(format_duration(static_cast<double>(r.idle_options.kernel_wait_ns))));
    case kCommWait:
      if (!r.comm_wait_known) {
        return absent_cell(QStringLiteral("-"),
                           QStringLiteral("not in these summaries (schema 5 on)"));
      }
      return duration_cell(static_cast<double>(c->comm_wait),
                           share_of_idle(c->comm_wait, c->idle) +
                               QStringLiteral(": before a collective, while another rank had "
                                              "not arrived"));
    case kOther:
      return duration_cell(static_cast<double>(c->other),
                           share_of_idle(c->other, c->idle) +
                               QStringLiteral(": the rest (dependencies, synchronizations)"));
    case kGaps:
      return number_cell(QString::number(c->gaps), static_cast<double>(c->gaps));
    default:
      return {};
  }
}

// ---- CriticalPathModel ----

CriticalPathModel::CriticalPathModel(const Document* doc, QObject* parent)
    : DocumentTableModel({"step", "step time", "compute", "communication", "memory", "other GPU",
                          "host", "idle", "peer wait", "late arrivals"},
                         doc, parent) {}

int CriticalPathModel::rows() const {
  return static_cast<int>(doc_->report.paths.size());
}

int CriticalPathModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid()) return 0;
  const size_t w = doc_ != nullptr ? doc_->report.what_ifs.size() : 0;
  return kWhatIfs + static_cast<int>(w);
}

QVariant CriticalPathModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o == Qt::Horizontal && section >= kWhatIfs && doc_ != nullptr) {
    const auto w = static_cast<size_t>(section - kWhatIfs);
    if (w < doc_->report.what_ifs.size()) {
      if (role == Qt::DisplayRole) return QString("if %1").arg(qs(doc_->report.what_ifs[w].text));
      if (role == Qt::ToolTipRole) {
        return QStringLiteral(
            "the step time replayed along the path's dependencies with this change (no "
            "contention model: a bound on the gain)");
      }
    }
    return {};
  }
  return TableModel::headerData(section, o, role);
}

TableModel::Cell CriticalPathModel::cell(int row, int column) const {
  const analyzer::StepPath& p = doc_->report.paths[static_cast<size_t>(row)];
  const analyzer::Trace& t = doc_->trace;
  auto part = [&](analyzer::PathPart x, const QString& what) {
    const int64_t ns = p.parts[static_cast<size_t>(x)];
    const QString share =
        p.path_ns > 0 ? format_pct(100.0 * static_cast<double>(ns) / static_cast<double>(p.path_ns))
                      : QString();
    return duration_cell(static_cast<double>(ns), QString("%1 of the path: %2").arg(share, what));
  };
  switch (column) {
    case kStep:
      return label_cell(
          p.index < 0 ? QStringLiteral("whole run") : qs(p.name), static_cast<double>(p.index),
          QString("the path starts at %1's end and changes rank %2 time(s)")
              .arg(p.end_process >= 0 ? process_label(t, p.end_process) : QStringLiteral("?"))
              .arg(p.hops));
    case kStepTime:
      return duration_cell(static_cast<double>(p.step_ns),
                           QStringLiteral("the longest rank's step time; the path spans it"));
    case kCompute:
      return part(analyzer::PathPart::compute, QStringLiteral("compute kernels"));
    case kCommunication:
      return part(analyzer::PathPart::communication,
                  QStringLiteral("collectives' own work after the last rank arrived"));
    case kMemory:
      return part(analyzer::PathPart::memory, QStringLiteral("copies and sets"));
    case kOtherGpu:
      return part(analyzer::PathPart::other_gpu, QStringLiteral("other GPU work"));
    case kHost:
      return part(analyzer::PathPart::host,
                  QStringLiteral("launch calls, their latency to the GPU, host time between "
                                 "calls"));
    case kIdle:
      return part(analyzer::PathPart::idle,
                  QStringLiteral("the GPU waited though the work was launched"));
    case kPeerWait:
      return duration_cell(static_cast<double>(p.peer_wait_ns),
                           QStringLiteral("time the path's ranks waited in collectives for a "
                                          "late rank (off the path)"));
    case kStraggler: {
      if (p.late.empty()) return absent_cell(QStringLiteral("none"));
      QStringList parts, tips;
      for (const analyzer::LateArrival& l : p.late) {
        parts << QString("%1 +%2").arg(process_label(t, l.late),
                                       format_duration(static_cast<double>(l.late_ns)));
        tips << QString("%1 arrived %2 late at %3 #%4 (%5 waited); just before: %6 (%7)")
                    .arg(process_label(t, l.late), format_duration(static_cast<double>(l.late_ns)),
                         qs(l.op))
                    .arg(l.seq)
                    .arg(process_label(t, l.waiting), qs(l.cause_name),
                         QString::fromUtf8(analyzer::path_part_name(l.cause)));
      }
      return number_cell(parts.join(QStringLiteral(", ")), static_cast<double>(p.late.size()),
                         tips.join('\n'));
    }
    default: {
      const auto w = static_cast<size_t>(column - kWhatIfs);
      if (column < kWhatIfs || w >= p.what_if_ns.size()) return absent_cell();
      const double ns = static_cast<double>(p.what_if_ns[w]);
      const double base = static_cast<double>(p.replayed_ns);
      const QString change =
          base > 0 ? QString(" (%1 %)").arg(signed_number(100.0 * (ns - base) / base)) : QString();
      return duration_cell(ns, QString("replayed: %1%2; replayed unchanged: %3")
                                   .arg(format_duration(ns), change, format_duration(base)));
    }
  }
}

// ---- SequencesModel ----

SequencesModel::SequencesModel(const Document* doc, QObject* parent)
    : DocumentTableModel({"count", "span", "GPU time", "mean span", "kernels"}, doc, parent) {}

QString SequencesModel::label(const analyzer::KernelSequence& s) {
  QStringList names;
  for (const std::string& n : s.names) names << qs(n);
  return QString("\u00D7%1: %2").arg(s.count).arg(names.join(QString::fromUtf8(" \u2192 ")));
}

int SequencesModel::rows() const {
  return static_cast<int>(doc_->report.sequences.size());
}

TableModel::Cell SequencesModel::cell(int row, int column) const {
  const analyzer::KernelSequence& s = doc_->report.sequences[static_cast<size_t>(row)];
  switch (column) {
    case kCount:
      return number_cell(QString::number(s.count), static_cast<double>(s.count),
                         QStringLiteral("occurrences (overlapping: each kernel starts one)"));
    case kSpan:
      return duration_cell(static_cast<double>(s.span_ns),
                           QStringLiteral("summed over occurrences: last end - first start"));
    case kGpu:
      return duration_cell(static_cast<double>(s.gpu_ns),
                           QStringLiteral("summed over occurrences: the kernels' own time"));
    case kMeanSpan:
      return s.count > 0
                 ? duration_cell(static_cast<double>(s.span_ns) / static_cast<double>(s.count),
                                 QStringLiteral("one pass of the sequence"))
                 : absent_cell();
    case kKernels: {
      QStringList names;
      for (const std::string& n : s.names) names << qs(n);
      return text_cell(names.join(QString::fromUtf8(" \u2192 ")),
                       QStringLiteral("normalized kernel names in launch order; double-click to "
                                      "select the sequence in the search"));
    }
    default:
      return {};
  }
}

QVariant SequencesModel::extra(int row, int role) const {
  if (role != kSequenceRole) return {};
  return row;
}

}  // namespace c3::gui
