// A streaming splitter for one large JSON object whose big member is an array of small objects
// (Chrome trace format: {"traceEvents": [ {...}, {...} ], "deviceProperties": [...], ...}).
// It reads the input in chunks (gzip or plain; gzip through ISA-L's igzip inflate, decompressed
// on a thread of its own a few chunks ahead of the parse) and hands out each top-level
// member's value text, and each element of the streamed array separately, so memory stays
// bounded by one element plus one chunk, whatever the file's size. Values are parsed by the
// caller (simdjson), in place: kPadding readable bytes follow each element in the buffer.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace c3::importer {

class JsonStream {
 public:
  // Bytes readable after every element handed out (what simdjson's parsers read ahead).
  static constexpr size_t kPadding = 64;

  // Throws std::invalid_argument when the file cannot be opened.
  explicit JsonStream(const std::string& path);
  ~JsonStream();
  JsonStream(const JsonStream&) = delete;
  JsonStream& operator=(const JsonStream&) = delete;

  // Walks the top-level object: `member(key, value_text)` for every member except
  // `array_key`, whose elements go to `element(text, byte_offset)` one by one. Returns false
  // with `error` set when the text is not such an object (truncated, not JSON).
  bool run(const std::string& array_key,
           const std::function<void(std::string_view key, std::string_view value)>& member,
           const std::function<void(std::string_view element, int64_t offset)>& element,
           std::string* error);

  bool array_seen() const { return array_seen_; }  // the array member was there (maybe empty)
  int64_t bytes_read() const { return consumed_base_ + static_cast<int64_t>(pos_); }
  int64_t compressed_size() const { return file_size_; }
  // About how many bytes of JSON the file holds, to size what is built from it (a hint, which a
  // hostile file can make anything: a gzip trailer's length, modulo 2^32, or the file's size).
  int64_t size_hint() const { return size_hint_; }
  int64_t compressed_read() const;
  // Why the input stopped before its end ("" when it did not): a damaged or truncated gzip
  // stream, a read error. Sets *compressed_offset to the compressed byte where it was found.
  // Call once run() returned: it first reads what is left of the input (so a gzip trailer
  // after the end of the JSON is checked too) and drops it. Every byte inflated before the
  // damage was handed out.
  std::string input_error(int64_t* compressed_offset = nullptr);
  // After input_error(): the damage is in a gzip trailer only (its CRC or length is wrong) and
  // the compressed data before it inflated completely.
  bool trailer_only() const { return trailer_only_; }

 private:
  bool fill();                    // appends a chunk; false at end of input
  bool need(size_t n);            // ensures buf_ has n bytes from pos_
  bool skip_ws();                 // false at end of input
  bool scan_string(size_t* end);  // from pos_ ('"'): index past the closing quote
  bool scan_value(size_t* end, std::string* error);      // any JSON value starting at pos_
  bool scan_container(size_t* end, std::string* error);  // an object or array at pos_
  bool scan_scalar(size_t* end, std::string* error);     // a number, true, false or null
  void compact();

  void read_ahead();  // the decompressing thread
  // Fills `chunk` from `have` with the next bytes of the input (inflated for gzip). Returns
  // false at the end of the input, with `damage` set when it ended at damage.
  bool read_more(std::string& chunk, size_t& have, std::string& damage);
  std::string trailer_error() const;  // a gzip trailer's mismatch, in zlib's words

  int fd_ = -1;
  bool gzip_ = false;
  struct Inflate;  // ISA-L's stream state (json_stream.cpp)
  Inflate* z_ = nullptr;
  int64_t file_read_ = 0;  // bytes read from the file
  std::string path_;
  int64_t file_size_ = 0;
  int64_t size_hint_ = 0;
  // Chunks decompressed ahead (at most kAhead), handed from the reading thread to fill().
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<std::string> chunks_;
  std::vector<std::string> spare_;  // chunks fill() copied, for the reading thread to reuse
  bool input_done_ = false, stop_ = false;
  std::string input_error_;  // under mu_
  int64_t input_error_at_ = 0;
  bool trailer_only_ = false;  // under mu_ until input_done_
  std::atomic<int64_t> compressed_read_{0};
  std::thread reader_;
  std::string buf_;
  size_t pos_ = 0;
  int64_t consumed_base_ = 0;  // bytes dropped from the front of buf_
  bool eof_ = false;
  bool array_seen_ = false;
};

}  // namespace c3::importer
