// The CUPTI activity record decoder (collector/src/decode.cpp) on a buffer of records, as
// TraceWriter::write_cupti_buffer hands them over: each record is exactly as long as its size
// (ASan sees any read past it), records of one buffer share a DecodeContext (context records
// name the devices of later sync and stream records).
//
// Input: 8 bytes of clock offset, then records, each [selector][size: 2 bytes][bytes, zero-padded
// to size]. The selector's low 4 bits pick the record kind written over the bytes' own (12-15:
// keep them), so that every decoder is reached from any bytes; bit 4 gives the record's name a
// real string. CUPTI's name pointers are valid while the module is loaded, so the harness makes
// them point at its own string (or null) rather than at fuzz bytes.
#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <variant>

#include "common.h"
#include "decode.h"

namespace {

constexpr CUpti_ActivityKind kKinds[] = {
    CUPTI_ACTIVITY_KIND_KERNEL,  CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,  CUPTI_ACTIVITY_KIND_MEMCPY2,
    CUPTI_ACTIVITY_KIND_MEMSET,  CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
    CUPTI_ACTIVITY_KIND_DEVICE,  CUPTI_ACTIVITY_KIND_CONTEXT,
    CUPTI_ACTIVITY_KIND_STREAM,  CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
    CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
};
constexpr size_t kMaxRecord = 1024;  // larger than any record struct decode.cpp reads
const char kName[] = "_Z10fuzzKernelPfi";
volatile size_t g_sink = 0;  // what the rows held, so that reading them is not optimized away

// Points the record's `name` field (when `size` holds it) at a real string or null.
template <class Rec>
void set_name(uint8_t* rec, size_t size, bool real) {
  constexpr size_t kOff = offsetof(Rec, name);
  if (kOff + sizeof(const char*) > size) return;
  const char* p = real ? kName : nullptr;
  std::memcpy(rec + kOff, &p, sizeof p);
}

size_t consume(const c3::collector::Decoded& d) {
  return std::visit(
      [](const auto& v) -> size_t {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, c3::collector::DecodedKernel>) {
          return v.name != nullptr ? std::strlen(v.name) + v.row.launch_type.size() : 0;
        } else if constexpr (std::is_same_v<T, c3::collector::DecodedDevice>) {
          return v.row.name.size() + (v.row.uuid ? v.row.uuid->size() : 0);
        } else {
          return 1;
        }
      },
      d);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  c3::fuzz::Bytes in(data, size);
  c3::collector::DecodeContext ctx;
  ctx.clock_offset_ns = static_cast<int64_t>(in.u64());
  size_t used = 0;
  while (!in.empty()) {
    const uint8_t sel = in.u8();
    const size_t n = in.u16() % kMaxRecord;
    // Exactly n bytes, so that a read past the record is a heap overflow.
    std::unique_ptr<uint8_t[]> rec(new uint8_t[n > 0 ? n : 1]());
    const std::string_view bytes = in.take(n);
    if (!bytes.empty()) std::memcpy(rec.get(), bytes.data(), bytes.size());
    const size_t which = sel & 0x0f;
    if (which < std::size(kKinds) && n >= sizeof(CUpti_Activity)) {
      const CUpti_ActivityKind kind = kKinds[which];
      std::memcpy(rec.get() + offsetof(CUpti_Activity, kind), &kind, sizeof kind);
    }
    // As bits: the record's kind may be no value of the enum.
    uint32_t kind = CUPTI_ACTIVITY_KIND_INVALID;
    if (n >= sizeof(CUpti_Activity)) std::memcpy(&kind, rec.get(), sizeof kind);
    const bool real_name = (sel & 0x10) != 0;
    if (kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      set_name<CUpti_ActivityKernel10>(rec.get(), n, real_name);
    } else if (kind == CUPTI_ACTIVITY_KIND_DEVICE) {
      set_name<CUpti_ActivityDevice5>(rec.get(), n, real_name);
    }
    const c3::collector::Decoded d =
        c3::collector::decode_record(reinterpret_cast<const CUpti_Activity*>(rec.get()), n, ctx);
    used += consume(d);
  }
  g_sink = used;
  return 0;
}
