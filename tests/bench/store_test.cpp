#include "c3/bench/store.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using c3::bench::Store;
using Clock = std::chrono::steady_clock;

namespace {

// Binary on purpose: NCCL unique ids hold NULs, newlines and spaces.
const std::string kValue = std::string("id\0with\nbytes \xff\x01", 16) + std::string(112, 'x');

std::string temp_path(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path();
  return (dir / (name + "-" + std::to_string(::getpid()))).string();
}

// A port that was free a moment ago (bind to port 0, read it back, close).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string tcp_spec() {
  return "tcp:127.0.0.1:" + std::to_string(free_port());
}

// Rank 0 publishes after `delay`; ranks 1..3 fetch concurrently (started first, so they wait).
void run_four_ranks(const std::string& spec, std::chrono::milliseconds delay) {
  constexpr int kWorld = 4;
  std::vector<std::string> got(kWorld);
  std::vector<std::string> errors(kWorld);
  std::vector<std::thread> ranks;
  for (int r = 1; r < kWorld; ++r) {
    ranks.emplace_back([&, r] {
      try {
        auto store = Store::open(spec, r, kWorld);
        got[r] = store->fetch("nccl-id/a", 5000);
        EXPECT_EQ(store->fetch("nccl-id/b", 5000), "second");
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  {
    auto store = Store::open(spec, 0, kWorld);
    std::this_thread::sleep_for(delay);
    store->publish("nccl-id/a", kValue);
    store->publish("nccl-id/b", "second");
    for (auto& t : ranks) t.join();  // rank 0's store must outlive the fetches
  }
  for (int r = 1; r < kWorld; ++r) {
    EXPECT_EQ(errors[r], "") << "rank " << r;
    EXPECT_EQ(got[r], kValue) << "rank " << r;
  }
}

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(FileStore, RankZeroPublishesOthersFetch) {
  std::string path = temp_path("c3-store-file");
  run_four_ranks("file:" + path, std::chrono::milliseconds(100));
  std::remove(path.c_str());
}

TEST(FileStore, PublishReplacesAndKeepsOtherKeys) {
  std::string path = temp_path("c3-store-replace");
  auto r0 = Store::open("file:" + path, 0, 2);
  auto r1 = Store::open("file:" + path, 1, 2);
  r0->publish("k1", "one");
  r0->publish("k2", "two");
  r0->publish("k1", "uno");
  EXPECT_EQ(r1->fetch("k1", 100), "uno");
  EXPECT_EQ(r1->fetch("k2", 100), "two");
  std::remove(path.c_str());
}

TEST(FileStore, FetchTimesOutNamingSpecAndKey) {
  std::string spec = "file:" + temp_path("c3-store-missing");
  auto store = Store::open(spec, 1, 2);
  auto t0 = Clock::now();
  std::string err = error_of([&] { store->fetch("nccl-id", 150); });
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  EXPECT_NE(err.find(spec), std::string::npos) << err;
  EXPECT_NE(err.find("nccl-id"), std::string::npos) << err;
  EXPECT_GE(ms, 140);
  EXPECT_LT(ms, 2000);
}

TEST(FileStore, OnlyRankZeroPublishes) {
  auto store = Store::open("file:" + temp_path("c3-store-r1"), 1, 2);
  EXPECT_THROW(store->publish("k", "v"), std::logic_error);
}

TEST(TcpStore, RankZeroServesThreeOtherRanks) {
  run_four_ranks(tcp_spec(), std::chrono::milliseconds(0));
}

TEST(TcpStore, OtherRanksRetryUntilRankZeroListens) {
  std::string spec = tcp_spec();
  constexpr int kWorld = 4;
  std::vector<std::string> got(kWorld), errors(kWorld);
  std::vector<std::thread> ranks;
  for (int r = 1; r < kWorld; ++r) {
    ranks.emplace_back([&, r] {
      try {
        got[r] = Store::open(spec, r, kWorld)->fetch("id", 5000);
      } catch (const std::exception& e) {
        errors[r] = e.what();
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // nobody listens yet
  {
    auto store = Store::open(spec, 0, kWorld);
    store->publish("id", kValue);
    for (auto& t : ranks) t.join();
  }
  for (int r = 1; r < kWorld; ++r) {
    EXPECT_EQ(errors[r], "");
    EXPECT_EQ(got[r], kValue);
  }
}

TEST(TcpStore, SeparateProcesses) {
  std::string spec = tcp_spec();
  constexpr int kWorld = 4;
  std::vector<pid_t> children;
  // Fork before rank 0 starts its server thread: the children are single-threaded copies.
  std::fflush(nullptr);
  for (int r = 1; r < kWorld; ++r) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 1;
      try {
        auto store = Store::open(spec, r, kWorld);
        code = store->fetch("nccl-id", 5000) == kValue ? 0 : 2;
      } catch (...) {
        code = 3;
      }
      ::_exit(code);  // no exit(): the parent's stdio buffers and gtest state are not ours
    }
    children.push_back(pid);
  }
  auto store = Store::open(spec, 0, kWorld);
  store->publish("nccl-id", kValue);
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "2: wrong value, 3: exception";
  }
}

TEST(TcpStore, FetchTimesOutWhenNobodyListens) {
  std::string spec = tcp_spec();
  auto store = Store::open(spec, 2, 3);
  auto t0 = Clock::now();
  std::string err = error_of([&] { store->fetch("nccl-id", 200); });
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  EXPECT_NE(err.find(spec), std::string::npos) << err;
  EXPECT_NE(err.find("not reachable"), std::string::npos) << err;
  EXPECT_GE(ms, 190);
  EXPECT_LT(ms, 2000);
}

TEST(TcpStore, FetchTimesOutWhenKeyIsNeverPublished) {
  std::string spec = tcp_spec();
  auto r0 = Store::open(spec, 0, 2);
  r0->publish("other", "x");
  auto r1 = Store::open(spec, 1, 2);
  std::string err = error_of([&] { r1->fetch("nccl-id", 200); });
  EXPECT_NE(err.find("has not published"), std::string::npos) << err;
  EXPECT_EQ(r1->fetch("other", 1000), "x");  // the server still answers after a timed-out fetch
}

TEST(TcpStore, RankZeroCannotListenTwiceOnOnePort) {
  std::string spec = tcp_spec();
  auto first = Store::open(spec, 0, 2);
  std::string err = error_of([&] { Store::open(spec, 0, 2); });
  EXPECT_NE(err.find(spec), std::string::npos) << err;
  EXPECT_NE(err.find("listen"), std::string::npos) << err;
}

TEST(Store, BadSpecsNameTheSpecAndTheAcceptedForms) {
  for (std::string spec :
       {"foo:", "", "file:", "tcp:", "tcp:host", "tcp:host:", "tcp::123", "tcp:host:0",
        "tcp:host:65536", "tcp:host:99999999", "tcp:host:12ab", "tcp:host:-1", "zmq://x"}) {
    std::string err;
    try {
      Store::open(spec, 0, 2);
      ADD_FAILURE() << "accepted '" << spec << "'";
    } catch (const std::invalid_argument& e) {
      err = e.what();
    }
    EXPECT_NE(err.find("'" + spec + "'"), std::string::npos) << err;
    EXPECT_NE(err.find("file:/path"), std::string::npos) << err;
    EXPECT_NE(err.find("tcp:host:port"), std::string::npos) << err;
  }
}

TEST(Store, BadRanksAndKeys) {
  EXPECT_THROW(Store::open("file:/tmp/x", 2, 2), std::invalid_argument);
  EXPECT_THROW(Store::open("file:/tmp/x", -1, 2), std::invalid_argument);
  EXPECT_THROW(Store::open("tcp:127.0.0.1:1234", 0, 0), std::invalid_argument);
  auto store = Store::open("file:" + temp_path("c3-store-keys"), 1, 2);
  EXPECT_THROW(store->fetch("has space", 10), std::invalid_argument);
  EXPECT_THROW(store->fetch("", 10), std::invalid_argument);
}
