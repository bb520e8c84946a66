// PyTorch profiler / Kineto Chrome-trace JSON -> trace database, in stages: JsonStream splits
// the file into top-level members and events, kineto_tokenize reads each event's fields (on a
// thread of its own: kineto_ahead.h), kineto_parse turns them into compact events, kineto_write
// writes the rows through the ImportWriter. This file runs them and says what happened to a
// damaged or truncated file.
#include <stdexcept>
#include <string>

#include "c3/importer/importer.h"
#include "c3/tracedb/sink.h"
#include "import_writer.h"
#include "json_stream.h"
#include "kineto_ahead.h"
#include "kineto_parse.h"
#include "kineto_write.h"

namespace c3::importer {
namespace {

// After the events were read: an error for a damaged compressed stream (unless options.salvage:
// then a note of how much was kept), for a file that is not a Chrome-trace object or has no
// traceEvents; a truncated file is counted as one malformed event and kept.
void check_input(JsonStream& js, bool whole, const std::string& error, const std::string& path,
                 const Options& options, kineto::Parser& parser, Stats& st) {
  int64_t damage_at = 0;
  if (const std::string damage = js.input_error(&damage_at); !damage.empty()) {
    // A damaged compressed stream drops what follows the damage: an error unless --salvage, and
    // then a warning saying how much was kept. Data that inflated to its end but does not match
    // the trailer's CRC or length loses nothing (a damaged trailer, or damaged data that still
    // inflates, whose unreadable events are counted): the same, and said so.
    const bool trailer = js.trailer_only() && whole;
    const std::string what = "'" + path + "': damaged compressed data at byte " +
                             std::to_string(damage_at) + " of " +
                             std::to_string(js.compressed_size()) + ": " + damage +
                             (trailer ? " (the data inflated to its end but does not match "
                                        "the CRC or length in the gzip trailer: the trailer or "
                                        "the data is damaged)"
                                      : "");
    if (!options.salvage) {
      throw std::invalid_argument(
          what + "; nothing imported ('gzip -t' checks it; --salvage keeps " +
          (trailer ? "every event, counting those the damage made unreadable"
                   : "the events before the damage") +
          ")");
    }
    const std::string events = std::to_string(parser.index() + 1) + " events (" +
                               std::to_string(js.bytes_read()) + " bytes of JSON)";
    st.salvaged = what + (trailer ? "; kept all " + events : "; kept " + events + " before it");
    if (!whole) parser.cut(js.bytes_read(), "the data ends at the damage (" + error + ")");
  } else if (!whole) {
    if (parser.index() < 0)
      throw std::invalid_argument("'" + path + "' is not a Chrome-trace JSON object: " + error);
    // A truncated file: keep what was read, and say so.
    parser.cut(js.bytes_read(), "the file ends early (" + error + ")");
  }
  if (!js.array_seen()) {
    throw std::invalid_argument("'" + path + "' has no traceEvents: not a PyTorch profiler trace");
  }
}

}  // namespace

Stats import_kineto(const std::string& path, tracedb::RowSink& out, const Options& options,
                    const Progress& progress) {
  Stats st;
  kineto::Parsed p;
  kineto::Parser parser(path, options, st, p);
  JsonStream js(path);
  parser.reserve(js.size_hint());
  kineto::TokenizeAhead ahead(parser);
  int64_t last_progress = 0, seen = 0;
  auto on_member = [&](std::string_view key, std::string_view value) { parser.member(key, value); };
  auto on_event = [&](std::string_view text, int64_t at) {
    if (progress && (++seen & 1023) == 0 &&
        js.compressed_read() - last_progress > (int64_t{8} << 20)) {
      last_progress = js.compressed_read();
      progress(last_progress, js.compressed_size());
    }
    ahead.add(text, at);
  };
  std::string error;
  const bool whole = js.run("traceEvents", on_member, on_event, &error);
  ahead.finish();
  check_input(js, whole, error, path, options, parser, st);
  st.input_bytes = js.bytes_read();
  parser.finish();
  ImportWriter writer(out);
  kineto::write(p, path, options, st, writer);
  if (progress) progress(js.compressed_size(), js.compressed_size());
  return st;
}

}  // namespace c3::importer
