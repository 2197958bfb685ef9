#include "service/server.h"

#include <fmt/format.h>
#include <signal.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <thread>

#include "base/limits.h"
#include "base/stop_signals.h"
#include "service/host_check.h"
#include "service/http_server.h"
#include "service/service_handler.h"

namespace culprit::service {

namespace {

std::atomic<bool> g_stop{false};

HttpServerConfig server_config(const ServiceConfig& cfg) {
  HttpServerConfig h;
  h.host = cfg.host;
  h.port = cfg.port;
  h.threads = cfg.threads;
  h.parse_limits = {limits::kRequestHead, limits::kHeaderLine, limits::kHeaderCount, cfg.max_body};
  h.max_connections = cfg.max_connections;
  h.max_requests_per_connection = cfg.max_requests_per_connection;
  h.header_timeout_s = cfg.header_timeout_s;
  h.request_timeout_s = cfg.request_timeout_s;
  h.write_timeout_s = cfg.write_timeout_s;
  h.keep_alive_s = cfg.keep_alive_s;
  h.drain_timeout_s = cfg.drain_timeout_s;
  return h;
}

}  // namespace

Service::Service(const ServiceConfig& cfg, std::atomic<bool>& stop)
    : cfg_(cfg), stop_(stop), hosts_(cfg.host, cfg.allow_hosts), budget_(cfg.max_total_bytes),
      store_(SessionLimits{cfg.max_sessions, cfg.max_session_bytes, cfg.session_ttl}, budget_) {}

int Service::run(std::shared_ptr<const Attributor> attributor, std::function<void(int)> on_ready) {
  // Said before binding, so that it is said even when binding fails.
  if (cfg_.token.empty() && !is_loopback_host(cfg_.host))
    std::cerr << fmt::format("culprit serve: warning: --listen {} is not a loopback address and there is no "
                             "--token-file: anyone who can reach it can post evidence and read every verdict; give "
                             "--token-file, or listen on 127.0.0.1\n",
                             is_wildcard_host(cfg_.host) ? cfg_.host + " (every interface)" : cfg_.host);
  HttpServer server(server_config(cfg_), *this);
  std::string error;
  int port = server.bind(error);
  if (port <= 0) {
    std::cerr << fmt::format("culprit serve: cannot listen on {}:{}: {}\n", cfg_.host, cfg_.port, error);
    return 2;
  }
  std::atomic<bool> server_done{false};
  std::thread loop([&] {
    server.run();
    server_done = true;
  });
  // Stops the server once asked (signal or failed start-up) and expires
  // idle sessions once a second.
  std::thread janitor([&] {
    auto last_reap = Clock::now();
    while (!server_done.load()) {
      if (stop_.load() && !server.stopping()) {
        if (ready_.load())
          std::cerr << fmt::format("{{\"event\":\"draining\",\"deadline_seconds\":{}}}\n", cfg_.drain_timeout_s);
        server.stop();
      }
      if (Clock::now() - last_reap > std::chrono::seconds(1)) {
        if (size_t n = store_.expire()) metrics_.session_expired(n);
        last_reap = Clock::now();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  std::cerr << fmt::format("{{\"event\":\"starting\",\"listen\":\"{}:{}\"}}\n", cfg_.host, port);

  int rc = 0;
  bool catalog_ready;
  if (attributor) {  // opened and tested by the caller (tests and fuzzing open a catalog made in memory)
    attributor_ = std::move(attributor);
    build_catalog_json(nullptr);
    catalog_ready = true;
  } else {
    catalog_ready = load_catalog_and_test();
  }
  if (!catalog_ready) {
    rc = start_failure_;
    stop_ = true;
  } else {
    ready_ = true;
    metrics_.set_ready(true);
    const auto& cat = attributor_->catalog();
    std::cerr << fmt::format("{{\"event\":\"ready\",\"listen\":\"{}:{}\",\"catalog\":\"{}\",\"version\":\"{}\","
                             "\"digest\":\"{}\",\"evaluator\":\"{}\",\"threads\":{}}}\n",
                             cfg_.host, port, cat.name, cat.version, cat.digest, attributor_->program()->evaluator(), cfg_.threads);
    if (!cfg_.port_file.empty()) {
      std::ofstream pf(cfg_.port_file + ".tmp");
      pf << port << "\n";
      pf.close();
      std::rename((cfg_.port_file + ".tmp").c_str(), cfg_.port_file.c_str());
    }
    if (on_ready) on_ready(port);
  }
  loop.join();
  janitor.join();
  if (size_t n = server.abandoned()) {
    // A worker is still computing an answer nobody will receive: do not
    // wait for it (the drain deadline is a promise), and do not run
    // destructors under its feet.
    std::cerr << fmt::format("{{\"event\":\"stopped\",\"reason\":\"drain deadline\",\"abandoned\":{}}}\n", n);
    std::fflush(stderr);
    std::_Exit(rc);
  }
  if (rc == 0) std::cerr << "{\"event\":\"stopped\",\"reason\":\"signal\"}\n";
  return rc;
}

void request_stop() { g_stop.store(true); }

int run_server(const ServiceConfig& config) {
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, not a dead process
#ifdef __GLIBC__
  // With glibc's malloc (the executable may bring mimalloc instead, on which
  // this is a no-op), few malloc arenas: memory freed by one worker is reused by the next
  // request on another, so RSS follows what requests hold instead of growing
  // with every thread that once held a large request.
  mallopt(M_ARENA_MAX, 2);
#endif
  // In-flight requests finish when SIGTERM/SIGINT arrive (base/stop_signals.h).
  return run_until_stop_signal(g_stop, "culprit serve", [&] {
    Service service(config, g_stop);
    return service.run();
  });
}

}  // namespace culprit::service
