// The pipeline on many processes (summary/distributed.h) with threads standing in for MPI's
// processes: 1 to 4 of them give run_pipeline's report, CSV and summaries; a failing input is
// every process's error; inputs are dealt by size. tests/mpi runs the same under mpirun.
#include "c3/analyzer/summary/distributed.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

namespace c3::analyzer {
namespace {

// Mailboxes between `n` threads: one FIFO per (from, to).
struct Post {
  explicit Post(int processes) : n(processes), boxes(static_cast<size_t>(processes * processes)) {}
  int n;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::deque<std::string>> boxes;
  void send(int from, int to, std::string b) {
    {
      const std::lock_guard<std::mutex> lock(mu);
      boxes[static_cast<size_t>(from) * static_cast<size_t>(n) + static_cast<size_t>(to)].push_back(
          std::move(b));
    }
    cv.notify_all();
  }
  std::string receive(int from, int to) {
    std::unique_lock<std::mutex> lock(mu);
    auto& q = boxes[static_cast<size_t>(from) * static_cast<size_t>(n) + static_cast<size_t>(to)];
    cv.wait(lock, [&] { return !q.empty(); });
    std::string b = std::move(q.front());
    q.pop_front();
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
