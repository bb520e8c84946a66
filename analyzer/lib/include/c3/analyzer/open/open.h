// Opening what a user has (docs/architecture.md "The analysis pipeline", step 1):
// c3scope traces, folders of them, PyTorch profiler (Kineto) JSON (plain or gzip), Nsight
// Systems SQLite exports and rank summaries (summary.h), mixed, detected by content. PyTorch and
// Nsight files are converted into temporary c3scope traces that live as long as what opened
// them; snapshots (cache.h), progress and cancellation live here too. The CLI (analyze, export,
// info), the GUI and everything after them open traces through this header only.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

enum class InputFormat { c3scope, kineto, nsys, summary };
const char* input_format_name(InputFormat f);

struct Input {
  std::string path;
  InputFormat format = InputFormat::c3scope;
};

// Thrown when OpenOptions::cancel became true (or a progress callback threw it).
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("cancelled") {}
};

struct OpenOptions {
  Rules rules = Rules::defaults();
  std::string rules_tag = "default";  // names `rules` in snapshot keys
  bool hta_rounding = false;          // importer option for Kineto files (docs/analyze.md)
  bool salvage = false;  // importer option: keep what precedes damage in a compressed file
  // (fraction done 0..1, what is happening); called often enough for a progress bar.
  std::function<void(double, const std::string&)> progress;
  const std::atomic<bool>* cancel = nullptr;  // polled; true: throw Cancelled
  bool defer_kernel_shapes = false;           // LoadOptions::defer_kernel_shapes
  bool launch_calls = true;                   // LoadOptions::launch_calls; imports' API calls
  // The inputs are read once and dropped (the pipeline's map): PyTorch (Kineto) files and Nsight
  // Systems exports go straight into the Trace with no database in between (no Process has a
  // database then: process_db is empty for them). Off (the GUI, export, info): complete, indexed
  // conversions.
  bool read_once = false;
  // Snapshots (cache.h): a folder, or empty for none; trace sets smaller than cache_min_bytes
  // load fast enough without one. Converted (imported) inputs are never snapshotted.
  std::string cache_dir;
  int64_t cache_min_bytes = int64_t{48} << 20;
};

// Expands folders and detects each file's format by content, not by name. A folder gives its
// regular files that are traces, sorted by name; c3scope's own outputs there (summaries,
// reports, Perfetto exports: written next to the traces by an earlier run) are not traces and
// are skipped, with one note per folder; a folder holding no trace gives its summaries (a
// folder of summaries). A file given twice (by two names, through a link, or inside a folder
// also given) is read once, with a note. `notes` (when given) gets those one-line notes.
// Throws std::invalid_argument naming a path that does not exist, a file that is neither a
// trace nor a summary (with what it looked like), or a folder holding none.
std::vector<Input> resolve_inputs(const std::vector<std::string>& paths,
                                  std::vector<std::string>* notes = nullptr);

// A folder of temporary conversions, removed with its last owner, and by a signal where
// tracedb::install_output_cleanup() is installed (registered as a temporary).
class TempDir {
 public:
  TempDir();  // throws std::runtime_error when no temporary folder can be made
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Makes SIGINT, SIGTERM and SIGHUP remove the temporary conversions (and every other registered
// temporary) before the process dies of the signal (tracedb::install_output_cleanup): for
// programs that open traces without writing outputs of their own (the GUI).
void remove_temporaries_on_signals();

// c3scope trace databases for inputs: each c3scope trace as it is, each PyTorch or Nsight file
// converted (importer) into `temp`. Summaries are refused (std::invalid_argument: they hold no
// activities). Throws std::invalid_argument for an input the importer rejects.
struct TraceFiles {
  std::vector<std::string> files;    // databases, in input order
  std::vector<std::string> origins;  // what the user gave for each
  std::shared_ptr<TempDir> temp;     // set when something was converted
  // Input events the importer could not use (a damaged or truncated file), with the first:
  // open_traces adds them to Trace::skipped, so the report says so.
  int64_t malformed = 0;
  std::string first_malformed;
};
TraceFiles convert_inputs(const std::vector<Input>& inputs, const OpenOptions& o);

// Everything the inputs hold, loaded (load.h) into one Trace; Process::source names what the
// user opened.
struct OpenedTraces {
  Trace trace;
  TraceFiles files;
  // Per process: the database its rows are in (details.h); empty when read straight from a file.
  std::vector<std::string> process_db;
  std::string cache_key, cache_path;  // set when a snapshot applies
  bool from_cache = false;
};
// Throws std::invalid_argument (bad input), std::runtime_error (a trace that cannot be read:
// one line naming the file) or Cancelled.
OpenedTraces open_traces(const std::vector<std::string>& paths, const OpenOptions& o);
OpenedTraces open_traces(const std::vector<Input>& inputs, const OpenOptions& o);
// Writes the snapshot of `trace` (what `opened` opened, possibly moved out of it) when one
// applies and it did not come from one. False when none was written.
bool save_snapshot(const Trace& trace, const OpenedTraces& opened);

}  // namespace c3::analyzer
