#include "c3/tracedb/schema.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <fstream>
#include <set>
#include <sstream>

using namespace c3::tracedb;

// docs/schema.md is generated from schema.h; regenerate with
// `build/bin/c3scope schema > docs/schema.md` when this fails.
TEST(Schema, DocMatchesDeclaration) {
  std::ifstream in(C3_SOURCE_DIR "/docs/schema.md");
  ASSERT_TRUE(in) << "docs/schema.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), schema_markdown())
      << "docs/schema.md is stale: run build/bin/c3scope schema > docs/schema.md";
}

TEST(Schema, EveryColumnDocumentedAndDdlValid) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
  std::string ddl = create_tables_sql() + create_views_sql() + create_indexes_sql();
  char* err = nullptr;
  ASSERT_EQ(sqlite3_exec(db, ddl.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  for (const auto& t : tables()) {
    EXPECT_FALSE(t.doc.empty()) << t.name;
    for (const auto& c : t.columns) EXPECT_FALSE(c.doc.empty()) << t.name << "." << c.name;
  }
  // Views: the declared column list is exactly what SQLite sees.
  for (const auto& v : views()) {
    sqlite3_stmt* s = nullptr;
    std::string sql = "SELECT * FROM " + std::string(v.name);
    ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << v.name;
    ASSERT_EQ(static_cast<size_t>(sqlite3_column_count(s)), v.columns.size()) << v.name;
    for (int i = 0; i < sqlite3_column_count(s); ++i) {
      EXPECT_EQ(std::string(sqlite3_column_name(s, i)),
                std::string(v.columns[static_cast<size_t>(i)].name))
          << v.name;
    }
    sqlite3_finalize(s);
  }
  sqlite3_close(db);
}

TEST(Schema, ActivityTablesShareTheContractColumns) {
  for (const char* name : {"kernel", "memcpy", "memset", "sync"}) {
    std::set<std::string> cols;
    for (const auto& t : tables()) {
      if (t.name == name) {
        for (const auto& c : t.columns) cols.insert(std::string(c.name));
      }
    }
    for (const char* need :
         {"start_ns", "end_ns", "device_id", "stream_id", "correlation_id", "process_id"}) {
      EXPECT_TRUE(cols.count(need)) << name << " lacks " << need;
    }
  }
}
