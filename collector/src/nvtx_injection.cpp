// The collector only writes into the callback tables of the NVTX instances that call it; it must
// not carry an NVTX instance of its own, so the headers give types and declarations only.
#define NVTX_NO_IMPL
#include "nvtx_injection.h"

#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "clock.h"
#include "cupti_session.h"
#include "nvtx_attributes.h"
#include "nvtx_tracker.h"
#include "recorder.h"

namespace c3::collector::nvtx {

static_assert(std::is_same_v<GetExportTableFn, NvtxGetExportTableFunc_t>,
              "nvtx_injection.h must spell NVTX's export-table getter type exactly");

namespace {

// Both leaked on purpose: NVTX calls can arrive from static destructors and atexit handlers
// that run after ours would have.
std::atomic<NvtxTracker*> g_tracker{nullptr};
std::atomic<TestHooks*> g_hooks{nullptr};
std::once_flag g_tracker_once;

TestHooks* test_hooks() {
  return g_hooks.load(std::memory_order_acquire);
}

void add(Counter c, int64_t n) {
  if (TestHooks* h = test_hooks()) {
    if (h->count) h->count(c, n);
    return;
  }
  Recorder::instance().count(c, n);
}

void emit_row(tracedb::NvtxRangeRow&& row) {
  add(Counter::nvtx_events, 1);
  if (TestHooks* h = test_hooks()) {
    if (h->row) h->row(std::move(row));
    return;
  }
  Recorder::instance().submit(Event{std::move(row)});
}

void count_problem(NvtxTracker::Problem p, int64_t n) {
  switch (p) {
    case NvtxTracker::Problem::unclosed_range:
      add(Counter::nvtx_unclosed_ranges, n);
      return;
    case NvtxTracker::Problem::unmatched_end:
      add(Counter::nvtx_unmatched_ends, n);
      return;
  }
}

void ensure_tracker() {
  std::call_once(g_tracker_once, [] {
    g_tracker.store(new NvtxTracker(emit_row, count_problem), std::memory_order_release);
    if (test_hooks() == nullptr) {
      Recorder::instance().add_shutdown_hook(on_shutdown);
      Recorder::instance().add_fork_child_hook(on_fork_child);
    }
  });
}

// Callbacks run only after initialize() created the tracker.
NvtxTracker& tracker() {
  return *g_tracker.load(std::memory_order_acquire);
}

// Every callback runs its body through these: NVTX is C, so nothing may escape, and the time
// spent is the collector's overhead on the application's thread. Timestamps are taken on entry.
template <class Body>
void run(Body&& body) noexcept {
  try {
    const int64_t t0 = now_ns();
    body(t0);
    add(Counter::collector_overhead_ns, now_ns() - t0);
  } catch (...) {  // NOLINT(bugprone-empty-catch): a lost event beats a crashed job
  }
}

template <class R, class Body>
R run_returning(R on_error, Body&& body) noexcept {
  R result = on_error;
  try {
    const int64_t t0 = now_ns();
    result = body(t0);
    add(Counter::collector_overhead_ns, now_ns() - t0);
  } catch (...) {  // NOLINT(bugprone-empty-catch)
  }
  return result;
}

// Handles are the tracker's numbers dressed as pointers: the default domain is null, as in
// NVTX, and a registered string is never null. NVTX only stores and passes them back, and the
// tracker checks every number it gets, so a stale or made-up handle cannot crash the job.
uint64_t from_handle(const void* h) {
  return reinterpret_cast<uintptr_t>(h);
}
template <class Handle>
Handle to_handle(uint64_t v) {
  return reinterpret_cast<Handle>(static_cast<uintptr_t>(v));  // NOLINT(performance-no-int-to-ptr)
}

}  // namespace

NvtxAttributes decode_attributes(const nvtxEventAttributes_t* a) {
  NvtxAttributes out;
  if (a == nullptr) return out;
  // Fields past `size` were not written by the caller; read only what it declared.
  const size_t size = a->size;
  auto declared = [size](size_t offset, size_t field_size) { return size >= offset + field_size; };

  if (declared(offsetof(nvtxEventAttributes_t, category), sizeof(a->category))) {
    out.category = a->category;
  }
  if (declared(offsetof(nvtxEventAttributes_t, color), sizeof(a->color)) &&
      a->colorType == NVTX_COLOR_ARGB) {
    out.has_color = true;
    out.argb = a->color;
  }
  if (declared(offsetof(nvtxEventAttributes_t, payload), sizeof(a->payload))) {
    switch (a->payloadType) {
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
        out.payload = NvtxAttributes::Payload::uint64;
        out.payload_int = static_cast<int64_t>(a->payload.ullValue);  // wraps above INT64_MAX
        break;
      case NVTX_PAYLOAD_TYPE_INT64:
        out.payload = NvtxAttributes::Payload::int64;
        out.payload_int = a->payload.llValue;
        break;
      case NVTX_PAYLOAD_TYPE_DOUBLE:
        out.payload = NvtxAttributes::Payload::float64;
        out.payload_double = a->payload.dValue;
        break;
      case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
        out.payload = NvtxAttributes::Payload::uint32;
        out.payload_int = a->payload.uiValue;
        break;
      case NVTX_PAYLOAD_TYPE_INT32:
        out.payload = NvtxAttributes::Payload::int32;
        out.payload_int = a->payload.iValue;
        break;
      case NVTX_PAYLOAD_TYPE_FLOAT:
        out.payload = NvtxAttributes::Payload::float32;
        out.payload_double = static_cast<double>(a->payload.fValue);
        break;
      default:  // NVTX_PAYLOAD_UNKNOWN, extended payloads (nvToolsExtPayload.h): not stored
        break;
    }
  }
  if (declared(offsetof(nvtxEventAttributes_t, message), sizeof(a->message))) {
    switch (a->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII:
        out.message = NvtxAttributes::Message::ascii;
        out.ascii = a->message.ascii;
        break;
      case NVTX_MESSAGE_TYPE_UNICODE:
        out.message = NvtxAttributes::Message::wide;
        out.wide = a->message.unicode;
        break;
      case NVTX_MESSAGE_TYPE_REGISTERED:
        out.message = NvtxAttributes::Message::registered;
        out.registered = from_handle(a->message.registered);
        break;
      default:  // NVTX_MESSAGE_UNKNOWN and newer kinds: the row gets an empty name
        break;
    }
  }
  return out;
}

namespace {

std::string text(const char* s) {
  return s != nullptr ? std::string(s) : std::string();
}

void name_stream(void* stream, std::string name) {
  add(Counter::nvtx_events, 1);
  std::optional<std::pair<uint32_t, uint32_t>> ids;
  TestHooks* hooks = test_hooks();
  if (hooks != nullptr) {
    if (hooks->resolve_stream) ids = hooks->resolve_stream(stream);
  } else if (CuptiSession* cupti = Recorder::instance().cupti()) {
    ids = cupti->resolve_stream(stream);
  }
  // Without CUPTI's stream id the name could not be joined to any activity row.
  if (!ids) return;
  StreamName event;
  event.stream_id = ids->first;
  event.context_id = ids->second;
  event.name = std::move(name);
  if (hooks != nullptr) {
    if (hooks->stream_name) hooks->stream_name(std::move(event));
    return;
  }
  Recorder::instance().submit(Event{std::move(event)});
}

void name_category(uint64_t domain, uint32_t category, std::string_view name) {
  add(Counter::nvtx_events, 1);
  tracker().name_category(domain, category, name);
}

constexpr uint64_t kDefault = NvtxTracker::kDefaultDomain;

// ---- CORE ----------------------------------------------------------------------------------

void mark_ex(const nvtxEventAttributes_t* a) {
  run([&](int64_t t) { tracker().mark(kDefault, os_tid(), t, decode_attributes(a)); });
}
void mark_a(const char* m) {
  run([&](int64_t t) { tracker().mark(kDefault, os_tid(), t, NvtxAttributes::text(m)); });
}
void mark_w(const wchar_t* m) {
  run([&](int64_t t) { tracker().mark(kDefault, os_tid(), t, NvtxAttributes::text(m)); });
}
nvtxRangeId_t range_start_ex(const nvtxEventAttributes_t* a) {
  return run_returning(nvtxRangeId_t{0}, [&](int64_t t) {
    return tracker().start(kDefault, os_tid(), t, decode_attributes(a));
  });
}
nvtxRangeId_t range_start_a(const char* m) {
  return run_returning(nvtxRangeId_t{0}, [&](int64_t t) {
    return tracker().start(kDefault, os_tid(), t, NvtxAttributes::text(m));
  });
}
nvtxRangeId_t range_start_w(const wchar_t* m) {
  return run_returning(nvtxRangeId_t{0}, [&](int64_t t) {
    return tracker().start(kDefault, os_tid(), t, NvtxAttributes::text(m));
  });
}
void range_end(nvtxRangeId_t id) {
  run([&](int64_t t) { tracker().end(id, os_tid(), t); });
}
int range_push_ex(const nvtxEventAttributes_t* a) {
  return run_returning(NvtxTracker::kError, [&](int64_t t) {
    return tracker().push(kDefault, os_tid(), t, decode_attributes(a));
  });
}
int range_push_a(const char* m) {
  return run_returning(NvtxTracker::kError, [&](int64_t t) {
    return tracker().push(kDefault, os_tid(), t, NvtxAttributes::text(m));
  });
}
int range_push_w(const wchar_t* m) {
  return run_returning(NvtxTracker::kError, [&](int64_t t) {
    return tracker().push(kDefault, os_tid(), t, NvtxAttributes::text(m));
  });
}
int range_pop() {
  return run_returning(NvtxTracker::kError,
                       [&](int64_t t) { return tracker().pop(kDefault, os_tid(), t); });
}
void name_category_a(uint32_t category, const char* name) {
  run([&](int64_t) { name_category(kDefault, category, text(name)); });
}
void name_category_w(uint32_t category, const wchar_t* name) {
  run([&](int64_t) { name_category(kDefault, category, wide_to_utf8(name)); });
}

// ---- CORE2 (domains) -----------------------------------------------------------------------

void domain_mark_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  run([&](int64_t t) { tracker().mark(from_handle(d), os_tid(), t, decode_attributes(a)); });
}
nvtxRangeId_t domain_range_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return run_returning(nvtxRangeId_t{0}, [&](int64_t t) {
    return tracker().start(from_handle(d), os_tid(), t, decode_attributes(a));
  });
}
// Range ids are unique across domains, so the domain adds nothing to an end.
void domain_range_end(nvtxDomainHandle_t, nvtxRangeId_t id) {
  range_end(id);
}
int domain_range_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return run_returning(NvtxTracker::kError, [&](int64_t t) {
    return tracker().push(from_handle(d), os_tid(), t, decode_attributes(a));
  });
}
int domain_range_pop(nvtxDomainHandle_t d) {
  return run_returning(NvtxTracker::kError,
                       [&](int64_t t) { return tracker().pop(from_handle(d), os_tid(), t); });
}
void domain_name_category_a(nvtxDomainHandle_t d, uint32_t category, const char* name) {
  run([&](int64_t) { name_category(from_handle(d), category, text(name)); });
}
void domain_name_category_w(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
  run([&](int64_t) { name_category(from_handle(d), category, wide_to_utf8(name)); });
}
nvtxStringHandle_t domain_register_string_a(nvtxDomainHandle_t d, const char* s) {
  return run_returning(nvtxStringHandle_t{}, [&](int64_t) {
    return to_handle<nvtxStringHandle_t>(tracker().register_string(from_handle(d), text(s)));
  });
}
nvtxStringHandle_t domain_register_string_w(nvtxDomainHandle_t d, const wchar_t* s) {
  return run_returning(nvtxStringHandle_t{}, [&](int64_t) {
    return to_handle<nvtxStringHandle_t>(
        tracker().register_string(from_handle(d), wide_to_utf8(s)));
  });
}
// A null name gets the default domain (a null handle), where its events are still recorded.
nvtxDomainHandle_t domain_create_a(const char* name) {
  return run_returning(nvtxDomainHandle_t{}, [&](int64_t) {
    if (name == nullptr) return nvtxDomainHandle_t{};
    return to_handle<nvtxDomainHandle_t>(tracker().create_domain(name));
  });
}
nvtxDomainHandle_t domain_create_w(const wchar_t* name) {
  return run_returning(nvtxDomainHandle_t{}, [&](int64_t) {
    if (name == nullptr) return nvtxDomainHandle_t{};
    return to_handle<nvtxDomainHandle_t>(tracker().create_domain(wide_to_utf8(name)));
  });
}
void domain_destroy(nvtxDomainHandle_t d) {
  run([&](int64_t) { tracker().destroy_domain(from_handle(d)); });
}

// ---- CUDA and CUDA runtime: stream names (CUstream and cudaStream_t are the same handle) ----

void name_stream_a(void* stream, const char* name) {
  run([&](int64_t) { name_stream(stream, text(name)); });
}
void name_stream_w(void* stream, const wchar_t* name) {
  run([&](int64_t) { name_stream(stream, wide_to_utf8(name)); });
}

// ---- Filling the tables ---------------------------------------------------------------------

struct Slot {
  unsigned id;
  NvtxFunctionPointer fn;
};

// Casting to the table's generic void(*)(void) is how NVTX stores every slot; the instance
// casts back to the slot's real type before calling.
template <class F>
NvtxFunctionPointer fn(F* f) {
  return reinterpret_cast<NvtxFunctionPointer>(f);
}

// Slots not listed keep NVTX's default, which it turns into a no-op once we return.
const Slot kCoreSlots[] = {
    {NVTX_CBID_CORE_MarkEx, fn(mark_ex)},
    {NVTX_CBID_CORE_MarkA, fn(mark_a)},
    {NVTX_CBID_CORE_MarkW, fn(mark_w)},
    {NVTX_CBID_CORE_RangeStartEx, fn(range_start_ex)},
    {NVTX_CBID_CORE_RangeStartA, fn(range_start_a)},
    {NVTX_CBID_CORE_RangeStartW, fn(range_start_w)},
    {NVTX_CBID_CORE_RangeEnd, fn(range_end)},
    {NVTX_CBID_CORE_RangePushEx, fn(range_push_ex)},
    {NVTX_CBID_CORE_RangePushA, fn(range_push_a)},
    {NVTX_CBID_CORE_RangePushW, fn(range_push_w)},
    {NVTX_CBID_CORE_RangePop, fn(range_pop)},
    {NVTX_CBID_CORE_NameCategoryA, fn(name_category_a)},
    {NVTX_CBID_CORE_NameCategoryW, fn(name_category_w)},
};
const Slot kCore2Slots[] = {
    {NVTX_CBID_CORE2_DomainMarkEx, fn(domain_mark_ex)},
    {NVTX_CBID_CORE2_DomainRangeStartEx, fn(domain_range_start_ex)},
    {NVTX_CBID_CORE2_DomainRangeEnd, fn(domain_range_end)},
    {NVTX_CBID_CORE2_DomainRangePushEx, fn(domain_range_push_ex)},
    {NVTX_CBID_CORE2_DomainRangePop, fn(domain_range_pop)},
    {NVTX_CBID_CORE2_DomainNameCategoryA, fn(domain_name_category_a)},
    {NVTX_CBID_CORE2_DomainNameCategoryW, fn(domain_name_category_w)},
    {NVTX_CBID_CORE2_DomainRegisterStringA, fn(domain_register_string_a)},
    {NVTX_CBID_CORE2_DomainRegisterStringW, fn(domain_register_string_w)},
    {NVTX_CBID_CORE2_DomainCreateA, fn(domain_create_a)},
    {NVTX_CBID_CORE2_DomainCreateW, fn(domain_create_w)},
    {NVTX_CBID_CORE2_DomainDestroy, fn(domain_destroy)},
};
const Slot kCudaSlots[] = {
    {NVTX_CBID_CUDA_NameCuStreamA, fn(name_stream_a)},
    {NVTX_CBID_CUDA_NameCuStreamW, fn(name_stream_w)},
};
const Slot kCudartSlots[] = {
    {NVTX_CBID_CUDART_NameCudaStreamA, fn(name_stream_a)},
    {NVTX_CBID_CUDART_NameCudaStreamW, fn(name_stream_w)},
};

bool fill(const NvtxExportTableCallbacks& callbacks, NvtxCallbackModule module,
          std::span<const Slot> slots) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks.GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) {
    return false;
  }
  for (const Slot& slot : slots) {
    // An NVTX older than these headers has fewer slots: never write past its table.
    if (slot.id < size && table[slot.id] != nullptr) *table[slot.id] = slot.fn;
  }
  return true;
}

}  // namespace

int initialize(GetExportTableFn get_export_table) {
  try {
    if (get_export_table == nullptr) return 0;
    const auto* callbacks =
        static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (callbacks == nullptr ||
        callbacks->struct_size < offsetof(NvtxExportTableCallbacks, GetModuleFunctionTable) +
                                     sizeof(callbacks->GetModuleFunctionTable) ||
        callbacks->GetModuleFunctionTable == nullptr) {
      return 0;
    }
    // Before the first slot is written: a slot may be called as soon as we return.
    ensure_tracker();
    if (!fill(*callbacks, NVTX_CB_MODULE_CORE, kCoreSlots)) return 0;
    // Optional modules: an instance without them still gets core ranges and marks.
    fill(*callbacks, NVTX_CB_MODULE_CORE2, kCore2Slots);
    fill(*callbacks, NVTX_CB_MODULE_CUDA, kCudaSlots);
    fill(*callbacks, NVTX_CB_MODULE_CUDART, kCudartSlots);

    const auto* version =
        static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
    if (version != nullptr &&
        version->struct_size >= offsetof(NvtxExportTableVersionInfo, SetInjectionNvtxVersion) +
                                    sizeof(version->SetInjectionNvtxVersion) &&
        version->SetInjectionNvtxVersion != nullptr) {
      version->SetInjectionNvtxVersion(NVTX_VERSION);
    }
    return 1;
  } catch (...) {
    return 0;
  }
}

void on_shutdown(int64_t end_ns) {
  NvtxTracker* t = g_tracker.load(std::memory_order_acquire);
  if (t == nullptr) return;
  try {
    t->close_all(end_ns);
  } catch (...) {  // NOLINT(bugprone-empty-catch): shutdown goes on without the open ranges
  }
}

void on_fork_child() {
  NvtxTracker* t = g_tracker.load(std::memory_order_acquire);
  if (t == nullptr) return;
  try {
    t->reset_after_fork();
  } catch (...) {  // NOLINT(bugprone-empty-catch): the child keeps running, with stale ranges
  }
}

void set_hooks_for_testing(TestHooks hooks) {
  TestHooks* current = g_hooks.load(std::memory_order_acquire);
  if (current == nullptr) {
    g_hooks.store(new TestHooks(std::move(hooks)), std::memory_order_release);
  } else {
    *current = std::move(hooks);
  }
}

void set_sink_for_testing(std::function<void(tracedb::NvtxRangeRow&&)> sink) {
  TestHooks hooks;
  hooks.row = std::move(sink);
  set_hooks_for_testing(std::move(hooks));
}

}  // namespace c3::collector::nvtx
