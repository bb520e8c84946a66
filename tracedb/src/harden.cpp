#include "c3/tracedb/harden.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "c3/tracedb/output_file.h"
#include "c3/tracedb/reader.h"

namespace c3::tracedb {
namespace {

// SQLite calls the progress handler every this many virtual-machine steps.
constexpr int kStepsPerCall = 1000;
// read_budget(): a floor for small files (a schema of ~100 tables and their pragmas, queries
// that find nothing) and steps per byte of file. Measured on real traces and Nsight exports:
// analyze, export, info and import take at most ~0.5 steps per byte (a full load and the
// Perfetto export's joins), so 64 per byte leaves a hundredfold margin.
constexpr int64_t kBudgetFloor = int64_t{1} << 28;  // ~1 s of SQLite work
constexpr int64_t kBudgetPerByte = 64;

// The path each hardened connection was opened on, for messages (read_path).
std::mutex g_paths_mu;
std::unordered_map<const sqlite3*, std::string> g_paths;

// What one connection may still do; lives as long as the connection.
struct Guard {
  Guard(sqlite3* d, std::string p, int64_t b) : db(d), path(std::move(p)), budget(b) {
    const std::lock_guard<std::mutex> lock(g_paths_mu);
    g_paths[db] = path;
  }
  ~Guard() {
    const std::lock_guard<std::mutex> lock(g_paths_mu);
    g_paths.erase(db);
  }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
  const sqlite3* db;
  std::string path;
  int64_t budget = 0;  // VM steps
  int64_t calls = 0;   // progress handler calls so far
};

// Why the progress handler stopped the statement running on this thread.
thread_local std::string t_stop_reason;

int on_progress(void* arg) {
  auto* g = static_cast<Guard*>(arg);
  if (cancel_requested()) {
    t_stop_reason = "interrupted by a signal";
    return 1;
  }
  if (++g->calls > g->budget / kStepsPerCall) {
    t_stop_reason = "needs more SQLite work than any real file of its size (" +
                    std::to_string(g->budget / 1000000) +
                    " million steps): it holds a query that does not end (a hostile or damaged "
                    "file; C3SCOPE_READ_BUDGET=<millions of steps> raises the budget)";
    return 1;
  }
  return 0;
}

bool same(const char* a, const char* b) {
  return a != nullptr && std::strcmp(a, b) == 0;
}

// 3. The statements a reader may prepare: reads, and writes to the TEMP schema only.
int authorize(void*, int action, const char* a1, const char* a2, const char* db, const char*) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_FUNCTION:     // with trusted_schema off, the file's schema calls none unsafe
    case SQLITE_TRANSACTION:  // a read-time migration's BEGIN/COMMIT (of TEMP tables)
      return SQLITE_OK;
    case SQLITE_PRAGMA:
      // Pragmas that read (user_version with a value would write; the checks are what a
      // caller asks for to tell a damaged file, never run on a file's behalf).
      if (same(a1, "table_info") || same(a1, "table_xinfo") || same(a1, "integrity_check") ||
          same(a1, "quick_check") || (same(a1, "user_version") && a2 == nullptr)) {
        return SQLITE_OK;
      }
      return SQLITE_DENY;
    case SQLITE_CREATE_TEMP_TABLE:  // migrate.h: TEMP tables shadow the file's
    case SQLITE_CREATE_TEMP_VIEW:   // c3scope's views, from this build's definitions
      return SQLITE_OK;
    case SQLITE_INSERT:
    case SQLITE_UPDATE:
    case SQLITE_DELETE:
      return same(db, "temp") ? SQLITE_OK : SQLITE_DENY;
    default:
      // ATTACH, DETACH, anything that creates, drops or changes the file, recursive queries
      // (no reader needs one: a view's never-ending WITH RECURSIVE is refused as it is
      // prepared).
      return SQLITE_DENY;
  }
}

std::string one_line_error(sqlite3* db) {
  std::string msg = sqlite3_errmsg(db);
  if (msg.size() > 200) msg = msg.substr(0, 200) + "...";
  return printable(msg);
}

}  // namespace

bool cap_text(std::string& s, size_t cap) {
  if (s.size() <= cap) return false;
  size_t n = cap;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  s.resize(n);
  return true;
}

int64_t read_budget(int64_t file_bytes) {
  if (const char* env = std::getenv("C3SCOPE_READ_BUDGET"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const long long millions = std::strtoll(env, &end, 10);
    if (end != nullptr && *end == '\0' && millions > 0 && millions < (int64_t{1} << 40)) {
      return millions * 1000000;
    }
  }
  const int64_t bytes = std::clamp<int64_t>(file_bytes, 0, int64_t{1} << 50);
  return kBudgetFloor + bytes * kBudgetPerByte;
}

std::string read_path(sqlite3* db) {
  {
    const std::lock_guard<std::mutex> lock(g_paths_mu);
    auto it = g_paths.find(db);
    if (it != g_paths.end()) return it->second;
  }
  const char* name = sqlite3_db_filename(db, "main");
  return name != nullptr && *name != '\0' ? name : ":memory:";
}

std::string take_stop_reason() {
  std::string r;
  r.swap(t_stop_reason);
  return r;
}

std::string table_of(std::string_view sql) {
  // The first FROM outside parentheses (a subquery's FROM names the table it looks up).
  int depth = 0;
  for (size_t at = 0; at < sql.size(); ++at) {
    if (sql[at] == '(') ++depth;
    if (sql[at] == ')') --depth;
    if (depth != 0 || sql.compare(at, 5, "FROM ") != 0) continue;
    size_t i = at + 5;
    while (i < sql.size() && sql[i] == ' ') ++i;
    std::string name;
    for (; i < sql.size(); ++i) {
      const char c = sql[i];
      if (c == '"') continue;
      if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '.') break;
      name += c;
    }
    if (!name.empty()) return name;
  }
  return {};
}

// SQLite's checklist for untrusted database files and SQL (sqlite.org/security.html), in its
// order; what c3scope does differently is said at each step.
void harden(sqlite3* db, const std::string& path, int64_t file_bytes) {
  auto fail = [&](const std::string& why) {
    throw ReadError(ReadError::Kind::corrupt, "'" + printable(path) + "' " + why);
  };
  // SQL: 1. Defensive mode: no writes to the schema or shadow tables, no journal tricks.
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  // Files: 4. The file's schema is not trusted: its views, triggers, generated columns and
  // CHECKs call no function with side effects.
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  // Beyond the checklist: the file's views and triggers do not run at all (TEMP ones still do:
  // c3scope's own views are made as TEMP views from this build's definitions, reader.h), nor
  // does anything a reader never needs.
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FKEY, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  // Double-quoted strings are names in c3scope's own SQL (DQS off for DML); the file's schema
  // keeps them (DDL), as older writers used them and they only make a name a string.
  sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 0, nullptr);
  // SQL: 2. Limits, the checklist's values where c3scope's own SQL and real files fit in them:
  sqlite3_limit(db, SQLITE_LIMIT_LENGTH, kValueBytesLimit);  // 1 MB there: see harden.h
  // 1 MiB (100,000 there): a file's CREATE statements are parsed under it too.
  sqlite3_limit(db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
  sqlite3_limit(db, SQLITE_LIMIT_COLUMN, 500);         // 100 there: Nsight tables are wide
  sqlite3_limit(db, SQLITE_LIMIT_EXPR_DEPTH, 100);     // 10 there: migrations' column lists
  sqlite3_limit(db, SQLITE_LIMIT_COMPOUND_SELECT, 4);  // 3 there: gpu_activity unites 3
  sqlite3_limit(db, SQLITE_LIMIT_VDBE_OP, 25000);
  sqlite3_limit(db, SQLITE_LIMIT_FUNCTION_ARG, 8);
  sqlite3_limit(db, SQLITE_LIMIT_ATTACHED, 0);
  sqlite3_limit(db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 50);
  sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, 250);  // 10 there: migrations bind ~40
  sqlite3_limit(db, SQLITE_LIMIT_TRIGGER_DEPTH, 1);      // triggers are off anyway
  // SQL: 5. (sqlite3_hard_heap_limit64) is not set: it is one limit for the whole process
  // (the GUI holds several files and its own data); the limits above and the budget below bound
  // what one file can make SQLite allocate.
  // Files: 2. and 3. Cell sizes checked as pages are read; no memory-mapped I/O (a file
  // changed under the reader would be read as it changes).
  for (const char* pragma : {"PRAGMA cell_size_check = ON", "PRAGMA mmap_size = 0"}) {
    if (sqlite3_exec(db, pragma, nullptr, nullptr, nullptr) != SQLITE_OK) {
      fail("cannot be read: " + one_line_error(db));
    }
  }
  // SQL: 4. A progress handler: the first SIGINT/SIGTERM stops a statement (the command then
  // cleans up and ends), and so does a connection's work budget.
  auto* guard = new Guard(db, path, read_budget(file_bytes));
  // The guard lives as long as the connection: a function's destructor frees it at close.
  if (sqlite3_create_function_v2(
          db, "c3scope_read_guard", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY, guard,
          [](sqlite3_context* c, int, sqlite3_value**) { sqlite3_result_null(c); }, nullptr,
          nullptr, [](void* p) { delete static_cast<Guard*>(p); }) != SQLITE_OK) {
    fail("cannot be read: " + one_line_error(db));
  }
  sqlite3_progress_handler(db, kStepsPerCall, on_progress, guard);
  // Files: 1. asks for PRAGMA quick_check first: it reads the whole file (minutes for a large
  // trace), so c3scope instead parses the schema now (as Chromium does), so a damaged schema
  // fails here with its reason, and relies on SQLITE_CORRUPT (and cell_size_check) while rows
  // are read.
  if (const int rc =
          sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
      rc != SQLITE_OK) {
    const std::string stop = take_stop_reason();
    fail(!stop.empty() ? stop + " (reading its schema)" : sqlite_failure(db, rc, path));
  }
  // 3. Last, so the pragmas above could run: an authorizer that allows reads only.
  sqlite3_set_authorizer(db, authorize, nullptr);
}

}  // namespace c3::tracedb
