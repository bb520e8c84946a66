// The fake CUDA driver: initialization (with CUDA_INJECTION64_PATH), devices, contexts, the
// stream registry, GPU timing per stream, and the exported cu* functions the collector looks up
// with dlsym(RTLD_DEFAULT, ...).
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "c3/sim/gpu/fixed_time.h"
#include "fake_cupti.h"

namespace c3::sim::gpu::cupti {

struct Context {
  int device = 0;
  uint32_t id = 0;
  Stream* null_stream = nullptr;
  std::once_flag reported;
};

namespace {

// A DGX-H100-like PCI layout.
constexpr std::array<unsigned, kMaxDevices> kPciBus = {0x18, 0x2a, 0x3a, 0x5d,
                                                       0x9a, 0xab, 0xba, 0xdb};

int devices_from_env() {
  const char* env = std::getenv("C3FAKE_DEVICES");
  if (env == nullptr || *env == '\0') return 1;
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (end == env || n < 1) return 1;
  return static_cast<int>(std::min<long>(n, kMaxDevices));
}

struct Driver {
  Driver() : ndev(devices_from_env()) {
    for (int d = 0; d < kMaxDevices; ++d) {
      Context& ctx = contexts[static_cast<size_t>(d)];
      Stream& null = null_streams[static_cast<size_t>(d)];
      ctx.device = d;
      ctx.id = static_cast<uint32_t>(d) + 1;
      ctx.null_stream = &null;
      null.device = d;
      null.id = 5 + static_cast<uint32_t>(d);  // below the created-stream range (13+)
      null.is_null = true;
      null.ctx = &ctx;
      if (d < ndev) valid.insert(&null);
    }
  }
  int ndev;
  DeviceProfile profile;
  std::atomic<int> init_state{0};  // 0: not called, 1: cuInit running, 2: done
  std::array<Context, kMaxDevices> contexts;
  std::array<Stream, kMaxDevices> null_streams;

  std::mutex registry_mu;  // valid, created
  std::unordered_set<const void*> valid;
  std::vector<Stream*> created;
  std::atomic<uint32_t> next_stream_id{13};

  std::mutex schedule_mu;  // Stream::last_end

  std::mutex names_mu;
  std::unordered_set<std::string> names;

  std::atomic<uint32_t> next_correlation{1};
};

// Never destroyed: threads may still launch work during exit.
Driver& driver() {
  static auto* d = new Driver;
  return *d;
}

thread_local int t_device = 0;
thread_local bool t_in_init = false;

bool valid_device(int device) {
  return device >= 0 && device < driver().ndev;
}

void run_injection() {
  const char* path = std::getenv("CUDA_INJECTION64_PATH");
  if (path == nullptr || *path == '\0') return;
  void* lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) return;  // like the driver: a bad injection path is ignored
  using InitFn = int (*)();
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "InitializeInjection"));
  if (init != nullptr) init();
}

void report_context(Context& ctx) {
  std::call_once(ctx.reported, [&ctx] {
    RecordBatch batch;
    if (kind_enabled(CUPTI_ACTIVITY_KIND_CONTEXT)) {
      CUpti_ActivityContext3 rec{};
      rec.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
      rec.contextId = ctx.id;
      rec.deviceId = static_cast<uint32_t>(ctx.device);
      rec.computeApiKind = CUPTI_ACTIVITY_COMPUTE_API_CUDA;
      rec.nullStreamId = static_cast<uint16_t>(ctx.null_stream->id);
      rec.parentContextId = 0;
      rec.isGreenContext = 0;
      rec.numMultiprocessors = static_cast<uint16_t>(driver().profile.sms);
      rec.cigMode = CUPTI_CONTEXT_CIG_MODE_NONE;
      batch.append(rec);
    }
    if (kind_enabled(CUPTI_ACTIVITY_KIND_STREAM)) {
      CUpti_ActivityStream rec{};
      rec.kind = CUPTI_ACTIVITY_KIND_STREAM;
      rec.contextId = ctx.id;
      rec.streamId = ctx.null_stream->id;
      rec.priority = 0;
      rec.flag = CUPTI_ACTIVITY_STREAM_CREATE_FLAG_NULL;
      rec.correlationId = 0;
      batch.append(rec);
    }
    submit(batch);
  });
}

CUpti_ActivityDevice5 device_record(int device) {
  CUpti_ActivityDevice5 rec{};
  rec.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  rec.flags = CUPTI_ACTIVITY_FLAG_NONE;
  const DeviceProfile& p = driver().profile;
  rec.globalMemoryBandwidth = p.bandwidth_kb_per_s;
  rec.globalMemorySize = p.memory_bytes;
  rec.constantMemorySize = 65536;
  rec.l2CacheSize = p.l2_bytes;
  rec.numThreadsPerWarp = 32;
  rec.coreClockRate = p.clock_khz;
  rec.numMemcpyEngines = p.copy_engines;
  rec.numMultiprocessors = static_cast<uint32_t>(p.sms);
  rec.maxIPC = 4;
  rec.maxWarpsPerMultiprocessor = p.max_warps_per_sm;
  rec.maxBlocksPerMultiprocessor = p.max_blocks_per_sm;
  rec.maxSharedMemoryPerMultiprocessor = p.shared_bytes_per_sm;
  rec.maxRegistersPerMultiprocessor = p.registers_per_sm;
  rec.maxRegistersPerBlock = 65536;
  rec.maxSharedMemoryPerBlock = 49152;
  rec.maxThreadsPerBlock = 1024;
  rec.maxBlockDimX = 1024;
  rec.maxBlockDimY = 1024;
  rec.maxBlockDimZ = 64;
  rec.maxGridDimX = 2147483647;
  rec.maxGridDimY = 65535;
  rec.maxGridDimZ = 65535;
  rec.computeCapabilityMajor = p.cc_major;
  rec.computeCapabilityMinor = p.cc_minor;
  rec.id = static_cast<uint32_t>(device);
  rec.eccEnabled = 1;
  // Deterministic uuid: c3 fa ce 00 'H' '1' '0' '0' 00 .. 00 <device>.
  const std::array<unsigned char, 16> uuid = {
      0xc3, 0xfa, 0xce, 0x00, 'H', '1', '0', '0',
      0,    0,    0,    0,    0,   0,   0,   static_cast<unsigned char>(device)};
  std::memcpy(rec.uuid.bytes, uuid.data(), uuid.size());
  rec.name = intern((p.name + " " + std::to_string(device)).c_str());
  rec.isCudaVisible = 1;
  rec.isMigEnabled = 0;
  rec.gpuInstanceId = UINT32_MAX;
  rec.computeInstanceId = UINT32_MAX;
  rec.isNumaNode = 0;
  rec.numaId = UINT32_MAX;
  return rec;
}

}  // namespace

// ---- initialization -------------------------------------------------------------------------

bool configure_devices(int count, const DeviceProfile& profile) {
  Driver& d = driver();
  if (d.init_state.load(std::memory_order_acquire) != 0 || count < 1 || count > kMaxDevices) {
    return false;
  }
  std::lock_guard lock(d.registry_mu);
  for (int i = d.ndev; i < count; ++i) d.valid.insert(&d.null_streams[static_cast<size_t>(i)]);
  for (int i = count; i < d.ndev; ++i) d.valid.erase(&d.null_streams[static_cast<size_t>(i)]);
  d.ndev = count;
  d.profile = profile;
  return true;
}

const DeviceProfile& device_profile() {
  return driver().profile;
}

void ensure_initialized() {
  Driver& d = driver();
  if (d.init_state.load(std::memory_order_acquire) == 2 || t_in_init) return;
  int expected = 0;
  if (d.init_state.compare_exchange_strong(expected, 1)) {
    t_in_init = true;
    run_injection();
    t_in_init = false;
    d.init_state.store(2, std::memory_order_release);
    report_devices();
    return;
  }
  while (d.init_state.load(std::memory_order_acquire) != 2) std::this_thread::yield();
}

bool init_started() {
  return driver().init_state.load(std::memory_order_acquire) != 0;
}
bool driver_initialized() {
  return driver().init_state.load(std::memory_order_acquire) == 2;
}
int device_count() {
  return driver().ndev;
}
int current_device() {
  return t_device;
}

void report_devices() {
  if (!kind_enabled(CUPTI_ACTIVITY_KIND_DEVICE)) return;
  for (int dev = 0; dev < device_count(); ++dev) {
    RecordBatch batch;
    batch.append(device_record(dev));
    submit(batch);
  }
}

// ---- contexts and streams -------------------------------------------------------------------

Context* context_for(int device) {
  if (!valid_device(device)) return nullptr;
  Context& ctx = driver().contexts[static_cast<size_t>(device)];
  report_context(ctx);
  return &ctx;
}

uint32_t context_id(const Context* ctx) {
  return ctx != nullptr ? ctx->id : 0;
}
int context_device(const Context* ctx) {
  return ctx != nullptr ? ctx->device : 0;
}

Stream* null_stream(int device) {
  Context* ctx = context_for(device);
  return ctx != nullptr ? ctx->null_stream : nullptr;
}

Stream* resolve_stream(const void* handle) {
  if (handle == nullptr || handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
    return null_stream(t_device);
  }
  Driver& d = driver();
  Stream* s = nullptr;
  {
    std::lock_guard lock(d.registry_mu);
    if (d.valid.count(handle) == 0) return nullptr;
    s = const_cast<Stream*>(static_cast<const Stream*>(handle));
  }
  report_context(*s->ctx);
  return s;
}

Stream* new_stream(int device, int priority, bool non_blocking) {
  Context* ctx = context_for(device);
  if (ctx == nullptr) return nullptr;
  Driver& d = driver();
  auto* s = new Stream;  // streams live until the process ends
  s->device = device;
  s->id = d.next_stream_id.fetch_add(1);
  s->priority = priority;
  s->non_blocking = non_blocking;
  s->ctx = ctx;
  std::lock_guard lock(d.registry_mu);
  d.valid.insert(s);
  d.created.push_back(s);
  return s;
}

CUptiResult stream_id_for(CUcontext ctx, CUstream stream, uint32_t* id) {
  if (stream == nullptr || stream == CU_STREAM_LEGACY || stream == CU_STREAM_PER_THREAD) {
    int device = t_device;
    if (ctx != nullptr) {
      Driver& d = driver();
      const auto* c = reinterpret_cast<const Context*>(ctx);
      if (c < d.contexts.data() || c >= d.contexts.data() + d.ndev) {
        return CUPTI_ERROR_INVALID_CONTEXT;
      }
      device = c->device;
    }
    Stream* s = null_stream(device);
    if (s == nullptr) return CUPTI_ERROR_INVALID_DEVICE;
    *id = s->id;
    return CUPTI_SUCCESS;
  }
  Stream* s = resolve_stream(stream);
  if (s == nullptr) return CUPTI_ERROR_INVALID_STREAM;
  *id = s->id;
  return CUPTI_SUCCESS;
}

// ---- GPU timing -----------------------------------------------------------------------------

Interval schedule_on(Stream* stream, uint64_t earliest, uint64_t duration_ns) {
  Driver& d = driver();
  std::lock_guard lock(d.schedule_mu);
  Interval iv{};
  iv.start = std::max(earliest, stream->last_end);
  iv.end = iv.start + duration_ns;
  stream->last_end = iv.end;
  return iv;
}

uint64_t stream_last_end(Stream* stream) {
  Driver& d = driver();
  std::lock_guard lock(d.schedule_mu);
  return stream->last_end;
}

uint64_t device_last_end(int device) {
  Driver& d = driver();
  std::vector<Stream*> streams;
  {
    std::lock_guard lock(d.registry_mu);
    for (Stream* s : d.created) {
      if (s->device == device) streams.push_back(s);
    }
  }
  if (valid_device(device)) streams.push_back(&d.null_streams[static_cast<size_t>(device)]);
  std::lock_guard lock(d.schedule_mu);
  uint64_t last = 0;
  for (Stream* s : streams) last = std::max(last, s->last_end);
  return last;
}

// ---- misc -----------------------------------------------------------------------------------

uint32_t next_correlation_id() {
  uint32_t id = driver().next_correlation.fetch_add(1);
  while (id == 0) id = driver().next_correlation.fetch_add(1);  // skip 0 after a wrap
  return id;
}

const char* intern(const char* s) {
  Driver& d = driver();
  std::lock_guard lock(d.names_mu);
  return d.names.emplace(s != nullptr ? s : "").first->c_str();
}

}  // namespace c3::sim::gpu::cupti

using namespace c3::sim::gpu::cupti;

extern "C" {

int c3fake_cuInit(void) {
  ensure_initialized();
  return 0;
}

int c3fake_device_count(void) {
  return device_count();
}

void c3fake_set_device(int device) {
  if (valid_device(device)) t_device = device;
}

int c3fake_get_device(void) {
  return t_device;
}

void* c3fake_default_stream(int device) {
  ensure_initialized();
  return null_stream(device);
}

uint32_t c3fake_stream_id(void* stream) {
  ensure_initialized();
  Stream* s = resolve_stream(stream);
  return s != nullptr ? s->id : 0;
}

uint64_t c3fake_now_ns(void) {
  return now_ns();
}

// ---- CUDA driver API subset -----------------------------------------------------------------

C3FAKE_EXPORT CUresult CUDAAPI cuDeviceGetCount(int* count) {
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!init_started()) return CUDA_ERROR_NOT_INITIALIZED;
  *count = device_count();
  return CUDA_SUCCESS;
}

C3FAKE_EXPORT CUresult CUDAAPI cuDeviceGetPCIBusId(char* pciBusId, int len, CUdevice dev) {
  if (pciBusId == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (!init_started()) return CUDA_ERROR_NOT_INITIALIZED;
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(pciBusId, static_cast<size_t>(len), "%04X:%02X:%02X.%X", 0U,
                kPciBus[static_cast<size_t>(dev)], 0U, 0U);
  return CUDA_SUCCESS;
}

C3FAKE_EXPORT CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext* pctx) {
  if (pctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!init_started()) return CUDA_ERROR_NOT_INITIALIZED;
  Stream* s = resolve_stream(hStream);
  if (s == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  *pctx = reinterpret_cast<CUcontext>(s->ctx);
  return CUDA_SUCCESS;
}

C3FAKE_EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice* device) {
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!init_started()) return CUDA_ERROR_NOT_INITIALIZED;
  *device = t_device;
  return CUDA_SUCCESS;
}

}  // extern "C"
