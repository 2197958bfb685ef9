// `culprit dashboard`: a read-only web view of a store (docs/dashboard.md).
//
// The server is the service's event loop (service/http_server.h): one
// thread accepts, reads and writes every connection without blocking and
// parses requests as their bytes arrive, so a client that sends its request
// a line every few seconds holds no worker and delays no one; pipelined
// requests are answered in order. Each request has deadlines (its head
// within read_timeout_s of its first byte, its answer taken within
// write_timeout_s; idle keep-alive connections close after keep_alive_s),
// and SIGTERM drains: no new connections, requests in flight finish until
// drain_timeout_s, then every connection is closed. /healthz and every
// refusal are answered on the loop from the request's head; pages are
// built on the workers, each with its own read-only store connection from
// a pool, so a slow page never waits for another. Store queries are index
// range scans (PostgreSQL's are also cut off by a statement timeout).
//
// Only GET and HEAD exist: every other method, on any path, is 405 with
// `Allow: GET, HEAD`, and a request with a body is refused, both before any
// body is read (the connection is then closed). A request whose Host is not
// this server (dashboard/host_allow.h) is 421, /healthz excepted. Pages
// carry a Content-Security-Policy that allows only the binary's own
// scripts, styles and images.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace culprit::dashboard {

struct DashboardConfig {
  std::string store_url;          // sqlite:PATH | postgresql://...
  std::string password;           // PostgreSQL; "" = libpq's own (PGPASSWORD, PGPASSFILE)
  std::string host = "127.0.0.1";
  int port = 8081;                // 0: any free port
  unsigned threads = 8;           // HTTP workers (and store connections at most)
  int read_timeout_s = 5;         // a request (its head: no bodies here) must arrive within this of its first byte
  int write_timeout_s = 5;        // an answer must be taken by the client within this
  int keep_alive_s = 2;           // an idle keep-alive connection is closed after this
  int drain_timeout_s = 10;       // after SIGTERM, requests in flight may finish until this
  size_t max_connections = 256;   // beyond: 503 and closed
  std::vector<std::string> allowed_hosts;  // --allow-host: Host names answered besides loopback and `host`
  bool access_log = true;         // one JSON line per request on stderr
  std::string port_file;          // the bound port is written here once serving (for scripts)
};

// Opens the store, serves until SIGTERM/SIGINT or request_stop(). Returns
// the exit status: 0 stopped, 2 the address cannot be bound, 3 the store
// cannot be opened (missing, not a regular file, not a store, newer than
// this binary). Listening on an address that is not loopback is allowed,
// with a warning on stderr (there is no login).
int run_dashboard(const DashboardConfig& config);

// Asks a running run_dashboard() to stop. Async-signal-safe.
void request_stop();

}  // namespace culprit::dashboard
