// Charts of the c3bench results a trace carries (bench_result rows, analyzer::Trace::bench):
// speedup against message size, slowdowns against the knob the sweep varied, and the
// chunk-count sweep of pipelined schedules. Each chart says whether its numbers are simulated
// (predictions of the node model) or measured on real GPUs, and by which backend.
#pragma once

#include <QStringList>
#include <QWidget>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "c3/analyzer/trace.h"

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QTabWidget;
class QVBoxLayout;

namespace c3::gui {

// The configuration a c3bench case label carries. c3bench writes labels as
// (microbench/core/src/descriptors.cpp, Case::label):
//   "<compute> + <comm>[ [<knobs>]]"
//   compute: "gemm:MxNxK:dtype" | "triad:SIZE" | "fma:Nus" | "-" (none)
//   comm:    "allreduce|allgather|reducescatter|alltoall|sendrecv|dma_d2d|dma_p2p|sm_copy:SIZE"
//            (sm_copy may add ":peer") | "-" (none); SIZE as "64M", "1G", "4096" (powers of 1024)
//   knobs:   space-separated, defaults left out: "prio=comm_high|comm_low",
//            "order=comm_first", "nch=N", "ctas=MIN:MAX", "smpart=P%", "chunks=K"
// e.g. "gemm:8192x8192x8192:bf16 + allreduce:64M [prio=comm_high nch=4 chunks=2]".
struct BenchCase {
  bool parsed = false;                  // the "<compute> + <comm>" shape was recognized
  std::string compute;                  // "gemm:8192x8192x8192:bf16"; empty: no compute op ("-")
  std::string compute_kind;             // "gemm", "triad", "fma"; empty: none
  std::string comm;                     // "allreduce:64M"; empty: no communication op ("-")
  std::string comm_kind;                // "allreduce", "sm_copy", ...; empty: none
  int64_t bytes = 0;                    // the communication's message size; 0: none or unreadable
  bool peer = false;                    // sm_copy into the next GPU
  std::string priority = "equal";       // equal, comm_high, comm_low
  std::string order = "compute_first";  // compute_first, comm_first
  int nchannels = 0;                    // 0: NCCL's choice
  int min_ctas = 0, max_ctas = 0;       // 0: default
  int sm_partition_pct = 0;             // % of SMs for compute (green contexts); 0: off
  int chunks = 0;  // pipelined schedule of k chunks (1: its unsplit baseline); 0: independent
  std::vector<std::string> unknown;  // label pieces not understood (ignored)
};

// Parses a c3bench case label; never throws. Pieces it does not understand are listed in
// `unknown` and otherwise ignored; a label without " + " gives parsed = false (its knobs, if
// any, are still read).
BenchCase parse_bench_label(const std::string& label);

class BenchCharts : public QWidget {
  Q_OBJECT
 public:
  explicit BenchCharts(QWidget* parent = nullptr);
  ~BenchCharts() override;

  // Shows the c3bench results of `trace` (copied: the trace need not outlive the widget);
  // nullptr or a trace without results shows a message instead of charts.
  void set(const c3::analyzer::Trace* trace);

  // The charts currently shown (0 when there are no results) and their titles, in tab order.
  int chart_count() const;
  QStringList chart_titles() const;
  // The knobs the slowdown chart can be drawn against (those the results vary), and the one
  // shown; set_slowdown_knob picks another by its index in slowdown_knobs().
  QStringList slowdown_knobs() const;
  int slowdown_knob() const { return knob_index_; }
  void set_slowdown_knob(int index);
  // The configurations (op pair and message size) the slowdown chart can show when several
  // remain once its knob is chosen (empty when there is one, or when it shows them side by
  // side), and the one shown.
  QStringList slowdown_cases() const;
  int slowdown_case() const { return case_index_; }
  void set_slowdown_case(int index);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void rebuild();
  void show_slowdown_chart();
  QChart* new_chart(const QString& title) const;
  QChartView* new_view(QChart* chart) const;
  QChartView* make_speedup_chart() const;
  QChartView* make_slowdown_chart(int knob, const std::vector<size_t>& rows) const;
  QChartView* make_chunk_chart() const;
  QWidget* text_page(const QString& text) const;

  std::vector<c3::analyzer::BenchResult> results_;
  std::vector<BenchCase> cases_;
  std::vector<int> knobs_;  // slowdown_knobs() as internal knob ids
  int knob_index_ = 0;
  std::vector<std::pair<std::string, int64_t>> slow_cases_;  // (op pair, bytes or 0)
  int case_index_ = 0;

  QLabel* summary_ = nullptr;
  QLabel* empty_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QVBoxLayout* slowdown_layout_ = nullptr;
  QComboBox* knob_box_ = nullptr;
  QLabel* case_label_ = nullptr;
  QComboBox* case_box_ = nullptr;
  QChartView* speedup_view_ = nullptr;
  QChartView* slowdown_view_ = nullptr;
  QChartView* chunk_view_ = nullptr;
  bool rebuilding_ = false;
};

}  // namespace c3::gui
