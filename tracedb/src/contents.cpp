#include "c3/tracedb/contents.h"

#include <exception>

#include "c3/tracedb/reader.h"

namespace c3::tracedb {

std::string trace_contents(const std::string& path) {
  try {
    auto r = Reader::open(path);
    auto q = r->query(
        "SELECT (SELECT COUNT(*) FROM kernel), (SELECT COUNT(*) FROM memcpy), (SELECT COUNT(*) "
        "FROM memset), (SELECT COUNT(*) FROM collective), (SELECT COUNT(*) FROM nvtx_range "
        "WHERE kind <> 'mark'), (SELECT COUNT(*) FROM nvtx_range WHERE kind = 'mark'), (SELECT "
        "COUNT(*) FROM api_call)");
    if (!q.step()) return {};
    static const char* const one[] = {"kernel",     "copy",      "set",     "NCCL call",
                                      "NVTX range", "NVTX mark", "API call"};
    static const char* const many[] = {"kernels",     "copies",     "sets",     "NCCL calls",
                                       "NVTX ranges", "NVTX marks", "API calls"};
    std::string out;
    for (int i = 0; i < 7; ++i) {
      const int64_t n = q.i64(i);
      if (n == 0 && i != 0) continue;  // "0 kernels" stays: it says the GPU did nothing
      if (!out.empty()) out += ", ";
      out += std::to_string(n) + " " + (n == 1 ? one[i] : many[i]);
    }
    return out;
  } catch (const std::exception&) {
    return {};
  }
}

}  // namespace c3::tracedb
