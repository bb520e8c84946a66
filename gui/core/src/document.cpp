#include "c3/gui/document.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <algorithm>
#include <map>
#include <stdexcept>

#include "c3/analyzer/open/load.h"
#include "c3/analyzer/summary/summary.h"

namespace c3::gui {

QString Document::title() const {
  if (paths.size() == 1) return QFileInfo(paths.front()).fileName();
  QStringList names;
  QString folder = QFileInfo(paths.front()).absolutePath();
  for (const QString& p : paths) {
    const QFileInfo f(p);
    names << f.fileName();
    if (f.absolutePath() != folder) folder.clear();
  }
  constexpr int kShown = 4;
  QString list = names.mid(0, kShown).join(", ");
  if (names.size() > kShown) list += QString(", ... (%1 files)").arg(names.size());
  const QString dir = folder.isEmpty() ? QString() : QFileInfo(folder).fileName();
  return dir.isEmpty() ? list : dir + ": " + list;
}

std::vector<int> rank_order(const analyzer::Trace& t) {
  std::vector<int> order(t.processes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    const auto& px = t.processes[static_cast<size_t>(x)];
    const auto& py = t.processes[static_cast<size_t>(y)];
    if (px.rank.has_value() != py.rank.has_value()) return px.rank.has_value();
    return px.rank && py.rank && *px.rank < *py.rank;
  });
  return order;
}

bool is_simulated(const analyzer::Trace& t) {
  for (const analyzer::Device& d : t.devices) {
    if (d.name.rfind("Simulated ", 0) == 0) return true;
  }
  for (const auto& b : t.bench) {
    if (b.simulated) return true;
  }
  return false;
}

Result<std::unique_ptr<Document>> load_document(
    const QStringList& paths, const std::atomic<bool>& cancel,
    const std::function<void(double, const QString&)>& progress) {
  auto doc = std::make_unique<Document>();
  doc->paths = paths;
  try {
    std::vector<std::string> in;
    for (const QString& p : paths) in.push_back(p.toStdString());
    // The analyzer's open (the same as the CLI's): detection by content, PyTorch and Nsight
    // files converted into temporary traces kept while the document is open, snapshots.
    analyzer::OpenOptions oo;
    oo.cancel = &cancel;
    oo.progress = [&](double f, const std::string& what) {
      progress(0.8 * f, QString::fromStdString(what));
    };
    oo.defer_kernel_shapes = true;
    oo.cache_dir = cache_dir().toStdString();
    const QByteArray min_mb = qgetenv("C3SCOPE_CACHE_MIN_MB");
    oo.cache_min_bytes = min_mb.isEmpty() ? kCacheMinBytes : min_mb.toLongLong() << 20;
    doc->opened = analyzer::open_traces(in, oo);
    doc->trace = std::move(doc->opened.trace);
    doc->process_db = doc->opened.process_db;
    doc->shapes_ready = doc->trace.pending_shapes.empty();
    if (cancel) throw analyzer::Cancelled();
    progress(0.85, "aligning clocks");
    doc->clocks = analyzer::align_clocks(doc->trace);
    progress(0.9, "laying out the timeline");
    doc->timeline = std::make_unique<Timeline>(doc->trace);
    doc->overview = doc->timeline->overview(Document::kOverviewBuckets);
    // As a share of the GPUs: 1 = every GPU busy with that class.
    size_t gpus = 0;
    for (const Row& r : doc->timeline->rows()) gpus += r.kind == RowKind::overlap ? 1 : 0;
    for (auto& b : doc->overview) {
      for (float& v : b) v /= static_cast<float>(std::max<size_t>(gpus, 1));
    }
    progress(1.0, "done");
  } catch (const analyzer::Cancelled&) {
    return cancelled("Loading was cancelled.");
  } catch (const std::exception& e) {
    QString message = QString::fromStdString(e.what());
    if (!message.endsWith('.')) message += '.';
    return failed(message);
  }
  return doc;
}

QString cache_dir() {
  const QByteArray env = qgetenv("C3SCOPE_CACHE_DIR");
  if (env == "off") return {};
  if (!env.isEmpty()) return QString::fromLocal8Bit(env);
  const QString base = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
  return base.isEmpty() ? QString() : QDir(base).filePath("snapshots");
}

bool save_snapshot(const Document& doc) {
  return analyzer::save_snapshot(doc.trace, doc.opened);
}

namespace {

// Reads the kernel shapes the load left pending (once, whichever worker comes first). False
// when cancelled.
bool complete_shapes(Document& doc, const std::atomic<bool>& cancel) {
  if (cancel) return false;
  if (doc.shapes_ready) return true;
  const std::lock_guard<std::mutex> lock(doc.shapes_mutex);
  if (doc.shapes_ready) return true;
  struct Cancelled {};
  analyzer::LoadOptions lo;
  lo.progress = [&](int64_t, int64_t) {
    if (cancel) throw Cancelled{};
  };
  try {
    analyzer::load_kernel_shapes(doc.trace, lo);
  } catch (const Cancelled&) {
    return false;
  }
  doc.shapes_ready = true;
  return true;
}

// The document's rank summaries, as `c3scope compare --step STEP` makes them of the same files
// with its default options otherwise: the cached run when it was made with `step`, else a new
// one. nullptr when cancelled. The run is never changed once made, so a worker comparing with
// it is not disturbed by another that summarizes the document with another step.
std::shared_ptr<const analyzer::JobRun> summarize_document(Document& doc, const std::string& step,
                                                           const std::atomic<bool>& cancel) {
  if (!complete_shapes(doc, cancel)) return nullptr;
  const std::lock_guard<std::mutex> lock(doc.run_mutex);
  if (doc.run && doc.run->made_with.step == step) return doc.run;
  if (cancel) return nullptr;
  auto run = std::make_shared<analyzer::JobRun>();
  run->name = doc.paths.join(' ').toStdString();
  run->made_with.step = step;
  run->ranks = analyzer::summarize(doc.trace, run->made_with);
  doc.run = run;
  return run;
}

}  // namespace

Result<analyzer::Report> analyze_document(Document& doc, const std::atomic<bool>& cancel,
                                          const std::vector<analyzer::WhatIf>& what_ifs) {
  try {
    if (!complete_shapes(doc, cancel)) return cancelled("cancelled");
    analyzer::AnalyzeOptions o;
    o.what_ifs = what_ifs;
    analyzer::Report report = analyzer::analyze_aligned(doc.trace, doc.opened.files.origins, o);
    report.clocks = doc.clocks;
    if (cancel) return cancelled("cancelled");
    return report;
  } catch (const std::exception& e) {
    return failed(QString::fromStdString(e.what()));
  }
}

std::optional<analyzer::Interval> step_window(const Document& doc, int process, int64_t t,
                                              int64_t* index) {
  const auto p = static_cast<size_t>(process);
  if (process < 0 || p >= doc.trace.processes.size()) return std::nullopt;
  if (doc.analyzed && p < doc.report.steps.size() && !doc.report.steps[p].empty()) {
    for (const analyzer::StepSample& s : doc.report.steps[p]) {
      if (t > s.start && t <= s.end) {
        if (index != nullptr) *index = s.index;
        return analyzer::Interval{s.start, s.end};
      }
    }
    return std::nullopt;
  }
  // No steps: the process's span.
  const analyzer::Activities& a = doc.trace.activities;
  int64_t first = INT64_MAX, last = INT64_MIN;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a.process[i] != process) continue;
    first = std::min(first, a.start[i]);
    last = std::max(last, a.end[i]);
  }
  if (first > last) return std::nullopt;
  if (index != nullptr) *index = -1;
  return analyzer::Interval{first, last};
}

Result<std::shared_ptr<const analyzer::Comparison>> compare_documents(
    Document& baseline, Document& candidate, const std::string& step,
    const std::atomic<bool>& cancel) {
  try {
    const std::shared_ptr<const analyzer::JobRun> a = summarize_document(baseline, step, cancel);
    if (!a) return cancelled("cancelled");
    const std::shared_ptr<const analyzer::JobRun> b = summarize_document(candidate, step, cancel);
    if (!b || cancel) return cancelled("cancelled");
    return std::make_shared<const analyzer::Comparison>(
        analyzer::compare(a.get(), *b, analyzer::CompareOptions{}));
  } catch (const std::exception& e) {
    return failed(QString::fromStdString(e.what()));
  }
}

}  // namespace c3::gui
