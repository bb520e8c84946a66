#include "json_out.h"

#include <cinttypes>

namespace c3::exporter {
namespace {

// The length of the valid UTF-8 sequence that starts at s[i] (a byte >= 0x80), 0 when none does
// (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
size_t utf8_length(const std::string& s, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

void JsonOut::str(const std::string& s) {
  std::fputc('"', f_);
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = utf8_length(s, i);
      if (n == 0) {
        std::fputs("\\ufffd", f_);
        ++i;
      } else {
        std::fwrite(s.data() + i, 1, n, f_);
        i += n;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        std::fputs("\\\"", f_);
        break;
      case '\\':
        std::fputs("\\\\", f_);
        break;
      case '\n':
        std::fputs("\\n", f_);
        break;
      case '\r':
        std::fputs("\\r", f_);
        break;
      case '\t':
        std::fputs("\\t", f_);
        break;
      default:
        if (c < 0x20) {
          std::fprintf(f_, "\\u%04x", c);
        } else {
          std::fputc(c, f_);
        }
    }
  }
  std::fputc('"', f_);
}

void JsonOut::ts(int64_t ns) {
  const bool neg = ns < 0;
  // In unsigned arithmetic: INT64_MIN has no positive int64 (a hostile trace may hold it).
  const uint64_t a = neg ? uint64_t{0} - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::fprintf(f_, "%s%" PRIu64 ".%03" PRIu64, neg ? "-" : "", a / 1000, a % 1000);
}

}  // namespace c3::exporter
