// The NVTX glue, driven through the real NVTX v3 API and its real init protocol: this test is a
// "static injection" (nvtxInit.h, load sequence version 2). NVTX's loader finds our definition
// of InitializeInjectionNvtx2_fnptr instead of its weak null one, calls it on the first NVTX
// call with the instance's nvtxGetExportTable, and we hand that to nvtx::initialize exactly as
// entry.cpp's InitializeInjectionNvtx2 does. Rows, stream names and counters go to test hooks.
#include <cstdint>

// Declared before the NVTX headers, which refer to it when NVTX_STATIC_INJECTION_IMPL says the
// injection defines it (below).
extern "C" int (*InitializeInjectionNvtx2_fnptr)(  // NOLINT(readability-identifier-naming)
    const void* (*)(uint32_t));
#define NVTX_STATIC_INJECTION_IMPL
#include <gtest/gtest.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtCuda.h>
#include <nvtx3/nvToolsExtCudaRt.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "clock.h"
#include "nvtx_injection.h"

namespace {

std::atomic<int> g_init_calls{0};

int test_initialize_injection(NvtxGetExportTableFunc_t get_export_table) {
  ++g_init_calls;
  return c3::collector::nvtx::initialize(get_export_table);
}

}  // namespace

extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): the name NVTX's loader looks for
int (*InitializeInjectionNvtx2_fnptr)(const void* (*)(uint32_t)) = test_initialize_injection;
}

namespace c3::collector {
namespace {

using tracedb::NvtxRangeRow;

struct Captured {
  std::mutex mu;
  std::vector<NvtxRangeRow> rows;
  std::vector<StreamName> streams;
  std::map<Counter, int64_t> counts;

  int64_t count(Counter c) {
    std::lock_guard lock(mu);
    auto it = counts.find(c);
    return it == counts.end() ? 0 : it->second;
  }
  std::vector<NvtxRangeRow> take_rows() {
    std::lock_guard lock(mu);
    return std::move(rows);
  }
};

Captured& captured() {
  static Captured* c = new Captured();  // hooks may outlive the test's statics
  return *c;
}

// Stand-ins for CUstream/cudaStream_t and other handles: only their addresses matter.
char g_resolved_stream;
char g_unknown_stream;
char g_context;
char g_event;

int64_t this_tid() {
  return static_cast<int64_t>(gettid());
}

class NvtxInjection : public ::testing::Test {
 protected:
  void SetUp() override {
    // A tool named in the environment would win over the static injection.
    unsetenv("NVTX_INJECTION64_PATH");
    nvtx::TestHooks hooks;
    hooks.row = [](NvtxRangeRow&& r) {
      std::lock_guard lock(captured().mu);
      captured().rows.push_back(std::move(r));
    };
    hooks.stream_name = [](StreamName&& s) {
      std::lock_guard lock(captured().mu);
      captured().streams.push_back(std::move(s));
    };
    hooks.resolve_stream = [](void* s) -> std::optional<std::pair<uint32_t, uint32_t>> {
      if (s == &g_resolved_stream) return std::pair<uint32_t, uint32_t>{7, 3};
      return std::nullopt;
    };
    hooks.count = [](Counter c, int64_t n) {
      std::lock_guard lock(captured().mu);
      captured().counts[c] += n;
    };
    nvtx::set_hooks_for_testing(std::move(hooks));
    nvtx::on_fork_child();  // forget ranges an earlier test in this process left open
    std::lock_guard lock(captured().mu);
    captured().rows.clear();
    captured().streams.clear();
    captured().counts.clear();
  }
};

nvtxEventAttributes_t attributes(const char* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

TEST_F(NvtxInjection, InitializesOnceThroughTheStaticInjectionPath) {
  nvtxMarkA("first call initializes");
  nvtxMarkA("second does not");
  EXPECT_EQ(g_init_calls, 1);
  EXPECT_EQ(captured().take_rows().size(), 2u);
  // Slots we leave alone became NVTX's no-ops.
  nvtxNameOsThreadA(static_cast<uint32_t>(this_tid()), "worker");
  nvtxResourceAttributes_t ra{};
  EXPECT_EQ(nvtxDomainResourceCreate(nullptr, &ra), nullptr);
  nvtxInitialize(nullptr);
  EXPECT_TRUE(captured().take_rows().empty());
}

TEST_F(NvtxInjection, PushPopRowsAreExact) {
  const int64_t before = now_ns();
  EXPECT_EQ(nvtxRangePushA("outer"), 0);
  EXPECT_EQ(nvtxRangePushW(L"inn\u00e9r"), 1);
  EXPECT_EQ(nvtxRangePop(), 1);
  EXPECT_EQ(nvtxRangePop(), 0);
  const int64_t after = now_ns();

  auto rows = captured().take_rows();
  ASSERT_EQ(rows.size(), 2u);
  const NvtxRangeRow& inner = rows[0];
  const NvtxRangeRow& outer = rows[1];
  for (const NvtxRangeRow* r : {&inner, &outer}) {
    EXPECT_EQ(r->process_id, 0);
    EXPECT_EQ(r->thread_id, this_tid());
    EXPECT_EQ(r->end_thread_id, std::nullopt);
    EXPECT_EQ(r->kind, "push_pop");
    EXPECT_EQ(r->domain, "default");
    EXPECT_EQ(r->category, std::nullopt);
    EXPECT_EQ(r->category_name, std::nullopt);
    EXPECT_EQ(r->color, std::nullopt);
    EXPECT_EQ(r->payload_int, std::nullopt);
    EXPECT_EQ(r->payload_double, std::nullopt);
    EXPECT_EQ(r->closed, 1);
  }
  EXPECT_EQ(outer.name, "outer");
  EXPECT_EQ(inner.name, "inn\xC3\xA9r");
  EXPECT_EQ(outer.depth, 0);
  EXPECT_EQ(inner.depth, 1);
  EXPECT_LE(before, outer.start_ns);
  EXPECT_LE(outer.start_ns, inner.start_ns);
  EXPECT_LE(inner.start_ns, inner.end_ns);
  EXPECT_LE(inner.end_ns, outer.end_ns);
  EXPECT_LE(outer.end_ns, after);
  EXPECT_EQ(captured().count(Counter::nvtx_events), 2);
  EXPECT_GT(captured().count(Counter::collector_overhead_ns), 0);
}

TEST_F(NvtxInjection, DomainsAttributesRegisteredStringsAndCategories) {
  nvtxDomainHandle_t net = nvtxDomainCreateA("net");
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(nvtxDomainCreateW(L"net"), net);
  nvtxDomainNameCategoryA(net, 3, "comm");
  nvtxNameCategoryW(3, L"default-domain category");
  nvtxStringHandle_t step = nvtxDomainRegisterStringA(net, "allreduce");
  ASSERT_NE(step, nullptr);

  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = 3;
  a.colorType = NVTX_COLOR_ARGB;
  a.color = 0xFF112233;
  a.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT64;
  a.payload.ullValue = 0xFFFFFFFFFFFFFFFEull;
  a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  a.message.registered = step;
  EXPECT_EQ(nvtxRangePushA("default outer"), 0);
  EXPECT_EQ(nvtxDomainRangePushEx(net, &a), 0);  // its own stack: depth 0 again
  nvtxEventAttributes_t m = attributes("mark");
  m.payloadType = NVTX_PAYLOAD_TYPE_FLOAT;
  m.payload.fValue = 1.5f;
  m.category = 3;
  nvtxDomainMarkEx(net, &m);
  EXPECT_EQ(nvtxDomainRangePop(net), 0);
  EXPECT_EQ(nvtxRangePop(), 0);
  nvtxEventAttributes_t s = attributes("window");
  s.payloadType = NVTX_PAYLOAD_TYPE_INT32;
  s.payload.iValue = -7;
  const nvtxRangeId_t id = nvtxDomainRangeStartEx(net, &s);
  EXPECT_NE(id, 0u);
  nvtxDomainRangeEnd(net, id);
  nvtxDomainDestroy(net);

  auto rows = captured().take_rows();
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].kind, "mark");
  EXPECT_EQ(rows[0].domain, "net");
  EXPECT_EQ(rows[0].name, "mark");
  EXPECT_EQ(rows[0].category_name, "comm");
  EXPECT_EQ(rows[0].payload_double, 1.5);
  EXPECT_EQ(rows[0].payload_int, std::nullopt);
  EXPECT_EQ(rows[0].start_ns, rows[0].end_ns);
  EXPECT_EQ(rows[0].depth, std::nullopt);

  EXPECT_EQ(rows[1].kind, "push_pop");
  EXPECT_EQ(rows[1].domain, "net");
  EXPECT_EQ(rows[1].name, "allreduce");
  EXPECT_EQ(rows[1].category, 3);
  EXPECT_EQ(rows[1].category_name, "comm");
  EXPECT_EQ(rows[1].color, 0xFF112233LL);
  EXPECT_EQ(rows[1].payload_int, -2);  // 2^64 - 2, wrapped
  EXPECT_EQ(rows[1].depth, 0);

  EXPECT_EQ(rows[2].domain, "default");
  EXPECT_EQ(rows[2].name, "default outer");
  EXPECT_EQ(rows[2].depth, 0);
  EXPECT_EQ(rows[2].category, std::nullopt);

  EXPECT_EQ(rows[3].kind, "start_end");
  EXPECT_EQ(rows[3].domain, "net");
  EXPECT_EQ(rows[3].name, "window");
  EXPECT_EQ(rows[3].payload_int, -7);
  EXPECT_EQ(rows[3].depth, std::nullopt);
  EXPECT_EQ(rows[3].end_thread_id, this_tid());
  // Rows plus the two category names.
  EXPECT_EQ(captured().count(Counter::nvtx_events), 6);
}

TEST_F(NvtxInjection, StartEndAcrossThreadsAndMarks) {
  const nvtxRangeId_t id = nvtxRangeStartA("load");
  int64_t ender_tid = 0;
  std::thread ender([&] {
    ender_tid = this_tid();
    nvtxRangeEnd(id);
  });
  ender.join();
  nvtxMarkW(L"w");
  nvtxEventAttributes_t m = attributes("m");
  m.payloadType = NVTX_PAYLOAD_TYPE_DOUBLE;
  m.payload.dValue = 0.125;
  nvtxMarkEx(&m);
  const nvtxRangeId_t id2 = nvtxRangeStartW(L"wide start");
  nvtxEventAttributes_t e = attributes("ex start");
  e.payloadType = NVTX_PAYLOAD_TYPE_UNSIGNED_INT32;
  e.payload.uiValue = 4000000000u;
  const nvtxRangeId_t id3 = nvtxRangeStartEx(&e);
  nvtxRangeEnd(id3);
  nvtxRangeEnd(id2);

  auto rows = captured().take_rows();
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].kind, "start_end");
  EXPECT_EQ(rows[0].name, "load");
  EXPECT_EQ(rows[0].thread_id, this_tid());
  EXPECT_EQ(rows[0].end_thread_id, ender_tid);
  EXPECT_NE(ender_tid, this_tid());
  EXPECT_EQ(rows[1].kind, "mark");
  EXPECT_EQ(rows[1].name, "w");
  EXPECT_EQ(rows[2].name, "m");
  EXPECT_EQ(rows[2].payload_double, 0.125);
  EXPECT_EQ(rows[3].name, "ex start");
  EXPECT_EQ(rows[3].payload_int, 4000000000LL);
  EXPECT_EQ(rows[4].name, "wide start");
}

TEST_F(NvtxInjection, UnmatchedPopAndEndAreCounted) {
  EXPECT_LT(nvtxRangePop(), 0);
  nvtxDomainHandle_t d = nvtxDomainCreateA("empty");
  EXPECT_LT(nvtxDomainRangePop(d), 0);
  nvtxRangeEnd(987654321);
  EXPECT_TRUE(captured().take_rows().empty());
  EXPECT_EQ(captured().count(Counter::nvtx_unmatched_ends), 3);
  EXPECT_EQ(captured().count(Counter::nvtx_events), 0);
}

TEST_F(NvtxInjection, StreamNamesNeedAResolvedStream) {
  nvtxNameCudaStreamA(reinterpret_cast<cudaStream_t>(&g_resolved_stream), "copies");
  nvtxNameCuStreamW(reinterpret_cast<CUstream>(&g_resolved_stream), L"compute \u00e9");
  nvtxNameCudaStreamW(reinterpret_cast<cudaStream_t>(&g_unknown_stream), L"unresolved");
  nvtxNameCuStreamA(reinterpret_cast<CUstream>(&g_unknown_stream), "unresolved too");
  // Device, context and event names are not recorded.
  nvtxNameCudaDeviceA(0, "gpu0");
  nvtxNameCuContextA(reinterpret_cast<CUcontext>(&g_context), "ctx");
  nvtxNameCudaEventA(reinterpret_cast<cudaEvent_t>(&g_event), "ev");

  std::lock_guard lock(captured().mu);
  ASSERT_EQ(captured().streams.size(), 2u);
  EXPECT_EQ(captured().streams[0].stream_id, 7);
  EXPECT_EQ(captured().streams[0].context_id, 3);
  EXPECT_EQ(captured().streams[0].name, "copies");
  EXPECT_EQ(captured().streams[1].stream_id, 7);
  EXPECT_EQ(captured().streams[1].name, "compute \xC3\xA9");
  EXPECT_EQ(captured().counts[Counter::nvtx_events], 4);  // dropped names are still counted
  EXPECT_TRUE(captured().rows.empty());
}

TEST_F(NvtxInjection, ShutdownClosesOpenRanges) {
  nvtxRangePushA("never popped");
  nvtxRangeStartA("never ended");
  nvtx::on_shutdown(now_ns() + 1000);
  auto rows = captured().take_rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "never popped");
  EXPECT_EQ(rows[0].closed, 0);
  EXPECT_EQ(rows[0].depth, 0);
  EXPECT_EQ(rows[1].name, "never ended");
  EXPECT_EQ(rows[1].closed, 0);
  EXPECT_EQ(rows[1].end_thread_id, std::nullopt);
  EXPECT_EQ(rows[0].end_ns, rows[1].end_ns);
  EXPECT_EQ(captured().count(Counter::nvtx_unclosed_ranges), 2);
}

TEST_F(NvtxInjection, ForkChildForgetsTheParentsRanges) {
  nvtxRangePushA("parent");
  nvtx::on_fork_child();
  EXPECT_LT(nvtxRangePop(), 0);
  nvtx::on_shutdown(now_ns());
  EXPECT_TRUE(captured().take_rows().empty());
}

TEST_F(NvtxInjection, ManyThreadsThroughTheApi) {
  constexpr int kThreads = 16;
  constexpr int kIterations = 500;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  threads.reserve(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      for (int it = 0; it < kIterations; ++it) {
        if (nvtxRangePushA("a") != 0) ++wrong;
        if (nvtxRangePushA("b") != 1) ++wrong;
        if (nvtxRangePop() != 1) ++wrong;
        if (nvtxRangePop() != 0) ++wrong;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  auto rows = captured().take_rows();
  EXPECT_EQ(rows.size(), static_cast<size_t>(kThreads * kIterations * 2));
  std::map<int64_t, int> per_thread;
  for (const auto& r : rows) ++per_thread[r.thread_id];
  EXPECT_EQ(per_thread.size(), static_cast<size_t>(kThreads));
}

// ---- initialize() against hand-made export tables ----------------------------------------

NvtxFunctionPointer g_slots[NVTX_CBID_CORE_SIZE + 1];
NvtxFunctionPointer* g_table[NVTX_CBID_CORE_SIZE + 1];
unsigned g_core_size = 0;

int NVTX_API fake_module_table(NvtxCallbackModule module, NvtxFunctionTable* out,
                               unsigned int* size) {
  if (module != NVTX_CB_MODULE_CORE) return 0;
  for (unsigned i = 0; i <= NVTX_CBID_CORE_SIZE; ++i) {
    g_slots[i] = nullptr;
    g_table[i] = i == 0 ? nullptr : &g_slots[i];
  }
  *out = g_table;
  *size = g_core_size;
  return 1;
}

NvtxExportTableCallbacks g_callbacks{sizeof(NvtxExportTableCallbacks), fake_module_table};

const void* NVTX_API fake_export_table(uint32_t id) {
  return id == NVTX_ETID_CALLBACKS ? &g_callbacks : nullptr;
}
const void* NVTX_API no_export_table(uint32_t) {
  return nullptr;
}

// In the fixture so that no Recorder is touched when this test runs alone and creates the tracker.
TEST_F(NvtxInjection, OlderInstanceWithFewerSlotsIsNotOverrun) {
  g_core_size = 8;  // an NVTX that knows only slots 1..7
  EXPECT_EQ(nvtx::initialize(fake_export_table), 1);
  for (unsigned i = 1; i < 8; ++i) EXPECT_NE(g_slots[i], nullptr) << "slot " << i;
  for (unsigned i = 8; i <= NVTX_CBID_CORE_SIZE; ++i) EXPECT_EQ(g_slots[i], nullptr) << i;
}

TEST_F(NvtxInjection, RefusesUnusableExportTables) {
  EXPECT_EQ(nvtx::initialize(nullptr), 0);
  EXPECT_EQ(nvtx::initialize(no_export_table), 0);
  g_callbacks.struct_size = sizeof(size_t);  // too small to hold GetModuleFunctionTable
  EXPECT_EQ(nvtx::initialize(fake_export_table), 0);
  g_callbacks.struct_size = sizeof(NvtxExportTableCallbacks);
}

}  // namespace
}  // namespace c3::collector
