// analyzer::Comm over MPI (c3scope-mpi; docs/scale.md). A thread of its own exchanges heartbeats
// with process 0 (process 0 with every other) on a communicator of their own, whatever the main
// thread does (MPI_THREAD_MULTIPLE); the main thread's collectives are non-blocking, polled. A
// process not heard from for the timeout (it stopped, or died without the launcher noticing)
// ends the job with MPI_Abort and a line naming it: no wait is unbounded.
#pragma once

#include <mpi.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "c3/analyzer/summary/distributed.h"

namespace c3::mpi {

class MpiComm final : public analyzer::Comm {
 public:
  // After MPI_Init_thread with MPI_THREAD_MULTIPLE. `timeout_s`: how long a silent process is
  // waited for. `say`: the file descriptor the abort line goes to (processes other than 0 have
  // their stdout and stderr closed, so that only process 0 speaks). Starts the heartbeats.
  MpiComm(double timeout_s, int say);
  ~MpiComm() override;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::string> gather(std::string bytes, int root) override;
  std::string broadcast(std::string bytes, int root) override;
  std::vector<std::string> exchange(std::vector<std::string> out) override;
  void send_to(int to, std::string bytes) override;
  std::string receive_from(int from) override;
  void fail(const std::string& line) override { abort(2, line); }
  int local_processes() const override { return local_; }
  int node() const override { return node_; }

  // Every process's exit code agreed (process 0's), the heartbeats stopped in order, and
  // MPI_Finalize. The last call.
  int finish(int rc);
  // Prints "c3scope-mpi: <line>" and ends the whole job with `code`.
  [[noreturn]] void abort(int code, const std::string& line);

 private:
  void heartbeats();  // the heartbeat thread
  void pump();        // one round of it
  void wait(std::vector<MPI_Request>& reqs);
  void send(const std::string& bytes, int to, std::vector<MPI_Request>& reqs,
            std::vector<uint64_t>& lengths, int tag);
  std::string receive(int from, int tag);
  void beat(char what);
  std::string who(int p) const;

  MPI_Comm data_ = MPI_COMM_NULL, beat_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_ = 1, node_ = 0;
  double timeout_ = 120, interval_ = 1, last_sent_ = 0;
  int say_ = 2;
  std::thread beater_;
  std::atomic<bool> finishing_{false};  // the main thread reached finish()
  std::vector<double> heard_;
  std::vector<bool> bye_;
  bool beating_ = true;
  MPI_Request beat_recv_ = MPI_REQUEST_NULL;
  char beat_in_ = 0;
  std::vector<MPI_Request> beat_sends_;
  std::vector<std::string> hosts_;
};

}  // namespace c3::mpi
