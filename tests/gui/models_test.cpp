// The analysis panels' table models and the timeline rows' tree model over a small hand-built
// trace: QAbstractItemModelTester on every model (structure, roles, resets), and the values the
// panels show.
#include "c3/gui/models.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>
#include <algorithm>
#include <memory>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/metrics/metrics.h"
#include "c3/analyzer/metrics/names.h"
#include "c3/analyzer/report/report.h"
#include "c3/gui/format.h"

using namespace c3;
using namespace c3::gui;

namespace {

using Tester = QAbstractItemModelTester;

// Two ranks on one host, a GPU each: GEMMs and NCCL kernels that partly overlap, a copy, linked
// collectives (AllReduce and AllGather on one communicator), an unlinked SendRecv kernel, NVTX
// ranges on two depths and one simulated c3bench result. `extra_gemm` adds a late GEMM on rank 0
// (a longer, busier trace to compare with).
struct Builder {
  analyzer::Trace& t;

  int32_t name(const std::string& n) {
    for (size_t i = 0; i < t.names.size(); ++i) {
      if (t.names[i] == n) return static_cast<int32_t>(i);
    }
    t.names.push_back(n);
    return static_cast<int32_t>(t.names.size() - 1);
  }
  void kernel(const std::string& n, int64_t s, int64_t e, int process, int stream, int32_t shape,
              int32_t collective = -1) {
    t.activities.push(s, e, name(n), stream, 0, static_cast<int16_t>(process),
                      analyzer::Kind::kernel, 0);
    t.activities.shape.back() = shape;
    t.activities.collective.back() = collective;
  }
  int32_t collective(int process, int64_t seq, const std::string& op, int64_t bytes, int64_t s,
                     int64_t e) {
    analyzer::Collective c;
    c.process = static_cast<int16_t>(process);
    c.comm_id = "0x5eed";
    c.seq = seq;
    c.op = op;
    c.bytes = bytes;
    c.nranks = 2;
    c.rank = process;
    c.host_start = s - 10;
    c.gpu_start = s;
    c.gpu_end = e;
    t.collectives.push_back(c);
    return static_cast<int32_t>(t.collectives.size() - 1);
  }
};

void build_trace(analyzer::Trace& t, bool extra_gemm) {
  Builder b{t};
  for (int p = 0; p < 2; ++p) {
    analyzer::Process pr;
    pr.pid = 100 + p;
    pr.host = "node";
    pr.rank = p;
    pr.world_size = 2;
    pr.source = "rank" + std::to_string(p) + ".sqlite";
    t.processes.push_back(pr);
    analyzer::Device d;
    d.process = static_cast<int16_t>(p);
    d.device = 0;
    d.name = "H100";
    d.sm_count = 132;
    d.max_threads_per_sm = 2048;
    d.max_blocks_per_sm = 32;
    d.max_registers_per_sm = 65536;
    d.max_shared_per_sm = int64_t{228} * 1024;
    d.memory_bandwidth = 3'350'000'000'000;
    t.devices.push_back(d);
  }
  const int32_t gemm = t.add_shape({528, 256, 128, 0});
  const int32_t nccl = t.add_shape({32, 512, 64, 0});
  // Pushed out of order on purpose: sort() puts them in (process, device, start) order.
  for (int p = 1; p >= 0; --p) {
    const int64_t d = int64_t{20} * p;  // rank 1 a little later
    const int32_t ar = b.collective(p, 0, "AllReduce", 1 << 20, 500 + d, 1500 + d);
    const int32_t ag = b.collective(p, 1, "AllGather", 1 << 18, 2600 + d, 3550 + d);
    b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 500 + d, 1500 + d, p, 8, nccl, ar);
    b.kernel("ampere_bf16_gemm", 0, 1000, p, 7, gemm);
    b.kernel("ampere_bf16_gemm", 1200, 2000, p, 7, gemm);
    b.kernel("ncclDevKernel_AllGather_RING_LL", 2600 + d, 3550 + d, p, 8, nccl, ag);
    t.activities.push(2000, 2400, b.name("Memcpy HtoD (Host -> Device)"), 9, 0,
                      static_cast<int16_t>(p), analyzer::Kind::memcpy, 1 << 20);
  }
  // Not linked to an NCCL call: op from the name, size unknown.
  b.kernel("ncclDevKernel_SendRecv", 4000, 4500, 1, 8, nccl);
  if (extra_gemm) b.kernel("ampere_bf16_gemm", 5000, 9000, 0, 7, gemm);
  t.ranges.push_back({0, 11, "nvtx", "step", 0, 3600, 0});
  t.ranges.push_back({0, 11, "nvtx", "forward", 0, 1200, 1});
  t.ranges.push_back({0, 11, "nvtx", "backward", 1200, 2400, 1});
  t.ranges.push_back({1, 21, "nvtx", "step", 0, 3600, 0});
  analyzer::BenchResult r;
  r.process = 0;
  r.backend = "sim";
  r.simulated = true;
  r.label = "gemm:8192x8192x8192:bf16 || allreduce:64M";
  r.scenario = "concurrent";
  r.t_comp = 1.0e6;
  r.t_comm = 5.0e5;
  r.t_c3 = 1.2e6;
  r.compute_slowdown = 0.1;
  r.comm_slowdown = 0.2;
  r.ideal_speedup = 1.5;
  r.realized_speedup = 1.25;
  r.fraction_of_ideal = 0.5;
  t.bench.push_back(r);
  t.activities.sort();
  analyzer::classify(t, analyzer::Rules::defaults());
}

std::unique_ptr<Document> make_doc(bool extra_gemm = false) {
  auto doc = std::make_unique<Document>();
  doc->paths = {"a.sqlite"};
  build_trace(doc->trace, extra_gemm);
  doc->report = analyzer::analyze(doc->trace, {"a.sqlite"}, {});
  doc->timeline = std::make_unique<Timeline>(doc->trace);
  return doc;
}

std::unique_ptr<Document> empty_doc() {
  auto doc = std::make_unique<Document>();
  doc->report = analyzer::analyze(doc->trace, {}, {});
  doc->timeline = std::make_unique<Timeline>(doc->trace);
  return doc;
}

QString text(const QAbstractItemModel& m, int row, int column) {
  return m.data(m.index(row, column), Qt::DisplayRole).toString();
}

double sort_value(const QAbstractItemModel& m, int row, int column) {
  return m.data(m.index(row, column), kSortRole).toDouble();
}

}  // namespace

class ModelsTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<Document> doc_ = make_doc();

 private slots:
  void test_every_model_passes_the_tester();
  void test_null_and_empty_documents_give_no_rows();
  void test_summary();
  void test_collectives();
  void test_collectives_sort_numerically();
  void test_interference();
  void test_contention_and_skew();
  void test_bench();
  void test_compare();
  void test_rows_model_tree();
  void test_rows_model_hides_rows();
  void test_rows_model_move();
  void test_ranks_in_number_order();
  void test_overlap_without_communication();
};

void ModelsTest::test_every_model_passes_the_tester() {
  const auto other = make_doc(true);
  const auto empty = empty_doc();
  SummaryModel summary;
  CollectivesModel collectives;
  InterferenceModel interference;
  ContentionModel contention;
  SkewModel skew;
  BenchModel bench;
  CompareModel compare;
  RowsModel rows;
  // Tested while empty, across resets and with data.
  const std::vector<QAbstractItemModel*> all = {&summary, &contention, &collectives, &interference,
                                                &skew,    &bench,      &compare,     &rows};
  std::vector<std::unique_ptr<Tester>> testers;
  testers.reserve(all.size());
  for (QAbstractItemModel* m : all) {
    testers.push_back(std::make_unique<Tester>(m, Tester::FailureReportingMode::QtTest));
  }
  for (const Document* d : {doc_.get(), other.get(), empty.get(), doc_.get()}) {
    summary.set(d);
    collectives.set(d);
    interference.set(d);
    interference.set_show_all(true);  // every row, so that the tester has rows to check
    contention.set(d);
    skew.set(d);
    bench.set(d);
    compare.set(doc_.get(), d);
    rows.set(d->timeline.get());
    QVERIFY(!QTest::currentTestFailed());
  }
  for (QAbstractItemModel* m : all) {
    if (m != &compare) {
      QVERIFY2(m->rowCount() > 0, m->metaObject()->className());
    }
    QVERIFY(m->columnCount() > 0);
    // Every header has a title.
    for (int c = 0; c < m->columnCount(); ++c) {
      if (m != &rows) QVERIFY(!m->headerData(c, Qt::Horizontal).toString().isEmpty());
    }
  }
  QCOMPARE(compare.rowCount(), static_cast<int>(CompareModel::kMetricRows));
  // Every cell of every table has a text; numbers are right-aligned, and sort as doubles.
  for (QAbstractItemModel* m : all) {
    if (m == &rows) continue;
    for (int r = 0; r < m->rowCount(); ++r) {
      for (int c = 0; c < m->columnCount(); ++c) {
        const QModelIndex i = m->index(r, c);
        QVERIFY2(
            !m->data(i).toString().isEmpty(),
            qPrintable(QString("%1 (%2, %3)").arg(m->metaObject()->className()).arg(r).arg(c)));
        const QVariant s = m->data(i, kSortRole);
        QVERIFY(s.isValid());
        const int align = m->data(i, Qt::TextAlignmentRole).toInt();
        if (align & Qt::AlignRight) QCOMPARE(s.typeId(), static_cast<int>(QMetaType::Double));
      }
    }
  }
  summary.set(nullptr);
  rows.set(nullptr);
  compare.set(nullptr, nullptr);
}

void ModelsTest::test_null_and_empty_documents_give_no_rows() {
  const auto empty = empty_doc();
  for (const Document* d : std::initializer_list<const Document*>{nullptr, empty.get()}) {
    SummaryModel summary(d);
    CollectivesModel collectives(d);
    InterferenceModel interference(d);
    ContentionModel contention(d);
    SkewModel skew(d);
    BenchModel bench(d);
    RowsModel rows(d ? d->timeline.get() : nullptr);
    for (QAbstractItemModel* m : std::initializer_list<QAbstractItemModel*>{
             &summary, &collectives, &interference, &contention, &skew, &bench, &rows}) {
      Tester tester(m, Tester::FailureReportingMode::QtTest);
      QCOMPARE(m->rowCount(), 0);
      QVERIFY(!m->data(m->index(0, 0)).isValid());
    }
  }
  CompareModel compare(doc_.get(), nullptr);
  QCOMPARE(compare.rowCount(), 0);
  compare.set(nullptr, doc_.get());
  QCOMPARE(compare.rowCount(), 0);
  compare.set(doc_.get(), empty.get());
  QCOMPARE(compare.rowCount(), static_cast<int>(CompareModel::kMetricRows));
}

void ModelsTest::test_summary() {
  SummaryModel m(doc_.get());
  const analyzer::Report& r = doc_->report;
  QCOMPARE(m.rowCount(), 3);
  QCOMPARE(text(m, 0, SummaryModel::kScope), QString("rank 0"));
  QCOMPARE(text(m, 1, SummaryModel::kScope), QString("rank 1"));
  QCOMPARE(text(m, 2, SummaryModel::kScope), QString("all ranks"));
  QVERIFY(r.overall.b.overlap_pct > 0);
  QCOMPARE(text(m, 2, SummaryModel::kOverlap), format_pct(r.overall.b.overlap_pct));
  QCOMPARE(sort_value(m, 2, SummaryModel::kOverlap), r.overall.b.overlap_pct);
  for (int row = 0; row < 2; ++row) {
    const analyzer::Breakdown& b = r.processes[static_cast<size_t>(row)].b;
    QCOMPARE(text(m, row, SummaryModel::kSpan), format_duration(static_cast<double>(b.span)));
    QCOMPARE(sort_value(m, row, SummaryModel::kSpan), static_cast<double>(b.span));
    QCOMPARE(sort_value(m, row, SummaryModel::kIdle), static_cast<double>(b.idle));
    QCOMPARE(sort_value(m, row, SummaryModel::kCompute), static_cast<double>(b.compute()));
    QCOMPARE(sort_value(m, row, SummaryModel::kCommunication), static_cast<double>(b.comm()));
    QCOMPARE(sort_value(m, row, SummaryModel::kExposedComm), static_cast<double>(b.exposed_comm));
    QCOMPARE(sort_value(m, row, SummaryModel::kExposedMemcpy),
             static_cast<double>(b.exposed_memcpy));
  }
  // Rank 0: compute [0,1000) [1200,2000); comm [500,1500) [2600,3550): 800 of 1950 hidden.
  QCOMPARE(sort_value(m, 0, SummaryModel::kCompute), 1800.0);
  QCOMPARE(sort_value(m, 0, SummaryModel::kCommunication), 1950.0);
  QCOMPARE(text(m, 0, SummaryModel::kOverlap), format_pct(100.0 * 800 / 1950));
  // The overall row sums the processes.
  QCOMPARE(sort_value(m, 2, SummaryModel::kSpan),
           static_cast<double>(r.processes[0].b.span + r.processes[1].b.span));
  QCOMPARE(m.data(m.index(0, SummaryModel::kSpan), Qt::TextAlignmentRole).toInt(),
           static_cast<int>((Qt::AlignRight | Qt::AlignVCenter).toInt()));
  QCOMPARE(m.data(m.index(0, SummaryModel::kScope), Qt::TextAlignmentRole).toInt(),
           static_cast<int>((Qt::AlignLeft | Qt::AlignVCenter).toInt()));
  QVERIFY(m.data(m.index(0, SummaryModel::kScope), Qt::ToolTipRole).toString().contains("pid 100"));
  QCOMPARE(m.headerData(SummaryModel::kOverlap, Qt::Horizontal).toString(), QString("overlap %"));
  // set() resets.
  QSignalSpy reset(&m, &QAbstractItemModel::modelReset);
  m.set(nullptr);
  QCOMPARE(reset.count(), 1);
  QCOMPARE(m.rowCount(), 0);
}

void ModelsTest::test_collectives() {
  CollectivesModel m(doc_.get());
  const analyzer::Trace& t = doc_->trace;
  const analyzer::Report& r = doc_->report;
  QCOMPARE(m.rowCount(), 5);  // 2 AllReduce, 2 AllGather, 1 SendRecv
  QCOMPARE(m.rowCount(), static_cast<int>(r.comm.size()));
  int linked = 0, unlinked = 0;
  for (int row = 0; row < m.rowCount(); ++row) {
    const QVariant v = m.data(m.index(row, CollectivesModel::kKernel), kActivityRole);
    QCOMPARE(v.typeId(), static_cast<int>(QMetaType::ULongLong));
    const auto a = static_cast<size_t>(v.toULongLong());
    QVERIFY(a < t.activities.size());
    QCOMPARE(a, r.comm[static_cast<size_t>(row)].activity);
    QCOMPARE(t.activities.cls[a], analyzer::Class::communication);
    QCOMPARE(text(m, row, CollectivesModel::kKernel),
             QString::fromStdString(t.names[static_cast<size_t>(t.activities.name[a])]));
    QCOMPARE(
        text(m, row, CollectivesModel::kRank),
        QString::fromStdString(t.processes[static_cast<size_t>(t.activities.process[a])].label()));
    const double dur = static_cast<double>(t.activities.end[a] - t.activities.start[a]);
    QCOMPARE(sort_value(m, row, CollectivesModel::kDuration), dur);
    QCOMPARE(text(m, row, CollectivesModel::kDuration), format_duration(dur));
    const QString op = text(m, row, CollectivesModel::kOp);
    if (op == "AllGather") {
      // nccl-tests: S = count x size x nranks; algbw = S / t; busbw = algbw (n-1)/n.
      ++linked;
      const double s = 2.0 * (1 << 18);
      QCOMPARE(text(m, row, CollectivesModel::kBytes), format_bytes(1 << 18));
      QCOMPARE(sort_value(m, row, CollectivesModel::kBytes), static_cast<double>(1 << 18));
      QCOMPARE(text(m, row, CollectivesModel::kAlgbw), format_bandwidth(s / (dur * 1e-9)));
      QCOMPARE(sort_value(m, row, CollectivesModel::kBusbw), s / (dur * 1e-9) * 0.5);
    } else if (op == "AllReduce") {
      ++linked;
      const double s = 1 << 20;
      QCOMPARE(sort_value(m, row, CollectivesModel::kAlgbw), s / (dur * 1e-9));
      QCOMPARE(sort_value(m, row, CollectivesModel::kBusbw), s / (dur * 1e-9) * 2 * (2 - 1) / 2);
    } else {
      ++unlinked;
      QCOMPARE(op, QString("SendRecv"));
      QCOMPARE(text(m, row, CollectivesModel::kBytes), QString("-"));
      QCOMPARE(text(m, row, CollectivesModel::kAlgbw), QString("-"));
      QCOMPARE(text(m, row, CollectivesModel::kBusbw), QString("-"));
    }
    const double pct = r.comm[static_cast<size_t>(row)].pct();
    QCOMPARE(text(m, row, CollectivesModel::kOverlap), format_pct(pct));
  }
  QCOMPARE(linked, 4);
  QCOMPARE(unlinked, 1);
  // The same bandwidths as `c3scope analyze --csv` (collectives_csv): one CSV line per row.
  const std::string csv = analyzer::collectives_csv(t, r);
  QCOMPARE(static_cast<int>(std::count(csv.begin(), csv.end(), '\n')), m.rowCount() + 1);
  // Rank 0's AllReduce [500,1500) runs under compute for [500,1000) and [1200,1500): 80 %.
  for (int row = 0; row < m.rowCount(); ++row) {
    if (text(m, row, CollectivesModel::kOp) == "AllReduce" &&
        text(m, row, CollectivesModel::kRank) == "rank 0") {
      QCOMPARE(sort_value(m, row, CollectivesModel::kOverlap), 80.0);
    }
  }
  QVERIFY(!m.data(m.index(0, 0), kActivityRole + 7).isValid());
}

void ModelsTest::test_collectives_sort_numerically() {
  CollectivesModel m(doc_.get());
  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&m);
  proxy.setSortRole(kSortRole);
  Tester tester(&proxy, Tester::FailureReportingMode::QtTest);
  proxy.sort(CollectivesModel::kDuration, Qt::AscendingOrder);
  // Durations 500 ns, 950 ns and 1.00 µs: as text, "1.00 µs" would come first.
  QStringList texts;
  std::vector<double> values;
  for (int row = 0; row < proxy.rowCount(); ++row) {
    texts << proxy.data(proxy.index(row, CollectivesModel::kDuration)).toString();
    values.push_back(
        proxy.data(proxy.index(row, CollectivesModel::kDuration), kSortRole).toDouble());
  }
  QVERIFY(std::is_sorted(values.begin(), values.end()));
  QCOMPARE(texts.front(), QString("500 ns"));
  QCOMPARE(texts.back(), format_duration(1000));
  QStringList lexical = texts;
  lexical.sort();
  QVERIFY(lexical != texts);
  // Descending by bytes: the unknown size ("-") last.
  proxy.sort(CollectivesModel::kBytes, Qt::DescendingOrder);
  QCOMPARE(proxy.data(proxy.index(0, CollectivesModel::kBytes)).toString(), format_bytes(1 << 20));
  QCOMPARE(proxy.data(proxy.index(proxy.rowCount() - 1, CollectivesModel::kBytes)).toString(),
           QString("-"));
  // The activity role goes through the proxy.
  QVERIFY(proxy.data(proxy.index(0, 0), kActivityRole).isValid());
}

void ModelsTest::test_interference() {
  InterferenceModel m(doc_.get());
  // A handful of instances: no verdict anywhere, so by default no rows (issue 13: a table of
  // "not enough samples"); every row on request, counted.
  QCOMPARE(m.rowCount(), 0);
  QCOMPARE(m.without_verdict(), static_cast<int>(doc_->report.interference.size()));
  m.set_show_all(true);
  QCOMPARE(m.rowCount(), static_cast<int>(doc_->report.interference.size()));
  QVERIFY(m.rowCount() > 0);
  for (int row = 0; row < m.rowCount(); ++row) {
    const analyzer::InterferenceRow& x = doc_->report.interference[static_cast<size_t>(row)];
    QVERIFY(!x.enough);
    QCOMPARE(text(m, row, InterferenceModel::kSlowdown),
             x.peer_wait == analyzer::InterferenceRow::PeerWait::point_to_point
                 ? QString("peer wait")
                 : QString("not enough samples"));
    // Names as Nsight shortens them; the full signature in the tooltip.
    const std::string sig = analyzer::short_signatures({x.signature})[0];
    QCOMPARE(text(m, row, InterferenceModel::kOperation), QString::fromStdString(sig));
    QVERIFY(m.data(m.index(row, InterferenceModel::kOperation), Qt::ToolTipRole)
                .toString()
                .contains(QString::fromStdString(x.signature)));
    QCOMPARE(sort_value(m, row, InterferenceModel::kAlone), static_cast<double>(x.alone));
    QCOMPARE(sort_value(m, row, InterferenceModel::kOverlapped), static_cast<double>(x.overlapped));
  }
  // A row with enough samples, by hand.
  Document d;
  analyzer::InterferenceRow x;
  x.signature = "gemm <<<528, 256>>>";
  x.cls = analyzer::Class::compute;
  x.alone = 40;
  x.overlapped = 12;
  x.median_alone_ns = 1000;
  x.median_overlapped_ns = 1123;
  x.enough = true;
  x.slowdown = 0.123;
  x.ci_low = 0.081;
  x.ci_high = 0.150;
  d.report.interference.push_back(x);
  x.signature = "AllReduce 1M..2M";
  x.cls = analyzer::Class::communication;
  x.slowdown = -0.0004;
  x.ci_low = -0.02;
  x.ci_high = 0.01;
  x.peer_wait = analyzer::InterferenceRow::PeerWait::collective;
  d.report.interference.push_back(x);
  // SendRecv: its time is the wait for the peer (+11006.7 % on a real trace), no verdict.
  x.signature = "SendRecv 64M..128M";
  x.slowdown = 110.067;
  x.peer_wait = analyzer::InterferenceRow::PeerWait::point_to_point;
  d.report.interference.push_back(x);
  m.set_show_all(false);
  m.set(&d);
  QCOMPARE(m.rowCount(), 2);
  QCOMPARE(m.without_verdict(), 1);
  QCOMPARE(text(m, 0, InterferenceModel::kSlowdown), QString("+12.3 % [+8.1 %, +15.0 %]"));
  QCOMPARE(sort_value(m, 0, InterferenceModel::kSlowdown), 12.3);
  QCOMPARE(text(m, 1, InterferenceModel::kSlowdown), QString("0.0 % [-2.0 %, +1.0 %]"));
  QCOMPARE(text(m, 0, InterferenceModel::kClass), QString("compute"));
  QCOMPARE(text(m, 1, InterferenceModel::kClass), QString("communication (incl. peer wait)"));
  m.set_show_all(true);
  QCOMPARE(m.rowCount(), 3);
  QCOMPARE(text(m, 2, InterferenceModel::kSlowdown), QString("peer wait"));
  QCOMPARE(text(m, 0, InterferenceModel::kMedianOverlapped), format_duration(1123));
  m.set(nullptr);
}

void ModelsTest::test_contention_and_skew() {
  const analyzer::Report& r = doc_->report;
  ContentionModel c(doc_.get());
  QCOMPARE(c.rowCount(), 2);
  QCOMPARE(c.rowCount(), static_cast<int>(r.contention.size()));
  QCOMPARE(text(c, 0, ContentionModel::kDevice), QString("rank 0 GPU 0"));
  QCOMPARE(text(c, 1, ContentionModel::kDevice), QString("rank 1 GPU 0"));
  for (int row = 0; row < 2; ++row) {
    const analyzer::Contention& x = r.contention[static_cast<size_t>(row)];
    QVERIFY(x.kernels_with_demand > 0);
    QCOMPARE(sort_value(c, row, ContentionModel::kOversubscribed),
             static_cast<double>(x.oversubscribed_ns));
    QCOMPARE(sort_value(c, row, ContentionModel::kCopySharing),
             static_cast<double>(x.copy_overlap_ns));
    // No submitted timestamps were recorded.
    QCOMPARE(text(c, row, ContentionModel::kQueueMedian), QString("-"));
    // One HtoD copy of 1 MiB in 400 ns against 3.35 TB/s.
    QVERIFY(text(c, row, ContentionModel::kCopyShare).startsWith("Hto"));
    if (!x.oversubscribed_kernels.empty()) {
      QCOMPARE(text(c, row, ContentionModel::kTopKernel),
               QString::fromStdString(x.oversubscribed_kernels.front().first));
    }
  }

  SkewModel s(doc_.get());
  QCOMPARE(s.rowCount(), static_cast<int>(r.cross.ranks.size()));
  QCOMPARE(s.rowCount(), 2);
  int64_t stragglers = 0;
  for (int row = 0; row < s.rowCount(); ++row) {
    // Rows in rank order, whatever order the report keeps.
    const int p = rank_order(doc_->trace)[static_cast<size_t>(row)];
    const auto it = std::find_if(r.cross.ranks.begin(), r.cross.ranks.end(),
                                 [&](const analyzer::RankWait& x) { return x.process == p; });
    QVERIFY(it != r.cross.ranks.end());
    const analyzer::RankWait& w = *it;
    QCOMPARE(text(s, row, SkewModel::kRank),
             QString::fromStdString(doc_->trace.processes[static_cast<size_t>(w.process)].label()));
    QCOMPARE(sort_value(s, row, SkewModel::kMatched), 2.0);
    QCOMPARE(sort_value(s, row, SkewModel::kWait), static_cast<double>(w.wait_ns));
    stragglers += static_cast<int64_t>(sort_value(s, row, SkewModel::kStraggler));
    const QString clock = text(s, row, SkewModel::kClockOffset);
    QVERIFY2(clock.contains(w.process == 0 ? "reference" : "same host"), qPrintable(clock));
  }
  QCOMPARE(stragglers, 2);  // rank 1 arrived last at both
  // In rank order (the report lists the straggler first; issue 24: ranks by number).
  QCOMPARE(text(s, 0, SkewModel::kRank), QString("rank 0"));
  QCOMPARE(sort_value(s, 0, SkewModel::kWait), 40.0);
  QCOMPARE(text(s, 1, SkewModel::kRank), QString("rank 1"));
  QCOMPARE(sort_value(s, 1, SkewModel::kWait), 0.0);
}

void ModelsTest::test_bench() {
  BenchModel m(doc_.get());
  QCOMPARE(m.rowCount(), 1);
  QCOMPARE(text(m, 0, BenchModel::kBackend), QString("sim"));
  QCOMPARE(text(m, 0, BenchModel::kData), QString("simulated"));
  QCOMPARE(text(m, 0, BenchModel::kLabel), QString("gemm:8192x8192x8192:bf16 || allreduce:64M"));
  QCOMPARE(text(m, 0, BenchModel::kScenario), QString("concurrent"));
  QCOMPARE(text(m, 0, BenchModel::kTComp), format_duration(1e6));
  QCOMPARE(text(m, 0, BenchModel::kTC3), format_duration(1.2e6));
  QCOMPARE(text(m, 0, BenchModel::kComputeSlowdown), QString("+10.0 %"));
  QCOMPARE(text(m, 0, BenchModel::kCommSlowdown), QString("+20.0 %"));
  QCOMPARE(text(m, 0, BenchModel::kIdealSpeedup), QString("1.50"));
  QCOMPARE(text(m, 0, BenchModel::kRealizedSpeedup), QString("1.25"));
  QCOMPARE(text(m, 0, BenchModel::kFractionOfIdeal), QString("0.50"));
  QCOMPARE(sort_value(m, 0, BenchModel::kRealizedSpeedup), 1.25);
  // Absent values and real measurements.
  Document d;
  analyzer::BenchResult b;
  b.backend = "cuda";
  b.label = "x";
  d.trace.bench.push_back(b);
  m.set(&d);
  QCOMPARE(text(m, 0, BenchModel::kData), QString("real"));
  QCOMPARE(text(m, 0, BenchModel::kFractionOfIdeal), QString("-"));
  QCOMPARE(text(m, 0, BenchModel::kComputeSlowdown), QString("-"));
  QVERIFY(sort_value(m, 0, BenchModel::kComputeSlowdown) < -1e300);
  m.set(nullptr);
}

void ModelsTest::test_compare() {
  CompareModel m(doc_.get(), doc_.get());
  QCOMPARE(m.rowCount(), static_cast<int>(CompareModel::kMetricRows));
  QCOMPARE(m.columnCount(), 4);
  for (int row = 0; row < m.rowCount(); ++row) {
    QCOMPARE(sort_value(m, row, CompareModel::kDifference), 0.0);
    QCOMPARE(text(m, row, CompareModel::kA), text(m, row, CompareModel::kB));
    QVERIFY(!text(m, row, CompareModel::kDifference).startsWith('+'));
    QVERIFY(!text(m, row, CompareModel::kDifference).startsWith('-'));
  }
  QCOMPARE(text(m, CompareModel::kSpanRow, CompareModel::kMetric), QString("span"));
  QCOMPARE(text(m, CompareModel::kOverlapRow, CompareModel::kA),
           format_pct(doc_->report.overall.b.overlap_pct));
  QCOMPARE(m.headerData(CompareModel::kA, Qt::Horizontal, Qt::ToolTipRole).toString(),
           QString("a.sqlite"));

  // B has one more GEMM on rank 0, [5000, 9000): rank 0's span grows from 3550 to 9000 ns, with
  // 4000 more compute and 1450 more idle; the communication is the same.
  const auto b = make_doc(true);
  m.set(doc_.get(), b.get());
  const analyzer::Breakdown& ba = doc_->report.overall.b;
  const analyzer::Breakdown& bb = b->report.overall.b;
  QCOMPARE(sort_value(m, CompareModel::kSpanRow, CompareModel::kDifference),
           static_cast<double>(bb.span - ba.span));
  QCOMPARE(sort_value(m, CompareModel::kSpanRow, CompareModel::kDifference), 5450.0);
  QCOMPARE(sort_value(m, CompareModel::kIdleRow, CompareModel::kDifference), 1450.0);
  QCOMPARE(sort_value(m, CompareModel::kComputeRow, CompareModel::kDifference), 4000.0);
  QCOMPARE(sort_value(m, CompareModel::kCommunicationRow, CompareModel::kDifference), 0.0);
  QCOMPARE(sort_value(m, CompareModel::kKernelsRow, CompareModel::kDifference), 1.0);
  QCOMPARE(text(m, CompareModel::kKernelsRow, CompareModel::kDifference).left(2), QString("+1"));
  QVERIFY(text(m, CompareModel::kSpanRow, CompareModel::kDifference).startsWith("+5.45 µs"));
  QVERIFY(text(m, CompareModel::kSpanRow, CompareModel::kDifference).contains("%"));
  // The other way round: the same differences, negative.
  m.set(b.get(), doc_.get());
  QCOMPARE(sort_value(m, CompareModel::kSpanRow, CompareModel::kDifference), -5450.0);
  QVERIFY(text(m, CompareModel::kSpanRow, CompareModel::kDifference).startsWith('-'));
  QVERIFY(text(m, CompareModel::kOverlapRow, CompareModel::kDifference).endsWith("pp"));
  m.set(nullptr, nullptr);
}

void ModelsTest::test_rows_model_tree() {
  Timeline& tl = *doc_->timeline;
  RowsModel m(&tl);
  Tester tester(&m, Tester::FailureReportingMode::QtTest);
  QCOMPARE(m.rowCount(), static_cast<int>(tl.roots().size()));
  QCOMPARE(m.columnCount(), 1);
  // Every timeline row has exactly one index, whose parent is its row's parent.
  int seen = 0;
  std::vector<QModelIndex> stack;
  for (int r = 0; r < m.rowCount(); ++r) stack.push_back(m.index(r, 0));
  while (!stack.empty()) {
    const QModelIndex i = stack.back();
    stack.pop_back();
    ++seen;
    const int row = m.row_of(i);
    QCOMPARE(static_cast<int>(i.internalId()), row);
    const Row& tr = tl.row(row);
    QCOMPARE(m.data(i).toString(), QString::fromStdString(tr.label));
    QCOMPARE(m.data(i, Qt::CheckStateRole).toInt(), static_cast<int>(Qt::Checked));
    QCOMPARE(m.row_of(m.parent(i)), tr.parent);
    QCOMPARE(m.index_of(row), i);
    QCOMPARE(m.rowCount(i), static_cast<int>(tr.children.size()));
    QVERIFY(m.flags(i).testFlag(Qt::ItemIsUserCheckable));
    QVERIFY(m.flags(i).testFlag(Qt::ItemIsSelectable));
    QVERIFY(m.flags(i).testFlag(Qt::ItemIsEnabled));
    for (int c = 0; c < m.rowCount(i); ++c) {
      const QModelIndex child = m.index(c, 0, i);
      QCOMPARE(m.parent(child), i);
      QCOMPARE(m.row_of(child), tr.children[static_cast<size_t>(c)]);
      stack.push_back(child);
    }
  }
  QCOMPARE(seen, static_cast<int>(tl.rows().size()));
  QCOMPARE(m.row_of({}), -1);
  QVERIFY(!m.index(m.rowCount(), 0).isValid());
  QVERIFY(!m.index(0, 1).isValid());
}

void ModelsTest::test_rows_model_hides_rows() {
  Timeline& tl = *doc_->timeline;
  RowsModel m(&tl);
  Tester tester(&m, Tester::FailureReportingMode::QtTest);
  QSignalSpy changed(&m, &RowsModel::rowsChangedInTimeline);
  QSignalSpy data(&m, &QAbstractItemModel::dataChanged);
  // A stream row of rank 1.
  int stream = -1;
  for (size_t i = 0; i < tl.rows().size(); ++i) {
    if (tl.rows()[i].kind == RowKind::stream && tl.rows()[i].process == 1)
      stream = static_cast<int>(i);
  }
  QVERIFY(stream >= 0);
  const QModelIndex i = m.index_of(stream);
  QVERIFY(i.isValid());
  auto visible = [&](int row) {
    const std::vector<int> v = tl.visible_rows();
    return std::find(v.begin(), v.end(), row) != v.end();
  };
  QVERIFY(visible(stream));
  QVERIFY(m.setData(i, static_cast<int>(Qt::Unchecked), Qt::CheckStateRole));
  QVERIFY(tl.row(stream).hidden);
  QVERIFY(!visible(stream));
  QCOMPARE(m.data(i, Qt::CheckStateRole).toInt(), static_cast<int>(Qt::Unchecked));
  QCOMPARE(changed.count(), 1);
  QCOMPARE(data.count(), 1);
  QCOMPARE(data.front().at(0).value<QModelIndex>(), i);
  // Hiding a group hides its rows from the timeline too.
  const QModelIndex process = m.parent(m.parent(i));
  QCOMPARE(tl.row(m.row_of(process)).kind, RowKind::group);
  QVERIFY(m.setData(process, QVariant::fromValue(Qt::Unchecked), Qt::CheckStateRole));
  QVERIFY(!visible(m.row_of(process)));
  QVERIFY(!visible(m.row_of(m.parent(i))));
  QCOMPARE(changed.count(), 2);
  // Only the check state role is editable.
  QVERIFY(!m.setData(i, "x", Qt::DisplayRole));
  QCOMPARE(changed.count(), 2);
  // Back on.
  QVERIFY(m.setData(process, static_cast<int>(Qt::Checked), Qt::CheckStateRole));
  QVERIFY(m.setData(i, static_cast<int>(Qt::Checked), Qt::CheckStateRole));
  QVERIFY(visible(stream));
  QCOMPARE(changed.count(), 4);
  // Changes behind the model's back (reveal) reach the views through sync().
  tl.row(stream).hidden = true;
  tl.reveal(stream);
  data.clear();
  m.sync();
  QVERIFY(data.count() > 0);
  QCOMPARE(m.data(i, Qt::CheckStateRole).toInt(), static_cast<int>(Qt::Checked));
}

void ModelsTest::test_rows_model_move() {
  Timeline& tl = *doc_->timeline;
  RowsModel m(&tl);
  Tester tester(&m, Tester::FailureReportingMode::QtTest);
  QSignalSpy changed(&m, &RowsModel::rowsChangedInTimeline);
  // Rank 0's process group: its device group, collectives row and NVTX thread group.
  const QModelIndex host = m.index(0, 0);
  const QModelIndex rank0 = m.index(0, 0, host);
  QCOMPARE(m.data(rank0).toString().left(6), QString("rank 0"));
  QVERIFY(m.rowCount(rank0) >= 3);
  const int first = m.row_of(m.index(0, 0, rank0)), second = m.row_of(m.index(1, 0, rank0));
  const QPersistentModelIndex kept(m.index(0, 0, rank0));
  QVERIFY(m.move(m.index(0, 0, rank0), 1));
  QCOMPARE(m.row_of(m.index(0, 0, rank0)), second);
  QCOMPARE(m.row_of(m.index(1, 0, rank0)), first);
  QCOMPARE(tl.row(m.row_of(rank0)).children[1], first);
  // Persistent indexes follow the row.
  QCOMPARE(kept.row(), 1);
  QCOMPARE(m.row_of(kept), first);
  QCOMPARE(changed.count(), 1);
  // Out of range: nothing happens.
  QVERIFY(!m.move(m.index(0, 0, rank0), -1));
  QVERIFY(!m.move(m.index(m.rowCount(rank0) - 1, 0, rank0), 1));
  QCOMPARE(changed.count(), 1);
  QVERIFY(m.move(m.index(1, 0, rank0), -1));
  QCOMPARE(m.row_of(m.index(0, 0, rank0)), first);
  QCOMPARE(kept.row(), 0);
  // set() resets.
  QSignalSpy reset(&m, &QAbstractItemModel::modelReset);
  m.set(nullptr);
  QCOMPARE(reset.count(), 1);
  QCOMPARE(m.rowCount(), 0);
}

// Issue 24: ranks in number order in every per-rank table (files load in string order: rank10
// before rank2), overlap "-" without communication, "simulated" and the files' names known.
void ModelsTest::test_ranks_in_number_order() {
  Document doc;
  doc.paths = {"/runs/job/rank10.sqlite", "/runs/job/rank2.sqlite"};
  Builder b{doc.trace};
  for (const int rank : {10, 2}) {
    analyzer::Process pr;
    pr.pid = 100 + rank;
    pr.host = "node";
    pr.rank = rank;
    doc.trace.processes.push_back(pr);
    const int p = static_cast<int>(doc.trace.processes.size() - 1);
    b.kernel("ampere_bf16_gemm", 0, 1000, p, 7, -1);
    // A matched collective, rank 10 the later: the skew table's rows.
    const int32_t c = b.collective(p, 0, "AllReduce", 1 << 20, 1000 + rank, 2000);
    b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1000 + rank, 2000, p, 8, -1, c);
  }
  doc.trace.activities.sort();
  analyzer::classify(doc.trace, analyzer::Rules::defaults());
  doc.report = analyzer::analyze(doc.trace, {"rank10.sqlite", "rank2.sqlite"}, {});
  QCOMPARE(rank_order(doc.trace), (std::vector<int>{1, 0}));
  SummaryModel m(&doc);
  QCOMPARE(m.rowCount(), 3);
  QCOMPARE(text(m, 0, SummaryModel::kScope), QString("rank 2"));
  QCOMPARE(text(m, 1, SummaryModel::kScope), QString("rank 10"));
  QCOMPARE(text(m, 2, SummaryModel::kScope), QString("all ranks"));
  SkewModel s(&doc);
  QCOMPARE(s.rowCount(), 2);
  QCOMPARE(text(s, 0, SkewModel::kRank), QString("rank 2"));
  QCOMPARE(text(s, 1, SkewModel::kRank), QString("rank 10"));
  QCOMPARE(doc.title(), QString("job: rank10.sqlite, rank2.sqlite"));
  QVERIFY(!is_simulated(doc.trace));
  QVERIFY(is_simulated(doc_->trace));  // its c3bench result is simulated
  analyzer::Device d;
  d.name = "Simulated H100 SXM5 80GB";
  doc.trace.devices.push_back(d);
  QVERIFY(is_simulated(doc.trace));
}

// Issue 24 item 5: without communication the overlap is "-", not 0 % ("all exposed").
void ModelsTest::test_overlap_without_communication() {
  Document doc;
  doc.paths = {"a.sqlite"};
  Builder b{doc.trace};
  analyzer::Process pr;
  pr.pid = 1;
  pr.rank = 0;
  doc.trace.processes.push_back(pr);
  b.kernel("ampere_bf16_gemm", 0, 1000, 0, 7, -1);
  doc.trace.activities.sort();
  analyzer::classify(doc.trace, analyzer::Rules::defaults());
  doc.report = analyzer::analyze(doc.trace, {"a.sqlite"}, {});
  SummaryModel m(&doc);
  QCOMPARE(text(m, 0, SummaryModel::kOverlap), QString("-"));
  QCOMPARE(text(m, 1, SummaryModel::kOverlap), QString("-"));
  CompareModel c(&doc, doc_.get());
  QCOMPARE(text(c, CompareModel::kOverlapRow, CompareModel::kA), QString("-"));
  QCOMPARE(text(c, CompareModel::kOverlapRow, CompareModel::kB),
           format_pct(doc_->report.overall.b.overlap_pct));
  QCOMPARE(text(c, CompareModel::kOverlapRow, CompareModel::kDifference), QString("-"));
}

QTEST_GUILESS_MAIN(ModelsTest)
#include "models_test.moc"
