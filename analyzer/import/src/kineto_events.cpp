// read_kineto_events (importer.h): the complete events of a Kineto file as written, through the
// importer's own stream and tokenizer (json_stream.h, kineto_tokenize.h), for analyses that need
// more of a trace than its tables keep.
#include <simdjson.h>

#include <stdexcept>
#include <string>

#include "c3/importer/importer.h"
#include "json_stream.h"
#include "kineto_tokenize.h"

namespace c3::importer {
namespace {

// A number as a double (integers as they are), or false.
bool number(const kineto::Value& v, double* out) {
  switch (v.type) {
    case kineto::Value::Type::i64:
      *out = static_cast<double>(v.i);
      return true;
    case kineto::Value::Type::u64:
      *out = static_cast<double>(v.u);
      return true;
    case kineto::Value::Type::f64:
      *out = v.d;
      return true;
    default:
      return false;
  }
}

int64_t integer_or(const kineto::Value& v, int64_t fallback) {
  int64_t out = 0;
  return v.type != kineto::Value::Type::none && v.integer(&out) ? out : fallback;
}

}  // namespace

void read_kineto_events(const std::string& path, const std::function<void(const KinetoEvent&)>& f) {
  JsonStream js(path);
  simdjson::ondemand::parser parser;
  int64_t index = -1;
  auto on_event = [&](std::string_view text, int64_t) {
    ++index;
    kineto::Event e;
    const simdjson::padded_string_view view(text.data(), text.size(),
                                            text.size() + JsonStream::kPadding);
    if (kineto::read_event(parser, view, &e) != nullptr || !kineto::is(e.ph, "X") ||
        e.cat.empty()) {
      return;
    }
    KinetoEvent k;
    k.index = index;
    if (!number(e.dur, &k.dur) || !std::isfinite(k.dur)) return;  // HTA drops rows without dur
    k.has_ts = number(e.ts, &k.ts) && std::isfinite(k.ts);
    k.ts_float = !k.has_ts || (e.ts.type == kineto::Value::Type::f64);
    k.cat = e.cat;
    k.name = e.name;
    k.pid = integer_or(e.pid, 0);
    k.tid = integer_or(e.tid, 0);
    if (e.has_args) {
      k.stream = integer_or(e.args.stream, -1);
      k.correlation = integer_or(e.args.correlation, -1);
      k.wait_on_stream = integer_or(e.args.wait_on_stream, -1);
      k.wait_on_record = integer_or(e.args.wait_on_record, -1);
    }
    f(k);
  };
  std::string error;
  const bool whole = js.run(
      "traceEvents", [](std::string_view, std::string_view) {}, on_event, &error);
  int64_t damage_at = 0;
  if (const std::string damage = js.input_error(&damage_at); !damage.empty()) {
    throw std::invalid_argument("'" + path + "': damaged compressed data at byte " +
                                std::to_string(damage_at) + ": " + damage);
  }
  if (!whole) throw std::invalid_argument("'" + path + "' is not whole Kineto JSON: " + error);
  if (!js.array_seen())
    throw std::invalid_argument("'" + path + "' has no traceEvents: not a PyTorch profiler trace");
}

}  // namespace c3::importer
