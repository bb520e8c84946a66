// align_clocks over ranks spread across processes (distributed.h): the parts of align_clocks
// (cross_rank.h: clock_domains, append_domain_ends, align_from_ends) where the records are.
#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "c3/analyzer/summary/distributed.h"
#include "c3/analyzer/summary/wire.h"

namespace c3::analyzer {

void SerialComm::send_to(int /*to*/, std::string bytes) {
  sent_.push_back(std::move(bytes));
}

std::string SerialComm::receive_from(int /*from*/) {
  if (sent_.empty()) throw std::logic_error("SerialComm::receive_from: nothing was sent");
  std::string b = std::move(sent_.front());
  sent_.pop_front();
  return b;
}

namespace {

// A collective's call as its communicator's owner keeps it: the sequence number, the caller's
// clock domain and its GPU end.
struct OwnedEnd {
  int64_t seq = 0;
  int32_t domain = 0;
  int64_t end = 0;
};

}  // namespace

void align_clocks_spread(Comm& comm, const std::vector<uint64_t>& order,
                         std::vector<Process>& processes,
                         const std::vector<const RankCollectives*>& calls) {
  // Every rank's host, rank and anchors on every process (a few bytes per rank): the clock
  // domains are the job's.
  Pack mine;
  mine.u64(processes.size());
  for (size_t i = 0; i < processes.size(); ++i) {
    const Process& p = processes[i];
    mine.u64(order[i])
        .str(p.host)
        .u64(p.rank ? 1 : 0)
        .u64(static_cast<uint64_t>(p.rank.value_or(0)));
    mine.u64(static_cast<uint64_t>(p.anchor_trace_ns))
        .u64(static_cast<uint64_t>(p.anchor_realtime_ns));
  }
  std::vector<std::pair<uint64_t, Process>> all;
  for (const std::string& b : comm.all_gather(mine.take())) {
    Unpack u(b);
    const uint64_t n = u.u64();
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t at = u.u64();
      Process p;
      p.host = u.str();
      const bool ranked = u.u64() != 0;
      const auto rank = static_cast<int64_t>(u.u64());
      if (ranked) p.rank = rank;
      p.anchor_trace_ns = static_cast<int64_t>(u.u64());
      p.anchor_realtime_ns = static_cast<int64_t>(u.u64());
      all.emplace_back(at, std::move(p));
    }
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<uint64_t> places;
  std::vector<Process> job;
  places.reserve(all.size());
  job.reserve(all.size());
  for (auto& [place, p] : all) {
    if (!places.empty() && places.back() == place)
      throw AgreedError("two ranks were given one place in the job's order");
    places.push_back(place);
    job.push_back(std::move(p));
  }
  all = {};
  std::vector<int> domain;
  const int domains = clock_domains(job, domain);
  // Where this process's ranks are in the job.
  std::vector<size_t> at(processes.size());
  for (size_t i = 0; i < processes.size(); ++i) {
    at[i] = static_cast<size_t>(std::lower_bound(places.begin(), places.end(), order[i]) -
                                places.begin());
  }
  // Each call's GPU end, with its rank's clock domain, to its communicator's owner: one block per
  // run of calls of one communicator that go to one owner (the records are sorted by
  // communicator and sequence number). Calls without a communicator, a sequence number or a GPU
  // end take no part in the alignment.
  const int size = comm.size();
  std::vector<Pack> out(static_cast<size_t>(size));
  for (size_t i = 0; i < calls.size() && i < processes.size(); ++i) {
    const RankCollectives& r = *calls[i];
    const auto d = static_cast<uint64_t>(domain[at[i]]);
    auto usable = [&r](const CollectiveRecord& x) {
      return x.comm >= 0 && static_cast<size_t>(x.comm) < r.comms.size() && x.seq >= 0 &&
             x.gpu_end >= 0;
    };
    for (size_t k = 0; k < r.records.size();) {
      if (!usable(r.records[k])) {
        ++k;
        continue;
      }
      const int32_t c = r.records[k].comm;
      const std::string& name = r.comms[static_cast<size_t>(c)];
      const size_t owner = owner_of(name, r.records[k].seq, size);
      size_t end = k;
      while (end < r.records.size() && usable(r.records[end]) && r.records[end].comm == c &&
             owner_of(name, r.records[end].seq, size) == owner)
        ++end;
      Pack& to = out[owner];
      to.str(name).u64(d).u64(end - k);
      for (; k < end; ++k) {
        to.u64(static_cast<uint64_t>(r.records[k].seq));
        to.u64(static_cast<uint64_t>(r.records[k].gpu_end));
      }
    }
  }
  std::vector<std::string> bytes(static_cast<size_t>(size));
  for (size_t q = 0; q < bytes.size(); ++q) bytes[q] = out[q].take();
  out.clear();
  std::vector<std::string> in = comm.exchange(std::move(bytes));
  // The owner: each collective's latest end per domain, where two domains took part (one domain
  // aligns nothing).
  std::map<std::string, std::vector<OwnedEnd>> owned;
  for (std::string& b : in) {
    Unpack u(b);
    while (!u.done()) {
      std::vector<OwnedEnd>& v = owned[u.str()];
      const uint64_t d = u.u64();
      if (d >= static_cast<uint64_t>(domains))
        throw std::runtime_error("a process sent the collectives of no clock domain");
      const uint64_t n = u.u64();
      for (uint64_t j = 0; j < n; ++j) {
        OwnedEnd e;
        e.seq = static_cast<int64_t>(u.u64());
        e.domain = static_cast<int32_t>(d);
        e.end = static_cast<int64_t>(u.u64());
        v.push_back(e);
      }
    }
    b = {};
  }
  Pack ends_out;
  {
    std::vector<DomainEnd> ends, members;
    for (auto& [name, v] : owned) {
      std::sort(v.begin(), v.end(), [](const OwnedEnd& a, const OwnedEnd& b) {
        return std::tie(a.seq, a.domain, a.end) < std::tie(b.seq, b.domain, b.end);
      });
      for (size_t a = 0; a < v.size();) {
        size_t z = a;
        members.clear();
        for (; z < v.size() && v[z].seq == v[a].seq; ++z)
          members.push_back({v[z].domain, v[z].end});
        ends.clear();
        if (append_domain_ends(ends, members) >= 2) {
          ends_out.u64(ends.size());
          for (const DomainEnd& e : ends)
            ends_out.u64(static_cast<uint64_t>(e.domain)).u64(static_cast<uint64_t>(e.end));
        }
        a = z;
      }
      v = {};
    }
  }
  const std::vector<int64_t> offset =
      offsets_from_ends(comm, ends_out.take(), job, domain, domains, true, nullptr);
  for (size_t i = 0; i < processes.size(); ++i) processes[i].offset_ns = offset[at[i]];
}

std::vector<int64_t> offsets_from_ends(Comm& comm, std::string ends,
                                       std::vector<Process>& processes,
                                       const std::vector<int>& domain, int domains, bool align,
                                       std::vector<ClockOffset>* clocks) {
  const std::vector<std::string> gathered = comm.gather(std::move(ends), 0);
  Pack out;
  if (comm.rank() == 0) {
    comm.run([&] {
      std::vector<DomainEnd> all;
      std::vector<size_t> group;
      for (const std::string& b : gathered) {
        Unpack u(b);
        while (!u.done()) {
          group.push_back(all.size());
          // (garbled bytes, e.g. from another build of c3scope in the job, must not index past
          // the domains: a test changes each message's bytes)
          const uint64_t k = u.count(16);
          for (uint64_t j = 0; j < k; ++j) {
            DomainEnd e;
            const uint64_t d = u.u64();
            if (d >= static_cast<uint64_t>(domains))
              throw std::runtime_error("a process sent the clock ends of no clock domain");
            e.domain = static_cast<int32_t>(d);
            e.end = static_cast<int64_t>(u.u64());
            all.push_back(e);
          }
        }
      }
      group.push_back(all.size());
      if (align) {
        std::vector<ClockOffset> c = align_from_ends(processes, domain, domains, all, group);
        if (clocks != nullptr) *clocks = std::move(c);
      }
    });
    for (const Process& p : processes) out.u64(static_cast<uint64_t>(p.offset_ns));
  }
  const std::string b = comm.broadcast(out.take(), 0);
  Unpack u(b);
  std::vector<int64_t> offset(domain.size());
  for (int64_t& x : offset) x = static_cast<int64_t>(u.u64());
  return offset;
}

}  // namespace c3::analyzer
