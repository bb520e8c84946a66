// NVTX v3 injection: attaches the collector to an NVTX instance by filling its callback tables
// (NVTX_ETID_CALLBACKS) with functions that feed one process-wide NvtxTracker.
//
// Every library or executable that includes the NVTX v3 headers has its own NVTX instance, and
// each one calls InitializeInjectionNvtx2 on its first NVTX call, so initialize() runs once per
// instance; all instances share the tracker, so a range pushed through one and popped through
// another still pairs up.
//
// What is recorded: marks, push/pop and start/end ranges (core and domain versions), category
// names, domains and registered strings, and CUDA stream names (nvtxNameCuStream*,
// nvtxNameCudaStream*). Thread, device, context, event and resource naming are left to NVTX's
// own no-ops: the trace has no place for them.
//
// Counters: nvtx_events (each row handed to the Recorder, each category name, each stream name
// call, resolved or not), nvtx_unclosed_ranges, nvtx_unmatched_ends, and collector_overhead_ns
// (time inside every callback). A stream name is dropped, and only counted, when CUPTI is not
// active or cannot resolve the stream: the stream table is keyed by CUPTI's stream id.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "c3/tracedb/schema.h"
#include "counters.h"
#include "event.h"

namespace c3::collector::nvtx {

// The same type as NVTX's NvtxGetExportTableFunc_t (nvtx_injection.cpp checks it), spelled out
// so that callers need not include the NVTX headers, whose implementation mode is chosen per
// translation unit.
using GetExportTableFn = const void* (*)(uint32_t export_table_id);

// The body of InitializeInjectionNvtx2: 1 when this NVTX instance now calls the collector, 0
// when its export table is unusable (NVTX then turns every call into a no-op). The first call
// also registers the Recorder's shutdown hook (closes open ranges) and fork-child hook.
int initialize(GetExportTableFn get_export_table);

// What the Recorder hooks run; callable directly by tests.
void on_shutdown(int64_t end_ns);
void on_fork_child();

// Tests drive the real NVTX API without a Recorder: with hooks installed, nothing here touches
// the Recorder (no submit, no counters, no hook registration) and the hooks receive what it
// would have. Members left empty drop their input; an empty resolve_stream resolves nothing.
// Install before NVTX calls start (or while none run); may be replaced between tests.
struct TestHooks {
  std::function<void(tracedb::NvtxRangeRow&&)> row;
  std::function<void(StreamName&&)> stream_name;
  std::function<std::optional<std::pair<uint32_t, uint32_t>>(void* stream)> resolve_stream;
  std::function<void(Counter, int64_t)> count;
};
void set_hooks_for_testing(TestHooks hooks);
// Shorthand for set_hooks_for_testing with only `row` set.
void set_sink_for_testing(std::function<void(tracedb::NvtxRangeRow&&)> sink);

}  // namespace c3::collector::nvtx
