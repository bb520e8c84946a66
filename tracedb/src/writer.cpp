#include "c3/tracedb/writer.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "c3/common/time.h"

namespace c3::tracedb {
namespace {

void bind_value(sqlite3_stmt* s, int i, const I64& v) {
  sqlite3_bind_int64(s, i, v);
}
void bind_value(sqlite3_stmt* s, int i, const Real& v) {
  sqlite3_bind_double(s, i, v);
}
// SQLITE_STATIC: the row outlives the sqlite3_step that reads the text.
void bind_value(sqlite3_stmt* s, int i, const Text& v) {
  sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
}
// OptI64, OptReal, OptText: NULL when empty.
template <class T>
void bind_value(sqlite3_stmt* s, int i, const std::optional<T>& v) {
  if (v)
    bind_value(s, i, *v);
  else
    sqlite3_bind_null(s, i);
}

#define C3_BIND_FIELD(name, type, sql, doc) bind_value(stmt, ++i, row.name);
#define C3_DEFINE_BIND(sqlname, Row, COLS, doc)       \
  void bind_row(sqlite3_stmt* stmt, const Row& row) { \
    int i = 0;                                        \
    COLS(C3_BIND_FIELD)                               \
  }
C3_TABLES(C3_DEFINE_BIND)
#undef C3_DEFINE_BIND
#undef C3_BIND_FIELD

}  // namespace

const char* const kWriterPragmas =
    "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-16384;";

namespace {

sqlite3* open_rw(const std::string& path) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    throw WriteError(WriteError::Kind::io, "cannot open trace '" + path + "': " + msg);
  }
  return db;
}

void exec_or_throw(sqlite3* db, const std::string& path, const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    int primary = sqlite3_extended_errcode(db) & 0xff;
    throw WriteError(primary == SQLITE_FULL || primary == SQLITE_IOERR ? WriteError::Kind::io
                                                                       : WriteError::Kind::other,
                     "trace '" + path + "': " + msg);
  }
}

// Creates `path` holding `image` (a complete database) without ever replacing an existing file
// and without a window in which a half-written file carries that name: the bytes go into an
// unnamed O_TMPFILE inode that linkat() then names (failing with EEXIST if the name is taken).
// Filesystems without O_TMPFILE get a named temporary file that link() publishes.
void publish_image(const std::string& path, const unsigned char* image, size_t size) {
  std::string dir =
      path.substr(0, path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/'));
  if (dir.empty()) dir = path.find('/') == 0 ? "/" : ".";
  auto write_all = [&](int fd) {
    size_t done = 0;
    while (done < size) {
      ssize_t n = ::write(fd, image + done, size - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return false;
      }
      done += static_cast<size_t>(n);
    }
    return true;
  };
  auto fail = [&](int err) {
    std::string why = std::strerror(err);
    if (err == EFBIG) why += " (a file size limit: see 'ulimit -f')";
    if (err == ENOSPC) why += " (the disk is full)";
    throw WriteError(err == EEXIST ? WriteError::Kind::exists : WriteError::Kind::io,
                     "cannot create trace '" + path + "': " + why);
  };
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0644);
  if (fd >= 0) {
    if (!write_all(fd)) {
      int err = errno;
      ::close(fd);
      fail(err);
    }
    const std::string proc = "/proc/self/fd/" + std::to_string(fd);
    int rc = ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, path.c_str(), AT_SYMLINK_FOLLOW);
    int err = errno;
    ::close(fd);
    if (rc != 0) fail(err);
    return;
  }
  if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL && errno != ENOENT) fail(errno);
  if (errno == ENOENT) fail(ENOENT);
  const std::string tmp = path + ".partial-" + std::to_string(::getpid());
  fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(errno);
  bool ok = write_all(fd);
  int err = errno;
  ::close(fd);
  if (!ok) {
    ::unlink(tmp.c_str());
    fail(err);
  }
  int rc = ::link(tmp.c_str(), path.c_str());
  err = errno;
  ::unlink(tmp.c_str());
  if (rc != 0) fail(err);
}

}  // namespace

std::unique_ptr<Writer> Writer::create(const std::string& path, const WriterOptions& options) {
  // The schema is built in memory and published atomically (publish_image), so a job killed at
  // any moment leaves either no file or a readable trace, and never a stray temporary file.
  sqlite3* mem = nullptr;
  if (sqlite3_open_v2(":memory:", &mem, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    sqlite3_close(mem);
    throw WriteError(WriteError::Kind::other, "cannot create trace '" + path + "': out of memory");
  }
  unsigned char* image = nullptr;
  sqlite3_int64 image_size = 0;
  try {
    // 16 KiB pages: fewer B-tree splits per row than the default 4 KiB (measured by
    // perf/collector_write.cpp); must be set before the first table exists.
    exec_or_throw(mem, path, "PRAGMA page_size=16384;");
    exec_or_throw(mem, path, "BEGIN;");
    exec_or_throw(mem, path, create_tables_sql());
    exec_or_throw(mem, path, create_views_sql());
    exec_or_throw(mem, path, "PRAGMA user_version=" + std::to_string(kSchemaVersion) + ";");
    std::string meta = "INSERT INTO meta (key, value) VALUES ";
    auto kv = [&](const char* k, const std::string& v, bool last = false) {
      char* q = sqlite3_mprintf("(%Q, %Q)%s", k, v.c_str(), last ? ";" : ",");
      meta += q;
      sqlite3_free(q);
    };
    kv("schema_version", std::to_string(kSchemaVersion));
    kv("c3scope_version", options.c3scope_version);
    kv("created_at", common::utc_now_iso8601());
    if (!options.source_file.empty()) kv("source_file", options.source_file);
    kv("source", options.source);
    kv("clean_close", "0", true);
    exec_or_throw(mem, path, meta);
    exec_or_throw(mem, path, "COMMIT;");
    image = sqlite3_serialize(mem, "main", &image_size, 0);
    if (!image)
      throw WriteError(WriteError::Kind::other,
                       "cannot create trace '" + path + "': serialize failed");
  } catch (...) {
    sqlite3_close(mem);
    throw;
  }
  sqlite3_close(mem);
  // Published already in WAL mode (file format bytes 18-19 = 2): switching a fresh file to WAL
  // after it is named rewrites page 1 through a rollback journal on disk, and a job killed then
  // (or a disk failing then) left a hot journal that made the trace unreadable without write
  // access (tests/fault/kill_test.cpp).
  if (!options.scratch && image_size > 19) image[18] = image[19] = 2;
  try {
    publish_image(path, image, static_cast<size_t>(image_size));
  } catch (...) {
    sqlite3_free(image);
    throw;
  }
  sqlite3_free(image);

  std::unique_ptr<Writer> w(new Writer(path, open_rw(path)));
  // WAL: readers (c3scope info on a running job) never block the writer, and a killed writer
  // loses only its uncommitted transaction. synchronous=OFF: committed data survives the job
  // being killed (the OS still has it); only a machine crash can lose the last commits, which a
  // profiler can afford, and no fsync stalls the writer.
  w->scratch_ = options.scratch;
  w->exec(options.scratch ? "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
                            "PRAGMA cache_size=-65536;"
                          : kWriterPragmas);
  w->exec("BEGIN;");
  w->in_txn_ = true;
  return w;
}

Writer::Writer(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

std::unique_ptr<Writer> Writer::borrow(sqlite3* db, const std::string& path) {
  std::unique_ptr<Writer> w(new Writer(path, db));
  w->owned_ = false;
  return w;
}

Writer::~Writer() {
  for (auto& [t, s] : inserts_) sqlite3_finalize(s);
  sqlite3_finalize(stat_upsert_);
  sqlite3_finalize(meta_upsert_);
  if (!owned_) return;
  if (db_ && in_txn_ && !closed_) {
    // Best effort: keep what was written so far.
    sqlite3_exec(db_, "COMMIT;", nullptr, nullptr, nullptr);
  }
  sqlite3_close_v2(db_);
}

void Writer::fail(const std::string& what) const {
  int code = sqlite3_extended_errcode(db_);
  int primary = code & 0xff;
  auto kind = (primary == SQLITE_FULL || primary == SQLITE_IOERR || primary == SQLITE_CANTOPEN ||
               primary == SQLITE_READONLY)
                  ? WriteError::Kind::io
                  : WriteError::Kind::other;
  throw WriteError(kind, "trace '" + path_ + "': " + what + ": " + sqlite3_errmsg(db_));
}

void Writer::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "error";
    sqlite3_free(err);
    fail("SQL failed (" + msg + ")");
  }
}

sqlite3_stmt* Writer::prepare(const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v3(db_, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) !=
      SQLITE_OK) {
    fail("cannot prepare '" + sql + "'");
  }
  return s;
}

sqlite3_stmt* Writer::prepare_insert(const TableDesc& table) {
  auto it = inserts_.find(&table);
  if (it != inserts_.end()) return it->second;
  std::string sql = "INSERT INTO " + std::string(table.name) + " VALUES (";
  for (size_t i = 0; i < table.columns.size(); ++i) sql += i ? ",?" : "?";
  sql += ")";
  sqlite3_stmt* s = prepare(sql);
  inserts_.emplace(&table, s);
  return s;
}

int64_t Writer::rows_in(std::string_view table) const {
  for (const auto& [t, n] : table_rows_) {
    if (t->name == table) return n;
  }
  return 0;
}

int64_t Writer::step_insert(sqlite3_stmt* stmt, const TableDesc* table) {
  int rc = sqlite3_step(stmt);
  sqlite3_reset(stmt);
  if (rc != SQLITE_DONE) fail("insert failed");
  ++rows_;
  if (table != nullptr) ++table_rows_[table];
  return sqlite3_last_insert_rowid(db_);
}

#define C3_DEFINE_INSERT(sqlname, Row, COLS, doc)         \
  int64_t Writer::insert(const Row& row) {                \
    sqlite3_stmt* stmt = prepare_insert(table_of<Row>()); \
    bind_row(stmt, row);                                  \
    return step_insert(stmt, &table_of<Row>());           \
  }
C3_TABLES(C3_DEFINE_INSERT)
#undef C3_DEFINE_INSERT

int64_t Writer::intern(std::string_view value) {
  // Heterogeneous lookup would avoid this copy; the string table is small and hits dominate.
  std::string key(value);
  auto it = strings_.find(key);
  if (it != strings_.end()) return it->second;
  StringRow row;
  row.value = key;
  int64_t id = insert(row);
  strings_.emplace(std::move(key), id);
  last_string_id_ = std::max(last_string_id_, id);
  return id;
}

void Writer::set_meta(std::string_view key, std::string_view value) {
  if (!meta_upsert_)
    meta_upsert_ = prepare("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
  sqlite3_bind_text(meta_upsert_, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(meta_upsert_, 2, value.data(), static_cast<int>(value.size()),
                    SQLITE_TRANSIENT);
  step_insert(meta_upsert_, nullptr);
}

void Writer::set_stat(std::optional<int64_t> process_id, std::string_view name, int64_t value,
                      const std::optional<std::string>& detail) {
  if (!stat_upsert_) {
    // One row per (process, counter): delete-then-insert keeps it simple without a UNIQUE index
    // (process_id may be NULL, and NULLs never collide in UNIQUE constraints).
    stat_upsert_ = prepare("DELETE FROM stats WHERE process_id IS ?1 AND name = ?2");
  }
  sqlite3_bind_null(stat_upsert_, 1);
  if (process_id) sqlite3_bind_int64(stat_upsert_, 1, *process_id);
  sqlite3_bind_text(stat_upsert_, 2, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT);
  int rc = sqlite3_step(stat_upsert_);
  sqlite3_reset(stat_upsert_);
  if (rc != SQLITE_DONE) fail("stats update failed");
  StatsRow row;
  row.process_id = process_id;
  row.name = std::string(name);
  row.value = value;
  row.detail = detail;
  insert(row);
}

void Writer::require_owned(const char* done) const {
  if (!owned_) {
    throw WriteError(WriteError::Kind::other,
                     "trace '" + path_ + "': a borrowed connection is " + done + " by its owner");
  }
}

void Writer::mark_committed() {
  rows_committed_ = rows_;
  table_rows_committed_ = table_rows_;
  committed_string_id_ = last_string_id_;
}

void Writer::commit() {
  require_owned("committed");
  if (closed_) return;
  if (in_txn_) {
    exec("COMMIT;");
    in_txn_ = false;
  }
  mark_committed();
  exec("BEGIN;");
  in_txn_ = true;
}

void Writer::rollback() {
  require_owned("rolled back");
  if (closed_) return;
  // SQLite ends the transaction itself on I/O errors and a full disk; otherwise it is still open.
  if (!sqlite3_get_autocommit(db_)) exec("ROLLBACK;");
  in_txn_ = false;
  std::erase_if(strings_, [&](const auto& kv) { return kv.second > committed_string_id_; });
  last_string_id_ = committed_string_id_;
  rows_ = rows_committed_;
  table_rows_ = table_rows_committed_;
  exec("BEGIN;");
  in_txn_ = true;
}

void Writer::close() {
  require_owned("closed");
  if (closed_) return;
  if (!scratch_) exec(create_indexes_sql());
  set_meta("clean_close", "1");
  exec("COMMIT;");
  in_txn_ = false;
  mark_committed();
  closed_ = true;
  // Leave one self-contained file that can be copied or mailed: checkpoint and drop the WAL.
  // Best effort: a failure (a full disk) loses nothing committed (see writer.h). Through an
  // in-memory journal: leaving WAL rewrites the header of page 1, and a disk journal that could
  // not be played back (a full copy-on-write disk) would be hot, and the trace unreadable
  // without write access. A torn header write is harmless: the page is otherwise unchanged.
  // Tried twice, for a transient error.
  for (int attempt = 0; !scratch_ && attempt < 2; ++attempt) {
    if (sqlite3_exec(db_, "PRAGMA journal_mode=MEMORY;", nullptr, nullptr, nullptr) == SQLITE_OK)
      break;
  }
}

}  // namespace c3::tracedb
