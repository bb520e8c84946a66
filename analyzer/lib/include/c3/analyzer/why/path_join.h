// The reduce's half of the critical path (path.h): the ranks' chains of one step joined at the
// matched collectives. Walking back from the end of the step's longest rank, at each collective
// the path goes to the last rank to arrive: the collective's own work after that arrival is
// communication, and the path goes on through the late rank's chain (what it did before
// arriving: the straggler's cause), while the rank it came from waited (peer wait, counted
// apart: that time is off the path). What-ifs replay the step's chains forward with the
// changed times (the recorded order and binding dependencies kept; no contention model).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "c3/analyzer/metrics/cross_rank.h"
#include "c3/analyzer/why/path.h"

namespace c3::analyzer {

// One rank's part of a step, as the reduce takes it.
struct StepRankPath {
  int process = 0;
  int64_t rank = -1;                       // its rank number (what-if rank:N), -1 unknown
  int64_t start = 0, end = 0;              // the step's window (the rank's clock)
  int64_t offset_ns = 0;                   // Process::offset_ns (aligned clocks)
  const RankPath* path = nullptr;          // its chains
  const RankCollectives* calls = nullptr;  // names of the chains' communicators and ops
};

// A late arrival on a step's path: `late` arrived last at a collective `waiting` was in.
struct LateArrival {
  std::string comm;
  int64_t seq = 0;
  std::string op;
  int late = 0, waiting = 0;        // process indices
  int64_t late_ns = 0;              // its arrival - the latest of the other ranks' arrivals
  PathPart cause = PathPart::idle;  // what it did just before (its chain's last part)
  std::string cause_name;
  PathParts before{};  // its chain since its previous boundary
};

// One piece of a step's path, in walk order (from the step's end back): a stretch of one rank's
// own path (a chain: from a boundary to the arrival at `comm`/`seq`, or to the step's end when
// `comm` is empty), or a collective's time on the path after its last arrival (`collective`).
// Times on the rank's clock.
struct PathLeg {
  int process = 0;
  int64_t from_ns = 0, to_ns = 0;
  bool collective = false;
  std::string comm;
  int64_t seq = -1;
};

struct StepPath {
  int64_t index = 0;
  std::string name;
  int64_t step_ns = 0;  // the longest rank's step time
  int64_t path_ns = 0;  // the path's length: the sum of parts
  PathParts parts{};
  int end_process = -1;  // the rank whose step end the path starts from
  int hops = 0;          // rank changes along the path
  // Peer wait: for each change, how long the rank the path came from waited in the collective
  // for the late arrival (time off the path, which the late rank's chain covers).
  int64_t peer_wait_ns = 0;
  std::vector<LateArrival> late;
  std::vector<PathLeg> route;       // how the path went (the timeline draws it)
  std::vector<int64_t> what_if_ns;  // per what-if: the step time replayed with the change
  int64_t replayed_ns = 0;          // the step time replayed without change (= step_ns unless
                                    // clocks disagree: a check of the replay)
};

// The path of one job step from its ranks' parts (in rank order); `what_ifs` as the map had.
StepPath join_step(int64_t index, const std::string& name, const std::vector<StepRankPath>& ranks,
                   const std::vector<WhatIf>& what_ifs);

// The segments of steps' paths over the timeline: each leg of a route walked again on its rank's
// operations (path.h's walk; a collective leg is one communication segment). Segments in walk
// order, each on its leg's process; `step` of each segment: the index into `paths` (optional).
std::vector<PathSegment> route_segments(const Trace& t, const std::vector<StepPath>& paths,
                                        std::vector<size_t>* step = nullptr);

}  // namespace c3::analyzer
