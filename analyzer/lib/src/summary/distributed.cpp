#include "c3/analyzer/summary/distributed.h"

#include <isa-l/igzip_lib.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>

#include "c3/analyzer/summary/wire.h"
#include "c3/common/text_limits.h"
#include "c3/common/workers.h"

namespace c3::analyzer {

// A summary's JSON while it waits for process 0 to take it (the other processes hold their whole
// share until then, process 0 those of its own that wait for other inputs): deflated with ISA-L
// at its fastest level, a fraction of its bytes (summaries are repetitive JSON: gzip -1 makes one
// of the 256-rank job's an eighth). "D" or "S" (stored: it did not shrink), the
// length, the bytes; "" stays "".
std::string held_summary(std::string text) {
  if (text.empty() || text.size() > UINT32_MAX) return text.empty() ? text : "S" + text;
  std::string out(1 + 8 + text.size() / 2 + 4096, '\0');
  auto z = std::make_unique<isal_zstream>();
  isal_deflate_stateless_init(z.get());
  z->next_in = reinterpret_cast<uint8_t*>(text.data());
  z->avail_in = static_cast<uint32_t>(text.size());
  z->next_out = reinterpret_cast<uint8_t*>(out.data() + 9);
  z->avail_out = static_cast<uint32_t>(out.size() - 9);
  z->level = 0;
  z->end_of_stream = 1;
  z->flush = NO_FLUSH;
  z->gzip_flag = IGZIP_DEFLATE;
  if (isal_deflate_stateless(z.get()) != COMP_OK) return "S" + text;
  out.resize(out.size() - z->avail_out);
  out[0] = 'D';
  const uint64_t n = text.size();
  for (int b = 0; b < 8; ++b)
    out[1 + static_cast<size_t>(b)] = static_cast<char>((n >> (8 * b)) & 0xff);
  out.shrink_to_fit();
  return out;
}

std::string summary_of_held(const std::string& h) {
  auto garbled = [] {
    return std::runtime_error("a summary held for process 0 is garbled (c3scope's own bytes)");
  };
  if (h.empty()) return h;
  if (h[0] == 'S') return h.substr(1);
  uint64_t n = 0;
  if (h[0] != 'D' || h.size() < 9) throw garbled();
  for (int b = 0; b < 8; ++b)
    n |= static_cast<uint64_t>(static_cast<unsigned char>(h[1 + static_cast<size_t>(b)]))
         << (8 * b);
  // (deflate makes at most 1,032 bytes of one: a garbled length must not ask for gigabytes)
  if (n > UINT32_MAX || h.size() - 9 > UINT32_MAX || n > (h.size() - 9) * 1032 + 64)
    throw garbled();
  std::string text(n, '\0');
  auto z = std::make_unique<inflate_state>();
  isal_inflate_init(z.get());
  z->next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(h.data() + 9));
  z->avail_in = static_cast<uint32_t>(h.size() - 9);
  z->next_out = reinterpret_cast<uint8_t*>(text.data());
  z->avail_out = static_cast<uint32_t>(n);
  z->crc_flag = ISAL_DEFLATE;
  if (isal_inflate_stateless(z.get()) != ISAL_DECOMP_OK || z->avail_out != 0 || z->avail_in != 0)
    throw garbled();
  return text;
}

namespace {

// A field of /proc/self/status in kB (VmRSS, VmHWM); 0 where there is none.
int64_t status_kb(const char* field) {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  int64_t kb = 0;
  const size_t n = std::strlen(field);
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, field, n) == 0 && line[n] == ':') kb = std::atoll(line + n + 1);
  }
  std::fclose(f);
  return kb;
}

// Starts the peak (VmHWM) again from the current resident size (Linux: clear_refs 5).
void reset_peak() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return;
  std::fputs("5", f);
  std::fclose(f);
}

// The cores this process may run on (its affinity mask), at most `cores`.
int usable_cores(int cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cores;
  return std::clamp(CPU_COUNT(&set), 1, cores);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

uint64_t file_size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto n = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(n);
}

InputFormat format_of(uint64_t v) {
  switch (v) {
    case 0:
      return InputFormat::c3scope;
    case 1:
      return InputFormat::kineto;
    case 2:
      return InputFormat::nsys;
    case 3:
      return InputFormat::summary;
    default:
      throw std::runtime_error("a message between c3scope's processes names an unknown format");
  }
}

uint64_t format_code(InputFormat f) {
  switch (f) {
    case InputFormat::c3scope:
      return 0;
    case InputFormat::kineto:
      return 1;
    case InputFormat::nsys:
      return 2;
    case InputFormat::summary:
      return 3;
  }
  return 0;
}

Deal unpack_deal(const std::string& bytes) {
  Deal d;
  Unpack u(bytes);
  const uint64_t n = u.u64();
  for (uint64_t i = 0; i < n; ++i) {
    Input in;
    in.path = u.str();
    in.format = format_of(u.u64());
    d.inputs.push_back(std::move(in));
    d.owner.push_back(static_cast<int>(u.u64()));
    d.names.push_back(u.str());
  }
  return d;
}

std::string pack_deal(const Deal& d) {
  Pack p;
  p.u64(d.inputs.size());
  for (size_t i = 0; i < d.inputs.size(); ++i) {
    p.str(d.inputs[i].path).u64(format_code(d.inputs[i].format));
    p.u64(static_cast<uint64_t>(d.owner[i])).str(d.names[i]);
  }
  return p.take();
}

// After a phase: whether any process failed; if one did, every process gets the first error (in
// input order) or, with none, the cancel.
struct Outcome {
  bool failed = false;
  bool cancelled = false;
  size_t at = SIZE_MAX;  // the input it is about (the first its line names, else the share's first)
  std::string error;
};

bool settle(Comm& comm, Outcome& mine, DistributedResult& res) {
  if (!comm.any(mine.failed || mine.cancelled)) return false;
  Pack p;
  p.u64(mine.cancelled ? 1 : 0).u64(mine.at).str(mine.error);
  const std::vector<std::string> all = comm.gather(p.take(), 0);
  Pack verdict;
  if (comm.rank() == 0) {
    Outcome first;
    for (const std::string& b : all) {
      Unpack u(b);
      const bool cancelled = u.u64() != 0;
      const uint64_t at = u.u64();
      std::string error = u.str();
      if (!error.empty() && (first.error.empty() || at < first.at)) {
        first.at = at;
        first.error = std::move(error);
      }
      first.cancelled = first.cancelled || cancelled;
    }
    verdict.u64(first.error.empty() ? 1 : 0).str(first.error);
  }
  const std::string v = comm.broadcast(verdict.take(), 0);
  Unpack u(v);
  res.ok = false;
  res.cancelled = u.u64() != 0;
  res.error = u.str();
  return true;
}

// Whether a name reaches process 0 as it is: a summary file keeps plain ASCII within a third of
// its cap (text_limits.h) unchanged; other names may be replaced (bytes that are not UTF-8) or cut.
bool travels_as_is(const std::string& s) {
  return s.size() <= common::kNameLimit / 3 && std::all_of(s.begin(), s.end(), [](char c) {
           return static_cast<unsigned char>(c) < 0x80;
         });
}

// A summary whose communicator, op or host names would change on the way to process 0 is made as
// process 0 will see it (through a summary file's JSON), before its records go to the owners: the
// names the records are matched by are then the same everywhere.
void as_process_0_sees_it(RankSummary& s, const AnalyzeOptions& o) {
  bool same = travels_as_is(s.process.host);
  for (const std::string& c : s.calls.comms) same = same && travels_as_is(c);
  for (const std::string& c : s.calls.ops) same = same && travels_as_is(c);
  if (same) return;
  std::vector<RankSummary> r = summaries_from_json(summaries_to_json({s}, o), s.input);
  if (r.size() != 1) return;
  r[0].input = s.input;
  s = std::move(r[0]);
}

// A rank's place in the job: its input's first rank (`base`, known once process 0 has every
// summary) and its place among the input's ranks, as a packing process names it.
uint64_t rank_at(const std::vector<uint64_t>& base, uint64_t input, uint64_t index, size_t ranks) {
  const uint64_t end = input + 1 < base.size() ? base[input + 1] : ranks;
  if (input >= base.size() || base[input] > end || index >= end - base[input])
    throw std::runtime_error("a process sent the parts of no rank");
  return base[input] + index;
}

[[noreturn]] void garbled() {
  throw std::runtime_error("a message between c3scope's processes is garbled");
}

// a - b and a + d, wrapping past int64 (differences of times that come from other people's
// traces, sent and added back as they were).
int64_t wrapped_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t wrapped_add(int64_t a, int64_t d) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(d));
}

// A rank's collective records packed for their communicators' owners (out: one buffer per
// process) as soon as its input is mapped: one block per run of sequence numbers of one
// communicator (the input and the rank's place, the arrival tolerance, the communicator, the
// ops, then each record's sequence number, op, start and end). Records that cannot be matched
// (no communicator or sequence number) sort last and are not sent.
void pack_records(std::vector<std::string>& out, size_t input, size_t index,
                  const RankCollectives& c) {
  const int size = static_cast<int>(out.size());
  const int64_t tolerance = arrival_tolerance_ns(c);
  const std::vector<CollectiveRecord>& r = c.records;
  size_t k = 0;
  while (k < r.size()) {
    const CollectiveRecord& first = r[k];
    const auto ci = static_cast<size_t>(first.comm);
    if (first.comm < 0 || first.seq < 0 || ci >= c.comms.size()) break;
    size_t end = k;
    while (end < r.size() && r[end].comm == first.comm && r[end].seq >= 0 &&
           r[end].seq / kSeqRun == first.seq / kSeqRun)
      ++end;
    Pack to;
    to.u64(input).u64(index).var(tolerance).str(c.comms[ci]).u64(c.ops.size());
    for (const std::string& op : c.ops) to.str(op);
    to.u64(end - k);
    // (sequence numbers and starts as differences from the record before, ends from the start:
    // a few bytes each where the times themselves take nine)
    int64_t seq = 0, start = 0;
    for (; k < end; ++k) {
      const CollectiveRecord& x = r[k];
      to.var(wrapped_sub(x.seq, seq)).var(x.op).var(wrapped_sub(x.gpu_start, start));
      to.var(wrapped_sub(x.gpu_end, x.gpu_start));
      seq = x.seq;
      start = x.gpu_start;
    }
    out[owner_of(c.comms[ci], first.seq, size)] += to.take();
  }
}

// A rank's gaps that may be communication wait (CommGap), packed for the owners of their
// collectives (who know the last arrivals) as its input is mapped: one block per communicator and
// owner (the input and the rank's place, the communicator, then each gap's scope, device, stream,
// step, sequence number and window). Gaps at a collective without a communicator or sequence
// number are not sent (no owner holds such a collective).
void pack_gaps(std::vector<std::string>& out, size_t input, size_t index, const RankSummary& s) {
  const int size = static_cast<int>(out.size());
  std::map<std::pair<size_t, int32_t>, std::vector<const CommGap*>> blocks;
  for (const CommGap& g : s.comm_gaps) {
    const auto c = static_cast<size_t>(g.comm);
    if (g.comm < 0 || c >= s.calls.comms.size() || g.seq < 0) continue;
    blocks[{owner_of(s.calls.comms[c], g.seq, size), g.comm}].push_back(&g);
  }
  for (const auto& [key, gaps] : blocks) {
    Pack to;
    to.u64(input).u64(index).str(s.calls.comms[static_cast<size_t>(key.second)]).u64(gaps.size());
    for (const CommGap* g : gaps) {
      to.u64(static_cast<uint64_t>(g->scope)).var(g->device).var(g->stream).var(g->step);
      to.var(g->seq).var(g->from).var(g->to);
    }
    out[key.first] += to.take();
  }
}

uint64_t bits(int64_t v) {
  return static_cast<uint64_t>(v);
}
int64_t signed_of(uint64_t v) {
  return static_cast<int64_t>(v);
}

// One owner's matched collectives as process 0 reads them, one at a time, from the end of the
// owner's message (spread_cross_rank): its names, then each collective.
class OwnerCollectives {
 public:
  // `ranks`: the job's (a straggler is one of them, a collective's ranks at most all).
  OwnerCollectives(Unpack u, size_t ranks) : u_(u), ranks_(ranks) {
    ops_.resize(count());
    for (std::string_view& op : ops_) op = u_.view();
    comms_.resize(count());
    for (std::string_view& c : comms_) c = u_.view();
    left_ = count();
  }
  size_t left() const { return left_; }
  const std::vector<std::string_view>& ops() const { return ops_; }
  // Reads the next collective; false after the last.
  bool next() {
    if (left_ == 0) {
      if (!u_.done()) garbled();
      return false;
    }
    --left_;
    const int64_t step = u_.var();
    const uint64_t from = first_ ? 0 : static_cast<uint64_t>(m_.comm);
    if (step < 0 || static_cast<uint64_t>(step) >= comms_.size() - from) garbled();
    const auto c = static_cast<int64_t>(from + static_cast<uint64_t>(step));
    const int64_t seq = u_.var();
    m_.seq = !first_ && c == m_.comm ? wrapped_add(m_.seq, seq) : seq;
    m_.comm = static_cast<int32_t>(c);
    const int64_t op = u_.var();
    if (op < -1 || (op >= 0 && static_cast<uint64_t>(op) >= ops_.size())) garbled();
    m_.op = static_cast<int32_t>(op);
    const int64_t n = u_.var();
    if (n < 0 || static_cast<uint64_t>(n) > ranks_) garbled();
    m_.ranks = static_cast<int32_t>(n);
    m_.skew_ns = u_.var();
    const int64_t straggler = u_.var();
    if (straggler < -1 || (straggler >= 0 && static_cast<uint64_t>(straggler) >= ranks_)) garbled();
    m_.straggler = static_cast<int32_t>(straggler);
    first_ = false;
    return true;
  }
  // The collective read last; its comm and op are this owner's indices.
  const MatchedCollective& current() const { return m_; }
  std::string_view comm() const { return comms_[static_cast<size_t>(m_.comm)]; }

 private:
  size_t count() {  // (each name or collective takes at least a byte)
    const int64_t n = u_.var();
    if (n < 0 || static_cast<uint64_t>(n) > u_.left()) garbled();
    return static_cast<size_t>(n);
  }
  Unpack u_;
  size_t ranks_;
  std::vector<std::string_view> ops_, comms_;
  size_t left_ = 0;
  bool first_ = true;
  MatchedCollective m_;
};

// The owners' matched collectives into `out` in cross_rank's order, by communicator name, then
// sequence number: each owner's come in that order, and no two owners have the same one, so a
// merge gives the order a sort would without a second copy of them (a job of 256 ranks matches
// 261,000).
void merge_collectives(std::vector<OwnerCollectives>& owners, CrossRank& out) {
  size_t total = 0;
  MatchNames names;
  std::vector<std::vector<int32_t>> op_index(owners.size());
  for (size_t k = 0; k < owners.size(); ++k) {
    total += owners[k].left();
    for (const std::string_view op : owners[k].ops())
      op_index[k].push_back(names.op(out, std::string(op)));
  }
  out.collectives.reserve(out.collectives.size() + total);
  // (the owner later in process order last, as in a stable sort of the owners' lists one after
  // the other)
  auto after = [&owners](size_t a, size_t b) {
    const std::string_view x = owners[a].comm(), y = owners[b].comm();
    if (x != y) return x > y;
    if (owners[a].current().seq != owners[b].current().seq)
      return owners[a].current().seq > owners[b].current().seq;
    return a > b;
  };
  std::priority_queue<size_t, std::vector<size_t>, decltype(after)> next(after);
  for (size_t k = 0; k < owners.size(); ++k) {
    if (owners[k].next()) next.push(k);
  }
  while (!next.empty()) {
    const size_t k = next.top();
    next.pop();
    MatchedCollective m = owners[k].current();
    const std::string_view name = owners[k].comm();
    if (out.comms.empty() || out.comms.back() != name) out.comms.emplace_back(name);
    m.comm = static_cast<int32_t>(out.comms.size() - 1);
    m.op = m.op < 0 ? -1 : op_index[k][static_cast<size_t>(m.op)];
    out.collectives.push_back(m);
    if (owners[k].next()) next.push(k);
  }
}

// A call as its communicator's owner keeps it.
struct OwnedCall {
  int64_t seq;
  int process;
  const std::string* op;
  int64_t start, end;
};

// A gap as the owner of its collective keeps it.
struct OwnedGap {
  CommGap g;
  int rank;
};

// Cross-rank work where the records are (run_distributed's step 3): every process calls it;
// process 0 gets the parts the reduce needs: the clock offsets, the matched collectives, the
// waits, and the communication wait of the ranks' gaps (each worked out by the owner of the
// gap's collective). `processes` (process 0): every rank's, in order.

CrossRankParts spread_cross_rank(Comm& comm, std::vector<std::string> bytes,
                                 std::vector<std::string> gap_bytes,
                                 const std::vector<uint64_t>& base, const std::vector<int>& domain,
                                 int domains, std::vector<Process>& processes,
                                 const AnalyzeOptions& o, int64_t& owned,
                                 std::vector<int64_t>& offset) {
  const size_t ranks = domain.size();
  std::vector<std::string> in = comm.exchange(std::move(bytes));
  std::vector<std::string> gaps_in = comm.exchange(std::move(gap_bytes));
  // The gaps at the owner's collectives, by communicator, and the last arrivals they need.
  std::map<std::string, std::vector<OwnedGap>> gaps;
  std::map<std::string, std::map<int64_t, LastArrivals>> lasts;  // (communicator, seq)
  // The owner's communicators, each with every rank's calls, grouped by sequence number.
  std::deque<std::vector<std::string>> op_tables;
  std::map<std::string, std::vector<OwnedCall>> calls;
  std::vector<int64_t> tolerance(ranks, 0);
  Pack ends_out;
  comm.run([&] {
    for (std::string& b : in) {
      Unpack u(b);
      while (!u.done()) {
        const uint64_t input = u.u64();  // (read in order: arguments are not)
        const uint64_t p = rank_at(base, input, u.u64(), ranks);
        tolerance[p] = u.var();
        std::vector<OwnedCall>& v = calls[u.str()];
        std::vector<std::string>& ops = op_tables.emplace_back(u.count(8));
        for (std::string& op : ops) op = u.str();
        const uint64_t count = u.u64();
        int64_t seq = 0, start = 0;
        for (uint64_t j = 0; j < count; ++j) {
          OwnedCall c{};
          c.seq = seq = wrapped_add(seq, u.var());
          const int64_t op = u.var();
          c.op = op >= 0 && static_cast<uint64_t>(op) < ops.size() ? &ops[static_cast<size_t>(op)]
                                                                   : nullptr;
          c.start = start = wrapped_add(start, u.var());
          c.end = wrapped_add(c.start, u.var());
          c.process = static_cast<int>(p);
          v.push_back(c);
          ++owned;
        }
      }
      b = {};  // parsed: its bytes are not needed
    }
    for (std::string& b : gaps_in) {
      Unpack u(b);
      while (!u.done()) {
        const uint64_t input = u.u64();  // (read in order: arguments are not)
        const uint64_t p = rank_at(base, input, u.u64(), ranks);
        std::string name = u.str();
        std::map<int64_t, LastArrivals>& last_of = lasts[name];
        std::vector<OwnedGap>& v = gaps[std::move(name)];
        const uint64_t count = u.u64();
        for (uint64_t j = 0; j < count; ++j) {
          OwnedGap x{};
          const uint64_t scope = u.u64();
          if (scope > static_cast<uint64_t>(CommGap::Scope::step))
            throw std::runtime_error("a gap of an unknown scope");
          x.g.scope = static_cast<CommGap::Scope>(scope);
          x.g.device = static_cast<int16_t>(u.var());
          x.g.stream = static_cast<int32_t>(u.var());
          x.g.step = static_cast<int32_t>(u.var());
          x.g.seq = u.var();
          x.g.from = u.var();
          x.g.to = u.var();
          x.rank = static_cast<int>(p);
          last_of.try_emplace(x.g.seq);
          v.push_back(x);
        }
      }
      b = {};
    }
    // Process order within a collective, each process's calls in the order it made them.
    for (auto& [name, v] : calls) {
      std::stable_sort(v.begin(), v.end(), [](const OwnedCall& a, const OwnedCall& b) {
        return a.seq != b.seq ? a.seq < b.seq : a.process < b.process;
      });
    }
    // Clock alignment's part: each collective's latest end per host, where two hosts took part.
    std::vector<DomainEnd> ends, members;
    for (const auto& [name, v] : calls) {
      for (size_t a = 0; a < v.size();) {
        size_t z = a;
        members.clear();
        for (; z < v.size() && v[z].seq == v[a].seq; ++z) {
          if (v[z].end >= 0)
            members.push_back({domain[static_cast<size_t>(v[z].process)], v[z].end});
        }
        ends.clear();
        if (append_domain_ends(ends, members) >= 2) {
          ends_out.u64(ends.size());
          for (const DomainEnd& e : ends)
            ends_out.u64(static_cast<uint64_t>(e.domain)).u64(bits(e.end));
        }
        a = z;
      }
    }
  });
  CrossRankParts parts;
  offset =
      offsets_from_ends(comm, ends_out.take(), processes, domain, domains, o.align, &parts.clocks);
  if (comm.rank() == 0) parts.offsets = offset;
  // Matching, waits and the latest arrivals of the owner's collectives.
  Pack matched;
  comm.run([&] {
    CrossRank part;
    MatchNames names;
    std::vector<RankWait> waits(ranks);
    std::vector<GroupCall> g;
    for (const auto& [name, v] : calls) {
      // (the gaps' collectives of this communicator, whose last arrivals they need)
      auto gl = lasts.find(name);
      std::map<int64_t, LastArrivals>* last_of = gl == lasts.end() ? nullptr : &gl->second;
      for (size_t a = 0; a < v.size();) {
        size_t z = a;
        g.clear();
        LastArrivals last;
        for (; z < v.size() && v[z].seq == v[a].seq; ++z) {
          g.push_back({v[z].process, v[z].op, v[z].start, v[z].end});
          add_arrival(last, static_cast<size_t>(v[z].process), v[z].start,
                      offset[static_cast<size_t>(v[z].process)]);
        }
        match_collective(name, v[a].seq, g, offset, tolerance, part, names, waits);
        if (last.who != SIZE_MAX && last_of != nullptr) {
          auto it = last_of->find(v[a].seq);
          if (it != last_of->end()) it->second = last;
        }
        a = z;
      }
    }
    // The gaps' communication wait, summed per rank and scope (parts in any grouping move what
    // the gaps one by one would: summary.h GapWait).
    std::map<std::tuple<int, int, int, int, int>, int64_t> wait;
    for (const auto& [name, v] : gaps) {
      for (const OwnedGap& x : v) {
        const auto p = static_cast<size_t>(x.rank);
        const int64_t w = gap_wait(x.g, lasts.at(name).at(x.g.seq), p, offset[p]);
        if (w <= 0) continue;
        int64_t& sum =
            wait[{x.rank, static_cast<int>(x.g.scope), x.g.device, x.g.stream, x.g.step}];
        if (__builtin_add_overflow(sum, w, &sum)) sum = INT64_MAX;
      }
    }
    for (const auto& [k, w] : wait) {
      const auto& [rank, scope, device, stream, step] = k;
      matched.var(1).var(rank).var(scope).var(device).var(stream).var(step).var(w);
    }
    gaps.clear();
    lasts.clear();
    for (const RankWait& w : waits) {
      if (w.matched == 0) continue;
      matched.var(3).var(w.process).var(w.matched).var(w.wait_ns).var(w.straggler_count);
    }
    matched.var(4).var(part.unmatched).var(part.tied);
    // Last, the matched collectives (read by process 0 as it merges the owners' in order): the
    // names, then each collective's fields as differences from the one before where they grow.
    matched.var(2).var(static_cast<int64_t>(part.ops.size()));
    for (const std::string& op : part.ops) matched.str(op);
    matched.var(static_cast<int64_t>(part.comms.size()));
    for (const std::string& c : part.comms) matched.str(c);
    matched.var(static_cast<int64_t>(part.collectives.size()));
    const MatchedCollective* before = nullptr;
    for (const MatchedCollective& m : part.collectives) {
      const bool same = before != nullptr && before->comm == m.comm;
      matched.var(before == nullptr ? m.comm : m.comm - before->comm);
      matched.var(same ? wrapped_sub(m.seq, before->seq) : m.seq);
      matched.var(m.op).var(m.ranks).var(m.skew_ns).var(m.straggler);
      before = &m;
    }
    calls.clear();
  });
  const std::vector<std::string> results = comm.gather(matched.take(), 0);
  if (comm.rank() != 0) return parts;
  comm.run([&] {
    std::vector<RankWait> waits(ranks);
    std::vector<OwnerCollectives> owners;
    for (const std::string& b : results) {
      Unpack u(b);
      while (!u.done()) {
        const int64_t tag = u.var();
        if (tag == 2) {  // the matched collectives: last
          owners.emplace_back(u, ranks);
          break;
        }
        switch (tag) {
          case 1: {
            GapWait w;
            const auto q = static_cast<uint64_t>(u.var());
            if (q >= ranks) throw std::runtime_error("a process sent the waits of no rank");
            w.rank = static_cast<int32_t>(q);
            const auto scope = static_cast<uint64_t>(u.var());
            if (scope > static_cast<uint64_t>(CommGap::Scope::step))
              throw std::runtime_error("a gap of an unknown scope");
            w.scope = static_cast<CommGap::Scope>(scope);
            w.device = static_cast<int16_t>(u.var());
            w.stream = static_cast<int32_t>(u.var());
            w.step = static_cast<int32_t>(u.var());
            w.wait = u.var();
            parts.waits.push_back(w);
            break;
          }
          case 3: {
            const auto q = static_cast<uint64_t>(u.var());
            if (q >= ranks) throw std::runtime_error("a process sent the waits of no rank");
            RankWait& w = waits[q];
            w.process = static_cast<int>(q);
            w.matched += u.var();
            if (__builtin_add_overflow(w.wait_ns, u.var(), &w.wait_ns)) w.wait_ns = INT64_MAX;
            w.straggler_count += u.var();
            break;
          }
          case 4:
            parts.cross.unmatched += u.var();
            parts.cross.tied += u.var();
            break;
          default:
            throw std::runtime_error("a message between c3scope's processes is garbled");
        }
      }
    }
    merge_collectives(owners, parts.cross);
    order_waits(parts.cross, processes, waits);
  });
  return parts;
}

// The process that joins a step: steps dealt in turn (consecutive indices to different
// processes), the whole run to the last.
size_t step_owner(int64_t index, int size) {
  // The whole run (-1) to the last process: process 0 has the reduce.
  if (index < 0) return static_cast<size_t>(size - 1);
  return static_cast<size_t>(static_cast<uint64_t>(index) % static_cast<uint64_t>(size));
}

void pack_parts(Pack& p, const PathParts& parts) {
  for (const int64_t v : parts) p.var(v);
}
void unpack_parts(Unpack& u, PathParts& parts) {
  for (int64_t& v : parts) v = u.var();
}

PathPart part_of(int64_t v) {
  if (v < 0 || v >= kPathParts)
    throw std::runtime_error("a message between c3scope's processes names no path part");
  return static_cast<PathPart>(v);
}

// A step's chains, packed: their last names, then each chain.
void pack_chains(Pack& p, const RankPath& path) {
  p.u64(path.names.size());
  for (const std::string& n : path.names) p.str(n);
  p.u64(path.chains.size());
  for (const PathChain& c : path.chains) {
    p.var(c.to_comm).var(c.to_seq).var(c.to_op).var(c.to_end_ns).var(c.to_bytes);
    p.var(c.to_nranks).var(c.from_comm).var(c.from_seq).var(c.from_ns).var(c.to_ns);
    pack_parts(p, c.parts);
    p.var(static_cast<int64_t>(c.last)).var(c.last_name).u64(c.removed.size());
    for (const int64_t v : c.removed) p.var(v);
  }
}

RankPath unpack_chains(std::string_view b) {
  Unpack u(b);
  RankPath path;
  path.names.resize(u.count(8));
  for (std::string& name : path.names) name = u.str();
  path.chains.resize(u.count(1));
  for (PathChain& c : path.chains) {
    c.to_comm = static_cast<int32_t>(u.var());
    c.to_seq = u.var();
    c.to_op = static_cast<int32_t>(u.var());
    c.to_end_ns = u.var();
    c.to_bytes = u.var();
    c.to_nranks = static_cast<int32_t>(u.var());
    c.from_comm = static_cast<int32_t>(u.var());
    c.from_seq = u.var();
    c.from_ns = u.var();
    c.to_ns = u.var();
    unpack_parts(u, c.parts);
    c.last = part_of(u.var());
    const int64_t name = u.var();
    if (name < -1 || name >= static_cast<int64_t>(path.names.size()))
      throw std::runtime_error("a message between c3scope's processes names no kernel");
    c.last_name = static_cast<int32_t>(name);
    c.removed.resize(u.count(1));
    for (int64_t& v : c.removed) v = u.var();
  }
  return path;
}

// The ranks' critical-path chains packed for the processes that own their steps, as each input
// is mapped (and taken out of its summary: process 0 gets the joined paths only). Per owner,
// one block per rank: the input and the rank's place, its rank number, communicators and ops,
// then each of its steps owned there (index, name, window) with its chains nested, so that an
// owner decodes one step at a time. The whole run's chains (ranks without steps) go to the owner
// of step -1 in `whole`; they are used only when no rank of the job has steps.
struct PathsOut {
  explicit PathsOut(int size)
      : steps(static_cast<size_t>(size)), whole(static_cast<size_t>(size)) {}
  std::vector<std::string> steps, whole;
  bool has_steps = false;
};

void pack_paths(PathsOut& out, size_t input, size_t index, RankSummary& s) {
  const int size = static_cast<int>(out.steps.size());
  auto header = [&](Pack& p, size_t steps) {
    p.u64(input).u64(index).var(s.process.rank.value_or(-1)).u64(s.calls.comms.size());
    for (const std::string& c : s.calls.comms) p.str(c);
    p.u64(s.calls.ops.size());
    for (const std::string& op : s.calls.ops) p.str(op);
    p.u64(steps);
  };
  auto step = [](Pack& p, int64_t i, const std::string& name, int64_t from, int64_t to,
                 const RankPath& path) {
    p.var(i).str(name).var(from).var(to);
    Pack c;
    pack_chains(c, path);
    p.str(c.take());
  };
  std::vector<std::vector<StepSample*>> to(static_cast<size_t>(size));
  for (StepSample& st : s.steps) to[step_owner(st.index, size)].push_back(&st);
  for (size_t q = 0; q < to.size(); ++q) {
    if (to[q].empty()) continue;
    Pack p;
    header(p, to[q].size());
    for (StepSample* st : to[q]) {
      step(p, st->index, st->name, st->start, st->end, st->path);
      st->path.chains = {};
      st->path.names = {};
    }
    out.steps[q] += p.take();
  }
  out.has_steps = out.has_steps || !s.steps.empty();
  if (s.steps.empty() && s.run_end > s.run_start) {
    Pack p;
    header(p, 1);
    step(p, -1, "whole run", s.run_start, s.run_end, s.run_path);
    out.whole[step_owner(-1, size)] += p.take();
  }
  s.run_path.chains = {};
  s.run_path.names = {};
}

void pack_step_path(Pack& p, const StepPath& x) {
  p.var(x.index).str(x.name).var(x.step_ns).var(x.path_ns);
  pack_parts(p, x.parts);
  p.var(x.end_process).var(x.hops).var(x.peer_wait_ns).u64(x.late.size());
  for (const LateArrival& l : x.late) {
    p.str(l.comm).var(l.seq).str(l.op).var(l.late).var(l.waiting).var(l.late_ns);
    p.var(static_cast<int64_t>(l.cause)).str(l.cause_name);
    pack_parts(p, l.before);
  }
  p.u64(x.route.size());
  for (const PathLeg& g : x.route) {
    p.var(g.process).var(g.from_ns).var(g.to_ns).var(g.collective ? 1 : 0).str(g.comm).var(g.seq);
  }
  p.u64(x.what_if_ns.size());
  for (const int64_t v : x.what_if_ns) p.var(v);
  p.var(x.replayed_ns);
}

StepPath unpack_step_path(Unpack& u) {
  StepPath x;
  x.index = u.var();
  x.name = u.str();
  x.step_ns = u.var();
  x.path_ns = u.var();
  unpack_parts(u, x.parts);
  x.end_process = static_cast<int>(u.var());
  x.hops = static_cast<int>(u.var());
  x.peer_wait_ns = u.var();
  x.late.resize(u.count(8));
  for (LateArrival& l : x.late) {
    l.comm = u.str();
    l.seq = u.var();
    l.op = u.str();
    l.late = static_cast<int>(u.var());
    l.waiting = static_cast<int>(u.var());
    l.late_ns = u.var();
    l.cause = part_of(u.var());
    l.cause_name = u.str();
    unpack_parts(u, l.before);
  }
  x.route.resize(u.count(8));
  for (PathLeg& g : x.route) {
    g.process = static_cast<int>(u.var());
    g.from_ns = u.var();
    g.to_ns = u.var();
    g.collective = u.var() != 0;
    g.comm = u.str();
    g.seq = u.var();
  }
  x.what_if_ns.resize(u.count(1));
  for (int64_t& v : x.what_if_ns) v = u.var();
  x.replayed_ns = u.var();
  return x;
}

// One rank's part of a step as its owner holds it until the join: its chains still packed.
struct OwnedStep {
  uint64_t at = 0;  // the rank's place in the job
  int64_t rank = -1;
  std::string_view name;
  int64_t start = 0, end = 0;
  std::string_view chains;
  const RankCollectives* calls = nullptr;
};

// The steps' critical paths where the steps are owned (run_distributed's step 4): every process
// calls it with its ranks' packed chains and the aligned clock offsets; process 0 gets every
// step's joined path, in step order (the reduce's join_paths on the same chains gives the same).
std::vector<StepPath> spread_paths(Comm& comm, PathsOut& out, const std::vector<uint64_t>& base,
                                   const std::vector<int64_t>& offset,
                                   const std::vector<WhatIf>& what_ifs) {
  // Steps anywhere: then the ranks' steps are joined; none: each rank's whole run.
  const bool steps = comm.any(out.has_steps);
  std::vector<std::string> send = std::move(steps ? out.steps : out.whole);
  out.steps = {};
  out.whole = {};
  std::vector<std::string> in = comm.exchange(std::move(send));
  std::deque<RankCollectives> tables;
  std::map<int64_t, std::vector<OwnedStep>> owned;
  Pack joined;
  comm.run([&] {
    for (const std::string& b : in) {
      Unpack u(b);
      while (!u.done()) {
        const uint64_t input = u.u64();
        const uint64_t at = rank_at(base, input, u.u64(), offset.size());
        const int64_t rank = u.var();
        RankCollectives& t = tables.emplace_back();
        t.comms.resize(u.count(8));
        for (std::string& c : t.comms) c = u.str();
        t.ops.resize(u.count(8));
        for (std::string& op : t.ops) op = u.str();
        const uint64_t n = u.u64();
        for (uint64_t k = 0; k < n; ++k) {
          const int64_t index = u.var();
          OwnedStep x;
          x.at = at;
          x.rank = rank;
          x.calls = &t;
          x.name = u.view();
          x.start = u.var();
          x.end = u.var();
          x.chains = u.view();
          owned[index].push_back(x);
        }
      }
    }
    // Each step as join_paths joins it: its ranks in job order, named by the first that names it;
    // its chains unpacked for the join only.
    std::vector<StepRankPath> ranks;
    std::vector<RankPath> paths;
    for (auto& [index, v] : owned) {
      std::stable_sort(v.begin(), v.end(),
                       [](const OwnedStep& a, const OwnedStep& b) { return a.at < b.at; });
      std::string name;
      ranks.clear();
      paths.clear();
      paths.reserve(v.size());
      for (const OwnedStep& x : v) paths.push_back(unpack_chains(x.chains));
      for (size_t k = 0; k < v.size(); ++k) {
        const OwnedStep& x = v[k];
        if (name.empty()) name = x.name;
        ranks.push_back(
            {static_cast<int>(x.at), x.rank, x.start, x.end, offset[x.at], &paths[k], x.calls});
      }
      pack_step_path(joined, join_step(index, name, ranks, what_ifs));
    }
    paths = {};
  });
  owned.clear();
  in = {};
  std::vector<StepPath> paths;
  const std::vector<std::string> results = comm.gather(joined.take(), 0);
  if (comm.rank() != 0) return paths;
  comm.run([&] {
    for (const std::string& b : results) {
      Unpack u(b);
      while (!u.done()) paths.push_back(unpack_step_path(u));
    }
    std::stable_sort(paths.begin(), paths.end(),
                     [](const StepPath& a, const StepPath& b) { return a.index < b.index; });
  });
  return paths;
}

}  // namespace

bool Comm::any(bool flag) {
  const std::vector<std::string> all = gather(std::string(1, flag ? '1' : '0'), 0);
  std::string r = "0";
  for (const std::string& x : all) {
    if (x == "1") r = "1";
  }
  return broadcast(r, 0) == "1";
}

std::vector<std::string> Comm::all_gather(std::string bytes) {
  const std::vector<std::string> g = gather(std::move(bytes), 0);
  Pack p;
  p.u64(g.size());
  for (const std::string& x : g) p.str(x);
  const std::string all = broadcast(p.take(), 0);
  Unpack u(all);
  std::vector<std::string> out(u.count(8));  // (each string: its 8-byte length at least)
  for (std::string& x : out) x = u.str();
  return out;
}

std::vector<std::string> SerialComm::gather(std::string bytes, int /*root*/) {
  return {std::move(bytes)};
}
std::string SerialComm::broadcast(std::string bytes, int /*root*/) {
  return bytes;
}
std::vector<std::string> SerialComm::exchange(std::vector<std::string> out) {
  return out;
}

std::vector<int> deal_by_size(const std::vector<uint64_t>& sizes, int processes) {
  std::vector<int> owner(sizes.size(), 0);
  if (processes <= 1) return owner;
  std::vector<size_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  using Load = std::pair<uint64_t, int>;  // (bytes so far, process): the least first
  std::priority_queue<Load, std::vector<Load>, std::greater<>> load;
  for (int p = 0; p < processes; ++p) load.emplace(0, p);
  for (const size_t i : order) {
    auto [bytes, p] = load.top();
    load.pop();
    owner[i] = p;
    load.emplace(bytes + std::min<uint64_t>(sizes[i], UINT64_MAX - bytes), p);
  }
  return owner;
}

Deal deal_inputs(Comm& comm, const std::vector<Input>& inputs, bool local,
                 const std::string& host) {
  const int me = comm.rank();
  if (!local) {
    Deal d;
    if (me == 0) {
      std::vector<uint64_t> sizes;
      sizes.reserve(inputs.size());
      for (const Input& in : inputs) sizes.push_back(file_size_or_zero(in.path));
      d.inputs = inputs;
      d.owner = deal_by_size(sizes, comm.size());
      d.names = input_names(inputs);
    }
    return unpack_deal(comm.broadcast(me == 0 ? pack_deal(d) : std::string(), 0));
  }
  Pack mine;
  mine.str(host).u64(static_cast<uint64_t>(comm.node())).u64(inputs.size());
  // Absolute: the processes of a machine share its files but not their working folders.
  for (const Input& in : inputs) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(in.path, ec);
    const std::string path = ec ? in.path : abs.lexically_normal().string();
    mine.str(path).u64(format_code(in.format)).u64(file_size_or_zero(in.path));
  }
  const std::vector<std::string> all = comm.gather(mine.take(), 0);
  Deal d;
  if (me == 0) {
    // Per host: its files in the order its processes listed them (each resolve_inputs's order,
    // the lower process first; a file two processes listed once) and its processes.
    struct File {
      std::string path;
      InputFormat format;
      uint64_t size;
    };
    // A machine: (its host name, its node number), so that containers sharing a host name stay
    // apart.
    using Machine = std::pair<std::string, uint64_t>;
    std::map<Machine, std::vector<File>> files;
    std::map<Machine, std::set<std::string>> seen;
    std::map<Machine, std::vector<int>> procs;
    for (size_t p = 0; p < all.size(); ++p) {
      Unpack u(all[p]);
      std::string host_name = u.str();
      const Machine h{std::move(host_name), u.u64()};
      procs[h].push_back(static_cast<int>(p));
      const uint64_t n = u.u64();
      for (uint64_t i = 0; i < n; ++i) {
        std::string path = u.str();
        const InputFormat f = format_of(u.u64());
        const uint64_t size = u.u64();
        if (seen[h].insert(path).second) files[h].push_back({std::move(path), f, size});
      }
    }
    for (const auto& [h, list] : files) {
      std::vector<uint64_t> sizes;
      for (const File& f : list) {
        d.inputs.push_back({f.path, f.format});
        // Named by host when there are several machines (and by node too when hosts repeat).
        std::string name = f.path;
        if (files.size() > 1) {
          bool repeated = false;
          for (const auto& [other, l] : files)
            repeated = repeated || (other.first == h.first && other != h);
          name = h.first + (repeated ? "#" + std::to_string(h.second) : "") + ":" + f.path;
        }
        d.names.push_back(std::move(name));
        sizes.push_back(f.size);
      }
      const std::vector<int>& ps = procs[h];
      const std::vector<int> o = deal_by_size(sizes, static_cast<int>(ps.size()));
      for (const int k : o) d.owner.push_back(ps[static_cast<size_t>(k)]);
    }
  }
  return unpack_deal(comm.broadcast(me == 0 ? pack_deal(d) : std::string(), 0));
}

DistributedResult run_distributed(Comm& comm, const Deal& deal, const PipelineOptions& given,
                                  const DistributedOutputs& want) {
  DistributedResult res;
  const int me = comm.rank();
  const size_t n = deal.inputs.size();
  const auto t0 = std::chrono::steady_clock::now();
  ProcessStats mine;
  std::vector<size_t> my_summaries, my_traces;
  bool traces_too = false;
  for (size_t i = 0; i < n; ++i) {
    const bool summary = deal.inputs[i].format == InputFormat::summary;
    traces_too = traces_too || !summary;
    if (deal.owner[i] != me) continue;
    (summary ? my_summaries : my_traces).push_back(i);
  }
  auto cancelled = [&] { return given.open.cancel && given.open.cancel->load(); };
  // Each input's summaries (its ranks) and CSV rows, by input index.
  std::map<size_t, std::vector<RankSummary>> parts;
  std::map<size_t, std::string> csv;

  // 1. The summary inputs are read; the options they were made with become the job's (adopted
  // in input order on every process alike, so every process has the same options or the same
  // error).
  Outcome out;
  Pack made;
  comm.run([&] {
    for (const size_t i : my_summaries) {
      if (cancelled()) {
        out.cancelled = true;
        return;
      }
      try {
        SummaryOptions m;
        std::vector<RankSummary> s = read_summary_file(deal.inputs[i].path, &m);
        for (RankSummary& r : s) r.input = deal.inputs[i].path;
        parts[i] = std::move(s);
        made.u64(i).str(summaries_to_json({}, m));
      } catch (const std::exception& e) {
        out.failed = true;
        out.at = i;
        out.error = e.what();
        return;
      }
    }
  });
  if (settle(comm, out, res)) return res;
  PipelineOptions o = given;
  o.csv = nullptr;
  o.keep = nullptr;
  o.progress = nullptr;
  // The machine's cores are shared by its processes, and a launcher may bind a process to some
  // of them (Open MPI binds each of 1 or 2 processes to one core unless told --bind-to none).
  if (o.workers <= 0) {
    const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    o.workers =
        std::max(1, std::min(usable_cores(cores), cores / std::max(1, comm.local_processes())));
  }
  {
    std::vector<std::pair<size_t, std::string>> texts;
    for (const std::string& b : comm.all_gather(made.take())) {
      Unpack u(b);
      while (!u.done()) {
        const size_t i = u.u64();
        texts.emplace_back(i, u.str());
      }
    }
    std::sort(texts.begin(), texts.end());
    std::vector<std::pair<std::string, SummaryOptions>> adopted;
    try {
      for (const auto& [i, text] : texts) {
        SummaryOptions m;
        summaries_from_json(text, deal.inputs[i].path, &m);
        adopted.emplace_back(deal.inputs[i].path, std::move(m));
      }
      if (!adopted.empty()) adopt_summary_options(o, adopted, traces_too);
    } catch (const std::exception& e) {  // the same on every process
      res.error = e.what();
      return res;
    }
  }
  res.used = o.analyze;

  // 2. The traces of this process's share are mapped. As each input's summaries are made, they
  // are packed for where they go (take): the collective records and the gaps at collectives for
  // their communicators' owners and the critical-path chains for their steps' owners (unless
  // process 0 gets every record: --summary, compare), the rest as summary JSON for process 0
  // (process 0 keeps its own). A process holds its share packed, never its summaries whole.
  const bool spread = !want.summary && !want.ranks;
  std::vector<std::string> records_out(static_cast<size_t>(comm.size()));
  std::vector<std::string> gaps_out(records_out.size());
  PathsOut paths_out(comm.size());
  // input -> its summaries' JSON, deflated (held_summary; process 0: those of its own that wait
  // for other inputs)
  std::map<size_t, std::string> json;
  std::mutex mu;
  // Process 0's reduce (Reducer: a rank at a time, in input order), the ranks added so far and
  // their processes, and each input's first rank.
  std::optional<Reducer> reducer;
  if (me == 0 && spread) reducer.emplace(deal.names, o.analyze);
  std::vector<RankSummary> all;  // (process 0 without the reducer: every rank's summary)
  std::vector<Process> processes;
  std::vector<uint64_t> base(n, 0);
  size_t ranks = 0;
  size_t next_input = 0;  // the next input to add
  std::string fold_error;
  // Adds input i's ranks to the reduce (process 0).
  auto add_input = [&](size_t i, std::vector<RankSummary>& v) {
    base[i] = ranks;
    ranks += v.size();
    for (RankSummary& r : v) {
      r.input = deal.inputs[i].path;
      processes.push_back(r.process);
      if (reducer) {
        reducer->add(std::move(r));
      } else {
        all.push_back(std::move(r));
      }
    }
    v = {};
  };
  // Process 0 adds its own inputs as they are mapped while they come first in input order (all
  // of them when it is alone), so that it does not hold them (not with --csv: its rows are
  // taken in input order after the map).
  const bool add_early = me == 0 && reducer && !want.csv;
  auto take = [&](size_t i, std::vector<RankSummary>& s) {
    std::vector<std::string> records(records_out.size()), gaps(records_out.size());
    PathsOut paths(comm.size());
    for (size_t k = 0; k < s.size(); ++k) {
      as_process_0_sees_it(s[k], o.analyze);
      if (!spread) continue;
      pack_records(records, i, k, s[k].calls);
      s[k].calls.records = {};
      pack_gaps(gaps, i, k, s[k]);
      s[k].comm_gaps = {};  // (comm_gaps_known stays)
      pack_paths(paths, i, k, s[k]);
    }
    // Process 0's own inputs go the way the others' go to it, through summary JSON (which caps
    // and replaces some names), so that an input reads the same whichever process maps it and
    // whatever order the map's workers finish in: one that comes next in input order is read
    // back and added at once, one that must wait is held as deflated JSON (held_summary).
    bool next = false;
    if (add_early) {
      const std::lock_guard<std::mutex> lock(mu);
      next = fold_error.empty() && i == next_input;  // (stays so: only this call adds input i)
    }
    std::string text, unread;
    if (me != 0 || add_early) {
      text = summaries_to_json(s, o.analyze);
      s = {};
    }
    if (next) {
      try {
        s = summaries_from_json(text, deal.names[i]);
      } catch (const std::exception& e) {
        unread = e.what();
      }
    }
    // (deflated outside the lock: the map's workers do it side by side)
    if (me != 0 || (add_early && !next)) text = held_summary(std::move(text));
    const std::lock_guard<std::mutex> lock(mu);
    paths_out.has_steps = paths_out.has_steps || paths.has_steps;
    for (size_t q = 0; q < records.size(); ++q) {
      records_out[q] += records[q];
      gaps_out[q] += gaps[q];
      paths_out.steps[q] += paths.steps[q];
      // (the whole runs' chains serve only a job without steps)
      if (!paths_out.has_steps) paths_out.whole[q] += paths.whole[q];
    }
    if (paths_out.has_steps) paths_out.whole = std::vector<std::string>(records.size());
    if (me != 0 || (add_early && !next)) json[i] = std::move(text);
    if (!next) return;
    // (after an error nothing more is added: the reduce takes the other processes' messages only,
    // from next_input on, and reports it)
    if (!unread.empty()) {
      fold_error = unread;
      return;
    }
    try {
      add_input(i, s);
      ++next_input;
      // (and those of its own that waited for it)
      while (next_input < n && deal.owner[next_input] == 0) {
        auto t = json.find(next_input);
        if (t == json.end()) break;  // not mapped yet
        std::vector<RankSummary> v =
            summaries_from_json(summary_of_held(t->second), deal.names[next_input]);
        json.erase(t);
        add_input(next_input, v);
        ++next_input;
      }
    } catch (const std::exception& e) {
      fold_error = e.what();
    }
  };
  o.mapped = [&](size_t k, std::vector<RankSummary>& s) { take(my_traces[k], s); };
  std::vector<Input> sub;
  sub.reserve(my_traces.size());
  for (const size_t i : my_traces) sub.push_back(deal.inputs[i]);
  if (want.csv) {
    o.comm = [&](size_t k, const Trace& t, const std::vector<CommOverlap>& rows) {
      std::string text = collectives_csv_rows(t, rows);
      const std::lock_guard<std::mutex> lock(mu);
      csv[my_traces[k]] += text;
    };
  }
  comm.run([&] {
    if (sub.empty() && my_summaries.empty()) return;
    try {
      // (the summary inputs, read already, go the same way first)
      for (const size_t i : my_summaries) take(i, parts[i]);
      std::vector<RankSummary> s = map_inputs(sub, o);
      // map_inputs keeps input order; an input's ranks carry its path (paths are unique).
      size_t at = 0;
      for (size_t k = 0; k < sub.size(); ++k) {
        std::vector<RankSummary>& v = parts[my_traces[k]];
        while (at < s.size() && s[at].input == sub[k].path) v.push_back(std::move(s[at++]));
      }
    } catch (const Cancelled&) {
      out.cancelled = true;
    } catch (const std::exception& e) {
      out.failed = true;
      // The input it is about: the first of this share whose path the line names (else the
      // share's first).
      std::vector<size_t> share = my_summaries;
      share.insert(share.end(), my_traces.begin(), my_traces.end());
      std::sort(share.begin(), share.end());
      out.at = share.front();
      const std::string line = e.what();
      for (const size_t i : share) {
        if (line.find(deal.inputs[i].path) != std::string::npos) {
          out.at = i;
          break;
        }
      }
      out.error = e.what();
    }
  });
  if (settle(comm, out, res)) return res;
  mine.map_s = seconds_since(t0);
  // Process 0's reduce, from here (the summaries' sending included): its time, and the memory it
  // adds to what is resident now.
  const auto reduce_t0 = std::chrono::steady_clock::now();
  const int64_t peak_before = status_kb("VmHWM");
  const int64_t rss_before = status_kb("VmRSS");
  if (me == 0) reset_peak();
  mine.inputs = static_cast<int64_t>(my_summaries.size() + my_traces.size());

  // 3. The reduce. Every input's summaries go to process 0 (in input order) without their
  // collective records and gaps, which go to the processes that own their communicators (records
  // of one communicator, every rank's, to one process: a hash of its name). Those match them and
  // return what the reduce needs: the collectives' ends per host (clock alignment on process 0),
  // then, with the offsets, the matched collectives, each rank's waits and the communication
  // wait in its gaps. Then the steps' owners join the steps' critical paths (4). --summary:
  // process 0 writes every record anyway, and reduces them itself.
  // The summaries go to process 0 input by input, in input order, as process 0 takes them (a
  // sender runs one message ahead): process 0 parses a window of inputs on its cores while it
  // receives the next, and adds each rank to the reduce (Reducer) in input order, so that it
  // holds a window's summaries at a time, never every rank's.
  std::vector<size_t> share = my_summaries;
  share.insert(share.end(), my_traces.begin(), my_traces.end());
  std::sort(share.begin(), share.end());
  if (me != 0) {
    for (const size_t i : share) {
      Pack p;
      auto t = json.find(i);
      p.u64(i).str(t == json.end() ? std::string() : std::move(t->second));
      if (t != json.end()) json.erase(t);
      auto c = csv.find(i);
      p.str(c == csv.end() ? std::string() : std::move(c->second));
      if (c != csv.end()) csv.erase(c);
      comm.send_to(0, p.take());
    }
  }
  const auto receive_t0 = std::chrono::steady_clock::now();
  std::vector<int> domain;
  int domains = 0;
  Pack layout;
  if (me == 0) {
    const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    const unsigned workers = static_cast<unsigned>(usable_cores(cores));
    // Inputs received ahead: 16 (measured at 256 ranks on 2 cores: 4 took 15% longer, 64 no
    // less), more on more cores.
    const size_t window = std::max<size_t>(16, size_t{2} * workers);
    // A window's texts, as their processes send them (every message is taken, even after an
    // error: a sender waits until its message is). Empty for process 0's own inputs.
    // (after the inputs added as they were mapped; an error there is the first)
    std::string receive_error = fold_error;
    auto receive = [&](size_t first) {
      const size_t last = std::min(n, first + window);
      std::vector<std::string> texts(last > first ? last - first : 0);
      for (size_t i = first; i < last; ++i) {
        if (deal.owner[i] == 0) {  // (its own: held as deflated JSON, or whole in parts)
          auto t = json.find(i);
          if (t != json.end()) {
            texts[i - first] = std::move(t->second);
            json.erase(t);
          }
          continue;
        }
        const std::string m = comm.receive_from(deal.owner[i]);
        if (!receive_error.empty()) continue;
        try {
          Unpack u(m);
          if (u.u64() != i) throw std::runtime_error("it sent the summaries of another input");
          texts[i - first] = u.str();
          std::string rows = u.str();
          if (!rows.empty()) csv[i] = std::move(rows);
        } catch (const std::exception& e) {
          receive_error = "process " + std::to_string(deal.owner[i]) + ": " + e.what();
        }
      }
      return texts;
    };
    // A window parsed on the process's cores and added to the reduce in input order.
    auto reduce_window = [&](size_t first, std::vector<std::string>& texts) {
      std::vector<std::vector<RankSummary>> parsed(texts.size());
      std::vector<std::exception_ptr> errors(texts.size());
      std::atomic<size_t> next{0};
      common::run_workers(
          texts.size(),
          [&] {
            for (size_t k = next++; k < texts.size(); k = next++) {
              const size_t i = first + k;
              if (deal.owner[i] == 0 && texts[k].empty()) continue;  // (whole in parts)
              try {
                parsed[k] = summaries_from_json(summary_of_held(texts[k]), deal.names[i]);
              } catch (...) {
                errors[k] = std::current_exception();
              }
              texts[k] = {};  // parsed
            }
          },
          workers);
      for (size_t k = 0; k < texts.size(); ++k) {
        if (errors[k]) std::rethrow_exception(errors[k]);
        const size_t i = first + k;
        std::vector<RankSummary> v = std::move(parsed[k]);
        if (deal.owner[i] == 0 && v.empty()) {  // (its own, held whole)
          auto it = parts.find(i);
          if (it != parts.end()) {
            v = std::move(it->second);
            parts.erase(it);
          }
        }
        add_input(i, v);
      }
    };
    // The next window is received while one is parsed and reduced (a message moves only while
    // its sender and process 0 both call MPI).
    std::vector<std::string> texts = receive(next_input);
    for (size_t first = next_input; first < n; first += window) {
      std::string reduce_error;
      std::vector<std::string> now = std::move(texts);
      const bool go = receive_error.empty();  // (after an error, the messages are only taken)
      std::thread worker([&] {                // (local work: this thread keeps the Comm)
        if (!go) return;
        try {
          reduce_window(first, now);
        } catch (const std::exception& e) {
          reduce_error = e.what();
        }
      });
      try {
        texts = receive(first + window);
      } catch (...) {  // (no memory: the worker is joined before the error leaves)
        worker.join();
        throw;
      }
      worker.join();
      if (!go) continue;
      if (!reduce_error.empty()) {  // (before any error of the next window's inputs)
        res.error = reduce_error;
        receive_error = reduce_error;
        continue;
      }
      for (size_t i = first; i < std::min(n, first + window); ++i) {
        auto c = csv.find(i);
        if (c != csv.end()) {
          res.csv += c->second;
          csv.erase(c);
        }
      }
    }
    if (res.error.empty()) res.error = receive_error;
    res.receive_s = seconds_since(receive_t0);
    if (res.error.empty()) {
      domains = clock_domains(processes, domain);
      res.ok = true;
    }
    layout.u64(res.ok ? 1 : 0).str(res.error);
    if (spread && res.ok) {
      for (const uint64_t b : base) layout.u64(b);
      layout.u64(processes.size()).u64(static_cast<uint64_t>(domains));
      for (const int d : domain) layout.u64(static_cast<uint64_t>(d));
    }
  }
  {
    const std::string l = comm.broadcast(layout.take(), 0);
    Unpack u(l);
    res.ok = u.u64() != 0;
    res.error = u.str();
    if (!res.ok) return res;
    if (spread && me != 0) {
      for (uint64_t& b : base) b = u.u64();
      domain.resize(u.count(8));
      domains = static_cast<int>(u.u64());
      for (int& d : domain) d = static_cast<int>(u.u64());
    }
  }
  res.ok = false;
  CrossRankParts cross;
  const auto cross_t0 = std::chrono::steady_clock::now();
  if (spread) {
    std::vector<int64_t> offsets;
    cross = spread_cross_rank(comm, std::move(records_out), std::move(gaps_out), base, domain,
                              domains, processes, o.analyze, mine.records, offsets);
    mine.cross_s = seconds_since(cross_t0);
    // 4. Each step's critical path joined by the process that owns the step.
    const auto paths_t0 = std::chrono::steady_clock::now();
    cross.paths = spread_paths(comm, paths_out, base, offsets, o.analyze.what_ifs);
    cross.joined = true;
    mine.paths_s = seconds_since(paths_t0);
  }
  Pack verdict;
  if (me == 0) {
    comm.run([&] {
      const auto report_t0 = std::chrono::steady_clock::now();
      try {
        if (want.summary) res.summary = summaries_to_json(all, o.analyze);
        if (want.ranks) {
          res.ranks = std::move(all);
        } else if (reducer) {  // (takes cross's paths and results)
          res.report = reducer->finish(o.analyze.align, &cross);
          reducer.reset();
        } else {
          res.report = reduce(std::move(all), deal.names, o.analyze, o.analyze.align);
        }
        res.ok = true;
      } catch (const std::exception& e) {
        res.error = e.what();
      }
      res.report_s = seconds_since(report_t0);
    });
    verdict.u64(res.ok ? 1 : 0).str(res.error);
    res.reduce_s = seconds_since(reduce_t0);
    res.reduce_kb = std::max<int64_t>(0, status_kb("VmHWM") - rss_before);
  }
  mine.peak_kb = std::max(peak_before, status_kb("VmHWM"));
  Pack st;
  st.u64(std::bit_cast<uint64_t>(mine.map_s)).u64(std::bit_cast<uint64_t>(mine.cross_s));
  st.u64(std::bit_cast<uint64_t>(mine.paths_s));
  st.u64(bits(mine.peak_kb)).u64(bits(mine.inputs)).u64(bits(mine.records));
  for (const std::string& b : comm.gather(st.take(), 0)) {
    Unpack u(b);
    ProcessStats x;
    x.map_s = std::bit_cast<double>(u.u64());
    x.cross_s = std::bit_cast<double>(u.u64());
    x.paths_s = std::bit_cast<double>(u.u64());
    x.peak_kb = signed_of(u.u64());
    x.inputs = signed_of(u.u64());
    x.records = signed_of(u.u64());
    res.stats.push_back(x);
  }
  const std::string v = comm.broadcast(verdict.take(), 0);
  if (me != 0) {
    Unpack u(v);
    res.ok = u.u64() != 0;
    res.error = u.str();
  }
  return res;
}

}  // namespace c3::analyzer
