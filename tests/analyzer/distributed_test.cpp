// The pipeline on many processes (summary/distributed.h) with threads standing in for MPI's
// processes: 1 to 4 of them give run_pipeline's report, CSV and summaries; a failing input is
// every process's error; inputs are dealt by size. tests/mpi runs the same under mpirun.
#include "c3/analyzer/summary/distributed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "c3/analyzer/summary/wire.h"
#include "c3/common/text_limits.h"
#include "time_limits.h"

namespace c3::analyzer {
namespace {

// Mailboxes between `n` threads: one FIFO per (from, to), and one more for point-to-point
// messages (MpiComm's have a tag of their own). A point-to-point send returns once its message
// is taken, as MpiComm's does for a long message, so that a receiver that stops taking them
// hangs the test here as it would hang a job.
struct Post {
  explicit Post(int processes)
      : n(processes),
        boxes(static_cast<size_t>(2 * processes * processes)),
        sent(boxes.size(), 0),
        taken(boxes.size(), 0) {}
  int n;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::deque<std::string>> boxes;
  std::vector<uint64_t> sent, taken;  // messages per box
  // A process failed (MpiComm::fail ends the whole job): every wait ends with an error.
  bool ended = false;
  void end() {
    const std::lock_guard<std::mutex> lock(mu);
    ended = true;
    cv.notify_all();
  }
  // Applied to every message as it is sent (the test that garbles one), under `mu`.
  std::function<void(std::string&)> on_send;
  size_t box(int from, int to, bool point) const {
    return (point ? static_cast<size_t>(n * n) : 0) +
           static_cast<size_t>(from) * static_cast<size_t>(n) + static_cast<size_t>(to);
  }
  void send(int from, int to, std::string b, bool point = false) {
    const size_t k = box(from, to, point);
    std::unique_lock<std::mutex> lock(mu);
    if (on_send) on_send(b);
    boxes[k].push_back(std::move(b));
    const uint64_t mine = ++sent[k];
    cv.notify_all();
    if (point) cv.wait(lock, [&] { return taken[k] >= mine || ended; });
  }
  std::string receive(int from, int to, bool point = false) {
    const size_t k = box(from, to, point);
    std::unique_lock<std::mutex> lock(mu);
    auto& q = boxes[k];
    cv.wait(lock, [&] { return !q.empty() || ended; });
    if (q.empty()) throw std::runtime_error("the job ended");
    std::string b = std::move(q.front());
    q.pop_front();
    ++taken[k];
    cv.notify_all();
    return b;
  }
};

class ThreadComm final : public Comm {
 public:
  ThreadComm(Post& post, int rank) : post_(post), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return post_.n; }
  std::vector<std::string> gather(std::string bytes, int root) override {
    post_.send(rank_, root, std::move(bytes));
    if (rank_ != root) return {};
    std::vector<std::string> out;
    out.reserve(static_cast<size_t>(post_.n));
    for (int p = 0; p < post_.n; ++p) out.push_back(post_.receive(p, root));
    return out;
  }
  std::string broadcast(std::string bytes, int root) override {
    if (rank_ == root) {
      for (int p = 0; p < post_.n; ++p) post_.send(root, p, bytes);
    }
    return post_.receive(root, rank_);
  }
  std::vector<std::string> exchange(std::vector<std::string> out) override {
    for (int p = 0; p < post_.n; ++p) post_.send(rank_, p, std::move(out[static_cast<size_t>(p)]));
    std::vector<std::string> in;
    in.reserve(static_cast<size_t>(post_.n));
    for (int p = 0; p < post_.n; ++p) in.push_back(post_.receive(p, rank_));
    return in;
  }
  void send_to(int to, std::string bytes) override {
    post_.send(rank_, to, std::move(bytes), true);
  }
  std::string receive_from(int from) override { return post_.receive(from, rank_, true); }

 private:
  Post& post_;
  int rank_;
};

// run_distributed on `n` threads: process 0's result.
DistributedResult run_on(int n, const std::vector<Input>& inputs, const PipelineOptions& po,
                         const DistributedOutputs& want) {
  Post post(n);
  std::vector<DistributedResult> results(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int p = 0; p < n; ++p) {
    threads.emplace_back([&, p] {
      ThreadComm comm(post, p);
      const Deal deal = deal_inputs(comm, p == 0 ? inputs : std::vector<Input>{}, false, "h");
      results[static_cast<size_t>(p)] = run_distributed(comm, deal, po, want);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int p = 1; p < n; ++p) {
    EXPECT_EQ(results[static_cast<size_t>(p)].ok, results[0].ok) << p;
    EXPECT_EQ(results[static_cast<size_t>(p)].error, results[0].error) << p;
  }
  return std::move(results[0]);
}

std::string golden(const std::string& c) {
  return std::string(C3_SOURCE_DIR) + "/tests/golden/" + c;
}

// Messages between c3scope's processes come from c3scope (MPI delivers them whole), but a job
// may mix two builds: each message of a 3-process run, changed in one byte at a time (bytes of
// its first integers, then two further on) or cut short, gives process 0 a report or an error,
// never a crash (ASan and UBSan in CI), an allocation of what a garbled count says, or a hang
// (ctest's timeout). A process that fails ends the job, as MpiComm::fail does. Regressions: a
// clock domain read from a message indexed past the domains (a crash); a count read from one
// sized a vector (35 GB asked for).
TEST(Distributed, AGarbledMessageGivesAnErrorOrAReportNeverACrash) {
  const std::vector<Input> inputs =
      resolve_inputs({golden("why_comm_wait_two_ranks"), golden("kineto_twelve_ranks")});
  ASSERT_EQ(inputs.size(), 14u);
  constexpr int kProcesses = 3;
  // run_distributed with `garble` applied to each message: process 0's result.
  auto run = [&](const std::function<void(std::string&)>& garble) {
    Post post(kProcesses);
    post.on_send = garble;
    std::vector<DistributedResult> results(kProcesses);
    std::vector<std::thread> threads;
    threads.reserve(kProcesses);
    for (int p = 0; p < kProcesses; ++p) {
      threads.emplace_back([&, p] {
        ThreadComm comm(post, p);
        DistributedResult& r = results[static_cast<size_t>(p)];
        try {
          const Deal deal = deal_inputs(comm, p == 0 ? inputs : std::vector<Input>{}, false, "h");
          r = run_distributed(comm, deal, PipelineOptions{}, {});
        } catch (const std::exception& e) {
          r.ok = false;
          r.error = e.what();
        }
        if (!r.ok) post.end();
      });
    }
    for (std::thread& t : threads) t.join();
    return std::move(results[0]);
  };
  // The messages of a clean run, by size.
  std::vector<size_t> sizes;
  const DistributedResult clean = run([&](std::string& b) { sizes.push_back(b.size()); });
  ASSERT_TRUE(clean.ok) << clean.error;
  ASSERT_GT(sizes.size(), 10u);
  size_t runs = 0, errors = 0;
  for (size_t m = 0; m < sizes.size(); ++m) {
    std::vector<size_t> at;
    // Integers travel as 8 bytes (little-endian) or fewer (var): the low and a high byte of the
    // first ones, then one place further on.
    for (const size_t i : {0, 4, 8, 12, 20})
      if (i < sizes[m]) at.push_back(i);
    if (sizes[m] > 21) at.push_back(21 + (sizes[m] - 21) / 2);
    at.push_back(SIZE_MAX);  // cut in half
    for (const size_t pos : at) {
      size_t seen = 0;
      const DistributedResult r = run([&](std::string& b) {
        if (seen++ != m || b.empty()) return;
        if (pos == SIZE_MAX) {
          b.resize(b.size() / 2);
        } else if (pos < b.size()) {
          b[pos] = static_cast<char>(b[pos] ^ (pos % 2 == 0 ? 0xff : 0x41));
        }
      });
      ++runs;
      if (!r.ok) {
        ++errors;
        EXPECT_FALSE(r.error.empty()) << "message " << m << ", byte " << pos;
        EXPECT_FALSE(r.report);
      } else {
        EXPECT_TRUE(r.report) << "message " << m << ", byte " << pos;
      }
    }
  }
  // (most changes are caught; a changed time or count may still give a report)
  EXPECT_GT(errors, runs / 2) << runs << " runs";
}

TEST(Distributed, OneToFourProcessesGiveTheSerialReportCsvAndSummaries) {
  const std::vector<Input> inputs = resolve_inputs({golden("kineto_twelve_ranks")});
  ASSERT_EQ(inputs.size(), 12u);
  PipelineOptions po;
  std::string serial_csv;
  po.csv = [&](const std::string& rows) { serial_csv += rows; };
  AnalyzeOptions used;
  std::vector<RankSummary> s = map_inputs(inputs, po, &used);
  const std::string serial_summary = summaries_to_json(s, used);
  const std::string serial = to_json(reduce(std::move(s), input_names(inputs), used));
  for (int n = 1; n <= 4; ++n) {
    // With --summary process 0 gets every record; without, each communicator's owner matches
    // them.
    for (const bool summary : {false, true}) {
      const DistributedResult r = run_on(n, inputs, po, {true, summary});
      ASSERT_TRUE(r.ok) << r.error;
      ASSERT_TRUE(r.report);
      EXPECT_EQ(to_json(*r.report), serial) << n << " processes, summary " << summary;
      EXPECT_EQ(r.csv, serial_csv) << n << " processes";
      EXPECT_EQ(r.summary, summary ? serial_summary : "") << n << " processes";
    }
  }
}

TEST(Distributed, RanksOfAnInputWithSeveralKeepTheirPlaces) {
  // A summary file of six ranks among six one-rank traces: each rank's records and chains name
  // their input and their place among its ranks, which only the input's first rank resolves
  // (a rank taken for input + 0, or for its place alone, breaks the report or is refused).
  const std::vector<Input> traces = resolve_inputs({golden("kineto_twelve_ranks")});
  ASSERT_EQ(traces.size(), 12u);
  AnalyzeOptions used;
  const std::vector<Input> six(traces.begin() + 3, traces.begin() + 9);
  const std::string path = testing::TempDir() + "/distributed_six.summary.json";
  std::ofstream(path) << summaries_to_json(map_inputs(six, PipelineOptions{}, &used), used);
  std::vector<Input> inputs(traces.begin(), traces.begin() + 3);
  for (const Input& i : resolve_inputs({path})) inputs.push_back(i);
  inputs.insert(inputs.end(), traces.begin() + 9, traces.end());
  ASSERT_EQ(inputs.size(), 7u);
  const std::string serial = to_json(run_pipeline(inputs, PipelineOptions{}));
  for (int n = 1; n <= 4; ++n) {
    const DistributedResult r = run_on(n, inputs, PipelineOptions{}, {});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(to_json(*r.report), serial) << n << " processes";
  }
}

TEST(Distributed, CommunicationWaitIsFoundWhereTheCollectivesAreOwned) {
  // The two hand-built ranks of the golden case: rank 0 waits 100 us of a 200 us gap for rank 1
  // at AllReduce #1 (in the rank's, its device's, its stream's and its step's totals). With more
  // than one process the gaps go to the owners of their collectives, which send process 0 the
  // waits; the report must be the serial one, waits included.
  const std::vector<Input> inputs = resolve_inputs({golden("why_comm_wait_two_ranks")});
  ASSERT_EQ(inputs.size(), 2u);
  const std::string serial = to_json(run_pipeline(inputs, PipelineOptions{}));
  ASSERT_NE(serial.find("\"comm_wait_ns\": 100000"), std::string::npos) << serial;
  for (int n = 1; n <= 4; ++n) {
    const DistributedResult r = run_on(n, inputs, PipelineOptions{}, {});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(to_json(*r.report), serial) << n << " processes";
  }
}

TEST(Distributed, CommunicatorsWithLongOrNonAsciiNamesMatchOnEveryProcess) {
  // Communicator names that take the summary-file path before the records leave (past a third
  // of the name cap, or not ASCII; here at the loader's cap and with an é): each collective is
  // still matched by one name on every process, so the report is the same at 1-4 processes and
  // matches as many collectives as the serial one (whose names, kept whole in memory, may differ
  // where a summary file would change them: docs/scale.md "Limits").
  const std::vector<Input> traces = resolve_inputs({golden("kineto_twelve_ranks")});
  ASSERT_EQ(traces.size(), 12u);
  const std::string dir = testing::TempDir() + "/distributed_names";
  std::filesystem::create_directories(dir);
  const std::string from = "\"Process Group Name\":\"0\"";
  const std::string to = "\"Process Group Name\":\"\\u00e9" + std::string(5000, 'g') + "\"";
  for (size_t k = 0; k < 4; ++k) {
    std::ifstream in(traces[k].path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t n = 0;
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) {
      text.replace(at, from.size(), to);
      at += to.size();
      ++n;
    }
    ASSERT_GT(n, 0u) << traces[k].path;
    std::ofstream(dir + "/rank" + std::to_string(k) + ".json") << text;
  }
  const std::vector<Input> inputs = resolve_inputs({dir});
  ASSERT_EQ(inputs.size(), 4u);
  const Report serial = run_pipeline(inputs, PipelineOptions{});
  ASSERT_FALSE(serial.cross.collectives.empty());
  ASSERT_EQ(serial.cross.comm_of(serial.cross.collectives[0]).rfind("pg:\xc3\xa9ggg", 0), 0u);
  ASSERT_GT(serial.cross.comm_of(serial.cross.collectives[0]).size(), common::kNameLimit / 3);
  std::string one;
  for (int n = 1; n <= 4; ++n) {
    const DistributedResult r = run_on(n, inputs, PipelineOptions{}, {});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.report->cross.collectives.size(), serial.cross.collectives.size()) << n;
    EXPECT_EQ(r.report->cross.unmatched, serial.cross.unmatched) << n;
    const std::string text = to_json(*r.report);
    if (n == 1) one = text;
    EXPECT_TRUE(text == one) << n << " processes: not the report of 1";  // (not printed: long)
  }
}

TEST(Distributed, AnErrorWhileProcess0AddsItsOwnInputStillTakesEveryMessage) {
  // A summary file of 8,193 ranks whose kernel counts, each at the per-rank bound, pass int64
  // when summed: the largest input, dealt to process 0, which adds it to the reduce during the
  // map and fails there; a trace after it, dealt to process 1, whose summaries process 0 must
  // still take (a send returns once its message is taken: without, the job hangs). Every process
  // gives the serial error.
  RankSummary one;
  one.kernels = kAmountLimit;
  const std::string path = testing::TempDir() + "/distributed_overflow.summary.json";
  std::ofstream(path) << summaries_to_json(std::vector<RankSummary>(8193, one), AnalyzeOptions{});
  std::vector<Input> inputs = resolve_inputs({path});
  const std::vector<Input> traces = resolve_inputs({golden("kineto_twelve_ranks")});
  inputs.push_back(traces[0]);
  std::string serial;
  try {
    run_pipeline(inputs, PipelineOptions{});
  } catch (const std::exception& e) {
    serial = e.what();
  }
  ASSERT_NE(serial.find("passes int64"), std::string::npos) << serial;
  for (int n = 1; n <= 3; ++n) {
    const DistributedResult r = run_on(n, inputs, PipelineOptions{}, {});
    EXPECT_FALSE(r.ok) << n;
    EXPECT_EQ(r.error, serial) << n << " processes";
  }
}

TEST(Distributed, SummaryInputsLendTheirOptionsOnEveryProcess) {
  // A summary made with --step and --min-samples 3, and the other rank's trace: the trace is
  // mapped with the summary's options wherever it is mapped.
  const std::string dir = golden("analyze_summaries");
  PipelineOptions made;
  made.analyze.step = "ProfilerStep#[12]$";
  made.analyze.interference.min_samples = 3;
  AnalyzeOptions used;
  const std::vector<Input> r0 = resolve_inputs({dir + "/rank0.json"});
  const std::vector<RankSummary> s0 = map_inputs(r0, made, &used);
  const std::string path = testing::TempDir() + "/distributed_r0.summary.json";
  std::ofstream(path) << summaries_to_json(s0, used);
  const std::vector<Input> inputs = resolve_inputs({path, dir + "/rank1.json"});
  const std::string serial = to_json(run_pipeline(inputs, PipelineOptions{}));
  for (int n = 1; n <= 3; ++n) {
    const DistributedResult r = run_on(n, inputs, PipelineOptions{}, {});
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.used.step, "ProfilerStep#[12]$");
    EXPECT_EQ(to_json(*r.report), serial) << n << " processes";
  }
  // A given option that differs is refused on every process, naming the summary.
  PipelineOptions given;
  given.analyze.interference.min_samples = 9;
  given.given.min_samples = true;
  const DistributedResult bad = run_on(3, inputs, given, {});
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.error.find("distributed_r0.summary.json' was summarized with --min-samples 3"),
            std::string::npos)
      << bad.error;
}

TEST(Distributed, AnUnreadableInputIsEveryProcesssError) {
  const std::string dir = testing::TempDir() + "/distributed_bad";
  std::filesystem::create_directories(dir);
  for (const char* f : {"rank0.json", "rank1.json"})
    std::filesystem::copy_file(golden("analyze_summaries") + "/" + f, dir + "/" + f,
                               std::filesystem::copy_options::overwrite_existing);
  std::ofstream(dir + "/rank2.json") << "{\"traceEvents\": [ {\"ph\": ";
  const std::vector<Input> inputs = resolve_inputs({dir});
  std::string serial;
  try {
    run_pipeline(inputs, PipelineOptions{});
  } catch (const std::exception& e) {
    serial = e.what();
  }
  ASSERT_FALSE(serial.empty());
  for (int n = 1; n <= 3; ++n) {
    const DistributedResult r = run_on(n, inputs, PipelineOptions{}, {});
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error, serial) << n << " processes";
    EXPECT_FALSE(r.report);
  }
}

// A job of 7 ranks on 4 hosts and one without a host, each host's clock off by its own amount:
// host b matches only host c, which matches a (a chain the alignment follows), rank 6 has no
// collective (its wall-clock anchor aligns it), and communicator "dp"'s 300 collectives span two
// owners' runs of sequence numbers.
struct SpreadJob {
  std::vector<Process> processes;
  std::vector<RankCollectives> calls;
  SpreadJob() {
    const std::vector<std::pair<const char*, int64_t>> ranks = {
        {"a", 0}, {"a", 0}, {"b", 7'000}, {"c", -3'500}, {"", 900}, {"c", -3'500}, {"d", 50}};
    for (size_t r = 0; r < ranks.size(); ++r) {
      Process p;
      p.host = ranks[r].first;
      // The reference is the lowest rank: rank 0, on host a; ranks 4 and 5 change places.
      p.rank = static_cast<int64_t>(r == 4 ? 5 : r == 5 ? 4 : r);
      p.anchor_trace_ns = 1'000;
      p.anchor_realtime_ns = 1'000 + ranks[r].second * 3;
      processes.push_back(p);
      RankCollectives c;
      c.ops = {"AllReduce"};
      auto add = [&](const char* comm, int64_t seq, int64_t end) {
        auto it = std::find(c.comms.begin(), c.comms.end(), comm);
        if (it == c.comms.end()) it = c.comms.insert(c.comms.end(), comm);
        CollectiveRecord x;
        x.comm = static_cast<int32_t>(it - c.comms.begin());
        x.op = 0;
        x.seq = seq;
        x.gpu_start = end - 100;
        x.gpu_end = end + ranks[r].second + static_cast<int64_t>((r * 37 + seq * 11) % 23);
        c.records.push_back(x);
      };
      const bool ac = p.host == "a" || p.host == "c" || p.host.empty();
      for (int64_t s = 299; s >= 0 && ac; --s) add("dp", s, 10'000 + s * 1'000);
      if (p.host == "b" || p.host == "c") {
        for (int64_t s = 0; s < 40; ++s) add("pp", s, 500'000 + s * 2'000);
      }
      if (r == 1) add("dp", 5, 15'000);  // a second call of one collective (another GPU)
      c.sort();
      calls.push_back(std::move(c));
    }
  }
};

TEST(Distributed, ClocksAlignedWhereTheRecordsAreEqualAlignClocks) {
  SpreadJob job;
  std::vector<Process> serial = job.processes;
  std::vector<const RankCollectives*> all;
  for (const RankCollectives& c : job.calls) all.push_back(&c);
  align_clocks(serial, all);
  // Not trivial: hosts b, c, d and the hostless rank are each off the reference's clock, and all
  // but d are aligned by their collectives.
  std::set<int64_t> offsets;
  for (const Process& p : serial) offsets.insert(p.offset_ns);
  ASSERT_EQ(offsets.size(), 5u);
  const std::vector<ClockOffset> how = align_clocks(serial, all);
  for (size_t r = 2; r < 6; ++r) EXPECT_EQ(how[r].how, "matched collective ends") << r;
  EXPECT_NE(how[6].how.find("wall-clock anchors"), std::string::npos);
  for (int n = 1; n <= 4; ++n) {
    Post post(n);
    std::vector<std::vector<Process>> got(static_cast<size_t>(n));
    std::vector<std::vector<size_t>> which(static_cast<size_t>(n));
    std::vector<std::thread> threads;
    threads.reserve(static_cast<size_t>(n));
    for (int p = 0; p < n; ++p) {
      threads.emplace_back([&, p] {
        ThreadComm comm(post, p);
        // Ranks dealt round robin from the last; places in the job's order, not 0..n-1.
        std::vector<uint64_t> order;
        std::vector<const RankCollectives*> calls;
        auto& mine = got[static_cast<size_t>(p)];
        for (size_t r = 0; r < job.processes.size(); ++r) {
          if (static_cast<int>((job.processes.size() - 1 - r) % static_cast<size_t>(n)) != p)
            continue;
          which[static_cast<size_t>(p)].push_back(r);
          order.push_back(1'000 + 65'536 * r);
          mine.push_back(job.processes[r]);
          calls.push_back(&job.calls[r]);
        }
        align_clocks_spread(comm, order, mine, calls);
      });
    }
    for (std::thread& t : threads) t.join();
    for (size_t p = 0; p < got.size(); ++p) {
      for (size_t i = 0; i < got[p].size(); ++i) {
        EXPECT_EQ(got[p][i].offset_ns, serial[which[p][i]].offset_ns)
            << n << " processes, rank " << which[p][i];
      }
    }
  }
}

TEST(Distributed, PointToPointMessagesArriveInOrder) {
  SerialComm one;
  one.send_to(0, "a");
  one.send_to(0, "b");
  EXPECT_EQ(one.receive_from(0), "a");
  EXPECT_EQ(one.receive_from(0), "b");
  Post post(3);
  std::thread sender([&] {
    ThreadComm comm(post, 2);
    for (int i = 0; i < 100; ++i) comm.send_to(0, std::to_string(i));
  });
  ThreadComm comm(post, 0);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(comm.receive_from(2), std::to_string(i));
  sender.join();
}

// What a process holds until process 0 takes it comes back byte for byte: summary JSON deflated
// to a fraction of its size, bytes that do not shrink stored; cut bytes are an error, not a crash.
TEST(Distributed, HeldSummariesComeBackAsTheyWere) {
  std::string json = "{\"ranks\": [";
  for (int i = 0; i < 4000; ++i) {
    json += "{\"kernel\": \"gemm_" + std::to_string(i % 37) +
            "\", \"busy_ns\": " + std::to_string(int64_t{1000003} * i) + "},";
  }
  json += "{}]}\n";
  const std::string h = held_summary(json);
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h[0], 'D');
  EXPECT_LT(h.size(), json.size() / 4) << h.size() << " of " << json.size();
  EXPECT_TRUE(summary_of_held(h) == json);

  std::string noise(100000, '\0');
  uint64_t x = 88172645463325252ULL;
  for (char& c : noise) {  // xorshift64: bytes that do not deflate
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x & 0xff);
  }
  const std::string stored = held_summary(noise);
  EXPECT_EQ(stored[0], 'S');
  EXPECT_TRUE(summary_of_held(stored) == noise);
  EXPECT_EQ(held_summary(""), "");
  EXPECT_EQ(summary_of_held(""), "");

  EXPECT_THROW(summary_of_held(h.substr(0, h.size() - 16)), std::runtime_error);
  EXPECT_THROW(summary_of_held(h.substr(0, 5)), std::runtime_error);
  EXPECT_THROW(summary_of_held("X" + h.substr(1)), std::runtime_error);
}

TEST(Distributed, InputsAreDealtLargestFirstToTheLeastLoaded) {
  EXPECT_EQ(deal_by_size({10, 10, 10}, 1), (std::vector<int>{0, 0, 0}));
  // 9 -> 0, 8 -> 1, 5 -> 1 (it has 8, 0 has 9), 4 -> 0 (9 against 13).
  EXPECT_EQ(deal_by_size({5, 9, 4, 8}, 2), (std::vector<int>{1, 0, 0, 1}));
  // Equal sizes: round robin from process 0; more processes than inputs leave some idle.
  EXPECT_EQ(deal_by_size({1, 1, 1, 1}, 3), (std::vector<int>{0, 1, 2, 0}));
  EXPECT_EQ(deal_by_size({7}, 4), (std::vector<int>{0}));
  // Shares differ by at most the largest input.
  std::vector<uint64_t> sizes;
  for (uint64_t i = 1; i <= 100; ++i) sizes.push_back((i * 7919) % 1000 + 1);
  const std::vector<int> o = deal_by_size(sizes, 7);
  std::vector<uint64_t> load(7, 0);
  for (size_t i = 0; i < sizes.size(); ++i) load[static_cast<size_t>(o[i])] += sizes[i];
  const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
  EXPECT_LE(*hi - *lo, 1000u);
}

}  // namespace
}  // namespace c3::analyzer
