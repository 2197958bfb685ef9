// The routes answered on the event loop (probes, metrics, the OpenAPI and
// catalog documents) and the catalog they describe, opened at start-up.
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "compiler/catalog_loader.h"
#include "service/api_error.h"
#include "service/openapi_json.h"
#include "service/service_handler.h"

namespace culprit::service {

using ojson = nlohmann::ordered_json;

void Service::answer_fast_route(const Route& r, HttpResponse& res) {
  switch (r.id) {
    case RouteId::Healthz: return send_json(res, 200, {{"status", "alive"}});
    case RouteId::Readyz:
      if (ready_.load()) return send_json(res, 200, {{"status", "ready"}});
      res.set_header("Retry-After", "1");
      return send_error(res, 503, "not_ready", "the catalog is still being compiled and self-tested");
    case RouteId::Metrics:
      return res.set_content(metrics_.render(store_.count(), store_.bytes()), "text/plain; version=0.0.4; charset=utf-8");
    case RouteId::OpenApi: return res.set_content(kOpenApiJson, "application/json");
    case RouteId::Catalog: return res.set_content(catalog_json_, "application/json");
    default: return;
  }
}

void Service::build_catalog_json(const TestReport* report) {
  const Program* program = attributor_->program().get();
  const auto& cat = program->catalog();
  auto info = engine_info(*program);
  ojson j;
  j["name"] = cat.name;
  j["version"] = cat.version;
  j["digest"] = cat.digest;
  // Rule files by their path inside their catalog part ("culprit-stdlib/nccl.attr"),
  // never the build machine's absolute paths; test locations likewise.
  std::map<std::string, std::string> shown;
  ojson parts = ojson::array(), files = ojson::array();
  size_t k = 0;
  for (const auto& part : cat.parts) {
    for (const auto& rel : part.files) {
      std::string name = part.name + "/" + rel;
      if (k < cat.files.size()) shown[cat.files[k++]] = name;
      files.push_back(name);
    }
    parts.push_back({{"name", part.name}, {"version", part.version}, {"digest", part.digest}, {"files", part.files}});
  }
  j["files"] = files;
  j["parts"] = parts;
  auto shown_location = [&](const std::string& loc) {
    size_t colon = loc.rfind(':');
    auto it = shown.find(loc.substr(0, colon));
    return it == shown.end() ? loc : it->second + loc.substr(colon);
  };
  j["engine"] = {{"culprit_version", info.culprit_version}, {"evaluator", info.evaluator},
                 {"hyperscan_version", info.hyperscan_version}, {"re2_version", info.re2_version}};
  j["extractors"] = ojson::array();
  for (const auto& x : cat.extractors) j["extractors"].push_back(x.name);
  j["rules"] = ojson::array();
  for (const auto& r : cat.rules)
    j["rules"].push_back({{"name", r.name}, {"stage", ir::kStageNames[static_cast<size_t>(r.stage)]}});
  ojson tests = ojson::array();
  if (report)
    for (const auto& r : report->results)
      tests.push_back({{"kind", r.kind}, {"name", r.name}, {"location", shown_location(r.location)}, {"passed", r.passed}});
  j["self_test"] = {{"passed", report ? report->passed : 0}, {"failed", report ? report->failed : 0}, {"results", tests}};
  catalog_json_ = j.dump(2) + "\n";
  metrics_.set_catalog(cat.name, cat.version, cat.digest);
}

bool Service::load_catalog_and_test() {
  AttributorConfig config = cfg_.catalog;
  config.self_test = true;
  AttributorStart start;
  auto attributor = Attributor::open(config, start);
  if (!start.diagnostics.all().empty()) std::cerr << start.diagnostics.render(false);
  if (!start.warning.empty()) std::cerr << "culprit serve: warning: " << start.warning << "\n";
  if (start.self_test)
    for (const auto& r : start.self_test->results)
      if (!r.passed) std::cerr << fmt::format("{}: FAIL {} {}: {}\n", r.location, r.kind, r.name, r.message);
  if (!attributor) {
    bool tests_failed = start.self_test && start.self_test->failed > 0;
    start_failure_ = tests_failed ? 1 : 2;  // docs/service.md: 1 a test fails, 2 the rules do not compile
    std::cerr << fmt::format("culprit serve: {}{}\n", start.error, tests_failed ? "; refusing to serve it" : "");
    return false;
  }
  attributor_ = std::move(attributor);
  build_catalog_json(&*start.self_test);
  return true;
}

}  // namespace culprit::service
