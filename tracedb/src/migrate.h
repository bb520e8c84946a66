// Read-time migration of an older trace file (schema.h, Migration): what the reader runs on its
// read-only connection when it opens a file of an older schema version.
#pragma once

#include <string>

struct sqlite3;

namespace c3::tracedb {

// Brings the view `db` gives of a version-`from_version` file up to this build's schema with
// TEMP tables: empty ones for tables added since, and for tables whose columns changed a copy of
// the file's rows with the new columns filled (bench_result: from each row's label). Throws
// ReadError (corrupt) naming `path` when SQLite refuses.
void migrate(sqlite3* db, int from_version, const std::string& path);

}  // namespace c3::tracedb
