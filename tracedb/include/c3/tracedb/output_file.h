// The one policy for every file the tools write (reports, exports, imported traces, c3bench
// results; docs/outputs.md):
//   - an output never names one of the command's inputs (compared by device and inode);
//   - an existing regular file is replaced only with --force, as `nsys --force-overwrite`;
//   - a folder, a block device or a socket is refused; a character device, a pipe or the
//     command's standard output (also through /dev/stdout, /dev/fd/N or a shell's >(...), links
//     to a pipe that no path names) is written in place (never renamed over), or refused where
//     the output must be a database;
//   - several outputs of one command are one unit (OutputSet): two naming one file are refused,
//     and none is moved into place unless all are complete;
//   - bytes go to a short hidden temporary name in the output's folder and are moved into place
//     only when complete, so a failed or interrupted run leaves nothing half-written, and a
//     long output name still fits the file system's 255-byte limit;
//   - SIGINT/SIGTERM/SIGHUP remove the temporaries (install_output_cleanup()).
#pragma once

#include <atomic>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace c3::tracedb {

// What went wrong with an output, in one line naming the flag and the path and what to do.
class OutputError : public std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct OutputRules {
  bool force = false;               // --force: an existing regular file is replaced
  std::vector<std::string> inputs;  // the command's inputs: never written over
  bool database = false;            // a SQLite output: must be a regular file
};

// How an output will be written once check_output() accepted it.
enum class OutputKind {
  create,    // nothing there yet: the temporary is linked into place
  replace,   // an existing regular file, with --force: the temporary is renamed over it
  in_place,  // a device, pipe or socket: written directly
};

// Checks `path` (named by `flag`, e.g. "--json" or "-o") against the rules; throws OutputError.
// A symbolic link is followed: its target is what gets written.
OutputKind check_output(const std::string& flag, const std::string& path, const OutputRules& rules);

// The one-line text of a path, name or message from untrusted input, safe to show in a terminal:
// control characters (a newline in a file name, ESC, C1 controls) become \n, \t or \xNN, bytes
// that are not UTF-8 \xNN, and bidirectional controls (U+202E ...) and line separators \uNNNN;
// other UTF-8 text is kept.
std::string printable(std::string_view text);

// Why `path` cannot be read as an input file ("" when it can): not there, a folder, or a FIFO,
// device or socket (opening a FIFO would wait for a writer forever; a device never ends).
std::string input_file_problem(const std::string& path);

// What OutputFile and OutputPath share: the flag and path the user gave, what is written there
// and how (OutputSet commits several as one unit).
class Output {
 public:
  virtual ~Output() = default;
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;
  const std::string& flag() const { return flag_; }
  const std::string& path() const { return path_; }
  OutputKind kind() const { return kind_; }

 protected:
  Output(std::string flag, std::string path) : flag_(std::move(flag)), path_(std::move(path)) {}
  // Makes the bytes at the temporary (or the device) complete; throws OutputError (the
  // temporary is removed first).
  virtual void finish() = 0;
  // Removes the temporary (and what goes with it).
  virtual void drop() = 0;
  void move();  // into place (after finish()); throws OutputError
  std::string flag_, path_, target_, tmp_;
  OutputKind kind_ = OutputKind::create;
  bool committed_ = false;
  friend class OutputSet;
};

// An output file (text or binary) written through a temporary.
class OutputFile : public Output {
 public:
  // Checks the path and opens the temporary (or the device); throws OutputError.
  OutputFile(std::string flag, std::string path, const OutputRules& rules);
  ~OutputFile() override;  // an uncommitted temporary is removed

  // Appends bytes. A write error (full disk, a file size limit) is remembered and reported by
  // commit(), so callers need not check every call.
  void write(std::string_view bytes);
  FILE* stream() { return f_; }  // for writers that print (fprintf), with the same rules
  // Flushes, checks for write errors and moves the file into place; throws OutputError (the
  // temporary is removed first).
  void commit();
  // The output is the command's standard output (/dev/stdout, or a name of what it is
  // redirected to): status lines belong on stderr then.
  bool to_stdout() const { return to_stdout_; }

 private:
  void finish() override;
  void drop() override;
  bool to_stdout_ = false;
  bool finished_ = false;
  FILE* f_ = nullptr;
  int err_ = 0;  // errno of the first failed write
};

// A database output: the caller creates the database at temp() and calls commit(), which moves
// it (and nothing else) into place. The temporary's journal files go with it on failure.
class OutputPath : public Output {
 public:
  OutputPath(std::string flag, std::string path, OutputRules rules);  // throws OutputError
  ~OutputPath() override;

  const std::string& temp() const { return tmp_; }
  void commit();  // throws OutputError

 private:
  void finish() override;
  void drop() override;
};

// What a command's outputs are: the flag ("--json") and the path given (empty: not given), and
// whether it is a database.
struct OutputSpec {
  std::string flag, path;
  bool database = false;
};

// The outputs of one command, written as one unit: refused together before any work when two
// flags name the same file (one would silently replace the other), and moved into place only
// when every one of them is complete; when one fails, every output path is left as it was
// (an existing file replaced with --force is kept under a hidden link until all are in place,
// and put back). A device or pipe written in place has received its bytes as they were
// written and cannot be taken back. Errors: OutputError, the first problem only.
class OutputSet {
 public:
  // Checks that no two outputs name the same file, then opens each (check_output's rules);
  // throws OutputError. Specs with an empty path are skipped.
  OutputSet(const std::vector<OutputSpec>& specs, const OutputRules& rules);
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  // The output opened for `flag`, null when that flag named no path.
  OutputFile* file(std::string_view flag);
  OutputPath* database(std::string_view flag);
  // Any output is the command's standard output (its text report then stays off stdout).
  bool to_stdout() const;
  // Completes every output, then moves them all into place; on a failure nothing is moved
  // (what was moved is moved back) and OutputError says the first problem.
  void commit();

 private:
  std::vector<std::unique_ptr<Output>> outs_;
};

// Throws OutputError naming both flags when two of `specs` (empty paths skipped) name the same
// file: the same device and inode where it exists (through any link or relative path), the
// same resolved path where it does not yet. A character device (/dev/null) may be named twice.
void check_distinct(const std::vector<OutputSpec>& specs);

// Whether `path` names the command's standard output (/dev/stdout, or the file or pipe it is
// redirected to): a command that writes a file there keeps its own messages off stdout.
bool is_stdout(const std::string& path);

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove every live temporary (and its
// -journal, -wal and -shm) before the process dies of the signal. With `cancel`, the first signal
// only sets it (the command stops at its next check and cleans up itself) and a second one
// removes and dies. SIGXFSZ and SIGPIPE are ignored, so a file size limit or a reader that went
// away is a write error (exit 2, temporaries removed). Returns `cancel`.
std::atomic<bool>* install_output_cleanup(std::atomic<bool>* cancel = nullptr);
// Whether the cancel flag given to install_output_cleanup() is set (a first signal came): long
// work that cannot poll the flag itself (an SQLite statement, harden.h) stops on it.
bool cancel_requested();

// Registers / forgets a temporary path for that cleanup (OutputFile and OutputPath do this; so
// may other code that writes temporaries, e.g. a conversion's scratch trace). A `folder` (the
// temporary folder of the conversions that open a PyTorch or Nsight file) is removed with the
// files in it (one level).
void register_temporary(const std::string& path, bool folder = false);
void forget_temporary(const std::string& path);

}  // namespace c3::tracedb
