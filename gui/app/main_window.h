// The main window: the timeline in the middle, the details panel on the right, the analysis
// panels below, the row tree on the left; menus, search bar, recent files, drag and drop.
// Loading and analysis run on a worker thread with a cancellable progress dialog.
#pragma once

#include <QMainWindow>
#include <QStringList>
#include <atomic>
#include <functional>
#include <memory>
#include <optional>

#include "c3/gui/document.h"
#include "c3/gui/models.h"

class QAction;
class QComboBox;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressDialog;
class QTimer;
class QTreeView;

namespace c3::gui {

class TimelineView;
class DetailsPanel;
class AnalysisPanels;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens traces in the background: the timeline appears as soon as they are loaded, the
  // analysis panels when the analysis (also in the background) ends; `done(ok)` runs on the GUI
  // thread then.
  void open(const QStringList& paths, std::function<void(bool)> done = {});
  void compare_with(const QStringList& paths, std::function<void(bool)> done = {});
  // Compares the open document with the one it is compared with again, with the Compare tab's
  // step pattern (on a worker; `done(ok)` on the GUI thread).
  void recompare(std::function<void(bool)> done = {});
  Document* document() const { return doc_.get(); }
  Document* other_document() const { return other_.get(); }  // B of a comparison, or nullptr
  TimelineView* timeline() const { return view_; }
  DetailsPanel* details() const { return details_; }
  AnalysisPanels* panels() const { return panels_; }
  // Errors are shown in a dialog (interactive) or printed (screenshot mode).
  void set_quiet_errors(bool quiet) { quiet_errors_ = quiet; }
  const QString& last_error() const { return last_error_; }
  // Search: applies the name regex, class, stream and kernel-sequence filters (`sequence`: an
  // index into the report's frequent sequences, whose occurrences' kernels are kept; -1 none).
  // The items kept, or none when no filter is set (every item shown); fails when the regex is
  // not valid.
  Result<std::optional<size_t>> apply_filter(const QString& regex, int cls, int stream,
                                             int sequence = -1);
  // Selects Report::sequences[index] in the search bar (-1: any), filtering the timeline to its
  // occurrences; false when there is no such sequence.
  bool select_sequence(int index);
  // The Why tab's what-ifs (analyze --what-if's grammar, one per entry): analyzes the open
  // document again replaying them; fails at once with the one line of a bad entry (nothing
  // changes then). `done(ok)` on the GUI thread when the analysis ends.
  Result<bool> replay_what_ifs(const QStringList& what_ifs, std::function<void(bool)> done = {});
  QAction* path_action() const { return path_action_; }
  QAction* queue_action() const { return queue_action_; }

 protected:
  void closeEvent(QCloseEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

 private:
  void build_menus();
  void build_search_bar();
  void update_recent_menu();
  void add_recent(const QStringList& paths);
  void set_document(std::shared_ptr<Document> doc);
  // Runs the full analysis of the open document on a worker; the panels fill in when it ends.
  void start_analysis(std::function<void(bool)> done);
  void start_load(const QStringList& paths, bool compare, std::function<void(bool)> done);
  void show_error(const QString& message);
  void show_shortcuts();
  void on_filter_changed();
  void on_item_selected(int row, qint64 item);
  void select_collective(size_t c);
  // The search bar's sequence list, from the report's frequent sequences.
  void update_sequences();

  // Shared with the analysis worker, which may outlive the document's time on screen.
  std::shared_ptr<Document> doc_;
  std::shared_ptr<Document> other_;
  std::shared_ptr<std::atomic<bool>> analysis_cancel_;
  std::shared_ptr<std::atomic<bool>> compare_cancel_;
  QLabel* busy_ = nullptr;
  TimelineView* view_ = nullptr;
  DetailsPanel* details_ = nullptr;
  AnalysisPanels* panels_ = nullptr;
  RowsModel rows_model_;
  QTreeView* rows_view_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QLineEdit* search_ = nullptr;
  QComboBox* class_box_ = nullptr;
  QComboBox* stream_box_ = nullptr;
  QComboBox* sequence_box_ = nullptr;
  // The kernels of the selected sequence's occurrences (a flag per activity), and which
  // Report::sequences index they are for (-1: none computed).
  std::vector<uint8_t> sequence_members_;
  int sequence_members_of_ = -1;
  QLabel* match_label_ = nullptr;
  QTimer* filter_timer_ = nullptr;
  QLabel* status_ = nullptr;
  QAction* path_action_ = nullptr;
  QAction* queue_action_ = nullptr;
  std::shared_ptr<std::atomic<bool>> cancel_;
  bool loading_ = false;
  bool quiet_errors_ = false;
  QString last_error_;
};

}  // namespace c3::gui
