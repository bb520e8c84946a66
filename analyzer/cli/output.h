// An output file of a command (--json, --md, ...): written under a temporary name and renamed
// into place at the end, so a failed run leaves nothing half-written.
#pragma once

#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "commands.h"

namespace c3::cli {

// Makes Ctrl-C and SIGTERM set the returned flag (the pipeline's cancel: the map stops at its
// next check and the command removes its temporary files and partial outputs on the way out).
inline std::atomic<bool>* stop_on_signals() {
  static std::atomic<bool> interrupted{false};
  struct sigaction sa {};
  sa.sa_handler = [](int) { interrupted = true; };
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  return &interrupted;
}

// An output written under a temporary name and renamed into place at the end: a failed run
// leaves nothing half-written.
class Output {
 public:
  Output(std::string command, std::string flag, std::string path)
      : command_(std::move(command)), flag_(std::move(flag)), path_(std::move(path)) {}
  ~Output() {
    if (open_) {
      f_.close();
      std::error_code ec;
      std::filesystem::remove(tmp(), ec);
    }
  }
  bool open() {
    f_.open(tmp(), std::ios::binary | std::ios::trunc);
    open_ = static_cast<bool>(f_);
    if (!open_)
      error_line(command_ + ": " + flag_ + " " + path_ + ": cannot write (does the folder exist?)");
    return open_;
  }
  void write(const std::string& s) { f_ << s; }
  bool commit() {
    f_.close();
    open_ = false;
    std::error_code ec;
    if (!f_) {
      std::filesystem::remove(tmp(), ec);
      error_line(command_ + ": " + flag_ + " " + path_ + ": cannot write (disk full?)");
      return false;
    }
    std::filesystem::rename(tmp(), path_, ec);
    if (ec) {
      std::filesystem::remove(tmp(), ec);
      error_line(command_ + ": " + flag_ + " " + path_ + ": " + ec.message());
      return false;
    }
    return true;
  }

 private:
  std::string tmp() const { return path_ + ".partial"; }
  std::string command_, flag_, path_;
  std::ofstream f_;
  bool open_ = false;
};

}  // namespace c3::cli
