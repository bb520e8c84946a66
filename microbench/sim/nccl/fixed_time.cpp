// The simulated NCCL's fixed-time driver, for tests: communicators of one process whose peers
// never show up. Each call outside a group launches one kernel on the fixed-time GPU driver
// (c3/sim/gpu/fixed_time.h) lasting 5000 ns + bytes / 50; the outermost ncclGroupEnd launches one
// kernel per stream, inside the ncclGroupEnd call.
#include "c3/sim/gpu/fixed_time.h"

#include <atomic>
#include <string>
#include <vector>

#include "c3/sim/nccl/fixed_time.h"
#include "sim_nccl.h"

namespace c3::sim::nccl {
namespace {

constexpr unsigned kChannels = 2;
constexpr unsigned kThreadsPerBlock = 640;
constexpr int kRegsPerThread = 96;
constexpr uint64_t kBaseNs = 5000;
constexpr uint64_t kBytesPerNs = 50;  // ~50 GB/s
constexpr const char* kArgs = "(ncclDevKernelArgsStorage<4096ul>)";

std::atomic<int> g_launches{0};

std::string kernel_name(const Call& c) {
  const std::string reduction = std::string("_") +
                                common::nccl::reduce_op_kernel_tag(c.redop, c.type) + "_" +
                                common::nccl::datatype_tag(c.type) + "_RING_LL";
  std::string name = "ncclDevKernel_";
  switch (c.func) {
    case Func::all_reduce:
      name += "AllReduce" + reduction;
      break;
    case Func::reduce:
      name += "Reduce" + reduction;
      break;
    case Func::reduce_scatter:
      name += "ReduceScatter" + reduction;
      break;
    case Func::broadcast:
      name += "Broadcast_RING_LL";
      break;
    case Func::all_gather:
      name += "AllGather_RING_LL";
      break;
    case Func::all_to_all:
    case Func::gather:
    case Func::scatter:
    case Func::send:
    case Func::recv:
      name += "SendRecv";  // AlltoAll, Gather, Scatter are send/recv based
      break;
  }
  return name + kArgs;
}

uint64_t duration_ns(const Call& c) {
  return kBaseNs + payload_bytes(c) / kBytesPerNs;
}

void launch(void* stream, const std::string& name, uint64_t duration) {
  c3fake_launch_kernel(stream, name.c_str(), kChannels, 1, 1, kThreadsPerBlock, 1, 1,
                       kRegsPerThread, 0, 0, duration);
  g_launches.fetch_add(1);
}

}  // namespace

void fixed_time_issue(const Call& call) {
  launch(call.stream, kernel_name(call), duration_ns(call));
}

// One kernel per stream, in the order streams first appear: the common name if all its calls
// share one, else ncclDevKernel_Generic; the durations add up.
void fixed_time_issue_group(const std::vector<Call>& calls) {
  std::vector<bool> done(calls.size(), false);
  for (size_t i = 0; i < calls.size(); ++i) {
    if (done[i]) continue;
    std::string name = kernel_name(calls[i]);
    uint64_t duration = 0;
    for (size_t j = i; j < calls.size(); ++j) {
      if (done[j] || calls[j].stream != calls[i].stream) continue;
      done[j] = true;
      duration += duration_ns(calls[j]);
      if (kernel_name(calls[j]) != name) name = std::string("ncclDevKernel_Generic") + kArgs;
    }
    launch(calls[i].stream, name, duration);
  }
}

}  // namespace c3::sim::nccl

extern "C" C3FAKE_API int c3fake_nccl_launch_count(void) {
  return c3::sim::nccl::g_launches.load();
}
