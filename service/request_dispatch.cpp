// What the HTTP server calls for every request: the checks on its head,
// the route that handles it, the answers to protocol errors, and the
// access log and metrics of every answer.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/sha256.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "service/api_error.h"
#include "service/request_body.h"
#include "service/service_handler.h"

namespace culprit::service {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

bool constant_time_equal(const std::string& a, const std::string& b) {
  // Comparing fixed-size digests takes the same time whatever the inputs
  // and their lengths, so timing reveals nothing about the token.
  Sha256 ha, hb;
  ha.update(a);
  hb.update(b);
  auto da = ha.finish(), db = hb.finish();
  unsigned diff = 0;
  for (size_t i = 0; i < da.size(); ++i) diff |= static_cast<unsigned>(da[i] ^ db[i]);
  return diff == 0;
}

// "Bearer TOKEN": the scheme is case-insensitive (RFC 9110 §11.1), the token
// follows one or more spaces.
bool bearer_token(const std::string& auth, std::string& token) {
  if (auth.size() < 7) return false;
  for (size_t i = 0; i < 6; ++i)
    if (std::tolower(static_cast<unsigned char>(auth[i])) != "bearer"[i]) return false;
  if (auth[6] != ' ') return false;
  size_t p = auth.find_first_not_of(' ', 6);
  if (p == std::string::npos) return false;
  token = auth.substr(p);
  return !token.empty();
}

}  // namespace

bool Service::on_head(HttpRequest& req, HttpResponse& res) {
  std::string id;
  const Route* r = find_route(req.path, id);
  if (!r) {
    std::string hint = route_suggestion(req.path);
    send_error(res, 404, "not_found", hint.empty() ? "no such route" : "no such route; " + hint,
               {{"path", truncate_utf8(sanitize_utf8(req.path), 256)}});
    return true;
  }
  req.matches = {id};
  // DNS rebinding (docs/service.md, "Host check"): without a token, or when
  // --allow-host names the service's names, a Host the service does not know
  // is refused before anything is read or answered. The probes stay open to
  // what probes them: load balancers and scrapers address the service by
  // whatever IP they found it at.
  bool host_checked = cfg_.token.empty() || !cfg_.allow_hosts.empty();
  bool probe = r->id == RouteId::Healthz || r->id == RouteId::Readyz || r->id == RouteId::Metrics;
  if (host_checked && !probe && !hosts_.allowed(req.header("host"))) {
    send_error(res, 421, "misdirected_request",
               fmt::format("this service does not answer for Host '{}'; use localhost, the --listen address, or a name "
                           "given with --allow-host",
                           truncate_utf8(sanitize_utf8(req.header("host")), 128)));
    return true;
  }
  std::string method = req.method == "HEAD" ? "GET" : req.method;
  if (std::find(r->methods.begin(), r->methods.end(), method) == r->methods.end()) {
    std::string allow;
    for (const auto& m : r->methods) allow += (allow.empty() ? "" : ", ") + m;
    res.set_header("Allow", allow);
    send_error(res, 405, "method_not_allowed",
               fmt::format("{} is not allowed on {}", truncate_utf8(sanitize_utf8(req.method), 32), r->name),
               {{"allow", r->methods}});
    return true;
  }
  if (r->needs_auth && !cfg_.token.empty()) {
    const std::string& auth = req.header("authorization");
    std::string token;
    bool ok = bearer_token(auth, token) && constant_time_equal(token, cfg_.token);
    if (!ok) {
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res, 401, "unauthorized", auth.empty() ? "missing bearer token" : "invalid bearer token");
      return true;
    }
  }
  if (r->needs_ready && !ready_.load()) {
    res.set_header("Retry-After", "1");
    send_error(res, 503, "not_ready", "the catalog is still being compiled and self-tested");
    return true;
  }
  if (r->takes_body || req.has_body()) {
    BodyKind k = body_kind(req);
    bool ok = k == BodyKind::Json || k == BodyKind::Ndjson || (k == BodyKind::None && !req.has_body());
    if (r->id == RouteId::Workloads && k == BodyKind::Ndjson) {
      // The session's context is one JSON object; NDJSON belongs to the
      // observations that follow it, or to a one-shot attribution.
      send_error(res, 415, "unsupported_media_type",
                 "POST /v1/workloads takes the workload's context as one application/json object; send NDJSON "
                 "observations to POST /v1/workloads/{id}/observations once the session exists, or the context line "
                 "and its observations in one request to POST /v1/attributions");
      return true;
    }
    if (r->id == RouteId::Workloads) ok = k == BodyKind::Json;
    if (!ok) {
      send_error(res, 415, "unsupported_media_type",
                 fmt::format("unsupported Content-Type '{}': send application/json or application/x-ndjson",
                             truncate_utf8(sanitize_utf8(req.header("content-type")), 128)));
      return true;
    }
    std::string coding;
    if (!content_coding(req, coding)) {
      send_error(res, 415, "unsupported_media_type",
                 fmt::format("unsupported Content-Encoding '{}': send the body as is, or gzip/deflate",
                             truncate_utf8(sanitize_utf8(req.header("content-encoding")), 64)));
      return true;
    }
    req.body.set_encoding(coding);
  }
  if (r->on_loop) {
    answer_fast_route(*r, res);
    return true;
  }
  return false;
}

void Service::handle(HttpRequest& req, HttpResponse& res) {
  std::string id;
  const Route* r = find_route(req.path, id);
  if (!r) return send_error(res, 404, "not_found", "no such route");
  switch (r->id) {
    case RouteId::Attributions: return handle_attributions(req, res);
    case RouteId::Workloads: return handle_create(req, res);
    case RouteId::Session: return req.method == "DELETE" ? handle_delete(req, res) : handle_get(req, res);
    case RouteId::Observations: return handle_observations(req, res);
    case RouteId::Attribute: return handle_attribute(req, res);
    default: return answer_fast_route(*r, res);
  }
}

void Service::protocol_error(const std::string& message, const std::string& limit, HttpResponse& res) {
  const char* code = "bad_request";
  switch (res.status) {
    case 408: code = "request_timeout"; break;
    case 413: code = "payload_too_large"; break;
    case 414: code = "uri_too_long"; break;
    case 429: code = "too_many_requests"; break;
    case 431: code = "headers_too_large"; break;
    case 500: code = "internal"; break;
    case 501: code = "not_implemented"; break;
    case 503: code = "unavailable"; break;
    case 505: code = "http_version_not_supported"; break;
    default: break;
  }
  ojson details = ojson::object();
  if (!limit.empty()) {
    details["name"] = limit;
    uint64_t value = limit == "max_body"          ? cfg_.max_body
                     : limit == "max_total_bytes" ? cfg_.max_total_bytes
                     : limit == "header_timeout"  ? static_cast<uint64_t>(cfg_.header_timeout_s)
                     : limit == "request_timeout" ? static_cast<uint64_t>(cfg_.request_timeout_s)
                     : limit == "connections"     ? cfg_.max_connections
                                                  : limit_value(limit);
    details["limit"] = value;
  }
  send_error(res, res.status, code, message, std::move(details));
}

void Service::answered(const HttpRequest& req, const HttpResponse& res, double seconds) {
  std::string id;
  const Route* r = find_route(req.path, id);
  const char* route = r ? r->name : "unmatched";
  metrics_.request(route, method_label(req.method), res.status, seconds);
  if (!cfg_.access_log) return;
  // Never the Authorization header or bodies: only what identifies the request.
  ojson j;
  j["ts"] = format_rfc3339(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  j["remote"] = req.remote_addr;
  j["method"] = truncate_utf8(req.method, 32);
  j["path"] = truncate_utf8(req.path, 512);
  j["route"] = route;
  j["status"] = res.status;
  j["bytes_in"] = req.body.size();
  j["bytes_out"] = res.body.size();
  j["ms"] = std::round(seconds * 1e6) / 1e3;
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(log_mu_);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace culprit::service
