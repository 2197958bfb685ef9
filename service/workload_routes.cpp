// The workload sessions (/v1/workloads and /v1/workloads/{id}/...):
// evidence that arrives in pieces, held in the SessionStore and charged to
// the budget until the session is deleted or expires.
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "base/timestamp.h"
#include "service/api_error.h"
#include "service/memory_admission.h"
#include "service/request_body.h"
#include "service/service_handler.h"

namespace culprit::service {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

ojson Service::session_json(Session& s) {
  std::lock_guard<std::mutex> lock(s.mu);
  ojson j;
  j["id"] = s.id;
  j["workload_id"] = s.context.workload_id;
  j["context"] = ojson::parse(s.context_json, nullptr, false);
  j["observations"] = s.observations.size();
  j["posts"] = s.posts;
  j["attributions"] = s.attributions;
  j["bytes"] = s.bytes;
  j["limit_bytes"] = cfg_.max_session_bytes;
  auto wall = [](std::chrono::system_clock::time_point t) {
    return format_rfc3339(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  };
  auto idle = Clock::now() - s.last_used;
  j["created"] = wall(s.created_wall);
  j["expires_in_seconds"] =
      std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(cfg_.session_ttl - idle).count());
  return j;
}

void Service::handle_create(HttpRequest& req, HttpResponse& res) {
  std::string body;
  BodyError err;
  if (!read_body(req, cfg_.max_body, body, err)) return send_error(res, err);
  json j;
  if (!parse_json_text(body, j, err, "the body ")) return send_error(res, err);
  if (j.is_object() && j.contains("context") && j.size() == 1) j = std::move(j["context"]);
  WorkloadContext ctx;
  std::string text;
  if (!parse_context(j, ctx, text, err, "")) return send_error(res, err);
  size_t cost = context_cost(ctx, text.size());
  if (cost > cfg_.max_session_bytes)
    return send_error(res, 413, "payload_too_large", "the context exceeds the per-session memory limit",
                      {{"name", "max_session_bytes"}, {"limit", cfg_.max_session_bytes}});
  std::shared_ptr<Session> s;
  std::string existing;
  switch (store_.create(ctx, text, cost, s, existing)) {
    case SessionStore::Status::Ok: break;
    case SessionStore::Status::Conflict:
      return send_error(res, 409, "conflict", "an open session already exists for this workload_id",
                        {{"id", existing}, {"workload_id", ctx.workload_id}});
    case SessionStore::Status::TooManySessions:
      return send_error(res, 429, "too_many_requests", "too many open sessions; retry later",
                        {{"name", "max_sessions"}, {"limit", cfg_.max_sessions}});
    default:
      return send_error(res, 429, "too_many_requests", "the service's memory budget is exhausted; retry later",
                        {{"name", "max_total_bytes"}, {"limit", cfg_.max_total_bytes}});
  }
  metrics_.session_created();
  res.set_header("Location", "/v1/workloads/" + s->id);
  send_json(res, 201, session_json(*s));
}

void Service::handle_observations(HttpRequest& req, HttpResponse& res) {
  auto s = store_.get(req.matches[0]);
  if (!s) {
    return send_error(res, 404, "not_found", "no such workload session (unknown, deleted or expired)",
                      {{"id", req.matches[0]}});
  }
  // Charged as parsed, after an estimate as a whole (estimate_parse_cost):
  // a reservation on the shared budget, moved to the session on success and
  // returned on failure.
  Reservation held{budget_};
  if (!held.grow_to(std::min(estimate_parse_cost(req.body, body_kind(req) == BodyKind::Ndjson), cfg_.max_session_bytes), 0))
    return send_error(res, 429, "too_many_requests", "the service's memory budget is exhausted; retry later",
                      {{"name", "max_total_bytes"}, {"limit", cfg_.max_total_bytes}});
  ObservationSink sink([&](size_t total) {
    size_t session_bytes;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      session_bytes = s->bytes;
    }
    if (session_bytes + total > cfg_.max_session_bytes) return 413;
    if (!held.grow_to(total)) return 429;
    return 0;
  });
  BodyError err;
  if (body_kind(req) == BodyKind::None)
    return send_error(res, 415, "unsupported_media_type",
                      "send observations as application/json (an array) or application/x-ndjson");
  if (!read_observations(req, cfg_.max_body, sink, nullptr, err)) return send_error(res, err);
  size_t count = sink.obs.size();
  size_t cost = sink.cost();
  if (!held.grow_to(cost, 0))
    return send_error(res, 429, "too_many_requests", "the service's memory budget is exhausted; retry later",
                      {{"name", "max_total_bytes"}, {"limit", cfg_.max_total_bytes}});
  // Keep exactly the cost: it moves to the session.
  budget_.release(held.bytes - cost);
  held.bytes = cost;
  auto st = store_.append(*s, sink.obs, cost);
  if (st != SessionStore::Status::Ok) {
    if (st == SessionStore::Status::NotFound)
      return send_error(res, 404, "not_found", "the session was deleted or expired", {{"id", s->id}});
    return send_error(res, 413, "payload_too_large", "the workload's observations exceed the per-session memory limit",
                      {{"name", "max_session_bytes"}, {"limit", cfg_.max_session_bytes}});
  }
  held.bytes = 0;  // now the session's
  ojson j = session_json(*s);
  j["accepted"] = count;
  send_json(res, 200, j);
}

void Service::handle_attribute(HttpRequest& req, HttpResponse& res) {
  std::string ignored;
  BodyError err;
  if (!read_body(req, cfg_.max_body, ignored, err)) return send_error(res, err);
  auto s = store_.get(req.matches[0]);
  if (!s)
    return send_error(res, 404, "not_found", "no such workload session (unknown, deleted or expired)",
                      {{"id", req.matches[0]}});
  // The session's lock is held while it is scanned: posts to the same
  // workload wait, other workloads do not.
  std::lock_guard<std::mutex> lock(s->mu);
  if (s->closed) return send_error(res, 404, "not_found", "the session was deleted or expired", {{"id", s->id}});
  // The session keeps its observations for the next attribution, so this
  // one scans a copy: as much memory again as the session holds, charged to
  // the budget while it lives.
  Reservation copy{budget_};
  size_t n = s->observations.size();
  if (!copy.grow_to(s->bytes + event_allowance(n, n ? s->bytes / n : 0), 0))
    return send_error(res, 429, "too_many_requests", "the service's memory budget is exhausted; retry later",
                      {{"name", "max_total_bytes"}, {"limit", cfg_.max_total_bytes}});
  ++s->attributions;
  EvidenceSet evidence;
  evidence.observations = s->observations;
  attribute(req, res, s->context, std::move(evidence));
  s->last_used = Clock::now();
}

void Service::handle_get(HttpRequest& req, HttpResponse& res) {
  auto s = store_.get(req.matches[0]);
  if (!s)
    return send_error(res, 404, "not_found", "no such workload session (unknown, deleted or expired)",
                      {{"id", req.matches[0]}});
  send_json(res, 200, session_json(*s));
}

void Service::handle_delete(HttpRequest& req, HttpResponse& res) {
  if (!store_.remove(req.matches[0]))
    return send_error(res, 404, "not_found", "no such workload session (unknown, deleted or expired)",
                      {{"id", req.matches[0]}});
  metrics_.session_deleted();
  res.status = 204;
}

}  // namespace culprit::service
