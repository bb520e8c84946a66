// c3scope-mpi: c3scope's analyze, compare and export on many processes under an MPI launcher
// (mpirun, srun; docs/scale.md). Each process maps (or renders) its share of the traces; process 0
// reduces and writes the outputs, and alone speaks: the others' standard output and error are
// closed.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "commands.h"
#include "mpi_comm.h"
#include "output.h"

namespace {

bool g_finished = false;

// A process that leaves without finishing (exit() from a library, an uncaught error) ends the
// job instead of leaving the others waiting.
void abort_unless_finished() {
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (up != 0 && down == 0 && !g_finished) MPI_Abort(MPI_COMM_WORLD, 2);
}

void say(int fd, const std::string& line) {
  const std::string s = "c3scope-mpi: " + line + "\n";
  if (::write(fd, s.data(), s.size()) < 0) return;
}

// C3SCOPE_MPI_TIMEOUT: seconds a silent process is waited for (default 120).
bool timeout_from_env(double& out, std::string& error) {
  out = 120;
  const char* v = std::getenv("C3SCOPE_MPI_TIMEOUT");
  if (v == nullptr || *v == '\0') return true;
  char* end = nullptr;
  errno = 0;
  const double t = std::strtod(v, &end);
  if (errno != 0 || end == v || *end != '\0' || !std::isfinite(t) || t < 1 || t > 86400 * 7) {
    error = "C3SCOPE_MPI_TIMEOUT='" + std::string(v).substr(0, 64) +
            "' is not a number of seconds from 1 to 604800; unset it or give one (e.g. 300)";
    return false;
  }
  out = t;
  return true;
}

// C3SCOPE_MPI_TEST_FAULT=<stop|exit|kill>:<process>, for the tests of a job's failures
// (tests/mpi): that process stops (SIGSTOP), leaves without finishing, or is killed, once MPI is
// up.
void test_fault(int rank) {
  const char* v = std::getenv("C3SCOPE_MPI_TEST_FAULT");
  if (v == nullptr) return;
  const std::string f = v;
  const size_t colon = f.find(':');
  if (colon == std::string::npos || f.substr(colon + 1) != std::to_string(rank)) return;
  const std::string what = f.substr(0, colon);
  if (what == "stop") ::raise(SIGSTOP);
  if (what == "kill") ::raise(SIGKILL);
  if (what == "exit") std::exit(3);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    say(2, "MPI did not start; run it under mpirun or srun (docs/scale.md)");
    return 2;
  }
  std::atexit(abort_unless_finished);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // Only process 0 speaks; the others keep a descriptor for the line that ends a job.
  const int say_fd = ::dup(STDERR_FILENO);
  if (rank != 0) {
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      ::close(null);
    }
  }
  // Process 0's C3SCOPE_MPI_TIMEOUT is every process's (a launcher may not pass the environment
  // to every node).
  double timeout = 0;
  std::string bad;
  int env_ok = timeout_from_env(timeout, bad) ? 1 : 0;
  double agreed[2] = {static_cast<double>(env_ok), timeout};
  MPI_Bcast(agreed, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  env_ok = agreed[0] != 0 ? 1 : 0;
  timeout = agreed[1];
  if (provided < MPI_THREAD_MULTIPLE || env_ok == 0) {
    if (rank == 0) {
      say(say_fd, env_ok == 0 ? bad
                              : "this MPI library cannot serve threads (MPI_THREAD_MULTIPLE): "
                                "c3scope-mpi needs them for its heartbeats (docs/scale.md)");
    }
    g_finished = true;
    MPI_Finalize();
    return 2;
  }
  c3::mpi::MpiComm comm(timeout, say_fd >= 0 ? say_fd : STDERR_FILENO);
  c3::cli::g_comm = &comm;
  test_fault(rank);
  int rc = c3::cli::kExitUsage;
  const std::string sub = argc > 1 ? argv[1] : "";
  if (sub != "analyze" && sub != "compare" && sub != "export" && sub != "--help" && sub != "-h" &&
      sub != "--version") {
    if (rank == 0) {
      say(say_fd,
          (sub.empty() ? std::string("no command") : "'" + sub + "'") +
              ": c3scope-mpi runs analyze, compare and export (c3scope-mpi analyze TRACES...); "
              "run the other commands with c3scope");
    }
  } else {
    rc = c3::cli::run(argc, argv);
  }
  rc = comm.finish(rc);
  g_finished = true;
  return rc;
}
