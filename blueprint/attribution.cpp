#include "blueprint/attribution.h"

#include <fmt/format.h>
#include <httplib.h>

#include <fstream>

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
  s->timeout_ns_ = c.timeout;
  s->explain_ = explain;
  if (!c.token_file.empty() || !c.token_env.empty())
    if (!read_secret(c.token_file, c.token_env, s->token_, error)) return nullptr;
  httplib::Client probe(s->url_);
  if (!probe.is_valid()) {
    error = fmt::format("'{}' is not a usable service URL (http://HOST:PORT or https://...)", c.url);
    return nullptr;
  }
  return s;
}

bool ServiceAttribution::ready(std::string& error) const {
  httplib::Client c(url_);
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(10, 0);
  auto r = c.Get("/readyz");
  if (!r) {
    error = fmt::format("cannot reach {}: {}", url_, httplib::to_string(r.error()));
    return false;
  }
  if (r->status != 200) {
    error = fmt::format("{} is not ready (HTTP {})", url_, r->status);
    return false;
  }
  return true;
}

bool ServiceAttribution::authorized(std::string& error) const {
  httplib::Client c(url_);
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(10, 0);
  httplib::Headers headers;
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  auto r = c.Get("/v1/catalog", headers);
  if (!r) {
    error = fmt::format("cannot reach {}: {}", url_, httplib::to_string(r.error()));
    return false;
  }
  if (r->status == 401) {
    error = fmt::format("{} refused {} (HTTP 401): give its token with --token-file or attribution.service.token_file",
                        url_, token_.empty() ? "a request without a token" : "the token");
    return false;
  }
  return true;
}

bool ServiceAttribution::catalog_digest(std::string& digest, std::string& error) const {
  httplib::Client c(url_);
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(30, 0);
  httplib::Headers headers;
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  auto r = c.Get("/v1/catalog", headers);
  if (!r || r->status != 200) {
    error = fmt::format("{}/v1/catalog: {}", url_, r ? fmt::format("HTTP {}", r->status) : httplib::to_string(r.error()));
    return false;
  }
  nlohmann::json j;
  std::string why;
  if (!parse_remote_json(r->body, j, why) || string_member_or(j, "digest").empty()) {
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
  // (the same lines `diagnose --server` sends for a bundle).
  auto writer = std::make_shared<NdjsonObservationWriter>(std::move(ev.observations), std::move(ev.files));
  auto head_line = std::make_shared<std::string>(head.dump() + "\n");
  httplib::Client c(url_);
  int64_t secs = std::max<int64_t>(1, timeout_ns_ / 1000000000);
  c.set_connection_timeout(10, 0);
  c.set_read_timeout(static_cast<time_t>(secs), 0);
  c.set_write_timeout(static_cast<time_t>(secs), 0);
  httplib::Headers headers;
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  std::string path = std::string("/v1/attributions?explain=") + (explain_ ? "true" : "false");
  auto r = c.Post(
      path.c_str(), headers,
      [writer, head_line](size_t, httplib::DataSink& sink) {
        if (!head_line->empty()) {
          std::string line = std::move(*head_line);
          head_line->clear();
          return sink.write(line.data(), line.size());
        }
        std::string chunk;
        if (writer->next(chunk, 1u << 20)) return sink.write(chunk.data(), chunk.size());
        if (!writer->error().empty()) return false;
        sink.done();
        return true;
      },
      "application/x-ndjson");
  if (!writer->error().empty()) {
    error = {writer->error(), true};
    return false;
  }
  if (!r) {
    error = {fmt::format("cannot reach the service {}: {}", url_, httplib::to_string(r.error())), true};
    return false;
  }
  if (r->status != 200) {
    nlohmann::json j;
    std::string why, msg = r->body.substr(0, 300);
    if (parse_remote_json(r->body, j, why) && j.contains("error")) msg = string_member_or(j["error"], "message", msg);
    error = {fmt::format("the service answered {}: {}", r->status, msg),
             r->status == 429 || r->status == 503 || r->status >= 500 || r->status == 401};
    return false;
  }
  std::string why;
  if (!parse_remote_json(r->body, verdict, why)) {
    error = {"the service's verdict is not usable: " + why, true};
    return false;
  }
  return true;
}

}  // namespace culprit::blueprint
