// The HTTP service (cpp-httplib): routes, limits, authentication, logging.
//
// run_server() binds, starts answering /healthz at once, compiles and
// self-tests the catalog in the calling thread, then serves until
// request_stop() (SIGTERM/SIGINT in `culprit serve`). Every route is
// described in docs/service.md and docs/openapi.json.
//
// Threading: a fixed pool of `threads` workers serves connections (one
// connection per worker at a time, so keep-alive idles and read timeouts are
// kept short); verdicts are computed on the worker with one scan thread, the
// Program being shared and immutable. Nothing here throws to its caller:
// handlers catch everything and answer 500.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "runtime/attributor.h"

namespace culprit::service {

struct ServiceConfig {
  std::string host = "127.0.0.1";
  int port = 8080;                        // 0: any free port (printed on stderr)
  unsigned threads = 8;                   // HTTP worker pool
  size_t max_body = 64u << 20;            // request body bytes (413 beyond)
  size_t max_session_bytes = 256u << 20;  // accounted bytes per session (413 beyond)
  size_t max_total_bytes = 1u << 30;      // all sessions + in-flight one-shots (429 beyond)
  size_t max_sessions = 1000;             // open sessions (429 beyond)
  std::chrono::seconds session_ttl{900};  // idle time before a session expires
  int read_timeout_s = 10, write_timeout_s = 10, keep_alive_s = 2;
  std::string token;                      // bearer token; "" = no authentication
  AttributorConfig catalog;               // rule paths and evaluator; the service always self-tests
  bool access_log = true;                 // one JSON line per request on stderr
  std::string port_file;                  // write the bound port here once ready (tests)
};

// Serves until request_stop(). Returns the process exit status: 0 when
// stopped, 1 when the catalog fails one of its inline tests, 2 when the
// rules do not compile or the address cannot be bound.
int run_server(const ServiceConfig& config);

// Asks a running run_server() to stop: it stops accepting, finishes the
// requests in flight and returns. Async-signal-safe.
void request_stop();

}  // namespace culprit::service
