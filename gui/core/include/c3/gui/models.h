// Table models of the analysis panels, over a Document's report. Each cell has a display text
// and, under kSortRole, a number to sort by (QSortFilterProxyModel with sortRole kSortRole):
// numeric columns sort by a double (absent values, shown "-", sort first), text columns by their
// text. Numeric columns are right-aligned.
#pragma once

#include <QAbstractItemModel>
#include <QAbstractTableModel>
#include <QStringList>
#include <utility>
#include <vector>

#include "c3/gui/document.h"

namespace c3::gui {

inline constexpr int kSortRole = Qt::UserRole;
// Collectives: the Activities row of the kernel, to jump to it in the timeline.
inline constexpr int kActivityRole = Qt::UserRole + 1;
// A frequent kernel sequence's index in Report::sequences (SequencesModel).
inline constexpr int kSequenceRole = Qt::UserRole + 2;

// A read-only table with fixed headers; subclasses fill cell(row, column).
class TableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  explicit TableModel(QStringList headers, QObject* parent = nullptr);
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

 protected:
  struct Cell {
    QString text;
    QVariant sort;       // double for numeric columns, QString for text columns
    QString tooltip;     // empty: none
    bool right = false;  // right-aligned (numbers)
  };
  virtual Cell cell(int row, int column) const = 0;
  virtual QVariant extra(int /*row*/, int /*role*/) const { return {}; }

  // Cell makers: text, text sorted by a number (ranks), number (right-aligned, sorted by `sort`),
  // duration in ns, and an absent number ("-" or another text, sorted before every number).
  static Cell text_cell(const QString& text, const QString& tooltip = {});
  static Cell label_cell(const QString& text, double sort, const QString& tooltip = {});
  static Cell number_cell(const QString& text, double sort, const QString& tooltip = {});
  static Cell duration_cell(double ns, const QString& tooltip = {});
  static Cell absent_cell(const QString& text = QStringLiteral("-"), const QString& tooltip = {});

 private:
  QStringList headers_;
};

// A table over one document's report: set() swaps the document (a model reset).
class DocumentTableModel : public TableModel {
  Q_OBJECT
 public:
  DocumentTableModel(QStringList headers, const Document* doc, QObject* parent)
      : TableModel(std::move(headers), parent), doc_(doc) {}
  void set(const Document* doc);
  // None without a document, else rows().
  int rowCount(const QModelIndex& parent = {}) const final;

 protected:
  virtual int rows() const = 0;       // the current document's (doc_ is set)
  virtual void document_changed() {}  // inside set()'s model reset: drop what was derived
  const Document* doc_ = nullptr;
};

// Per rank (and overall): span, idle, compute, communication, overlap %, exposed comm and memcpy.
class SummaryModel : public DocumentTableModel {
  Q_OBJECT
 public:
  enum Column {
    kScope,
    kSpan,
    kIdle,
    kCompute,
    kCommunication,
    kOverlap,
    kExposedComm,
    kExposedMemcpy
  };
  explicit SummaryModel(const Document* doc = nullptr, QObject* parent = nullptr);

 protected:
  int rows() const override;
  Cell cell(int row, int column) const override;
  void document_changed() override;

 private:
  std::vector<size_t> order_;  // report.processes indices in rank order (2 before 10)
};

// One row per communication activity: rank, op, bytes, duration, algbw, busbw, overlap %, kernel.
class CollectivesModel : public DocumentTableModel {
  Q_OBJECT
 public:
  enum Column { kRank, kOp, kBytes, kDuration, kAlgbw, kBusbw, kOverlap, kKernel };
  explicit CollectivesModel(const Document* doc = nullptr, QObject* parent = nullptr);

 protected:
  int rows() const override;
  Cell cell(int row, int column) const override;
  QVariant extra(int row, int role) const override;
};

// Durations alone vs overlapped per operation, with the slowdown and its 95% interval. By
// default only the rows with a verdict (enough samples, not a point-to-point wait); kernel names
// shortened as Nsight shows them, the full signature in the tooltip.
class InterferenceModel : public DocumentTableModel {
  Q_OBJECT
 public:
  enum Column {
    kOperation,
    kClass,
    kAlone,
    kOverlapped,
    kMedianAlone,
    kMedianOverlapped,
    kSlowdown
  };
  explicit InterferenceModel(const Document* doc = nullptr, QObject* parent = nullptr);
  // Every row (true) or those with a verdict (false, the default).
  void set_show_all(bool all);
  bool show_all() const { return show_all_; }
  // Rows of the report without a verdict (hidden unless show_all).
  int without_verdict() const;

 protected:
  int rows() const override;
  Cell cell(int row, int column) const override;
  void document_changed() override { fresh_ = false; }

 private:
  void refresh() const;  // rows_ and names_ for the current document and filter
  bool show_all_ = false;
  mutable const Document* shown_doc_ = nullptr;
  mutable bool shown_all_ = false;
  mutable bool fresh_ = false;
  mutable std::vector<size_t> rows_;    // report.interference indices shown
  mutable std::vector<QString> names_;  // their short names
};

// Per (process, device): SM oversubscription, copy-engine sharing, launch queueing, copy bandwidth.
class ContentionModel : public DocumentTableModel {
  Q_OBJECT
 public:
  enum Column {
    kDevice,
    kOversubscribed,
    kTopKernel,
    kCopySharing,
    kQueueMedian,
    kQueueP95,
    kCopyShare
  };
  explicit ContentionModel(const Document* doc = nullptr, QObject* parent = nullptr);

 protected:
  int rows() const override;
  Cell cell(int row, int column) const override;
};

// Across ranks: matched collectives, wait and straggler count per rank, clock offset.
class SkewModel : public DocumentTableModel {
  Q_OBJECT
 public:
  enum Column { kRank, kMatched, kWait, kStraggler, kClockOffset };
  explicit SkewModel(const Document* doc = nullptr, QObject* parent = nullptr);

 protected:
  int rows() const override;
  Cell cell(int row, int column) const override;
  void document_changed() override;

 private:
  std::vector<size_t> order_;  // report.cross.ranks indices in rank order
};

// Why the GPU was idle (analyzer why/idle.h): all ranks, each rank, then each stream (by rank):
// idle and its causes (host wait, kernel wait, communication wait, other), which add up to idle.
class IdleCausesModel : public DocumentTableModel {
  Q_OBJECT
 public:
  enum Column { kScope, kIdle, kHostWait, kKernelWait, kCommWait, kOther, kGaps };
  explicit IdleCausesModel(const Document* doc = nullptr, QObject* parent = nullptr);

 protected:
  int rows() const override;
  Cell cell(int row, int column) const override;
  void document_changed() override;

 private:
  std::vector<size_t> ranks_;    // report.processes indices in rank order
  std::vector<size_t> streams_;  // report.streams indices in rank order
};

// The critical path of each step across ranks (analyzer why/path_join.h): its length and parts,
// the peer wait off it, the late arrivals it went through, and the step time each what-if
// replays (one column per Report::what_ifs).
class CriticalPathModel : public DocumentTableModel {
  Q_OBJECT
 public:
  enum Column {
    kStep,
    kStepTime,
    kCompute,
    kCommunication,
    kMemory,
    kOtherGpu,
    kHost,
    kIdle,
    kPeerWait,
    kStraggler,
    kWhatIfs  // first what-if column
  };
  explicit CriticalPathModel(const Document* doc = nullptr, QObject* parent = nullptr);
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 protected:
  int rows() const override;
  Cell cell(int row, int column) const override;
};

// The job's frequent kernel sequences (analyzer why/sequences.h), most frequent first: how often
// each recurs, the time its occurrences span and their kernels' own time, and its kernels; a
// row's kSequenceRole is its Report::sequences index (the search selects it).
class SequencesModel : public DocumentTableModel {
  Q_OBJECT
 public:
  enum Column { kCount, kSpan, kGpu, kMeanSpan, kKernels };
  explicit SequencesModel(const Document* doc = nullptr, QObject* parent = nullptr);
  // "×12: a → b → c" (the search's list).
  static QString label(const analyzer::KernelSequence& s);

 protected:
  int rows() const override;
  Cell cell(int row, int column) const override;
  QVariant extra(int row, int role) const override;
};

// c3bench results found in the traces.
class BenchModel : public DocumentTableModel {
  Q_OBJECT
 public:
  enum Column {
    kBackend,
    kData,  // "simulated" or "real"
    kLabel,
    kScenario,
    kTComp,
    kTComm,
    kTC3,
    kComputeSlowdown,
    kCommSlowdown,
    kIdealSpeedup,
    kRealizedSpeedup,
    kFractionOfIdeal
  };
  explicit BenchModel(const Document* doc = nullptr, QObject* parent = nullptr);

 protected:
  int rows() const override;
  Cell cell(int row, int column) const override;
};

// Two documents' overall metrics side by side, with the difference (B - A).
class CompareModel : public TableModel {
  Q_OBJECT
 public:
  enum Column { kMetric, kA, kB, kDifference };
  // Rows, in order.
  enum Metric {
    kSpanRow,
    kBusyRow,
    kIdleRow,
    kComputeRow,
    kCommunicationRow,
    kMemoryRow,
    kOverlapRow,
    kExposedCommRow,
    kExposedMemcpyRow,
    kKernelsRow,
    kMemcpysRow,
    kMetricRows
  };
  explicit CompareModel(const Document* a = nullptr, const Document* b = nullptr,
                        QObject* parent = nullptr);
  void set(const Document* a, const Document* b);
  int rowCount(const QModelIndex& parent = {}) const override;
  // Column A and B's tooltips name their documents.
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;

 protected:
  Cell cell(int row, int column) const override;

 private:
  const Document *a_ = nullptr, *b_ = nullptr;
};

// The timeline's row tree (groups, streams, ...) with a check state per row to hide it. An
// index's internalId is its timeline row.
class RowsModel : public QAbstractItemModel {
  Q_OBJECT
 public:
  explicit RowsModel(Timeline* timeline = nullptr, QObject* parent = nullptr);
  void set(Timeline* timeline);
  QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  QModelIndex parent(const QModelIndex& child) const override;
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  // The timeline row of an index (-1 for an invalid one), and the index of a timeline row.
  int row_of(const QModelIndex& index) const;
  QModelIndex index_of(int timeline_row, int column = 0) const;
  // Moves a row among its siblings (Timeline::move) and tells the views (layoutChanged).
  bool move(const QModelIndex& index, int delta);
  // Re-reads every check state after the timeline changed behind the model's back (reveal()).
  void sync();

 signals:
  void rowsChangedInTimeline();

 private:
  const std::vector<int>& children(int row) const;
  void sync_children(int row);
  Timeline* timeline_ = nullptr;
};

}  // namespace c3::gui
