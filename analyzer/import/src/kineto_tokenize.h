// The Kineto importer's first stage: one element of traceEvents (its JSON text) -> an Event, the
// fields the importer reads as they were written, in one pass (a fast path of its own for plain
// events, kineto_fast.cpp; simdjson On-Demand for the rest: no tree is built). No I/O, nothing
// interpreted: kineto_parse.h decides what an event becomes.
#pragma once

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace c3::importer::kineto {

// k == lit, with the length known at compile time (an inlined compare, not a call: keys and
// categories are compared millions of times).
template <size_t N>
bool is(std::string_view k, const char (&lit)[N]) {
  return k.size() == N - 1 && std::memcmp(k.data(), lit, N - 1) == 0;
}

// The first occurrence of a key wins, as in a lookup by key (both ways of reading an event).
struct Seen {
  uint32_t bits = 0;
  bool first(int k) {
    const uint32_t b = 1u << k;
    if ((bits & b) != 0) return false;
    bits |= b;
    return true;
  }
};

// A scalar of an event as it was written: a number (integer or not), or a string (some traces
// quote numbers).
struct Value {  // NOLINT(cppcoreguidelines-pro-type-member-init): the union through i
  enum class Type : uint8_t { none, i64, u64, f64, str };
  Type type = Type::none;
  union {  // the one `type` names (an event holds about twenty Values: kept small)
    int64_t i = 0;
    uint64_t u;
    double d;
  };
  std::string_view s;  // valid while the event is handled
  bool is_number() const { return type == Type::i64 || type == Type::u64 || type == Type::f64; }
  // As an integer: integers as they are, other numbers rounded, numeric strings parsed.
  bool integer(int64_t* out) const {
    switch (type) {
      case Type::i64:
        *out = i;
        return true;
      case Type::u64:
        *out = static_cast<int64_t>(u);
        return true;
      case Type::f64:
        if (!std::isfinite(d) || std::fabs(d) > 9.2e18) return false;
        *out = std::llround(d);
        return true;
      case Type::str:
        try {
          *out = std::stoll(std::string(s));
          return true;
        } catch (...) {
          return false;
        }
      case Type::none:
        break;
    }
    return false;
  }
};

// What the importer reads of an event's args.
struct Args {
  Value device, stream, correlation, registers, shared_memory, in_nelems, group_size, bytes, cbid;
  // cuda_sync events ("Stream Wait Event"): the stream and cudaEventRecord call waited on.
  Value wait_on_stream, wait_on_record;
  std::string_view collective_name, dtype, group_name;
  int64_t grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
};

struct Event {
  std::string_view ph, cat, name;
  Value ts, dur, pid, tid;
  bool has_args = false;
  Args args;
};

// Calls f(view) on every text of the event (each a std::string_view&), to copy those that lie
// in the parser's buffer (escaped strings; numbers written as strings) before its next document.
// Keep in step with the fields above.
template <class F>
void for_each_text(Event& e, F f) {
  for (std::string_view* t :
       {&e.ph, &e.cat, &e.name, &e.args.collective_name, &e.args.dtype, &e.args.group_name})
    f(*t);
  Args& a = e.args;
  for (Value* v : {&e.ts, &e.dur, &e.pid, &e.tid, &a.device, &a.stream, &a.correlation,
                   &a.registers, &a.shared_memory, &a.in_nelems, &a.group_size, &a.bytes, &a.cbid,
                   &a.wait_on_stream, &a.wait_on_record})
    f(v->s);
}

// Whether two events read alike: the same fields present, the same numbers (bit for bit) and
// texts (the tests and the differential fuzz harness compare the two ways of reading).
inline bool same_value(const Value& a, const Value& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case Value::Type::none:
      return true;
    case Value::Type::i64:
      return a.i == b.i;
    case Value::Type::u64:
      return a.u == b.u;
    case Value::Type::f64:  // (bit for bit: -0.0 is not 0.0; NaN never comes from JSON)
      return a.d == b.d && std::signbit(a.d) == std::signbit(b.d);
    case Value::Type::str:
      return a.s == b.s;
  }
  return false;
}
inline bool same_event(const Event& a, const Event& b) {
  const Args &x = a.args, &y = b.args;
  return a.ph == b.ph && a.cat == b.cat && a.name == b.name && same_value(a.ts, b.ts) &&
         same_value(a.dur, b.dur) && same_value(a.pid, b.pid) && same_value(a.tid, b.tid) &&
         a.has_args == b.has_args && same_value(x.device, y.device) &&
         same_value(x.stream, y.stream) && same_value(x.correlation, y.correlation) &&
         same_value(x.registers, y.registers) && same_value(x.shared_memory, y.shared_memory) &&
         same_value(x.in_nelems, y.in_nelems) && same_value(x.group_size, y.group_size) &&
         same_value(x.bytes, y.bytes) && same_value(x.cbid, y.cbid) &&
         same_value(x.wait_on_stream, y.wait_on_stream) &&
         same_value(x.wait_on_record, y.wait_on_record) && x.collective_name == y.collective_name &&
         x.dtype == y.dtype && x.group_name == y.group_name &&
         std::equal(x.grid, x.grid + 3, y.grid) && std::equal(x.block, x.block + 3, y.block);
}

// Reads the event in `in` (with simdjson's padding after it) into *e, a fresh Event. Returns why
// the event cannot be used, or nullptr. The fast path first, simdjson when it gives up.
const char* read_event(simdjson::ondemand::parser& parser, const simdjson::padded_string_view& in,
                       Event* e);
// The two ways read_event reads (exposed for the tests and the differential fuzz harness):
// simdjson On-Demand, which reads any event; and a single pass of its own (kineto_fast.cpp)
// that reads plain events (printable ASCII, no escapes, ordinary numbers) and returns false,
// leaving *e partly written, on anything else. Where the fast path returns true, *e is what
// read_event_json gives.
const char* read_event_json(simdjson::ondemand::parser& parser,
                            const simdjson::padded_string_view& in, Event* e);
bool read_event_fast(const simdjson::padded_string_view& in, Event* e);

}  // namespace c3::importer::kineto
