#include "migrate.h"

#include <sqlite3.h>

#include <optional>
#include <set>
#include <string_view>

#include "c3/tracedb/bench_label.h"
#include "c3/tracedb/reader.h"
#include "c3/tracedb/schema.h"

namespace c3::tracedb {
namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& path, int from_version) {
  throw ReadError(ReadError::Kind::corrupt, "'" + path + "': cannot migrate schema v" +
                                                std::to_string(from_version) + ": " +
                                                sqlite3_errmsg(db));
}

void exec(sqlite3* db, const std::string& sql, const std::string& path, int from_version) {
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    fail(db, path, from_version);
  }
}

const TableDesc* table_named(std::string_view name) {
  for (const auto& t : tables()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

// Columns of the file's own table `name` (main schema); empty when the file has no such table.
std::set<std::string> file_columns(sqlite3* db, std::string_view name) {
  std::set<std::string> out;
  // The pragma itself, not pragma_table_info(): the reader's authorizer (harden.h) allows it.
  Query q(db, "PRAGMA main.table_info(\"" + std::string(name) + "\")");
  while (q.step()) out.insert(q.text(1));
  return out;
}

// bench_result of a v2 file: the typed configuration read from each row's label.
void fill_bench_config(sqlite3* db) {
  // Plain "?" parameters are numbered in the order they appear: the binds below follow it.
  std::string set = "compute = ?, comm = ?, comm_bytes = ?";
#define C3_SET_COLUMN(name, type, sql, doc) set += ", " #name " = ?";
  C3_BENCH_CONFIG_COLUMNS(C3_SET_COLUMN)
#undef C3_SET_COLUMN
  Query update(db, "UPDATE temp.bench_result SET " + set + " WHERE id = ?");
  Query rows(db, "SELECT id, label, compute, comm, comm_bytes FROM temp.bench_result");
  while (rows.step()) {
    BenchResultRow row;
    row.id = rows.i64(0);
    rows.columns(1, row.label, row.compute, row.comm, row.comm_bytes);
    if (!config_from_label(row)) continue;
    int i = 0;
    auto bind = [&](const auto& v) { update.bind(++i, v); };
    bind(row.compute);
    bind(row.comm);
    bind(row.comm_bytes);
#define C3_BIND_COLUMN(name, type, sql, doc) bind(row.name);
    C3_BENCH_CONFIG_COLUMNS(C3_BIND_COLUMN)
#undef C3_BIND_COLUMN
    update.bind(++i, *row.id);
    update.step();
    update.reset();
  }
}

}  // namespace

void migrate(sqlite3* db, int from_version, const std::string& path) {
  exec(db, "BEGIN", path, from_version);
  exec(db, migration_sql(from_version, /*temp=*/true), path, from_version);
  for (const Migration& m : migrations()) {
    if (m.to_version <= from_version) continue;
    for (std::string_view name : m.rebuilt_tables) {
      const TableDesc* t = table_named(name);
      const std::set<std::string> had = file_columns(db, name);
      if (t == nullptr || had.empty()) continue;  // added later than the file: created above
      std::string common;
      for (const ColumnDesc& c : t->columns) {
        if (had.count(std::string(c.name)) == 0) continue;
        common += (common.empty() ? "" : ", ") + std::string(c.name);
      }
      // A TEMP table of this build's columns, shadowing the file's, holding its rows.
      std::string sql = create_table_sql(*t, /*temp=*/true);
      sql.append("INSERT INTO temp.").append(name).append(" (").append(common);
      sql.append(") SELECT ").append(common).append(" FROM main.").append(name).append(";");
      exec(db, sql, path, from_version);
      if (name == "bench_result") fill_bench_config(db);
    }
  }
  exec(db, "COMMIT", path, from_version);
}

}  // namespace c3::tracedb
