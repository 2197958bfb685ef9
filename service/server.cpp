#include "service/server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "compiler/catalog_loader.h"
#include "compiler/regex_check.h"
#include "runtime/bundle.h"
#include "runtime/collector_report_json.h"
#include "runtime/diagnose.h"
#include "runtime/observation_reader.h"
#include "runtime/self_test.h"
#include "base/sha256.h"
#include "base/timestamp.h"
#include "runtime/verdict_json.h"
#include "runtime/verdict_text.h"
#include "service/metrics.h"
#include "service/openapi_json.h"
#include "service/session_store.h"

namespace culprit::service {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

std::atomic<bool> g_stop{false};

// ------------------------------------------------------------ errors

// An error answer: {"error": {"code", "message", "details"}}.
void send_error(httplib::Response& res, int status, const std::string& code, const std::string& message,
                ojson details = ojson::object()) {
  ojson e;
  e["error"]["code"] = code;
  e["error"]["message"] = message;
  e["error"]["details"] = std::move(details);
  res.status = status;
  // Messages may quote client bytes (a JSON syntax error's "last read"):
  // invalid UTF-8 in them is replaced, never a reason to fail the answer.
  res.set_content(e.dump(-1, ' ', false, json::error_handler_t::replace) + "\n", "application/json");
}

void send_json(httplib::Response& res, int status, const ojson& j) {
  res.status = status;
  res.set_content(j.dump(2, ' ', false, json::error_handler_t::replace) + "\n", "application/json");
}

// A failed or abandoned body read leaves bytes on the connection: close it
// rather than parse them as the next request.
void close_after(httplib::Response& res) { res.set_header("Connection", "close"); }

// ------------------------------------------------------------ routes

struct Route {
  std::string name;                 // the pattern, for metrics and logs
  std::regex re;
  std::vector<std::string> methods;
  bool needs_auth = true;
  bool needs_ready = true;
  bool takes_body = false;          // POST with a JSON/NDJSON body
};

const std::vector<Route>& routes() {
  static const std::vector<Route> r = {
      {"/healthz", std::regex("/healthz"), {"GET"}, false, false, false},
      {"/readyz", std::regex("/readyz"), {"GET"}, false, false, false},
      {"/metrics", std::regex("/metrics"), {"GET"}, true, false, false},
      {"/v1/openapi.json", std::regex("/v1/openapi\\.json"), {"GET"}, false, false, false},
      {"/v1/catalog", std::regex("/v1/catalog"), {"GET"}, true, true, false},
      {"/v1/attributions", std::regex("/v1/attributions"), {"POST"}, true, true, true},
      {"/v1/workloads", std::regex("/v1/workloads"), {"POST"}, true, true, true},
      {"/v1/workloads/{id}", std::regex("/v1/workloads/([^/]+)"), {"GET", "DELETE"}, true, true, false},
      {"/v1/workloads/{id}/observations", std::regex("/v1/workloads/([^/]+)/observations"), {"POST"}, true, true, true},
      {"/v1/workloads/{id}/attribute", std::regex("/v1/workloads/([^/]+)/attribute"), {"POST"}, true, true, false},
  };
  return r;
}

const Route* find_route(const std::string& path) {
  for (const auto& r : routes())
    if (std::regex_match(path, r.re)) return &r;
  return nullptr;
}

// Per-request bookkeeping for the logger, which httplib calls on the same
// worker thread after the response is written.
thread_local Clock::time_point t_start;
thread_local const char* t_route = nullptr;

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

enum class BodyKind { None, Json, Ndjson, Other };

BodyKind body_kind(const httplib::Request& req) {
  std::string ct = req.get_header_value("Content-Type");
  if (ct.empty()) return BodyKind::None;
  ct = ct.substr(0, ct.find(';'));
  while (!ct.empty() && ct.back() == ' ') ct.pop_back();
  for (auto& c : ct) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ct == "application/json") return BodyKind::Json;
  if (ct == "application/x-ndjson" || ct == "application/ndjson" || ct == "application/jsonl" ||
      ct == "application/x-jsonlines")
    return BodyKind::Ndjson;
  return BodyKind::Other;
}

bool has_body(const httplib::Request& req) {
  if (req.has_header("Transfer-Encoding")) return true;
  return req.get_header_value<uint64_t>("Content-Length") > 0;
}

// A request with neither Content-Length nor Transfer-Encoding has an empty
// body (RFC 9112 §6.3). cpp-httplib would read such a body until the peer
// closes the connection (a client waiting for its answer never does, so it
// waited for the read timeout); routes get this reader instead, which
// delivers nothing at once.
const httplib::ContentReader& body_reader(const httplib::Request& req, const httplib::ContentReader& reader) {
  static const httplib::ContentReader empty([](httplib::ContentReceiver) { return true; },
                                            [](httplib::MultipartContentHeader, httplib::ContentReceiver) { return true; });
  return has_body(req) ? reader : empty;
}

// ------------------------------------------------------------ parsing

// What went wrong with a request body, as an HTTP answer.
struct BodyError {
  int status = 400;
  std::string code, message;
  ojson details = ojson::object();
};

bool parse_json_text(const std::string& text, json& out, BodyError& err, const std::string& where) {
  try {
    out = json::parse(text);
    return true;
  } catch (const json::parse_error& e) {
    err = {400, "invalid_json", fmt::format("{}is not valid JSON: {}", where, e.what()), ojson::object()};
    err.details["byte"] = e.byte;
    return false;
  } catch (const std::exception& e) {
    err = {400, "invalid_json", where + "is not valid JSON: " + e.what(), ojson::object()};
    return false;
  }
}

bool parse_context(const json& j, WorkloadContext& ctx, BodyError& err, const std::string& pointer) {
  if (!j.is_object()) {
    err = {400, "schema_violation", "the context must be a JSON object", {{"pointer", pointer}}};
    return false;
  }
  std::string why;
  if (!parse_context_json(j.dump(), ctx, why)) {
    err = {400, "schema_violation", "invalid context: " + why, {{"pointer", pointer}}};
    return false;
  }
  return true;
}

// The `collectors` of a one-shot request: the caller's collector reports,
// which the verdict carries in coverage.collectors.
bool parse_collectors(const json& j, std::vector<CollectorReport>& out, BodyError& err, const std::string& pointer) {
  if (!j.is_array()) {
    err = {400, "schema_violation", "'collectors' must be an array of collector reports", {{"pointer", pointer}}};
    return false;
  }
  for (size_t i = 0; i < j.size(); ++i) {
    CollectorReport r;
    std::string why;
    if (!collector_report_from_json(j[i], r, why)) {
      err = {400, "schema_violation", "invalid collector report: " + why, {{"pointer", fmt::format("{}/{}", pointer, i)}}};
      return false;
    }
    out.push_back(std::move(r));
  }
  return true;
}

// Collects observations with their cost, checking a limit as they come in.
// `room(total_cost)` returns 0 while they fit, else the status to answer.
class ObservationSink {
 public:
  explicit ObservationSink(std::function<int(size_t)> room) : room_(std::move(room)) {}
  bool add(const json& j, BodyError& err, ojson where) {
    Observation o;
    std::string why;
    if (!parse_observation(j, o, why)) {
      err = {400, "schema_violation", "invalid observation: " + why, std::move(where)};
      return false;
    }
    return add(std::move(o), err, std::move(where));
  }
  bool add(Observation o, BodyError& err, ojson where) {
    size_t c = observation_cost(o);
    if (int status = room_(cost_ + c)) {
      err = {status, status == 413 ? "payload_too_large" : "too_many_requests",
             status == 413 ? "the workload's observations exceed the per-session memory limit"
                           : "the service's memory budget is exhausted; retry later",
             std::move(where)};
      return false;
    }
    cost_ += c;
    obs.push_back(std::move(o));
    return true;
  }
  std::vector<Observation> obs;
  size_t cost() const { return cost_; }

 private:
  std::function<int(size_t)> room_;
  size_t cost_ = 0;
};

// ------------------------------------------------------------ the service

class Service {
 public:
  explicit Service(const ServiceConfig& cfg)
      : cfg_(cfg), budget_(cfg.max_total_bytes),
        store_(SessionLimits{cfg.max_sessions, cfg.max_session_bytes, cfg.session_ttl}, budget_) {}

  int run();

 private:
  void install_routes();
  httplib::Server::HandlerResponse pre_route(const httplib::Request& req, httplib::Response& res);
  void log_request(const httplib::Request& req, const httplib::Response& res);
  bool load_catalog_and_test();

  // Reads a whole body (bounded by max_body) into `body`.
  bool read_body(const httplib::ContentReader& reader, httplib::Response& res, std::string& body);
  // Streams observations (JSON array or NDJSON) into `sink`. With
  // `ndjson_context`, the first NDJSON line is the context (one-shot).
  bool read_observations(const httplib::Request& req, const httplib::ContentReader& reader, httplib::Response& res,
                         ObservationSink& sink, json* ndjson_context, BodyError& err);

  void handle_attributions(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);
  void handle_create(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);
  void handle_observations(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader);
  void handle_attribute(const httplib::Request& req, httplib::Response& res);
  void handle_get(const httplib::Request& req, httplib::Response& res);
  void handle_delete(const httplib::Request& req, httplib::Response& res);

  // Runs the engine and writes the verdict (or an error) into `res`.
  // `obs` by value: a one-shot request moves its observations in, a
  // session (which keeps its own for the next attribution) copies them.
  void attribute(const httplib::Request& req, httplib::Response& res, WorkloadContext ctx, std::vector<Observation> obs,
                 std::vector<CollectorReport> collectors = {});
  ojson session_json(Session& s);
  void send_body_error(httplib::Response& res, const BodyError& e) {
    send_error(res, e.status, e.code, e.message, e.details);
  }

  const ServiceConfig& cfg_;
  httplib::Server svr_;
  Metrics metrics_;
  MemoryBudget budget_;
  SessionStore store_;
  std::atomic<bool> ready_{false};
  std::shared_ptr<const Attributor> attributor_;  // set once, before ready_
  std::string catalog_json_;                 // GET /v1/catalog, built at start-up
  std::mutex log_mu_;
};

bool Service::read_body(const httplib::ContentReader& reader, httplib::Response& res, std::string& body) {
  bool too_big = false;
  bool ok = reader([&](const char* d, size_t n) {
    if (body.size() + n > cfg_.max_body) {
      too_big = true;
      return false;
    }
    body.append(d, n);
    return true;
  });
  if (!ok) {
    close_after(res);
    if (too_big) send_error(res, 413, "payload_too_large", fmt::format("the request body exceeds {} bytes", cfg_.max_body),
                            {{"limit", cfg_.max_body}});
    else send_error(res, 400, "bad_request", "the request body could not be read (timeout or broken connection)");
  }
  return ok;
}

bool Service::read_observations(const httplib::Request& req, const httplib::ContentReader& reader,
                                httplib::Response& res, ObservationSink& sink, json* ndjson_context, BodyError& err) {
  BodyKind kind = body_kind(req);
  if (kind == BodyKind::Ndjson) {
    // The reader every carrier shares (runtime/observation_reader.h): plain
    // log observations skip the JSON tree, and errors read the same as for
    // a bundle's observations.jsonl.
    NdjsonObservationReader::Options ropt;
    ropt.first_line_is_context = ndjson_context != nullptr;
    NdjsonObservationReader ndjson(
        [&](Observation&& o, int64_t line) { return sink.add(std::move(o), err, {{"line", line}}); }, ropt);
    size_t total = 0;
    bool too_big = false;
    bool ok = reader([&](const char* d, size_t n) {
      total += n;
      if (total > cfg_.max_body) {
        too_big = true;
        return false;
      }
      return ndjson.feed(d, n);
    });
    if (ok) ok = ndjson.finish();
    if (!ok) {
      close_after(res);
      const auto& e = ndjson.error();
      using K = ObservationReadError::Kind;
      if (too_big) err = {413, "payload_too_large", fmt::format("the request body exceeds {} bytes", cfg_.max_body),
                          {{"limit", cfg_.max_body}}};
      else if (e.kind == K::InvalidJson)
        err = {400, "invalid_json", fmt::format("line {} is {}", e.line, e.message), {{"line", e.line}, {"byte", e.byte}}};
      else if (e.kind == K::Schema)
        err = {400, "schema_violation", fmt::format("line {}: {}", e.line,
                                                    ndjson_context && !ndjson.context() ? e.message : "invalid observation: " + e.message),
               {{"line", e.line}}};
      else if (e.kind == K::LineTooLong)
        err = {413, "payload_too_large", fmt::format("line {} is longer than the {}-byte line limit", e.line, ropt.max_line),
               {{"line", e.line}, {"limit", ropt.max_line}}};
      else if (e.kind == K::None)
        err = {400, "bad_request", "the request body could not be read (timeout or broken connection)"};
      // K::Refused: the sink set `err` (413 or 429).
      return false;
    }
    if (ndjson_context) {
      if (!ndjson.context()) {
        err = {400, "schema_violation", "the NDJSON body is empty: its first line must be the context", {{"line", 1}}};
        return false;
      }
      *ndjson_context = *ndjson.context();
    }
    return true;
  }
  // A JSON array (sessions) or a JSON object (one-shot, handled by the caller).
  std::string body;
  if (!read_body(reader, res, body)) {
    err.status = 0;  // already answered
    return false;
  }
  json j;
  if (!parse_json_text(body, j, err, "the body ")) return false;
  if (!j.is_array()) {
    err = {400, "schema_violation", "the body must be a JSON array of observations (or NDJSON)", {{"pointer", ""}}};
    return false;
  }
  for (size_t i = 0; i < j.size(); ++i)
    if (!sink.add(j[i], err, {{"pointer", fmt::format("/{}", i)}})) return false;
  return true;
}

void Service::attribute(const httplib::Request& req, httplib::Response& res, WorkloadContext ctx,
                        std::vector<Observation> obs, std::vector<CollectorReport> collectors) {
  DiagnoseRequest dr;
  dr.context = std::move(ctx);
  dr.observations = std::move(obs);
  dr.collectors = std::move(collectors);
  DiagnoseOptions opt;
  opt.threads = 1;  // the worker pool is the parallelism; one scan thread per request
  Verdict v;
  std::string err;
  if (!attributor_->attribute(std::move(dr), opt, v, err)) {
    send_error(res, 400, "schema_violation", err);
    return;
  }
  std::vector<std::string> rules;
  for (const auto& t : v.trail) rules.push_back(t.rule);
  int64_t bytes = 0;
  for (const auto& [s, c] : v.coverage.sources) bytes += c.bytes_read;
  metrics_.verdict(v.outcome.status, v.outcome.domain, rules, bytes);
  bool explain = req.get_param_value("explain") == "true" || req.get_param_value("explain") == "1";
  res.status = 200;
  if (req.get_header_value("Accept").find("text/plain") != std::string::npos) {
    TextOptions t;
    t.explain = explain;
    t.color = req.get_param_value("color") == "true" || req.get_param_value("color") == "1";
    t.cascade = req.get_param_value("cascade") == "true" || req.get_param_value("cascade") == "1";
    // The columns to fit (the client's terminal); absent or invalid: no limit.
    if (req.has_param("width")) t.width = std::min<size_t>(std::strtoul(req.get_param_value("width").c_str(), nullptr, 10), 100000);
    res.set_content(verdict_to_text(v, t), "text/plain; charset=utf-8");
  } else {
    res.set_content(verdict_to_json_text(v, explain), "application/json");
  }
}

void Service::handle_attributions(const httplib::Request& req, httplib::Response& res,
                                  const httplib::ContentReader& reader) {
  BodyError err;
  WorkloadContext ctx;
  std::vector<CollectorReport> collectors;  // what the caller's collectors gathered (culprit run --service)
  // In-flight one-shot evidence is charged to the shared budget too.
  size_t reserved = 0;
  ObservationSink sink([&](size_t total) {
    if (total > cfg_.max_session_bytes) return 413;
    if (total > reserved) {
      size_t more = std::max<size_t>(total - reserved, 1 << 20);
      if (!budget_.reserve(more)) return 429;
      reserved += more;
    }
    return 0;
  });
  struct Release {
    MemoryBudget& b;
    size_t& n;
    ~Release() { b.release(n); }
  } release{budget_, reserved};

  if (body_kind(req) == BodyKind::Ndjson) {
    json context;
    if (!read_observations(req, reader, res, sink, &context, err)) {
      if (err.status) send_body_error(res, err);
      return;
    }
    // The first line is the bare context, or {"context": ..., "collectors": [...]}.
    if (context.is_object() && context.contains("context") &&
        context.size() == (context.contains("collectors") ? 2u : 1u)) {
      if (context.contains("collectors") && !parse_collectors(context["collectors"], collectors, err, "line 1"))
        return send_body_error(res, err);
      context = json(context["context"]);
    }
    if (!parse_context(context, ctx, err, "line 1")) return send_body_error(res, err);
  } else {
    std::string body;
    if (!read_body(reader, res, body)) return;
    json j;
    if (!parse_json_text(body, j, err, "the body ")) return send_body_error(res, err);
    if (!j.is_object())
      return send_error(res, 400, "schema_violation", "the body must be a JSON object {context, observations}",
                        {{"pointer", ""}});
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "context" && it.key() != "observations" && it.key() != "collectors")
        return send_error(res, 400, "schema_violation", fmt::format("unknown key '{}'", it.key()),
                          {{"pointer", "/" + it.key()}});
    if (!j.contains("context"))
      return send_error(res, 400, "schema_violation", "missing 'context'", {{"pointer", "/context"}});
    if (!parse_context(j["context"], ctx, err, "/context")) return send_body_error(res, err);
    if (j.contains("collectors") && !parse_collectors(j["collectors"], collectors, err, "/collectors"))
      return send_body_error(res, err);
    if (j.contains("observations")) {
      const auto& arr = j["observations"];
      if (!arr.is_array())
        return send_error(res, 400, "schema_violation", "'observations' must be an array", {{"pointer", "/observations"}});
      for (size_t i = 0; i < arr.size(); ++i)
        if (!sink.add(arr[i], err, {{"pointer", fmt::format("/observations/{}", i)}})) return send_body_error(res, err);
    }
  }
  // Same defaults as a bundle's observations.jsonl: the carrier's name and
  // the position in it, so arrival order is kept and provenance is stable.
  int64_t n = 0;
  for (auto& o : sink.obs) {
    ++n;
    if (o.file.empty()) o.file = "observations.jsonl";
    if (o.line == 0) o.line = n;
  }
  attribute(req, res, std::move(ctx), std::move(sink.obs), std::move(collectors));
}

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

void Service::handle_create(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& reader) {
  std::string body;
  if (!read_body(reader, res, body)) return;
  BodyError err;
  json j;
  if (!parse_json_text(body, j, err, "the body ")) return send_body_error(res, err);
  if (j.is_object() && j.contains("context") && j.size() == 1) j = j["context"];
  WorkloadContext ctx;
  if (!parse_context(j, ctx, err, "")) return send_body_error(res, err);
  std::shared_ptr<Session> s;
  std::string existing;
  switch (store_.create(ctx, j.dump(), s, existing)) {
    case SessionStore::Status::Ok: break;
    case SessionStore::Status::Conflict:
      return send_error(res, 409, "conflict", "an open session already exists for this workload_id",
                        {{"id", existing}, {"workload_id", ctx.workload_id}});
    case SessionStore::Status::TooManySessions:
      return send_error(res, 429, "too_many_requests", "too many open sessions; retry later",
                        {{"limit", cfg_.max_sessions}});
    default:
      return send_error(res, 429, "too_many_requests", "the service's memory budget is exhausted; retry later");
  }
  metrics_.session_created();
  res.set_header("Location", "/v1/workloads/" + s->id);
  send_json(res, 201, session_json(*s));
}

void Service::handle_observations(const httplib::Request& req, httplib::Response& res,
                                  const httplib::ContentReader& reader) {
  auto s = store_.get(req.matches[1]);
  if (!s) {
    // Drain nothing: the connection is closed instead.
    close_after(res);
    return send_error(res, 404, "not_found", "no such workload session (unknown, deleted or expired)",
                      {{"id", std::string(req.matches[1])}});
  }
  // Charged as parsed: a reservation on the shared budget, moved to the
  // session on success and returned on failure.
  size_t reserved = 0;
  ObservationSink sink([&](size_t total) {
    size_t session_bytes;
    {
      std::lock_guard<std::mutex> lock(s->mu);
      session_bytes = s->bytes;
    }
    if (session_bytes + total > cfg_.max_session_bytes) return 413;
    if (total > reserved) {
      size_t more = total - reserved;
      if (!budget_.reserve(more)) return 429;
      reserved += more;
    }
    return 0;
  });
  BodyError err;
  if (body_kind(req) == BodyKind::None) {
    budget_.release(reserved);
    return send_error(res, 415, "unsupported_media_type",
                      "send observations as application/json (an array) or application/x-ndjson");
  }
  if (!read_observations(req, reader, res, sink, nullptr, err)) {
    budget_.release(reserved);
    if (err.status) send_body_error(res, err);
    return;
  }
  size_t count = sink.obs.size();
  size_t cost = sink.cost();
  budget_.release(reserved - cost);  // keep exactly the cost
  auto st = store_.append(*s, sink.obs, cost);
  if (st != SessionStore::Status::Ok) {
    budget_.release(cost);
    if (st == SessionStore::Status::NotFound)
      return send_error(res, 404, "not_found", "the session was deleted or expired", {{"id", s->id}});
    return send_error(res, 413, "payload_too_large", "the workload's observations exceed the per-session memory limit",
                      {{"limit", cfg_.max_session_bytes}});
  }
  ojson j = session_json(*s);
  j["accepted"] = count;
  send_json(res, 200, j);
}

void Service::handle_attribute(const httplib::Request& req, httplib::Response& res) {
  auto s = store_.get(req.matches[1]);
  if (!s)
    return send_error(res, 404, "not_found", "no such workload session (unknown, deleted or expired)",
                      {{"id", std::string(req.matches[1])}});
  // The session's lock is held while it is scanned: posts to the same
  // workload wait, other workloads do not.
  std::lock_guard<std::mutex> lock(s->mu);
  if (s->closed) return send_error(res, 404, "not_found", "the session was deleted or expired", {{"id", s->id}});
  ++s->attributions;
  attribute(req, res, s->context, s->observations);
  s->last_used = Clock::now();
}

void Service::handle_get(const httplib::Request& req, httplib::Response& res) {
  auto s = store_.get(req.matches[1]);
  if (!s)
    return send_error(res, 404, "not_found", "no such workload session (unknown, deleted or expired)",
                      {{"id", std::string(req.matches[1])}});
  send_json(res, 200, session_json(*s));
}

void Service::handle_delete(const httplib::Request& req, httplib::Response& res) {
  if (!store_.remove(req.matches[1]))
    return send_error(res, 404, "not_found", "no such workload session (unknown, deleted or expired)",
                      {{"id", std::string(req.matches[1])}});
  metrics_.session_deleted();
  res.status = 204;
}

httplib::Server::HandlerResponse Service::pre_route(const httplib::Request& req, httplib::Response& res) {
  using HR = httplib::Server::HandlerResponse;
  t_start = Clock::now();
  const Route* r = find_route(req.path);
  t_route = r ? r->name.c_str() : "unmatched";
  auto handled = [&]() {
    // Whatever body came with a refused request is not read: close.
    if (has_body(req)) close_after(res);
    return HR::Handled;
  };
  if (!r) {
    send_error(res, 404, "not_found", "no such route", {{"path", req.path}});
    return handled();
  }
  std::string method = req.method == "HEAD" ? "GET" : req.method;
  if (std::find(r->methods.begin(), r->methods.end(), method) == r->methods.end()) {
    std::string allow;
    for (const auto& m : r->methods) allow += (allow.empty() ? "" : ", ") + m;
    res.set_header("Allow", allow);
    send_error(res, 405, "method_not_allowed", fmt::format("{} is not allowed on {}", req.method, r->name),
               {{"allow", r->methods}});
    return handled();
  }
  if (r->needs_auth && !cfg_.token.empty()) {
    std::string auth = req.get_header_value("Authorization");
    const std::string prefix = "Bearer ";
    bool ok = auth.size() > prefix.size() && auth.compare(0, prefix.size(), prefix) == 0 &&
              constant_time_equal(auth.substr(prefix.size()), cfg_.token);
    if (!ok) {
      res.set_header("WWW-Authenticate", "Bearer");
      send_error(res, 401, "unauthorized", auth.empty() ? "missing bearer token" : "invalid bearer token");
      return handled();
    }
  }
  if (r->needs_ready && !ready_.load()) {
    res.set_header("Retry-After", "1");
    send_error(res, 503, "not_ready", "the catalog is still being compiled and self-tested");
    return handled();
  }
  if (has_body(req) && req.has_header("Content-Length") && req.get_header_value<uint64_t>("Content-Length") > cfg_.max_body) {
    send_error(res, 413, "payload_too_large", fmt::format("the request body exceeds {} bytes", cfg_.max_body),
               {{"limit", cfg_.max_body}});
    return handled();
  }
  if (r->takes_body || has_body(req)) {
    BodyKind k = body_kind(req);
    bool ok = k == BodyKind::Json || k == BodyKind::Ndjson || (k == BodyKind::None && !has_body(req));
    if (r->name == "/v1/workloads") ok = k == BodyKind::Json;
    if (!ok) {
      send_error(res, 415, "unsupported_media_type",
                 fmt::format("unsupported Content-Type '{}': send application/json or application/x-ndjson",
                             req.get_header_value("Content-Type")));
      return handled();
    }
  }
  return HR::Unhandled;
}

void Service::log_request(const httplib::Request& req, const httplib::Response& res) {
  double secs = t_route ? std::chrono::duration<double>(Clock::now() - t_start).count() : 0.0;
  const char* route = t_route ? t_route : "unmatched";
  metrics_.request(route, req.method, res.status, secs);
  t_route = nullptr;
  if (!cfg_.access_log) return;
  // Never the Authorization header or bodies: only what identifies the request.
  ojson j;
  j["ts"] = format_rfc3339(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  j["remote"] = req.remote_addr;
  j["method"] = req.method;
  j["path"] = req.path;
  j["route"] = route;
  j["status"] = res.status;
  j["bytes_in"] = req.body.empty() ? req.get_header_value<uint64_t>("Content-Length") : req.body.size();
  j["bytes_out"] = res.body.size();
  j["ms"] = std::round(secs * 1e6) / 1e3;
  std::string line = j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(log_mu_);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void Service::install_routes() {
  svr_.set_pre_routing_handler([this](const httplib::Request& q, httplib::Response& s) { return pre_route(q, s); });
  svr_.set_logger([this](const httplib::Request& q, const httplib::Response& s) { log_request(q, s); });
  // httplib's own errors (unparsable request line, oversized headers) get
  // the same JSON shape; handlers' own answers already have a body.
  svr_.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const char* code = res.status == 413 ? "payload_too_large" : res.status == 404 ? "not_found" : "bad_request";
    send_error(res, res.status, code, fmt::format("HTTP {}", res.status));
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    send_error(res, 500, "internal", "internal error: " + what);
  });
  svr_.Get("/healthz", [](const httplib::Request&, httplib::Response& res) { send_json(res, 200, {{"status", "alive"}}); });
  svr_.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    if (ready_.load()) return send_json(res, 200, {{"status", "ready"}});
    res.set_header("Retry-After", "1");
    send_error(res, 503, "not_ready", "the catalog is still being compiled and self-tested");
  });
  svr_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.render(store_.count(), store_.bytes()), "text/plain; version=0.0.4; charset=utf-8");
  });
  svr_.Get("/v1/openapi.json", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(kOpenApiJson, "application/json");
  });
  svr_.Get("/v1/catalog", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(catalog_json_, "application/json");
  });
  svr_.Post("/v1/attributions", [this](const httplib::Request& q, httplib::Response& s, const httplib::ContentReader& r) {
    handle_attributions(q, s, body_reader(q, r));
  });
  svr_.Post("/v1/workloads", [this](const httplib::Request& q, httplib::Response& s, const httplib::ContentReader& r) {
    handle_create(q, s, body_reader(q, r));
  });
  svr_.Post("/v1/workloads/([^/]+)/observations",
            [this](const httplib::Request& q, httplib::Response& s, const httplib::ContentReader& r) {
              handle_observations(q, s, body_reader(q, r));
            });
  // The attribute route takes no body; registered with a reader so that
  // one sent anyway is refused by size rather than buffered.
  svr_.Post("/v1/workloads/([^/]+)/attribute",
            [this](const httplib::Request& q, httplib::Response& s, const httplib::ContentReader& r) {
              std::string ignored;
              if (!read_body(body_reader(q, r), s, ignored)) return;
              handle_attribute(q, s);
            });
  svr_.Get("/v1/workloads/([^/]+)", [this](const httplib::Request& q, httplib::Response& s) { handle_get(q, s); });
  svr_.Delete("/v1/workloads/([^/]+)", [this](const httplib::Request& q, httplib::Response& s) { handle_delete(q, s); });
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
    std::cerr << fmt::format("culprit serve: {}{}\n", start.error, tests_failed ? "; refusing to serve it" : "");
    return false;
  }
  const TestReport& report = *start.self_test;
  const Program* program = attributor->program().get();
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
  for (const auto& r : report.results)
    tests.push_back({{"kind", r.kind}, {"name", r.name}, {"location", shown_location(r.location)}, {"passed", r.passed}});
  j["self_test"] = {{"passed", report.passed}, {"failed", report.failed}, {"results", tests}};
  catalog_json_ = j.dump(2) + "\n";
  metrics_.set_catalog(cat.name, cat.version, cat.digest);
  attributor_ = std::move(attributor);
  return true;
}

int Service::run() {
  svr_.new_task_queue = [n = cfg_.threads] { return new httplib::ThreadPool(n); };
  svr_.set_read_timeout(cfg_.read_timeout_s, 0);
  svr_.set_write_timeout(cfg_.write_timeout_s, 0);
  svr_.set_keep_alive_timeout(cfg_.keep_alive_s);
  svr_.set_keep_alive_max_count(1000);
  svr_.set_payload_max_length(cfg_.max_body);
  svr_.set_tcp_nodelay(true);
  install_routes();

  int port = cfg_.port;
  if (port == 0) port = svr_.bind_to_any_port(cfg_.host);
  else if (!svr_.bind_to_port(cfg_.host, port)) port = -1;
  if (port <= 0) {
    std::cerr << fmt::format("culprit serve: cannot listen on {}:{}\n", cfg_.host, cfg_.port);
    return 2;
  }
  std::atomic<bool> server_done{false};
  std::thread server([&] {
    svr_.listen_after_bind();
    server_done = true;
  });
  // Stops the server once asked (signal or failed start-up) and expires
  // idle sessions once a second.
  std::thread janitor([&] {
    auto last_reap = Clock::now();
    while (!server_done.load()) {
      if (g_stop.load()) svr_.stop();  // repeated: a stop before listen started is a no-op
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
    rc = 1;
    g_stop = true;
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
  server.join();
  janitor.join();
  if (rc == 0) std::cerr << "{\"event\":\"stopped\",\"reason\":\"signal\"}\n";
  return rc;
}

}  // namespace

void request_stop() { g_stop.store(true); }

int run_server(const ServiceConfig& config) {
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, not a dead process
  // SIGTERM/SIGINT are blocked in every thread (the mask is inherited by the
  // threads created below) and taken by one waiter, so no socket call in a
  // worker is ever interrupted by them: in-flight requests finish normally.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::atomic<bool> finished{false};
  std::thread waiter([&] {
    timespec tick{0, 100 * 1000 * 1000};
    while (!finished.load())
      if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) g_stop.store(true);
  });
  int rc = 3;
  try {
    Service service(config);
    rc = service.run();
  } catch (const std::exception& e) {
    std::cerr << "culprit serve: internal error: " << e.what() << "\n";
  }
  finished = true;
  waiter.join();
  return rc;
}

}  // namespace culprit::service
