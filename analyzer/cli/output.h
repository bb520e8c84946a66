// The outputs of a command (--json, --md, -o, ...), under the one policy every writer follows
// (tracedb/output_file.h, docs/outputs.md): never over an input, an existing file only with
// --force, written under a temporary name and moved into place at the end.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "c3/tracedb/output_file.h"
#include "commands.h"

namespace c3::cli {

// Makes Ctrl-C and SIGTERM set the returned flag (the pipeline's cancel: the map stops at its
// next check and the command removes its temporary files and partial outputs on the way out);
// a second signal removes the temporaries and ends the process at once.
inline std::atomic<bool>* stop_on_signals() {
  static std::atomic<bool> interrupted{false};
  return tracedb::install_output_cleanup(&interrupted);
}

// --force, the same for every command that writes files.
inline void add_force_flag(CLI::App* cmd, bool& force) {
  cmd->add_flag("--force", force,
                "Replace output files that exist (never an input of the command; docs/outputs.md)");
}

// Opens an output before any work, so a refused path fails at once: prints the error line and
// returns null when the policy refuses it.
inline std::unique_ptr<tracedb::OutputFile> open_output(const std::string& command,
                                                        const std::string& flag,
                                                        const std::string& path,
                                                        const tracedb::OutputRules& rules) {
  try {
    return std::make_unique<tracedb::OutputFile>(flag, path, rules);
  } catch (const tracedb::OutputError& e) {
    error_line(command + ": " + e.what());
    return nullptr;
  }
}

// Opens the outputs of a command as one unit (tracedb::OutputSet: two flags naming one file are
// refused; all are moved into place together) before any work: prints the error line and
// returns null when one is refused.
inline std::unique_ptr<tracedb::OutputSet> open_outputs(
    const std::string& command, const std::vector<tracedb::OutputSpec>& specs,
    const tracedb::OutputRules& rules) {
  try {
    return std::make_unique<tracedb::OutputSet>(specs, rules);
  } catch (const tracedb::OutputError& e) {
    error_line(command + ": " + e.what());
    return nullptr;
  }
}

// Moves every finished output into place, or none: prints the one error line (the first
// problem) and returns false when one fails.
inline bool commit_outputs(const std::string& command, tracedb::OutputSet& outputs) {
  try {
    outputs.commit();
    return true;
  } catch (const tracedb::OutputError& e) {
    error_line(command + ": " + e.what());
    return false;
  }
}

// Moves a finished output into place; prints the error line and returns false when it fails.
inline bool commit_output(const std::string& command, tracedb::OutputFile& out) {
  try {
    out.commit();
    return true;
  } catch (const tracedb::OutputError& e) {
    error_line(command + ": " + e.what());
    return false;
  }
}

}  // namespace c3::cli
