// Batched, prepared-statement writer for one trace file.
//
// One Writer is owned by one thread (the collector's background writer, or an importer): it is
// not thread-safe. Rows go into an open transaction that commit() ends; the collector commits at
// least every C3SCOPE_FLUSH_MS so a killed job leaves a readable file missing at most that
// window. The file is created exclusively: an existing file is never overwritten.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include "c3/tracedb/schema.h"
#include "c3/tracedb/sink.h"
#include "c3/tracedb/version.h"

struct sqlite3;
struct sqlite3_stmt;

namespace c3::tracedb {

// A writer failure: full disk, unwritable path, existing file. what() is one line naming the file.
class WriteError : public std::runtime_error {
 public:
  enum class Kind { exists, io, other };
  WriteError(Kind kind, const std::string& msg) : std::runtime_error(msg), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

// The connection settings every trace is written with (journal, sync, cache).
extern const char* const kWriterPragmas;

struct WriterOptions {
  std::string source = "collector";  // meta.source: 'collector' or 'importer:<format>'
  std::string source_file;           // meta.source_file for importers
  std::string c3scope_version = kC3scopeVersion;
  // A scratch file (a conversion that lives only while it is read): no journal
  // and no indexes, which a file nobody else reads, and that a crash would delete anyway, does
  // not need. Everything else is the same.
  bool scratch = false;
};

class Writer final : public RowSink {
 public:
  // Creates `path` (must not exist), the schema and meta rows, and opens a transaction.
  static std::unique_ptr<Writer> create(const std::string& path, const WriterOptions& options = {});
  // A writer over a connection someone else owns (the collector's, lent by
  // c3scope_trace_append): inserts go into the owner's open transaction; commit() and close()
  // are not allowed, and the destructor leaves the connection as it is.
  static std::unique_ptr<Writer> borrow(sqlite3* db, const std::string& path);
  ~Writer() override;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Insert one row; returns its rowid. Throws WriteError.
#define C3_DECLARE_INSERT(sqlname, Row, COLS, doc) int64_t insert(const Row& row) override;
  C3_TABLES(C3_DECLARE_INSERT)
#undef C3_DECLARE_INSERT

  // string.id of `value`, inserting it the first time it is seen.
  int64_t intern(std::string_view value) override;
  void set_meta(std::string_view key, std::string_view value) override;
  // Sets (replaces) a counter row in stats for process `process_id` (nullopt: whole file).
  void set_stat(std::optional<int64_t> process_id, std::string_view name, int64_t value,
                const std::optional<std::string>& detail = std::nullopt);
  // Runs arbitrary SQL inside the open transaction (used for updates such as process.end_ns).
  void exec(const std::string& sql);

  // Ends the open transaction and starts the next one.
  void commit();
  // After a failed insert or commit: discards the open transaction (every row since the last
  // commit; SQLite may have rolled it back already) and starts the next one. Strings interned
  // since the last commit are forgotten, so later rows never point at a discarded string row.
  void rollback();
  // Rows inserted since the last commit (what a failed commit loses).
  int64_t rows_pending() const {
    return rows_ - rows_committed_;
  }
  // Commits, creates indexes, marks the file cleanly closed and leaves a single file (no -wal).
  // Once the commit succeeded nothing is thrown: if the WAL cannot be folded into the file, the
  // pair stays readable and SQLite folds it when the connection closes or at the next open.
  void close();

  const std::string& path() const {
    return path_;
  }
  // The connection (for c3scope_trace_append, which lends it to the traced program).
  sqlite3* handle() const {
    return db_;
  }
  int64_t rows_written() const {
    return rows_;
  }
  // Rows written to one table (rolled-back rows not counted).
  int64_t rows_in(std::string_view table) const;

 private:
  Writer(std::string path, sqlite3* db);
  sqlite3_stmt* prepare_insert(const TableDesc& table);
  sqlite3_stmt* prepare(const std::string& sql);
  [[noreturn]] void fail(const std::string& what) const;
  int64_t step_insert(sqlite3_stmt* stmt, const TableDesc* table);
  // Throws unless this writer opened its connection: a borrowed one is `done` ("committed",
  // "rolled back", "closed") by its owner.
  void require_owned(const char* done) const;
  // After a COMMIT: what a rollback goes back to.
  void mark_committed();

  std::string path_;
  sqlite3* db_ = nullptr;
  std::unordered_map<const TableDesc*, sqlite3_stmt*> inserts_;
  sqlite3_stmt* stat_upsert_ = nullptr;
  sqlite3_stmt* meta_upsert_ = nullptr;
  std::unordered_map<std::string, int64_t> strings_;
  bool in_txn_ = false;
  bool closed_ = false;
  bool scratch_ = false;
  bool owned_ = true;
  int64_t rows_ = 0;
  int64_t rows_committed_ = 0;
  std::unordered_map<const TableDesc*, int64_t> table_rows_, table_rows_committed_;
  int64_t last_string_id_ = 0;       // the newest string row
  int64_t committed_string_id_ = 0;  // the newest string row of the last commit
};

}  // namespace c3::tracedb
