// `culprit serve`: its options and help. The service itself is service/
// (service/server.h); this file only turns the command line into a
// ServiceConfig.
#include "cli/serve_command.h"

#include <fmt/format.h>
#include <malloc.h>

#include <cstdlib>
#include <iostream>

#include "base/byte_size.h"
#include "base/operator_file.h"
#include "base/timestamp.h"
#include "cli/args.h"
#include "cli/catalog_choice.h"
#include "service/server.h"

namespace culprit::cli {

namespace {

const char* kServeHelp = R"(Usage: culprit serve [options]

Serves attributions over HTTP (docs/service.md, docs/openapi.json). At start-up
the catalog (the bundled one plus every --rules PATH) is compiled and all its
inline tests run; if one fails the service prints which and exits 1 without
ever answering an attribution. Stops on SIGTERM/SIGINT after finishing the
requests in flight (at most --drain-timeout).

Options:
  --listen HOST:PORT       address to bind (default 127.0.0.1:8080; port 0 = any)
  --rules PATH             add a rule directory or .attr file (repeatable)
  --no-stdlib              do not load the bundled catalog
  --threads N              HTTP worker threads (default 8)
  --token-file FILE        require "Authorization: Bearer <token>" (the file's
                           first line); /healthz, /readyz and /v1/openapi.json stay open
  --allow-host NAME        a name the Host header may carry besides localhost,
                           127.0.0.0/8, [::1] and the --listen address (repeatable);
                           other Hosts get 421 when there is no token or this is given
  --max-body SIZE          largest request body (default 64M) -> 413
  --max-session-bytes SIZE memory one session or request may hold (default 512M) -> 413
  --max-total-bytes SIZE   memory all sessions and requests may hold (default 2G) -> 429
  --max-sessions N         open sessions (default 1000) -> 429
  --max-connections N      open client connections (default 1024) -> 503
  --session-ttl DUR        idle time before a session expires (default 15m)
  --header-timeout DUR     a request's line and headers must arrive within this
                           time of its first byte (default 10s) -> 408
  --request-timeout DUR    the whole request, body included (default 60s) -> 408
  --write-timeout DUR      a client must take an answer within this time (default 10s)
  --keep-alive DUR         idle connections are closed after this time (default 5s)
  --drain-timeout DUR      on SIGTERM, requests in flight get this long (default 10s)
  --no-access-log          do not write one JSON line per request to stderr
  --port-file FILE         write the bound port to FILE once ready (for scripts)
  --engine jit|interp      run rules as native code (default jit; also $CULPRIT_ENGINE)
  --no-cache               neither read nor write the compile cache
  --cache-dir DIR          compile cache (default: $CULPRIT_CACHE_DIR, else
                           $XDG_CACHE_HOME/culprit, else ~/.cache/culprit)
  -h, --help               this help

SIZE: bytes with an optional K, M or G suffix (powers of 1024). DUR: 90s, 15m, 1h.
Exit status: 0 stopped by a signal, 1 the catalog fails its tests, 2 bad usage,
rules that do not compile or an address that cannot be bound.
)";


int usage(const std::string& msg) {
  std::cerr << fmt::format("culprit serve: {}\nTry 'culprit serve --help'.\n", msg);
  return 2;
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  ArgSpec spec = with_catalog_options({{"no-access-log", "help"},
                                       {"listen", "threads", "token-file", "allow-host", "max-body", "max-session-bytes",
                                        "max-total-bytes", "max-sessions", "max-connections", "session-ttl",
                                        "header-timeout", "request-timeout", "write-timeout", "keep-alive",
                                        "drain-timeout", "port-file"}});
  Args a;
  std::string err;
  if (!parse_args(argc, argv, 2, spec, a, err)) return usage(err);
  if (a.has("help")) {
    std::cout << kServeHelp;
    return 0;
  }
  if (!a.positionals.empty()) return usage("unexpected argument '" + a.positionals[0] + "'");
  service::ServiceConfig cfg;
  if (auto l = a.last("listen"))
    if (!parse_listen(*l, cfg.host, cfg.port, err)) return usage(err);
  if (auto t = a.last("threads")) {
    char* end = nullptr;
    long n = std::strtol(t->c_str(), &end, 10);
    if (t->empty() || *end || n < 1 || n > 1024) return usage("--threads must be an integer from 1 to 1024");
    cfg.threads = static_cast<unsigned>(n);
  }
  for (auto [name, field] : {std::pair<const char*, size_t*>{"max-body", &cfg.max_body},
                             {"max-session-bytes", &cfg.max_session_bytes},
                             {"max-total-bytes", &cfg.max_total_bytes}, {"max-sessions", &cfg.max_sessions},
                             {"max-connections", &cfg.max_connections}})
    if (auto v = a.last(name)) {
      auto n = parse_byte_size(*v);
      if (!n || *n == 0) return usage(fmt::format("--{} must be a positive size such as 64M or 64MiB", name));
      *field = static_cast<size_t>(*n);
    }
  for (auto [name, field] : {std::pair<const char*, int*>{"header-timeout", &cfg.header_timeout_s},
                             {"request-timeout", &cfg.request_timeout_s}, {"write-timeout", &cfg.write_timeout_s},
                             {"keep-alive", &cfg.keep_alive_s}, {"drain-timeout", &cfg.drain_timeout_s}})
    if (auto v = a.last(name)) {
      auto d = parse_duration(*v);
      if (!d || *d < 1000000000LL || *d > 86400LL * 1000000000LL)
        return usage(fmt::format("--{} must be a duration from 1s to 24h", name));
      *field = static_cast<int>(*d / 1000000000LL);
    }
  if (cfg.request_timeout_s < cfg.header_timeout_s) cfg.request_timeout_s = cfg.header_timeout_s;
  if (auto v = a.last("session-ttl")) {
    int64_t d = 0;
    auto c = parse_bounded_duration(*v, d);
    if (c == DurationCheck::range) return usage(duration_error(c, "--session-ttl"));
    if (c != DurationCheck::ok || d < 1000000000LL) return usage("--session-ttl must be a duration of at least 1s");
    cfg.session_ttl = std::chrono::seconds(d / 1000000000LL);
  }
  if (auto f = a.last("token-file"))
    if (!read_secret(*f, "", cfg.token, err)) return usage("--token-file: " + err);
  for (const auto& h : a.all("allow-host")) {
    if (h.empty() || h.find_first_of(" \t/@") != std::string::npos)
      return usage("--allow-host takes a host name or address without scheme, path or port");
    cfg.allow_hosts.push_back(h);
  }
  cfg.access_log = !a.has("no-access-log");
  cfg.port_file = a.last("port-file").value_or("");

  if (!catalog_config(a, {}, cfg.catalog, err)) return usage(err);
  // With glibc's malloc (a build without mimalloc, cli/allocator.h; this is
  // a no-op under mimalloc): request bodies and their observations are
  // megabytes each, allocated and freed by different threads. glibc raises
  // its mmap threshold after the first such block is freed, so later ones
  // come from per-thread heaps that keep the freed memory: RSS then outgrows
  // --max-total-bytes, which counts what requests hold, by tens of MB. A fixed threshold keeps every block of
  // 1 MiB or more in its own mapping, returned to the system when freed.
  (void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
  return service::run_server(cfg);
}

}  // namespace culprit::cli
