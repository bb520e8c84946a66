// The Kineto importer's first stage: one element of traceEvents (its JSON text) -> an Event, the
// fields the importer reads as they were written, in one pass (simdjson On-Demand: no tree is
// built). No I/O, nothing interpreted: kineto_parse.h decides what an event becomes.
#pragma once

#include <simdjson.h>

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

// Reads the event in `in` (with simdjson's padding after it) into *e. Returns why the event
// cannot be used, or nullptr.
const char* read_event(simdjson::ondemand::parser& parser, const simdjson::padded_string_view& in,
                       Event* e);

}  // namespace c3::importer::kineto
