// Read-only access to a trace file, with one-line errors for files that are not traces, or are
// traces of a schema this build cannot read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace c3::tracedb {

// what() is a single line that names the file and says what to do.
class ReadError : public std::runtime_error {
 public:
  enum class Kind { missing, not_sqlite, not_c3scope, too_new, too_old, corrupt };
  ReadError(Kind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// A prepared statement with typed column access; finalized on destruction.
class Query {
 public:
  Query(sqlite3* db, const std::string& sql);
  ~Query();
  Query(const Query&) = delete;
  Query& operator=(const Query&) = delete;
  Query& bind(int index, int64_t value);
  Query& bind(int index, const std::string& value);
  Query& bind(int index, const std::optional<int64_t>& value);  // NULL when empty
  Query& bind(int index, const std::optional<std::string>& value);
  // Makes the statement ready to run again (bindings stay until bound anew).
  void reset();
  bool step();  // true while a row is available
  int64_t i64(int col) const;
  std::optional<int64_t> opt_i64(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  std::optional<std::string> opt_text(int col) const;
  bool is_null(int col) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// Opens any SQLite file (a trace, an Nsight Systems export) for reading without creating
// anything next to it: immutable when no writer can be at work on it (no -wal file, no hot
// -journal), read-only otherwise. Throws ReadError with one line naming the file and the true
// reason (locked by a writer, a hot journal left by a killed writer, a read-only folder that a
// WAL file needs, damaged). The caller closes the connection.
sqlite3* open_read_only(const std::string& path);

// The one-line reason an SQLite call on `db` failed with `rc`, for a message about `path`.
std::string sqlite_failure(sqlite3* db, int rc, const std::string& path);

class Reader {
 public:
  // Opens read-only and validates; throws ReadError.
  static std::unique_ptr<Reader> open(const std::string& path);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const { return version_; }
  const std::map<std::string, std::string>& meta() const { return meta_; }
  sqlite3* db() const { return db_; }
  Query query(const std::string& sql) const { return Query(db_, sql); }
  int64_t count(const std::string& table) const;
  bool has_table(const std::string& name) const;

 private:
  Reader(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  sqlite3* db_ = nullptr;
  int version_ = 0;
  std::map<std::string, std::string> meta_;
};

}  // namespace c3::tracedb
