#include "mpi_comm.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <thread>

#include "c3/tracedb/output_file.h"

namespace c3::mpi {
namespace {

// Point-to-point messages (send_to) have a tag of their own: a collective's message from the same
// process can never be taken for one.
constexpr int kDataTag = 1, kBeatTag = 2, kPointTag = 3;
// A heartbeat and a goodbye: static, since a send may complete after beat() returns.
constexpr char kHeartbeat[2] = {'h', 'b'};
// The largest piece of one message: MPI counts in int, and a long message's pieces complete one
// by one, which tells wait() that it moves.
constexpr uint64_t kPiece = uint64_t{1} << 22;

void write_all(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    const ssize_t n = ::write(fd, s.data() + at, s.size() - at);
    if (n <= 0) return;
    at += static_cast<size_t>(n);
  }
}

}  // namespace

MpiComm::MpiComm(double timeout_s, int say) : timeout_(timeout_s), say_(say) {
  MPI_Comm_dup(MPI_COMM_WORLD, &data_);
  MPI_Comm_dup(MPI_COMM_WORLD, &beat_);
  MPI_Comm_rank(data_, &rank_);
  MPI_Comm_size(data_, &size_);
  MPI_Comm node = MPI_COMM_NULL;
  if (MPI_Comm_split_type(data_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node) ==
          MPI_SUCCESS &&
      node != MPI_COMM_NULL) {
    MPI_Comm_size(node, &local_);
    // A node is named by its lowest process (host names may repeat across containers).
    MPI_Allreduce(&rank_, &node_, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
  }
  // Host names, for the lines that name a process.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, data_);
  for (int p = 0; p < size_; ++p) {
    const char* h = all.data() + static_cast<size_t>(p) * MPI_MAX_PROCESSOR_NAME;
    hosts_.emplace_back(h, strnlen(h, MPI_MAX_PROCESSOR_NAME));
  }
  const double now = MPI_Wtime();
  heard_.assign(static_cast<size_t>(size_), now);
  bye_.assign(static_cast<size_t>(size_), false);
  interval_ = std::min(1.0, timeout_ / 4);
  last_sent_ = now - interval_;
  MPI_Irecv(&beat_in_, 1, MPI_CHAR, MPI_ANY_SOURCE, kBeatTag, beat_, &beat_recv_);
  beater_ = std::thread([this] { heartbeats(); });
}

MpiComm::~MpiComm() {
  if (beater_.joinable()) beater_.join();
}

void MpiComm::heartbeats() {
  // Until the main thread finishes; then the goodbyes, which the partner receives after every
  // heartbeat sent before them (same source, communicator and tag: in order).
  while (!finishing_) {
    pump();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  beating_ = false;
  beat('b');
  for (;;) {
    pump();
    bool all = true;
    for (int p = 0; p < size_; ++p) {
      const bool partner = rank_ == 0 ? p != 0 : p == 0;
      if (partner && !bye_[static_cast<size_t>(p)]) all = false;
    }
    if (all) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  MPI_Cancel(&beat_recv_);
  MPI_Wait(&beat_recv_, MPI_STATUS_IGNORE);
  MPI_Waitall(static_cast<int>(beat_sends_.size()), beat_sends_.data(), MPI_STATUSES_IGNORE);
  beat_sends_.clear();
}

std::string MpiComm::who(int p) const {
  return "process " + std::to_string(p) + " (host " +
         tracedb::printable(hosts_[static_cast<size_t>(p)]) + ")";
}

void MpiComm::abort(int code, const std::string& line) {
  write_all(say_, "c3scope-mpi: " + tracedb::printable(line) + "\n");
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return
}

void MpiComm::beat(char what) {
  // Finished sends are dropped; a send still pending to a peer that is not receiving is kept
  // (heartbeats are one byte: the library buffers them).
  std::erase_if(beat_sends_, [](MPI_Request& r) {
    int done = 0;
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
  const char* payload = what == 'b' ? &kHeartbeat[1] : &kHeartbeat[0];
  auto to = [&](int p) {
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Isend(payload, 1, MPI_CHAR, p, kBeatTag, beat_, &r);
    beat_sends_.push_back(r);
  };
  if (rank_ == 0) {
    for (int p = 1; p < size_; ++p) to(p);
  } else {
    to(0);
  }
}

void MpiComm::pump() {
  const double now = MPI_Wtime();
  for (;;) {
    int got = 0;
    MPI_Status st;
    MPI_Test(&beat_recv_, &got, &st);
    if (got == 0) break;
    if (st.MPI_SOURCE >= 0 && st.MPI_SOURCE < size_) {
      heard_[static_cast<size_t>(st.MPI_SOURCE)] = now;
      if (beat_in_ == 'b') bye_[static_cast<size_t>(st.MPI_SOURCE)] = true;
    }
    MPI_Irecv(&beat_in_, 1, MPI_CHAR, MPI_ANY_SOURCE, kBeatTag, beat_, &beat_recv_);
  }
  if (beating_ && now - last_sent_ >= interval_) {
    beat('h');
    last_sent_ = now;
  }
  for (int p = 0; p < size_; ++p) {
    const bool partner = rank_ == 0 ? p != 0 : p == 0;
    if (!partner || bye_[static_cast<size_t>(p)]) continue;
    const double silent = now - heard_[static_cast<size_t>(p)];
    if (silent > timeout_) {
      char b[64];
      std::snprintf(b, sizeof b, "%.0f", silent);
      abort(2, who(p) + " has not answered for " + b +
                   " s: it stopped or died; the job ends (C3SCOPE_MPI_TIMEOUT sets how long "
                   "a process is waited for)");
    }
  }
}

void MpiComm::wait(std::vector<MPI_Request>& reqs) {
  // A message moves only while its two processes call MPI (without a single-copy mechanism, a
  // piece at a time through shared memory): while pieces complete, this spins, yielding the
  // core; when nothing has completed for a while (a peer still mapping, for minutes), it sleeps
  // between tests, at most 200 us, so that a transfer that then starts soon runs at speed again.
  using Clock = std::chrono::steady_clock;
  auto moved = Clock::now();
  auto nap = std::chrono::microseconds(10);
  std::vector<int> done(reqs.size());
  for (;;) {
    int n = 0;
    MPI_Testsome(static_cast<int>(reqs.size()), reqs.data(), &n, done.data(), MPI_STATUSES_IGNORE);
    if (n == MPI_UNDEFINED) break;  // none left
    const auto now = Clock::now();
    if (n > 0) {
      moved = now;
      nap = std::chrono::microseconds(10);
    } else if (now - moved < std::chrono::milliseconds(20)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, std::chrono::microseconds(200));
    }
  }
  reqs.clear();
}

void MpiComm::send(const std::string& bytes, int to, std::vector<MPI_Request>& reqs,
                   std::vector<uint64_t>& lengths, int tag) {
  lengths.push_back(bytes.size());
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Isend(&lengths.back(), 1, MPI_UINT64_T, to, tag, data_, &r);
  reqs.push_back(r);
  for (uint64_t at = 0; at < bytes.size(); at += kPiece) {
    const auto n = static_cast<int>(std::min<uint64_t>(kPiece, bytes.size() - at));
    MPI_Isend(bytes.data() + at, n, MPI_CHAR, to, tag, data_, &r);
    reqs.push_back(r);
  }
}

std::string MpiComm::receive(int from, int tag) {
  uint64_t n = 0;
  std::vector<MPI_Request> reqs(1);
  MPI_Irecv(&n, 1, MPI_UINT64_T, from, tag, data_, &reqs[0]);
  wait(reqs);
  std::string out(n, '\0');
  for (uint64_t at = 0; at < n; at += kPiece) {
    const auto k = static_cast<int>(std::min<uint64_t>(kPiece, n - at));
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Irecv(out.data() + at, k, MPI_CHAR, from, tag, data_, &r);
    reqs.push_back(r);
  }
  wait(reqs);
  return out;
}

std::vector<std::string> MpiComm::gather(std::string bytes, int root) {
  // Up a binomial tree: each process receives its subtree's (process, bytes) pairs, then sends
  // them all to its parent in one message.
  const int rel = (rank_ - root + size_) % size_;
  std::vector<std::pair<int, std::string>> held;
  held.emplace_back(rank_, std::move(bytes));
  for (int mask = 1; mask < size_; mask <<= 1) {
    if ((rel & mask) != 0) {
      std::string packed;
      auto u64 = [&](uint64_t v) {
        for (int i = 0; i < 8; ++i) packed.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
      };
      u64(held.size());
      for (const auto& [p, b] : held) {
        u64(static_cast<uint64_t>(p));
        u64(b.size());
        packed += b;
      }
      held.clear();
      std::vector<MPI_Request> reqs;
      std::vector<uint64_t> lengths;
      lengths.reserve(1);
      send(packed, (rel - mask + root) % size_, reqs, lengths, kDataTag);
      wait(reqs);
      return {};
    }
    if (rel + mask < size_) {
      const std::string got = receive((rel + mask + root) % size_, kDataTag);
      size_t at = 0;
      auto u64 = [&]() {
        if (got.size() - at < 8) abort(2, "a message between c3scope's processes is cut short");
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i)
          v |= static_cast<uint64_t>(static_cast<unsigned char>(got[at + static_cast<size_t>(i)]))
               << (8 * i);
        at += 8;
        return v;
      };
      const uint64_t k = u64();
      for (uint64_t i = 0; i < k; ++i) {
        const auto p = static_cast<int>(u64());
        const uint64_t len = u64();
        if (len > got.size() - at || p < 0 || p >= size_)
          abort(2, "a message between c3scope's processes is cut short");
        held.emplace_back(p, got.substr(at, len));
        at += len;
      }
    }
  }
  std::vector<std::string> out(static_cast<size_t>(size_));
  for (auto& [p, b] : held) out[static_cast<size_t>(p)] = std::move(b);
  return out;
}

std::string MpiComm::broadcast(std::string bytes, int root) {
  // Down a binomial tree.
  const int rel = (rank_ - root + size_) % size_;
  int mask = 1;
  while (mask < size_) {
    if ((rel & mask) != 0) {
      bytes = receive((rel - mask + root) % size_, kDataTag);
      break;
    }
    mask <<= 1;
  }
  std::vector<MPI_Request> reqs;
  std::vector<uint64_t> lengths;
  lengths.reserve(64);  // one per child: at most log2(size) < 64
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rel + mask < size_) send(bytes, (rel + mask + root) % size_, reqs, lengths, kDataTag);
  }
  wait(reqs);
  return bytes;
}

std::vector<std::string> MpiComm::exchange(std::vector<std::string> out) {
  out.resize(static_cast<size_t>(size_));
  std::vector<std::string> in(static_cast<size_t>(size_));
  in[static_cast<size_t>(rank_)] = std::move(out[static_cast<size_t>(rank_)]);
  // Pairwise: in round k, send to rank + k and receive from rank - k.
  for (int k = 1; k < size_; ++k) {
    const int to = (rank_ + k) % size_, from = (rank_ - k + size_) % size_;
    std::vector<MPI_Request> reqs;
    std::vector<uint64_t> lengths;
    lengths.reserve(1);
    send(out[static_cast<size_t>(to)], to, reqs, lengths, kDataTag);
    in[static_cast<size_t>(from)] = receive(from, kDataTag);
    wait(reqs);
    out[static_cast<size_t>(to)] = {};
  }
  return in;
}

void MpiComm::send_to(int to, std::string bytes) {
  std::vector<MPI_Request> reqs;
  std::vector<uint64_t> lengths;
  lengths.reserve(1);
  send(bytes, to, reqs, lengths, kPointTag);
  wait(reqs);
}

std::string MpiComm::receive_from(int from) {
  return receive(from, kPointTag);
}

int MpiComm::finish(int rc) {
  // Process 0's code is every process's (the launcher returns it).
  std::string code = broadcast(std::to_string(rc), 0);
  rc = std::atoi(code.c_str());
  // Everyone is here: the heartbeat thread says goodbye and ends.
  MPI_Request b = MPI_REQUEST_NULL;
  MPI_Ibarrier(data_, &b);
  std::vector<MPI_Request> reqs{b};
  wait(reqs);
  finishing_ = true;
  beater_.join();
  MPI_Comm_free(&beat_);
  MPI_Comm_free(&data_);
  MPI_Finalize();
  return rc;
}

}  // namespace c3::mpi
