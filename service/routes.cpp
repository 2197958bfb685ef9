#include "service/routes.h"

#include <map>

#include "base/suggest.h"

namespace culprit::service {

namespace {

const std::vector<Route>& routes() {
  static const std::vector<Route> r = {
      {RouteId::Healthz, "/healthz", {"GET"}, false, false, false, true},
      {RouteId::Readyz, "/readyz", {"GET"}, false, false, false, true},
      {RouteId::Metrics, "/metrics", {"GET"}, true, false, false, true},
      {RouteId::OpenApi, "/v1/openapi.json", {"GET"}, false, false, false, true},
      {RouteId::Catalog, "/v1/catalog", {"GET"}, true, true, false, true},
      {RouteId::Attributions, "/v1/attributions", {"POST"}, true, true, true, false},
      {RouteId::Workloads, "/v1/workloads", {"POST"}, true, true, true, false},
      {RouteId::Session, "/v1/workloads/{id}", {"GET", "DELETE"}, true, true, false, false},
      {RouteId::Observations, "/v1/workloads/{id}/observations", {"POST"}, true, true, true, false},
      {RouteId::Attribute, "/v1/workloads/{id}/attribute", {"POST"}, true, true, false, false},
  };
  return r;
}

const Route& route(RouteId id) { return routes()[static_cast<size_t>(id)]; }

}  // namespace

// Matches a path to a route (no regex: paths are client input, matched on
// every request); `id` receives the session id of /v1/workloads/{id}/...
const Route* find_route(const std::string& path, std::string& id) {
  static const std::map<std::string, RouteId> fixed = {
      {"/healthz", RouteId::Healthz}, {"/readyz", RouteId::Readyz}, {"/metrics", RouteId::Metrics},
      {"/v1/openapi.json", RouteId::OpenApi}, {"/v1/catalog", RouteId::Catalog},
      {"/v1/attributions", RouteId::Attributions}, {"/v1/workloads", RouteId::Workloads}};
  if (auto it = fixed.find(path); it != fixed.end()) return &route(it->second);
  const std::string prefix = "/v1/workloads/";
  if (path.compare(0, prefix.size(), prefix) != 0) return nullptr;
  std::string rest = path.substr(prefix.size());
  size_t slash = rest.find('/');
  id = rest.substr(0, slash);
  if (id.empty()) return nullptr;
  if (slash == std::string::npos) return &route(RouteId::Session);
  std::string tail = rest.substr(slash);
  if (tail == "/observations") return &route(RouteId::Observations);
  if (tail == "/attribute") return &route(RouteId::Attribute);
  return nullptr;
}

std::string route_suggestion(const std::string& path) {
  if (path.size() > 128) return "";  // no route is that long; and the distance is quadratic
  std::vector<std::string> candidates;
  const std::string prefix = "/v1/workloads/";
  std::string id;
  if (path.compare(0, prefix.size(), prefix) == 0) id = path.substr(prefix.size(), path.find('/', prefix.size()) - prefix.size());
  for (const auto& r : routes()) {
    std::string name = r.name;
    if (size_t at = name.find("{id}"); at != std::string::npos) {
      if (id.empty()) continue;
      name.replace(at, 4, id);
    }
    candidates.push_back(std::move(name));
  }
  return did_you_mean(path, candidates);
}

const char* method_label(const std::string& m) {
  // Client input: only known methods become label values.
  for (const char* k : {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
    if (m == k) return k;
  return "other";
}

}  // namespace culprit::service
