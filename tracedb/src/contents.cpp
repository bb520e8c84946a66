#include "c3/tracedb/contents.h"

#include <exception>

#include "c3/tracedb/reader.h"
#include "c3/tracedb/writer.h"

namespace c3::tracedb {

std::string describe(const TraceCounts& c) {
  struct Kind {
    int64_t n;
    const char *one, *many;
  };
  const Kind kinds[] = {{c.kernels, "kernel", "kernels"},
                        {c.copies, "copy", "copies"},
                        {c.sets, "set", "sets"},
                        {c.nccl_calls, "NCCL call", "NCCL calls"},
                        {c.nvtx, "NVTX event", "NVTX events"},
                        {c.api_calls, "API call", "API calls"}};
  std::string out;
  for (const Kind& k : kinds) {
    if (k.n == 0 && &k != &kinds[0]) continue;
    if (!out.empty()) out += ", ";
    out += std::to_string(k.n) + " " + (k.n == 1 ? k.one : k.many);
  }
  return out;
}

bool count_rows(const std::string& path, TraceCounts* out) {
  try {
    const auto r = Reader::open(path);
    auto q = r->query(
        "SELECT (SELECT COUNT(*) FROM kernel), (SELECT COUNT(*) FROM memcpy), (SELECT COUNT(*) "
        "FROM memset), (SELECT COUNT(*) FROM collective), (SELECT COUNT(*) FROM nvtx_range), "
        "(SELECT COUNT(*) FROM api_call)");
    if (!q.step()) return false;
    *out = {q.i64(0), q.i64(1), q.i64(2), q.i64(3), q.i64(4), q.i64(5)};
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

TraceCounts counts_of(const Writer& w) {
  return {w.rows_in("kernel"),     w.rows_in("memcpy"),     w.rows_in("memset"),
          w.rows_in("collective"), w.rows_in("nvtx_range"), w.rows_in("api_call")};
}

}  // namespace c3::tracedb
