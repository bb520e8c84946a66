// A tiny key-value rendezvous for multi-process runs (torchrun/mpirun/srun): rank 0 publishes a
// value (the NCCL unique id) and the other ranks fetch it. Two transports, no dependencies:
//   file:/path/to/file  a file on a filesystem every rank sees; rank 0 rewrites it atomically
//                       (temporary file, then rename) and the others poll it.
//   tcp:host:port       rank 0 listens on host:port and answers each fetch from a background
//                       thread; the others connect, retrying until their timeout.
// Both keep every published key for the store's lifetime, so one store serves the several
// communicators a sweep creates (one key each).
#pragma once

#include <memory>
#include <string>

namespace c3::bench {

class Store {
 public:
  virtual ~Store() = default;

  // Opens `spec` as `rank` of `world_size`. Throws std::invalid_argument for a malformed spec
  // ("foo:", a missing or out-of-range port, an empty path) or rank/world_size, naming the spec
  // and the accepted forms; std::runtime_error when rank 0 cannot listen on the TCP address.
  // A file store's rank 0 removes a file left by an earlier run; a rank that opens and reads
  // before rank 0 does could still see that stale file, so give each run its own path.
  static std::unique_ptr<Store> open(const std::string& spec, int rank, int world_size);

  // Rank 0 only (std::logic_error elsewhere). Publishing a key again replaces its value.
  // Keys are 1-256 printable characters without spaces; values are any bytes (up to 16 MiB).
  virtual void publish(const std::string& key, const std::string& value) = 0;

  // Waits up to timeout_ms for `key` and returns its value; std::runtime_error naming the spec
  // and the key on timeout or on a malformed reply.
  virtual std::string fetch(const std::string& key, int timeout_ms) = 0;

  virtual const std::string& spec() const = 0;
};

}  // namespace c3::bench
