#include "c3/tracedb/reader.h"

#include <sqlite3.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "c3/tracedb/schema.h"
#include "c3/tracedb/version.h"

namespace c3::tracedb {

Query::Query(sqlite3* db, const std::string& sql) : db_(db), sql_(sql) {
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
    throw ReadError(ReadError::Kind::corrupt,
                    std::string("query failed: ") + sqlite3_errmsg(db) + " (" + sql + ")");
  }
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
bool Query::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw ReadError(ReadError::Kind::corrupt,
                  std::string("query failed: ") + sqlite3_errmsg(db_) + " (" + sql_ + ")");
}
int64_t Query::i64(int col) const {
  return sqlite3_column_int64(stmt_, col);
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
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<size_t>(sqlite3_column_bytes(stmt_, col)))
           : std::string();
}
std::optional<std::string> Query::opt_text(int col) const {
  if (is_null(col)) return std::nullopt;
  return text(col);
}
bool Query::is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
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
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw ReadError(ReadError::Kind::corrupt, "cannot open '" + path + "': " + msg);
  }
  std::unique_ptr<Reader> r(new Reader(path, db));
  sqlite3_busy_timeout(db, 2000);
  try {
    Query uv(db, "PRAGMA user_version");
    uv.step();
    r->version_ = static_cast<int>(uv.i64(0));
    if (!r->has_table("meta")) {
      throw ReadError(ReadError::Kind::not_c3scope,
                      "'" + path +
                          "' is an SQLite file but not a c3scope trace (it has no meta "
                          "table; Nsight Systems exports are read with 'c3scope import')");
    }
    Query q(db, "SELECT key, value FROM meta");
    while (q.step()) r->meta_[q.text(0)] = q.text(1);
  } catch (const ReadError& e) {
    if (e.kind() != ReadError::Kind::corrupt) throw;
    throw ReadError(ReadError::Kind::corrupt,
                    "'" + path + "' is damaged or not a database: " + e.what());
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
  if (r->version_ < kSchemaVersion) {
    // Read-time migration (schema.h kMigrations): later tables as empty TEMP tables.
    const std::string sql = migration_sql(r->version_, /*temp=*/true);
    char* err = nullptr;
    if (!sql.empty() && sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : "error";
      sqlite3_free(err);
      throw ReadError(ReadError::Kind::corrupt, "'" + path + "': cannot migrate schema v" +
                                                    std::to_string(r->version_) + ": " + msg);
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
