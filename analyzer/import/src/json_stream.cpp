#include "json_stream.h"

#include <fcntl.h>
#include <isa-l/igzip_lib.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace c3::importer {
namespace {
constexpr size_t kChunk = size_t{1} << 20;
// Each chunk's data starts this far in: fill() puts the bytes of the buffer not read yet (the
// start of an element the chunk ends) in front of it and takes the chunk as its buffer, rather
// than copy every inflated byte once more.
constexpr size_t kRoom = size_t{16} << 10;

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// The first index from i (up to n) of a byte that ends a run inside a string: '"' or '\\'.
// Returns i itself when i >= n (an escape may have stepped past the end of the buffer).
size_t find_in_string(const char* b, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    const int m =
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (m != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(m)));
  }
#endif
  for (; i < n; ++i) {
    if (b[i] == '"' || b[i] == '\\') return i;
  }
  return i;
}

// Bit k of each mask: byte k of a 64-byte block is a quote, a backslash, '{' or '[', '}' or ']'.
struct Block64 {
  uint64_t quote = 0, backslash = 0, open = 0, close = 0;
};

Block64 classify(const char* p) {
  Block64 b;
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  const __m128i open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}'), lower = _mm_set1_epi8(0x20);
  for (size_t k = 0; k < 4; ++k) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
    const __m128i folded = _mm_or_si128(v, lower);  // '[' -> '{', ']' -> '}'
    auto bits = [&](__m128i eq) {
      return static_cast<uint64_t>(static_cast<uint16_t>(_mm_movemask_epi8(eq))) << (16 * k);
    };
    b.quote |= bits(_mm_cmpeq_epi8(v, quote));
    b.backslash |= bits(_mm_cmpeq_epi8(v, backslash));
    b.open |= bits(_mm_cmpeq_epi8(folded, open));
    b.close |= bits(_mm_cmpeq_epi8(folded, close));
  }
#else
  for (int k = 0; k < 64; ++k) {
    const uint64_t bit = uint64_t{1} << k;
    const char c = p[k];
    if (c == '"') b.quote |= bit;
    if (c == '\\') b.backslash |= bit;
    if (c == '{' || c == '[') b.open |= bit;
    if (c == '}' || c == ']') b.close |= bit;
  }
#endif
  return b;
}

// Bit k of the result: the parity of the set bits at or below k (inside a string, for quotes).
uint64_t prefix_xor(uint64_t x) {
  for (int shift = 1; shift < 64; shift *= 2) x ^= x << shift;
  return x;
}

// The same outside strings: '"', '{', '}', '[' or ']' (a bracket ORed with 0x20 is a brace).
size_t find_structural(const char* b, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), open = _mm_set1_epi8('{'), close = _mm_set1_epi8('}');
  const __m128i lower = _mm_set1_epi8(0x20);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    const __m128i folded = _mm_or_si128(v, lower);
    const __m128i hit =
        _mm_or_si128(_mm_cmpeq_epi8(v, quote),
                     _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)));
    const int m = _mm_movemask_epi8(hit);
    if (m != 0) return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(m)));
  }
#endif
  for (; i < n; ++i) {
    const char c = b[i];
    if (c == '"' || c == '{' || c == '}' || c == '[' || c == ']') return i;
  }
  return i;
}
}  // namespace

// ISA-L's inflate state (igzip: the same deflate, several times zlib's speed) and the input read
// ahead of it. With ISAL_GZIP it reads each member's gzip header and checks its trailer (the CRC-32
// and the length) as zlib does.
struct JsonStream::Inflate {
  inflate_state z{};
  bool started = false;   // the first bytes were read (gzip or plain is known)
  bool in_member = true;  // inside a gzip member; false after one ended
  bool eof = false;
  std::string in = std::string(size_t{64} << 10, '\0');
  void start_member() {
    // isal_inflate_reset leaves the input where it is; init/reset clear the gzip flag.
    uint8_t* next = z.next_in;
    const uint32_t avail = z.avail_in;
    isal_inflate_reset(&z);
    z.crc_flag = ISAL_GZIP;
    z.next_in = next;
    z.avail_in = avail;
  }
};

namespace {
// ISA-L's errors in zlib's words (what users and `gzip -t` know).
const char* inflate_error(int rc) {
  switch (rc) {
    case ISAL_INVALID_BLOCK:
      return "invalid block";
    case ISAL_INVALID_SYMBOL:
      return "invalid code";
    case ISAL_INVALID_LOOKBACK:
      return "invalid distance too far back";
    case ISAL_INVALID_WRAPPER:
      return "incorrect header check";
    case ISAL_UNSUPPORTED_METHOD:
      return "unknown compression method";
    case ISAL_INCORRECT_CHECKSUM:
      return "header crc mismatch";
    case ISAL_NEED_DICT:
      return "need dictionary";
    default:
      return "compressed data error";
  }
}
}  // namespace

JsonStream::JsonStream(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw std::invalid_argument("'" + path + "': " + std::strerror(errno));
  }
  file_size_ = static_cast<int64_t>(st.st_size);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::invalid_argument("'" + path + "': cannot open: " + std::strerror(errno));
  path_ = path;
  size_hint_ = file_size_;
  unsigned char head[2] = {}, tail[4] = {};
  if (file_size_ >= 18 && ::pread(fd_, head, 2, 0) == 2 && head[0] == 0x1f && head[1] == 0x8b &&
      ::pread(fd_, tail, 4, file_size_ - 4) == 4) {
    size_hint_ = static_cast<int64_t>(tail[0]) | static_cast<int64_t>(tail[1]) << 8 |
                 static_cast<int64_t>(tail[2]) << 16 | static_cast<int64_t>(tail[3]) << 24;
  }
  try {
    z_ = new Inflate;
    reader_ = std::thread([this] { read_ahead(); });
  } catch (...) {  // no thread: nothing to read with (the destructor does not run)
    delete z_;
    ::close(fd_);
    throw;
  }
}

JsonStream::~JsonStream() {
  {
    const std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  room_.notify_all();
  if (reader_.joinable()) reader_.join();
  delete z_;
  if (fd_ >= 0) ::close(fd_);
}

int64_t JsonStream::compressed_read() const {
  return compressed_read_.load(std::memory_order_relaxed);
}

// The input is read in pieces of Inflate::in's size and inflated straight into the chunk, so
// every byte inflated before damage is handed out: a damaged trailer (a wrong CRC or length after
// data that inflated whole) loses nothing, damaged deflate data only what follows it. (gzread()
// returned nothing of a read that ended at damage: --salvage lost up to one read's worth.)
bool JsonStream::read_more(std::string& chunk, size_t& have, std::string& damage) {
  Inflate& s = *z_;
  inflate_state& z = s.z;
  for (;;) {
    if (z.avail_in == 0 && !s.eof) {
      ssize_t n = 0;
      do {
        n = ::read(fd_, s.in.data(), s.in.size());
      } while (n < 0 && errno == EINTR);
      if (n < 0) {
        damage = std::strerror(errno);
        return false;
      }
      if (n == 0) s.eof = true;
      file_read_ += n;
      if (!s.started && n > 0) {
        s.started = true;
        gzip_ = n >= 2 && static_cast<unsigned char>(s.in[0]) == 0x1f &&
                static_cast<unsigned char>(s.in[1]) == 0x8b;
        if (gzip_) {
          isal_inflate_init(&z);
          z.crc_flag = ISAL_GZIP;
        }
      }
      z.next_in = reinterpret_cast<uint8_t*>(s.in.data());
      z.avail_in = static_cast<uint32_t>(n);
    }
    if (!gzip_) {  // plain text: copied as it is
      if (z.avail_in == 0) return false;
      const size_t n = std::min(static_cast<size_t>(z.avail_in), chunk.size() - have);
      std::memcpy(chunk.data() + have, z.next_in, n);
      have += n;
      z.next_in += n;
      z.avail_in -= static_cast<uint32_t>(n);
      return true;
    }
    if (!s.in_member) {
      // Another gzip member may follow (zcat reads them all); anything else after the stream
      // is ignored, as gzip does.
      if (z.avail_in == 0) {
        if (s.eof) return false;
        continue;
      }
      if (*z.next_in != 0x1f) return false;
      s.start_member();
      s.in_member = true;
    }
    z.next_out = reinterpret_cast<uint8_t*>(chunk.data() + have);
    z.avail_out = static_cast<uint32_t>(chunk.size() - have);
    const uint32_t in_before = z.avail_in;
    const int rc = isal_inflate(&z);
    const size_t out = chunk.size() - z.avail_out - have;
    have += out;
    if (rc == ISAL_DECOMP_OK) {
      if (z.block_state == ISAL_BLOCK_FINISH) {
        s.in_member = false;
        return true;
      }
      if (out > 0 || z.avail_in != in_before) return true;
      // No progress: it needs input, and at the end of the file there is none.
      if (s.eof) {
        damage = "the compressed stream ends early (truncated)";
        return false;
      }
      if (z.avail_in == 0) continue;
      damage = "compressed data error";  // input and room left, yet no progress
      return false;
    }
    // isal_inflate checks the trailer once every byte of the member was inflated and handed out
    // (a header's CRC is checked before any: the state is still in the header then).
    trailer_only_ = rc == ISAL_INCORRECT_CHECKSUM && z.block_state == ISAL_BLOCK_FINISH;
    damage = trailer_only_ ? trailer_error() : inflate_error(rc);
    return false;
  }
}

// Which of the trailer's two checks failed, in zlib's words: its 8 bytes are the last consumed.
std::string JsonStream::trailer_error() const {
  const inflate_state& z = z_->z;
  unsigned char t[8] = {};
  const int64_t at = file_read_ - static_cast<int64_t>(z.avail_in) - 8;
  if (at >= 0 && ::pread(fd_, t, sizeof t, at) == static_cast<ssize_t>(sizeof t)) {
    auto le32 = [&](int k) {
      return static_cast<uint32_t>(t[k]) | static_cast<uint32_t>(t[k + 1]) << 8 |
             static_cast<uint32_t>(t[k + 2]) << 16 | static_cast<uint32_t>(t[k + 3]) << 24;
    };
    if (le32(0) == z.crc && le32(4) != z.total_out) return "incorrect length check";
  }
  return "incorrect data check";
}

void JsonStream::read_ahead() {
  constexpr size_t kAhead = 4;
  // A chunk is as large as what the size hint says is left, and one byte more (to see the end),
  // up to kChunk: a small file does not clear a whole megabyte (a job of many small traces, a
  // test that reads thousands). A wrong hint (a gzip member's length is mod 2^32) only means
  // more chunks.
  size_t produced = 0;
  auto chunk_size = [&] {
    const auto left = static_cast<uint64_t>(std::max<int64_t>(size_hint_, 0));
    if (left <= produced || left - produced >= kChunk) return kChunk;
    return std::max<size_t>(static_cast<size_t>(left - produced) + 1, size_t{4} << 10);
  };
  for (;;) {
    std::string chunk;
    {
      // A chunk fill() has copied, when there is one: no new memory to allocate, fault in and
      // clear per megabyte inflated.
      const std::lock_guard<std::mutex> lock(mu_);
      if (!spare_.empty()) {
        chunk = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    size_t have = kRoom;  // (the data goes after the room: fill())
    bool end = false;
    std::string damage;
    try {
      const size_t want = kRoom + chunk_size();
      chunk.reserve(want + kPadding);  // the bytes after any element stay readable
      chunk.resize(want);
      while (have < want) {
        if (!read_more(chunk, have, damage)) {
          end = true;
          break;
        }
      }
      produced += have - kRoom;
    } catch (...) {  // no memory for a chunk: the input ends here, as at a read error
      end = true;
      damage = "out of memory";
    }
    const int64_t offset = file_read_ - static_cast<int64_t>(z_->z.avail_in);
    compressed_read_.store(offset, std::memory_order_relaxed);
    std::unique_lock<std::mutex> lock(mu_);
    if (!damage.empty()) {
      input_error_ = damage;
      input_error_at_ = offset;
    }
    if (have > kRoom) {
      chunk.resize(have);
      room_.wait(lock, [&] { return stop_ || chunks_.size() < kAhead; });
      if (stop_) return;
      try {
        chunks_.push_back(std::move(chunk));
      } catch (...) {  // no memory for the queue: the input ends here, as at a read error
        end = true;
        if (input_error_.empty()) input_error_ = "out of memory";
        trailer_only_ = false;
      }
    }
    if (end) {
      input_done_ = true;
      lock.unlock();
      ready_.notify_one();
      return;
    }
    lock.unlock();
    ready_.notify_one();
  }
}

std::string JsonStream::input_error(int64_t* compressed_offset) {
  // The rest of the input is read (and dropped) first: a gzip stream's checksum and length are
  // checked only at its end, which the JSON may have closed before (the issue 12 probes: a bit
  // flipped in the deflate data turned a few events into bad JSON and the CRC error went unseen
  // when the import finished before the reading thread reached the trailer).
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (!chunks_.empty()) {
      chunks_.clear();
      room_.notify_one();
    }
    if (input_done_) break;
    ready_.wait(lock, [&] { return input_done_ || !chunks_.empty(); });
  }
  if (compressed_offset != nullptr) *compressed_offset = input_error_at_;
  return input_error_;
}

void JsonStream::compact() {
  if (pos_ > kChunk) {
    buf_.erase(0, pos_);
    consumed_base_ += static_cast<int64_t>(pos_);
    pos_ = 0;
  }
}

bool JsonStream::fill() {
  if (eof_) return false;
  std::string chunk;
  {
    std::unique_lock<std::mutex> lock(mu_);
    ready_.wait(lock, [&] { return input_done_ || !chunks_.empty(); });
    if (chunks_.empty()) {
      eof_ = true;
      return false;
    }
    chunk = std::move(chunks_.front());
    chunks_.pop_front();
  }
  room_.notify_one();
  const size_t left = buf_.size() - pos_;
  if (left <= kRoom) {
    // The chunk becomes the buffer, what is left of this one in front of its data; the offsets
    // of what is left change (callers keep theirs from pos_), bytes_read() does not.
    const size_t at = kRoom - left;
    if (left > 0) std::memcpy(chunk.data() + at, buf_.data() + pos_, left);
    consumed_base_ += static_cast<int64_t>(pos_) - static_cast<int64_t>(at);
    pos_ = at;
    buf_.swap(chunk);  // (read_ahead reserved the chunk's padding)
  } else {
    compact();
    buf_.reserve(buf_.size() + chunk.size() - kRoom + kPadding);  // the padding stays readable
    buf_.append(chunk, kRoom, std::string::npos);
  }
  {
    const std::lock_guard<std::mutex> lock(mu_);
    try {
      if (spare_.size() < 2) spare_.push_back(std::move(chunk));  // for read_ahead to fill again
    } catch (...) {  // no memory to keep it: it is freed, and read_ahead makes a new one
    }
  }
  return true;
}

bool JsonStream::need(size_t n) {
  while (buf_.size() - pos_ < n) {
    if (!fill()) return false;
  }
  return true;
}

bool JsonStream::skip_ws() {
  for (;;) {
    while (pos_ < buf_.size() && is_ws(buf_[pos_])) ++pos_;
    if (pos_ < buf_.size()) return true;
    if (!fill()) return false;
  }
}

bool JsonStream::scan_string(size_t* end) {
  size_t i = pos_ + 1;
  for (;;) {
    while (i < buf_.size()) {
      const char c = buf_[i];
      if (c == '\\') {
        i += 2;
        continue;
      }
      if (c == '"') {
        *end = i + 1;
        return true;
      }
      ++i;
    }
    const size_t rel = i - pos_;
    if (!fill()) return false;
    i = pos_ + rel;  // fill() may have compacted the buffer
  }
}

bool JsonStream::scan_value(size_t* end, std::string* error) {
  if (!skip_ws()) {
    *error = "unexpected end of input";
    return false;
  }
  const char c = buf_[pos_];
  if (c == '"') {
    if (!scan_string(end)) {
      *error = "unterminated string";
      return false;
    }
    return true;
  }
  if (c == '{' || c == '[') return scan_container(end, error);
  return scan_scalar(end, error);
}

bool JsonStream::scan_container(size_t* end, std::string* error) {
  int depth = 0;
  size_t i = pos_;
  bool in_string = false;
  for (;;) {
    const size_t n = buf_.size();
    // 64 bytes at a time while they hold no backslash: which of them lie inside strings
    // follows from the quotes alone, and only the brackets outside strings are looked at.
    if (i + 64 <= n) {
      const Block64 b = classify(buf_.data() + i);
      if (b.backslash == 0) {
        const uint64_t inside = prefix_xor(b.quote) ^ (in_string ? ~uint64_t{0} : 0);
        for (uint64_t m = (b.open | b.close) & ~inside; m != 0; m &= m - 1) {
          const int at = __builtin_ctzll(m);
          if (((b.open >> at) & 1) != 0) {
            ++depth;
          } else if (--depth == 0) {
            *end = i + static_cast<size_t>(at) + 1;
            return true;
          }
        }
        in_string = (inside >> 63) != 0;
        i += 64;
        continue;
      }
    }
    if (in_string) {
      i = find_in_string(buf_.data(), i, n);
      if (i < n) {
        if (buf_[i] == '\\') {
          i += 2;  // the escaped character, whatever it is
        } else {
          in_string = false;
          ++i;
        }
        continue;
      }
    } else {
      i = find_structural(buf_.data(), i, n);
      if (i < n) {
        const char d = buf_[i++];
        if (d == '"') {
          in_string = true;  // strings may hold braces: skipped
        } else if (d == '{' || d == '[') {
          ++depth;
        } else if (--depth == 0) {
          *end = i;
          return true;
        }
        continue;
      }
    }
    const size_t rel = i - pos_;
    if (!fill()) {
      *error =
          in_string ? "unterminated string" : "unexpected end of input inside an object or array";
      return false;
    }
    i = pos_ + rel;  // fill() may have compacted the buffer
  }
}

bool JsonStream::scan_scalar(size_t* end, std::string* error) {
  const char c = buf_[pos_];
  size_t i = pos_;
  for (;;) {
    while (i < buf_.size() && buf_[i] != ',' && buf_[i] != '}' && buf_[i] != ']' && !is_ws(buf_[i]))
      ++i;
    if (i < buf_.size() || eof_) break;
    const size_t rel = i - pos_;
    fill();
    i = pos_ + rel;
  }
  if (i == pos_) {
    *error = std::string("unexpected '") + c + "'";
    return false;
  }
  *end = i;
  return true;
}

bool JsonStream::run(const std::string& array_key,
                     const std::function<void(std::string_view, std::string_view)>& member,
                     const std::function<void(std::string_view, int64_t)>& element,
                     std::string* error) {
  auto fail = [&](const std::string& why) {
    *error = why + " at byte " + std::to_string(bytes_read());
    return false;
  };
  // A UTF-8 byte order mark before the JSON is skipped, as JSON parsers may (RFC 8259, 8.1).
  if (need(3) && buf_.compare(pos_, 3, "\xEF\xBB\xBF") == 0) pos_ += 3;
  if (!skip_ws()) return fail("empty input");
  if (buf_[pos_] != '{') return fail("not a JSON object");
  ++pos_;
  for (;;) {
    if (!skip_ws()) return fail("unexpected end of input");
    if (buf_[pos_] == '}') {
      ++pos_;
      return true;
    }
    if (buf_[pos_] == ',') {
      ++pos_;
      continue;
    }
    if (buf_[pos_] != '"') return fail("expected a member name");
    size_t kend = 0;
    if (!scan_string(&kend)) return fail("unterminated member name");
    const std::string key = buf_.substr(pos_ + 1, kend - pos_ - 2);
    pos_ = kend;
    if (!skip_ws() || buf_[pos_] != ':') return fail("expected ':' after \"" + key + "\"");
    ++pos_;
    if (!skip_ws()) return fail("unexpected end of input");
    if (key == array_key && buf_[pos_] == '[') {
      ++pos_;
      array_seen_ = true;
      for (;;) {
        if (!skip_ws()) return fail("unexpected end of input in \"" + key + "\"");
        const char c = buf_[pos_];
        if (c == ']') {
          ++pos_;
          break;
        }
        if (c == ',') {
          ++pos_;
          continue;
        }
        const int64_t at = bytes_read();
        size_t vend = 0;
        std::string why;
        if (!scan_value(&vend, &why)) return fail(why);
        element(std::string_view(buf_).substr(pos_, vend - pos_), at);
        pos_ = vend;
      }
      continue;
    }
    size_t vend = 0;
    std::string why;
    if (!scan_value(&vend, &why)) return fail(why);
    member(key, std::string_view(buf_).substr(pos_, vend - pos_));
    pos_ = vend;
  }
}

}  // namespace c3::importer
