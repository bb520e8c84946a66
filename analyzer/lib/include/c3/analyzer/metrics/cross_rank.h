// Across ranks (docs/metrics.md "Across ranks"): clock alignment, collectives matched by
// communicator and sequence number, arrival skew, wait time and stragglers. They run on each
// process's compact collective records (the ones rank summaries carry, summary.h), so the reduce
// never needs the activities; the Trace overloads make those records from a loaded trace.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "c3/analyzer/open/trace.h"

namespace c3::analyzer {

// An NCCL call as cross-rank analysis needs it (communicator and op are indices into
// RankCollectives::comms and ::ops).
struct CollectiveRecord {
  int32_t comm = -1;  // -1: unknown communicator
  int32_t op = -1;
  int64_t seq = -1;
  int64_t bytes = 0;
  int32_t nranks = 0, rank = -1;
  int16_t device = 0;
  int64_t gpu_start = -1, gpu_end = -1;
  bool operator==(const CollectiveRecord&) const = default;
};

// One process's calls, sorted by (communicator name, sequence number), calls the same process
// made more than once (one per GPU it drives) in the order it made them; calls without a
// communicator or sequence number last.
struct RankCollectives {
  std::vector<std::string> comms, ops;
  std::vector<CollectiveRecord> records;
  // Puts `records` in that order (stable).
  void sort();
};
// Process `process`'s collectives of `t`, sorted.
RankCollectives collectives_of(const Trace& t, int process);

struct ClockOffset {
  int process = 0;
  int64_t offset_ns = 0;  // added to this process's timestamps
  int64_t matched = 0;    // collectives used to estimate it
  std::string how;        // "reference", "same host as ...", "matched collective ends", "no match"
};
// Aligns processes: same host -> same clock; otherwise the offset that makes matched
// collectives end together (median), relative to the lowest rank's clock. Sets
// Process::offset_ns and returns what was applied. `calls[p]` are process p's collectives.
std::vector<ClockOffset> align_clocks(std::vector<Process>& processes,
                                      const std::vector<const RankCollectives*>& calls);
std::vector<ClockOffset> align_clocks(Trace& t);

// align_clocks in parts, for a reduce whose records are spread over processes (distributed.h).
// Clock domains: processes of one (non-empty) host share one; returns how many, domain[p] each
// process's.
int clock_domains(const std::vector<Process>& processes, std::vector<int>& domain);
// The process whose domain is the reference: the lowest rank (else process 0).
size_t reference_process(const std::vector<Process>& processes);
// One collective's latest end per domain.
struct DomainEnd {
  int32_t domain = 0;
  int64_t end = 0;
};
// Appends one collective's ends (`members`: (domain, GPU end) of each call) to `ends`: sorted by
// domain, the latest end per domain; returns how many entries it added.
size_t append_domain_ends(std::vector<DomainEnd>& ends, std::vector<DomainEnd>& members);
// The offsets from the collectives' ends: group g is ends[group[g], group[g + 1]) (`group` ends
// with ends.size()), in any order of the collectives. Sets Process::offset_ns as align_clocks.
std::vector<ClockOffset> align_from_ends(std::vector<Process>& processes,
                                         const std::vector<int>& domain, int domains,
                                         const std::vector<DomainEnd>& ends,
                                         const std::vector<size_t>& group);

// A matched collective: 32 bytes, its names kept once per report (CrossRank::comms, ::ops), as
// a job of thousands of ranks matches millions of them (docs/scale.md "Memory").
struct MatchedCollective {
  int32_t comm = 0;   // CrossRank::comms[comm]
  int32_t op = -1;    // CrossRank::ops[op]; -1: no call said (op_of gives "")
  int32_t ranks = 0;  // processes that recorded it
  // The process that arrived last; -1 when the latest arrivals tie (arrival_tolerance_ns): no
  // rank was late.
  int32_t straggler = -1;
  int64_t seq = 0;
  int64_t skew_ns = 0;  // latest start - earliest start (aligned)
};
struct RankWait {
  int process = 0;
  int64_t matched = 0;
  int64_t wait_ns = 0;  // sum of (latest start - its start)
  int64_t straggler_count = 0;
};
struct CrossRank {
  // In (communicator name, sequence number) order; their communicators' names in that order, each
  // once, and their ops' names, each once, in no set order.
  std::vector<MatchedCollective> collectives;
  std::vector<std::string> comms, ops;
  // Sorted: most often the straggler first, then the least wait, then rank order (rank_order).
  std::vector<RankWait> ranks;
  int64_t unmatched = 0;  // collectives seen by one process only
  int64_t tied = 0;       // matched collectives without a straggler (the latest arrivals tie)

  const std::string& comm_of(const MatchedCollective& m) const {
    return comms[static_cast<size_t>(m.comm)];
  }
  std::string_view op_of(const MatchedCollective& m) const {
    return m.op < 0 ? std::string_view() : std::string_view(ops[static_cast<size_t>(m.op)]);
  }
};
// Where match_collective keeps the names it has given an index (CrossRank::comms, ::ops).
struct MatchNames {
  std::unordered_map<std::string, int32_t> ops;
  int32_t op(CrossRank& out, const std::string& name);
  // Collectives come in communicator order: a name other than the last one is a new one.
  int32_t comm(CrossRank& out, const std::string& name);
};
// How far apart two arrivals of a process may be and still tie: 1000 ns when every collective
// start time it recorded is a whole microsecond (a PyTorch profiler trace without fractional
// timestamps: arrivals 1 us apart may have been at the same time), else 0 (nanosecond clocks:
// only equal starts tie). A collective whose latest arrival is within the larger tolerance of its
// processes of another process's arrival has no straggler.
int64_t arrival_tolerance_ns(const RankCollectives& calls);

// Process indices in rank order: by rank number (rank 2 before rank 10), processes without a rank
// after those with one, equal keys in index (input) order. Reports list processes so.
std::vector<int> rank_order(const std::vector<Process>& processes);
// Collectives matched by communicator + sequence number (imported traces: process group +
// order), with each process's Process::offset_ns applied. A k-way merge of the processes'
// sorted records: no memory per record.
CrossRank cross_rank(const std::vector<Process>& processes,
                     const std::vector<const RankCollectives*>& calls);
CrossRank cross_rank(const Trace& t);

// cross_rank in parts (distributed.h). One call of a collective: its process, op name (null:
// unknown), GPU start and end on the process's own clock.
struct GroupCall {
  int process = 0;
  const std::string* op = nullptr;
  int64_t gpu_start = -1, gpu_end = -1;
};
// Matches one collective (communicator `comm`, sequence number `seq`): `g` its calls in process
// order, each process's in the order it made them; `offset` and `tolerance` (arrival_tolerance_ns
// of each process's records) per process. Adds to `out` (collectives, unmatched, tied) and to
// `waits` (one per process). Collectives given in (communicator, seq) order give cross_rank's.
void match_collective(const std::string& comm, int64_t seq, const std::vector<GroupCall>& g,
                      const std::vector<int64_t>& offset, const std::vector<int64_t>& tolerance,
                      CrossRank& out, MatchNames& names, std::vector<RankWait>& waits);
// CrossRank::ranks from the per-process waits: cross_rank's order.
void order_waits(CrossRank& out, const std::vector<Process>& processes,
                 const std::vector<RankWait>& waits);

// The two latest arrivals at one collective (aligned clocks) and the process of the latest: the
// reduce's communication wait (summary.h) moves a gap's time before the others' last arrival.
struct LastArrivals {
  int64_t first = INT64_MIN, second = INT64_MIN;
  size_t who = SIZE_MAX;
};
// Adds one call (its process, GPU start, the process's offset); calls without GPU work or whose
// aligned start passes int64 are left out.
void add_arrival(LastArrivals& l, size_t process, int64_t gpu_start, int64_t offset);

}  // namespace c3::analyzer
