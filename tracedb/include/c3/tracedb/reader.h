// Read-only access to a trace file, with one-line errors for files that are not traces, or are
// traces of a schema this build cannot read.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace c3::tracedb {

// what() is a single line that names the file and says what to do.
class ReadError : public std::runtime_error {
 public:
  // hostile: a view or trigger where the schema has a table, a query that does not end;
  // cancelled: a first SIGINT/SIGTERM stopped a statement (harden.h).
  enum class Kind {
    missing,
    not_sqlite,
    not_c3scope,
    too_new,
    too_old,
    corrupt,
    hostile,
    cancelled
  };
  ReadError(Kind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// A prepared statement with typed column access; finalized on destruction. Errors throw
// ReadError naming the file and the table read. Values are not trusted:
//   - text is cut at a cap (kTextCap, or cap() for a column; harden.h) and the cuts counted;
//   - an integer read from a column that holds text or a blob reads 0 and marks the row
//     (row_problem()): the caller skips such a row and counts it.
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
  // Text of column `col` is cut at `bytes` (instead of kTextCap).
  Query& cap(int col, size_t bytes);
  // Values cut at their cap so far, and the first ("column `name`: 10485760 bytes, cut to 4096").
  int64_t cuts() const { return cuts_; }
  const std::string& first_cut() const { return first_cut_; }
  // Why the current row cannot be used ("" when it can): the first integer column read that
  // holds text or a blob ("column `start_ns` holds text, not an integer").
  std::string row_problem() const;
  int64_t i64(int col) const;
  std::optional<int64_t> opt_i64(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  std::optional<std::string> opt_text(int col) const;
  bool is_null(int col) const;
  // The row's columns from `first` on, one into each of `out` in order, each read as its type
  // asks: std::string (text), the optionals (empty for NULL), double (real), any other
  // arithmetic type (i64, converted with static_cast: bool is nonzero).
  template <class... T>
  void columns(int first, T&... out) const {
    int col = first;
    (column(col++, out), ...);
  }
  // step(), then the row's columns from the first into `out` as columns() reads them: false,
  // reading nothing, once there are no more rows.
  template <class... T>
  bool next(T&... out) {
    if (!step()) return false;
    columns(0, out...);
    return true;
  }

 private:
  template <class T>
  void column(int col, T& out) const {
    if constexpr (std::is_same_v<T, std::string>) {
      out = text(col);
    } else if constexpr (std::is_same_v<T, std::optional<std::string>>) {
      out = opt_text(col);
    } else if constexpr (std::is_same_v<T, std::optional<int64_t>>) {
      out = opt_i64(col);
    } else if constexpr (std::is_same_v<T, std::optional<double>>) {
      out = is_null(col) ? std::nullopt : std::optional<double>(real(col));
    } else if constexpr (std::is_same_v<T, double>) {
      out = real(col);
    } else {
      static_assert(std::is_arithmetic_v<T>, "Query::columns reads text, numbers and optionals");
      out = static_cast<T>(i64(col));
    }
  }
  [[noreturn]] void fail(int rc) const;
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
  std::vector<std::pair<int, size_t>> caps_;
  mutable int bad_col_ = -1;
  mutable int bad_type_ = 0;
  mutable int64_t cuts_ = 0;
  mutable std::string first_cut_;
};

// Opens any SQLite file (a trace, an Nsight Systems export) for reading without creating
// anything next to it: immutable when no writer can be at work on it (no -wal file, no hot
// -journal), read-only otherwise; hardened against a hostile file (harden.h). Throws ReadError
// with one line naming the file and the true reason (locked by a writer, a hot journal left by a
// killed writer, a read-only folder that a WAL file needs, damaged). The caller closes the
// connection.
sqlite3* open_read_only(const std::string& path);
// The URI open_read_only opens `path` by (for an ATTACH on a connection opened with
// SQLITE_OPEN_URI): immutable when no writer can be at work on the file, read-only otherwise.
std::string read_only_uri(const std::string& path);

// The one-line reason an SQLite call on `db` failed with `rc`, for a message about `path`.
std::string sqlite_failure(sqlite3* db, int rc, const std::string& path);

// Throws the ReadError for a statement `sql` on `db` that failed with `rc`: one line naming the
// file (as harden() was given it), the true reason and the table read; Kind::cancelled when a
// signal stopped it, Kind::hostile when the work budget did (harden.h).
[[noreturn]] void throw_query_error(sqlite3* db, int rc, const std::string& sql);

// Refuses (ReadError, hostile) a file where any of `names` is not a table: a view or a virtual
// table standing for a table a reader expects would run whatever the file says ("'F': `kernel`
// is a view, not a table").
void require_tables(sqlite3* db, const std::string& path, const std::vector<std::string>& names);

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
  // Whether the file (or a read-time migration) has a table (or view) of that name.
  bool has_table(const std::string& name) const;

 private:
  Reader(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  std::string path_;
  sqlite3* db_ = nullptr;
  int version_ = 0;
  std::map<std::string, std::string> meta_;
};

}  // namespace c3::tracedb
