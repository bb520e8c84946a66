#include "details.h"

#include <QUrl>
#include <algorithm>
#include <map>
#include <optional>

#include "c3/analyzer/metrics/interference.h"
#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/metrics/metrics.h"
#include "c3/analyzer/metrics/names.h"
#include "c3/analyzer/open/details.h"
#include "c3/gui/format.h"
#include "c3/gui/result.h"

namespace c3::gui {

using analyzer::Class;

namespace {

QString qs(const std::string& s) {
  return QString::fromStdString(s).toHtmlEscaped();
}

// An item's own row in its trace file (analyzer::*_details, which throw when the file cannot be
// read), or why it cannot be read.
template <typename Read>
Result<analyzer::Details> file_row(const Read& read) {
  try {
    return read();
  } catch (const std::exception& ex) {
    return failed(qs(ex.what()));
  }
}

QString html_row(const QString& k, const QString& v) {
  return QString("<tr><td style='color:gray;padding-right:10px'>%1</td><td>%2</td></tr>")
      .arg(k.toHtmlEscaped(), v);
}

class Html {
 public:
  // Rows made by html_row, into the open section.
  void raw(const QString& rows) {
    if (!open_) section(QObject::tr("Fields"));
    s_ += rows;
  }
  void title(const QString& t) { s_ += QString("<h3>%1</h3>").arg(t); }
  void section(const QString& t) {
    close();
    s_ += QString("<p style='margin-top:8px'><b>%1</b></p><table cellspacing='0' cellpadding='2'>")
              .arg(t);
    open_ = true;
  }
  void row(const QString& k, const QString& v) {
    if (!open_) section(QObject::tr("Fields"));
    s_ += html_row(k, v);
  }
  void text(const QString& t) {
    close();
    s_ += QString("<p>%1</p>").arg(t);
  }
  QString done() {
    close();
    return s_;
  }

 private:
  void close() {
    if (open_) s_ += "</table>";
    open_ = false;
  }
  QString s_;
  bool open_ = false;
};

QString dur(int64_t ns) {
  return format_duration(static_cast<double>(ns));
}

// |x ∩ spans of the given kind| for an overlap row (its spans are disjoint and sorted).
int64_t overlap_in(const Timeline& tl, const Row& ov, int64_t s, int64_t e, OverlapKind kind) {
  int64_t sum = 0;
  auto it = std::lower_bound(ov.spans.begin(), ov.spans.end(), s - ov.offset,
                             [](const Row::Span& sp, int64_t t) { return sp.end <= t; });
  for (; it != ov.spans.end() && it->start + ov.offset < e; ++it) {
    if (it->kind != kind) continue;
    sum +=
        std::max<int64_t>(0, std::min(e, it->end + ov.offset) - std::max(s, it->start + ov.offset));
  }
  (void)tl;
  return sum;
}

// The overlap row next to a stream row (same device group), or nullptr.
const Row* overlap_row_of(const Timeline& tl, int row) {
  const Row& r = tl.row(row);
  if (r.parent < 0) return nullptr;
  for (const int c : tl.row(r.parent).children) {
    if (tl.row(c).kind == RowKind::overlap) return &tl.row(c);
  }
  return nullptr;
}

bool is_process_group(const Timeline& tl, int r) {
  const Row& x = tl.row(r);
  return x.kind == RowKind::group && x.process >= 0 && x.parent >= 0 &&
         tl.row(x.parent).process < 0;
}

// The process group row of a row.
int process_row_of(const Timeline& tl, int row) {
  for (int r = row; r >= 0; r = tl.row(r).parent) {
    if (is_process_group(tl, r)) return r;
  }
  return -1;
}

int process_group(const Timeline& tl, int process) {
  for (size_t i = 0; i < tl.rows().size(); ++i) {
    if (tl.rows()[i].process == process && is_process_group(tl, static_cast<int>(i)))
      return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

DetailsPanel::DetailsPanel(QWidget* parent) : QTextBrowser(parent) {
  setOpenLinks(false);
  setOpenExternalLinks(false);
  connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
    const QString s = url.toString();
    if (s.startsWith("act:")) emit activityRequested(s.mid(4).toULongLong());
    if (s.startsWith("coll:")) emit collectiveRequested(s.mid(5).toULongLong());
  });
  show_nothing();
}

void DetailsPanel::set_document(Document* doc) {
  doc_ = doc;
  show_nothing();
}

void DetailsPanel::show_nothing() {
  setHtml(
      tr("<p style='color:gray'>Click an item in the timeline to see its details; drag to "
         "select a time range.</p>"));
}

std::vector<FlowLink> DetailsPanel::show_item(int row, int64_t item) {
  std::vector<FlowLink> links;
  if (doc_ == nullptr || row < 0 || item < 0) {
    show_nothing();
    return links;
  }
  const Timeline& tl = *doc_->timeline;
  const Row& r = tl.row(row);
  const auto k = static_cast<size_t>(item);
  QString html;
  switch (r.kind) {
    case RowKind::stream:
      html = activity_html(r.items[k], row, &links);
      break;
    case RowKind::collectives:
      html = collective_html(r.items[k], &links);
      break;
    case RowKind::nvtx:
      html = range_html(r.items[k]);
      break;
    case RowKind::overlap: {
      Html h;
      const Row::Span& sp = r.spans[k];
      h.title(sp.kind == OverlapKind::hidden ? tr("Hidden communication")
                                             : tr("Exposed communication"));
      h.row(tr("duration"), dur(sp.end - sp.start));
      h.row(tr("start"), dur(sp.start + r.offset - tl.first_ns()));
      h.text(sp.kind == OverlapKind::hidden ? tr("Communication ran while a compute kernel ran on "
                                                 "the same GPU: its time is hidden.")
                                            : tr("Communication ran with no compute kernel on the "
                                                 "same GPU: this time adds to the step."));
      html = h.done();
      break;
    }
    case RowKind::queue: {
      Html h;
      const int64_t s = tl.start(r, k), e = tl.end(r, k);
      h.title(tr("Queue length %1").arg(r.points[k].length));
      h.row(tr("stream"), QString::number(r.key));
      h.row(tr("held for"), dur(e - s));
      h.row(tr("start"), dur(s - tl.first_ns()));
      h.row(tr("stream's longest"), QString::number(r.max_length));
      h.text(tr("Operations whose launch call has returned and that the GPU has not finished. "
                "A queue that stays long means the host runs ahead of the GPU (the GPU is the "
                "bottleneck); one near 0 between kernels means the GPU waits for launches. CUDA "
                "blocks a launch while a stream holds %1 pending operations (drawn in red).")
                 .arg(analyzer::QueueOptions{}.limit));
      html = h.done();
      break;
    }
    case RowKind::group:
      break;
  }
  setHtml(html);
  return links;
}

QString DetailsPanel::path_rows(size_t a) const {
  const analyzer::Trace& t = doc_->trace;
  const int process = t.activities.process[a];
  const void* made = doc_->path.data();
  if (slack_.doc != doc_ || slack_.report != made) {
    slack_ = SlackCache{};
    slack_.doc = doc_;
    slack_.report = made;
    for (const analyzer::PathSegment& seg : doc_->path) {
      if (seg.row >= 0 && seg.part != analyzer::PathPart::host) slack_.on_path.insert(seg.row);
    }
  }
  QString h;
  const auto row = static_cast<int64_t>(a);
  int64_t step = -1;
  const std::optional<analyzer::Interval> w =
      step_window(*doc_, process, t.activities.end[a], &step);
  const QString where = step >= 0 ? tr("step %1").arg(step) : tr("the run");
  if (slack_.on_path.count(row) != 0) {
    h += html_row(tr("on the path"),
                  tr("yes: it makes %1 as long as it is (View > Critical path)").arg(where));
  }
  if (!w) {
    h += html_row(tr("slack"), tr("- (in no step)"));
    return h;
  }
  if (slack_.process != process || slack_.start != w->start || slack_.end != w->end) {
    slack_.gpu.clear();
    slack_.call.clear();
    slack_.process = process;
    slack_.start = w->start;
    slack_.end = w->end;
    for (const analyzer::Slack& sl : analyzer::slack(t, process, *w)) {
      (sl.call ? slack_.call : slack_.gpu)[sl.row] = sl.slack_ns;
    }
  }
  const auto g = slack_.gpu.find(row);
  if (g != slack_.gpu.end()) {
    h += html_row(tr("slack"), g->second == 0
                                   ? tr("0: on this rank's longest path through %1").arg(where)
                                   : tr("%1: it could end that much later without delaying "
                                        "the end of %2 on this rank")
                                         .arg(dur(g->second), where));
  } else {
    h += html_row(tr("slack"), tr("- (it ends outside %1)").arg(where));
  }
  const auto c = slack_.call.find(row);
  if (c != slack_.call.end()) h += html_row(tr("launch call's slack"), dur(c->second));
  return h;
}

QString DetailsPanel::activity_html(size_t a, int row, std::vector<FlowLink>* links) const {
  const analyzer::Trace& t = doc_->trace;
  const analyzer::Activities& acts = t.activities;
  const Timeline& tl = *doc_->timeline;
  const auto p = static_cast<size_t>(acts.process[a]);
  const int64_t off = t.processes[p].offset_ns;
  const int64_t s = acts.start[a], e = acts.end[a], d = e - s;
  Html h;
  h.title(qs(acts.name[a] >= 0 ? t.names[static_cast<size_t>(acts.name[a])] : "?"));
  h.section(tr("Fields"));
  h.row(tr("kind"), analyzer::kind_name(acts.kind[a]));
  h.row(tr("class"), analyzer::class_name(acts.cls[a]));
  h.row(tr("process"), qs(t.processes[p].label()));
  const analyzer::Device* dev = t.device(acts.process[a], acts.device[a]);
  h.row(tr("GPU"), QString::number(acts.device[a]) +
                       (dev != nullptr && !dev->name.empty() ? " (" + qs(dev->name) + ")" : ""));
  h.row(tr("stream"), QString::number(acts.stream[a]));
  h.row(tr("start"),
        dur(s + off - tl.first_ns()) + tr(" into the trace (%1 ns on its clock)").arg(s));
  h.row(tr("duration"), dur(d));
  // The trace file's full row (and the API call that launched it); the in-memory shape when the
  // file does not have the row (once the analysis worker has read the shapes).
  const Result<analyzer::Details> file =
      file_row([&] { return analyzer::activity_details(t, a, doc_->process_db[p]); });
  const analyzer::Details det = file ? *file : analyzer::Details{};
  std::optional<analyzer::KernelShape> shape = det.shape;
  if (!shape && acts.kind[a] == analyzer::Kind::kernel && doc_->shapes_ready) shape = t.shape_of(a);
  if (acts.kind[a] == analyzer::Kind::kernel && !shape) {
    h.row(tr("blocks x threads"), tr("still being read"));
  } else if (acts.kind[a] == analyzer::Kind::kernel) {
    const analyzer::KernelShape& ks = *shape;
    h.row(tr("blocks x threads"), QString("%1 x %2").arg(ks.grid).arg(ks.block));
    if (det.fields.empty()) {
      h.row(tr("registers per thread"), QString::number(ks.registers));
      h.row(tr("shared memory per block"), format_bytes(ks.shared));
    }
    if (dev != nullptr && dev->sm_count > 0) {
      const analyzer::Occupancy o =
          analyzer::occupancy(*dev, ks.grid, ks.block, ks.registers, ks.shared);
      h.row(tr("resident blocks per SM"), QString::number(o.blocks_per_sm));
      h.row(tr("SM demand"), format_pct(100 * o.sm_demand) + tr(" of %1 SMs").arg(dev->sm_count));
    }
  } else {
    h.row(tr("bytes"), format_bytes(static_cast<double>(acts.bytes[a])));
    if (d > 0)
      h.row(tr("bandwidth"),
            format_bandwidth(static_cast<double>(acts.bytes[a]) * 1e9 / static_cast<double>(d)));
  }
  for (const auto& [k, v] : det.fields) h.row(qs(k), qs(v));
  if (!file) h.row(tr("trace file"), tr("not readable: %1").arg(file.error()));
  if (det.api) {
    h.section(tr("Launched by"));
    h.row(tr("API call"), qs(det.api->name));
    h.row(tr("thread"), QString::number(det.api->thread));
    h.row(tr("call"), dur(det.api->start + off - tl.first_ns()) +
                          tr(", took %1").arg(dur(det.api->end - det.api->start)));
    h.row(tr("launch to start"), dur(s - det.api->start));
    const int prow = process_row_of(tl, row);
    if (prow >= 0) links->push_back({prow, det.api->start + off, row, s + off, qs(det.api->name)});
  }
  // The NCCL call behind a communication kernel.
  if (acts.collective[a] >= 0) {
    const auto c = static_cast<size_t>(acts.collective[a]);
    const analyzer::Collective& col = t.collectives[c];
    h.section(tr("Collective"));
    h.row(tr("call"), QString("<a href='coll:%1'>%2</a>").arg(c).arg(qs(col.op)));
    h.row(tr("bytes"), format_bytes(static_cast<double>(col.bytes)));
    h.row(tr("ranks"), QString("%1 (this is rank %2)").arg(col.nranks).arg(col.rank));
    h.row(tr("communicator"), qs(col.comm_id) + QString(" #%1").arg(col.seq));
    const auto [crow, citem] = tl.find_collective(c);
    if (crow >= 0) {
      links->push_back(
          {crow, tl.start(tl.row(crow), static_cast<size_t>(citem)), row, s + off, {}});
    }
  }
  if (doc_->analyzed) {
    h.section(tr("Critical path"));
    h.raw(path_rows(a));
  }
  // Metrics of this item.
  h.section(tr("Metrics"));
  if (const Row* ov = overlap_row_of(tl, row);
      ov != nullptr && d > 0 &&
      (acts.cls[a] == Class::compute || acts.cls[a] == Class::communication)) {
    // hidden spans = communication ∩ compute on this GPU; a kernel of either class overlaps the
    // other class exactly there.
    const int64_t ov_ns = overlap_in(tl, *ov, s + off, e + off, OverlapKind::hidden);
    h.row(acts.cls[a] == Class::compute ? tr("overlapped by communication")
                                        : tr("hidden under compute"),
          format_pct(100.0 * static_cast<double>(ov_ns) / static_cast<double>(d)) +
              QString(" (%1)").arg(dur(ov_ns)));
  }
  // The signature needs the kernel shapes, which the analysis worker reads: only once it is done.
  const std::string sig = doc_->analyzed ? analyzer::interference_signature(t, a) : std::string();
  if (!doc_->analyzed) {
    h.row(tr("vs median alone"), tr("(the analysis is still running)"));
  } else if (!sig.empty()) {
    const auto& rows = doc_->report.interference;
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const analyzer::InterferenceRow& x) { return x.signature == sig; });
    if (it != rows.end() && it->alone > 0 && it->median_alone_ns > 0) {
      const double slow = static_cast<double>(d) / it->median_alone_ns - 1;
      h.row(tr("vs median alone"), QString("%1%2 % (median alone %3 over %4 runs)")
                                       .arg(slow >= 0 ? "+" : "")
                                       .arg(100 * slow, 0, 'f', 1)
                                       .arg(dur(static_cast<int64_t>(it->median_alone_ns)))
                                       .arg(it->alone));
    } else {
      h.row(tr("vs median alone"), tr("never ran alone"));
    }
    if (it != rows.end() && it->enough) {
      h.row(tr("signature slowdown"), QString("%1 % [%2, %3] (%4 alone, %5 overlapped)")
                                          .arg(100 * it->slowdown, 0, 'f', 1)
                                          .arg(100 * it->ci_low, 0, 'f', 1)
                                          .arg(100 * it->ci_high, 0, 'f', 1)
                                          .arg(it->alone)
                                          .arg(it->overlapped));
    }
  }
  if (acts.cls[a] == Class::communication) {
    for (const auto& co : doc_->report.comm) {
      if (co.activity != a) continue;
      const std::string op = analyzer::collective_op(t, a);
      if (acts.collective[a] >= 0 && d > 0) {
        const analyzer::Collective& col = t.collectives[static_cast<size_t>(acts.collective[a])];
        const double size =
            static_cast<double>(analyzer::nccl_tests_size(op, col.bytes, col.nranks));
        const double algbw = size * 1e9 / static_cast<double>(d);
        h.row(tr("algbw / busbw"),
              format_bandwidth(algbw) + " / " +
                  format_bandwidth(algbw * analyzer::busbw_factor(op, col.nranks)));
      }
      break;
    }
  }
  return h.done();
}

QString DetailsPanel::collective_html(size_t c, std::vector<FlowLink>* links) const {
  const analyzer::Trace& t = doc_->trace;
  const Timeline& tl = *doc_->timeline;
  const analyzer::Collective& col = t.collectives[c];
  const auto p = static_cast<size_t>(col.process);
  const int64_t off = t.processes[p].offset_ns;
  Html h;
  h.title(tr("NCCL %1").arg(qs(col.op)));
  h.row(tr("process"), qs(t.processes[p].label()));
  h.row(tr("communicator"), qs(col.comm_id));
  h.row(tr("sequence"), QString::number(col.seq));
  h.row(tr("rank / ranks"), QString("%1 / %2").arg(col.rank).arg(col.nranks));
  h.row(tr("bytes (count x type)"), format_bytes(static_cast<double>(col.bytes)));
  const int64_t d = col.gpu_end - col.gpu_start;
  h.row(tr("GPU time"), dur(d));
  h.row(tr("called on the host"), dur(col.host_start + off - tl.first_ns()));
  h.row(tr("call to GPU start"), dur(col.gpu_start - col.host_start));
  if (d > 0 && col.bytes > 0) {
    const double size =
        static_cast<double>(analyzer::nccl_tests_size(col.op, col.bytes, col.nranks));
    const double algbw = size * 1e9 / static_cast<double>(d);
    h.row(tr("algbw"), format_bandwidth(algbw));
    h.row(tr("busbw"), format_bandwidth(algbw * analyzer::busbw_factor(col.op, col.nranks)));
  }
  const auto [crow, citem] = tl.find_collective(c);
  if (const Result<analyzer::Details> file =
          file_row([&] { return analyzer::collective_details(t, c, doc_->process_db[p]); });
      file) {
    const analyzer::Details& det = *file;
    for (const auto& [k, v] : det.fields) h.row(qs(k), qs(v));
    if (det.host_call && crow >= 0) {
      h.row(tr("host thread"), QString::number(det.host_call->thread));
      h.row(tr("enqueue took"), dur(det.host_call->end - det.host_call->start));
      const int prow = process_group(tl, col.process);
      if (prow >= 0)
        links->push_back(
            {prow, det.host_call->start + off, crow, col.gpu_start + off, qs(det.host_call->name)});
    }
  } else {
    h.row(tr("trace file"), tr("not readable: %1").arg(file.error()));
  }
  // Its GPU work: kernels (and copies) linked to the call.
  h.section(tr("Linked GPU work"));
  const analyzer::Activities& acts = t.activities;
  int shown = 0;
  for (size_t a = 0; a < acts.size(); ++a) {
    if (acts.collective[a] != static_cast<int32_t>(c)) continue;
    if (shown < 16) {
      h.row(tr("kernel"),
            QString("<a href='act:%1'>%2</a> (%3)")
                .arg(a)
                .arg(qs(acts.name[a] >= 0 ? t.names[static_cast<size_t>(acts.name[a])] : "?"))
                .arg(dur(acts.end[a] - acts.start[a])));
      const auto [krow, kitem] = tl.find_activity(a);
      if (crow >= 0 && krow >= 0) {
        links->push_back({crow, col.gpu_start + off, krow, acts.start[a] + off, {}});
      }
    }
    ++shown;
  }
  if (shown == 0) h.row(tr("kernel"), tr("none linked"));
  if (shown > 16) h.row(tr("more"), tr("%1 more").arg(shown - 16));
  return h.done();
}

QString DetailsPanel::range_html(size_t g) const {
  const analyzer::Trace& t = doc_->trace;
  const analyzer::Range& rg = t.ranges[g];
  const Timeline& tl = *doc_->timeline;
  const auto p = static_cast<size_t>(rg.process);
  const int64_t off = t.processes[p].offset_ns;
  Html h;
  h.title(qs(rg.name));
  h.row(tr("domain"), qs(rg.domain));
  h.row(tr("process"), qs(t.processes[p].label()));
  h.row(tr("thread"), QString::number(rg.thread));
  if (rg.start_end) {
    h.row(tr("kind"), tr("start/end range (may overlap others of its thread)"));
  } else {
    h.row(tr("depth"), QString::number(rg.depth));
  }
  h.row(tr("start"), dur(rg.start + off - tl.first_ns()));
  h.row(tr("duration"), dur(rg.end - rg.start));
  if (const Result<analyzer::Details> file =
          file_row([&] { return analyzer::range_details(t, g, doc_->process_db[p]); });
      file) {
    for (const auto& [k, v] : file->fields) h.row(qs(k), qs(v));
  } else {
    h.row(tr("trace file"), tr("not readable: %1").arg(file.error()));
  }
  QString s = h.done();
  s += range_summary_html(*doc_, rg.start + off, rg.end + off);
  return s;
}

void DetailsPanel::show_range(int64_t t0, int64_t t1) {
  if (doc_ == nullptr) return;
  Html h;
  h.title(tr("Time range"));
  h.row(tr("from"), dur(t0 - doc_->timeline->first_ns()));
  h.row(tr("to"), dur(t1 - doc_->timeline->first_ns()));
  h.row(tr("length"), dur(t1 - t0));
  setHtml(h.done() + range_summary_html(*doc_, t0, t1));
}

QString range_summary_html(const Document& doc, int64_t t0, int64_t t1) {
  const analyzer::Trace& t = doc.trace;
  Html h;
  // Per process: the analyzer's breakdown restricted to the window (on that process's clock).
  h.section(QObject::tr("In this range"));
  analyzer::Breakdown all;
  std::vector<analyzer::Breakdown> per(t.processes.size());
  for (size_t p = 0; p < t.processes.size(); ++p) {
    const int64_t off = t.processes[p].offset_ns;
    const analyzer::Intervals window{{t0 - off, t1 - off}};
    per[p] = analyzer::breakdown(t, {static_cast<int>(p), -1}, &window);
    // Over the selection, as analyze --range measures: idle is what GPU work leaves of it.
    analyzer::span_over(per[p], window);
    all.add(per[p]);
  }
  h.row(QObject::tr("overlap"),
        all.comm() > 0 ? format_pct(all.overlap_pct) + QObject::tr(" of communication hidden")
                       : QObject::tr("- (no communication)"));
  h.row(QObject::tr("exposed communication"), dur(all.exposed_comm));
  h.row(QObject::tr("compute"), dur(all.compute()));
  h.row(QObject::tr("communication"), dur(all.comm()));
  h.row(QObject::tr("memory"), dur(all.memory()));
  h.row(QObject::tr("idle"), dur(all.idle));
  if (t.processes.size() > 1) {
    h.section(QObject::tr("Per process"));
    for (const int i : rank_order(t)) {
      const auto p = static_cast<size_t>(i);
      h.row(qs(t.processes[p].label()), QObject::tr("overlap %1, exposed comm %2, idle %3")
                                            .arg(format_overlap(per[p].overlap_pct, per[p].comm()),
                                                 dur(per[p].exposed_comm), dur(per[p].idle)));
    }
  }
  // Top kernels and collectives by time inside the range.
  std::map<int32_t, std::pair<int64_t, int64_t>> kernels;    // name -> time, count
  std::map<std::string, std::pair<int64_t, int64_t>> colls;  // op -> time, count
  const analyzer::Activities& a = t.activities;
  for (size_t i = 0; i < a.size(); ++i) {
    const int64_t off = t.processes[static_cast<size_t>(a.process[i])].offset_ns;
    const int64_t s = std::max(a.start[i] + off, t0), e = std::min(a.end[i] + off, t1);
    if (e <= s && !(a.start[i] == a.end[i] && a.start[i] + off >= t0 && a.start[i] + off < t1))
      continue;
    if (a.cls[i] == Class::communication) {
      auto& x = colls[analyzer::collective_op(t, i)];
      x.first += e - s;
      ++x.second;
    } else if (a.kind[i] == analyzer::Kind::kernel) {
      auto& x = kernels[a.name[i]];
      x.first += e - s;
      ++x.second;
    }
  }
  auto top = [&](auto& m, const QString& title, auto name_of) {
    std::vector<std::pair<int64_t, std::string>> v;
    v.reserve(m.size());
    for (const auto& [k, x] : m)
      v.emplace_back(x.first, name_of(k) + " \x1f" + std::to_string(x.second));
    std::sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    h.section(title);
    if (v.empty()) h.row(QObject::tr("none"), "");
    // Names as Nsight shortens them (a templated name would wrap over many lines), told apart
    // where they would read the same, cut in the middle beyond 60 characters.
    std::vector<std::string> names;
    for (size_t i = 0; i < v.size() && i < 8; ++i)
      names.push_back(v[i].second.substr(0, v[i].second.rfind('\x1f') - 1));
    names = analyzer::distinct_short_names(names);
    for (size_t i = 0; i < v.size() && i < 8; ++i) {
      const auto sep = v[i].second.rfind('\x1f');
      h.row(QString::fromStdString(analyzer::elide_middle(names[i], 60)),
            QObject::tr("%1 (%2 instances)")
                .arg(dur(v[i].first), QString::fromStdString(v[i].second.substr(sep + 1))));
    }
  };
  top(kernels, QObject::tr("Top kernels"),
      [&](int32_t n) { return n >= 0 ? t.names[static_cast<size_t>(n)] : std::string("?"); });
  top(colls, QObject::tr("Top collectives"), [](const std::string& op) { return op; });
  return h.done();
}

}  // namespace c3::gui
