// Job.sql's connection: every trace of the job attached read-only under its name, hardened.
#pragma once

#include <atomic>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "columns.h"

struct sqlite3;

namespace c3::py {

// usage: the query itself is wrong (does not parse, writes, several statements); otherwise a
// file could not be read.
struct SqlError : std::runtime_error {
  SqlError(bool is_usage, const std::string& what) : std::runtime_error(what), usage(is_usage) {}
  bool usage;
};

class SqlConnection {
 public:
  // (schema name, trace file) pairs; the names are c3scope's (rank0, trace1), never a user's.
  // Each file is checked alone (tracedb::open_read_only) before it is attached. Throws
  // std::runtime_error / tracedb::ReadError naming the file that cannot be opened.
  explicit SqlConnection(const std::vector<std::pair<std::string, std::string>>& attached);
  ~SqlConnection();
  SqlConnection(const SqlConnection&) = delete;
  SqlConnection& operator=(const SqlConnection&) = delete;

  // Runs one read-only statement; its columns. Throws SqlError (also when *cancel turns true
  // between rows). The work budget is the connection's: one connection per query.
  std::vector<ResultColumn> query(const std::string& sql, const std::atomic<bool>* cancel);
  // How many files one connection can attach (SQLite's SQLITE_MAX_ATTACHED as built).
  static int max_attached();
  // Stops the statement running on another thread (Ctrl-C in Python).
  void interrupt();

 private:
  sqlite3* db_ = nullptr;
};

}  // namespace c3::py
