// What c3scope's processes send each other (distributed.h): the byte encoding of the distributed
// analyze, clock alignment and export, and which process owns a collective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace c3::analyzer {

// The bytes the processes send each other: integers as 8 bytes (little-endian, u64) or in as
// few bytes as they need (var), strings with their length first. Only c3scope's own processes write
// them; a short read is still an error, not a crash.
class Pack {
 public:
  Pack& u64(uint64_t v) {
    char b[8];
    for (int i = 0; i < 8; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
    b_.append(b, 8);
    return *this;
  }
  Pack& str(const std::string& s) {
    u64(s.size());
    b_ += s;
    return *this;
  }
  // A signed integer in as few bytes as it needs (zigzag, 7 bits a byte): times and counts of
  // the critical path's chains, most of them small.
  Pack& var(int64_t v) {
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      b_.push_back(static_cast<char>((z & 0x7f) | 0x80));
      z >>= 7;
    }
    b_.push_back(static_cast<char>(z));
    return *this;
  }
  // Bytes packed elsewhere, as they are.
  Pack& raw(std::string_view b) {
    b_.append(b);
    return *this;
  }
  std::string take() { return std::move(b_); }

 private:
  std::string b_;
};

class Unpack {
 public:
  // `b` must outlive the Unpack (a view of it is kept).
  explicit Unpack(std::string_view b) : b_(b) {}
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(b_[at_ + static_cast<size_t>(i)]))
           << (8 * i);
    at_ += 8;
    return v;
  }
  std::string str() { return std::string(view()); }
  // A string's bytes where they are.
  std::string_view view() {
    const uint64_t n = u64();
    need(n);
    const std::string_view s = b_.substr(at_, n);
    at_ += n;
    return s;
  }
  int64_t var() {
    uint64_t z = 0;
    for (int shift = 0;; shift += 7) {
      need(1);
      const auto c = static_cast<unsigned char>(b_[at_++]);
      if (shift > 63) throw std::runtime_error("a message between c3scope's processes is garbled");
      z |= static_cast<uint64_t>(c & 0x7f) << shift;
      if ((c & 0x80) == 0) break;
    }
    return static_cast<int64_t>((z >> 1) ^ (0 - (z & 1)));
  }
  // A count of items that take at least `each` bytes apiece in what is left: checked against
  // those bytes, so that a garbled count never makes a caller reserve or loop past them.
  uint64_t count(size_t each) {
    const uint64_t n = u64();
    if (n > left() / (each == 0 ? 1 : each))
      throw std::runtime_error("a message between c3scope's processes is garbled");
    return n;
  }
  bool done() const { return at_ == b_.size(); }
  size_t left() const { return b_.size() - at_; }

 private:
  void need(uint64_t n) const {
    if (n > b_.size() - at_)
      throw std::runtime_error("a message between c3scope's processes is cut short");
  }
  std::string_view b_;
  size_t at_ = 0;
};

// A summary's JSON as a process holds it until process 0 takes it: deflated (ISA-L, its fastest
// level), or stored when the deflated bytes would not fit in half its size and 4 KiB (JSON that
// barely shrinks); "" stays "". summary_of_held gives the JSON back and throws
// std::runtime_error on bytes held_summary did not make.
std::string held_summary(std::string text);
std::string summary_of_held(const std::string& h);

// Collectives of one communicator dealt to one owner together: runs of this many sequence
// numbers (a data-parallel communicator of every rank has most of a job's records; its runs
// spread over the processes).
constexpr int64_t kSeqRun = 256;

// The process that owns a run of a communicator's collectives: FNV-1a of its name and the run.
inline size_t owner_of(const std::string& comm, int64_t seq, int size) {
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](unsigned char c) {
    h ^= c;
    h *= 1099511628211ULL;
  };
  for (const char c : comm) mix(static_cast<unsigned char>(c));
  const auto run = static_cast<uint64_t>(seq / kSeqRun);
  for (int i = 0; i < 8; ++i) mix(static_cast<unsigned char>((run >> (8 * i)) & 0xff));
  return static_cast<size_t>(h % static_cast<uint64_t>(size));
}

}  // namespace c3::analyzer
