// Test helper: turns a trace file of this build into what the schema v2 writer left, to check
// the migration on open (Reader) and what the analyzer and the GUI make of such a file.
#pragma once

#include <sqlite3.h>

#include <stdexcept>
#include <string>

#include "c3/tracedb/schema.h"

namespace c3::test {

// bench_result without the typed configuration columns v3 added (C3_BENCH_CONFIG_COLUMNS): the
// table as v2 created it, holding the same rows; PRAGMA user_version and meta say 2.
inline void make_schema_v2(const std::string& path) {
  std::string sql;
#define C3_DROP_COLUMN(name, type, s, doc) sql += "ALTER TABLE bench_result DROP COLUMN " #name ";";
  C3_BENCH_CONFIG_COLUMNS(C3_DROP_COLUMN)
#undef C3_DROP_COLUMN
  sql += "PRAGMA user_version = 2; UPDATE meta SET value = '2' WHERE key = 'schema_version';";
  sqlite3* db = nullptr;
  const bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
                  sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  const std::string why = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
  sqlite3_close(db);
  if (!ok) throw std::runtime_error("make_schema_v2 " + path + ": " + why);
}

}  // namespace c3::test
