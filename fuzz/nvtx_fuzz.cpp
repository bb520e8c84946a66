// NVTX event attributes and payloads as the collector decodes them (nvtx_attributes.h: every
// field of nvtxEventAttributes_t that its `size` declares; payload and message kinds), wide
// strings (wide_to_utf8), and the range state machine they feed (nvtx_tracker.h: push/pop and
// start/end ranges across threads and domains, marks, registered strings, category names,
// process end and fork). A fresh tracker per input, so that every run is reproducible alone.
//
// Input: a sequence of operations, each an opcode byte and its arguments. Attribute structs get
// every field from the input, `size` included; strings are copies of input bytes; wide strings
// take 4 bytes per character, so invalid code points and lone surrogates come up; handles and
// range ids are ones returned earlier or made up (the tracker must check every number it gets
// back); thread ids and timestamps are the input's, in any order.
#include <nvtx3/nvToolsExt.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "common.h"
#include "nvtx_attributes.h"
#include "nvtx_tracker.h"

namespace {

using c3::collector::NvtxAttributes;
using c3::collector::NvtxTracker;
using c3::fuzz::Bytes;

volatile size_t g_sink = 0;  // what the rows held, so that reading them is not optimized away

// Strings, handles and ids of one input; strings live until the input is done, as NVTX only
// borrows them for the call.
struct State {
  std::deque<std::string> ascii;
  std::deque<std::wstring> wide;
  std::vector<uint64_t> domains{NvtxTracker::kDefaultDomain};
  std::vector<uint64_t> strings{0};
  std::vector<uint64_t> ranges{0};

  const char* text(Bytes& in) { return ascii.emplace_back(in.str()).c_str(); }
  const wchar_t* wtext(Bytes& in) {
    std::wstring& w = wide.emplace_back();
    for (size_t n = in.u8() % 32; n > 0 && !in.empty(); --n) {
      const uint32_t c = in.u32();
      if (c != 0) w.push_back(static_cast<wchar_t>(c));
    }
    return w.c_str();
  }
  // One seen before (by index), or a made-up number.
  static uint64_t pick(Bytes& in, const std::vector<uint64_t>& seen) {
    const uint8_t b = in.u8();
    return b < 0xf0 ? seen[b % seen.size()] : in.u64();
  }
  uint64_t domain(Bytes& in) { return pick(in, domains); }
  static int64_t tid(Bytes& in) { return 1000 + in.u8() % 4; }
  static int64_t ts(Bytes& in) { return static_cast<int64_t>(in.u64()); }

  NvtxAttributes attributes(Bytes& in) {
    const uint8_t how = in.u8();
    if (how == 0xfe) return NvtxAttributes::text(wtext(in));
    if (how == 0xff) return c3::collector::nvtx::decode_attributes(nullptr);
    nvtxEventAttributes_t a;
    std::memset(&a, 0, sizeof a);
    a.version = in.u16();
    // Mostly the real size; sometimes an older, shorter struct (or a bogus one).
    const uint8_t s = in.u8();
    a.size = s < 0x80 ? static_cast<uint16_t>(NVTX_EVENT_ATTRIB_STRUCT_SIZE)
                      : static_cast<uint16_t>(s % (sizeof a + 9));
    a.category = in.u32();
    a.colorType = static_cast<int32_t>(in.u8() % 3);
    a.color = in.u32();
    a.payloadType = static_cast<int32_t>(in.u8() % 9);
    const uint64_t payload = in.u64();
    std::memcpy(&a.payload, &payload, sizeof payload);
    a.messageType = static_cast<int32_t>(in.u8() % 5);
    switch (a.messageType) {
      case NVTX_MESSAGE_TYPE_ASCII:
        a.message.ascii = text(in);
        break;
      case NVTX_MESSAGE_TYPE_UNICODE:
        a.message.unicode = wtext(in);
        break;
      case NVTX_MESSAGE_TYPE_REGISTERED: {
        // A handle is the tracker's number dressed as a pointer (nvtx_injection.cpp).
        const uint64_t h = pick(in, strings);
        // The handle is a pointer: its size is what is copied.
        std::memcpy(&a.message.registered, &h,
                    sizeof a.message.registered);  // NOLINT(bugprone-sizeof-expression)
        break;
      }
      default:  // unknown kinds: a pointer that must not be read
        a.message.ascii = nullptr;
        break;
    }
    // When `size` leaves the message out, the decoder must not follow its pointer: make it one
    // that would fault.
    if (a.size < offsetof(nvtxEventAttributes_t, message) + sizeof a.message) {
      a.message.ascii =
          reinterpret_cast<const char*>(uintptr_t{8});  // NOLINT(performance-no-int-to-ptr)
    }
    return c3::collector::nvtx::decode_attributes(&a);
  }
};

void run_op(Bytes& in, State& st, NvtxTracker& t) {
  switch (in.u8() % 13) {
    case 0: {
      const uint64_t d = st.domain(in);
      const int64_t tid = State::tid(in), ts = State::ts(in);
      t.mark(d, tid, ts, st.attributes(in));
      break;
    }
    case 1: {
      const uint64_t d = st.domain(in);
      const int64_t tid = State::tid(in), ts = State::ts(in);
      t.push(d, tid, ts, st.attributes(in));
      break;
    }
    case 2: {
      const uint64_t d = st.domain(in);
      const int64_t tid = State::tid(in);
      t.pop(d, tid, State::ts(in));
      break;
    }
    case 3: {
      const uint64_t d = st.domain(in);
      const int64_t tid = State::tid(in), ts = State::ts(in);
      st.ranges.push_back(t.start(d, tid, ts, st.attributes(in)));
      break;
    }
    case 4: {
      const uint64_t id = State::pick(in, st.ranges);
      const int64_t tid = State::tid(in);
      t.end(id, tid, State::ts(in));
      break;
    }
    case 5:
      st.domains.push_back(t.create_domain((in.u8() & 1) != 0
                                               ? std::string(st.text(in))
                                               : c3::collector::wide_to_utf8(st.wtext(in))));
      break;
    case 6:
      t.destroy_domain(st.domain(in));
      break;
    case 7: {
      const uint64_t d = st.domain(in);
      st.strings.push_back(t.register_string(d, (in.u8() & 1) != 0
                                                    ? std::string(st.text(in))
                                                    : c3::collector::wide_to_utf8(st.wtext(in))));
      break;
    }
    case 8: {
      const uint64_t d = st.domain(in);
      const uint32_t category = in.u32();
      t.name_category(d, category, st.text(in));
      break;
    }
    case 9:
      t.close_all(State::ts(in));
      break;
    case 10:
      t.reset_after_fork();
      break;
    case 11:
      g_sink = g_sink + t.domain_name(st.domain(in)).size();
      break;
    default: {
      const NvtxTracker::Stats s = t.stats();
      g_sink = g_sink + static_cast<size_t>(s.open_push_ranges + s.open_start_ranges);
      break;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  NvtxTracker tracker(
      [](c3::tracedb::NvtxRangeRow&& r) { g_sink = g_sink + r.name.size(); },
      [](NvtxTracker::Problem, int64_t n) { g_sink = g_sink + static_cast<size_t>(n); });
  Bytes in(data, size);
  State st;
  for (int ops = 0; ops < 4096 && !in.empty(); ++ops) run_op(in, st, tracker);
  tracker.close_all(0);
  return 0;
}
