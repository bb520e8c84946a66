// The critical path of a step (docs/metrics.md "Why a step takes as long as it does"; docs/
// analyze.md "Critical path"): walked back from the step's end, each node handing the time to
// whatever it waited for last (the binding dependency): an operation's start waits for the
// previous operation of its stream or for its launch call, a launch call for the host's previous
// call, and a collective's end for the last rank's arrival. The map walks each rank's steps and
// cuts the walk at collectives into chains (PathChain); the reduce joins the ranks' chains at
// the matched collectives (path_join.h), so a step's graph never needs every rank's activities
// in one place. Every edge's weight is the observed time between its nodes, so a path's length
// is the time it spans; what the path says is where that time went.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "c3/analyzer/metrics/intervals.h"
#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

// Where the time on a path went.
enum class PathPart : uint8_t {
  compute,        // compute kernels
  communication,  // collectives' own work (after the last rank arrived)
  memory,         // copies and sets
  other_gpu,      // GPU work of class other
  host,           // launch calls, their latency to the GPU, and host time between calls
  idle,           // the GPU waited although the work was launched (dependencies, syncs, ...)
};
inline constexpr int kPathParts = 6;
const char* path_part_name(PathPart p);
using PathParts = std::array<int64_t, kPathParts>;

// One change of a what-if (why/whatif.h parses them): the share of the matching time on the
// path that remains (0.5 for -50%, 0 for hidden).
struct WhatIf {
  std::string text;  // as given: "nccl:AllReduce=-50%"
  enum class Kind : uint8_t { part, kernel, collective, rank_on_time } kind = Kind::part;
  PathPart part = PathPart::compute;  // Kind::part
  std::string pattern;  // Kind::kernel: RE2 over normalized kernel names; collective: op name
  int64_t rank = -1;    // Kind::rank_on_time
  double keep = 1;      // remaining share of the matching time (Kind::part, kernel, collective)
  // Kind::collective at a bus bandwidth ("nccl:AllReduce=200GB/s"): the collective's own time
  // becomes bytes x nccl-tests' bus factor / this (GB/s, 1e9 bytes per second); 0: use keep.
  double busbw_gbps = 0;
};

// A piece of one rank's critical path in one step, from a boundary to a boundary: from the
// step's start or a collective's end, to a collective's arrival (its first kernel's start) or
// the step's end. Collectives are named by communicator (an index into the rank's
// RankCollectives::comms) and sequence number.
struct PathChain {
  int32_t to_comm = -1;  // -1: the chain ends at the step's end
  // The collective it leads to, on this rank: its op (an index into RankCollectives::ops) and
  // its end (the GPU end of its work), for the reduce's join and what-ifs.
  int32_t to_op = -1;
  int64_t to_seq = -1;
  int64_t to_end_ns = 0;
  // Its size and ranks (Collective::bytes, nranks; 0 when unknown), for a what-if at a bus
  // bandwidth.
  int64_t to_bytes = 0;
  int32_t to_nranks = 0;
  int32_t from_comm = -1;  // -1: it starts at the step's start
  int64_t from_seq = -1;
  int64_t from_ns = 0, to_ns = 0;  // the rank's trace clock
  PathParts parts{};               // sum: to_ns - from_ns
  // What the rank did last before the chain's end, gaps passed over: its part and name (a
  // kernel's normalized name, "launch of <kernel>", "host time between calls"; idle when the
  // chain holds only gaps), the straggler cause when this chain leads to a late arrival. The
  // name is an index into its RankPath's names (a rank's chains end at a few kernels thousands
  // of times: a job's reduce holds every rank's chains); -1: none.
  PathPart last = PathPart::idle;
  int32_t last_name = -1;
  // Per what-if (PathOptions::what_ifs, in order): the time of the chain that it shortens, and
  // how much (ns removed).
  std::vector<int64_t> removed;
  bool operator==(const PathChain&) const = default;
};

struct PathOptions {
  std::vector<WhatIf> what_ifs;
};

// A rank's path through one step: its chains (the last one ends at the step's end), and the
// single-rank path (collectives walked through as the rank's own work, no cross-rank edges):
// its parts, summing to the step's length.
struct RankPath {
  std::vector<PathChain> chains;
  // The chains' last names, each once, in the order the chains first name them.
  std::vector<std::string> names;
  PathParts local{};
  int64_t local_ns = 0;
  // A chain's last name ("" for none).
  const std::string& last_name(const PathChain& c) const;
  // The index of `name` in `names`, added where it is new; `seen` (the caller's, one per
  // RankPath) holds the names added so far.
  int32_t add_name(const std::string& name, std::unordered_map<std::string, int32_t>& seen);
};

// One segment of a path, for the timeline: from, to, part, the activity row (or -1 for host
// time and idle) and the process it is on.
struct PathSegment {
  int64_t from = 0, to = 0;
  PathPart part = PathPart::idle;
  int64_t row = -1;
  int process = 0;
};

// The paths of process `process` through each window (its steps), `comms` its
// RankCollectives::comms (the chains name collectives by them).
std::vector<RankPath> rank_paths(const Trace& t, int process, const std::vector<Interval>& windows,
                                 const std::vector<std::string>& comms,
                                 const std::vector<std::string>& ops, const PathOptions& o);

// The single-rank path through one window, as segments from the window's end back to its start
// (for the timeline: which activities are on it).
std::vector<PathSegment> path_segments(const Trace& t, int process, const Interval& window);

// How long each of a rank's operations in a window could be delayed without delaying the
// window's end (total slack, the critical-path method's latest finish minus the recorded end),
// on the graph the path walks: stream order, launch (a call's end before its row's start), CUDA
// event waits (an operation's binding dependency, the one the path takes, keeps the time from
// its end to the start: the gap the path calls idle, or the launch latency), host order (the time
// between two calls kept: it is the host's own work) and
// synchronizations (a sync call's end after the work it waited for; the call's own time kept).
// The window's end waits for what the path's walk starts from (the time after it is the host's).
// A collective's own time runs from the other ranks' last arrival (their Collective::gpu_start,
// Process::offset_ns aligning the clocks): the time this rank waited for them is slack of the
// work before it. Rows and launch calls that end inside the window; the rank's path has slack 0.
struct Slack {
  int64_t row = -1;   // an Activities row; for a host call, the row it launched (or -1)
  bool call = false;  // the launch (or sync) call rather than the GPU operation
  int64_t slack_ns = 0;
};
std::vector<Slack> slack(const Trace& t, int process, const Interval& window);

}  // namespace c3::analyzer
