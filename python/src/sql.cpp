// Job.sql: one read-only connection with every trace of a job attached under its documented name
// (docs/python.md "SQL"), hardened like every reader of an untrusted file (tracedb/harden.h).
#include "sql.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "c3/tracedb/harden.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"

namespace c3::py {
namespace {

int64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

std::string format_real(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Makes column `c` (holding `rows` values) text.
void to_text(ResultColumn& c, size_t rows) {
  using T = ResultColumn::Type;
  std::vector<std::string> texts(rows);
  std::vector<uint8_t> nulls(rows, 1);
  for (size_t i = 0; i < rows; ++i) {
    if (c.type == T::integer && c.nulls[i] == 0) {
      texts[i] = std::to_string(c.ints[i]);
      nulls[i] = 0;
    } else if (c.type == T::real && !std::isnan(c.reals[i])) {
      texts[i] = format_real(c.reals[i]);
      nulls[i] = 0;
    }
  }
  c.ints.clear();
  c.nulls.clear();
  c.reals.clear();
  c.texts = std::move(texts);
  c.text_nulls = std::move(nulls);
  c.type = T::text;
}

// Appends row value `col` of `st` to `c`, which holds `rows` values so far.
void append(ResultColumn& c, sqlite3_stmt* st, int col, size_t rows) {
  using T = ResultColumn::Type;
  const int type = sqlite3_column_type(st, col);
  if (type == SQLITE_NULL) {
    switch (c.type) {
      case T::null:
        c.nulls.push_back(1);
        break;
      case T::integer:
        c.ints.push_back(0);
        c.nulls.push_back(1);
        break;
      case T::real:
        c.reals.push_back(std::nan(""));
        break;
      case T::text:
        c.texts.emplace_back();
        c.text_nulls.push_back(1);
        break;
    }
    return;
  }
  if (c.type == T::null) {  // the first value decides, the nulls before it are kept
    if (type == SQLITE_INTEGER) {
      c.type = T::integer;
      c.ints.assign(rows, 0);
      c.nulls.assign(rows, 1);
    } else if (type == SQLITE_FLOAT) {
      c.type = T::real;
      c.reals.assign(rows, std::nan(""));
      c.nulls.clear();
    } else {
      c.type = T::text;
      c.texts.assign(rows, {});
      c.text_nulls.assign(rows, 1);
      c.nulls.clear();
    }
  }
  if (c.type == T::integer && type == SQLITE_FLOAT) {  // an integer column meets a real
    c.reals.resize(rows);
    for (size_t i = 0; i < rows; ++i)
      c.reals[i] = c.nulls[i] != 0 ? std::nan("") : static_cast<double>(c.ints[i]);
    c.ints.clear();
    c.nulls.clear();
    c.type = T::real;
  }
  if (c.type != T::text && (type == SQLITE_TEXT || type == SQLITE_BLOB)) to_text(c, rows);
  switch (c.type) {
    case T::integer:
      c.ints.push_back(sqlite3_column_int64(st, col));
      c.nulls.push_back(0);
      break;
    case T::real:
      c.reals.push_back(sqlite3_column_double(st, col));
      break;
    case T::text: {
      if (type == SQLITE_INTEGER) {
        c.texts.push_back(std::to_string(sqlite3_column_int64(st, col)));
      } else if (type == SQLITE_FLOAT) {
        c.texts.push_back(format_real(sqlite3_column_double(st, col)));
      } else {
        const auto* p =
            static_cast<const char*>(type == SQLITE_BLOB ? sqlite3_column_blob(st, col) : nullptr);
        if (p == nullptr) p = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
        const int n = sqlite3_column_bytes(st, col);
        c.texts.emplace_back(p != nullptr ? p : "", p != nullptr ? static_cast<size_t>(n) : 0);
      }
      c.text_nulls.push_back(0);
      break;
    }
    case T::null:
      break;
  }
}

}  // namespace

SqlConnection::SqlConnection(const std::vector<std::pair<std::string, std::string>>& attached) {
  // Each file is opened alone first, hardened (tracedb::open_read_only): a schema that does not
  // parse within harden()'s limits and work budget is refused before ATTACH parses it again.
  int64_t bytes = 0;
  for (const auto& [name, path] : attached) {
    sqlite3_close(tracedb::open_read_only(path));
    bytes += file_bytes(path);
  }
  if (sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error("cannot open an SQLite connection: " + why);
  }
  sqlite3_busy_timeout(db_, 2000);
  // harden()'s value and statement limits hold while the files' schemas are attached too.
  sqlite3_limit(db_, SQLITE_LIMIT_LENGTH, tracedb::kValueBytesLimit);
  sqlite3_limit(db_, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
  for (const auto& [name, path] : attached) {
    sqlite3_stmt* st = nullptr;
    const std::string sql = "ATTACH DATABASE ?1 AS \"" + name + "\"";
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr);
    if (rc == SQLITE_OK) {
      const std::string uri = tracedb::read_only_uri(path);
      sqlite3_bind_text(st, 1, uri.c_str(), -1, SQLITE_TRANSIENT);
      rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
      const std::string why = tracedb::sqlite_failure(db_, rc, path);
      sqlite3_close(db_);
      db_ = nullptr;
      throw std::runtime_error("'" + tracedb::printable(path) + "' " + why);
    }
  }
  try {
    tracedb::harden(db_, attached.empty() ? ":memory:" : attached.front().second, bytes);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
  // A user's query may be longer than c3scope's own statements: harden()'s limits for those are
  // raised; its work budget, read-only authorizer and value limits stay.
  sqlite3_limit(db_, SQLITE_LIMIT_COMPOUND_SELECT, 500);
  sqlite3_limit(db_, SQLITE_LIMIT_VDBE_OP, 10000000);
  sqlite3_limit(db_, SQLITE_LIMIT_EXPR_DEPTH, 1000);
  sqlite3_limit(db_, SQLITE_LIMIT_FUNCTION_ARG, 127);
}

int SqlConnection::max_attached() {
  sqlite3* db = nullptr;
  int n = 10;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK)
    n = sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1);
  sqlite3_close(db);
  return n;
}

SqlConnection::~SqlConnection() {
  if (db_ != nullptr) sqlite3_close(db_);
}

void SqlConnection::interrupt() {
  if (db_ != nullptr) sqlite3_interrupt(db_);
}

std::vector<ResultColumn> SqlConnection::query(const std::string& sql,
                                               const std::atomic<bool>* cancel) {
  sqlite3_stmt* st = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &st, &tail);
  if (rc != SQLITE_OK || st == nullptr) {
    const std::string why = rc != SQLITE_OK ? sqlite3_errmsg(db_) : "no statement";
    sqlite3_finalize(st);
    throw SqlError(true, "the query does not run: " + tracedb::printable(why));
  }
  // What follows the statement may be comments and semicolons, not another statement.
  for (const char* rest = tail; rest != nullptr && *rest != '\0';) {
    sqlite3_stmt* extra = nullptr;
    const char* next = nullptr;
    const int rc2 = sqlite3_prepare_v2(db_, rest, -1, &extra, &next);
    sqlite3_finalize(extra);
    if (rc2 != SQLITE_OK || extra != nullptr) {
      sqlite3_finalize(st);
      throw SqlError(true, "one statement at a time: the query has another after its first");
    }
    if (next == rest) break;
    rest = next;
  }
  if (sqlite3_stmt_readonly(st) == 0) {
    sqlite3_finalize(st);
    throw SqlError(true, "the query would write: Job.sql runs read-only queries (SELECT)");
  }
  const int n = sqlite3_column_count(st);
  std::vector<ResultColumn> cols(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const char* name = sqlite3_column_name(st, i);
    cols[static_cast<size_t>(i)].name = name != nullptr ? name : "";
  }
  size_t rows = 0;
  auto cancelled = [&] { return cancel != nullptr && cancel->load(); };
  while (!cancelled() && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < n; ++i) append(cols[static_cast<size_t>(i)], st, i, rows);
    ++rows;
  }
  if (cancelled()) rc = SQLITE_INTERRUPT;
  if (rc != SQLITE_DONE) {
    const std::string stop = tracedb::take_stop_reason();
    const std::string why = !stop.empty()            ? stop
                            : rc == SQLITE_INTERRUPT ? std::string("interrupted")
                                                     : std::string(sqlite3_errmsg(db_));
    sqlite3_finalize(st);
    throw SqlError(rc == SQLITE_ERROR, "the query stopped: " + tracedb::printable(why));
  }
  sqlite3_finalize(st);
  return cols;
}

}  // namespace c3::py
