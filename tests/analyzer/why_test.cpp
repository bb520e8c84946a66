// The why/ analyses (docs/metrics.md "Why a step takes as long as it does") on small hand-built
// traces with known answers: idle causes (host wait vs kernel wait vs other, per stream and over
// a device's union, windows, the micro/macro split, the parts adding up to Breakdown::idle on
// random traces), launch statistics and HTA's outliers, queue length and the time at its limit,
// the launch calls surviving the sort and the snapshot, each operation's slack, and a step's
// path walked again over the timeline.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "c3/analyzer/metrics/classify.h"
#include "c3/analyzer/metrics/metrics.h"
#include "c3/analyzer/open/open.h"
#include "c3/analyzer/report/report.h"
#include "c3/analyzer/why/idle.h"
#include "c3/analyzer/why/launch.h"
#include "c3/analyzer/why/path.h"
#include "c3/analyzer/why/path_join.h"
#include "c3/analyzer/why/queue.h"
#include "c3/analyzer/why/sequences.h"

using namespace c3::analyzer;

namespace {

struct Builder {
  Trace t;
  explicit Builder(int processes = 1) {
    for (int p = 0; p < processes; ++p) {
      Process pr;
      pr.pid = 100 + p;
      pr.rank = p;
      t.processes.push_back(pr);
    }
  }
  int32_t name(const std::string& n) {
    for (size_t i = 0; i < t.names.size(); ++i) {
      if (t.names[i] == n) return static_cast<int32_t>(i);
    }
    t.names.push_back(n);
    return static_cast<int32_t>(t.names.size() - 1);
  }
  // A kernel on `stream`, launched by `call` from call_start to call_end (none when call_end <
  // 0).
  Builder& kernel(const std::string& n, int64_t s, int64_t e, int stream = 7,
                  int64_t call_start = -1, int64_t call_end = -1,
                  const std::string& call = "cudaLaunchKernel", int device = 0, int process = 0,
                  int32_t thread = 0) {
    const size_t i = t.activities.push(s, e, name(n), stream, static_cast<int16_t>(device),
                                       static_cast<int16_t>(process), Kind::kernel, 0);
    if (call_end >= 0) t.activities.set_call(i, call_start, call_end, name(call), thread);
    return *this;
  }
  Trace done() {
    t.activities.sort();
    classify(t, Rules::defaults());
    return t;
  }
};

}  // namespace

TEST(Why, HostWaitKernelWaitAndOtherOnOneStream) {
  IdleOptions o;
  o.kernel_wait_ns = 30;
  // Gaps: 100-105 (call started at 6, before: kernel wait), 200-310 (call started at 300,
  // after the GPU went idle: host wait), 400-500 (launched at 11, gap of 100: other).
  const Trace t = Builder()
                      .kernel("a", 10, 100, 7, 0, 5)
                      .kernel("a", 105, 200, 7, 6, 10)
                      .kernel("b", 310, 400, 7, 300, 306)
                      .kernel("b", 500, 600, 7, 11, 16)
                      .done();
  const std::vector<StreamIdle> s = stream_idle(t, 0, o);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].activities, 4);
  const IdleCauses& c = s[0].causes;
  EXPECT_EQ(c.gaps, 3);
  EXPECT_EQ(c.idle, 215);
  EXPECT_EQ(c.host_wait, 110);
  EXPECT_EQ(c.kernel_wait, 5);
  EXPECT_EQ(c.other, 100);
  EXPECT_EQ(c.micro + c.macro, 0);  // no split asked for
  // HTA compares the call's start, not its end: a call that began before the GPU went idle and
  // ended after it is not host wait.
  const Trace u = Builder().kernel("a", 0, 100).kernel("a", 200, 300, 7, 90, 150).done();
  EXPECT_EQ(idle_causes(u, {0, -1}, o).host_wait, 0);
  EXPECT_EQ(idle_causes(u, {0, -1}, o).other, 100);
}

TEST(Why, WithoutLaunchCallsNothingIsHostWait) {
  const Trace t = Builder().kernel("a", 0, 100).kernel("a", 110, 200).kernel("a", 300, 400).done();
  EXPECT_FALSE(t.activities.has_calls());
  IdleOptions o;
  o.kernel_wait_ns = 50;
  const IdleCauses c = idle_causes(t, {0, -1}, o);
  EXPECT_EQ(c.host_wait, 0);
  EXPECT_EQ(c.kernel_wait, 10);
  EXPECT_EQ(c.other, 100);
  EXPECT_TRUE(launch_stats(t, 0, {}).empty());
  EXPECT_TRUE(stream_queues(t, 0, {}).empty());
}

TEST(Why, DeviceUnionFillsOneStreamsGapWithAnothersWork) {
  IdleOptions o;
  o.kernel_wait_ns = 30;
  // Stream 7 idles 100-300; stream 8 works 150-250: the device idles 100-150 and 250-300 only,
  // each put down to the work that ends it.
  const Trace t = Builder()
                      .kernel("a", 0, 100, 7, 0, 1)
                      .kernel("a", 300, 400, 7, 260, 270)  // host wait for the device's 250-300
                      .kernel("s", 150, 250, 8, 2, 3)      // launched early: other (50 >= 30)
                      .done();
  const IdleCauses d = idle_causes(t, {0, 0}, o);
  EXPECT_EQ(d.idle, 100);
  EXPECT_EQ(d.host_wait, 50);
  EXPECT_EQ(d.other, 50);
  EXPECT_EQ(d.idle, breakdown(t, {0, 0}).idle);
  const std::vector<StreamIdle> s = stream_idle(t, 0, o);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].stream, 7);
  EXPECT_EQ(s[0].causes.idle, 200);
  EXPECT_EQ(s[0].causes.host_wait, 200);  // stream 7's call started at 260 > 100
  EXPECT_EQ(s[1].causes.gaps, 0);
}

TEST(Why, WindowsClipAndMicroMacroSplit) {
  IdleOptions o;
  o.kernel_wait_ns = 30;
  o.micro_ns = 20;
  const Trace t = Builder()
                      .kernel("a", 0, 100, 7, 0, 1)
                      .kernel("a", 110, 200, 7, 2, 3)  // gap 10: kernel wait, micro
                      .kernel("a", 260, 300, 7, 4, 5)  // gap 60: other, macro
                      .kernel("a", 340, 500, 7, 6, 7)  // gap 40: other, macro
                      .done();
  const IdleCauses all = idle_causes(t, {0, -1}, o);
  EXPECT_EQ(all.idle, 110);
  EXPECT_EQ(all.micro, 10);
  EXPECT_EQ(all.macro, 100);
  // A window from 150 to 320: the activities clipped to it, gaps 200-260 only (the window
  // ends inside the gap 300-340, which is past the last work inside it).
  const std::vector<IdleCauses> w = window_idle_causes(t, 0, {{150, 320}, {0, 50}}, o);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].idle, 60);
  EXPECT_EQ(w[0].other, 60);
  EXPECT_EQ(w[1].idle, 0);
  const Intervals win{{150, 320}};
  EXPECT_EQ(idle_causes(t, {0, -1}, o, &win), w[0]);
  EXPECT_EQ(w[0].idle, breakdown(t, {0, -1}, &win).idle);
}

// On random traces (several devices and streams, overlaps, zero-length rows, random calls), the
// causes add up to idle, and idle is Breakdown's, for the process, each device and windows.
TEST(Why, PartsAddUpToBreakdownIdleOnRandomTraces) {
  std::mt19937_64 rng(25);
  for (int trial = 0; trial < 200; ++trial) {
    Builder b;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int k = 0; k < n; ++k) {
      const auto s = static_cast<int64_t>(rng() % 1000);
      const auto e = s + static_cast<int64_t>(rng() % 80);
      const int64_t cs = rng() % 3 == 0 ? -1 : static_cast<int64_t>(rng() % 1000);
      b.kernel(rng() % 2 ? "gemm" : "ncclDevKernel_AllReduce", s, e,
               7 + static_cast<int>(rng() % 3), cs, cs < 0 ? -1 : cs + 5, "cudaLaunchKernel",
               static_cast<int>(rng() % 2));
    }
    const Trace t = b.done();
    IdleOptions o;
    o.kernel_wait_ns = static_cast<int64_t>(rng() % 50);
    o.micro_ns = 1 + static_cast<int64_t>(rng() % 50);
    auto check = [&](const IdleCauses& c, int64_t idle) {
      EXPECT_EQ(c.idle, idle);
      EXPECT_EQ(c.host_wait + c.kernel_wait + c.other, c.idle);
      EXPECT_EQ(c.micro + c.macro, c.idle);
    };
    check(idle_causes(t, {0, -1}, o), breakdown(t, {0, -1}).idle);
    for (int d = 0; d < 2; ++d) check(idle_causes(t, {0, d}, o), breakdown(t, {0, d}).idle);
    const auto w0 = static_cast<int64_t>(rng() % 900);
    const Interval w{w0, w0 + 1 + static_cast<int64_t>(rng() % 300)};
    const Intervals win{w};
    check(window_idle_causes(t, 0, {w}, o)[0], breakdown(t, {0, -1}, &win).idle);
    int64_t streams = 0;
    for (const StreamIdle& s : stream_idle(t, 0, o)) {
      EXPECT_EQ(s.causes.host_wait + s.causes.kernel_wait + s.causes.other, s.causes.idle);
      streams += s.activities;
    }
    EXPECT_LE(streams, n);
  }
}

TEST(Why, LaunchStatisticsAndHtasOutliers) {
  LaunchOptions o;  // HTA's: 50 us, 100 us
  const Trace t =
      Builder()
          .kernel("gemm", 10'000, 100'000, 7, 0, 5'000)            // delay 5 us
          .kernel("gemm", 300'000, 400'000, 7, 6'000, 10'000)      // delay 290 us: outlier
          .kernel("tiny", 500'000, 502'000, 7, 20'000, 30'000)     // 2 us on the GPU after 10
          .kernel("slow", 600'000, 601'000, 7, 40'000, 100'000)    // call of 60 us: outlier
          .kernel("early", 700'000, 800'000, 7, 690'000, 710'000)  // starts before its call ends
          .kernel("triton", 900'000, 910'000, 7, 800'000, 801'000, "cuLaunchKernel")
          .done();
  const std::vector<LaunchStat> s = launch_stats(t, 0, o);
  ASSERT_EQ(s.size(), 4u);  // by name; cuLaunchKernel is not one of HTA's launch calls
  EXPECT_EQ(s[0].name, "early");
  EXPECT_EQ(s[0].delay_ns, 0);  // negative delays are 0, as HTA clips them
  EXPECT_EQ(s[1].name, "gemm");
  EXPECT_EQ(s[1].count, 2);
  EXPECT_EQ(s[1].cpu_ns, 5'000 + 4'000);
  EXPECT_EQ(s[1].gpu_ns, 90'000 + 100'000);
  EXPECT_EQ(s[1].delay_ns, 5'000 + 290'000);
  EXPECT_EQ(s[1].delay_outliers, 1);
  EXPECT_EQ(s[1].delay.count(), 2);
  EXPECT_EQ(s[2].name, "slow");
  EXPECT_EQ(s[2].runtime_outliers, 1);
  EXPECT_EQ(s[2].short_gpu, 0);  // shorter than its call, but the call is an outlier itself
  EXPECT_EQ(s[3].name, "tiny");
  EXPECT_EQ(s[3].short_gpu, 1);
  // Only launches starting inside a window.
  const Intervals win{{250'000, 550'000}};
  const auto w = launch_stats(t, 0, o, &win);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].count, 1);
}

TEST(Why, LaunchCallNamesAsCuptiAndPytorchSpellThem) {
  EXPECT_TRUE(is_launch_call("cudaLaunchKernel"));
  EXPECT_TRUE(is_launch_call("cudaLaunchKernel_v7000"));
  EXPECT_TRUE(is_launch_call("cudaLaunchKernel_ptsz_v7000"));
  EXPECT_TRUE(is_launch_call("cudaLaunchKernelExC_v11060"));
  EXPECT_TRUE(is_launch_call("cudaMemcpyAsync_v3020"));
  EXPECT_TRUE(is_launch_call("cudaMemsetAsync"));
  EXPECT_FALSE(is_launch_call("cuLaunchKernel"));
  EXPECT_FALSE(is_launch_call("cudaGraphLaunch_v10000"));
  EXPECT_FALSE(is_launch_call("cudaLaunchKernel_x"));
  EXPECT_FALSE(is_launch_call("_v7000"));
  EXPECT_FALSE(is_launch_call(""));
}

TEST(Why, QueueFillsAndTimeAtTheLimit) {
  // Five kernels launched at once (calls returning at 1..5), run one after another for 100
  // each: the queue holds 5 from 5 to 100, then 4, 3, 2, 1.
  Builder b;
  for (int k = 0; k < 5; ++k) b.kernel("k", int64_t{100} * k, int64_t{100} * (k + 1), 7, k, k + 1);
  const Trace t = b.done();
  QueueOptions o;
  o.limit = 4;
  const std::vector<StreamQueue> q = stream_queues(t, 0, o);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q[0].launches, 5);
  EXPECT_EQ(q[0].max, 5);
  EXPECT_EQ(q[0].max_at, 5);
  EXPECT_EQ(q[0].span_ns, 499);
  EXPECT_EQ(q[0].at_limit_ns, 196);  // 4 or more: 4 to 200
  // Time-weighted: 1 for 1, 2 for 1, 3 for 1, 4 for 1, 5 for 95, 4 for 100, 3, 2, 1 for 100.
  EXPECT_NEAR(q[0].mean, (1 + 2 + 3 + 4 + 5 * 95 + 400 + 300 + 200 + 100) / 499.0, 1e-9);
  EXPECT_EQ(q[0].p50, 3);
  EXPECT_EQ(q[0].p90, 5);
  const std::vector<QueuePoint> s = queue_series(t, 0, 0, 7);
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s.front().at, 1);
  EXPECT_EQ(s.front().length, 1);
  EXPECT_EQ(s.back().length, 0);
  EXPECT_EQ(s.back().at, 500);
  // Every stream at once (the timeline's rows): the same series, and none for a stream without
  // launch calls.
  Builder two;
  for (int k = 0; k < 5; ++k)
    two.kernel("k", int64_t{100} * k, int64_t{100} * (k + 1), 7, k, k + 1);
  two.kernel("uncalled", 0, 10, 9);
  const Trace t2 = two.done();
  const std::vector<StreamSeries> all = queue_series(t2, 0);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].stream, 7);
  EXPECT_EQ(all[0].points.size(), s.size());
  EXPECT_EQ(all[0].points.back().at, 500);
}

TEST(Why, LaunchCallsFollowTheirRowsThroughTheSort) {
  // Rows pushed out of order: the sort moves each row's call with it.
  const Trace t = Builder()
                      .kernel("late", 500, 600, 7, 400, 410)
                      .kernel("early", 0, 100, 7, 1, 2)
                      .kernel("none", 200, 300)
                      .done();
  const Activities& a = t.activities;
  ASSERT_TRUE(a.has_calls());
  ASSERT_EQ(a.call_end.size(), a.size());
  EXPECT_EQ(a.start[0], 0);
  EXPECT_EQ(a.call_end[0], 2);
  EXPECT_EQ(a.call_end[1], kNoCall);
  EXPECT_EQ(a.call_start[2], 400);
  EXPECT_EQ(t.names[static_cast<size_t>(a.call_name[2])], "cudaLaunchKernel");
}

// Frequent kernel sequences: a stream running a > b > c three times holds a > b > c 3 times,
// b > c > a and c > a > b twice each; another stream's kernels never join a sequence across
// streams; names are normalized (template arguments dropped: a<>); a window keeps its kernels only.
TEST(Why, FrequentKernelSequencesPerStream) {
  Builder b;
  int64_t t = 0;
  for (int k = 0; k < 3; ++k) {
    for (const char* n : {"a<float>", "b", "c"}) {
      b.kernel(n, t, t + 10, 7);
      b.kernel("other", t + 1, t + 2, 9);
      t += 20;
    }
  }
  const Trace tr = b.done();
  SequenceOptions o;
  const Sequences s = kernel_sequences(tr, 0, o);
  ASSERT_GE(s.top.size(), 3u);
  EXPECT_EQ(s.top[0].names, (std::vector<std::string>{"other", "other", "other"}));
  EXPECT_EQ(s.top[0].count, 7);
  EXPECT_EQ(s.top[1].names, (std::vector<std::string>{"a<>", "b", "c"}));
  EXPECT_EQ(s.top[1].count, 3);
  EXPECT_EQ(s.top[1].span_ns, 3 * 50);
  EXPECT_EQ(s.top[1].gpu_ns, 3 * 30);
  EXPECT_EQ(s.top[2].count, 2);
  EXPECT_EQ(s.occurrences, 7 + 7);
  o.length = 2;
  const Intervals first{{0, 60}};  // a, b, c on stream 7 (and 3 others)
  const Sequences w = kernel_sequences(tr, 0, o, &first);
  EXPECT_EQ(w.occurrences, 2 + 2);
  // The kernels of a > b > c's occurrences (the GUI's search selects them): all nine of stream
  // 7, none of stream 9; b > c > a leaves out the first a and the last b and c.
  auto members = [&](const std::vector<std::string>& names) {
    const std::vector<uint8_t> m = sequence_members(tr, names);
    std::vector<std::string> out;
    for (size_t i = 0; i < m.size(); ++i) {
      if (m[i] != 0) out.push_back(tr.names[static_cast<size_t>(tr.activities.name[i])]);
    }
    return out;
  };
  EXPECT_EQ(members({"a<>", "b", "c"}).size(), 9u);
  const std::vector<std::string> bca = members({"b", "c", "a<>"});
  EXPECT_EQ(bca.size(), 6u);
  EXPECT_EQ(bca.front(), "b");
  EXPECT_EQ(bca.back(), "a<float>");
  EXPECT_TRUE(members({"a<>", "c"}).empty());
  EXPECT_TRUE(members({"b"}).empty());  // one name is no sequence
}

TEST(Why, SlackIsZeroOnThePathAndTheRoomBeforeTheEndElsewhere) {
  // Stream 7: A 10-100 (launched 0-5), B 100-200 (launched 20-30); stream 9: C 10-50 (launched
  // 5-8). Window 0-200. B ends the window and A binds B: both 0. C could end as late as 200:
  // 150. B's launch could end as late as B's start: 70. C's launch is bound by the next call
  // (the host's 12 between them kept, that call's latest start 90): 78 - 8 = 70. A's launch
  // binds A (its latency to A's start, 5, kept): 0, on the path.
  Builder b;
  b.kernel("A", 10, 100, 7, 0, 5).kernel("B", 100, 200, 7, 20, 30).kernel("C", 10, 50, 9, 5, 8);
  const Trace t = b.done();
  std::map<std::pair<std::string, bool>, int64_t> got;
  for (const Slack& s : slack(t, 0, {0, 200})) {
    ASSERT_GE(s.row, 0);
    got[{t.names[static_cast<size_t>(t.activities.name[static_cast<size_t>(s.row)])], s.call}] =
        s.slack_ns;
  }
  const std::map<std::pair<std::string, bool>, int64_t> want = {
      {{"A", false}, 0}, {{"B", false}, 0}, {{"C", false}, 150},
      {{"A", true}, 0},  {{"B", true}, 70}, {{"C", true}, 70}};
  EXPECT_EQ(got, want);
  // Every operation the path walks through has no slack.
  for (const PathSegment& seg : path_segments(t, 0, {0, 200})) {
    if (seg.row < 0 || seg.part == PathPart::host) continue;
    const auto name = static_cast<size_t>(t.activities.name[static_cast<size_t>(seg.row)]);
    EXPECT_EQ(got[std::make_pair(t.names[name], false)], 0) << t.names[name];
  }
}

TEST(Why, SlackOfHostileTracesStaysBounded) {
  // Random rows and calls (overlapping, of no duration, calls after their rows): never
  // negative, never beyond the window.
  std::mt19937_64 rng(7);
  for (int round = 0; round < 20; ++round) {
    Builder b;
    for (int k = 0; k < 60; ++k) {
      const int64_t s = static_cast<int64_t>(rng() % 1000);
      const int64_t e = s + static_cast<int64_t>(rng() % 50);
      const int64_t cs = static_cast<int64_t>(rng() % 1000);
      b.kernel("k" + std::to_string(k % 5), s, e, static_cast<int>(rng() % 3), cs,
               cs + static_cast<int64_t>(rng() % 20));
    }
    const Trace t = b.done();
    for (const Slack& s : slack(t, 0, {100, 900})) {
      EXPECT_GE(s.slack_ns, 0);
      EXPECT_LE(s.slack_ns, 800);
    }
  }
}

TEST(Why, RouteSegmentsWalkTheLateRanksComputeIntoTheCollective) {
  // The golden case why_critical_path_two_ranks: the path from rank 0's end goes back through
  // the AllReduce into rank 1's gemm_fwd (590 µs). Walked again over the timeline, its
  // segments add up to the path and its parts.
  const std::string dir = std::string(C3_SOURCE_DIR) + "/tests/golden/why_critical_path_two_ranks/";
  const OpenOptions oo;
  OpenedTraces opened =
      open_traces(std::vector<std::string>{dir + "rank0.json", dir + "rank1.json"}, oo);
  Trace& t = opened.trace;
  AnalyzeOptions ao;
  const Report r = analyze(t, {dir + "rank0.json", dir + "rank1.json"}, ao);
  ASSERT_EQ(r.paths.size(), 1u);
  const StepPath& p = r.paths[0];
  ASSERT_EQ(p.route.size(), 3u);  // rank 0's tail, the AllReduce, rank 1's chain
  EXPECT_FALSE(p.route[0].collective);
  EXPECT_TRUE(p.route[1].collective);
  EXPECT_NE(p.route[2].process, p.route[0].process);
  PathParts parts{};
  int64_t total = 0, late_compute = 0;
  for (const PathSegment& s : route_segments(t, r.paths)) {
    parts[static_cast<size_t>(s.part)] += s.to - s.from;
    total += s.to - s.from;
    if (s.process == p.route[2].process && s.part == PathPart::compute)
      late_compute += s.to - s.from;
  }
  EXPECT_EQ(total, p.path_ns);
  EXPECT_EQ(parts, p.parts);
  EXPECT_EQ(late_compute, 590000);
  // Rank 0's gemm_fwd ended at 300; its AllReduce's kernel waited for its launch (not for
  // gemm_fwd) and the AllReduce's own work began at 700, when rank 1 arrived: 400 µs of slack;
  // rank 1's gemm_fwd is on the path: none.
  for (int process = 0; process < 2; ++process) {
    const bool late = process == p.route[2].process;
    const StepSample& step = r.steps[static_cast<size_t>(process)].at(0);
    for (const Slack& sl : slack(t, process, {step.start, step.end})) {
      const auto i = static_cast<size_t>(sl.row);
      if (sl.call || t.names[static_cast<size_t>(t.activities.name[i])] != "gemm_fwd") continue;
      EXPECT_EQ(sl.slack_ns, late ? 0 : 400000) << process;
    }
  }
}

// Host threads are told apart: a launch call waits for its own thread's previous call, not for
// another thread's. Thread 1 launches k1 (call 0-10) and, soon after, k3 (call 150-160; k3 runs
// 160-400); thread 2 launched k2 in between (call 40-50). The path from k3's launch goes back to
// thread 1's call, so k2's launch is not on it (one host sequence would put it there). A thread
// idle for more than 1 ms was blocked on something unseen: its next call waits for the latest
// call of any thread (the main thread resuming after backward()).
TEST(Why, TheHostPathStaysOnTheCallsThread) {
  Builder b;
  b.kernel("k1", 20, 30, 7, 0, 10, "cudaLaunchKernel", 0, 0, 1);
  b.kernel("k2", 60, 90, 8, 40, 50, "cudaLaunchKernel", 0, 0, 2);
  b.kernel("k3", 160, 400, 7, 150, 160, "cudaLaunchKernel", 0, 0, 1);
  const Trace t = b.done();
  size_t k2 = 0;
  for (size_t i = 0; i < t.activities.size(); ++i) {
    if (t.names[static_cast<size_t>(t.activities.name[i])] == "k2") k2 = i;
  }
  const std::vector<PathSegment> segs = path_segments(t, 0, {0, 400});
  int64_t host = 0, total = 0;
  for (const PathSegment& s : segs) {
    EXPECT_NE(s.row, static_cast<int64_t>(k2)) << "k2's launch (thread 2) is on thread 1's path";
    if (s.part == PathPart::host) host += s.to - s.from;
    total += s.to - s.from;
  }
  EXPECT_EQ(total, 400);
  EXPECT_EQ(host, 150 + 10);  // k3's call back to k1's call's end, and k1's call itself
  // One thread (the old reading, or a trace without thread ids): k2's launch joins the path.
  Builder one;
  one.kernel("k1", 20, 30, 7, 0, 10);
  one.kernel("k2", 60, 90, 8, 40, 50);
  one.kernel("k3", 160, 400, 7, 150, 160);
  const Trace t1 = one.done();
  bool k2_on = false;
  for (const PathSegment& s : path_segments(t1, 0, {0, 400})) {
    k2_on = k2_on ||
            (s.row >= 0 &&
             t1.names[static_cast<size_t>(t1.activities.name[static_cast<size_t>(s.row)])] == "k2");
  }
  EXPECT_TRUE(k2_on);
  // Thread 1 idle 2 ms between its calls (10 to 2,000,150) while thread 2 launched k2 at
  // 1,000,040: the hand-off goes through k2's launch.
  Builder blocked;
  blocked.kernel("k1", 20, 30, 7, 0, 10, "cudaLaunchKernel", 0, 0, 1);
  blocked.kernel("k2", 1'000'060, 1'000'090, 8, 1'000'040, 1'000'050, "cudaLaunchKernel", 0, 0, 2);
  blocked.kernel("k3", 2'000'160, 2'000'400, 7, 2'000'150, 2'000'160, "cudaLaunchKernel", 0, 0, 1);
  const Trace tb = blocked.done();
  bool handed = false;
  for (const PathSegment& s : path_segments(tb, 0, {0, 2'000'400})) {
    handed =
        handed ||
        (s.row >= 0 &&
         tb.names[static_cast<size_t>(tb.activities.name[static_cast<size_t>(s.row)])] == "k2");
  }
  EXPECT_TRUE(handed);
}
