#include "json_stream.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace c3::importer {
namespace {
constexpr size_t kChunk = size_t{1} << 20;

bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
}  // namespace

JsonStream::JsonStream(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw std::invalid_argument("'" + path + "': " + std::strerror(errno));
  }
  file_size_ = static_cast<int64_t>(st.st_size);
  gz_ = gzopen(path.c_str(), "rb");
  if (gz_ == nullptr) throw std::invalid_argument("'" + path + "': cannot open");
  gzbuffer(gz_, 256 * 1024);
}

JsonStream::~JsonStream() {
  if (gz_) gzclose(gz_);
}

int64_t JsonStream::compressed_read() const {
  return gz_ ? static_cast<int64_t>(gzoffset(gz_)) : 0;
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
  compact();
  const size_t old = buf_.size();
  buf_.resize(old + kChunk);
  const int n = gzread(gz_, buf_.data() + old, static_cast<unsigned>(kChunk));
  if (n <= 0) {
    buf_.resize(old);
    eof_ = true;
    return false;
  }
  buf_.resize(old + static_cast<size_t>(n));
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
  if (c == '{' || c == '[') {
    int depth = 0;
    size_t i = pos_;
    for (;;) {
      while (i < buf_.size()) {
        const char d = buf_[i];
        if (d == '"') {
          // Strings may hold braces: skip them (escapes included).
          ++i;
          for (;;) {
            while (i < buf_.size() && buf_[i] != '"' && buf_[i] != '\\') ++i;
            if (i < buf_.size() && buf_[i] == '\\') {
              i += 2;
              continue;
            }
            if (i < buf_.size()) break;
            const size_t rel = i - pos_;
            if (!fill()) {
              *error = "unterminated string";
              return false;
            }
            i = pos_ + rel;
          }
          ++i;
          continue;
        }
        if (d == '{' || d == '[') ++depth;
        if (d == '}' || d == ']') {
          if (--depth == 0) {
            *end = i + 1;
            return true;
          }
        }
        ++i;
      }
      const size_t rel = i - pos_;
      if (!fill()) {
        *error = "unexpected end of input inside an object or array";
        return false;
      }
      i = pos_ + rel;
    }
  }
  // number, true, false, null
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
