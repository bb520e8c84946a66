// What the writer's fault-injection and kill tests share: the programs they run, the environment
// that injects the collector (and the faulty VFS), and the checks every trace they leave must
// pass.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "harness.h"

namespace c3::fault {

std::string fault_vfs_path();  // libc3fault-vfs.so (fault_vfs.cpp)
std::string fault_job_path();  // c3_fault_job (fault_job.cpp)

// The environment of a recorded run: the collector preloaded (after the ASan runtime in the
// sanitizer build) and, with `with_vfs`, the faulty VFS after it; traces go to `out_dir`.
std::map<std::string, std::string> recording_env(const std::string& out_dir, bool with_vfs);

// C3_FAULT_LOG's counters ("write", "fsync", "truncate", "injected"); empty if none was written.
std::map<std::string, int64_t> read_fault_log(const std::string& path);

// "" when the trace opens with the project's reader and PRAGMA integrity_check says ok,
// otherwise what went wrong.
std::string check_trace_file(const std::string& path);

// Rows of the c3_fault_job `steps` recording in a trace.
struct StepRows {
  int64_t steps = 0;  // nvtx_range "step K"
  int64_t kernels = 0;
  int64_t copies = 0;
};
StepRows step_rows(const tracedb::Reader& t);

// The value of stats row `name` (-1 when there is none).
int64_t stat(const tracedb::Reader& t, const std::string& name);

}  // namespace c3::fault
