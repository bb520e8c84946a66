// The details panel: every field of the selected item (read through the analyzer, including the
// trace file's full row), its linked items as clickable links, and its metrics (overlap %,
// slowdown against its signature's median alone; on the critical path or its slack); or, for a time
// range, that range's overlap %, exposed communication, top kernels and collectives.
#pragma once

#include <QTextBrowser>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "c3/gui/document.h"
#include "timeline_view.h"

namespace c3::gui {

class DetailsPanel : public QTextBrowser {
  Q_OBJECT
 public:
  explicit DetailsPanel(QWidget* parent = nullptr);
  void set_document(Document* doc);
  // Shows row item `item` and returns the flow arrows to draw for it.
  std::vector<FlowLink> show_item(int row, int64_t item);
  void show_range(int64_t t0, int64_t t1);
  void show_nothing();

 signals:
  // A link in the panel was clicked: an activity (kernel, copy) or a collective call.
  void activityRequested(qulonglong activity);
  void collectiveRequested(qulonglong collective);

 private:
  QString activity_html(size_t a, int row, std::vector<FlowLink>* links) const;
  QString collective_html(size_t c, std::vector<FlowLink>* links) const;
  QString range_html(size_t g) const;
  // The critical path's rows for the details: activity `a` on a step's path, or its slack in its
  // step (analyzer::slack, computed for the step of the activity shown and kept while the next
  // activity shown is in the same step).
  QString path_rows(size_t a) const;
  Document* doc_ = nullptr;
  struct SlackCache {
    const Document* doc = nullptr;
    const void* report = nullptr;  // the analysis it was made for (Document::path's data)
    int process = -1;
    int64_t start = 0, end = 0;
    std::unordered_map<int64_t, int64_t> gpu, call;  // row -> slack (ns)
    std::unordered_set<int64_t> on_path;             // rows on a step's path
  };
  mutable SlackCache slack_;
};

// The HTML of a time range's summary (also used by tests and the screenshot mode).
QString range_summary_html(const Document& doc, int64_t t0, int64_t t1);

}  // namespace c3::gui
