// HTA 0.5.0's critical path of a step (hta_path.h), rebuilt from the rules of its
// critical_path_analysis (hta/analyzers/critical_path_analysis.py, hta/common/call_stack.py,
// hta/analyzers/trace_counters.py and its trace loader), written here from their description in
// docs/analyze.md "HTA's critical path": which events it keeps, its nodes, its five edge kinds
// and their weights, and networkx's dag_longest_path, including the order ties are broken in.
#include "c3/analyzer/why/hta_path.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "c3/importer/importer.h"

namespace c3::analyzer {
namespace {

enum class Cat : uint8_t {
  cpu_op,
  cuda_runtime,
  cuda_driver,
  kernel,
  gpu_memcpy,
  gpu_memset,
  cuda_sync,
  other
};

Cat cat_of(std::string_view c) {
  if (c == "cpu_op") return Cat::cpu_op;
  if (c == "cuda_runtime") return Cat::cuda_runtime;
  if (c == "cuda_driver") return Cat::cuda_driver;
  if (c == "kernel") return Cat::kernel;
  if (c == "gpu_memcpy") return Cat::gpu_memcpy;
  if (c == "gpu_memset") return Cat::gpu_memset;
  if (c == "cuda_sync") return Cat::cuda_sync;
  return Cat::other;  // annotations, python functions, ...: they shape the nesting only
}

struct Ev {
  int64_t idx = 0;  // HTA's ev_idx: the position in traceEvents
  Cat cat = Cat::other;
  int32_t name = 0;
  double ts = 0, dur = 0;
  int64_t pid = 0, tid = 0, stream = -1, corr = -1, wait_stream = -1, wait_record = -1;
  bool gpu = false;         // HTA's GPU partition
  int64_t index_corr = -1;  // the partner's idx (the launch call's, or the GPU event's)
  int32_t node = -1;        // its start node (end: node + 1), -1: none
  double end() const { return ts + dur; }
};

enum class EdgeKind : uint8_t { op, dependency, launch, kernel_kernel, sync };

struct Edge {
  int32_t u = 0, v = 0;
  double raw = 0;  // HTA's CPEdge weight
  double w = 0;    // networkx's weight attribute (raw, or 0 for raw <= -1)
  EdgeKind kind = EdgeKind::op;
};

// Edges past this (a hostile trace): the graph is refused rather than built. Other edges number
// at most a few per event.
constexpr size_t kMaxEdges = size_t{1} << 26;

const std::set<std::string_view> kBlocking = {"cudaDeviceSynchronize",
                                              "cudaStreamSynchronize",
                                              "cudaEventQuery",
                                              "cudaEventSynchronize",
                                              "cudaMemcpy",
                                              "cudaMemcpyAsync"};
const std::set<std::string_view> kLaunches = {"cudaLaunchKernel", "cudaLaunchKernelExC",
                                              "cuLaunchKernel", "cudaMemcpyAsync",
                                              "cudaMemsetAsync"};

bool is_nccl(std::string_view name) {
  static constexpr std::string_view kNccl = "nccl";
  auto it = std::search(name.begin(), name.end(), kNccl.begin(), kNccl.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == b;
  });
  return it != name.end();
}

class Graph {
 public:
  // Two nodes (start, end) per event, in the order given.
  void add_nodes(Ev& e) {
    e.node = static_cast<int32_t>(node_ts_.size());
    node_ts_.push_back(e.ts);
    node_ts_.push_back(e.end());
    node_ev_.push_back(&e);
    node_ev_.push_back(&e);
  }
  // HTA's _add_edge_helper: the weight is the time between the nodes, 0 for dependencies and
  // synchronizations or when asked; an edge added again takes the new attributes, in place.
  void add(int32_t u, int32_t v, EdgeKind k, bool zero = false) {
    double raw = 0;
    if (k != EdgeKind::dependency && k != EdgeKind::sync && !zero) raw = node_ts_[v] - node_ts_[u];
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(u)) << 32) | static_cast<uint32_t>(v);
    Edge e{u, v, raw, raw <= -1 ? 0.0 : raw, k};
    auto [it, fresh] = index_.try_emplace(key, edges_.size());
    if (fresh) {
      edges_.push_back(e);
    } else {
      edges_[it->second] = e;
    }
  }
  size_t nodes() const { return node_ts_.size(); }
  const std::vector<Edge>& edges() const { return edges_; }
  const Ev& event_of(int32_t node) const { return *node_ev_[static_cast<size_t>(node)]; }

 private:
  std::vector<double> node_ts_;
  std::vector<const Ev*> node_ev_;
  std::vector<Edge> edges_;
  std::unordered_map<uint64_t, size_t> index_;
};

// The nesting of one CPU thread's events (HTA's call stack): starts and ends sorted (at one
// time: ends before starts, longer starts first, shorter ends first, then by event index), and
// an end pops whatever is on top, so an event overlapping the one before without nesting in it
// becomes its child. Returns the children of each event (`roots`: the top level), in start order.
void nest(const std::vector<Ev*>& thread, std::vector<std::vector<Ev*>>& children,
          std::vector<Ev*>& roots, std::unordered_map<const Ev*, size_t>& slot) {
  struct Rec {
    double t;
    bool start;
    Ev* e;
  };
  std::vector<Rec> recs;
  recs.reserve(2 * thread.size());
  for (Ev* e : thread) {
    recs.push_back({e->ts, true, e});
    recs.push_back({e->ts + std::max(e->dur, 0.0), false, e});
  }
  std::sort(recs.begin(), recs.end(), [](const Rec& a, const Rec& b) {
    if (a.e == b.e) return a.start && !b.start;
    if (a.t != b.t) return a.t < b.t;
    const double da = std::max(a.e->dur, 0.0), db = std::max(b.e->dur, 0.0);
    if (da == 0 && db == 0) return a.e->idx < b.e->idx;
    if (a.start != b.start) {
      if (da > 0 && db > 0) return !a.start;  // the end first
      return a.start;                         // one of no duration: the start first
    }
    if (a.start) return da != db ? da > db : a.e->idx < b.e->idx;
    return da != db ? da < db : a.e->idx > b.e->idx;
  });
  std::vector<Ev*> stack;
  for (const Rec& r : recs) {
    if (r.start) {
      if (stack.empty()) {
        roots.push_back(r.e);
      } else {
        children[slot.at(stack.back())].push_back(r.e);
      }
      stack.push_back(r.e);
    } else if (!stack.empty()) {
      stack.pop_back();
    }
  }
}

}  // namespace

HtaPath hta_critical_path(const std::string& kineto_file, int64_t instance,
                          const std::string& annotation) {
  HtaPath out;
  out.input = kineto_file;
  out.annotation = annotation;
  out.instance = instance;
  // Events: complete ones with a category other than "Trace" (HTA drops the rest, flows too).
  std::vector<Ev> all;
  std::vector<std::string> names;
  std::unordered_map<std::string, int32_t> name_index;
  bool any_float = false;
  importer::read_kineto_events(kineto_file, [&](const importer::KinetoEvent& k) {
    if (k.cat == "Trace") return;
    any_float = any_float || k.ts_float;
    if (!k.has_ts) return;
    Ev e;
    e.idx = k.index;
    e.cat = cat_of(k.cat);
    auto [it, fresh] =
        name_index.try_emplace(std::string(k.name), static_cast<int32_t>(names.size()));
    if (fresh) names.emplace_back(k.name);
    e.name = it->second;
    e.ts = k.ts;
    e.dur = k.dur;
    e.pid = k.pid;
    e.tid = k.tid;
    e.stream = k.stream;
    e.corr = k.correlation;
    e.wait_stream = k.wait_on_stream;
    e.wait_record = k.wait_on_record;
    all.push_back(e);
  });
  // HTA's rounding: once any timestamp is fractional, starts up and ends down to whole
  // microseconds (in double arithmetic, as pandas does).
  if (any_float) {
    out.rounded = true;
    for (Ev& e : all) {
      const double end = std::floor(e.ts + e.dur);
      e.ts = std::ceil(e.ts);
      e.dur = end - e.ts;
    }
  }
  auto name = [&](const Ev& e) -> const std::string& { return names[static_cast<size_t>(e.name)]; };
  auto is_step_name = [&](const std::string& n) { return n.find("ProfilerStep") != n.npos; };
  for (Ev& e : all) {
    e.gpu = (e.stream >= 0 && e.corr >= 0) || name(e) == "Event Sync" || name(e) == "Context Sync";
  }
  // The last ProfilerStep is left out (HTA's default include_last_profiler_step=False) when the
  // trace names two or more: CPU events from its start on, and GPU events whose correlation no
  // CPU event kept has. The rows are then the GPU ones first, each part in file order.
  std::vector<Ev> rows;
  {
    size_t step_names = 0;
    for (const std::string& n : names) step_names += is_step_name(n) ? 1 : 0;
    if (step_names >= 2) {
      double last = -std::numeric_limits<double>::infinity();
      for (const Ev& e : all) {
        if (!e.gpu && is_step_name(name(e))) last = std::max(last, e.ts);
      }
      std::set<int64_t> kept_corr;
      for (const Ev& e : all) {
        if (!e.gpu && e.ts < last) kept_corr.insert(e.corr);
      }
      for (const Ev& e : all) {
        if (e.gpu && kept_corr.count(e.corr) != 0) rows.push_back(e);
      }
      for (const Ev& e : all) {
        if (!e.gpu && e.ts < last) rows.push_back(e);
      }
    } else {
      rows = std::move(all);
    }
  }
  // Each launch call and its GPU event know each other's index (the last one when several GPU
  // events share a correlation).
  std::unordered_map<int64_t, size_t> by_idx;
  for (size_t i = 0; i < rows.size(); ++i) by_idx.emplace(rows[i].idx, i);
  {
    std::unordered_map<int64_t, std::vector<size_t>> cpu_by_corr, gpu_by_corr;
    for (size_t i = 0; i < rows.size(); ++i) {
      Ev& e = rows[i];
      e.index_corr = std::min<int64_t>(e.corr, 0);
      if (e.corr < 0) continue;
      (e.gpu ? gpu_by_corr : cpu_by_corr)[e.corr].push_back(i);
    }
    for (const auto& [c, cpus] : cpu_by_corr) {
      auto g = gpu_by_corr.find(c);
      if (g == gpu_by_corr.end()) continue;
      for (size_t ci : cpus) {
        for (size_t gi : g->second) {
          rows[ci].index_corr = rows[gi].idx;
          rows[gi].index_corr = rows[ci].idx;
        }
      }
    }
  }
  auto row_of = [&](int64_t idx) -> Ev* {
    auto it = by_idx.find(idx);
    return it == by_idx.end() ? nullptr : &rows[it->second];
  };
  // The step: the instance-th row whose name contains the annotation, in row order.
  const Ev* step = nullptr;
  {
    int64_t seen = 0;
    for (const Ev& e : rows) {
      if (name(e).find(annotation) == std::string::npos) continue;
      if (seen++ == instance) {
        step = &e;
        break;
      }
    }
  }
  if (step == nullptr) {
    throw std::invalid_argument("'" + kineto_file + "' has no annotation '" + annotation +
                                "' number " + std::to_string(instance) +
                                " (HTA's instance_id, counted from 0 in file order)");
  }
  out.step = name(*step);
  out.start_us = step->ts;
  out.end_us = step->end();
  const double ws = step->ts, we = step->end();
  // The events of the step: CPU ones (stream -1) that start in it and last, GPU ones whose
  // launch call does (their own times unchecked), and every stream wait of the trace.
  auto cpu_in = [&](const Ev& e) { return e.ts >= ws && e.ts <= we && e.dur > 0; };
  std::vector<Ev*> clip;
  for (Ev& e : rows) {
    bool keep = false;
    if (e.stream == -1) {
      keep = cpu_in(e);
    } else if (name(e) == "Stream Wait Event") {
      keep = true;
    } else {
      const Ev* call = row_of(e.index_corr);
      keep = call != nullptr && call->stream == -1 && call->index_corr == e.idx && cpu_in(*call);
    }
    if (keep) clip.push_back(&e);
  }
  Graph g;
  for (Ev* e : clip) {
    if (e->cat == Cat::cpu_op || e->cat == Cat::cuda_runtime || e->cat == Cat::cuda_driver ||
        (e->stream != -1 && e->index_corr >= 0)) {
      g.add_nodes(*e);
    }
  }
  auto s_of = [](const Ev& e) { return e.node; };
  auto e_of = [](const Ev& e) { return e.node + 1; };
  // CPU threads: (pid, tid) groups of the step's events whose streams are all negative; each
  // nested on its own and walked depth first: a top-level operator follows the one before with
  // no weight, inside one the edges run from start to first child, child to child, last child
  // to end, a leaf's own time (none for a blocking call).
  {
    std::map<std::pair<int64_t, int64_t>, std::vector<Ev*>> threads;
    for (Ev* e : clip) threads[{e->pid, e->tid}].push_back(e);
    for (auto& [key, evs] : threads) {
      bool cpu = true;
      for (const Ev* e : evs) cpu = cpu && e->stream < 0;
      if (!cpu) continue;
      std::unordered_map<const Ev*, size_t> slot;
      for (size_t k = 0; k < evs.size(); ++k) slot.emplace(evs[k], k);
      std::vector<std::vector<Ev*>> children(evs.size());
      std::vector<Ev*> roots;
      nest(evs, children, roots, slot);
      int32_t last_node = -1, last_top = -1;
      int64_t depth = 0;
      auto enter = [&](const Ev& e) {
        if (e.node < 0) return;
        if (depth == 0 && last_top >= 0) g.add(last_top, s_of(e), EdgeKind::dependency);
        ++depth;
        if (last_node >= 0) g.add(last_node, s_of(e), EdgeKind::op);
        last_node = s_of(e);
      };
      auto leave = [&](const Ev& e) {
        if (e.node < 0) return;
        --depth;
        if (last_node >= 0) {
          g.add(last_node, e_of(e), EdgeKind::op, kBlocking.count(name(e)) != 0);
        }
        if (depth == 0) {
          last_node = -1;
          last_top = e_of(e);
        } else {
          last_node = e_of(e);
        }
      };
      // Depth first, without recursion (a hostile trace nests deeply).
      struct Frame {
        Ev* e;
        size_t next;
      };
      std::vector<Frame> stack;
      for (Ev* r : roots) {
        enter(*r);
        stack.push_back({r, 0});
        while (!stack.empty()) {
          Frame& f = stack.back();
          const std::vector<Ev*>& ch = children[slot.at(f.e)];
          if (f.next < ch.size()) {
            Ev* c = ch[f.next++];
            enter(*c);
            stack.push_back({c, 0});
          } else {
            leave(*f.e);
            stack.pop_back();
          }
        }
      }
    }
  }
  // Queue lengths over the whole trace (not only the step): +1 at each launch call on its GPU
  // event's stream, -1 at that event's start; a row's length is the count just after it.
  std::vector<const Ev*> launches;  // launch calls with a GPU event, in time order
  std::unordered_map<const Ev*, int64_t> queue;
  std::unordered_map<const Ev*, size_t> launch_id;
  {
    struct Step {
      double t;
      int64_t stream;
      int delta;
      const Ev* e;
    };
    std::vector<Step> steps;
    std::set<int64_t> launch_corr;
    for (const Ev& e : rows) {
      if (e.index_corr <= 0 || kLaunches.count(name(e)) == 0) continue;
      const Ev* k = row_of(e.index_corr);
      if (k == nullptr) continue;
      steps.push_back({e.ts, k->stream, +1, &e});
      launches.push_back(&e);
      launch_corr.insert(e.corr);
    }
    for (const Ev& e : rows) {
      if (e.stream != -1 && launch_corr.count(e.corr) != 0)
        steps.push_back({e.ts, e.stream, -1, &e});
    }
    std::stable_sort(steps.begin(), steps.end(),
                     [](const Step& a, const Step& b) { return a.t < b.t; });
    std::unordered_map<int64_t, int64_t> level;
    for (const Step& s : steps) queue[s.e] = (level[s.stream] += s.delta);
    std::stable_sort(launches.begin(), launches.end(),
                     [](const Ev* a, const Ev* b) { return a->ts < b->ts; });
    for (size_t k = 0; k < launches.size(); ++k) launch_id.emplace(launches[k], k);
  }
  // The cudaEventRecord a synchronization or stream wait names: the GPU event of the last
  // launch on the recording (device, stream) at or before the record call.
  std::unordered_map<int64_t, const Ev*> cpu_by_corr;
  for (const Ev& e : rows) {
    if (!e.gpu && e.corr >= 0) cpu_by_corr[e.corr] = &e;
  }
  // Launches by their GPU event's (device, stream), and by (calling thread, stream), each in
  // launch order: binary searches, not a scan per synchronization.
  std::map<std::pair<int64_t, int64_t>, std::vector<const Ev*>> by_gpu_stream;
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<const Ev*>> by_thread_stream;
  for (const Ev* l : launches) {
    const Ev* k = row_of(l->index_corr);
    if (k == nullptr) continue;
    by_gpu_stream[{k->pid, k->stream}].push_back(l);
    by_thread_stream[{l->pid, l->tid, k->stream}].push_back(l);
  }
  auto ts_less = [](double t, const Ev* l) { return t < l->ts; };
  auto recorded = [&](const Ev& sync) -> const Ev* {
    auto rec = cpu_by_corr.find(sync.wait_record);
    if (sync.wait_record < 0 || rec == cpu_by_corr.end()) return nullptr;
    auto list = by_gpu_stream.find({sync.pid, sync.wait_stream});
    if (list == by_gpu_stream.end()) return nullptr;
    auto it = std::upper_bound(list->second.begin(), list->second.end(), rec->second->ts, ts_less);
    return it == list->second.begin() ? nullptr : row_of((*std::prev(it))->index_corr);
  };
  // GPU events in time order (synchronizations by their end): each one's own time, then the
  // edge that released it: its launch call's start when the stream was free and nothing
  // launched before it waited, else the previous event on its stream (streams by number only).
  {
    std::vector<Ev*> gpu;
    for (Ev* e : clip) {
      if ((e->stream != -1 || name(*e) == "Event Sync" || name(*e) == "Context Sync") &&
          e->index_corr >= 0) {
        gpu.push_back(e);
      }
    }
    std::stable_sort(gpu.begin(), gpu.end(), [](const Ev* a, const Ev* b) {
      const double ta = a->cat == Cat::cuda_sync ? a->end() : a->ts;
      const double tb = b->cat == Cat::cuda_sync ? b->end() : b->ts;
      return ta < tb;
    });
    std::map<int64_t, int32_t> last_node;  // stream -> end node of its last GPU event
    std::vector<int64_t> last_order;       // streams in the order first seen (for Context Sync)
    std::unordered_map<const Ev*, const Ev*> waits;  // kernel -> the event it waits for
    for (Ev* k : gpu) {
      const Ev* call = row_of(k->index_corr);
      if (k->cat == Cat::cuda_sync) {
        if (call == nullptr || call->node < 0) continue;
        const std::string& n = name(*k);
        if (n == "Context Sync") {
          // An edge from every stream: a hostile trace of many streams and device syncs would
          // make it quadratic, so the graph is bounded.
          if (g.edges().size() + last_order.size() > kMaxEdges) {
            out.refused = "more than " + std::to_string(kMaxEdges) +
                          " edges (device synchronizations times streams)";
            return out;
          }
          for (int64_t s : last_order) g.add(last_node.at(s), e_of(*call), EdgeKind::sync);
        } else if (n == "Stream Sync") {
          auto it = last_node.find(k->stream);
          if (it != last_node.end()) g.add(it->second, e_of(*call), EdgeKind::sync);
        } else if (n == "Event Sync" || n == "Stream Wait Event") {
          const Ev* src = recorded(*k);
          if (src == nullptr) continue;
          if (n == "Event Sync") {
            if (src->node >= 0) g.add(e_of(*src), e_of(*call), EdgeKind::sync);
          } else {
            // The next launch of the waiting call's thread onto the waiting stream.
            auto list = by_thread_stream.find({call->pid, call->tid, k->stream});
            if (list != by_thread_stream.end()) {
              auto it = std::lower_bound(list->second.begin(), list->second.end(), call->ts,
                                         [](const Ev* l, double t) { return l->ts < t; });
              if (it != list->second.end()) waits[row_of((*it)->index_corr)] = src;
            }
          }
        }
        continue;
      }
      if (k->node < 0) continue;
      g.add(s_of(*k), e_of(*k), EdgeKind::op);
      const Ev* src = nullptr;
      if (auto w = waits.find(k); w != waits.end()) {
        if (w->second->node >= 0) {
          src = w->second;
          g.add(e_of(*src), s_of(*k), EdgeKind::sync);
        }
        waits.erase(w);
      }
      auto prev = last_node.find(k->stream);
      const double prev_t = prev != last_node.end() ? g.event_of(prev->second).end() : 0;
      auto q = [&](const Ev* e) {
        auto it = e != nullptr ? queue.find(e) : queue.end();
        return it == queue.end() ? int64_t{-1} : it->second;
      };
      if (call != nullptr && call->node >= 0 && q(call) == 1 && q(k) == 0 &&
          (prev == last_node.end() || prev_t < call->ts) &&
          (src == nullptr || src->end() < call->ts)) {
        g.add(s_of(*call), s_of(*k), EdgeKind::launch);
      } else if (prev != last_node.end() && (src == nullptr || src->end() < prev_t)) {
        g.add(prev->second, s_of(*k), EdgeKind::kernel_kernel);
      }
      if (prev == last_node.end()) last_order.push_back(k->stream);
      last_node[k->stream] = e_of(*k);
    }
  }
  // networkx holds the nodes its edges named (a node no edge touches is not in HTA's graph), in
  // the order they first appeared.
  const size_t all_nodes = g.nodes();
  std::vector<size_t> nodes;
  {
    std::vector<uint8_t> seen(all_nodes, 0);
    for (const Edge& e : g.edges()) {
      for (const int32_t x : {e.u, e.v}) {
        if (seen[static_cast<size_t>(x)] == 0) {
          seen[static_cast<size_t>(x)] = 1;
          nodes.push_back(static_cast<size_t>(x));
        }
      }
    }
  }
  out.nodes = static_cast<int64_t>(nodes.size());
  out.edges = static_cast<int64_t>(g.edges().size());
  // What HTA refuses: a synchronization within one stream.
  for (const Edge& e : g.edges()) {
    const Ev& a = g.event_of(e.u);
    const Ev& b = g.event_of(e.v);
    if (e.kind == EdgeKind::sync && a.stream == b.stream && a.stream != -1) {
      out.refused = "a synchronization edge within stream " + std::to_string(a.stream);
      return out;
    }
  }
  // networkx's dag_longest_path: nodes in topological order (generation by generation, each in
  // insertion order), a node's distance the best of its predecessors' (the first best in edge
  // order; below 0: the path starts there), the path ending at the first node of the largest.
  const size_t n = all_nodes;
  std::vector<std::vector<size_t>> succ(n), pred(n);
  for (size_t k = 0; k < g.edges().size(); ++k) {
    succ[static_cast<size_t>(g.edges()[k].u)].push_back(k);
    pred[static_cast<size_t>(g.edges()[k].v)].push_back(k);
  }
  std::vector<size_t> indegree(n), order, gen;
  order.reserve(n);
  for (size_t v : nodes) {
    indegree[v] = pred[v].size();
    if (indegree[v] == 0) gen.push_back(v);
  }
  while (!gen.empty()) {
    std::vector<size_t> next;
    for (size_t v : gen) {
      order.push_back(v);
      for (size_t k : succ[v]) {
        const auto c = static_cast<size_t>(g.edges()[k].v);
        if (--indegree[c] == 0) next.push_back(c);
      }
    }
    gen = std::move(next);
  }
  if (order.size() != nodes.size()) {
    out.refused = "a cycle";
    return out;
  }
  std::vector<double> dist(n, 0);
  std::vector<int64_t> via(n, -1);  // the edge the best distance came through, -1: a start
  for (size_t v : order) {
    double best = 0;
    int64_t edge = -1;
    bool any = false;
    for (size_t k : pred[v]) {
      const double d = dist[static_cast<size_t>(g.edges()[k].u)] + g.edges()[k].w;
      if (!any || d > best) {
        best = d;
        edge = static_cast<int64_t>(k);
        any = true;
      }
    }
    if (any && best >= 0) {
      dist[v] = best;
      via[v] = edge;
    }
  }
  size_t end = n;  // none
  for (size_t v : order) {
    if (end == n || dist[v] > dist[end]) end = v;
  }
  if (end == n) return out;
  out.longest_us = dist[end];
  for (size_t v = end; via[v] >= 0;) {
    const Edge& e = g.edges()[static_cast<size_t>(via[v])];
    ++out.path_edges;
    out.length_us += e.raw;
    const Ev& dest = g.event_of(e.v);
    switch (e.kind) {
      case EdgeKind::launch:
        out.launch_us += e.raw;
        break;
      case EdgeKind::kernel_kernel:
        out.kernel_kernel_us += e.raw;
        break;
      case EdgeKind::op:
        if (dest.stream < 0) {
          out.cpu_us += e.raw;
        } else if (is_nccl(name(dest))) {
          out.communication_us += e.raw;
        } else {
          out.compute_us += e.raw;
        }
        break;
      case EdgeKind::dependency:
      case EdgeKind::sync:
        break;
    }
    v = static_cast<size_t>(e.u);
  }
  return out;
}

}  // namespace c3::analyzer
