#include "blueprint/attribution.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "runtime/json_input.h"
#include "base/operator_file.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "runtime/bundle.h"
#include "runtime/collector_report_json.h"
#include "runtime/observation_reader.h"
#include "runtime/observation_writer.h"
#include "runtime/unread_json.h"
#include "runtime/verdict_json.h"

namespace culprit::blueprint {

using ojson = nlohmann::ordered_json;

bool InProcessAttribution::attribute(const Attempt& attempt, Collected&& ev, ojson& verdict, AttributionError& error) const {
  DiagnoseRequest r;
  static_cast<EvidenceSet&>(r) = std::move(static_cast<EvidenceSet&>(ev));
  r.context = attempt.context;
  DiagnoseOptions opt = options_;
  opt.trail = explain_;
  Verdict v;
  if (!attributor_->attribute(std::move(r), opt, v, error.message)) {
    error.retry = false;
    return false;
  }
  verdict = verdict_to_json(v, explain_);
  return true;
}

std::unique_ptr<ServiceAttribution> ServiceAttribution::make(const ServiceClientConfig& c, bool explain, std::string& error) {
  auto s = std::unique_ptr<ServiceAttribution>(new ServiceAttribution());
  s->url_ = c.url;
  while (!s->url_.empty() && s->url_.back() == '/') s->url_.pop_back();
  std::string why;
  if (!HttpClient::usable_base_url(s->url_, why)) {
    error = fmt::format("'{}' is not a usable service URL (http://HOST:PORT or https://...): {}", c.url, why);
    return nullptr;
  }
  HttpClientConfig hc;
  hc.base_url = s->url_;
  if (!c.token_file.empty() || !c.token_env.empty())
    if (!read_secret(c.token_file, c.token_env, hc.token, error)) return nullptr;
  hc.timeout_ns = c.timeout;
  hc.retries = 0;
  s->client_ = std::make_unique<HttpClient>(std::move(hc));
  s->explain_ = explain;
  return s;
}

namespace {

// The start-up probes answer at once or not at all: a short limit, so a
// service that accepts and never answers fails `culprit run` quickly.
constexpr int64_t kProbeTimeout = 30LL * 1000000000;

HttpRequest probe(const char* path) {
  HttpRequest r;
  r.path = path;
  r.timeout_ns = kProbeTimeout;
  return r;
}

}  // namespace

bool ServiceAttribution::ready(std::string& error) const {
  auto r = client_->send(probe("/readyz"));
  if (!r.error.empty()) {
    error = fmt::format("cannot reach {}: {}", url_, r.transport_problem());
    return false;
  }
  if (r.status != 200) {
    error = fmt::format("{} is not ready (HTTP {})", url_, r.status);
    return false;
  }
  return true;
}

bool ServiceAttribution::authorized(std::string& error) const {
  auto r = client_->send(probe("/v1/catalog"));
  if (!r.error.empty()) {
    error = fmt::format("cannot reach {}: {}", url_, r.transport_problem());
    return false;
  }
  if (r.status == 401) {
    error = fmt::format("{} refused {} (HTTP 401): give its token with --token-file or attribution.service.token_file",
                        url_, client_->has_token() ? "the token" : "a request without a token");
    return false;
  }
  return true;
}

bool ServiceAttribution::catalog_digest(std::string& digest, std::string& error) const {
  auto r = client_->send(probe("/v1/catalog"));
  if (!r.ok()) {
    error = fmt::format("{}/v1/catalog: {}", url_, r.error.empty() ? fmt::format("HTTP {}", r.status) : r.transport_problem());
    return false;
  }
  nlohmann::json j;
  std::string why;
  if (!parse_remote_json(r.body, j, why) || string_member_or(j, "digest").empty()) {
    error = fmt::format("{}/v1/catalog: no catalog digest in the answer{}", url_, why.empty() ? "" : " (" + why + ")");
    return false;
  }
  digest = string_member_or(j, "digest");
  return true;
}

bool ServiceAttribution::attribute(const Attempt& attempt, Collected&& ev, ojson& verdict, AttributionError& error) const {
  ojson head;
  head["context"] = context_to_json(attempt.context);
  ojson reports = ojson::array();
  for (const auto& r : ev.collectors) reports.push_back(collector_report_to_json(r));
  head["collectors"] = reports;
  if (auto unread = unread_to_json(ev); !unread.is_null()) head["unread"] = std::move(unread);
  // A bundle names its observations file; the service gets its lines, read
  // and checked as local mode reads them.
  if (!ev.observations_path.empty()) {
    std::string why;
    std::vector<Observation> from_file;
    if (!read_observations_file(ev.observations_path, from_file, why)) {
      error.message = why;
      error.retry = false;
      return false;
    }
    for (auto& o : from_file) ev.observations.push_back(std::move(o));
  }
  // The head line, then the evidence streamed in chunks of about 1 MiB
  // (the same lines `diagnose --server` sends for a bundle). An attribution
  // is a pure function of its request, so a request that met a replica going
  // away (the connection failed or was cut; a load balancer's 502/503/504
  // while it has no live replica) is sent again, to whichever replica the
  // balancer picks: up to kTries times, 0.25 s, 0.5 s, 1 s, 2 s apart. The
  // writer borrows the evidence, so sending it again copies nothing.
  constexpr int kTries = 5;
  const std::string head_text = head.dump() + "\n";
  HttpResponse r;
  for (int attempt_no = 1;; ++attempt_no) {
    NdjsonObservationWriter writer(NdjsonObservationWriter::Borrow{}, ev.observations, ev.files);
    std::string head_line = head_text;
    HttpRequest req;
    req.method = "POST";
    req.path = std::string("/v1/attributions?explain=") + (explain_ ? "true" : "false");
    req.content_type = "application/x-ndjson";
    req.body_source = [&](std::string& piece) {
      if (!head_line.empty()) {
        piece = std::move(head_line);
        head_line.clear();
        return true;
      }
      if (writer.next(piece, 1u << 20)) return true;
      return writer.error().empty();  // an empty piece ends the body
    };
    r = client_->send(req);
    if (!writer.error().empty()) {
      error = {writer.error(), true};
      return false;
    }
    const bool again = !r.error.empty() || r.status == 502 || r.status == 503 || r.status == 504;
    if (!again || attempt_no == kTries) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(250 << (attempt_no - 1)));
  }
  if (!r.error.empty()) {
    error = {fmt::format("cannot reach the service {}: {}", url_, r.transport_problem()), true};
    return false;
  }
  if (r.status != 200) {
    nlohmann::json j;
    std::string why, msg = r.body.substr(0, 300);
    if (parse_remote_json(r.body, j, why) && j.contains("error")) msg = string_member_or(j["error"], "message", msg);
    error = {fmt::format("the service answered {}: {}", r.status, msg),
             r.status == 429 || r.status == 503 || r.status >= 500 || r.status == 401};
    return false;
  }
  std::string why;
  if (!parse_remote_json(r.body, verdict, why)) {
    error = {"the service's verdict is not usable: " + why, true};
    return false;
  }
  return true;
}

}  // namespace culprit::blueprint
