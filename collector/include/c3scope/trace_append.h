/* c3scope_trace_append: how a traced program adds rows of its own to the trace the collector
   writes for it (c3bench stores its bench_run / bench_result tables this way, so a recorded
   run carries its results next to its timeline).

   The collector exports the function; a program looks it up at run time, so it runs the same
   with or without the collector:

     auto* append = reinterpret_cast<c3scope_trace_append_fn>(
         dlsym(RTLD_DEFAULT, C3SCOPE_TRACE_APPEND_SYMBOL));

   `fn` runs on the calling thread with the trace's SQLite connection (a sqlite3*) and its
   path, inside a savepoint of the collector's open transaction, while the collector's writer
   waits: it must only insert rows into tables of schema version `schema_version`, and not
   commit. Returning non-zero from fn rolls its rows back. */
#ifndef C3SCOPE_TRACE_APPEND_H
#define C3SCOPE_TRACE_APPEND_H

#ifdef __cplusplus
extern "C" {
#endif

#define C3SCOPE_TRACE_APPEND_SYMBOL "c3scope_trace_append"

enum {
  C3SCOPE_APPEND_OK = 0,
  C3SCOPE_APPEND_SCHEMA_MISMATCH = -1, /* the collector writes another schema version */
  C3SCOPE_APPEND_NO_TRACE = -2,        /* recording is off, failed or already finished */
  C3SCOPE_APPEND_FAILED = -3           /* fn returned non-zero, or SQLite failed: rolled back */
};

typedef int (*c3scope_trace_append_cb)(void* sqlite_db, const char* trace_path, void* ctx);
typedef int (*c3scope_trace_append_fn)(int schema_version, c3scope_trace_append_cb fn, void* ctx);

#ifdef __cplusplus
}
#endif

#endif
