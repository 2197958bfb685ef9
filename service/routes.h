// The service's routes: the table of what it serves (docs/service.md), and
// how a request path finds its entry.
//
// Each route says what a request needs before it is handled (a token, a
// ready catalog, a JSON/NDJSON body) and where it is answered: on the event
// loop (cheap documents and probes, never queued behind attributions) or on
// a worker. The request dispatch (service/request_dispatch.cpp) applies
// these; the table itself decides nothing.
//
// Ownership: the table is static and immutable; find_route() returns a
// pointer into it. Thread-safety: safe from any thread. No exceptions.
#pragma once

#include <string>
#include <vector>

namespace culprit::service {

enum class RouteId { Healthz, Readyz, Metrics, OpenApi, Catalog, Attributions, Workloads, Session, Observations, Attribute };

struct Route {
  RouteId id;
  const char* name;                 // the pattern, for metrics and logs
  std::vector<std::string> methods;
  bool needs_auth = true;
  bool needs_ready = true;
  bool takes_body = false;          // POST with a JSON/NDJSON body
  bool on_loop = false;             // cheap: answered on the event loop, never queued behind attributions
};

// The route matching `path`, or null. `id` receives the session id of
// /v1/workloads/{id}/...
const Route* find_route(const std::string& path, std::string& id);
// "did you mean '/v1/attributions'?" for a path no route matches, or "".
std::string route_suggestion(const std::string& path);

// A request method as a metrics label: the known methods, else "other".
const char* method_label(const std::string& m);

}  // namespace culprit::service
