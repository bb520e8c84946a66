// libc3fault-vfs.so: a SQLite VFS that fails chosen I/O calls, for the writer's fault-injection
// tests only. Loaded next to the collector (LD_PRELOAD), its constructor registers a VFS that
// wraps the default one ("unix") as the new default, in the process's one libsqlite3.so.0: the
// collector links the system library dynamically, so the trace's connection goes through it.
//
//   C3_FAULT_OP     write | fsync | truncate | enospc | enospc-cow   (unset: count, fail nothing)
//   C3_FAULT_AT     N: the Nth call of that op fails (1-based; 0 or unset: none); for enospc
//                   the disk is full from the Nth write on
//   C3_FAULT_COUNT  how many calls fail from the Nth on (default 1; 0 = all)
//   C3_FAULT_FILE   only files whose name contains this text are counted and failed
//   C3_FAULT_LOG    path: "write W\nfsync F\ntruncate T\ninjected I\n" is written there when a
//                   counted file closes and at exit, so a test can sweep N over the real range
//
// write fails with SQLITE_IOERR_WRITE; calls after the failing ones succeed again (a transient
// fault). enospc is a disk that stays full, as ext4 or XFS see it: from the Nth write on, every
// write that would grow a file fails with SQLITE_FULL, while overwrites inside a file, deletes
// and truncates still work. enospc-cow is a full copy-on-write filesystem (btrfs, ZFS), where
// overwrites need free space too: every write from the Nth on fails. The first failing write is
// torn (its first half reaches the file), as a short write on a failing or full disk is.
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

enum class Op { none, write, fsync, truncate, enospc, enospc_cow };

// Plain data only: the constructor below may run before this library's C++ globals are built,
// and the destructor after they are gone.
struct Config {
  Op op;
  int64_t at;
  int64_t count;  // 0: every call from `at` on
  char file[256];
  char log[4096];
};

Config g_config;
sqlite3_vfs* g_root = nullptr;  // the VFS we wrap
sqlite3_vfs g_vfs;
sqlite3_io_methods g_methods;
std::atomic<int64_t> g_writes{0}, g_syncs{0}, g_truncates{0}, g_injected{0};

struct FaultFile {
  sqlite3_file base;
  sqlite3_file* real;  // the root VFS's file, allocated right after this struct
  bool counted;        // matches C3_FAULT_FILE
};

sqlite3_file* real_of(sqlite3_file* f) {
  return reinterpret_cast<FaultFile*>(f)->real;
}

void write_log() {
  if (!g_config.log[0]) return;
  char buf[160];
  int n = std::snprintf(
      buf, sizeof buf, "write %lld\nfsync %lld\ntruncate %lld\ninjected %lld\n",
      static_cast<long long>(g_writes.load()), static_cast<long long>(g_syncs.load()),
      static_cast<long long>(g_truncates.load()), static_cast<long long>(g_injected.load()));
  // Write-then-rename: a reader never sees a half-written log.
  char tmp[sizeof g_config.log + 8];
  std::snprintf(tmp, sizeof tmp, "%s.tmp", g_config.log);
  int fd = ::open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  ssize_t ignored = ::write(fd, buf, static_cast<size_t>(n));
  (void)ignored;
  ::close(fd);
  ::rename(tmp, g_config.log);
}

bool full_disk() {
  return g_config.op == Op::enospc || g_config.op == Op::enospc_cow;
}

// Counts one call of `op` on `f`; true when this call must fail (`grows`: a write past the end).
bool should_fail(sqlite3_file* f, Op op, std::atomic<int64_t>& counter, bool grows = true) {
  if (!reinterpret_cast<FaultFile*>(f)->counted) return false;
  const int64_t n = ++counter;
  const Op target = full_disk() ? Op::write : g_config.op;
  if (op != target || g_config.at <= 0 || n < g_config.at) return false;
  if (g_config.count > 0 && n >= g_config.at + g_config.count) return false;
  if (g_config.op == Op::enospc && !grows) return false;
  ++g_injected;
  return true;
}

int x_close(sqlite3_file* f) {
  const bool counted = reinterpret_cast<FaultFile*>(f)->counted;
  sqlite3_file* r = real_of(f);
  int rc = r->pMethods->xClose(r);
  if (counted) write_log();
  return rc;
}
int x_read(sqlite3_file* f, void* buf, int amt, sqlite3_int64 off) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xRead(r, buf, amt, off);
}
int x_write(sqlite3_file* f, const void* buf, int amt, sqlite3_int64 off) {
  sqlite3_file* r = real_of(f);
  sqlite3_int64 size = 0;
  const bool grows = r->pMethods->xFileSize(r, &size) != SQLITE_OK || off + amt > size;
  if (should_fail(f, Op::write, g_writes, grows)) {
    // Torn only on the first failing call: a full disk has nothing left for later writes.
    if (g_injected.load() == 1 && amt > 1) r->pMethods->xWrite(r, buf, amt / 2, off);
    return full_disk() ? SQLITE_FULL : SQLITE_IOERR_WRITE;
  }
  return r->pMethods->xWrite(r, buf, amt, off);
}
int x_truncate(sqlite3_file* f, sqlite3_int64 size) {
  sqlite3_file* r = real_of(f);
  if (should_fail(f, Op::truncate, g_truncates)) return SQLITE_IOERR_TRUNCATE;
  return r->pMethods->xTruncate(r, size);
}
int x_sync(sqlite3_file* f, int flags) {
  sqlite3_file* r = real_of(f);
  if (should_fail(f, Op::fsync, g_syncs)) return SQLITE_IOERR_FSYNC;
  return r->pMethods->xSync(r, flags);
}
int x_file_size(sqlite3_file* f, sqlite3_int64* size) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xFileSize(r, size);
}
int x_lock(sqlite3_file* f, int level) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xLock(r, level);
}
int x_unlock(sqlite3_file* f, int level) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xUnlock(r, level);
}
int x_check_reserved_lock(sqlite3_file* f, int* out) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xCheckReservedLock(r, out);
}
int x_file_control(sqlite3_file* f, int op, void* arg) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xFileControl(r, op, arg);
}
int x_sector_size(sqlite3_file* f) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xSectorSize(r);
}
int x_device_characteristics(sqlite3_file* f) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xDeviceCharacteristics(r);
}
// The WAL index (-shm) is memory-mapped by the root VFS and never written through xWrite.
int x_shm_map(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xShmMap(r, page, size, extend, out);
}
int x_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xShmLock(r, offset, n, flags);
}
void x_shm_barrier(sqlite3_file* f) {
  sqlite3_file* r = real_of(f);
  r->pMethods->xShmBarrier(r);
}
int x_shm_unmap(sqlite3_file* f, int delete_flag) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xShmUnmap(r, delete_flag);
}
int x_fetch(sqlite3_file* f, sqlite3_int64 off, int amt, void** out) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xFetch(r, off, amt, out);
}
int x_unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  sqlite3_file* r = real_of(f);
  return r->pMethods->xUnfetch(r, off, p);
}

int v_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  auto* f = reinterpret_cast<FaultFile*>(file);
  f->real = reinterpret_cast<sqlite3_file*>(f + 1);
  f->counted = name && (!g_config.file[0] || std::strstr(name, g_config.file));
  int rc = g_root->xOpen(g_root, name, f->real, flags, out_flags);
  // SQLite closes a file only when its pMethods is set, so ours mirrors the root's.
  f->base.pMethods = f->real->pMethods ? &g_methods : nullptr;
  if (f->real->pMethods && f->real->pMethods->iVersion < g_methods.iVersion) {
    g_methods.iVersion = f->real->pMethods->iVersion;  // never offer what the root lacks
  }
  return rc;
}
int v_delete(sqlite3_vfs*, const char* name, int sync_dir) {
  return g_root->xDelete(g_root, name, sync_dir);
}
int v_access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return g_root->xAccess(g_root, name, flags, out);
}
int v_full_pathname(sqlite3_vfs*, const char* name, int n, char* out) {
  return g_root->xFullPathname(g_root, name, n, out);
}
void* v_dl_open(sqlite3_vfs*, const char* name) {
  return g_root->xDlOpen(g_root, name);
}
void v_dl_error(sqlite3_vfs*, int n, char* msg) {
  g_root->xDlError(g_root, n, msg);
}
void (*v_dl_sym(sqlite3_vfs*, void* h, const char* sym))(void) {
  return g_root->xDlSym(g_root, h, sym);
}
void v_dl_close(sqlite3_vfs*, void* h) {
  g_root->xDlClose(g_root, h);
}
int v_randomness(sqlite3_vfs*, int n, char* out) {
  return g_root->xRandomness(g_root, n, out);
}
int v_sleep(sqlite3_vfs*, int us) {
  return g_root->xSleep(g_root, us);
}
int v_current_time(sqlite3_vfs*, double* out) {
  return g_root->xCurrentTime(g_root, out);
}
int v_get_last_error(sqlite3_vfs*, int n, char* out) {
  return g_root->xGetLastError ? g_root->xGetLastError(g_root, n, out) : 0;
}
int v_current_time_int64(sqlite3_vfs*, sqlite3_int64* out) {
  return g_root->xCurrentTimeInt64(g_root, out);
}

void read_config(Config& c) {
  c.op = Op::none;
  c.at = 0;
  c.count = 1;
  const char* op = std::getenv("C3_FAULT_OP");
  if (op && !std::strcmp(op, "write")) c.op = Op::write;
  if (op && !std::strcmp(op, "fsync")) c.op = Op::fsync;
  if (op && !std::strcmp(op, "truncate")) c.op = Op::truncate;
  if (op && !std::strcmp(op, "enospc")) c.op = Op::enospc;
  if (op && !std::strcmp(op, "enospc-cow")) c.op = Op::enospc_cow;
  if (c.op == Op::enospc || c.op == Op::enospc_cow) c.count = 0;
  if (const char* at = std::getenv("C3_FAULT_AT")) c.at = std::atoll(at);
  if (const char* n = std::getenv("C3_FAULT_COUNT")) c.count = std::atoll(n);
  const char* file = std::getenv("C3_FAULT_FILE");
  std::snprintf(c.file, sizeof c.file, "%s", file ? file : "");
  const char* log = std::getenv("C3_FAULT_LOG");
  std::snprintf(c.log, sizeof c.log, "%s", log ? log : "");
}

__attribute__((constructor)) void install() {
  read_config(g_config);
  g_root = sqlite3_vfs_find(nullptr);
  if (!g_root) return;
  g_methods = sqlite3_io_methods{3,
                                 x_close,
                                 x_read,
                                 x_write,
                                 x_truncate,
                                 x_sync,
                                 x_file_size,
                                 x_lock,
                                 x_unlock,
                                 x_check_reserved_lock,
                                 x_file_control,
                                 x_sector_size,
                                 x_device_characteristics,
                                 x_shm_map,
                                 x_shm_lock,
                                 x_shm_barrier,
                                 x_shm_unmap,
                                 x_fetch,
                                 x_unfetch};
  g_vfs = *g_root;  // iVersion, mxPathname, and the syscall hooks we leave alone
  g_vfs.szOsFile = static_cast<int>(sizeof(FaultFile)) + g_root->szOsFile;
  g_vfs.pNext = nullptr;
  g_vfs.zName = "c3fault";
  g_vfs.pAppData = nullptr;
  g_vfs.xOpen = v_open;
  g_vfs.xDelete = v_delete;
  g_vfs.xAccess = v_access;
  g_vfs.xFullPathname = v_full_pathname;
  g_vfs.xDlOpen = v_dl_open;
  g_vfs.xDlError = v_dl_error;
  g_vfs.xDlSym = v_dl_sym;
  g_vfs.xDlClose = v_dl_close;
  g_vfs.xRandomness = v_randomness;
  g_vfs.xSleep = v_sleep;
  g_vfs.xCurrentTime = v_current_time;
  g_vfs.xGetLastError = v_get_last_error;
  g_vfs.xCurrentTimeInt64 = v_current_time_int64;
  sqlite3_vfs_register(&g_vfs, 1);
}

__attribute__((destructor)) void report() {
  write_log();
}

}  // namespace
