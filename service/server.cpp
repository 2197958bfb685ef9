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
#include <iostream>
#include <thread>

#include "base/limits.h"
#include "base/stop_signals.h"
#include "service/host_check.h"
#include "service/http.h"
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

int Service::run() {
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
  if (!load_catalog_and_test()) {
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

void Service::use_open_catalog(std::shared_ptr<const Attributor> attributor) {
  attributor_ = std::move(attributor);
  build_catalog_json(nullptr);
  ready_ = true;
}

// ------------------------------------------------------------ in-process

struct InProcessService::Impl {
  ServiceConfig cfg;
  std::atomic<bool> stop{false};  // never set: nothing runs
  Service service;
  explicit Impl(const ServiceConfig& c) : cfg(c), service(cfg, stop) {}
};

InProcessService::InProcessService(const ServiceConfig& config, std::shared_ptr<const Attributor> attributor)
    : impl_(std::make_unique<Impl>(config)) {
  impl_->cfg.access_log = false;
  impl_->service.use_open_catalog(std::move(attributor));
}

InProcessService::~InProcessService() = default;

std::string InProcessService::handle_bytes(std::string_view bytes) {
  // The event loop's steps for one connection, without the socket.
  const ServiceConfig& cfg = impl_->cfg;
  Service& svc = impl_->service;
  RequestParser parser({limits::kRequestHead, limits::kHeaderLine, limits::kHeaderCount, cfg.max_body});
  std::string out;
  size_t charged = 0;
  auto finish = [&](HttpResponse& res, bool keep, bool head_only = false) {
    out += serialize_response(res, head_only, keep);
    return keep;
  };
  while (!bytes.empty()) {
    size_t used = parser.feed(bytes.data(), bytes.size());
    bytes.remove_prefix(used);
    if (parser.state() == RequestParser::State::Error) {
      HttpResponse res;
      res.status = parser.error_status();
      svc.protocol_error(parser.error_message(), parser.error_limit(), res);
      finish(res, false);
      break;
    }
    size_t have = parser.request().body.size();
    if (have > charged) {
      if (!svc.reserve_body(have - charged)) {
        HttpResponse res;
        res.status = 429;
        svc.protocol_error("the service's memory budget is exhausted; retry later", "max_total_bytes", res);
        finish(res, false);
        break;
      }
      charged = have;
    }
    if (parser.state() != RequestParser::State::Complete) {
      if (used == 0) break;
      continue;
    }
    HttpRequest req = parser.take();
    req.remote_addr = "in-process";
    req.body.set_charge(&svc, charged);
    charged = 0;
    HttpResponse res;
    if (!svc.on_head(req, res)) svc.handle(req, res);
    if (!finish(res, req.keep_alive() && !res.close, req.method == "HEAD")) break;
  }
  if (charged) svc.release(charged);
  return out;
}

size_t InProcessService::budget_in_use() const { return impl_->service.budget().used(); }

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
