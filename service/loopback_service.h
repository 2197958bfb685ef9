// The real service in this process, listening on 127.0.0.1 and a port the
// kernel picks, with a catalog already open: for tests and fuzzing.
//
// It is `culprit serve` minus the command line: the same event loop, worker
// pool, routes, limits and memory accounting (service/service_handler.h),
// reached through a socket, so what a test or a fuzz input meets is what a
// client meets. exchange() opens one connection, sends the bytes (pipelined
// requests, partial requests and garbage included), half-closes it, and
// returns every byte the service sent until it closed the connection.
//
// Ownership: owns the service and its threads; the destructor stops it (the
// drain of run_server()) and joins them. The catalog is shared.
// Thread-safety: exchange(), port() and budget_in_use() from any thread,
// concurrently. Errors: port() is -1 when the service could not start (its
// reason went to stderr), and exchange() then returns ""; no exceptions.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/attributor.h"
#include "service/server.h"

namespace culprit::service {

class LoopbackService {
 public:
  // `config` as for run_server(), but the service listens on 127.0.0.1, on
  // a free port, and writes no access log.
  LoopbackService(const ServiceConfig& config, std::shared_ptr<const Attributor> attributor);
  ~LoopbackService();
  LoopbackService(const LoopbackService&) = delete;
  LoopbackService& operator=(const LoopbackService&) = delete;

  int port() const;
  // One connection's exchange: `bytes` in, the raw answers out.
  std::string exchange(std::string_view bytes) const;
  // Bytes charged to the memory budget right now (sessions' evidence;
  // nothing of a request whose answer has been read).
  size_t budget_in_use() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace culprit::service
