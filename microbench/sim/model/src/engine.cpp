#include "c3/sim/model/engine.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <stdexcept>

namespace c3::sim::model {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Resources of one GPU, in bytes per nanosecond.
enum Res { kHbm, kLinkOut, kLinkIn, kCe, kPcie, kResPerGpu };

struct StreamItem {
  enum class Type { part, record, wait } type = Type::part;
  OpId op = -1;
  int part = 0;
  EventId event = -1;
  double launch = 0;
};

struct StreamState {
  int gpu = 0;
  int priority = 0;
  int partition = 0;
  std::deque<StreamItem> queue;
};

struct PartState {
  StreamId stream = -1;
  double launch = 0;
  bool enqueued = false;
  bool ready = false;
  double ready_time = 0;
  double start = -1;             // first SMs granted (ready_time for parts without SMs)
  std::vector<uint16_t> sm_ids;  // SMs (of its stream's partition) it occupies; kept to the end
  double sm_alloc() const { return static_cast<double>(sm_ids.size()); }
};

enum class OpPhase { waiting, latency, fluid, done };

struct OpState {
  OpDesc desc;
  std::vector<PartState> parts;
  int ready_parts = 0;
  OpPhase phase = OpPhase::waiting;
  double latency_end = 0;
  double remaining = 1.0;  // fraction of the fluid work left
  double rate = 0;         // fraction per ns in the current allocation
  double cap = 0;
  // Bytes per unit of progress on each resource, as (resource index, bytes).
  std::vector<std::pair<int, double>> uses;
};

}  // namespace

struct Engine::Impl {
  const NodeSpec& spec;
  std::vector<double> capacity;  // kResPerGpu per GPU
  // A partition is a range of one GPU's SMs: partition g (< gpus) is GPU g's whole set (the
  // primary context); green contexts are subranges, and kernels of every partition share the
  // physical SMs.
  std::vector<double> partition_sms;  // SMs of each partition
  std::vector<int> partition_first;   // its first SM index on its GPU
  // Occupied fraction of each SM of each GPU (sum of the resident kernels' occupancy), and
  // whether SMs were freed or parts became ready there since the last placement.
  std::vector<std::vector<double>> sm_used;
  std::vector<char> gpu_dirty;
  std::vector<int> partition_gpu;
  std::vector<StreamState> streams;
  std::vector<std::unique_ptr<OpState>> ops;  // reset once done
  std::vector<double> op_end;                 // completion time, -1 while running
  std::vector<double> event_time;             // -1 until reached
  std::vector<OpId> active;                   // ops with a ready part, not done
  double launch_latency;

  explicit Impl(const NodeSpec& s) : spec(s) {
    const GpuSpec& g = s.gpu;
    capacity.assign(static_cast<size_t>(s.gpus) * kResPerGpu, 0.0);
    for (int i = 0; i < s.gpus; ++i) {
      double* c = &capacity[static_cast<size_t>(i) * kResPerGpu];
      c[kHbm] = g.hbm_bytes_per_s * g.hbm_efficiency / 1e9;
      c[kLinkOut] = c[kLinkIn] = g.link_total_bytes_per_s() / 1e9;
      c[kCe] = g.copy_engines * g.copy_engine_bytes_per_s / 1e9;
      c[kPcie] = g.pcie_bytes_per_s / 1e9;
      partition_sms.push_back(g.sms);  // partition i is GPU i's default partition
      partition_gpu.push_back(i);
      partition_first.push_back(0);
      sm_used.emplace_back(static_cast<size_t>(g.sms), 0.0);
      gpu_dirty.push_back(0);
    }
    launch_latency = g.launch_latency_ns;
  }

  OpState& op(OpId id) {
    if (id < 0 || static_cast<size_t>(id) >= ops.size() || !ops[static_cast<size_t>(id)]) {
      throw std::logic_error("sim engine: unknown or finished op " + std::to_string(id));
    }
    return *ops[static_cast<size_t>(id)];
  }

  static int res(int gpu, Res r) { return gpu * kResPerGpu + r; }

  void prepare_uses(OpState& o) {
    o.uses.clear();
    for (const auto& p : o.desc.parts) {
      auto add = [&](Res r, double bytes) {
        if (bytes > 0) o.uses.emplace_back(res(p.gpu, r), bytes);
      };
      add(kHbm, p.hbm_bytes);
      add(kLinkOut, p.link_out_bytes);
      add(kLinkIn, p.link_in_bytes);
      add(kCe, p.ce_bytes);
      add(kPcie, p.pcie_bytes);
      if (p.peer_gpu >= 0 && p.peer_bytes > 0) {
        o.uses.emplace_back(res(p.peer_gpu, kLinkIn), p.peer_bytes);
        o.uses.emplace_back(res(p.peer_gpu, kHbm), p.peer_bytes);
      }
    }
  }
};

Engine::Engine(const NodeSpec& spec) : spec_(spec), impl_(new Impl(spec_)) {
  if (spec_.gpus < 1) throw std::invalid_argument("sim engine: a node needs at least one GPU");
}

Engine::~Engine() {
  delete impl_;
}

int Engine::add_partition(int gpu, double sms, int first_sm) {
  auto& im = *impl_;
  const double whole = std::round(sms);
  const double all = gpu >= 0 && gpu < spec_.gpus ? im.partition_sms[static_cast<size_t>(gpu)] : 0;
  const double first = first_sm < 0 ? all - whole : first_sm;
  if (gpu < 0 || gpu >= spec_.gpus || whole < 1 || whole >= all || first < 0 ||
      first + whole > all) {
    throw std::invalid_argument("sim engine: cannot make a partition of " + std::to_string(sms) +
                                " SMs from SM " + std::to_string(first_sm) + " of GPU " +
                                std::to_string(gpu));
  }
  im.partition_sms.push_back(whole);
  im.partition_gpu.push_back(gpu);
  im.partition_first.push_back(static_cast<int>(first));
  return static_cast<int>(im.partition_sms.size() - 1);
}

StreamId Engine::add_stream(int gpu, int priority, int partition) {
  auto& im = *impl_;
  if (gpu < 0 || gpu >= spec_.gpus)
    throw std::invalid_argument("sim engine: no GPU " + std::to_string(gpu));
  StreamState s;
  s.gpu = gpu;
  s.priority = priority;
  s.partition = partition < 0 ? gpu : partition;
  if (im.partition_gpu[static_cast<size_t>(s.partition)] != gpu) {
    throw std::invalid_argument("sim engine: partition belongs to another GPU");
  }
  im.streams.push_back(std::move(s));
  return static_cast<StreamId>(im.streams.size() - 1);
}

OpId Engine::create(OpDesc desc) {
  auto& im = *impl_;
  auto o = std::make_unique<OpState>();
  o->parts.resize(desc.parts.size());
  o->desc = std::move(desc);
  im.prepare_uses(*o);
  im.ops.push_back(std::move(o));
  im.op_end.push_back(-1);
  return static_cast<OpId>(im.ops.size() - 1);
}

void Engine::enqueue(OpId id, int part, StreamId stream, double launch_ns) {
  auto& im = *impl_;
  OpState& o = im.op(id);
  if (part < 0 || static_cast<size_t>(part) >= o.parts.size() ||
      o.parts[static_cast<size_t>(part)].enqueued) {
    throw std::logic_error("sim engine: bad or repeated part " + std::to_string(part));
  }
  if (stream < 0 || static_cast<size_t>(stream) >= im.streams.size()) {
    throw std::logic_error("sim engine: unknown stream");
  }
  if (im.streams[static_cast<size_t>(stream)].gpu != o.desc.parts[static_cast<size_t>(part)].gpu) {
    throw std::logic_error("sim engine: part enqueued on another GPU's stream");
  }
  run_until(launch_ns);
  PartState& p = o.parts[static_cast<size_t>(part)];
  p.enqueued = true;
  p.stream = stream;
  p.launch = launch_ns;
  im.streams[static_cast<size_t>(stream)].queue.push_back(
      {StreamItem::Type::part, id, part, -1, launch_ns});
}

OpId Engine::submit(OpDesc desc, StreamId stream, double launch_ns) {
  OpId id = create(std::move(desc));
  enqueue(id, 0, stream, launch_ns);
  return id;
}

EventId Engine::record(StreamId stream, double launch_ns) {
  auto& im = *impl_;
  run_until(launch_ns);
  im.event_time.push_back(-1);
  EventId ev = static_cast<EventId>(im.event_time.size() - 1);
  im.streams.at(static_cast<size_t>(stream))
      .queue.push_back({StreamItem::Type::record, -1, 0, ev, launch_ns});
  return ev;
}

void Engine::wait(StreamId stream, EventId event, double launch_ns) {
  auto& im = *impl_;
  run_until(launch_ns);
  if (event < 0 || static_cast<size_t>(event) >= im.event_time.size()) {
    throw std::logic_error("sim engine: unknown event");
  }
  im.streams.at(static_cast<size_t>(stream))
      .queue.push_back({StreamItem::Type::wait, -1, 0, event, launch_ns});
}

double Engine::event_time(EventId event) const {
  return impl_->event_time.at(static_cast<size_t>(event));
}

// The body of the simulation: repeated (admit, allocate, advance) until `stop` says so.
namespace {

struct Stepper {
  Engine::Impl& im;
  double& now;
  int64_t& completed;
  int64_t& steps;
  const std::function<void(const CompletedOp&)>& on_complete;

  void admit_all(double& next_admit) {
    next_admit = kInf;
    bool progress = true;
    while (progress) {
      progress = false;
      for (size_t s = 0; s < im.streams.size(); ++s) {
        auto& st = im.streams[s];
        while (!st.queue.empty()) {
          StreamItem& head = st.queue.front();
          if (head.type == StreamItem::Type::record) {
            if (head.launch > now) {
              next_admit = std::min(next_admit, head.launch);
              break;
            }
            im.event_time[static_cast<size_t>(head.event)] = now;
            st.queue.pop_front();
            progress = true;
            continue;
          }
          if (head.type == StreamItem::Type::wait) {
            if (im.event_time[static_cast<size_t>(head.event)] < 0) break;
            st.queue.pop_front();
            progress = true;
            continue;
          }
          OpState& o = im.op(head.op);
          PartState& p = o.parts[static_cast<size_t>(head.part)];
          if (p.ready) break;  // running: the stream is busy until the op completes
          const double at = head.launch + im.launch_latency;
          if (at > now) {
            next_admit = std::min(next_admit, at);
            break;
          }
          p.ready = true;
          p.ready_time = now;
          if (o.desc.parts[static_cast<size_t>(head.part)].sm_demand > 0) {
            im.gpu_dirty[static_cast<size_t>(st.gpu)] = 1;
          } else {
            p.start = now;
          }
          if (o.ready_parts++ == 0) im.active.push_back(head.op);
          // It runs once every part is ready and has its SMs (allocate()).
          progress = true;
          break;
        }
      }
    }
  }

  // Step 1 of the header comment: SMs go to ready parts that lack them, highest priority first,
  // then in the order they became ready (then launched); each takes the least occupied SMs
  // that still have room for its CTAs. Nothing is taken back from a running part.
  void place_waiting_parts() {
    struct Want {
      OpState* op;
      size_t part;
      int priority;
      double ready;
      double launch;
      OpId id;
    };
    for (size_t gpu = 0; gpu < im.sm_used.size(); ++gpu) {
      if (!im.gpu_dirty[gpu]) continue;
      im.gpu_dirty[gpu] = 0;
      std::vector<Want> wants;
      for (OpId id : im.active) {
        OpState& o = im.op(id);
        for (size_t k = 0; k < o.parts.size(); ++k) {
          PartState& p = o.parts[k];
          const PartDemand& d = o.desc.parts[k];
          if (!p.ready || d.sm_demand <= 0 || static_cast<size_t>(d.gpu) != gpu) continue;
          const auto& st = im.streams[static_cast<size_t>(p.stream)];
          if (p.sm_ids.size() >= sm_count(d, static_cast<size_t>(st.partition))) continue;
          wants.push_back({&o, k, st.priority, p.ready_time, p.launch, id});
        }
      }
      if (wants.empty()) continue;
      std::stable_sort(wants.begin(), wants.end(), [](const Want& a, const Want& b) {
        if (a.priority != b.priority) return a.priority > b.priority;
        if (a.ready != b.ready) return a.ready < b.ready;
        if (a.launch != b.launch) return a.launch < b.launch;
        if (a.id != b.id) return a.id < b.id;
        return a.part < b.part;
      });
      std::vector<double>& used = im.sm_used[gpu];
      std::vector<uint16_t> order(used.size());
      std::vector<char> mine(used.size());
      for (const Want& w : wants) {
        PartState& p = w.op->parts[w.part];
        const PartDemand& d = w.op->desc.parts[w.part];
        const double f = occupancy(d);
        const auto pi = static_cast<size_t>(im.streams[static_cast<size_t>(p.stream)].partition);
        const auto first = static_cast<size_t>(im.partition_first[pi]);
        const size_t last = first + static_cast<size_t>(im.partition_sms[pi]);
        std::fill(mine.begin(), mine.end(), 0);
        for (uint16_t i : p.sm_ids) mine[i] = 1;
        const size_t want = sm_count(d, pi);
        // Which SMs of its partition have room; only when there are more than it wants does
        // the choice (least occupied first) need a sort.
        size_t room = 0;
        for (size_t i = first; i < last; ++i) {
          if (!mine[i] && used[i] + f <= 1.0 + 1e-9) order[room++] = static_cast<uint16_t>(i);
        }
        if (room == 0) continue;
        const size_t before = p.sm_ids.size();
        if (room > want - before) {
          std::stable_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(room),
                           [&](uint16_t a, uint16_t b) { return used[a] < used[b]; });
        }
        for (size_t j = 0; j < room && p.sm_ids.size() < want; ++j) {
          used[order[j]] += f;
          p.sm_ids.push_back(order[j]);
        }
        if (before == 0 && !p.sm_ids.empty()) p.start = now;
      }
    }
  }

  static double occupancy(const PartDemand& d) {
    return d.sm_occupancy > 0 && d.sm_occupancy <= 1 ? d.sm_occupancy : 1.0;
  }
  size_t sm_count(const PartDemand& d, size_t partition) const {
    const double n = std::min(std::ceil(d.sm_demand - 1e-9), im.partition_sms[partition]);
    return static_cast<size_t>(std::max(1.0, n));
  }

  void release_sms(OpState& o) {
    for (size_t k = 0; k < o.parts.size(); ++k) {
      PartState& p = o.parts[k];
      if (p.sm_ids.empty()) continue;
      const auto gpu = static_cast<size_t>(o.desc.parts[k].gpu);
      std::vector<double>& used = im.sm_used[gpu];
      const double f = occupancy(o.desc.parts[k]);
      for (uint16_t i : p.sm_ids) {
        used[i] -= f;
        if (used[i] < 1e-9) used[i] = 0;
      }
      p.sm_ids.clear();
      im.gpu_dirty[gpu] = 1;
    }
  }

  // Step 1 (SMs) and step 2 (bandwidth) of the header comment.
  void allocate() {
    ++steps;
    place_waiting_parts();
    // An op whose parts are all ready and running (SMs granted) starts its latency, then moves.
    for (OpId id : im.active) {
      OpState& o = im.op(id);
      if (o.phase != OpPhase::waiting || o.ready_parts != static_cast<int>(o.parts.size()))
        continue;
      bool running = true;
      for (size_t k = 0; k < o.parts.size(); ++k) {
        if (o.desc.parts[k].sm_demand > 0 && o.parts[k].sm_ids.empty()) running = false;
      }
      if (!running) continue;
      if (o.desc.latency_ns > 0) {
        o.phase = OpPhase::latency;
        o.latency_end = now + o.desc.latency_ns;
      } else {
        o.phase = OpPhase::fluid;
      }
    }

    // Caps of the operations moving data now.
    std::vector<OpState*> fluid;
    for (OpId id : im.active) {
      OpState& o = im.op(id);
      o.rate = 0;
      if (o.phase != OpPhase::fluid) continue;
      double cap = kInf;
      for (size_t k = 0; k < o.parts.size(); ++k) {
        const PartDemand& d = o.desc.parts[k];
        const double sms = o.parts[k].sm_alloc();
        if (d.sm_work > 0) cap = std::min(cap, sms / d.sm_work);
        if (d.sm_driven_bytes > 0 && d.bytes_per_sm_ns > 0) {
          cap = std::min(cap, sms * d.bytes_per_sm_ns / d.sm_driven_bytes);
        }
        if (d.stream_bytes > 0 && d.stream_bytes_per_ns > 0) {
          cap = std::min(cap, d.stream_bytes_per_ns / d.stream_bytes);
        }
      }
      for (const auto& [r, bytes] : o.uses)
        cap = std::min(cap, im.capacity[static_cast<size_t>(r)] / bytes);
      o.cap = cap;
      fluid.push_back(&o);
    }

    // Bandwidth: max-min fair by water-filling. Every op may draw up to a common level L
    // (bytes/ns) on each resource it uses, i.e. run at min(cap, L / its largest per-progress byte
    // count); L rises until the op reaches its cap or one of its resources saturates, and the
    // op is frozen there. Ops that need less than a fair share get all they need.
    std::vector<double> residual = im.capacity;
    struct Filling {
      OpState* op;
      double heaviest;  // largest bytes per unit progress over its resources
    };
    std::vector<Filling> unfrozen;
    for (OpState* o : fluid) {
      double heaviest = 0;
      for (const auto& [r, bytes] : o->uses) heaviest = std::max(heaviest, bytes);
      if (o->cap == kInf) {
        o->rate = kInf;  // moves nothing and computes nothing: done at once
      } else if (heaviest == 0) {
        o->rate = o->cap;  // limited by its SMs alone
      } else if (o->cap > 0) {
        unfrozen.push_back({o, heaviest});
      }
    }
    std::vector<double> slope(residual.size());
    while (!unfrozen.empty()) {
      // Load on r at level L: frozen load + L * sum(bytes_r / heaviest) over unfrozen users.
      std::fill(slope.begin(), slope.end(), 0.0);
      double level = kInf;
      for (const Filling& f : unfrozen) {
        level = std::min(level, f.op->cap * f.heaviest);
        for (const auto& [r, bytes] : f.op->uses)
          slope[static_cast<size_t>(r)] += bytes / f.heaviest;
      }
      for (size_t r = 0; r < slope.size(); ++r) {
        if (slope[r] > 0) level = std::min(level, std::max(0.0, residual[r]) / slope[r]);
      }
      std::vector<bool> saturated(slope.size(), false);
      for (size_t r = 0; r < slope.size(); ++r) {
        saturated[r] = slope[r] > 0 && residual[r] - level * slope[r] <= 1e-12 * im.capacity[r];
      }
      std::vector<Filling> rest;
      for (const Filling& f : unfrozen) {
        bool freeze = f.op->cap * f.heaviest <= level * (1 + 1e-12);
        for (const auto& [r, bytes] : f.op->uses)
          freeze = freeze || saturated[static_cast<size_t>(r)];
        if (freeze) {
          f.op->rate = std::min(f.op->cap, level / f.heaviest);
          for (const auto& [r, bytes] : f.op->uses)
            residual[static_cast<size_t>(r)] -= f.op->rate * bytes;
        } else {
          rest.push_back(f);
        }
      }
      if (rest.size() == unfrozen.size()) {  // numerical safety: nothing froze
        for (const Filling& f : rest) f.op->rate = std::min(f.op->cap, level / f.heaviest);
        break;
      }
      unfrozen.swap(rest);
    }
  }

  // The next time something changes, given the current allocation.
  double next_change(double next_admit) const {
    double t = next_admit;
    for (OpId id : im.active) {
      const OpState& o = *im.ops[static_cast<size_t>(id)];
      if (o.phase == OpPhase::latency) t = std::min(t, o.latency_end);
      if (o.phase == OpPhase::fluid) {
        if (o.rate == kInf)
          t = std::min(t, now);
        else if (o.rate > 0)
          t = std::min(t, now + o.remaining / o.rate);
      }
    }
    return t;
  }

  // Moves time to `t` (no event strictly before it) and finishes what ends there.
  void advance(double t) {
    const double dt = t - now;
    for (OpId id : im.active) {
      OpState& o = im.op(id);
      if (o.phase == OpPhase::fluid && o.rate != kInf && o.rate > 0) o.remaining -= o.rate * dt;
    }
    now = t;
    std::vector<OpId> still;
    still.reserve(im.active.size());
    for (OpId id : im.active) {
      OpState& o = im.op(id);
      if (o.phase == OpPhase::latency && o.latency_end <= now) o.phase = OpPhase::fluid;
      // Rounding leaves a sliver of work at the completion time it was scheduled for.
      const bool done = o.phase == OpPhase::fluid && (o.rate == kInf || o.remaining <= 1e-9 ||
                                                      (o.rate > 0 && o.remaining / o.rate <= 1e-3));
      if (!done) {
        still.push_back(id);
        continue;
      }
      finish(id, o);
    }
    im.active.swap(still);
  }

  void finish(OpId id, OpState& o) {
    o.phase = OpPhase::done;
    CompletedOp c;
    c.id = id;
    c.desc = &o.desc;
    release_sms(o);
    for (size_t k = 0; k < o.parts.size(); ++k) {
      const PartState& p = o.parts[k];
      c.parts.push_back(
          {o.desc.parts[k].gpu, p.stream, p.start >= 0 ? p.start : p.ready_time, now});
      auto& q = im.streams[static_cast<size_t>(p.stream)].queue;
      // The op is at the head of each of its streams.
      if (!q.empty() && q.front().type == StreamItem::Type::part && q.front().op == id)
        q.pop_front();
    }
    im.op_end[static_cast<size_t>(id)] = now;
    ++completed;
    if (on_complete) on_complete(c);
    im.ops[static_cast<size_t>(id)].reset();
  }

  // Runs until `stop()` holds or nothing is left that can happen; `limit` bounds time.
  template <class Stop>
  void run(double limit, Stop stop) {
    for (;;) {
      if (stop()) return;
      double next_admit = kInf;
      admit_all(next_admit);
      if (stop()) return;
      allocate();
      const double t = next_change(next_admit);
      if (t == kInf) return;  // nothing can progress (idle or deadlocked)
      if (t > limit) {
        // Progress up to the limit without crossing an event.
        const double dt = limit - now;
        if (dt > 0) {
          for (OpId id : im.active) {
            OpState& o = im.op(id);
            if (o.phase == OpPhase::fluid && o.rate > 0 && o.rate != kInf)
              o.remaining -= o.rate * dt;
          }
          now = limit;
        }
        return;
      }
      advance(std::max(t, now));
    }
  }
};

}  // namespace

void Engine::run_until(double t) {
  if (t <= now_) return;
  Stepper s{*impl_, now_, completed_, steps_, on_complete_};
  s.run(t, [] { return false; });
  if (now_ < t) now_ = t;
}

double Engine::run_until_done(OpId op) {
  auto& im = *impl_;
  if (op < 0 || static_cast<size_t>(op) >= im.op_end.size())
    throw std::logic_error("sim engine: unknown op");
  Stepper s{im, now_, completed_, steps_, on_complete_};
  s.run(kInf, [&] { return im.op_end[static_cast<size_t>(op)] >= 0; });
  return im.op_end[static_cast<size_t>(op)];
}

double Engine::run_until_event(EventId event) {
  auto& im = *impl_;
  Stepper s{im, now_, completed_, steps_, on_complete_};
  s.run(kInf, [&] { return im.event_time.at(static_cast<size_t>(event)) >= 0; });
  return im.event_time.at(static_cast<size_t>(event));
}

double Engine::run_until_idle() {
  auto& im = *impl_;
  Stepper s{im, now_, completed_, steps_, on_complete_};
  s.run(kInf, [] { return false; });
  return now_;
}

}  // namespace c3::sim::model
