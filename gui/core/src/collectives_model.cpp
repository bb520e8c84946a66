#include <cstdint>
#include <string>

#include "c3/analyzer/metrics/metrics.h"
#include "c3/gui/format.h"
#include "c3/gui/models.h"
#include "model_text.h"

namespace c3::gui {

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

int CollectivesModel::rows() const {
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
        tip = QString("communicator %1, call %2 of %3 (rank %4)")
                  .arg(col.comm_id.empty() ? QStringLiteral("?") : qs(col.comm_id))
                  .arg(col.seq)
                  .arg(col.nranks > 0 ? count(col.nranks, "rank", "ranks")
                                      : QStringLiteral("? ranks"))
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
        tip += QString("; nccl-tests size S = %1 (%2)")
                   .arg(format_bytes(static_cast<double>(f.size)))
                   .arg(count(f.nranks, "rank", "ranks"));
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
                             : QString("busbw = algbw x %1 (%2, %3)")
                                   .arg(analyzer::busbw_factor(f.op, f.nranks), 0, 'f', 3)
                                   .arg(qs(f.op))
                                   .arg(count(f.nranks, "rank", "ranks")));
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

}  // namespace c3::gui
