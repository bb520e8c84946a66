// The simulated node's runtime (c3/sim/gpu/node.h): CUDA-like calls on streams of simulated GPUs,
// placed in time by the model's engine and reported through the CUPTI facade.
#include "c3/sim/gpu/node.h"

#include <time.h>

#include <atomic>
#include <cmath>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "fake_cupti.h"
#include "gpu_work.h"

namespace c3::sim::gpu {
namespace {

using namespace cupti;

struct OpMeta {
  enum class Type { kernel, copy, collective_kernel, collective_copy } type = Type::kernel;
  const char* name = "";
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  int registers = 0;
  int static_smem = 0;
  int dynamic_smem = 0;
  int copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  int64_t bytes = 0;
  int src = 0;
  int dst = 0;
  std::vector<Stream*> stream;  // per part
  std::vector<CallTimes> call;  // per part: the launch call of that part
};

struct Event {
  model::EventId id = -1;
  uint32_t cupti_id = 0;  // the id CUPTI's records name it by
};

struct Node {
  std::mutex mu;
  bool started = false;
  model::NodeSpec spec;
  std::unique_ptr<model::Engine> engine;
  int64_t base = 0;  // CLOCK_MONOTONIC at start: the virtual clock's origin
  double host = 0;   // host time since start, ns
  std::unordered_map<const Stream*, model::StreamId> streams;
  std::unordered_map<model::OpId, OpMeta> ops;
  std::deque<Event> events;  // handles stay valid
};

Node& node() {
  static auto* n = new Node;  // never destroyed: collector threads may read the clock at exit
  return *n;
}

std::atomic<bool> g_clock_virtual{false};
std::atomic<int64_t> g_clock_now{0};

int64_t monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

uint64_t abs_ns(const Node& n, double rel) {
  return static_cast<uint64_t>(n.base + std::llround(rel));
}

void set_host(Node& n, double rel) {
  n.host = std::max(n.host, rel);
  g_clock_now.store(n.base + std::llround(n.host), std::memory_order_release);
}

// Reports a finished op: one activity record per part, on that part's stream.
void report(Node& n, const model::CompletedOp& c) {
  auto it = n.ops.find(c.id);
  if (it == n.ops.end()) return;
  const OpMeta& m = it->second;
  RecordBatch batch;
  for (size_t k = 0; k < c.parts.size() && k < m.stream.size(); ++k) {
    const Stream* s = m.stream[k];
    if (s == nullptr) continue;
    const Interval iv{abs_ns(n, c.parts[k].ready), abs_ns(n, c.parts[k].end)};
    if (m.type == OpMeta::Type::kernel || m.type == OpMeta::Type::collective_kernel) {
      const CUpti_ActivityKind kind = kernel_kind();
      if (kind != CUPTI_ACTIVITY_KIND_INVALID) {
        batch.append(kernel_record(kind, *s, m.name, m.grid, m.block, m.registers, m.static_smem,
                                   m.dynamic_smem, iv, m.call[k]));
      }
    } else {
      append_copy_record(batch, *s, m.copy_kind, static_cast<uint64_t>(m.bytes), m.src, m.dst, iv,
                         m.call[k].correlation);
    }
    if (batch.count() > 100) {
      submit(batch);
      batch = RecordBatch();
    }
  }
  if (!batch.empty()) submit(batch);
  n.ops.erase(it);
}

// One runtime API call at the current host time, costing the spec's launch time.
CallTimes api_call(Node& n, CUpti_CallbackId cbid, const Stream* s, const void* params,
                   const char* symbol) {
  RecordBatch batch;
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, s != nullptr ? s->ctx : nullptr, params, symbol,
               abs_ns(n, n.host));
  set_host(n, n.host + n.spec.gpu.launch_api_ns);
  call.finish(batch, abs_ns(n, n.host));
  submit(batch);
  return call.times();
}

Node& started_node() {
  Node& n = node();
  if (!n.started) throw std::logic_error("simulated node: start() it first");
  return n;
}

Stream* stream_of(Node& n, void* handle, model::StreamId* id) {
  Stream* s = resolve_stream(handle);
  auto it = s != nullptr ? n.streams.find(s) : n.streams.end();
  if (it == n.streams.end()) throw std::invalid_argument("simulated node: unknown stream");
  *id = it->second;
  return s;
}

[[noreturn]] void stuck(const char* what) {
  throw std::logic_error(std::string("simulated node: ") + what +
                         " cannot finish: a collective waits for a rank that never launched its "
                         "part, or a stream waits for an event that is never recorded");
}

DeviceProfile profile_of(const model::NodeSpec& spec) {
  const model::GpuSpec& g = spec.gpu;
  DeviceProfile p;
  p.name = "Simulated " + g.name;
  p.sms = g.sms;
  p.memory_bytes = static_cast<uint64_t>(g.hbm_bytes);
  p.bandwidth_kb_per_s = static_cast<uint64_t>(g.hbm_bytes_per_s / 1000);
  p.l2_bytes = static_cast<uint32_t>(g.l2_bytes);
  p.clock_khz = static_cast<uint32_t>(g.clock_ghz * 1e6);
  p.copy_engines = static_cast<uint32_t>(g.copy_engines);
  p.max_warps_per_sm = static_cast<uint32_t>(g.max_threads_per_sm / 32);
  p.max_blocks_per_sm = static_cast<uint32_t>(g.max_blocks_per_sm);
  p.shared_bytes_per_sm = static_cast<uint32_t>(g.shared_bytes_per_sm);
  p.registers_per_sm = static_cast<uint32_t>(g.registers_per_sm);
  // Compute capability of the modelled part (MI300X: none; 9.4 stands for gfx942).
  p.cc_major = spec.preset == "a100" ? 8 : 9;
  p.cc_minor = spec.preset == "mi300x" ? 4 : 0;
  return p;
}

}  // namespace

void start(const std::string& preset, int gpus) {
  Node& n = node();
  std::lock_guard lock(n.mu);
  if (n.started) {
    if (n.spec.preset == preset && n.spec.gpus == gpus) return;
    throw std::logic_error("simulated node already started as " + n.spec.preset + " x " +
                           std::to_string(n.spec.gpus));
  }
  if (gpus < 1 || gpus > kMaxDevices) {
    throw std::invalid_argument("--gpus " + std::to_string(gpus) +
                                ": the simulated node has 1 to " + std::to_string(kMaxDevices) +
                                " GPUs");
  }
  model::NodeSpec spec = model::preset(preset, gpus);
  if (!configure_devices(gpus, profile_of(spec))) {
    throw std::logic_error(
        "simulated node: the GPU driver was already initialized in this process");
  }
  n.spec = spec;
  n.engine = std::make_unique<model::Engine>(n.spec);
  n.engine->on_complete([&n](const model::CompletedOp& c) { report(n, c); });
  n.base = monotonic_now();
  n.host = 0;
  g_clock_now.store(n.base, std::memory_order_release);
  g_clock_virtual.store(true, std::memory_order_release);
  n.started = true;
  // Like cuInit: the injection (the collector) attaches now, and sees the devices.
  ensure_initialized();
}

bool started() {
  return node().started;
}

const model::NodeSpec& spec() {
  return started_node().spec;
}

int64_t now_ns() {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  return static_cast<int64_t>(abs_ns(n, n.host));
}

int partition_create(int gpu, int sms, int first_sm) {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  return n.engine->add_partition(gpu, sms, first_sm);
}

void* stream_create(int gpu, int cuda_priority, int partition) {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  Context* ctx = context_for(gpu);
  if (ctx == nullptr) throw std::invalid_argument("simulated node: no GPU " + std::to_string(gpu));
  cudaStream_t created = nullptr;
  cudaStreamCreateWithPriority_v5050_params params{};
  params.pStream = &created;
  params.flags = 1U;  // cudaStreamNonBlocking
  params.priority = cuda_priority;
  RecordBatch batch;
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API,
               CUPTI_RUNTIME_TRACE_CBID_cudaStreamCreateWithPriority_v5050, ctx, &params, nullptr,
               abs_ns(n, n.host));
  set_host(n, n.host + n.spec.gpu.launch_api_ns);
  Stream* s = new_stream(gpu, cuda_priority, true);
  created = reinterpret_cast<cudaStream_t>(s);
  call.finish(batch, abs_ns(n, n.host));
  append_stream_record(batch, *s, call.correlation_id());
  submit(batch);
  // CUDA: a lower number is a higher priority; the engine serves larger values first.
  n.streams[s] = n.engine->add_stream(gpu, -cuda_priority, partition);
  return s;
}

uint32_t launch(void* stream, const Kernel& k) {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  model::StreamId sid = 0;
  Stream* s = stream_of(n, stream, &sid);
  if (k.demand.gpu != s->device)
    throw std::invalid_argument("simulated node: kernel for another GPU's stream");
  const char* name = intern(k.name.c_str());
  cudaLaunchKernel_v7000_params params{};
  params.func = name;
  params.gridDim = dim3(k.grid[0], k.grid[1], k.grid[2]);
  params.blockDim = dim3(k.block[0], k.block[1], k.block[2]);
  params.sharedMem = static_cast<size_t>(std::max(k.dynamic_smem, 0));
  params.stream = static_cast<cudaStream_t>(stream);
  const double launch_at = n.host;
  CallTimes call = api_call(n, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, s, &params, name);
  model::OpDesc d;
  d.name = name;
  d.parts.push_back(k.demand);
  const model::OpId id = n.engine->create(std::move(d));
  OpMeta m;
  m.type = OpMeta::Type::kernel;
  m.name = name;
  for (int i = 0; i < 3; ++i) {
    m.grid[i] = k.grid[i];
    m.block[i] = k.block[i];
  }
  m.registers = k.registers;
  m.static_smem = k.static_smem;
  m.dynamic_smem = k.dynamic_smem;
  m.stream = {s};
  m.call = {call};
  n.ops.emplace(id, std::move(m));
  n.engine->enqueue(id, 0, sid, launch_at);
  return call.correlation;
}

uint32_t copy(void* stream, const Copy& c) {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  model::StreamId sid = 0;
  Stream* s = stream_of(n, stream, &sid);
  OpMeta m;
  m.type = OpMeta::Type::copy;
  m.bytes = c.bytes;
  m.src = s->device;
  m.dst = s->device;
  CUpti_CallbackId cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
  cudaMemcpyAsync_v3020_params copy_params{};
  copy_params.count = static_cast<size_t>(c.bytes);
  copy_params.stream = static_cast<cudaStream_t>(stream);
  cudaMemcpyPeerAsync_v4000_params peer_params{};
  const void* params = &copy_params;
  switch (c.kind) {
    case CopyKind::d2d:
      m.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
      copy_params.kind = cudaMemcpyDeviceToDevice;
      break;
    case CopyKind::h2d:
      m.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
      copy_params.kind = cudaMemcpyHostToDevice;
      break;
    case CopyKind::d2h:
      m.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
      copy_params.kind = cudaMemcpyDeviceToHost;
      break;
    case CopyKind::p2p:
      if (c.peer < 0 || c.peer >= n.spec.gpus)
        throw std::invalid_argument("simulated node: p2p copy needs a peer GPU");
      m.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
      m.dst = c.peer;
      cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyPeerAsync_v4000;
      peer_params.srcDevice = s->device;
      peer_params.dstDevice = c.peer;
      peer_params.count = static_cast<size_t>(c.bytes);
      peer_params.stream = static_cast<cudaStream_t>(stream);
      params = &peer_params;
      break;
  }
  const double launch_at = n.host;
  m.call = {api_call(n, cbid, s, params, nullptr)};
  m.stream = {s};
  model::OpDesc d;
  d.name = "memcpy";
  d.parts.push_back(c.demand);
  const model::OpId id = n.engine->create(std::move(d));
  const uint32_t correlation = m.call[0].correlation;
  n.ops.emplace(id, std::move(m));
  n.engine->enqueue(id, 0, sid, launch_at);
  return correlation;
}

namespace {

// cudaEventRecord, cudaStreamWaitEvent: a runtime API call whose only parameter is the stream;
// `place(n, sid, at, call)` puts its effect on the engine's stream at the host time of the call
// and may add activity records to the call's batch (as CUPTI reports them: a CUDA_EVENT record
// per record, a STREAM_WAIT_EVENT synchronization per wait, each naming the event).
template <typename Params, typename Place>
auto stream_call(void* stream, CUpti_CallbackId cbid, Place place) {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  model::StreamId sid = 0;
  Stream* s = stream_of(n, stream, &sid);
  Params params{};
  params.stream = static_cast<cudaStream_t>(stream);
  const double at = n.host;
  RecordBatch batch;
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, s->ctx, &params, nullptr, abs_ns(n, n.host));
  set_host(n, n.host + n.spec.gpu.launch_api_ns);
  call.finish(batch, abs_ns(n, n.host));
  auto out = place(n, sid, at, *s, call, batch);
  submit(batch);
  return out;
}

}  // namespace

void* event_record(void* stream) {
  return stream_call<cudaEventRecord_v3020_params>(
      stream, CUPTI_RUNTIME_TRACE_CBID_cudaEventRecord_v3020,
      [](Node& n, model::StreamId sid, double at, const Stream& s, const ApiCall& call,
         RecordBatch& batch) -> void* {
        n.events.push_back({n.engine->record(sid, at)});
        // The event's id: one per handle (each record here makes a new handle).
        const auto id = static_cast<uint32_t>(n.events.size());
        n.events.back().cupti_id = id;
        if (kind_enabled(CUPTI_ACTIVITY_KIND_CUDA_EVENT)) {
          CUpti_ActivityCudaEvent2 rec{};
          rec.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
          rec.correlationId = call.correlation_id();
          rec.contextId = context_id(s.ctx);
          rec.streamId = s.id;
          rec.eventId = id;
          rec.deviceId = static_cast<uint32_t>(s.device);
          rec.deviceTimestamp = 0;
          rec.cudaEventSyncId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
          batch.append(rec);
        }
        return &n.events.back();
      });
}

void stream_wait_event(void* stream, void* event) {
  stream_call<cudaStreamWaitEvent_v3020_params>(
      stream, CUPTI_RUNTIME_TRACE_CBID_cudaStreamWaitEvent_v3020,
      [event](Node& n, model::StreamId sid, double at, const Stream& s, const ApiCall& call,
              RecordBatch& batch) {
        const auto* e = static_cast<Event*>(event);
        n.engine->wait(sid, e->id, at);
        if (kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
          CUpti_ActivitySynchronization2 rec = sync_record(
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT, call, context_id(s.ctx), s.id);
          rec.cudaEventId = e->cupti_id;
          batch.append(rec);
        }
        return 0;
      });
}

int64_t event_synchronize(void* event) {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  const model::EventId ev = static_cast<Event*>(event)->id;
  const double t = n.engine->run_until_event(ev);
  if (t < 0) stuck("cudaEventSynchronize");
  cudaEventSynchronize_v3020_params params{};
  set_host(n, t);
  api_call(n, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020, nullptr, &params, nullptr);
  return static_cast<int64_t>(abs_ns(n, t));
}

namespace {

void synchronize(Node& n, const Stream* s, CUpti_CallbackId cbid,
                 CUpti_ActivitySynchronizationType type, double done) {
  RecordBatch batch;
  const Context* ctx = s != nullptr ? s->ctx : context_for(0);
  ApiCall call(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, ctx, nullptr, nullptr, abs_ns(n, n.host));
  set_host(n, std::max(n.host + n.spec.gpu.launch_api_ns, done));
  call.finish(batch, abs_ns(n, n.host));
  if (kind_enabled(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) {
    batch.append(sync_record(type, call, context_id(ctx),
                             s != nullptr ? s->id : CUPTI_SYNCHRONIZATION_INVALID_VALUE));
  }
  submit(batch);
}

}  // namespace

void stream_synchronize(void* stream) {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  model::StreamId sid = 0;
  Stream* s = stream_of(n, stream, &sid);
  const model::EventId ev = n.engine->record(sid, n.host);
  const double t = n.engine->run_until_event(ev);
  if (t < 0) stuck("cudaStreamSynchronize");
  synchronize(n, s, CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020,
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE, t);
}

void device_synchronize() {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  const double t = n.engine->run_until_idle();
  if (!n.ops.empty()) stuck("cudaDeviceSynchronize");
  synchronize(n, nullptr, CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
              CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE, t);
}

int64_t collective_create(const model::OpDesc& desc, const CollectiveLaunch& how) {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  OpMeta m;
  m.type = how.is_copy ? OpMeta::Type::collective_copy : OpMeta::Type::collective_kernel;
  m.name = intern(how.kernel_name.c_str());
  m.grid[0] = how.grid;
  m.block[0] = how.block;
  m.registers = 96;
  m.copy_kind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  m.bytes = desc.parts.empty() ? 0 : static_cast<int64_t>(desc.parts[0].ce_bytes);
  m.stream.assign(desc.parts.size(), nullptr);
  m.call.assign(desc.parts.size(), {});
  if (!desc.parts.empty()) m.src = m.dst = desc.parts[0].gpu;
  const model::OpId id = n.engine->create(desc);
  n.ops.emplace(id, std::move(m));
  return id;
}

uint32_t collective_enqueue(int64_t collective, int part, void* stream) {
  Node& n = started_node();
  std::lock_guard lock(n.mu);
  model::StreamId sid = 0;
  Stream* s = stream_of(n, stream, &sid);
  auto it = n.ops.find(collective);
  if (it == n.ops.end()) throw std::logic_error("simulated node: unknown collective");
  OpMeta& m = it->second;
  if (part < 0 || static_cast<size_t>(part) >= m.stream.size())
    throw std::logic_error("simulated node: bad collective part");
  const double launch_at = n.host;
  CallTimes call;
  if (m.type == OpMeta::Type::collective_copy) {
    cudaMemcpyAsync_v3020_params params{};
    params.count = static_cast<size_t>(m.bytes);
    params.kind = cudaMemcpyDeviceToDevice;
    params.stream = static_cast<cudaStream_t>(stream);
    call = api_call(n, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, s, &params, nullptr);
  } else {
    cudaLaunchKernel_v7000_params params{};
    params.func = m.name;
    params.gridDim = dim3(m.grid[0], 1, 1);
    params.blockDim = dim3(m.block[0], 1, 1);
    params.stream = static_cast<cudaStream_t>(stream);
    call = api_call(n, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, s, &params, m.name);
  }
  m.stream[static_cast<size_t>(part)] = s;
  m.call[static_cast<size_t>(part)] = call;
  n.engine->enqueue(collective, part, sid, launch_at);
  return call.correlation;
}

int64_t operations_completed() {
  Node& n = node();
  std::lock_guard lock(n.mu);
  return n.engine ? n.engine->completed() : 0;
}

}  // namespace c3::sim::gpu

extern "C" int64_t c3scope_trace_clock_ns(void) {
  using namespace c3::sim::gpu;
  if (g_clock_virtual.load(std::memory_order_acquire))
    return g_clock_now.load(std::memory_order_acquire);
  return monotonic_now();
}

extern "C" const char* c3scope_trace_clock_name(void) {
  return c3::sim::gpu::g_clock_virtual.load(std::memory_order_acquire)
             ? "simulated node virtual clock (continues CLOCK_MONOTONIC)"
             : nullptr;
}
