#include "c3/gui/document.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <algorithm>
#include <map>
#include <stdexcept>

#include "c3/analyzer/cache.h"
#include "c3/analyzer/load.h"
#include "c3/importer/importer.h"
#include "c3/tracedb/reader.h"

namespace c3::gui {
namespace {
struct Cancelled {};
}  // namespace

QString Document::title() const {
  if (paths.size() == 1) return QFileInfo(paths.front()).fileName();
  return QString("%1 traces").arg(paths.size());
}

std::unique_ptr<Document> load_document(const QStringList& paths, const std::atomic<bool>& cancel,
                                        const std::function<void(double, const QString&)>& progress,
                                        LoadError* error) {
  auto doc = std::make_unique<Document>();
  doc->paths = paths;
  doc->imported = std::make_unique<QTemporaryDir>();
  QTemporaryDir& tmp = *doc->imported;
  try {
    std::vector<std::string> files;
    std::map<std::string, std::string> origin;  // imported file -> what the user opened
    for (const QString& p : paths) {
      const std::vector<std::string> expanded = analyzer::expand_inputs({p.toStdString()});
      for (const std::string& f : expanded) {
        std::string why;
        const importer::Format fmt = importer::detect(f, &why);
        if (fmt == importer::Format::unknown) {
          error->message = QString("'%1' is not a trace: %2.")
                               .arg(QString::fromStdString(f), QString::fromStdString(why));
          return nullptr;
        }
        bool ours = false;
        if (fmt == importer::Format::nsys) {
          // An SQLite file: a c3scope trace, or an Nsight Systems export to import.
          try {
            ours = tracedb::Reader::open(f)->has_table("gpu_activity");
          } catch (const tracedb::ReadError& e) {
            // Not ours: maybe an Nsight export. A damaged or too-new c3scope trace says so.
            if (e.kind() != tracedb::ReadError::Kind::not_c3scope) {
              error->message = QString::fromStdString(e.what());
              if (!error->message.endsWith('.')) error->message += '.';
              return nullptr;
            }
          }
        }
        if (ours) {
          files.push_back(f);
          continue;
        }
        progress(0.0, QString("importing %1").arg(QString::fromStdString(f)));
        const std::string out =
            tmp.filePath(QString("import-%1.sqlite").arg(files.size())).toStdString();
        importer::import_files({f}, out, {}, [&](int64_t done, int64_t total) {
          if (cancel) throw Cancelled{};
          if (total > 0) {
            progress(0.3 * static_cast<double>(done) / static_cast<double>(total),
                     QString("importing %1").arg(QFileInfo(QString::fromStdString(f)).fileName()));
          }
        });
        origin[out] = f;
        files.push_back(out);
      }
    }
    analyzer::LoadOptions lo;
    lo.progress = [&](int64_t done, int64_t total) {
      if (cancel) throw Cancelled{};
      progress(total > 0 ? 0.3 + 0.5 * static_cast<double>(done) / static_cast<double>(total) : 0.3,
               "loading");
    };
    // A snapshot of the same files skips SQLite decoding (imported traces are not cached: their
    // temporary files change name every time).
    int64_t bytes = 0;
    for (const auto& f : files)
      bytes += static_cast<int64_t>(QFileInfo(QString::fromStdString(f)).size());
    const QString dir = cache_dir();
    const QByteArray min_mb = qgetenv("C3SCOPE_CACHE_MIN_MB");
    const int64_t min_bytes = min_mb.isEmpty() ? kCacheMinBytes : min_mb.toLongLong() << 20;
    if (!dir.isEmpty() && origin.empty() && bytes >= min_bytes) {
      doc->cache_key = analyzer::cache_key(files, "default");
      doc->cache_path = analyzer::cache_path(dir.toStdString(), doc->cache_key);
      progress(0.1, "reading the snapshot");
      if (auto cached = analyzer::load_cache(doc->cache_path, doc->cache_key)) {
        doc->trace = std::move(*cached);
        doc->from_cache = true;
      }
    }
    if (!doc->from_cache) {
      lo.defer_kernel_shapes = true;
      doc->trace = analyzer::load(files, lo);
      doc->shapes_ready = doc->trace.pending_shapes.empty();
    }
    doc->process_db.reserve(doc->trace.processes.size());
    for (auto& p : doc->trace.processes) {
      doc->process_db.push_back(p.source);
      auto it = origin.find(p.source);
      if (it != origin.end()) p.source = it->second;
    }
    if (cancel) throw Cancelled{};
    progress(0.85, "aligning clocks");
    doc->clocks = analyzer::align_clocks(doc->trace);
    doc->files = files;
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
  } catch (const Cancelled&) {
    error->message = "Loading was cancelled.";
    return nullptr;
  } catch (const std::exception& e) {
    error->message = QString::fromStdString(e.what());
    if (!error->message.endsWith('.')) error->message += '.';
    return nullptr;
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
  if (doc.cache_path.empty() || doc.from_cache) return false;
  return analyzer::save_cache(doc.trace, doc.cache_key, doc.cache_path);
}

bool analyze_document(Document& doc, const std::atomic<bool>& cancel, analyzer::Report* out) {
  if (cancel) return false;
  if (!doc.shapes_ready) {
    const std::lock_guard<std::mutex> lock(doc.shapes_mutex);
    if (!doc.shapes_ready) {
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
    }
  }
  *out = analyzer::analyze_aligned(doc.trace, doc.files, {});
  out->clocks = doc.clocks;
  return !cancel;
}

}  // namespace c3::gui
