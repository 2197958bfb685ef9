// The attribution service as the HTTP server sees it: one HttpHandler
// (service/http_server.h) holding the service's state, its routes split by
// job across files:
//
//   service/request_dispatch.cpp    the head checks (route, Host, method,
//                                   token, readiness, media type), dispatch
//                                   to a route, protocol errors, access log
//   service/probes_and_catalog.cpp  /healthz, /readyz, /metrics, the OpenAPI
//                                   and catalog documents; opening the catalog
//   service/attribution_routes.cpp  POST /v1/attributions, and the engine run
//                                   every attribution ends in
//   service/workload_routes.cpp     the workload sessions (/v1/workloads...)
//   service/server.cpp              the lifetime: bind, start-up, serve, drain
//
// Ownership: a Service refers to its ServiceConfig and stop flag, which
// must outlive it; it owns the sessions, the budget and the catalog.
// Thread-safety: run() from one thread; the HttpHandler methods are called
// by the server's loop and workers concurrently, as http_server.h says, and
// are safe so. No exception leaves a handler: the server answers 500 for
// one that escapes a route, and nothing here throws to run()'s caller.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "runtime/attributor.h"
#include "runtime/self_test.h"
#include "service/host_check.h"
#include "service/http_server.h"
#include "service/metrics.h"
#include "service/routes.h"
#include "service/server.h"
#include "service/session_store.h"

namespace culprit::service {

class Service : public HttpHandler {
 public:
  // `stop`: once true, run() stops accepting, drains and returns.
  Service(const ServiceConfig& cfg, std::atomic<bool>& stop);

  // Binds, answers /healthz at once, makes the catalog ready, then serves
  // until `stop` and the drain. The catalog is `attributor` when one is
  // given already open, else cfg.catalog, compiled and self-tested here.
  // `on_ready(port)` is called once the routes are served. Returns the exit
  // status of run_server() (service/server.h).
  int run(std::shared_ptr<const Attributor> attributor = nullptr, std::function<void(int)> on_ready = {});

  MemoryBudget& budget() { return budget_; }

  // HttpHandler
  bool on_head(HttpRequest& req, HttpResponse& res) override;
  bool reserve_body(size_t bytes) override { return budget_.reserve(bytes); }
  void release(size_t bytes) override { budget_.release(bytes); }
  void handle(HttpRequest& req, HttpResponse& res) override;
  void protocol_error(const std::string& message, const std::string& limit, HttpResponse& res) override;
  void answered(const HttpRequest& req, const HttpResponse& res, double seconds) override;

 private:
  bool load_catalog_and_test();
  void build_catalog_json(const TestReport* report);
  void answer_fast_route(const Route& r, HttpResponse& res);

  void handle_attributions(HttpRequest& req, HttpResponse& res);
  void handle_create(HttpRequest& req, HttpResponse& res);
  void handle_observations(HttpRequest& req, HttpResponse& res);
  void handle_attribute(HttpRequest& req, HttpResponse& res);
  void handle_get(HttpRequest& req, HttpResponse& res);
  void handle_delete(HttpRequest& req, HttpResponse& res);

  // Runs the engine and writes the verdict (or an error) into `res`.
  // `evidence`: the observations, and for one-shot requests the caller's
  // collector reports and what its carrier could not read (`unread`).
  void attribute(const HttpRequest& req, HttpResponse& res, WorkloadContext ctx, EvidenceSet evidence);
  nlohmann::ordered_json session_json(Session& s);

  const ServiceConfig& cfg_;
  std::atomic<bool>& stop_;
  HostAllowList hosts_;
  Metrics metrics_;
  MemoryBudget budget_;
  SessionStore store_;
  std::atomic<bool> ready_{false};
  std::shared_ptr<const Attributor> attributor_;  // set once, before ready_
  std::string catalog_json_;                 // GET /v1/catalog, built at start-up
  std::mutex log_mu_;
  int start_failure_ = 2;                    // exit status when the catalog cannot be served
};

}  // namespace culprit::service
