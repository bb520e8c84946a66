// Job.sql: one read-only connection with every trace of a job attached under its documented name
// (docs/python.md "SQL"), hardened like every reader of an untrusted file (tracedb/harden.h).
#include "sql.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "c3/tracedb/harden.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"

namespace c3::py {
namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

int64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
}

// A URI naming `path` read-only; immutable (no locks, nothing created beside it) when no writer
// can be at work on it, as tracedb::open_read_only decides.
std::string read_only_uri(const std::string& path) {
  std::string uri = "file:";
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') || c == '/' ||
        c == '.' || c == '-' || c == '_') {
      uri += c;
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", u);
      uri += hex;
    }
  }
  uri += "?mode=ro";
  if (!exists(path + "-wal") && !exists(path + "-journal")) uri += "&immutable=1";
  return uri;
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
  if (sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI, nullptr) !=
      SQLITE_OK) {
    const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::runtime_error("cannot open an SQLite connection: " + why);
  }
  int64_t bytes = 0;
  for (const auto& [name, path] : attached) {
    sqlite3_stmt* st = nullptr;
    const std::string sql = "ATTACH DATABASE ?1 AS \"" + name + "\"";
    int rc = sqlite3_prepare_v2(db_, sql.c_str(), -1, &st, nullptr);
    if (rc == SQLITE_OK) {
      const std::string uri = read_only_uri(path);
      sqlite3_bind_text(st, 1, uri.c_str(), -1, SQLITE_TRANSIENT);
      rc = sqlite3_step(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
      const std::string why = tracedb::sqlite_failure(db_, rc, path);
      sqlite3_close(db_);
      db_ = nullptr;
      throw std::runtime_error(why);
    }
    bytes += file_bytes(path);
  }
  try {
    tracedb::harden(db_, attached.empty() ? ":memory:" : attached.front().second, bytes);
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
  // A user's query may unite every rank (UNION ALL of 64 tables) and be longer than c3scope's
  // own: harden()'s limits for c3scope's statements are raised, its work budget and read-only
  // authorizer stay.
  sqlite3_limit(db_, SQLITE_LIMIT_COMPOUND_SELECT, 4096);
  sqlite3_limit(db_, SQLITE_LIMIT_VDBE_OP, 10000000);
  sqlite3_limit(db_, SQLITE_LIMIT_EXPR_DEPTH, 1000);
  sqlite3_limit(db_, SQLITE_LIMIT_FUNCTION_ARG, 127);
}

SqlConnection::~SqlConnection() {
  if (db_ != nullptr) sqlite3_close(db_);
}

void SqlConnection::interrupt() {
  if (db_ != nullptr) sqlite3_interrupt(db_);
}

std::vector<ResultColumn> SqlConnection::query(const std::string& sql) {
  sqlite3_stmt* st = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &st, &tail);
  if (rc != SQLITE_OK || st == nullptr) {
    const std::string why = rc != SQLITE_OK ? sqlite3_errmsg(db_) : "no statement";
    sqlite3_finalize(st);
    throw SqlError(true, "the query does not run: " + tracedb::printable(why));
  }
  for (const char* p = tail; p != nullptr && *p != '\0'; ++p) {
    if (*p != ' ' && *p != '\n' && *p != '\t' && *p != '\r' && *p != ';') {
      sqlite3_finalize(st);
      throw SqlError(true, "one statement at a time: the query has more after its first ';'");
    }
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
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < n; ++i) append(cols[static_cast<size_t>(i)], st, i, rows);
    ++rows;
  }
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
