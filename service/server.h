// The attribution service: routes, limits, authentication, accounting,
// logging.
//
// run_server() binds, starts answering /healthz at once, compiles and
// self-tests the catalog in the calling thread, then serves until
// request_stop() (SIGTERM/SIGINT in `culprit serve`) and the drain. Every
// route is described in docs/service.md and docs/openapi.json.
//
// Threading: one event-loop thread owns the sockets (service/http_server.h:
// deadlines per request, pipelining, slow clients cost no worker) and
// answers the cheap routes (/healthz, /readyz, /metrics, /v1/openapi.json,
// /v1/catalog) itself; complete requests go to a fixed pool of `threads`
// workers, where verdicts are computed with one scan thread each, the
// Program being shared and immutable. Memory: every body byte, every
// observation and context a request or a session holds, and the copy a
// session attribution scans, is charged to one budget (max_total_bytes)
// before it is kept (service/session_store.h). Nothing here throws to its
// caller: handlers catch everything and answer 500.
//
// The routes, limits and accounting are service/service_handler.h's; tests
// and fuzzing run this same service in-process through
// service/loopback_service.h.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "base/limits.h"
#include "runtime/attributor.h"

namespace culprit::service {

// Defaults are base/limits.h's.
struct ServiceConfig {
  std::string host = "127.0.0.1";
  int port = 8080;                        // 0: any free port (printed on stderr)
  unsigned threads = 8;                   // HTTP worker pool
  size_t max_body = limits::kMaxBody;                  // request body bytes, decoded (413 beyond)
  size_t max_session_bytes = limits::kMaxSessionBytes; // accounted bytes per session (413 beyond)
  size_t max_total_bytes = limits::kMaxTotalBytes;     // everything requests and sessions hold (429 beyond)
  size_t max_sessions = limits::kMaxSessions;          // open sessions (429 beyond)
  size_t max_connections = limits::kConnections;       // open connections (503 beyond)
  size_t max_requests_per_connection = limits::kRequestsPerConnection;
  std::chrono::seconds session_ttl{900};  // idle time before a session expires
  int header_timeout_s = limits::kHeaderTimeoutSeconds;   // first byte -> end of the head (408)
  int request_timeout_s = limits::kRequestTimeoutSeconds; // first byte -> end of the body (408)
  int write_timeout_s = limits::kWriteTimeoutSeconds;     // an answer not taken in this time: closed
  int keep_alive_s = limits::kKeepAliveSeconds;           // idle connection: closed
  int drain_timeout_s = limits::kDrainTimeoutSeconds;     // SIGTERM: requests in flight get this long
  std::string token;                      // bearer token; "" = no authentication
  // --allow-host: names (besides loopback and `host`) the Host header may
  // carry. Checked on every route but the probes when `token` is empty, or
  // when this list is not (service/host_check.h; 421 otherwise).
  std::vector<std::string> allow_hosts;
  AttributorConfig catalog;               // rule paths and evaluator; the service always self-tests
  bool access_log = true;                 // one JSON line per request on stderr
  std::string port_file;                  // write the bound port here once ready (tests)
};

// Serves until request_stop(). Returns the process exit status: 0 when
// stopped, 1 when the catalog fails one of its inline tests, 2 when the
// rules do not compile or the address cannot be bound.
int run_server(const ServiceConfig& config);

// Asks a running run_server() to stop: it stops accepting, finishes the
// requests in flight (for at most drain_timeout_s) and returns. Async-signal-safe.
void request_stop();

}  // namespace culprit::service
