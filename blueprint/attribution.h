// Attribution for the blueprint: turning an attempt and its collected
// evidence into a verdict document (culprit.verdict/v1 JSON), either in this
// process (runtime/attributor.h) or through a `culprit serve` (docs/service.md).
//
// Both give the same document for the same evidence: the service renders
// with the same runtime, and the collector reports travel with the request
// (`collectors`), so they land in coverage.collectors either way.
//
// Errors carry `retry`: true when trying again later may succeed (the
// service is unreachable, overloaded or not ready), false when the evidence
// itself was refused. Thread-safety: attribute() may be called concurrently.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "blueprint/attempt.h"
#include "blueprint/collect/collector.h"
#include "blueprint/config.h"
#include "blueprint/net/http_client.h"
#include "runtime/attributor.h"

namespace culprit::blueprint {

struct AttributionError {
  std::string message;
  bool retry = false;
};

class Attribution {
 public:
  virtual ~Attribution() = default;
  virtual std::string describe() const = 0;  // "in-process" or the service URL
  virtual bool attribute(const Attempt& attempt, Collected&& evidence, nlohmann::ordered_json& verdict,
                         AttributionError& error) const = 0;
};

class InProcessAttribution final : public Attribution {
 public:
  InProcessAttribution(std::shared_ptr<const Attributor> attributor, DiagnoseOptions options, bool explain)
      : attributor_(std::move(attributor)), options_(options), explain_(explain) {}
  std::string describe() const override { return "in-process"; }
  bool attribute(const Attempt& attempt, Collected&& evidence, nlohmann::ordered_json& verdict,
                 AttributionError& error) const override;

 private:
  std::shared_ptr<const Attributor> attributor_;
  DiagnoseOptions options_;
  bool explain_;
};

// Sends the evidence as one streamed NDJSON `POST /v1/attributions`: the
// first line {"context", "collectors"}, then every observation, then every
// line of every whole file with its file, line number and byte offset (as
// `culprit diagnose --server` does, so provenance and coverage match local
// mode). The service's --max-body bounds one attempt's evidence. A request
// that met a replica going away (transport error, 502, 503, 504: a load
// balancer in front of several `culprit serve`, docs/blueprint.md
// "Replicas") is sent again, up to 5 times over about 4 s; other answers
// are final for this run.
class ServiceAttribution final : public Attribution {
 public:
  // False with `error` when the token cannot be read or the URL is bad.
  static std::unique_ptr<ServiceAttribution> make(const ServiceClientConfig& config, bool explain, std::string& error);
  std::string describe() const override { return url_; }
  bool attribute(const Attempt& attempt, Collected&& evidence, nlohmann::ordered_json& verdict,
                 AttributionError& error) const override;
  // GET /readyz: true when the service is up and its catalog self-tested.
  bool ready(std::string& error) const;
  // GET /v1/catalog with the token: false when the service refuses it.
  bool authorized(std::string& error) const;
  // The digest of the service's catalog (GET /v1/catalog).
  bool catalog_digest(std::string& digest, std::string& error) const;

 private:
  std::string url_;
  std::unique_ptr<HttpClient> client_;  // no retries of its own: attribute() retries what a replica's going away explains
  bool explain_ = false;
};


}  // namespace culprit::blueprint
