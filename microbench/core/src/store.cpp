#include "c3/bench/store.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace c3::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxKey = 256;
constexpr uint32_t kMaxValue = 16u << 20;
constexpr char kMagic[4] = {'C', '3', 'S', '1'};
constexpr const char* kForms = "expected file:/path/to/file or tcp:host:port (port 1-65535)";

[[noreturn]] void bad_spec(const std::string& spec, const std::string& why) {
  throw std::invalid_argument("bad store '" + spec + "': " + why + "; " + kForms);
}

void check_key(const std::string& spec, const std::string& key) {
  bool ok = !key.empty() && key.size() <= kMaxKey;
  for (char ch : key) ok = ok && ch > ' ' && ch < 127;
  if (!ok) {
    throw std::invalid_argument("store " + spec + ": bad key '" + key +
                                "' (1-256 printable characters, no spaces)");
  }
}

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

std::string errno_text(int err) {
  return std::strerror(err);
}

// ---------------------------------------------------------------------------------------------
// file:

std::string to_hex(const std::string& v) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(v.size() * 2);
  for (unsigned char ch : v) {
    out.push_back(digits[ch >> 4]);
    out.push_back(digits[ch & 15]);
  }
  return out;
}

int hex_digit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  return -1;
}

bool from_hex(const std::string& h, std::string* out) {
  if (h.size() % 2 != 0) return false;
  out->clear();
  for (size_t i = 0; i < h.size(); i += 2) {
    int hi = hex_digit(h[i]), lo = hex_digit(h[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

// The file holds a header line, then "key hexvalue" lines; values are hex so that binary ids
// survive line-based parsing.
constexpr const char* kFileHeader = "c3bench-store 1";

class FileStore final : public Store {
 public:
  FileStore(std::string spec, std::string path, int rank)
      : spec_(std::move(spec)), path_(std::move(path)), rank_(rank) {
    // A file from an earlier run would hand its stale NCCL id to the other ranks.
    if (rank_ == 0) std::remove(path_.c_str());
  }

  void publish(const std::string& key, const std::string& value) override {
    check_key(spec_, key);
    if (rank_ != 0) throw std::logic_error("store " + spec_ + ": only rank 0 publishes");
    if (value.size() > kMaxValue) throw std::invalid_argument("store " + spec_ + ": value too big");
    std::lock_guard<std::mutex> lock(mu_);
    values_[key] = value;
    std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << kFileHeader << "\n";
      for (const auto& [k, v] : values_) out << k << ' ' << to_hex(v) << "\n";
      out.flush();
      if (!out) {
        int err = errno;
        std::remove(tmp.c_str());
        throw std::runtime_error("store " + spec_ + ": cannot write " + tmp + ": " +
                                 errno_text(err));
      }
    }
    // rename() is atomic within a filesystem: readers see the old file or the new one, whole.
    if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
      int err = errno;
      std::remove(tmp.c_str());
      throw std::runtime_error("store " + spec_ + ": cannot rename " + tmp + " to " + path_ + ": " +
                               errno_text(err));
    }
  }

  std::string fetch(const std::string& key, int timeout_ms) override {
    check_key(spec_, key);
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    const char* state = "the file does not exist";
    for (;;) {
      std::ifstream in(path_, std::ios::binary);
      if (in) {
        state = "the file has no such key";
        std::string line;
        if (std::getline(in, line) && line == kFileHeader) {
          while (std::getline(in, line)) {
            auto sp = line.find(' ');
            if (sp == std::string::npos || line.compare(0, sp, key) != 0 || sp != key.size()) {
              continue;
            }
            std::string value;
            if (!from_hex(line.substr(sp + 1), &value)) {
              throw std::runtime_error("store " + spec_ + ": malformed value for key '" + key +
                                       "' in " + path_);
            }
            return value;
          }
        } else {
          state = "the file is not a c3bench store";
        }
      }
      if (Clock::now() >= deadline) {
        throw std::runtime_error("store " + spec_ + ": no value for key '" + key + "' after " +
                                 std::to_string(timeout_ms) + " ms (" + state + ")");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  const std::string& spec() const override { return spec_; }

 private:
  std::string spec_, path_;
  int rank_;
  std::mutex mu_;
  std::map<std::string, std::string> values_;
};

// ---------------------------------------------------------------------------------------------
// tcp:  request  = "C3S1" u32(key length) key       (big-endian lengths)
//       response = u32(value length) value          (sent once the key is published)

void put_u32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out->push_back(static_cast<char>((v >> shift) & 255));
}

uint32_t get_u32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    reset(o.release());
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

bool set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  return flags >= 0 && ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

// Sends all of `data` before `deadline` on a non-blocking socket; false on error or timeout.
bool send_all(int fd, const std::string& data, Clock::time_point deadline) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      int left = remaining_ms(deadline);
      if (left == 0 || ::poll(&p, 1, left) <= 0) return false;
      continue;
    }
    return false;
  }
  return true;
}

struct Address {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

Address resolve(const std::string& spec, const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    throw std::runtime_error("store " + spec + ": cannot resolve host '" + host +
                             "': " + ::gai_strerror(rc));
  }
  Address a;
  std::memcpy(&a.addr, res->ai_addr, res->ai_addrlen);
  a.len = res->ai_addrlen;
  ::freeaddrinfo(res);
  return a;
}

class TcpServerStore final : public Store {
 public:
  TcpServerStore(std::string spec, const std::string& host, int port, int world_size)
      : spec_(std::move(spec)) {
    if (world_size <= 1) return;  // nobody will ask
    Address a = resolve(spec_, host, port);
    Fd fd(::socket(a.addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) fail("socket", errno);
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&a.addr), a.len) != 0) {
      fail("cannot listen (bind)", errno);
    }
    if (::listen(fd.get(), SOMAXCONN) != 0) fail("cannot listen", errno);
    if (!set_nonblocking(fd.get())) fail("fcntl", errno);
    int pipefd[2];
    if (::pipe2(pipefd, O_CLOEXEC | O_NONBLOCK) != 0) fail("pipe", errno);
    wake_read_.reset(pipefd[0]);
    wake_write_.reset(pipefd[1]);
    listen_ = std::move(fd);
    server_ = std::thread([this] { serve(); });
  }

  ~TcpServerStore() override {
    if (!server_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake();
    server_.join();
  }

  void publish(const std::string& key, const std::string& value) override {
    check_key(spec_, key);
    if (value.size() > kMaxValue) throw std::invalid_argument("store " + spec_ + ": value too big");
    {
      std::lock_guard<std::mutex> lock(mu_);
      values_[key] = value;
    }
    cv_.notify_all();
    wake();
  }

  // Rank 0 has no one to ask: it waits for its own publish (another thread's, say).
  std::string fetch(const std::string& key, int timeout_ms) override {
    check_key(spec_, key);
    std::unique_lock<std::mutex> lock(mu_);
    bool found = cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                              [&] { return values_.count(key) != 0; });
    if (!found) {
      throw std::runtime_error("store " + spec_ + ": no value for key '" + key + "' after " +
                               std::to_string(timeout_ms) + " ms (rank 0 never published it)");
    }
    return values_[key];
  }

  const std::string& spec() const override { return spec_; }

 private:
  struct Client {
    Fd fd;
    std::string in;
    std::string key;  // set once the request is complete
  };

  [[noreturn]] void fail(const char* what, int err) {
    throw std::runtime_error("store " + spec_ + ": " + what + ": " + errno_text(err));
  }

  void wake() {
    char b = 1;
    if (wake_write_.get() >= 0) {
      [[maybe_unused]] ssize_t n = ::write(wake_write_.get(), &b, 1);
    }
  }

  // Reads what the client sent; false when it should be dropped (closed, error, bad request).
  bool read_request(Client& c) {
    char buf[512];
    for (;;) {
      ssize_t n = ::recv(c.fd.get(), buf, sizeof buf, 0);
      if (n > 0) {
        c.in.append(buf, static_cast<size_t>(n));
        if (c.in.size() > 8 + kMaxKey) return false;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      return false;  // EOF or error: our clients wait for the reply with the socket open
    }
    if (c.key.empty() && c.in.size() >= 8) {
      if (std::memcmp(c.in.data(), kMagic, 4) != 0) return false;
      uint32_t len = get_u32(c.in.data() + 4);
      if (len == 0 || len > kMaxKey) return false;
      if (c.in.size() >= 8 + len) c.key = c.in.substr(8, len);
    }
    return true;
  }

  // Answers the client if its key is published; true when it is done with (answered).
  bool try_answer(Client& c) {
    if (c.key.empty()) return false;
    std::string reply;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = values_.find(c.key);
      if (it == values_.end()) return false;
      put_u32(&reply, static_cast<uint32_t>(it->second.size()));
      reply += it->second;
    }
    // A client that stops reading must not stall the server for long.
    send_all(c.fd.get(), reply, Clock::now() + std::chrono::seconds(5));
    return true;
  }

  void serve() {
    std::vector<Client> clients;
    for (;;) {
      std::vector<pollfd> fds;
      fds.push_back({wake_read_.get(), POLLIN, 0});
      fds.push_back({listen_.get(), POLLIN, 0});
      for (const Client& c : clients) fds.push_back({c.fd.get(), POLLIN, 0});
      int rc = ::poll(fds.data(), static_cast<nfds_t>(fds.size()), -1);
      if (rc < 0 && errno != EINTR) return;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) return;
      }
      if (fds[0].revents != 0) {
        char buf[64];
        while (::read(wake_read_.get(), buf, sizeof buf) > 0) {
        }
      }
      if (fds[1].revents & POLLIN) {
        for (;;) {
          int cfd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
          if (cfd < 0) break;
          clients.push_back(Client{Fd(cfd), {}, {}});
        }
      }
      std::vector<Client> keep;
      for (size_t i = 0; i < clients.size(); ++i) {
        Client& c = clients[i];
        // Clients accepted in this round have no pollfd yet; they are read on the next one.
        size_t slot = i + 2;
        bool readable = slot < fds.size() && fds[slot].fd == c.fd.get() && fds[slot].revents != 0;
        if (readable && !read_request(c)) continue;
        if (try_answer(c)) continue;
        keep.push_back(std::move(c));
      }
      clients = std::move(keep);
    }
  }

  std::string spec_;
  Fd listen_, wake_read_, wake_write_;
  std::thread server_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, std::string> values_;
  bool stop_ = false;
};

class TcpClientStore final : public Store {
 public:
  TcpClientStore(std::string spec, std::string host, int port)
      : spec_(std::move(spec)), host_(std::move(host)), port_(port) {}

  void publish(const std::string&, const std::string&) override {
    throw std::logic_error("store " + spec_ + ": only rank 0 publishes");
  }

  std::string fetch(const std::string& key, int timeout_ms) override {
    check_key(spec_, key);
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string last = "rank 0 not reachable";
    for (;;) {
      std::string value;
      if (attempt(key, deadline, &value, &last)) return value;
      if (Clock::now() >= deadline) {
        std::string msg = "store " + spec_ + ": no value for key '" + key + "' after ";
        msg += std::to_string(timeout_ms) + " ms (" + last + ")";
        throw std::runtime_error(msg);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(20, remaining_ms(deadline))));
    }
  }

  const std::string& spec() const override { return spec_; }

 private:
  // One connection; false (with *why) when it should be retried.
  bool attempt(const std::string& key, Clock::time_point deadline, std::string* value,
               std::string* why) {
    Address a;
    try {
      a = resolve(spec_, host_, port_);
    } catch (const std::runtime_error& e) {
      *why = e.what();
      return false;
    }
    Fd fd(::socket(a.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) {
      *why = "socket: " + errno_text(errno);
      return false;
    }
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&a.addr), a.len) != 0) {
      if (errno != EINPROGRESS) {
        *why = "rank 0 not reachable: " + errno_text(errno);
        return false;
      }
      pollfd p{fd.get(), POLLOUT, 0};
      if (::poll(&p, 1, remaining_ms(deadline)) <= 0) {
        *why = "rank 0 not reachable: connect timed out";
        return false;
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0) {
        *why = "rank 0 not reachable: " + errno_text(err);
        return false;
      }
    }
    std::string req(kMagic, 4);
    put_u32(&req, static_cast<uint32_t>(key.size()));
    req += key;
    if (!send_all(fd.get(), req, deadline)) {
      *why = "connection to rank 0 failed while sending";
      return false;
    }
    *why = "connected, but rank 0 has not published the key";
    std::string in;
    for (;;) {
      if (in.size() >= 4) {
        uint32_t len = get_u32(in.data());
        if (len > kMaxValue) {
          throw std::runtime_error("store " + spec_ + ": malformed reply for key '" + key + "'");
        }
        if (in.size() >= 4 + static_cast<size_t>(len)) {
          *value = in.substr(4, len);
          return true;
        }
      }
      pollfd p{fd.get(), POLLIN, 0};
      int left = remaining_ms(deadline);
      if (left == 0) return false;
      int rc = ::poll(&p, 1, left);
      if (rc < 0 && errno == EINTR) continue;
      if (rc <= 0) return false;
      char buf[4096];
      ssize_t n = ::recv(fd.get(), buf, sizeof buf, 0);
      if (n > 0) {
        in.append(buf, static_cast<size_t>(n));
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        *why = "rank 0 closed the connection";
        return false;
      }
    }
  }

  std::string spec_, host_;
  int port_;
};

}  // namespace

std::unique_ptr<Store> Store::open(const std::string& spec, int rank, int world_size) {
  if (world_size < 1 || rank < 0 || rank >= world_size) {
    throw std::invalid_argument("store '" + spec + "': bad rank " + std::to_string(rank) +
                                " of world size " + std::to_string(world_size));
  }
  if (spec.rfind("file:", 0) == 0) {
    std::string path = spec.substr(5);
    if (path.empty()) bad_spec(spec, "missing path");
    return std::make_unique<FileStore>(spec, path, rank);
  }
  if (spec.rfind("tcp:", 0) == 0) {
    std::string rest = spec.substr(4);
    auto colon = rest.rfind(':');
    if (colon == std::string::npos) bad_spec(spec, "missing port");
    std::string host = rest.substr(0, colon), port_text = rest.substr(colon + 1);
    if (host.empty()) bad_spec(spec, "missing host");
    if (port_text.empty()) bad_spec(spec, "missing port");
    if (port_text.size() > 5 || port_text.find_first_not_of("0123456789") != std::string::npos) {
      bad_spec(spec, "port '" + port_text + "' is not a number");
    }
    int port = std::stoi(port_text);
    if (port < 1 || port > 65535) bad_spec(spec, "port " + port_text + " out of range");
    if (rank == 0) return std::make_unique<TcpServerStore>(spec, host, port, world_size);
    return std::make_unique<TcpClientStore>(spec, host, port);
  }
  bad_spec(spec, "unknown kind");
}

}  // namespace c3::bench
