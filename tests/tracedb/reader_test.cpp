#include "c3/tracedb/reader.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "c3/tracedb/harden.h"
#include "c3/tracedb/writer.h"

namespace fs = std::filesystem;
using namespace c3::tracedb;

namespace {

class ReaderErrors : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() / ("c3scope-reader-" + std::to_string(getpid()));
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  std::string file(const std::string& n) { return (dir / n).string(); }

  // Opens `path` expecting a ReadError of `kind` whose one-line message contains `needle`.
  void expect_error(const std::string& path, ReadError::Kind kind, const std::string& needle) {
    try {
      Reader::open(path);
      FAIL() << "expected ReadError for " << path;
    } catch (const ReadError& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      std::string msg = e.what();
      EXPECT_NE(msg.find(needle), std::string::npos) << msg;
      EXPECT_NE(msg.find(path), std::string::npos) << "message must name the file: " << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;
    }
  }

  void sql_file(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
  }
};

}  // namespace

TEST_F(ReaderErrors, MissingFile) {
  expect_error(file("nope.sqlite"), ReadError::Kind::missing, "No such file");
}

TEST_F(ReaderErrors, Directory) {
  expect_error(dir.string(), ReadError::Kind::missing, "directory");
}

TEST_F(ReaderErrors, EmptyFile) {
  std::ofstream(file("empty.sqlite")).close();
  expect_error(file("empty.sqlite"), ReadError::Kind::not_sqlite, "empty");
}

TEST_F(ReaderErrors, NotSqlite) {
  std::ofstream(file("trace.json")) << "{\"traceEvents\": []}";
  expect_error(file("trace.json"), ReadError::Kind::not_sqlite, "not an SQLite file");
}

TEST_F(ReaderErrors, SqliteButNotOurs) {
  sql_file(file("other.sqlite"), "CREATE TABLE TARGET_INFO_GPU (id INTEGER);");
  expect_error(file("other.sqlite"), ReadError::Kind::not_c3scope, "not a c3scope trace");
}

TEST_F(ReaderErrors, TooNewNamesBothVersions) {
  sql_file(file("new.sqlite"),
           "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES "
           "('schema_version','999'),('c3scope_version','9.9.9'); PRAGMA user_version = 999;");
  expect_error(file("new.sqlite"), ReadError::Kind::too_new, "v999");
  try {
    Reader::open(file("new.sqlite"));
  } catch (const ReadError& e) {
    EXPECT_NE(std::string(e.what()).find("v" + std::to_string(kSchemaVersion)), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("9.9.9"), std::string::npos);
  }
}

TEST_F(ReaderErrors, TooOldNamesBothVersions) {
  sql_file(file("old.sqlite"),
           "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT); INSERT INTO meta VALUES "
           "('schema_version','0'); PRAGMA user_version = 0;");
  expect_error(file("old.sqlite"), ReadError::Kind::too_old, "v0");
  try {
    Reader::open(file("old.sqlite"));
  } catch (const ReadError& e) {
    EXPECT_NE(std::string(e.what()).find("v" + std::to_string(kOldestReadableVersion)),
              std::string::npos);
  }
}

TEST_F(ReaderErrors, DamagedFileIsAnErrorNotACrash) {
  {
    auto w = Writer::create(file("good.sqlite"));
    w->close();
  }
  // Keep the header, destroy the rest.
  std::fstream f(file("good.sqlite"), std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(100);
  std::string junk(4000, '\xAB');
  f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  f.close();
  try {
    Reader::open(file("good.sqlite"));
    FAIL() << "expected ReadError";
  } catch (const ReadError& e) {
    EXPECT_NE(std::string(e.what()).find(file("good.sqlite")), std::string::npos);
  }
}

TEST_F(ReaderErrors, OpensReadOnly) {
  {
    auto w = Writer::create(file("ro.sqlite"));
    w->close();
  }
  auto r = Reader::open(file("ro.sqlite"));
  EXPECT_NE(sqlite3_exec(r->db(), "CREATE TABLE x (a);", nullptr, nullptr, nullptr), SQLITE_OK);
}

// A path the user wrote with a leading "//" (POSIX reads it as "/") and names with URI
// characters are paths, not a URI authority or query: the same file opens, read-only.
TEST_F(ReaderErrors, PathsThatLookLikeUriPartsStayPaths) {
  const std::string name = file("a?b#c%20.sqlite");
  {
    auto w = Writer::create(name);
    w->close();
  }
  for (const std::string& path : {name, "/" + name}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(read_only_uri(path).rfind("file:///", 0), 0u);
    sqlite3* db = open_read_only(path);
    EXPECT_EQ(sqlite3_exec(db, "SELECT count(*) FROM process", nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    Reader::open(path);
  }
  EXPECT_FALSE(fs::exists(name + "-journal"));
}

// A version-1 trace (before the c3bench tables) opens with those tables present and empty, as
// TEMP tables of the reading connection, and the file itself is left as it was.
TEST_F(ReaderErrors, MigratesVersion1OnRead) {
  const std::string path = file("v1.sqlite");
  {
    auto w = Writer::create(path);
    ProcessRow p;
    p.pid = 42;
    p.host = "h";
    p.command_line = "x";
    p.start_ns = 1;
    p.trace_clock = "CLOCK_MONOTONIC";
    w->insert(p);
    w->close();
  }
  // Make it what a v1 writer left: no bench tables, version 1.
  sql_file(path,
           "DROP TABLE bench_result; DROP TABLE bench_run; PRAGMA user_version=1; "
           "UPDATE meta SET value='1' WHERE key='schema_version';");
  ASSERT_FALSE(migration_sql(1, true).empty());
  EXPECT_TRUE(migration_sql(kSchemaVersion, true).empty());
  auto r = Reader::open(path);
  EXPECT_EQ(r->schema_version(), 1);
  EXPECT_TRUE(r->has_table("bench_run"));
  EXPECT_TRUE(r->has_table("bench_result"));
  EXPECT_EQ(r->count("bench_result"), 0);
  EXPECT_EQ(r->count("process"), 1);
  // Every query of this build runs: a join over the migrated tables.
  auto q = r->query("SELECT COUNT(*) FROM bench_result JOIN bench_run ON bench_run.id = run_id");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 0);
  r.reset();
  // The file was not modified.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM sqlite_master WHERE name='bench_run'", -1,
                               &st, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(st, 0), 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
}

// ---- The hardened connection (harden.h): SQLite's "Defense Against the Dark Arts".

namespace {

// Whether `sql` prepares and runs to the end on `db`; `why` gets SQLite's message otherwise.
bool runs(sqlite3* db, const std::string& sql, std::string* why = nullptr) {
  char* err = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  if (why != nullptr) *why = err != nullptr ? err : "";
  sqlite3_free(err);
  return rc == SQLITE_OK;
}

}  // namespace

TEST_F(ReaderErrors, HardenedConnectionReadsOnly) {
  {
    auto w = Writer::create(file("h.sqlite"));
    w->close();
  }
  sql_file(file("h.sqlite"), "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (3);");
  sqlite3* db = open_read_only(file("h.sqlite"));
  std::string why;
  // No ATTACH (another file, writable), no writes, no changes to the schema.
  EXPECT_FALSE(runs(db, "ATTACH '" + file("other.sqlite") + "' AS o", &why));
  EXPECT_NE(why.find("not authorized"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(file("other.sqlite")));
  EXPECT_FALSE(runs(db, "PRAGMA user_version = 7"));
  EXPECT_FALSE(runs(db, "PRAGMA writable_schema = ON"));
  EXPECT_FALSE(runs(db, "CREATE TABLE x (a)"));
  // No recursive query, not even a finite one.
  EXPECT_FALSE(runs(db,
                    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c "
                    "WHERE x < 3) SELECT * FROM c",
                    &why));
  EXPECT_NE(why.find("not authorized"), std::string::npos) << why;
  // Reads, and the TEMP schema, are allowed.
  EXPECT_TRUE(runs(db, "SELECT count(*) FROM t"));
  EXPECT_TRUE(runs(db, "CREATE TEMP TABLE scratch (a); INSERT INTO temp.scratch VALUES (1)"));
  // The limits.
  EXPECT_EQ(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1), kValueBytesLimit);
  EXPECT_EQ(sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, -1), 0);
  EXPECT_FALSE(runs(db, "SELECT zeroblob(" + std::to_string(kValueBytesLimit + 1) + ")", &why));
  EXPECT_NE(why.find("too big"), std::string::npos) << why;
  int on = -1;
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, -1, &on);
  EXPECT_EQ(on, 1);
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &on);
  EXPECT_EQ(on, 0);
  sqlite3_close(db);
}

// A query that would run for hours ends at the connection's work budget, one line naming the
// file and the table.
TEST_F(ReaderErrors, WorkBudgetEndsAQueryThatRunsOn) {
  sql_file(file("b.sqlite"),
           "CREATE TABLE t (a INTEGER);"
           "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000) "
           "INSERT INTO t SELECT x FROM c;");
  ::setenv("C3SCOPE_READ_BUDGET", "5", 1);  // 5 million steps
  sqlite3* db = open_read_only(file("b.sqlite"));
  ::unsetenv("C3SCOPE_READ_BUDGET");
  try {
    Query q(db, "SELECT count(*) FROM t a, t b, t c, t d");
    q.step();
    FAIL() << "the budget did not stop a 10^12-row join";
  } catch (const ReadError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.kind(), ReadError::Kind::hostile) << msg;
    EXPECT_NE(msg.find("'" + file("b.sqlite") + "' needs more SQLite work"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("(reading table `t`)"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  sqlite3_close(db);
  EXPECT_EQ(read_budget(0), read_budget(-5));
  EXPECT_GT(read_budget(int64_t{1} << 30), read_budget(0));
}

// A view (or a computed column) where the schema has a table is refused by name; the file's
// versions of c3scope's own views are never run.
TEST_F(ReaderErrors, ViewsWhereTablesBelongAreRefused) {
  for (const std::string& hostile :
       {std::string("ALTER TABLE kernel RENAME TO k; CREATE VIEW kernel AS SELECT * FROM k;"),
        std::string("DROP TABLE meta; CREATE VIEW META AS WITH RECURSIVE c(x) AS (SELECT 1 "
                    "UNION ALL SELECT x + 1 FROM c) SELECT 'schema_version' AS key, x AS value "
                    "FROM c;"),
        std::string("DROP TABLE string; CREATE TABLE string (id INTEGER PRIMARY KEY, value TEXT "
                    "AS (hex(zeroblob(1000000))));")}) {
    const std::string path = file("v.sqlite");
    fs::remove(path);
    {
      auto w = Writer::create(path);
      w->close();
    }
    sql_file(path, hostile);
    expect_error(path, ReadError::Kind::hostile, "where a table belongs");
  }
  const std::string path = file("own.sqlite");
  {
    auto w = Writer::create(path);
    w->close();
  }
  sql_file(path,
           "DROP VIEW gpu_activity; CREATE VIEW gpu_activity AS WITH RECURSIVE c(x) AS (SELECT 1 "
           "UNION ALL SELECT x + 1 FROM c) SELECT x AS kind FROM c;");
  auto r = Reader::open(path);
  auto q = r->query("SELECT COUNT(*) FROM gpu_activity");
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.i64(0), 0);
}

// Values are not trusted: text is cut at its cap (and counted), an integer column holding text
// marks the row.
TEST_F(ReaderErrors, LongTextIsCutAndWrongTypesAreNamed) {
  const std::string path = file("t.sqlite");
  {
    auto w = Writer::create(path);
    w->close();
  }
  sql_file(path,
           "INSERT INTO string VALUES (1, 'x' || replace(hex(zeroblob(3000)), '00', 'é')), "
           "(2, 'short'); INSERT INTO meta VALUES ('n', 'twelve');");
  auto r = Reader::open(path);
  auto q = r->query("SELECT value FROM string ORDER BY id");
  q.cap(0, 101);
  ASSERT_TRUE(q.step());
  const std::string cut = q.text(0);
  EXPECT_EQ(cut.size(), 101u);  // 'x' and 50 two-byte characters: never half of one
  ASSERT_TRUE(q.step());
  EXPECT_EQ(q.text(0), "short");
  EXPECT_EQ(q.cuts(), 1);
  EXPECT_EQ(q.first_cut(), "column `value` of 6001 bytes, cut to 101");
  auto m = r->query("SELECT value FROM meta WHERE key = 'n'");
  ASSERT_TRUE(m.step());
  EXPECT_EQ(m.i64(0), 0);
  EXPECT_EQ(m.row_problem(), "column `value` holds text, not an integer");
  std::string s = "ab\xC3\xA9";
  EXPECT_TRUE(cap_text(s, 3));
  EXPECT_EQ(s, "ab");
  EXPECT_EQ(table_of("SELECT a, (SELECT v FROM s WHERE id = a) FROM \"t\" ORDER BY a"), "t");
}

// A statement's failure named "not an error" once the failed statement was finalized: the reason
// is the code of the call that failed.
TEST_F(ReaderErrors, FailureIsTheCallsNotTheConnections) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  const std::string why = sqlite_failure(db, SQLITE_CORRUPT, "x.sqlite");
  EXPECT_EQ(why.find("not an error"), std::string::npos) << why;
  EXPECT_NE(why.find("damaged"), std::string::npos) << why;
  sqlite3_close(db);
}
