// The pipeline on many processes (docs/scale.md): each process maps its share of the inputs, the
// summaries are reduced, and process 0 gets the job report, equal to run_pipeline's on the same
// inputs. The processes talk through Comm, a small typed collectives layer: MPI in c3scope-mpi
// (analyzer/mpi/), one process here (SerialComm), threads in tests. Nothing here includes
// <mpi.h>.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "c3/analyzer/metrics/cross_rank.h"
#include "c3/analyzer/summary/pipeline.h"

namespace c3::analyzer {

// Processes 0..size()-1 of one run. Every process makes the same calls in the same order; a call
// that cannot complete (a process died or stopped answering) ends the whole run (MpiComm: the
// job is aborted with a line naming the process) rather than returning.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Every process's bytes at `root`, in process order; empty elsewhere.
  virtual std::vector<std::string> gather(std::string bytes, int root) = 0;
  // Root's bytes, on every process.
  virtual std::string broadcast(std::string bytes, int root) = 0;
  // out[d] goes to process d (out has size() entries); returns what each process sent here.
  virtual std::vector<std::string> exchange(std::vector<std::string> out) = 0;
  // Point to point: `bytes` to process `to`, which takes them with receive_from(this process);
  // messages between two processes arrive in the order they were sent. Returns once the bytes are
  // on their way (MpiComm: a large message waits there for the receiver to take it, so a sender
  // runs at most one message ahead of its receiver and nothing piles up at the receiver). A
  // process sends to itself only with SerialComm (one process).
  virtual void send_to(int to, std::string bytes) = 0;
  virtual std::string receive_from(int from) = 0;
  // Runs `work` (the map, the reduce: local work that may take minutes). A Comm whose process
  // must keep answering the others while it works runs it so (MpiComm's heartbeats have a thread
  // of their own: it runs it as it is).
  virtual void run(const std::function<void()>& work) { work(); }
  // This process met an error the others may not have (an exception out of run_distributed):
  // MpiComm ends the whole job with `line`; the stand-ins return (the caller reports it).
  virtual void fail(const std::string& line) { (void)line; }
  // Processes of this run on this process's machine (their cores are shared), and the machine:
  // the same number for the processes of one machine (host names may repeat across containers).
  virtual int local_processes() const { return 1; }
  virtual int node() const { return 0; }

  // Whether any process's flag is true (every process gets the same answer): after each phase, so
  // that every process takes the same branch and none waits for one that left.
  bool any(bool flag);
  // Every process's bytes, on every process.
  std::vector<std::string> all_gather(std::string bytes);
};

// An error every process of a run throws alike (the same line, at the same point), so that each
// can report it and leave without waiting for the others; any other error is one process's own
// and ends the whole run (Comm::fail).
struct AgreedError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// One process: the serial stand-in.
class SerialComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> gather(std::string bytes, int root) override;
  std::string broadcast(std::string bytes, int root) override;
  std::vector<std::string> exchange(std::vector<std::string> out) override;
  void send_to(int to, std::string bytes) override;
  std::string receive_from(int from) override;

 private:
  std::deque<std::string> sent_;  // to itself, not received yet
};

// Which process maps each input: the largest first, each to the process with the fewest bytes so
// far (ties: the lower process), so that the processes' shares differ by at most one input's
// size. `sizes` in bytes, in input order.
std::vector<int> deal_by_size(const std::vector<uint64_t>& sizes, int processes);

// The job's inputs and who maps each, the same on every process.
struct Deal {
  std::vector<Input> inputs;       // in the job's order: the report's and the outputs'
  std::vector<int> owner;          // the process that maps inputs[i]
  std::vector<std::string> names;  // the report's names of the inputs
};

// Shared inputs: process 0's `inputs` (resolved there: one listing of the folders, not one per
// process) dealt by size; the other processes' are ignored. Local (--local): each process gives
// the traces of its own node's folder and its host name; the inputs of one host are dealt among
// that host's processes, in the order its processes listed them, hosts by name, named "host:path"
// when there are several hosts. No process with an input: no input on every process.
Deal deal_inputs(Comm& comm, const std::vector<Input>& inputs, bool local, const std::string& host);

struct DistributedOutputs {
  bool csv = false;      // the per-collective CSV rows (--csv)
  bool summary = false;  // the summaries as one summary file's text (--summary)
  // Every rank's summary, records included, in DistributedResult::ranks instead of a report
  // (compare reduces the runs itself).
  bool ranks = false;
};

// How a process's part went (docs/scale.md "Measured").
struct ProcessStats {
  double map_s = 0;     // reading and mapping its share
  double cross_s = 0;   // the cross-rank exchange and the owner's matching
  double paths_s = 0;   // the steps' critical paths: the chains' exchange and the owner's joins
  int64_t peak_kb = 0;  // its peak resident memory (VmHWM)
  int64_t inputs = 0;   // inputs it mapped
  int64_t records = 0;  // collective records of the communicators it owned
};

// What process 0 gets; the others get an empty result (ok the same as process 0's).
struct DistributedResult {
  bool ok = false;
  bool cancelled = false;  // PipelineOptions::open.cancel was set on some process
  std::string error;       // !ok: the first failing input's error (in input order)
  std::optional<Report> report;
  AnalyzeOptions used;  // the options the job was analyzed with (summary inputs' included)
  std::string csv;      // the rows, without the header, in input order
  std::string summary;  // summaries_to_json of every rank
  std::vector<RankSummary> ranks;  // DistributedOutputs::ranks
  // Process 0: each process's stats, and the reduce's on process 0: from the end of the map to
  // the report (the summaries sent and parsed, the cross-rank parts, the steps' paths,
  // reduce()), and the resident memory it added (peak VmHWM after minus VmRSS before).
  std::vector<ProcessStats> stats;
  double reduce_s = 0;
  int64_t reduce_kb = 0;
  // Parts of reduce_s: parsing the summaries that came (their JSON), and the report (reduce())
  // once the cross-rank parts are in.
  double receive_s = 0, report_s = 0;
};

// The map on each process's share of `deal`, the summary inputs' options adopted over the job
// (map_inputs' rules), and the reduce on process 0. `given` as run_pipeline takes it (its csv,
// keep and comm hooks are not used; progress is not reported).
DistributedResult run_distributed(Comm& comm, const Deal& deal, const PipelineOptions& given,
                                  const DistributedOutputs& want);

// align_clocks over ranks spread across the processes (c3scope-mpi export: each process loads its
// share of the traces). Each process gives its own ranks: `processes` (host, rank and clock
// anchors are used), their collectives `calls`, and each one's place in the job's order `order`
// (distinct over the job). Sets each given Process::offset_ns to what align_clocks on every rank
// of the job, in that order, sets. Each collective's latest GPU end per clock domain is worked out
// by the process that owns its communicator (as run_distributed's records are), process 0 aligns
// from those ends and broadcasts the offsets: no process holds another's records, process 0
// holds 12 bytes per host and collective. Throws AgreedError when two ranks give one place.
void align_clocks_spread(Comm& comm, const std::vector<uint64_t>& order,
                         std::vector<Process>& processes,
                         const std::vector<const RankCollectives*>& calls);

// The last step of the clock alignment where the records are (align_clocks_spread, and
// run_distributed's cross-rank work): every process gives what its owned collectives say, each
// collective's latest end per clock domain (append_domain_ends' groups, packed as a count and
// (domain, end) pairs); process 0 aligns `processes` (every rank's, in the job's order; empty
// elsewhere) from them with align_from_ends when `align` (its result in `*clocks`), and every
// process gets the `ranks` offsets.
std::vector<int64_t> offsets_from_ends(Comm& comm, std::string ends,
                                       std::vector<Process>& processes,
                                       const std::vector<int>& domain, int domains, bool align,
                                       std::vector<ClockOffset>* clocks);

}  // namespace c3::analyzer
