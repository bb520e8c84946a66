// The tokenizer's fast path (kineto_tokenize.h, read_event_fast): an event of a profiler trace
// read in one forward pass over its bytes, without simdjson's per-document set-up and its
// generic value iteration. The trace's events are short objects (about 250 bytes) whose bytes
// are mostly one kernel or operator name, so the pass spends its time finding closing quotes,
// 16 bytes at a time.
//
// It takes only what it can read exactly as simdjson reads it, and leaves everything else to
// simdjson: it gives up (returns false) on any escape, any byte outside printable ASCII, an
// integer of more than 18 digits, a negative zero integer, an exponent of more than 4 digits, a
// number of more than 100 characters, a decimal std::from_chars does not read (out of range),
// nesting deeper than about kMaxDepth, anything that is not valid JSON, and anything after the
// object.
// What it takes is valid JSON, read as simdjson reads it: strings as written, integers exactly,
// decimals with std::from_chars, correctly rounded (read_event_json reads them so too: simdjson
// 3.0's own reading of long decimals is wrong). The differential fuzz harness
// (fuzz/kineto_event_fuzz.cpp) and the KinetoFast tests hold the two to the same Event.
#include <charconv>
#include <cstring>
#include <system_error>

#include "kineto_tokenize.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace c3::importer::kineto {
namespace {

// (The reader's small steps are inlined into its callers, so that the cursor stays in a register.)
#define C3_INLINE [[gnu::always_inline]] inline

constexpr int kMaxDepth = 32;
constexpr int kMaxIntegerDigits = 18;  // below 10^18: an int64 holds it, negated too
constexpr int kMaxExponentDigits = 4;  // beyond a double's range already
constexpr int kMaxNumberLength = 100;  // (longer numbers are left to simdjson)

C3_INLINE bool is_ws(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
C3_INLINE bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

class Reader {
 public:
  Reader(const char* begin, const char* end) : p_(begin), end_(end) {}

  C3_INLINE bool at_end() {
    skip_ws();
    return p_ == end_;
  }
  C3_INLINE bool take(char c) {
    skip_ws();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  C3_INLINE char peek() {
    skip_ws();
    return p_ == end_ ? '\0' : *p_;
  }

  // A string with no escape, no control character and only ASCII; p_ at its opening quote.
  C3_INLINE bool string(std::string_view* out) {
    if (p_ == end_ || *p_ != '"') return false;
    const char* s = p_ + 1;
    const char* q = s;
#if defined(__SSE2__)
    // 16-byte loads that start before end_ read at most 15 bytes into the padding (>= 64 bytes).
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(' ');
    for (;; q += 16) {
      if (q >= end_) return false;
      const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
      // (signed: bytes of 0x80 and above are below ' ' too)
      const __m128i stop =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, backslash)),
                       _mm_cmplt_epi8(x, space));
      const int mask = _mm_movemask_epi8(stop);
      if (mask != 0) {
        q += __builtin_ctz(static_cast<unsigned>(mask));
        break;
      }
    }
#else
    while (q < end_) {
      const auto c = static_cast<unsigned char>(*q);
      if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
      ++q;
    }
#endif
    if (q >= end_ || *q != '"') return false;
    *out = std::string_view(s, static_cast<size_t>(q - s));
    p_ = q + 1;
    return true;
  }

  // A JSON number at p_ into *v: integers of up to 18 digits as i64, others with a fraction or an
  // exponent as f64.
  C3_INLINE bool number(Value* v) {
    const char* s = p_;
    const char* q = s;
    const bool negative = q != end_ && *q == '-';
    if (negative) ++q;
    if (q == end_) return false;
    const char* digits = q;
    uint64_t x = 0;  // the integer part, while it has at most 18 digits
    if (*q == '0') {
      ++q;
    } else if (*q >= '1' && *q <= '9') {
      for (; q != end_ && is_digit(*q); ++q) x = x * 10 + static_cast<uint64_t>(*q - '0');
    } else {
      return false;
    }
    const auto n_digits = q - digits;
    bool integral = true;
    if (q != end_ && *q == '.') {
      ++q;
      if (q == end_ || !is_digit(*q)) return false;
      while (q != end_ && is_digit(*q)) ++q;
      integral = false;
    }
    if (q != end_ && (*q == 'e' || *q == 'E')) {
      ++q;
      if (q != end_ && (*q == '+' || *q == '-')) ++q;
      const char* exponent = q;
      if (q == end_ || !is_digit(*q)) return false;
      while (q != end_ && is_digit(*q)) ++q;
      // simdjson refuses an exponent of more than 19 digits, leading zeros counted, even
      // 0e000...1 (a regression of the differential fuzz harness): long exponents are left to it.
      if (q - exponent > kMaxExponentDigits) return false;
      integral = false;
    }
    if (q - s > kMaxNumberLength) return false;
    if (integral) {
      if (n_digits > kMaxIntegerDigits) return false;  // (x wrapped past 19 digits: unused)
      if (negative && x == 0) return false;            // -0: simdjson's own rule, left to it
      v->type = Value::Type::i64;
      v->i = negative ? -static_cast<int64_t>(x) : static_cast<int64_t>(x);
    } else {
      double d = 0;
      const auto r = std::from_chars(s, q, d, std::chars_format::general);
      if (r.ec != std::errc{} || r.ptr != q) return false;
      v->type = Value::Type::f64;
      v->d = d;
    }
    p_ = q;
    return true;
  }

  // Any value, checked and passed over.
  bool skip(int depth) {
    switch (peek()) {
      case '"': {
        std::string_view unused;
        return string(&unused);
      }
      case '{':
        return object(depth + 1, [&](std::string_view) { return skip(depth + 1); });
      case '[':
        return array(depth + 1, [&] { return skip(depth + 1); });
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default: {
        Value unused;
        return number(&unused);
      }
    }
  }

  // A scalar as read_value reads it: a string as written, a number, any other value passed over
  // (left as none).
  C3_INLINE bool value(Value* v) {
    const char c = peek();
    if (c == '"') {
      if (!string(&v->s)) return false;
      v->type = Value::Type::str;
      return true;
    }
    if (c == '-' || is_digit(c)) return number(v);
    return skip(1);
  }

  // A string (name, phase, category); any other value passed over, leaving *out as it is.
  C3_INLINE bool text(std::string_view* out) {
    return peek() == '"' ? string(out) : skip(1);
  }

  // {"key": value, ...}: f(key) reads each value.
  template <class F>
  bool object(int depth, F f) {
    if (depth > kMaxDepth || !take('{')) return false;
    if (take('}')) return true;
    for (;;) {
      std::string_view key;
      if (peek() != '"' || !string(&key) || !take(':')) return false;
      skip_ws();
      if (!f(key)) return false;
      if (take(',')) continue;
      return take('}');
    }
  }

  // [value, ...]: f() reads each value.
  template <class F>
  bool array(int depth, F f) {
    if (depth > kMaxDepth || !take('[')) return false;
    if (take(']')) return true;
    for (;;) {
      skip_ws();
      if (!f()) return false;
      if (take(',')) continue;
      return take(']');
    }
  }

 private:
  C3_INLINE void skip_ws() {
    // (most tokens follow one space or none: one compare tells a token from whitespace)
    while (p_ != end_ && static_cast<unsigned char>(*p_) <= ' ' && is_ws(*p_)) ++p_;
  }
  template <size_t N>
  bool literal(const char (&word)[N]) {
    if (static_cast<size_t>(end_ - p_) < N - 1 || std::memcmp(p_, word, N - 1) != 0) return false;
    p_ += N - 1;
    return true;
  }

  const char* p_;
  const char* end_;
};

// Grid or block dimensions: the first three integers of an array, 1 for any missing.
bool dims(Reader& r, int64_t* out) {
  if (r.peek() != '[') return r.skip(1);
  size_t i = 0;
  return r.array(2, [&] {
    Value n;
    if (!r.value(&n)) return false;
    if (i < 3 && n.type == Value::Type::i64) out[i] = n.i;
    ++i;
    return true;
  });
}

bool args(Reader& r, Args* a) {
  Seen seen;
  return r.object(1, [&](std::string_view key) {
    // (a key read here and not first: its value is passed over, as read_args does)
    auto val = [&](int k, Value* v) { return seen.first(k) ? r.value(v) : r.skip(1); };
    auto txt = [&](int k, std::string_view* s) { return seen.first(k) ? r.text(s) : r.skip(1); };
    if (is(key, "device")) return val(0, &a->device);
    if (is(key, "stream")) return val(1, &a->stream);
    if (is(key, "correlation")) return val(2, &a->correlation);
    if (is(key, "registers per thread")) return val(3, &a->registers);
    if (is(key, "shared memory")) return val(4, &a->shared_memory);
    if (is(key, "In msg nelems")) return val(5, &a->in_nelems);
    if (is(key, "Group size")) return val(6, &a->group_size);
    if (is(key, "bytes")) return val(7, &a->bytes);
    if (is(key, "cbid")) return val(8, &a->cbid);
    if (is(key, "Collective name")) return txt(9, &a->collective_name);
    if (is(key, "dtype")) return txt(10, &a->dtype);
    if (is(key, "Process Group Name")) return txt(11, &a->group_name);
    if (is(key, "grid")) return seen.first(12) ? dims(r, a->grid) : r.skip(1);
    if (is(key, "block")) return seen.first(13) ? dims(r, a->block) : r.skip(1);
    if (is(key, "wait_on_stream")) return val(14, &a->wait_on_stream);
    if (is(key, "wait_on_cuda_event_record_corr_id")) return val(15, &a->wait_on_record);
    return r.skip(1);
  });
}

}  // namespace

bool read_event_fast(const simdjson::padded_string_view& in, Event* e) {
  // (simdjson refuses a document with less padding: so does this, to give what it gives)
  if (in.padding() < simdjson::SIMDJSON_PADDING) return false;
  Reader r(in.data(), in.data() + in.size());
  Seen seen;
  const bool ok = r.object(0, [&](std::string_view key) {
    auto val = [&](int k, Value* v) { return seen.first(k) ? r.value(v) : r.skip(0); };
    auto txt = [&](int k, std::string_view* s) { return seen.first(k) ? r.text(s) : r.skip(0); };
    if (is(key, "ph")) return txt(0, &e->ph);
    if (is(key, "cat")) return txt(1, &e->cat);
    if (is(key, "name")) return txt(2, &e->name);
    if (is(key, "ts")) return val(3, &e->ts);
    if (is(key, "dur")) return val(4, &e->dur);
    if (is(key, "pid")) return val(5, &e->pid);
    if (is(key, "tid")) return val(6, &e->tid);
    if (is(key, "args")) {
      if (!seen.first(7) || r.peek() != '{') return r.skip(0);
      e->has_args = true;
      return args(r, &e->args);
    }
    return r.skip(0);
  });
  return ok && r.at_end();
}

}  // namespace c3::importer::kineto
