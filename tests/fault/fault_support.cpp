#include "fault_support.h"

#include <fstream>

namespace c3::fault {

std::string fault_vfs_path() {
  return std::string(C3_BINARY_DIR) + "/lib/libc3fault-vfs.so";
}

std::string fault_job_path() {
  return std::string(C3_BINARY_DIR) + "/bin/c3_fault_job";
}

std::map<std::string, std::string> recording_env(const std::string& out_dir, bool with_vfs) {
  std::string preload = C3_ASAN_RUNTIME;
  auto add = [&](const std::string& lib) { preload += (preload.empty() ? "" : ":") + lib; };
  add(e2e::collector_path());
  if (with_vfs) add(fault_vfs_path());
  return {{"LD_PRELOAD", preload}, {"C3SCOPE_OUTPUT", out_dir + "/"}};
}

std::map<std::string, int64_t> read_fault_log(const std::string& path) {
  std::map<std::string, int64_t> out;
  std::ifstream in(path);
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) out[key] = value;
  return out;
}

std::string check_trace_file(const std::string& path) {
  try {
    auto t = tracedb::Reader::open(path);
    const std::string verdict = e2e::text(*t, "PRAGMA integrity_check");
    return verdict == "ok" ? "" : "integrity_check: " + verdict;
  } catch (const std::exception& e) {
    return std::string("cannot open: ") + e.what();
  }
}

StepRows step_rows(const tracedb::Reader& t) {
  StepRows r;
  r.steps = e2e::scalar(t, "SELECT COUNT(*) FROM nvtx_range WHERE name LIKE 'step %'");
  r.kernels = t.count("kernel");
  r.copies = t.count("memcpy");
  return r;
}

int64_t stat(const tracedb::Reader& t, const std::string& name) {
  auto q = t.query("SELECT value FROM stats WHERE name = '" + name + "'");
  return q.step() ? q.i64(0) : -1;
}

}  // namespace c3::fault
