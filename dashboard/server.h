// `culprit dashboard`: a read-only web view of a store (docs/dashboard.md).
//
// The server is cpp-httplib's: a fixed pool of worker threads, one
// connection per worker at a time. What keeps one slow or idle client from
// holding up the others at dashboard scale (a handful of operators):
// per-read and per-write socket timeouts (5 s), a short keep-alive idle
// timeout (2 s) and a cap on requests per connection, request lines and
// headers capped by httplib (8 KiB each), no request bodies at all (a
// request with one is refused before it is read, and the connection
// closed), and store queries that are index range scans (PostgreSQL's are
// also cut off by a statement timeout). Each worker takes its own read-only
// store connection from a pool, so a slow page never waits for another.
//
// Only GET and HEAD exist: every other method, on any path, is 405 with
// `Allow: GET, HEAD`. Pages carry a Content-Security-Policy that allows
// only the binary's own scripts, styles and images.
#pragma once

#include <string>

namespace culprit::dashboard {

struct DashboardConfig {
  std::string store_url;         // sqlite:PATH | postgresql://...
  std::string password;          // PostgreSQL; "" = libpq's own (PGPASSWORD, PGPASSFILE)
  std::string host = "127.0.0.1";
  int port = 8081;               // 0: any free port
  unsigned threads = 8;          // HTTP workers (and store connections at most)
  int read_timeout_s = 5, write_timeout_s = 5, keep_alive_s = 2;
  bool access_log = true;        // one JSON line per request on stderr
  std::string port_file;         // the bound port is written here once serving (for scripts)
};

// Opens the store, serves until SIGTERM/SIGINT or request_stop(). Returns
// the exit status: 0 stopped, 2 the address cannot be bound, 3 the store
// cannot be opened (missing, not a store, newer than this binary).
int run_dashboard(const DashboardConfig& config);

// Asks a running run_dashboard() to stop. Async-signal-safe.
void request_stop();

}  // namespace culprit::dashboard
