// Differential: one element of traceEvents read by the Kineto tokenizer's fast path and by
// simdjson On-Demand (analyzer/import/src/kineto_tokenize.h). Where the fast path takes the
// text, simdjson must find it valid and read the same event; anything else aborts. The padding
// after the text repeats its last byte (in the importer, the next event's bytes follow: a quote,
// a digit, a brace), and the fast path reads from a buffer of exactly the text and 16 bytes, so
// that ASan sees it read past the 15 bytes its 16-byte loads may take.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "json_stream.h"
#include "kineto_tokenize.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace k = c3::importer::kineto;
  constexpr size_t kPadding = c3::importer::JsonStream::kPadding;
  const char pad = size > 0 ? static_cast<char>(data[size - 1]) : ' ';
  const std::unique_ptr<char[]> buf(new char[size + kPadding]);
  if (size > 0) std::memcpy(buf.get(), data, size);
  std::memset(buf.get() + size, pad, kPadding);
  const simdjson::padded_string_view in(buf.get(), size, size + kPadding);
  static simdjson::ondemand::parser parser;
  k::Event json, fast;
  const char* why = k::read_event_json(parser, in, &json);
  // (the view promises simdjson's padding; the allocation holds 16 bytes of it)
  constexpr size_t kTail = 16;
  const std::unique_ptr<char[]> tight(new char[size + kTail]);
  if (size > 0) std::memcpy(tight.get(), data, size);
  std::memset(tight.get() + size, pad, kTail);
  const simdjson::padded_string_view tight_in(tight.get(), size, size + kPadding);
  if (k::read_event_fast(tight_in, &fast) && (why != nullptr || !k::same_event(fast, json))) {
    std::abort();  // the fast path read what simdjson refuses, or read it differently
  }
  return 0;
}
