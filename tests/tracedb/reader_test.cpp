#include "c3/tracedb/reader.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
