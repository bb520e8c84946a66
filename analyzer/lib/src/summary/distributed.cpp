#include "c3/analyzer/summary/distributed.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <mutex>
#include <queue>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace c3::analyzer {
namespace {

// The bytes the processes send each other: integers as 8 bytes (little-endian), strings with
// their length first. Only c3scope's own processes write them; a short read is still an error,
// not a crash.
class Pack {
 public:
  Pack& u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) b_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    return *this;
  }
  Pack& str(const std::string& s) {
    u64(s.size());
    b_ += s;
    return *this;
  }
  std::string take() { return std::move(b_); }

 private:
  std::string b_;
};

class Unpack {
 public:
  explicit Unpack(const std::string& b) : b_(b) {}
  uint64_t u64() {
    need(8);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(static_cast<unsigned char>(b_[at_ + static_cast<size_t>(i)]))
           << (8 * i);
    at_ += 8;
    return v;
  }
  std::string str() {
    const uint64_t n = u64();
    need(n);
    std::string s = b_.substr(at_, n);
    at_ += n;
    return s;
  }
  bool done() const { return at_ == b_.size(); }

 private:
  void need(uint64_t n) const {
    if (n > b_.size() - at_)
      throw std::runtime_error("a message between c3scope's processes is cut short");
  }
  const std::string& b_;
  size_t at_ = 0;
};

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
  size_t at = SIZE_MAX;  // the input the error is about (approximately: the process's first)
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
  std::vector<std::string> out(u.u64());
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
  mine.str(host).u64(inputs.size());
  for (const Input& in : inputs)
    mine.str(in.path).u64(format_code(in.format)).u64(file_size_or_zero(in.path));
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
    std::map<std::string, std::vector<File>> files;
    std::map<std::string, std::set<std::string>> seen;
    std::map<std::string, std::vector<int>> procs;
    for (size_t p = 0; p < all.size(); ++p) {
      Unpack u(all[p]);
      const std::string h = u.str();
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
        d.names.push_back(files.size() > 1 ? h + ":" + f.path : f.path);
        sizes.push_back(f.size);
      }
      const std::vector<int>& ps = procs[h];
      const std::vector<int> o = deal_by_size(sizes, static_cast<int>(ps.size()));
      for (const int k : o) d.owner.push_back(ps[static_cast<size_t>(k)]);
    }
  }
  Deal out = unpack_deal(comm.broadcast(me == 0 ? pack_deal(d) : std::string(), 0));
  if (out.inputs.empty())
    throw std::invalid_argument("--local: no process found a trace or a summary in its folder");
  return out;
}

DistributedResult run_distributed(Comm& comm, const Deal& deal, const PipelineOptions& given,
                                  const DistributedOutputs& want) {
  DistributedResult res;
  const int me = comm.rank();
  const size_t n = deal.inputs.size();
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

  // 2. The traces of this process's share are mapped.
  std::vector<Input> sub;
  sub.reserve(my_traces.size());
  for (const size_t i : my_traces) sub.push_back(deal.inputs[i]);
  std::mutex mu;
  if (want.csv) {
    o.comm = [&](size_t k, const Trace& t, const std::vector<CommOverlap>& rows) {
      std::string text = collectives_csv_rows(t, rows);
      const std::lock_guard<std::mutex> lock(mu);
      csv[my_traces[k]] += text;
    };
  }
  comm.run([&] {
    if (sub.empty()) return;
    try {
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
      out.at = my_traces.front();
      out.error = e.what();
    }
  });
  if (settle(comm, out, res)) return res;

  // 3. The reduce: every input's summaries to process 0, in input order.
  Pack p;
  comm.run([&] {
    if (me == 0) return;  // process 0 keeps its own
    for (auto& [i, s] : parts) {
      p.u64(i).str(summaries_to_json(s, o.analyze));
      auto c = csv.find(i);
      p.str(c == csv.end() ? std::string() : c->second);
      s = {};
    }
  });
  const std::vector<std::string> sent = comm.gather(p.take(), 0);
  Pack verdict;
  if (me == 0) {
    comm.run([&] {
      try {
        for (size_t q = 1; q < sent.size(); ++q) {
          Unpack u(sent[q]);
          while (!u.done()) {
            const size_t i = u.u64();
            if (i >= n) throw std::runtime_error("a process sent the summaries of no input");
            std::vector<RankSummary> s = summaries_from_json(u.str(), deal.names[i]);
            for (RankSummary& r : s) r.input = deal.inputs[i].path;
            parts[i] = std::move(s);
            std::string rows = u.str();
            if (!rows.empty()) csv[i] = std::move(rows);
          }
        }
        std::vector<RankSummary> all;
        for (size_t i = 0; i < n; ++i) {
          auto it = parts.find(i);
          if (it == parts.end()) continue;
          for (RankSummary& r : it->second) all.push_back(std::move(r));
          parts.erase(it);
          auto c = csv.find(i);
          if (c != csv.end()) {
            res.csv += c->second;
            csv.erase(c);
          }
        }
        if (want.summary) res.summary = summaries_to_json(all, o.analyze);
        res.report = reduce(std::move(all), deal.names, o.analyze, o.analyze.align);
        res.ok = true;
      } catch (const std::exception& e) {
        res.error = e.what();
      }
    });
    verdict.u64(res.ok ? 1 : 0).str(res.error);
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
