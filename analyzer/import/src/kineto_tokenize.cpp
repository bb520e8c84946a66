#include "kineto_tokenize.h"

#include <charconv>
#include <system_error>

namespace c3::importer::kineto {
namespace {

// Reads a scalar; false when it is malformed (a number that does not parse). A value of another
// type is left as none.
bool read_value(simdjson::ondemand::value v, Value* out) {
  using simdjson::ondemand::json_type;
  json_type t{};
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t == json_type::string) {
    if (v.get_string().get(out->s) != simdjson::SUCCESS) return false;
    out->type = Value::Type::str;
    return true;
  }
  if (t != json_type::number) return true;
  simdjson::ondemand::number_type nt{};
  if (v.get_number_type().get(nt) != simdjson::SUCCESS) return false;
  if (nt == simdjson::ondemand::number_type::floating_point_number) {
    // simdjson 3.0's get_number() reads a decimal of 19 or more significant digits as 0 (Kineto
    // writes epoch microseconds with three decimals: 1700000000034808.750), and get_double() some
    // of more than 19 wrongly (0.510000092233720368547758077 as 7.3e-9; the differential fuzz
    // harness found it): get_double() checks the number, std::from_chars reads it, correctly
    // rounded, as the fast path does (kineto_fast.cpp). Where from_chars cannot (out of range),
    // get_double()'s value stands.
    const std::string_view raw = v.raw_json_token();
    if (v.get_double().get(out->d) != simdjson::SUCCESS) return false;
    size_t n = raw.size();
    while (n > 0 &&
           (raw[n - 1] == ' ' || raw[n - 1] == '\n' || raw[n - 1] == '\r' || raw[n - 1] == '\t'))
      --n;
    double d = 0;
    const auto r = std::from_chars(raw.data(), raw.data() + n, d, std::chars_format::general);
    if (r.ec == std::errc{} && r.ptr == raw.data() + n) out->d = d;
    out->type = Value::Type::f64;
    return true;
  }
  simdjson::ondemand::number n;
  if (v.get_number().get(n) != simdjson::SUCCESS) return false;
  switch (n.get_number_type()) {
    case simdjson::ondemand::number_type::signed_integer:
      out->type = Value::Type::i64;
      out->i = n.get_int64();
      break;
    case simdjson::ondemand::number_type::unsigned_integer:
      out->type = Value::Type::u64;
      out->u = n.get_uint64();
      break;
    case simdjson::ondemand::number_type::floating_point_number:
      out->type = Value::Type::f64;
      out->d = n.get_double();
      break;
  }
  return true;
}

// A string unescaped into the parser's buffer (valid until its next document).
bool read_escaped_string(simdjson::ondemand::value v, std::string_view* out) {
  using simdjson::ondemand::json_type;
  json_type t{};
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t != json_type::string) return true;
  return v.get_string().get(*out) == simdjson::SUCCESS;
}

// A string value as written when it holds no escape: no copy, valid as long as the input (stage 1
// validated the document's UTF-8 and saw the closing quote). Event phases and categories.
bool read_short_string(simdjson::ondemand::value v, std::string_view* out) {
  simdjson::ondemand::raw_json_string r;
  if (v.get_raw_json_string().get(r) != simdjson::SUCCESS) return true;  // not a string
  const char* raw = r.raw();
  size_t n = 0;
  while (raw[n] != '"') {
    if (raw[n] == '\\') return read_escaped_string(v, out);
    ++n;
  }
  *out = std::string_view(raw, n);
  return true;
}

// The same for any string (names): a value of another type is left empty.
bool read_string(simdjson::ondemand::value v, std::string_view* out) {
  using simdjson::ondemand::json_type;
  json_type t{};
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t != json_type::string) return true;
  return read_short_string(v, out);
}

// Grid or block dimensions: up to three integers, 1 for any missing.
bool read_dims(simdjson::ondemand::value v, int64_t* dims) {
  using simdjson::ondemand::json_type;
  json_type t{};
  if (v.type().get(t) != simdjson::SUCCESS) return false;
  if (t != json_type::array) return true;
  simdjson::ondemand::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return false;
  size_t i = 0;
  for (auto item : a) {
    if (item.error() != simdjson::SUCCESS) return false;
    simdjson::ondemand::value x = item.value_unsafe();
    Value n;
    if (!read_value(x, &n)) return false;
    if (i < 3 && n.type == Value::Type::i64) dims[i] = n.i;
    ++i;
  }
  return true;
}

// A field's key as written (no copy: keys are compared millions of times), unescaped only when it
// holds an escape.
bool read_key(simdjson::ondemand::field& field, std::string_view* key) {
  const char* raw = field.key().raw();  // after the opening quote; stage 1 saw the closing one
  size_t n = 0;
  while (raw[n] != '"') {
    if (raw[n] == '\\') return field.unescaped_key().get(*key) == simdjson::SUCCESS;
    ++n;
  }
  *key = std::string_view(raw, n);
  return true;
}

bool read_args(simdjson::ondemand::value v, Args* a) {
  simdjson::ondemand::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  Seen seen;
  for (auto f : o) {
    simdjson::ondemand::field field;
    if (std::move(f).get(field) != simdjson::SUCCESS) return false;
    std::string_view key;
    if (!read_key(field, &key)) return false;
    simdjson::ondemand::value x = field.value();
    bool ok = true;
    if (is(key, "device")) {
      if (seen.first(0)) ok = read_value(x, &a->device);
    } else if (is(key, "stream")) {
      if (seen.first(1)) ok = read_value(x, &a->stream);
    } else if (is(key, "correlation")) {
      if (seen.first(2)) ok = read_value(x, &a->correlation);
    } else if (is(key, "registers per thread")) {
      if (seen.first(3)) ok = read_value(x, &a->registers);
    } else if (is(key, "shared memory")) {
      if (seen.first(4)) ok = read_value(x, &a->shared_memory);
    } else if (is(key, "In msg nelems")) {
      if (seen.first(5)) ok = read_value(x, &a->in_nelems);
    } else if (is(key, "Group size")) {
      if (seen.first(6)) ok = read_value(x, &a->group_size);
    } else if (is(key, "bytes")) {
      if (seen.first(7)) ok = read_value(x, &a->bytes);
    } else if (is(key, "cbid")) {
      if (seen.first(8)) ok = read_value(x, &a->cbid);
    } else if (is(key, "Collective name")) {
      if (seen.first(9)) ok = read_string(x, &a->collective_name);
    } else if (is(key, "dtype")) {
      if (seen.first(10)) ok = read_string(x, &a->dtype);
    } else if (is(key, "Process Group Name")) {
      if (seen.first(11)) ok = read_string(x, &a->group_name);
    } else if (is(key, "grid")) {
      if (seen.first(12)) ok = read_dims(x, a->grid);
    } else if (is(key, "block")) {
      if (seen.first(13)) ok = read_dims(x, a->block);
    } else if (is(key, "wait_on_stream")) {
      if (seen.first(14)) ok = read_value(x, &a->wait_on_stream);
    } else if (is(key, "wait_on_cuda_event_record_corr_id")) {
      if (seen.first(15)) ok = read_value(x, &a->wait_on_record);
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace

const char* read_event(simdjson::ondemand::parser& parser, const simdjson::padded_string_view& in,
                       Event* e) {
  if (read_event_fast(in, e)) return nullptr;
  *e = Event{};  // (what the fast path wrote before it gave up)
  return read_event_json(parser, in, e);
}

const char* read_event_json(simdjson::ondemand::parser& parser,
                            const simdjson::padded_string_view& in, Event* e) {
  simdjson::ondemand::document doc;
  if (parser.iterate(in).get(doc) != simdjson::SUCCESS) return "not valid JSON";
  simdjson::ondemand::object o;
  if (const auto err = doc.get_object().get(o); err != simdjson::SUCCESS) {
    return err == simdjson::INCORRECT_TYPE ? "not an object" : "not valid JSON";
  }
  Seen seen;
  for (auto f : o) {
    simdjson::ondemand::field field;
    if (std::move(f).get(field) != simdjson::SUCCESS) return "not valid JSON";
    std::string_view key;
    if (!read_key(field, &key)) return "not valid JSON";
    simdjson::ondemand::value x = field.value();
    bool ok = true;
    if (is(key, "ph")) {
      if (seen.first(0)) ok = read_short_string(x, &e->ph);
    } else if (is(key, "cat")) {
      if (seen.first(1)) ok = read_short_string(x, &e->cat);
    } else if (is(key, "name")) {
      if (seen.first(2)) ok = read_string(x, &e->name);
    } else if (is(key, "ts")) {
      if (seen.first(3)) ok = read_value(x, &e->ts);
    } else if (is(key, "dur")) {
      if (seen.first(4)) ok = read_value(x, &e->dur);
    } else if (is(key, "pid")) {
      if (seen.first(5)) ok = read_value(x, &e->pid);
    } else if (is(key, "tid")) {
      if (seen.first(6)) ok = read_value(x, &e->tid);
    } else if (is(key, "args")) {
      if (seen.first(7)) {
        simdjson::ondemand::json_type t{};
        ok = x.type().get(t) == simdjson::SUCCESS;
        if (ok && t == simdjson::ondemand::json_type::object) {
          e->has_args = true;
          ok = read_args(x, &e->args);
        }
      }
    }
    if (!ok) return "not valid JSON";
  }
  return nullptr;
}

}  // namespace c3::importer::kineto
