#pragma once
// The ranges within which the analysis keeps every length, sum and difference it makes in int64,
// whatever a hostile input holds. The loader (build.cpp), the snapshot reader (cache.cpp) and the
// summary reader (summary_json.cpp) refuse what lies outside them, so that what one part accepts
// the others accept too (analyze --summary writes only what summaries_from_json reads back).
#include <cstdint>
#include <stdexcept>

namespace c3::analyzer {

// A timestamp: within +-2^61 ns (about 73 years around the trace clock's zero).
constexpr int64_t kStampLimit = int64_t{1} << 61;
// A rank's durations, its span (first start to last end), the sum of its activities' and ranges'
// durations, counts and device facts: within [0, 2^50] (13 days of ns). Sums over 8,191 ranks
// still fit in int64; the reduce checks every sum (checked_add) for larger jobs.
constexpr int64_t kAmountLimit = int64_t{1} << 50;

// Bytes of one NCCL call.
constexpr int64_t kBytesLimit = int64_t{1} << 62;

// sum += v for a rank's own sums (sum within [0, kAmountLimit], v >= 0), capped at kAmountLimit:
// what a summary holds. A hostile trace's many long launch delays or sequence windows would pass
// it although each one is within the rank's span (fuzz/regressions/snapshot/
// sequence-span-sum-out-of-range).
inline void add_capped(int64_t& sum, int64_t v) {
  sum = v > kAmountLimit - sum ? kAmountLimit : sum + v;
}

inline bool stamp_in_limit(int64_t t) {
  return t >= -kStampLimit && t <= kStampLimit;
}

// a += b, or std::overflow_error when the sum passes int64: the merges of rank summaries, whose
// totals fit only for up to 8,191 ranks at the limits above (the reduce names the summary that
// passed).
inline void checked_add(int64_t& a, int64_t b) {
  if (__builtin_add_overflow(a, b, &a)) throw std::overflow_error("a total passes int64 (2^63)");
}

}  // namespace c3::analyzer
