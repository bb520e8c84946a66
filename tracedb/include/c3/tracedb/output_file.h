// The one policy for every file the tools write (reports, exports, imported traces, c3bench
// results; docs/outputs.md):
//   - an output never names one of the command's inputs (compared by device and inode);
//   - an existing regular file is replaced only with --force, as `nsys --force-overwrite`;
//   - a folder, a block device or a socket is refused; a character device, a pipe or the
//     command's standard output is written in place (never renamed over), or refused where the
//     output must be a database;
//   - bytes go to a short hidden temporary name in the output's folder and are moved into place
//     only when complete, so a failed or interrupted run leaves nothing half-written, and a
//     long output name still fits the file system's 255-byte limit;
//   - SIGINT/SIGTERM/SIGHUP remove the temporaries (install_output_cleanup()).
#pragma once

#include <atomic>
#include <cstdio>
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

// The one-line text of a path for messages: control characters (a newline in a file name) are
// escaped so an error stays on one line.
std::string printable(std::string_view text);

// Why `path` cannot be read as an input file ("" when it can): not there, a folder, or a FIFO,
// device or socket (opening a FIFO would wait for a writer forever; a device never ends).
std::string input_file_problem(const std::string& path);

// An output file (text or binary) written through a temporary.
class OutputFile {
 public:
  // Checks the path and opens the temporary (or the device); throws OutputError.
  OutputFile(std::string flag, std::string path, const OutputRules& rules);
  ~OutputFile();  // an uncommitted temporary is removed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Appends bytes. A write error (full disk, a file size limit) is remembered and reported by
  // commit(), so callers need not check every call.
  void write(std::string_view bytes);
  FILE* stream() { return f_; }  // for writers that print (fprintf), with the same rules
  // Flushes, checks for write errors and moves the file into place; throws OutputError (the
  // temporary is removed first).
  void commit();
  const std::string& path() const { return path_; }
  // The output is the command's standard output (/dev/stdout, or a name of what it is
  // redirected to): status lines belong on stderr then.
  bool to_stdout() const { return to_stdout_; }

 private:
  std::string flag_, path_, target_, tmp_;
  OutputKind kind_ = OutputKind::create;
  bool to_stdout_ = false;
  FILE* f_ = nullptr;
  int err_ = 0;  // errno of the first failed write
  bool committed_ = false;
};

// A database output: the caller creates the database at temp() and calls commit(), which moves
// it (and nothing else) into place. The temporary's journal files go with it on failure.
class OutputPath {
 public:
  OutputPath(std::string flag, std::string path, OutputRules rules);  // throws OutputError
  ~OutputPath();
  OutputPath(const OutputPath&) = delete;
  OutputPath& operator=(const OutputPath&) = delete;

  const std::string& temp() const { return tmp_; }
  void commit();  // throws OutputError
  const std::string& path() const { return path_; }

 private:
  std::string flag_, path_, target_, tmp_;
  OutputKind kind_ = OutputKind::create;
  bool committed_ = false;
};

// Whether `path` names the command's standard output (/dev/stdout, or the file or pipe it is
// redirected to): a command that writes a file there keeps its own messages off stdout.
bool is_stdout(const std::string& path);

// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove every live temporary (and its
// -journal, -wal and -shm) before the process dies of the signal. With `cancel`, the first signal
// only sets it (the command stops at its next check and cleans up itself) and a second one
// removes and dies. Returns `cancel`.
std::atomic<bool>* install_output_cleanup(std::atomic<bool>* cancel = nullptr);
// Whether the cancel flag given to install_output_cleanup() is set (a first signal came): long
// work that cannot poll the flag itself (an SQLite statement, harden.h) stops on it.
bool cancel_requested();

// Registers / forgets a temporary path for that cleanup (OutputFile and OutputPath do this; so
// may other code that writes temporaries, e.g. a conversion's scratch trace).
void register_temporary(const std::string& path);
void forget_temporary(const std::string& path);

}  // namespace c3::tracedb
