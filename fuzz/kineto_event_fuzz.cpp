// Differential: one element of traceEvents read by the Kineto tokenizer's fast path and by
// simdjson On-Demand (analyzer/import/src/kineto_tokenize.h). Where the fast path takes the
// text, simdjson must find it valid and read the same event; anything else aborts. The text lies
// in a buffer of exactly its size and simdjson's padding, so that ASan sees a read past them.
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
  const std::unique_ptr<char[]> buf(new char[size + kPadding]);
  if (size > 0) std::memcpy(buf.get(), data, size);
  std::memset(buf.get() + size, ' ', kPadding);  // as the importer's batches pad
  const simdjson::padded_string_view in(buf.get(), size, size + kPadding);
  static simdjson::ondemand::parser parser;
  k::Event json, fast;
  const char* why = k::read_event_json(parser, in, &json);
  if (k::read_event_fast(in, &fast) && (why != nullptr || !k::same_event(fast, json))) {
    std::abort();  // the fast path read what simdjson refuses, or read it differently
  }
  return 0;
}
