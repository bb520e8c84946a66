#include "c3/tracedb/reader.h"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "c3/tracedb/harden.h"
#include "c3/tracedb/output_file.h"
#include "c3/tracedb/schema.h"
#include "c3/tracedb/version.h"
#include "migrate.h"

namespace c3::tracedb {

Query::Query(sqlite3* db, const std::string& sql) : db_(db), sql_(sql) {
  if (const int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr); rc != SQLITE_OK) {
    fail(rc);
  }
}

void Query::fail(int rc) const {
  throw_query_error(db_, rc, sql_);
}

// One line: the file, the true reason (the code of the call that failed, not what the
// connection says later: a finalized statement leaves "not an error"), the table read.
void throw_query_error(sqlite3* db, int rc, const std::string& sql) {
  const std::string path = read_path(db);
  const std::string stop = (rc & 0xff) == SQLITE_INTERRUPT ? take_stop_reason() : std::string();
  const std::string table = table_of(sql);
  const std::string where = table.empty() ? "" : " (reading table `" + printable(table) + "`)";
  if (stop == "interrupted by a signal") {
    throw ReadError(ReadError::Kind::cancelled, "'" + printable(path) + "': " + stop);
  }
  if (!stop.empty()) {
    throw ReadError(ReadError::Kind::hostile, "'" + printable(path) + "' " + stop + where);
  }
  throw ReadError(ReadError::Kind::corrupt,
                  "'" + printable(path) + "' " + sqlite_failure(db, rc, path) + where);
}
Query::~Query() {
  sqlite3_finalize(stmt_);
}
Query& Query::bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}
Query& Query::bind(int index, const std::string& value) {
  sqlite3_bind_text(stmt_, index, value.c_str(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  return *this;
}
Query& Query::bind(int index, const std::optional<int64_t>& value) {
  if (!value) {
    sqlite3_bind_null(stmt_, index);
    return *this;
  }
  return bind(index, *value);
}
Query& Query::bind(int index, const std::optional<std::string>& value) {
  if (!value) {
    sqlite3_bind_null(stmt_, index);
    return *this;
  }
  return bind(index, *value);
}
void Query::reset() {
  sqlite3_reset(stmt_);
}
bool Query::step() {
  bad_col_ = -1;
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(rc);
}
Query& Query::cap(int col, size_t bytes) {
  caps_.emplace_back(col, bytes);
  return *this;
}
std::string Query::row_problem() const {
  if (bad_col_ < 0) return {};
  const char* name = sqlite3_column_name(stmt_, bad_col_);
  return "column `" + printable(name != nullptr ? name : "?") + "` holds " +
         (bad_type_ == SQLITE_TEXT ? "text" : "a blob") + ", not an integer";
}
int64_t Query::i64(int col) const {
  // One column call, then the value's own accessors (which skip the statement's per-call
  // checks): half the API calls of column_type + column_int64, on the loader's hottest loop.
  sqlite3_value* v = sqlite3_column_value(stmt_, col);
  const int type = sqlite3_value_type(v);
  if (type == SQLITE_TEXT || type == SQLITE_BLOB) {
    // Not a number (SQLite would read it as 0, or as the number it starts with).
    if (bad_col_ < 0) {
      bad_col_ = col;
      bad_type_ = type;
    }
    return 0;
  }
  return sqlite3_value_int64(v);
}
std::optional<int64_t> Query::opt_i64(int col) const {
  if (is_null(col)) return std::nullopt;
  return i64(col);
}
double Query::real(int col) const {
  return sqlite3_column_double(stmt_, col);
}
std::string Query::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  if (p == nullptr) return {};
  const auto bytes = static_cast<size_t>(sqlite3_column_bytes(stmt_, col));
  size_t limit = kTextCap;
  for (const auto& [c, b] : caps_) {
    if (c == col) limit = b;
  }
  if (bytes <= limit) return std::string(reinterpret_cast<const char*>(p), bytes);
  // Copies one byte past the cap, so cap_text sees whether the cut splits a character.
  std::string out(reinterpret_cast<const char*>(p), limit + 1);
  cap_text(out, limit);
  if (cuts_++ == 0) {
    const char* name = sqlite3_column_name(stmt_, col);
    first_cut_ = "column `" + printable(name != nullptr ? name : "?") + "` of " +
                 std::to_string(bytes) + " bytes, cut to " + std::to_string(out.size());
  }
  return out;
}
std::optional<std::string> Query::opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}
bool Query::is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

namespace {

bool nonempty_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && st.st_size > 0;
}

// A path as an SQLite URI (file:...): '%', '?' and '#' would end or change it otherwise, and an
// absolute path gets an empty authority ("file://" + "/..."), so that "//host/x" stays a path.
std::string file_uri(const std::string& path) {
  std::string out = path.starts_with('/') ? "file://" : "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string sqlite_failure(sqlite3* db, int rc, const std::string& path) {
  // The connection's own code and message only when they are of this failure: once the failed
  // statement is finalized (an exception unwinding), the connection says "not an error".
  int ext = rc;
  std::string msg = sqlite3_errstr(rc);
  if (db != nullptr && (sqlite3_extended_errcode(db) & 0xff) == (rc & 0xff)) {
    ext = sqlite3_extended_errcode(db);
    msg = sqlite3_errmsg(db);
  }
  if (msg.size() > 200) msg = msg.substr(0, 200) + "...";  // it may quote the file's schema
  msg = printable(msg);
  switch (ext) {
    case SQLITE_READONLY_ROLLBACK:
      return "has a hot journal (" + path +
             "-journal) left by a writer that was killed; open it once with write access to "
             "roll it back (sqlite3 '" +
             path + "' 'PRAGMA quick_check'), then read it again";
    case SQLITE_READONLY_RECOVERY:
    case SQLITE_READONLY_CANTINIT:
    case SQLITE_READONLY_DIRECTORY:
      return "has a write-ahead log (" + path +
             "-wal) that cannot be read in a read-only folder; copy the trace and its -wal file "
             "to a writable folder";
    default:
      break;
  }
  switch (ext & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "is locked by another process (a recording or an import still writing it?); try "
             "again when it has finished";
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return "is damaged or not a database: " + msg;
    case SQLITE_NOMEM:
      return "out of memory while reading it";
    case SQLITE_IOERR:
      return "cannot be read: " + msg +
             (db != nullptr ? std::string(" (") + std::strerror(sqlite3_system_errno(db)) + ")"
                            : std::string());
    case SQLITE_TOOBIG:
      return "holds a value longer than " + std::to_string(kValueBytesLimit >> 20) +
             " MiB, more than any real trace has (a hostile or damaged file)";
    default:
      return "cannot be read: " + msg;
  }
}

std::string read_only_uri(const std::string& path) {
  // Immutable: SQLite then takes no locks and creates no -shm or -wal next to the input. Only
  // when a writer may be at work (a WAL file: a recording running or killed) or a killed writer
  // left a hot journal is the file opened as a database others may change.
  const bool writer_files =
      ::access((path + "-wal").c_str(), F_OK) == 0 || nonempty_file(path + "-journal");
  return file_uri(path) + (writer_files ? "?mode=ro" : "?immutable=1");
}

sqlite3* open_read_only(const std::string& path) {
  const std::string uri = read_only_uri(path);
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      uri.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  if (rc != SQLITE_OK) {
    const std::string why = sqlite_failure(db, rc, path);
    sqlite3_close(db);
    throw ReadError(ReadError::Kind::corrupt, "'" + printable(path) + "' " + why);
  }
  sqlite3_busy_timeout(db, 2000);
  struct stat st {};
  const int64_t bytes = ::stat(path.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_size) : 0;
  try {
    harden(db, path, bytes);
  } catch (...) {
    sqlite3_close(db);
    throw;
  }
  return db;
}

void require_tables(sqlite3* db, const std::string& path, const std::vector<std::string>& names) {
  // Names are case-insensitive: a view "KERNEL" is what "kernel" reads.
  Query q(db,
          "SELECT name, type, IFNULL(sql, '') LIKE 'CREATE VIRTUAL%' FROM sqlite_master WHERE "
          "type IN ('table', 'view') AND name = ?1 COLLATE NOCASE");
  for (const std::string& name : names) {
    q.reset();
    q.bind(1, name);
    while (q.step()) {
      const std::string type = q.text(1);
      const std::string found = q.text(0);
      std::string what = type == "view" ? "a view" : q.i64(2) != 0 ? "a virtual table" : "";
      if (what.empty()) {
        // A virtual generated column computes its value as it is read: any expression of the
        // file's, run for every row (a table's stored columns are only read).
        Query cols(db, "PRAGMA main.table_xinfo(\"" + found + "\")");
        while (cols.step()) {
          if (cols.i64(6) == 2) what = "a table with a computed column (" + cols.text(1) + ")";
        }
      }
      if (what.empty()) continue;
      throw ReadError(ReadError::Kind::hostile,
                      "'" + printable(path) + "': `" + printable(found) + "` is " +
                          printable(what) +
                          " where a table belongs (a hostile or damaged file: c3scope reads "
                          "only tables from it)");
    }
  }
}

std::unique_ptr<Reader> Reader::open(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw ReadError(ReadError::Kind::missing,
                    "cannot open '" + path + "': " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    throw ReadError(ReadError::Kind::missing, "'" + path + "' is a directory, not a trace file");
  }
  if (!S_ISREG(st.st_mode)) {
    throw ReadError(ReadError::Kind::missing,
                    "'" + path + "' is a pipe or a device, not a trace file (save it to a file)");
  }
  if (st.st_size == 0) {
    throw ReadError(ReadError::Kind::not_sqlite,
                    "'" + path +
                        "' is empty: not a c3scope trace (was the writer killed before "
                        "its first commit?)");
  }
  {
    std::ifstream in(path, std::ios::binary);
    char header[16] = {};
    in.read(header, sizeof header);
    if (in.gcount() < 16 || std::memcmp(header, "SQLite format 3", 16) != 0) {
      throw ReadError(ReadError::Kind::not_sqlite,
                      "'" + path +
                          "' is not an SQLite file, so not a c3scope trace (import "
                          "PyTorch or Nsight traces with 'c3scope import')");
    }
  }
  std::unique_ptr<Reader> r(new Reader(path, open_read_only(path)));
  sqlite3* db = r->db_;
  // Query's errors name the file and the true reason (locked, hot journal, damaged).
  {
    Query uv(db, "PRAGMA user_version");
    uv.step();
    r->version_ = static_cast<int>(uv.i64(0));
  }
  {
    // Every table of the schema the file has must be a table (a view would run the file's
    // query, harden.h); the file's own views are not used (below).
    std::vector<std::string> expected;
    for (const TableDesc& t : tables()) expected.emplace_back(t.name);
    require_tables(db, path, expected);
  }
  if (!r->has_table("meta")) {
    throw ReadError(ReadError::Kind::not_c3scope,
                    "'" + path +
                        "' is an SQLite file but not a c3scope trace (it has no meta "
                        "table; Nsight Systems exports are read with 'c3scope import')");
  }
  {
    Query q(db, "SELECT key, value FROM meta");
    while (q.step()) r->meta_[q.text(0)] = q.text(1);
  }
  auto it = r->meta_.find("schema_version");
  if (it == r->meta_.end()) {
    throw ReadError(ReadError::Kind::not_c3scope,
                    "'" + path +
                        "' is an SQLite file but not a c3scope trace (meta has no "
                        "schema_version)");
  }
  const std::string written_by =
      r->meta_.count("c3scope_version") ? r->meta_["c3scope_version"] : std::string("unknown");
  if (r->version_ > kSchemaVersion) {
    throw ReadError(ReadError::Kind::too_new,
                    "'" + path + "' has trace schema v" + std::to_string(r->version_) +
                        " (written by c3scope " + written_by + "), newer than this c3scope " +
                        kC3scopeVersion + " reads (v" + std::to_string(kOldestReadableVersion) +
                        " to v" + std::to_string(kSchemaVersion) + "): upgrade c3scope");
  }
  if (r->version_ < kOldestReadableVersion) {
    throw ReadError(ReadError::Kind::too_old,
                    "'" + path + "' has trace schema v" + std::to_string(r->version_) +
                        " (written by c3scope " + written_by + "), older than this c3scope " +
                        kC3scopeVersion + " reads (v" + std::to_string(kOldestReadableVersion) +
                        " to v" + std::to_string(kSchemaVersion) +
                        "): re-record it, or read it with the c3scope release that wrote it");
  }
  // Read-time migration (schema.h, Migration; migrate.h).
  if (r->version_ < kSchemaVersion) migrate(db, r->version_, path);
  // c3scope's views as this build defines them, as TEMP views: they come first in name lookup,
  // and the file's views (whatever they say) do not run (harden.h).
  for (const ViewDesc& v : views()) {
    const std::string sql =
        "CREATE TEMP VIEW " + std::string(v.name) + " AS " + std::string(v.select_sql);
    if (const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr); rc != SQLITE_OK) {
      throw ReadError(ReadError::Kind::corrupt, "'" + printable(path) + "' " +
                                                    sqlite_failure(db, rc, path) +
                                                    " (making view `" + std::string(v.name) + "`)");
    }
  }
  return r;
}

Reader::~Reader() {
  sqlite3_close_v2(db_);
}

int64_t Reader::count(const std::string& table) const {
  Query q(db_, "SELECT COUNT(*) FROM \"" + table + "\"");
  q.step();
  return q.i64(0);
}

bool Reader::has_table(const std::string& name) const {
  Query q(db_,
          "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1 "
          "UNION ALL SELECT 1 FROM sqlite_temp_master WHERE type = 'table' AND name = ?1");
  q.bind(1, name);
  return q.step();
}

}  // namespace c3::tracedb
