// What the harnesses share (docs/fuzzing.md): the fuzz input as a file, because the importers
// and the loader take paths, and the analysis `c3scope analyze` runs on one input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "c3/analyzer/open/open.h"
#include "c3/analyzer/summary/summary.h"

namespace c3::fuzz {

// A temporary file holding `bytes` in $TMPDIR (scripts/fuzz points it at /dev/shm), removed
// when it goes out of scope.
class TempFile {
 public:
  explicit TempFile(std::string_view bytes, const char* suffix = "");
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// What analyzer/cli/cmd_analyze.cpp does with one input, on `path`, when its content is of format
// `want` (other formats have their own harnesses): resolve, map (open, load, summarize, the
// per-collective CSV) and reduce, then every output (text, JSON, summary file). Errors that
// analyze reports as bad input (std::exception) end the run quietly; anything else (a sanitizer
// report, an abort) is a finding.
void analyze(const std::string& path, analyzer::InputFormat want);

// Its second half, on rank summaries that were accepted (nothing may throw from here on): the
// summary file (which must read back), the reduce, the text and JSON reports.
void reduce_and_report(std::vector<analyzer::RankSummary>&& summaries,
                       const std::vector<std::string>& names, const analyzer::SummaryOptions& o);

// C3_FUZZ_VERBOSE set: say on stderr whether each input was accepted (to check new seeds).
bool verbose();

// Reads the input front to back; past the end every read gives zeros / empty.
class Bytes {
 public:
  Bytes(const uint8_t* data, size_t size) : p_(data), left_(size) {}
  bool empty() const { return left_ == 0; }
  size_t left() const { return left_; }
  uint8_t u8() {
    if (left_ == 0) return 0;
    --left_;
    return *p_++;
  }
  uint16_t u16() { return static_cast<uint16_t>(u8() | (u8() << 8)); }
  uint32_t u32() { return static_cast<uint32_t>(u16()) | (static_cast<uint32_t>(u16()) << 16); }
  uint64_t u64() { return static_cast<uint64_t>(u32()) | (static_cast<uint64_t>(u32()) << 32); }
  // Up to `max` bytes.
  std::string_view take(size_t max) {
    const size_t n = max < left_ ? max : left_;
    std::string_view s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
    return s;
  }
  // A string of length given by the next byte.
  std::string str() { return std::string(take(u8())); }

 private:
  const uint8_t* p_;
  size_t left_;
};

}  // namespace c3::fuzz
