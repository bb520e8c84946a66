// The Kineto tokenizer's fast path (kineto_fast.cpp) against simdjson On-Demand
// (read_event_json): it takes the plain events of a profiler trace, leaves everything else to
// simdjson, and wherever it takes an event it reads what simdjson reads. Each text is read with
// two different paddings after it (quotes, digits): a reader that looked past the event's end
// would read them; under ASan, reading past the padding fails the test.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "json_stream.h"
#include "kineto_tokenize.h"

namespace k = c3::importer::kineto;

namespace {

struct Reading {
  bool fast = false;           // the fast path took the event
  const char* why = nullptr;   // simdjson's verdict
  bool same = false;           // the fast path's event is simdjson's (when it took it)
  bool combined_same = false;  // read_event gives simdjson's verdict and event
};

Reading read_with(const std::string& text, char pad) {
  // Exactly the text and its padding (under ASan, a read past them stops the test).
  const size_t size = text.size() + c3::importer::JsonStream::kPadding;
  const std::unique_ptr<char[]> buf(new char[size]);
  std::memcpy(buf.get(), text.data(), text.size());
  std::memset(buf.get() + text.size(), pad, size - text.size());
  const simdjson::padded_string_view in(buf.get(), text.size(), size);
  simdjson::ondemand::parser parser;
  Reading r;
  k::Event json;
  r.why = k::read_event_json(parser, in, &json);
  k::Event fast;
  r.fast = k::read_event_fast(in, &fast);
  r.same = r.fast && r.why == nullptr && k::same_event(fast, json);
  k::Event combined;
  const char* why = k::read_event(parser, in, &combined);
  r.combined_same = (why == nullptr) == (r.why == nullptr) &&
                    (why == nullptr || std::string(why) == r.why) &&
                    (why != nullptr || k::same_event(combined, json));
  return r;
}

// Three paddings (the importer's batches pad with spaces); the readings must agree.
Reading read(const std::string& text) {
  const Reading a = read_with(text, '"'), b = read_with(text, '7'), c = read_with(text, ' ');
  EXPECT_EQ(a.fast, b.fast) << text;
  EXPECT_EQ(a.same, b.same) << text;
  EXPECT_EQ(a.fast, c.fast) << text;
  EXPECT_EQ(a.same, c.same) << text;
  return a;
}

TEST(KinetoFast, PlainEventsAreReadAsSimdjsonReadsThem) {
  const std::string whitespace = std::string("{\n\t\"ph\" :\r\n \"X\" ,\"cat\":\"kernel\",") +
                                 "\"ok\":true,\"no\":false,\"nil\":null," +
                                 "\"o\":{\"a\":[1,{\"b\":[]}]},\"args\":{}}  \n";
  const std::vector<std::string> events = {
      // A kernel, its launch, a CPU op with nested args, a flow event: as Kineto writes them.
      R"J({"ph": "X", "cat": "kernel", "name": "void at::native::(anonymous namespace)::k<float>(float const*, float*)", "pid": 0, "tid": 7, "ts": 1700000000034808.750, "dur": 12.5, "args": {"External id": 3, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 1000001, "registers per thread": 128, "shared memory": 49152, "blocks per SM": 0.5, "warps per SM": 4, "grid": [132, 1, 1], "block": [256, 1, 1], "est. achieved occupancy %": 6}})J",
      R"J({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 4242, "tid": 4242, "ts": 1699999999999969.5, "dur": 5.25, "args": {"cbid": 211, "correlation": 1000001}})J",
      R"J({"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 4242, "tid": 4242, "ts": 17, "dur": 25, "args": {"Input Dims": [[8, 1024], [4096, 1024], []], "Input type": ["float", "c10::BFloat16", ""], "Concrete Inputs": ["", "", "1"], "Ev Idx": 4, "Fwd thread id": 0}})J",
      R"J({"ph": "f", "id": 1000001, "pid": 0, "tid": 7, "ts": 1700000000000020, "cat": "ac2g", "name": "ac2g", "bp": "e"})J",
      R"J({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "pid": 0, "tid": 13, "ts": 5.0, "dur": 1e3, "args": {"device": 0, "stream": 13, "correlation": 9, "Collective name": "allreduce", "dtype": "BFloat16", "In msg nelems": 4194304, "Out msg nelems": 4194304, "Group size": 8, "Process Group Name": "0", "Process Group Description": "default_pg", "In split size": [], "Out split size": []}})J",
      R"J({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 3, "dur": 0, "args": {"wait_on_stream": 13, "wait_on_cuda_event_record_corr_id": 1000007, "device": 0, "stream": 7}})J",
      // Numbers of every form JSON has, as far as simdjson and from_chars agree on them.
      R"J({"ts": -12, "dur": 0, "pid": 123456789012345678, "tid": -123456789012345678})J",
      R"J({"ts": 1.5E3, "dur": 2e-2, "pid": 0.0, "tid": -0.0, "args": {"device": 1E+2, "bytes": 0.1, "cbid": 123456789.123456789123456789}})J",
      R"J({"ts": 0.000000000000000000000000000001, "dur": 17976931348623157e292, "args": {"stream": 2.2250738585072014e-308}})J",
      // Values the reader passes over, keys it does not know, whitespace of every kind.
      whitespace,
      R"J({})J",
      R"J(  {"name": 123, "ph": ["X"], "cat": {"k": "v"}, "ts": "12.5", "dur": null, "args": 5})J",
      // The first of each key wins, in the event and in its args.
      R"J({"ph": "X", "ph": "B", "ts": 1, "ts": 2, "args": {"device": 1, "device": 2, "grid": [1, 2, 3], "grid": [4]}, "args": {"stream": 9}})J",
      // Dimensions: integers only, three at most, 1 where missing.
      R"J({"args": {"grid": [1.5, "2", 3, 4], "block": [7]}})J",
      R"J({"args": {"grid": 5, "block": [[1], {"x": 2}, -3]}})J",
      R"J({"name": "", "cat": "", "ph": "", "args": {"dtype": "", "Collective name": 4}})J",
      "{\"name\": \"\x7f is DEL: ~!@#$%^&*()_+{}|:<>?`-=[];',./\"}",
  };
  for (const std::string& e : events) {
    const Reading r = read(e);
    EXPECT_TRUE(r.fast) << "the fast path left a plain event to simdjson: " << e;
    EXPECT_TRUE(r.same) << "the fast path read it differently: " << e;
    EXPECT_TRUE(r.combined_same) << e;
  }
}

TEST(KinetoFast, LeavesToSimdjsonWhatItDoesNotRead) {
  const std::vector<std::string> events = {
      // Valid JSON it leaves alone: escapes, text beyond ASCII, numbers simdjson reads its way.
      R"J({"name": "a \"quoted\" name"})J",
      R"J({"name": "caf\u00e9"})J",
      "{\"name\": \"caf\xc3\xa9\"}",
      R"J({"na\u006de": "x"})J",
      R"J({"ts": -0})J",
      R"J({"ts": 1234567890123456789})J",
      R"J({"args": {"device": 99999999999999999999999}})J",
      R"J({"ts": 1e400})J",
      R"J({"dur": 0e3555555555555555555555555555555555555555555555})J",
      R"J({"dur": 1e0000000000000000000001})J",
      R"J({"dur": 0e10000})J",
      "{\"dur\": 1." + std::string(120, '0') + "}",
      R"J({"ts": -1e400})J",
      R"J({"o": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]})J",
      // Not valid JSON, or not one object.
      "{\"name\": \"tab\tinside\"}",
      "{\"name\": \"\xff\"}",
      R"J({"ts": 1} x)J",
      R"J({"ts": 1}{"ts": 2})J",
      R"J({"ts": 1)J",
      R"J({"ts": 1,})J",
      R"J({"ts" 1})J",
      R"J({ts: 1})J",
      R"J({"ts": 01})J",
      R"J({"ts": 1.})J",
      R"J({"ts": .5})J",
      R"J({"ts": +1})J",
      R"J({"ts": 1e})J",
      R"J({"ts": -})J",
      R"J({"ok": tru})J",
      R"J({"ok": truex})J",
      R"J({"ok": nul})J",
      R"J({"a": [1 2]})J",
      R"J({"a": [1,]})J",
      R"J({"name": "unterminated})J",
      R"J([1, 2])J",
      R"J(5)J",
      R"J("text")J",
      "",
      "   ",
  };
  for (const std::string& e : events) {
    const Reading r = read(e);
    EXPECT_FALSE(r.fast) << "the fast path took: " << e;
    EXPECT_TRUE(r.combined_same) << e;
  }
}

// simdjson 3.0's get_double() reads some decimals of more than 19 digits wrongly
// (0.510000092233720368547758077 as 7.3e-9: fuzz/regressions/kineto_event): both ways read
// them correctly rounded, as strtod does.
TEST(KinetoFast, LongDecimalsAreReadCorrectlyRounded) {
  for (const char* number : {"0.510000092233720368547758077", "1700000000034808.7500000000001",
                             "123456789012345678901234567890.5", "9.99999999999999999999e-5"}) {
    const std::string text =
        std::string("{\"ts\": ") + number + ", \"args\": {\"grid\": [" + number + "]}}";
    const Reading r = read(text);
    EXPECT_TRUE(r.fast) << number;
    EXPECT_TRUE(r.same) << number;
    const std::string buf = text + std::string(c3::importer::JsonStream::kPadding, ' ');
    const simdjson::padded_string_view in(buf.data(), text.size(), buf.size());
    simdjson::ondemand::parser parser;
    k::Event e;
    ASSERT_EQ(k::read_event_json(parser, in, &e), nullptr) << number;
    EXPECT_EQ(e.ts.d, std::strtod(number, nullptr)) << number;
  }
}

// Every prefix of a plain event: each is either left to simdjson or read as simdjson reads it,
// whatever lies after it.
TEST(KinetoFast, CutEventsAreNotReadPastTheirEnd) {
  const std::string e =
      R"J({"ph": "X", "cat": "kernel", "name": "gemm_kernel_with_a_name_longer_than_sixteen", "ts": 1700000000034808.750, "dur": 12, "args": {"grid": [132, 1, 1], "correlation": 77}})J";
  for (size_t n = 0; n <= e.size(); ++n) {
    const Reading r = read(e.substr(0, n));
    EXPECT_EQ(r.fast, n == e.size()) << n;
    if (r.fast) {
      EXPECT_TRUE(r.same) << n;
    }
    EXPECT_TRUE(r.combined_same) << n;
  }
}

// Random events, numbers and texts of every length: what the fast path takes it reads as
// simdjson does; with no escapes and no long integers, it takes them all.
TEST(KinetoFast, RandomEventsAreReadAlike) {
  std::mt19937_64 rng(27);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  auto digits = [&](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += static_cast<char>('0' + (i == 0 ? 1 + pick(9) : pick(10)));
    return s;
  };
  // A number: integers of 1-22 digits, decimals with up to 25 digits and exponents.
  bool exponents = false;  // in the event being made
  auto number = [&](bool* plain) {
    std::string s = pick(4) == 0 ? "-" : "";
    const size_t int_digits = 1 + pick(pick(4) == 0 ? 22 : 17);
    s += pick(8) == 0 ? "0" : digits(int_digits);
    const bool fraction = pick(2) == 0, exponent = pick(5) == 0;
    if (fraction) s += "." + std::to_string(pick(1000)) + (pick(3) == 0 ? digits(1 + pick(8)) : "");
    exponents = exponents || exponent;
    if (exponent)
      s += std::string(pick(2) ? "e" : "E") + (pick(2) ? "-" : "") + std::to_string(pick(40));
    if (!fraction && !exponent && (s.size() - (s[0] == '-')) > 18) *plain = false;
    if (s == "-0") *plain = false;
    return s;
  };
  auto text = [&](bool* plain) {
    std::string s;
    const size_t n = pick(pick(4) == 0 ? 200 : 20);
    for (size_t i = 0; i < n; ++i) {
      char c = static_cast<char>(' ' + pick(95));
      if (c == '"' || c == '\\') c = '_';
      s += c;
    }
    if (pick(50) == 0) {
      s += "\\n";
      *plain = false;
    }
    return "\"" + s + "\"";
  };
  const std::vector<std::string> keys = {"ph",  "cat", "name", "ts", "dur",
                                         "pid", "tid", "args", "id", "bp"};
  const std::vector<std::string> arg_keys = {
      "device",        "stream",          "correlation",    "registers per thread",
      "shared memory", "In msg nelems",   "Group size",     "bytes",
      "cbid",          "Collective name", "dtype",          "Process Group Name",
      "grid",          "block",           "wait_on_stream", "wait_on_cuda_event_record_corr_id",
      "External id",   "Input Dims"};
  std::function<std::string(bool*, int)> value = [&](bool* plain, int depth) -> std::string {
    switch (pick(depth > 2 ? 4 : 6)) {
      case 0:
      case 1:
        return number(plain);
      case 2:
        return text(plain);
      case 3:
        return std::vector<std::string>{"true", "false", "null"}[pick(3)];
      case 4: {
        std::string s = "[";
        for (size_t i = 0, n = pick(5); i < n; ++i) s += (i ? ", " : "") + value(plain, depth + 1);
        return s + "]";
      }
      default: {
        std::string s = "{";
        for (size_t i = 0, n = pick(5); i < n; ++i) {
          s += (i ? ", \"" : "\"") + arg_keys[pick(arg_keys.size())] +
               "\": " + value(plain, depth + 1);
        }
        return s + "}";
      }
    }
  };
  size_t taken = 0, plain_events = 0;
  for (int i = 0; i < 3000; ++i) {
    bool plain = true;
    exponents = false;
    std::string e = "{";
    for (size_t f = 0, n = pick(12); f < n; ++f) {
      const std::string& key = keys[pick(keys.size())];
      e += (f ? ", \"" : "\"") + key + "\": ";
      if (key == "args" && pick(4) != 0) {
        e += "{";
        for (size_t a = 0, m = pick(10); a < m; ++a) {
          e += (a ? ", \"" : "\"") + arg_keys[pick(arg_keys.size())] + "\": " + value(&plain, 1);
        }
        e += "}";
      } else {
        e += value(&plain, 0);
      }
    }
    e += "}";
    const Reading r = read(e);
    if (r.fast) {
      ++taken;
      EXPECT_TRUE(r.same) << e;
    }
    EXPECT_TRUE(r.combined_same) << e;
    if (plain) {
      ++plain_events;
      // (decimals out of range are left to simdjson too)
      if (!r.fast && !exponents) {
        ADD_FAILURE() << "a plain event left to simdjson: " << e;
      }
    }
  }
  EXPECT_GT(plain_events, 1000u);
  EXPECT_GT(taken, plain_events * 9 / 10);
}

}  // namespace
