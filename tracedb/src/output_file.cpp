#include "c3/tracedb/output_file.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>

namespace c3::tracedb {

namespace fs = std::filesystem;

std::string printable(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  auto byte = [&](unsigned char u) {
    out += "\\x";
    out += kHex[u >> 4];
    out += kHex[u & 15];
  };
  for (size_t i = 0; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u < 0x80) {
      if (u == '\n') {
        out += "\\n";
      } else if (u == '\t') {
        out += "\\t";
      } else if (u < 0x20 || u == 0x7f) {
        byte(u);  // ESC among them: no escape sequence reaches the terminal
      } else {
        out += static_cast<char>(u);
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: kept when well formed (no overlong form, surrogate or code point past
    // U+10FFFF), unless it encodes a C1 control (U+0080-U+009F, which terminals obey as ESC
    // sequences) or a character that reorders or breaks the line as shown (bidirectional
    // controls, the Trojan Source characters; line and paragraph separators); any other byte
    // above 0x7f is escaped alone.
    const size_t len = u >= 0xc2 && u <= 0xdf   ? 2
                       : u >= 0xe0 && u <= 0xef ? 3
                       : u >= 0xf0 && u <= 0xf4 ? 4
                                                : 0;
    uint32_t cp = len == 2 ? u & 0x1fu : len == 3 ? u & 0x0fu : u & 0x07u;
    bool ok = len > 0 && i + len <= text.size();
    for (size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      ok = (c & 0xc0) == 0x80;
      cp = cp << 6 | (c & 0x3fu);
    }
    ok = ok && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
         !(cp >= 0xd800 && cp <= 0xdfff);
    if (!ok) {
      byte(u);
      ++i;
      continue;
    }
    const bool hidden = (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
                        cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
                        (cp >= 0x2066 && cp <= 0x2069) || cp == 0x2028 || cp == 0x2029;
    if (hidden) {
      char b[16];
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(cp));
      out += b;
    } else {
      out.append(text.substr(i, len));
    }
    i += len;
  }
  return out;
}

namespace {

// ---- Temporaries removed by the signal handler ----------------------------------------------
// Fixed slots, so the handler touches no allocator: a slot is claimed (1), filled, then published
// (2); the handler removes only published ones.
constexpr size_t kSlots = 32;
constexpr size_t kPathMax = 4096;
struct Slot {
  std::atomic<int> state{0};
  std::atomic<bool> folder{false};
  std::array<char, kPathMax> path{};
};
std::array<Slot, kSlots> g_slots;
std::atomic<std::atomic<bool>*> g_cancel{nullptr};
std::atomic<int> g_signals{0};
// What each signal did before install_output_cleanup(): restored and re-raised after the
// cleanup, so an earlier handler (the collector's final flush under `c3scope record`) still runs.
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
std::array<struct sigaction, 3> g_old{};
std::atomic<bool> g_installed{false};

const struct sigaction* old_action(int sig) {
  for (size_t i = 0; i < g_old.size(); ++i) {
    if (kSignals[i] == sig) return &g_old[i];
  }
  return nullptr;
}

void unlink_with_suffix(const char* path, const char* suffix) {
  // Async-signal-safe: no allocation, only memcpy and unlink.
  std::array<char, kPathMax + 16> buf{};
  const size_t n = std::strlen(path);
  const size_t m = std::strlen(suffix);
  if (n + m + 1 > buf.size()) return;
  std::memcpy(buf.data(), path, n);
  std::memcpy(buf.data() + n, suffix, m + 1);
  ::unlink(buf.data());
}

// Removes the files in a folder, then the folder (async-signal-safe: getdents64, unlinkat,
// rmdir). Another thread may still be creating a file there (a conversion in progress): the
// folder is scanned again until rmdir succeeds, after which nothing can be created in it.
void remove_folder(const char* path) {
  for (int round = 0; round < 64; ++round) {
    const int dfd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (dfd < 0) return;
    alignas(8) std::array<char, 4096> buf{};
    for (;;) {
      const long n = ::syscall(SYS_getdents64, dfd, buf.data(), buf.size());
      if (n <= 0) break;
      for (long off = 0; off < n;) {
        struct Dirent64 {
          uint64_t ino;
          int64_t off;
          unsigned short reclen;
          unsigned char type;
          char name[1];
        };
        const auto* d = reinterpret_cast<const Dirent64*>(buf.data() + off);
        const char* name = buf.data() + off + offsetof(Dirent64, name);
        if (!(name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))))
          ::unlinkat(dfd, name, 0);
        off += d->reclen;
      }
    }
    ::close(dfd);
    if (::rmdir(path) == 0 || errno != ENOTEMPTY) return;
  }
}

void remove_temporaries() {
  // Files first, then folders (a registered file may lie in a registered folder).
  for (auto& s : g_slots) {
    if (s.state.load() != 2 || s.folder.load()) continue;
    for (const char* suffix : {"", "-journal", "-wal", "-shm"})
      unlink_with_suffix(s.path.data(), suffix);
  }
  for (auto& s : g_slots) {
    if (s.state.load() == 2 && s.folder.load()) remove_folder(s.path.data());
  }
}

void on_signal(int sig) {
  std::atomic<bool>* cancel = g_cancel.load();
  if (cancel != nullptr && g_signals.fetch_add(1) == 0) {
    cancel->store(true);  // the command stops at its next check and removes what it wrote
    return;
  }
  remove_temporaries();
  // The earlier action (or the default), delivered when this handler returns: the process ends
  // as the signal says, after any handler that was there before.
  if (const struct sigaction* old = old_action(sig)) {
    ::sigaction(sig, old, nullptr);
  } else {
    ::signal(sig, SIG_DFL);
  }
  ::raise(sig);
}

std::string strerr(int err) {
  return std::strerror(err);
}

std::string where(const std::string& flag, const std::string& path) {
  return (flag.empty() ? "" : flag + " ") + printable(path);
}

// The folder a temporary for `target` goes in: the output's own, so the final move is a rename
// within one file system.
std::string folder_of(const std::string& target) {
  const fs::path p(target);
  const fs::path parent = p.parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// A fresh hidden name in the output's folder: short whatever the output's name (a 250-byte name
// plus a suffix would pass the 255-byte limit of a file name).
std::string temp_name(const std::string& target) {
  static std::atomic<unsigned> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<uint64_t>(::getpid())
                                                                << 32};
  char name[64];
  std::snprintf(name, sizeof name, ".c3scope-%d-%u-%08llx.tmp", static_cast<int>(::getpid()),
                counter.fetch_add(1), static_cast<unsigned long long>(rng() & 0xffffffffULL));
  return folder_of(target) + "/" + name;
}

// Resolves what a path names for writing: a symbolic link's target.
std::string resolve_target(const std::string& flag, const std::string& path) {
  struct stat ls {};
  if (::lstat(path.c_str(), &ls) != 0 || !S_ISLNK(ls.st_mode)) return path;
  std::error_code ec;
  const fs::path t = fs::canonical(path, ec);
  if (ec) {
    throw OutputError(where(flag, path) +
                      ": is a symbolic link to nothing; remove it or name another file");
  }
  return t.string();
}

void write_error(const std::string& flag, const std::string& path, int err, bool in_place) {
  std::string why = strerr(err);
  if (err == EFBIG) why += " (a file size limit: see 'ulimit -f')";
  if (err == ENOSPC) why += " (the disk is full)";
  throw OutputError(where(flag, path) + ": cannot write: " + why +
                    (in_place ? "; what it received is incomplete" : "; nothing was written"));
}

// Moves a finished temporary onto `target`: linked when nothing may be there (so a file that
// appeared meanwhile is not replaced), renamed over a regular file with --force.
void move_into_place(const std::string& flag, const std::string& path, const std::string& tmp,
                     const std::string& target, OutputKind kind) {
  if (kind == OutputKind::replace) {
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      throw OutputError(where(flag, path) + ": is no longer a regular file; nothing was replaced");
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
      const int err = errno;
      throw OutputError(where(flag, path) + ": cannot replace: " + strerr(err));
    }
    return;
  }
  if (::link(tmp.c_str(), target.c_str()) == 0) {
    ::unlink(tmp.c_str());
    return;
  }
  int err = errno;
  if (err == EPERM || err == ENOTSUP || err == EOPNOTSUPP) {
    // File systems without hard links (FAT, some FUSE): a rename that never replaces.
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) {
      return;
    }
    err = errno;
  }
  if (err == EEXIST) {
    throw OutputError(where(flag, path) +
                      ": appeared while this command ran; nothing was replaced (add --force to "
                      "replace it)");
  }
  throw OutputError(where(flag, path) + ": cannot create: " + strerr(err));
}

// The standard stream (STDOUT_FILENO or STDERR_FILENO) that `path` names, -1 when none.
int std_stream_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  for (const int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    struct stat fs {};
    if (::fstat(fd, &fs) == 0 && fs.st_dev == st.st_dev && fs.st_ino == st.st_ino) return fd;
  }
  return -1;
}

}  // namespace

std::string input_file_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return strerr(errno);
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "is a folder";
  if (S_ISFIFO(st.st_mode)) return "is a pipe (FIFO), not a file; save it to a file first";
  return "is a device or a socket, not a file";
}

void register_temporary(const std::string& path, bool folder) {
  if (path.size() >= kPathMax) return;
  for (auto& s : g_slots) {
    int free = 0;
    if (!s.state.compare_exchange_strong(free, 1)) continue;
    std::memcpy(s.path.data(), path.c_str(), path.size() + 1);
    s.folder.store(folder);
    s.state.store(2);
    return;
  }
}

void forget_temporary(const std::string& path) {
  for (auto& s : g_slots) {
    if (s.state.load() == 2 && path == s.path.data()) {
      s.state.store(0);
      return;
    }
  }
}

bool cancel_requested() {
  const std::atomic<bool>* cancel = g_cancel.load();
  return cancel != nullptr && cancel->load();
}

std::atomic<bool>* install_output_cleanup(std::atomic<bool>* cancel) {
  g_cancel.store(cancel);
  g_signals.store(0);
  if (g_installed.exchange(true)) return cancel;  // once: g_old must not become our own handler
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (size_t i = 0; i < g_old.size(); ++i) {
    sigaction(kSignals[i], nullptr, &g_old[i]);
    // A signal the caller ignores (nohup, a background job) stays ignored.
    if (g_old[i].sa_handler == SIG_IGN) continue;
    sigaction(kSignals[i], &sa, nullptr);
  }
  // Past a file size limit (ulimit -f) a write fails with EFBIG, reported as such, instead of
  // the signal killing the process with a half-written temporary left behind.
  ::signal(SIGXFSZ, SIG_IGN);
  // A reader that went away (`c3scope export T -o /dev/stdout | head`) makes a write fail with
  // EPIPE, reported as a write error (exit 2) with every temporary removed, instead of SIGPIPE
  // killing the process with them left behind. Only commands that write outputs install this;
  // `record` does not, so the job it starts keeps the default SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  return cancel;
}

bool is_stdout(const std::string& path) {
  return std_stream_of(path) == STDOUT_FILENO;
}

OutputKind check_output(const std::string& flag, const std::string& path,
                        const OutputRules& rules) {
  if (path.empty()) throw OutputError(where(flag, path) + "'': an empty path; name a file");
  if (path.back() == '/') {
    throw OutputError(where(flag, path) + ": names a folder; name a file (e.g. " + printable(path) +
                      "out)");
  }
  if (rules.database) {
    // SQLite would take a -wal or hot -journal left at the target's name for the new file's.
    for (const char* suffix : {"-wal", "-journal"}) {
      struct stat js {};
      if (::stat((path + suffix).c_str(), &js) == 0) {
        throw OutputError(where(flag, path) + ": " + printable(path + suffix) +
                          " exists (a recording still writing it, or one that was killed); "
                          "choose another name");
      }
    }
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err != ENOENT) throw OutputError(where(flag, path) + ": " + strerr(err));
    struct stat ds {};
    const std::string dir = folder_of(resolve_target(flag, path));
    if (::stat(dir.c_str(), &ds) != 0 || !S_ISDIR(ds.st_mode)) {
      throw OutputError(where(flag, path) + ": the folder " + printable(dir) +
                        " does not exist; create it first");
    }
    return OutputKind::create;
  }
  for (const auto& in : rules.inputs) {
    struct stat is {};
    if (::stat(in.c_str(), &is) == 0 && is.st_dev == st.st_dev && is.st_ino == st.st_ino) {
      throw OutputError(where(flag, path) +
                        ": is also an input of this command; write the output elsewhere");
    }
  }
  if (S_ISDIR(st.st_mode)) {
    throw OutputError(where(flag, path) + ": is a folder; name a file (e.g. " + printable(path) +
                      "/out)");
  }
  // /dev/stdout (or any name of the command's standard output or error) redirected to a file:
  // written through the stream as the shell set it up, never renamed over or truncated.
  if (std_stream_of(path) >= 0) {
    if (rules.database) {
      throw OutputError(where(flag, path) +
                        ": is the command's standard output; a database output must be a file "
                        "of its own");
    }
    return OutputKind::in_place;
  }
  if (S_ISREG(st.st_mode)) {
    if (!rules.force) {
      throw OutputError(where(flag, path) +
                        ": exists; add --force to replace it, or choose another name");
    }
    return OutputKind::replace;
  }
  if (rules.database) {
    throw OutputError(where(flag, path) +
                      ": is not a regular file (a device or a pipe); a database output must be a "
                      "file");
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return OutputKind::in_place;
  throw OutputError(where(flag, path) +
                    ": is a block device or a socket; name a file, a character device or a pipe");
}

// ---- Output ------------------------------------------------------------------------------------

void Output::move() {
  if (kind_ != OutputKind::in_place) move_into_place(flag_, path_, tmp_, target_, kind_);
  if (!tmp_.empty()) forget_temporary(tmp_);
  committed_ = true;
}

// ---- OutputFile --------------------------------------------------------------------------------

OutputFile::OutputFile(std::string flag, std::string path, const OutputRules& rules)
    : Output(std::move(flag), std::move(path)) {
  kind_ = check_output(flag_, path_, rules);
  if (kind_ == OutputKind::in_place) {
    // No O_CREAT, no O_TRUNC: a device or pipe is written as it is (a pipe waits for a reader,
    // as any program writing to it would). Opened by the name given, never by a resolved one:
    // /dev/stdout, /dev/fd/N and a shell's >(...) are links to a pipe ("pipe:[N]") that no path
    // names.
    target_ = path_;
    const int stream = std_stream_of(path_);
    const int fd = stream >= 0 ? ::fcntl(stream, F_DUPFD_CLOEXEC, 0)
                               : ::open(path_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    to_stdout_ = stream == STDOUT_FILENO;
    if (fd < 0) {
      const int err = errno;
      throw OutputError(where(flag_, path_) + ": cannot open: " + strerr(err));
    }
    f_ = ::fdopen(fd, "wb");
    if (f_ == nullptr) {
      ::close(fd);
      throw OutputError(where(flag_, path_) + ": cannot open: out of memory");
    }
    return;
  }
  target_ = resolve_target(flag_, path_);
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp_ = temp_name(target_);
    const int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
      const int err = errno;
      if (err == EEXIST) continue;
      tmp_.clear();
      std::string why = strerr(err);
      if (err == EACCES || err == EROFS) why += " (the folder is not writable)";
      throw OutputError(where(flag_, path_) + ": cannot write: " + why);
    }
    register_temporary(tmp_);
    f_ = ::fdopen(fd, "wb");
    if (f_ == nullptr) {
      ::close(fd);
      ::unlink(tmp_.c_str());
      forget_temporary(tmp_);
      throw OutputError(where(flag_, path_) + ": cannot open: out of memory");
    }
    return;
  }
  throw OutputError(where(flag_, path_) + ": cannot find a free temporary name");
}

OutputFile::~OutputFile() {
  if (f_ != nullptr) std::fclose(f_);
  if (!committed_) drop();
}

void OutputFile::drop() {
  if (!tmp_.empty()) {
    ::unlink(tmp_.c_str());
    forget_temporary(tmp_);
    tmp_.clear();
  }
}

void OutputFile::write(std::string_view bytes) {
  if (f_ == nullptr || bytes.empty()) return;
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), f_) != bytes.size() && err_ == 0) {
    err_ = errno != 0 ? errno : EIO;  // the first failure's reason (ENOSPC, EFBIG)
  }
}

void OutputFile::finish() {
  if (finished_ || f_ == nullptr) return;
  errno = 0;
  const bool flush_failed = std::fflush(f_) != 0;
  int err = err_ != 0 ? err_ : errno;
  const bool failed = flush_failed || std::ferror(f_) != 0;
  FILE* f = f_;
  f_ = nullptr;
  const bool close_failed = std::fclose(f) != 0;
  if (!failed && close_failed) err = errno;
  if (failed || close_failed) {
    drop();
    write_error(flag_, path_, err == 0 ? EIO : err, kind_ == OutputKind::in_place);
  }
  finished_ = true;
}

void OutputFile::commit() {
  if (committed_) return;
  finish();
  if (!finished_) return;  // never opened
  try {
    move();
  } catch (...) {
    drop();
    throw;
  }
}

// ---- OutputPath --------------------------------------------------------------------------------

OutputPath::OutputPath(std::string flag, std::string path, OutputRules rules)
    : Output(std::move(flag), std::move(path)) {
  rules.database = true;
  kind_ = check_output(flag_, path_, rules);
  target_ = resolve_target(flag_, path_);
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp_ = temp_name(target_);
    struct stat st {};
    if (::lstat(tmp_.c_str(), &st) != 0 && errno == ENOENT) break;
  }
  register_temporary(tmp_);
}

OutputPath::~OutputPath() {
  if (!committed_) drop();
  forget_temporary(tmp_);
}

void OutputPath::drop() {
  for (const char* suffix : {"", "-journal", "-wal", "-shm"}) ::unlink((tmp_ + suffix).c_str());
}

void OutputPath::finish() {
  // The writer closed the database out of WAL mode: a -wal or -journal left beside it holds
  // committed pages that the file alone lacks (a checkpoint that failed on a full disk).
  for (const char* suffix : {"-wal", "-journal"}) {
    struct stat st {};
    if (::stat((tmp_ + suffix).c_str(), &st) == 0 && st.st_size > 0) {
      throw OutputError(where(flag_, path_) +
                        ": cannot finish the database: its journal could not be merged (a full "
                        "disk?); nothing was written");
    }
  }
}

void OutputPath::commit() {
  if (committed_) return;
  finish();
  move();
}

// ---- OutputSet ---------------------------------------------------------------------------------

namespace {

// What a path names, to tell whether two outputs are one file.
struct Identity {
  bool exists = false, device = false;
  dev_t dev = 0;
  ino_t ino = 0;
  std::string resolved;  // where it does not exist yet: the absolute path, links resolved
};

Identity identity_of(const std::string& path) {
  Identity id;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    id.exists = true;
    id.device = S_ISCHR(st.st_mode);
    id.dev = st.st_dev;
    id.ino = st.st_ino;
    return id;
  }
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  id.resolved = ec ? path : p.lexically_normal().string();
  return id;
}

}  // namespace

void check_distinct(const std::vector<OutputSpec>& specs) {
  std::vector<std::pair<const OutputSpec*, Identity>> seen;
  for (const OutputSpec& s : specs) {
    if (s.path.empty()) continue;
    const Identity id = identity_of(s.path);
    for (const auto& [other, oid] : seen) {
      const bool same = id.exists
                            ? (oid.exists && !id.device && id.dev == oid.dev && id.ino == oid.ino)
                            : (!oid.exists && id.resolved == oid.resolved);
      if (same) {
        throw OutputError(where(other->flag, other->path) + " and " + where(s.flag, s.path) +
                          " name the same file (one would replace the other); give each output "
                          "a name of its own");
      }
    }
    seen.emplace_back(&s, id);
  }
}

OutputSet::OutputSet(const std::vector<OutputSpec>& specs, const OutputRules& rules) {
  check_distinct(specs);
  for (const OutputSpec& s : specs) {
    if (s.path.empty()) continue;
    if (s.database) {
      outs_.push_back(std::make_unique<OutputPath>(s.flag, s.path, rules));
    } else {
      outs_.push_back(std::make_unique<OutputFile>(s.flag, s.path, rules));
    }
  }
}

OutputSet::~OutputSet() = default;

OutputFile* OutputSet::file(std::string_view flag) {
  for (auto& o : outs_) {
    if (o->flag() == flag) return dynamic_cast<OutputFile*>(o.get());
  }
  return nullptr;
}

OutputPath* OutputSet::database(std::string_view flag) {
  for (auto& o : outs_) {
    if (o->flag() == flag) return dynamic_cast<OutputPath*>(o.get());
  }
  return nullptr;
}

bool OutputSet::to_stdout() const {
  return std::any_of(outs_.begin(), outs_.end(), [](const auto& o) {
    const auto* f = dynamic_cast<const OutputFile*>(o.get());
    return f != nullptr && f->to_stdout();
  });
}

void OutputSet::commit() {
  // 1. Every output complete (flushed, closed, checked) before any is moved.
  for (auto& o : outs_) {
    try {
      o->finish();
    } catch (...) {
      for (auto& d : outs_) d->drop();
      throw;
    }
  }
  // 2. Moved into place one by one; an existing file that one replaces is kept under a hidden
  // link (registered for the signal cleanup) until all are in place, so a later failure can put
  // it back.
  struct Moved {
    Output* out;
    std::string backup;  // the replaced file's link, empty when nothing was replaced
    struct stat st {};   // the new file, to remove only that when undoing a create
  };
  std::vector<Moved> moved;
  auto undo = [&] {
    for (auto it = moved.rbegin(); it != moved.rend(); ++it) {
      const std::string& target = it->out->target_;
      if (!it->backup.empty()) {
        ::rename(it->backup.c_str(), target.c_str());
      } else if (it->out->kind_ == OutputKind::create) {
        struct stat now {};
        if (::lstat(target.c_str(), &now) == 0 && now.st_dev == it->st.st_dev &&
            now.st_ino == it->st.st_ino)
          ::unlink(target.c_str());
      }
      if (!it->backup.empty()) forget_temporary(it->backup);
    }
  };
  for (auto& o : outs_) {
    if (o->kind_ == OutputKind::in_place) {
      o->committed_ = true;
      continue;
    }
    Moved m{o.get(), {}, {}};
    ::stat(o->tmp_.c_str(), &m.st);
    if (o->kind_ == OutputKind::replace && outs_.size() > 1) {
      const std::string backup = temp_name(o->target_);
      if (::link(o->target_.c_str(), backup.c_str()) == 0) {
        register_temporary(backup);
        m.backup = backup;
      }
      // (No hard links on this file system: replaced without a way back; docs/outputs.md.)
    }
    try {
      o->move();
    } catch (...) {
      if (!m.backup.empty()) {
        ::unlink(m.backup.c_str());
        forget_temporary(m.backup);
      }
      undo();
      for (auto& d : outs_) {
        if (d->kind_ != OutputKind::in_place) d->committed_ = false;
        d->drop();
      }
      throw;
    }
    moved.push_back(std::move(m));
  }
  for (const Moved& m : moved) {
    if (m.backup.empty()) continue;
    ::unlink(m.backup.c_str());
    forget_temporary(m.backup);
  }
}

}  // namespace c3::tracedb
