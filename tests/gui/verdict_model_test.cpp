// The Compare tab's verdicts: compare_documents gives what `c3scope compare` gives (the same
// library call on the same summaries), and VerdictModel / comparison_summary show it: rows worst
// first, coloured by verdict, the reports' numbers, the explained step time.
#include "c3/gui/verdict_model.h"

#include <QAbstractItemModelTester>
#include <QColor>
#include <QTest>
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/report/report.h"
#include "c3/analyzer/summary/summary.h"
#include "c3/gui/document.h"

using namespace c3;
using namespace c3::gui;

namespace {

// Two ranks, a GPU each, `steps` NVTX ranges "step N" of 1 ms: a GEMM of 400 us, then an
// AllReduce kernel of `nccl_ns` (partly under a second GEMM of 200 us). Step k lasts a few
// hundred ns more or less than the next, so the steps are not all tied.
std::unique_ptr<Document> make_job(int64_t nccl_ns, int steps = 12) {
  auto doc = std::make_unique<Document>();
  doc->paths = {nccl_ns > 300'000 ? "slow" : "base"};
  analyzer::Trace& t = doc->trace;
  t.names = {"ampere_bf16_gemm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"};
  for (int p = 0; p < 2; ++p) {
    analyzer::Process pr;
    pr.pid = 10 + p;
    pr.host = "node";
    pr.rank = p;
    pr.world_size = 2;
    pr.source = "rank" + std::to_string(p) + ".sqlite";
    t.processes.push_back(pr);
    analyzer::Device d;
    d.process = static_cast<int16_t>(p);
    d.name = "H100";
    t.devices.push_back(d);
    for (int k = 0; k < steps; ++k) {
      const int64_t s = int64_t{k} * 1'000'000 + int64_t{10} * p;
      const int64_t jitter = int64_t{k * 37 % 11} * 100;
      const auto proc = static_cast<int16_t>(p);
      t.activities.push(s, s + 400'000 + jitter, 0, 7, 0, proc, analyzer::Kind::kernel, 0);
      t.activities.push(s + 420'000, s + 420'000 + nccl_ns, 1, 8, 0, proc, analyzer::Kind::kernel,
                        0);
      t.activities.push(s + 430'000, s + 630'000, 0, 7, 0, proc, analyzer::Kind::kernel, 0);
      const int64_t end = s + 430'000 + std::max<int64_t>(nccl_ns, 200'000) + 50'000 + jitter;
      t.ranges.push_back({proc, 1, "nvtx", "step " + std::to_string(k), s, end, 0});
    }
  }
  t.activities.sort();
  analyzer::classify(t, analyzer::Rules::defaults());
  doc->report = analyzer::analyze(t, {doc->paths.front().toStdString()}, {});
  doc->analyzed = true;
  return doc;
}

const analyzer::MetricResult* find(const analyzer::Comparison& c, const std::string& id) {
  for (const auto& m : c.metrics) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

// compare_documents' comparison, or nullptr when it failed or was cancelled.
std::shared_ptr<const analyzer::Comparison> compared(Document& a, Document& b,
                                                     const std::string& step,
                                                     const std::atomic<bool>& cancel) {
  Result<std::shared_ptr<const analyzer::Comparison>> r = compare_documents(a, b, step, cancel);
  return r ? *r : nullptr;
}

QString text(const QAbstractItemModel& m, int row, int column, int role = Qt::DisplayRole) {
  return m.data(m.index(row, column), role).toString();
}

}  // namespace

class VerdictModelTest : public QObject {
  Q_OBJECT
 private slots:
  // The GUI's comparison is analyzer::compare on the documents' summaries: the same metrics in
  // the same order with the same decisions as the command line would print.
  void sameVerdictsAsTheLibrary() {
    auto a = make_job(300'000);
    auto b = make_job(375'000);  // NCCL 25% longer
    const std::atomic<bool> cancel{false};
    const auto c = compared(*a, *b, "^step [0-9]+$", cancel);
    QVERIFY(c != nullptr);
    analyzer::SummaryOptions o;
    o.step = "^step [0-9]+$";
    analyzer::JobRun ra{"base", analyzer::summarize(a->trace, o), o};
    analyzer::JobRun rb{"slow", analyzer::summarize(b->trace, o), o};
    const analyzer::Comparison direct = analyzer::compare(&ra, rb, analyzer::CompareOptions{});
    QCOMPARE(c->metrics.size(), direct.metrics.size());
    for (size_t i = 0; i < direct.metrics.size(); ++i) {
      QCOMPARE(c->metrics[i].id, direct.metrics[i].id);
      QCOMPARE(c->metrics[i].d.verdict, direct.metrics[i].d.verdict);
      QCOMPARE(c->metrics[i].d.change, direct.metrics[i].d.change);
    }
    QCOMPARE(c->verdict(), std::string("regression"));
    QCOMPARE(c->exit_code(), 1);
    // Slower NCCL: exposed communication and step time regress, compute does not.
    const auto* exposed = find(*c, "exposed_comm");
    const auto* step = find(*c, "step_time");
    const auto* compute = find(*c, "compute");
    QVERIFY(exposed != nullptr && step != nullptr && compute != nullptr);
    QCOMPARE(exposed->d.verdict, analyzer::Verdict::regression);
    QCOMPARE(step->d.verdict, analyzer::Verdict::regression);
    QCOMPARE(compute->d.verdict, analyzer::Verdict::unchanged);
    QVERIFY(c->explained.available);

    VerdictModel m;
    QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
    QCOMPARE(m.rowCount(), 0);
    m.set(c);
    QCOMPARE(m.rowCount(), static_cast<int>(c->metrics.size()));
    // Worst first, in red; the cells are the reports' own text.
    QCOMPARE(text(m, 0, VerdictModel::kVerdict), QString("REGRESSION"));
    QCOMPARE(m.data(m.index(0, VerdictModel::kMetric), Qt::ForegroundRole).value<QColor>(),
             QColor(220, 50, 47));
    const analyzer::MetricText t = analyzer::metric_text(c->metrics[0]);
    QCOMPARE(text(m, 0, VerdictModel::kChange), QString::fromStdString(t.change));
    QCOMPARE(text(m, 0, VerdictModel::kInterval), QString::fromStdString(t.interval));
    QCOMPARE(text(m, 0, VerdictModel::kPAdjusted), QString::fromStdString(t.p_adjusted));
    QCOMPARE(text(m, 0, VerdictModel::kSamples), QString("12/12"));
    QVERIFY(text(m, 0, VerdictModel::kWhy).contains("p "));
    QCOMPARE(text(m, 0, VerdictModel::kVerdict, Qt::ToolTipRole), text(m, 0, VerdictModel::kWhy));
    // Unchanged rows keep the palette's colour.
    for (int r = 0; r < m.rowCount(); ++r) {
      if (c->metrics[static_cast<size_t>(r)].d.verdict == analyzer::Verdict::unchanged)
        QVERIFY(!m.data(m.index(r, 0), Qt::ForegroundRole).isValid());
    }
    const QString summary = comparison_summary(*c);
    QVERIFY(summary.contains("regression: "));
    QVERIFY(summary.contains("Median step time"));
    for (const char* part : {"compute", "exposed communication", "exposed memcpy", "idle", "other"})
      QVERIFY2(summary.contains(part), part);
    m.set(nullptr);
    QCOMPARE(m.rowCount(), 0);
  }

  // The step pattern is the comparison's: without steps (ProfilerStep#N matches none here) the
  // whole-run totals are compared by threshold alone; a new pattern summarizes again.
  void stepPatternDecidesTheSamples() {
    auto a = make_job(300'000);
    auto b = make_job(300'000);
    const std::atomic<bool> cancel{false};
    auto c = compared(*a, *b, "", cancel);
    QVERIFY(c != nullptr);
    QVERIFY(!c->explained.available);
    QVERIFY(find(*c, "step_time") == nullptr);
    const auto* span = find(*c, "span");
    QVERIFY(span != nullptr);
    QVERIFY(span->d.why.find("whole-run total") != std::string::npos);
    QVERIFY(comparison_summary(*c).contains("No steps in A or B"));
    c = compared(*a, *b, "^step", cancel);
    QVERIFY(c != nullptr);
    QCOMPARE(c->baseline_steps, int64_t{12});
    QCOMPARE(c->verdict(), std::string("unchanged"));
    QCOMPARE(c->exit_code(), 0);
    // A pattern that does not compile: a failure that says why, not a cancellation.
    const auto bad = compare_documents(*a, *b, "([", cancel);
    QVERIFY(!bad && !bad.why().cancelled);
    QVERIFY2(bad.error().contains("bad regular expression"), qPrintable(bad.error()));
    // Steps on one side only: the step metrics cannot be decided, and the line says which side.
    auto renamed = make_job(300'000);
    for (auto& r : renamed->trace.ranges) r.name = "iteration";
    c = compared(*a, *renamed, "^step", cancel);
    QVERIFY(c != nullptr);
    QCOMPARE(c->candidate_steps, int64_t{0});
    QVERIFY(comparison_summary(*c).contains("No steps in B"));
    QCOMPARE(c->exit_code(), 3);
    // Issue 24: "No steps in B" stood next to "B: 20 steps" when both sides had steps but the
    // step time was not broken down (c3bench traces); counts are singular for one.
    analyzer::Comparison both;
    both.baseline_steps = 20;
    both.candidate_steps = 20;
    both.ranks_baseline = 1;
    both.ranks_candidate = 2;
    const QString line = comparison_summary(both);
    QVERIFY2(!line.contains("No steps"), qPrintable(line));
    QVERIFY2(line.contains("A: 1 rank, 20 steps") && line.contains("B: 2 ranks, 20 steps"),
             qPrintable(line));
    // Cancelled: no comparison.
    const std::atomic<bool> stop{true};
    auto fresh = make_job(300'000);
    const auto none = compare_documents(*fresh, *b, "^step", stop);
    QVERIFY(!none && none.why().cancelled);
  }

  // Workers comparing the same documents with different step patterns at once (a step edit while
  // a comparison runs) each get a comparison made of one pattern on both sides, never a mix.
  void concurrentComparisonsDoNotMixPatterns() {
    auto a = make_job(300'000);
    auto b = make_job(300'000);
    const std::atomic<bool> cancel{false};
    std::atomic<int> mixed{0}, wrong{0};
    auto worker = [&](const std::string& step, int64_t steps) {
      for (int i = 0; i < 20; ++i) {
        const auto c = compared(*a, *b, step, cancel);
        if (!c) continue;
        if (c->baseline_steps != c->candidate_steps) ++mixed;
        if (c->baseline_steps != steps) ++wrong;
      }
    };
    std::thread t1(worker, "^step", int64_t{12});
    std::thread t2(worker, "", int64_t{0});
    t1.join();
    t2.join();
    QCOMPARE(mixed.load(), 0);
    QCOMPARE(wrong.load(), 0);
  }

  // Runs that cannot be compared (another GPU model) are inconclusive, in amber, with the reason.
  void incomparableRunsAreInconclusive() {
    auto a = make_job(300'000);
    auto b = make_job(300'000);
    for (auto& d : b->trace.devices) d.name = "H200";
    const std::atomic<bool> cancel{false};
    const auto c = compared(*a, *b, "^step", cancel);
    QVERIFY(c != nullptr);
    QCOMPARE(c->exit_code(), 3);
    VerdictModel m;
    m.set(c);
    QVERIFY(m.rowCount() > 0);
    QCOMPARE(text(m, 0, VerdictModel::kVerdict), QString("inconclusive"));
    QCOMPARE(m.data(m.index(0, 0), Qt::ForegroundRole).value<QColor>(), QColor(200, 135, 0));
    QVERIFY(text(m, 0, VerdictModel::kWhy).contains("GPU model"));
    QVERIFY(comparison_summary(*c).contains("not comparable"));
  }
};

QTEST_MAIN(VerdictModelTest)
#include "verdict_model_test.moc"
