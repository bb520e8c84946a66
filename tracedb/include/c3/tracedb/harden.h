// Every SQLite file c3scope reads (its own traces, Nsight Systems exports) is untrusted: a file
// can hold views or triggers in place of tables, queries that never end, values of any size and
// of any type. harden() sets up a connection the way SQLite's "Defense Against the Dark Arts"
// (sqlite.org/security.html) says; the caps below bound what a reader takes from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;

namespace c3::tracedb {

// The longest value (string or blob) SQLite hands over, in bytes (SQLITE_LIMIT_LENGTH): a longer
// one fails the read with one line (a 100 MB host name ended in bad_alloc).
constexpr int kValueBytesLimit = 16 << 20;
// Caps on the strings a reader keeps (docs/outputs.md, "Reading"): a longer value is cut at the
// cap (on a UTF-8 character boundary) and counted. Names (kernels, NVTX ranges, domains, hosts,
// devices, operations) are at most a few hundred bytes in real traces, the longest C++ template
// kernel names a few KiB; a command line may be long (a launcher's argument list).
constexpr size_t kNameCap = 4096;
constexpr size_t kCommandLineCap = 64 << 10;
// Any other text column (stats details, meta values, labels).
constexpr size_t kTextCap = 64 << 10;

// Cuts `s` to at most `cap` bytes, at a UTF-8 character boundary; whether it cut.
bool cap_text(std::string& s, size_t cap);

// The SQLite work one connection may do, in virtual-machine steps, for a file of `file_bytes`:
// enough to read every row of any real file several times over, finite for a view or query
// that never ends. C3SCOPE_READ_BUDGET (millions of steps) replaces it.
int64_t read_budget(int64_t file_bytes);

// Hardens a connection just opened on the untrusted file `path` (of `file_bytes` bytes) for
// reading; throws ReadError (one line naming the file) when the file's schema cannot be parsed.
// Reading with it: only SELECTs, pragmas that read, and writes to the TEMP schema (read-time
// migrations, c3scope's own views) are allowed; the file's views and triggers do not run; a
// statement stops (SQLITE_INTERRUPT) when the command was cancelled (cancel_requested(),
// output_file.h) or the connection spent its read_budget().
void harden(sqlite3* db, const std::string& path, int64_t file_bytes);

// Why the last statement run on this thread was stopped by harden()'s progress handler ("" when
// it was not): the work budget, or a signal. Cleared by reading it.
std::string take_stop_reason();

// The path harden() was given for `db` (the file's name as the user wrote it), for messages.
std::string read_path(sqlite3* db);

// The table a statement reads first (the name after its first FROM), for messages.
std::string table_of(std::string_view sql);

}  // namespace c3::tracedb
