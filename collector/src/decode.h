// CUPTI activity records -> trace rows. Pure: no I/O, no locks, no CUPTI calls; tests feed it
// records built with the real cupti_activity.h layouts (tests/collector/decode_test.cpp).
//
// Records are read by field offset and a field is used only when the record is long enough to
// hold it, so a CUPTI older than the headers we build with (PyTorch may bring CUPTI 12) yields
// rows with those newer columns NULL instead of garbage: CUPTI versions append fields to the
// record structs and keep the prefix.
#pragma once

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>

#include "c3/tracedb/schema.h"

namespace c3::collector {

struct DecodeContext {
  // Subtracted from every CUPTI timestamp to put it on the trace clock (0 when CUPTI calls our
  // timestamp callback).
  int64_t clock_offset_ns = 0;
  // Learned from context records; sync records name only a context.
  std::unordered_map<uint32_t, uint32_t> context_device;
};

// Kernel and API rows carry a name pointer that the writer interns into the string table.
struct DecodedKernel {
  tracedb::KernelRow row;
  const char* name = nullptr;  // CUPTI's (mangled) name, valid while the module is loaded
};
struct DecodedApi {
  tracedb::ApiCallRow row;
  CUpti_CallbackDomain domain = CUPTI_CB_DOMAIN_INVALID;
};
struct DecodedDevice {
  tracedb::DeviceRow row;
};
struct Skipped {
  enum class Why { unknown_kind, invalid, not_stored } why = Why::invalid;
  int kind = 0;
};

using Decoded =
    std::variant<Skipped, DecodedKernel, tracedb::MemcpyRow, tracedb::MemsetRow, tracedb::SyncRow,
                 DecodedDevice, tracedb::ContextRow, tracedb::StreamRow,
                 tracedb::ExternalCorrelationRow, DecodedApi, tracedb::CudaEventRow>;

// Decodes one record of `size` bytes (the distance to the next record in the buffer). Rows come
// back with process_id 0; the writer sets it. Updates ctx.context_device from context records.
Decoded decode_record(const CUpti_Activity* record, size_t size, DecodeContext& ctx);

// Text forms used in the schema (copy and memory kinds: c3/common/copy_kinds.h).
const char* launch_type_name(uint8_t launch_type);
const char* sync_type_name(uint32_t type);
const char* external_kind_name(uint32_t kind);
std::string format_uuid(const CUuuid& uuid);

}  // namespace c3::collector
