#include "service/server.h"

#include <fmt/format.h>
#include <signal.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "base/limits.h"
#include "base/sha256.h"
#include "base/stop_signals.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "compiler/catalog_loader.h"
#include "runtime/bundle.h"
#include "runtime/collector_report_json.h"
#include "runtime/diagnose.h"
#include "runtime/json_input.h"
#include "runtime/observation_reader.h"
#include "runtime/self_test.h"
#include "runtime/unread_json.h"
#include "runtime/verdict_json.h"
#include "runtime/verdict_text.h"
#include "service/host_check.h"
#include "service/http.h"
#include "service/http_server.h"
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
void send_error(HttpResponse& res, int status, const std::string& code, const std::string& message,
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

void send_json(HttpResponse& res, int status, const ojson& j) {
  res.status = status;
  res.set_content(j.dump(2, ' ', false, json::error_handler_t::replace) + "\n", "application/json");
}

// The value of a limit of base/limits.h by name (0 if unknown).
uint64_t limit_value(std::string_view name) {
  for (const auto& e : limits::all())
    if (e.name == name) return e.value;
  return 0;
}

// The limit a runtime message is about ("limit NAME exceeded: ..."), or "".
std::string limit_in_message(const std::string& message) {
  size_t at = message.find("limit ");
  if (at == std::string::npos) return {};
  size_t end = message.find(" exceeded", at + 6);
  if (end == std::string::npos) return {};
  std::string name = message.substr(at + 6, end - at - 6);
  return limit_value(name) ? name : std::string();
}

// ------------------------------------------------------------ routes

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

enum class BodyKind { None, Json, Ndjson, Other };

BodyKind body_kind(const HttpRequest& req) {
  std::string ct = req.header("content-type");
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

// The content coding of a body: "" (none), "gzip" or "deflate"; false for
// anything else (br, compress, stacked codings).
bool content_coding(const HttpRequest& req, std::string& coding) {
  coding.clear();
  std::vector<std::string> codings;
  for (const auto& [k, v] : req.headers) {
    if (k != "content-encoding") continue;
    size_t pos = 0;
    while (pos <= v.size()) {
      size_t comma = v.find(',', pos);
      if (comma == std::string::npos) comma = v.size();
      std::string m = v.substr(pos, comma - pos);
      m.erase(0, m.find_first_not_of(" \t"));
      while (!m.empty() && (m.back() == ' ' || m.back() == '\t')) m.pop_back();
      for (auto& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!m.empty() && m != "identity") codings.push_back(m);
      pos = comma + 1;
    }
  }
  if (codings.empty()) return true;
  if (codings.size() != 1) return false;
  if (codings[0] == "x-gzip") codings[0] = "gzip";
  if (codings[0] != "gzip" && codings[0] != "deflate") return false;
  coding = codings[0];
  return true;
}

// ------------------------------------------------------------ parsing

// What went wrong with a request body, as an HTTP answer.
struct BodyError {
  int status = 400;
  std::string code, message;
  ojson details = ojson::object();
};

// A limit error: 413 payload_too_large for sizes, 400 limit_exceeded for
// structure; details name the limit, its value and where.
BodyError limit_error(const std::string& name, const std::string& message, ojson where) {
  bool size = name == "max_body" || name == "observation_line" || name == "context_bytes" || name == "max_session_bytes";
  BodyError e{size ? 413 : 400, size ? "payload_too_large" : "limit_exceeded", message, std::move(where)};
  e.details["name"] = name;
  e.details["limit"] = limit_value(name);
  return e;
}

bool parse_json_text(const std::string& text, json& out, BodyError& err, const std::string& where) {
  JsonInputError je;
  if (parse_json_input(text, out, je)) return true;
  switch (je.kind) {
    case JsonInputError::Kind::TooDeep:
      err = limit_error("json_depth", je.message, {{"pointer", je.pointer}});
      break;
    case JsonInputError::Kind::DuplicateKey:
      err = {400, "schema_violation", je.message, {{"pointer", je.pointer}}};
      break;
    default:
      err = {400, "invalid_json", fmt::format("{}is {}", where, je.message), {{"byte", je.byte}}};
  }
  return false;
}

// What a request or a session holds for its context, in bytes.
size_t context_cost(const WorkloadContext& c, size_t json_bytes) {
  size_t n = sizeof(WorkloadContext) + json_bytes + c.workload_id.capacity() + c.terminal.state.capacity();
  for (const auto& node : c.nodes) n += sizeof(std::string) + (node.capacity() > 15 ? node.capacity() + 17 : 0);
  // The verdict lists nodes per source in its coverage: count them once more.
  return 2 * n;
}

// What a request holds for its collector reports and its `unread` (kept
// into the verdict).
size_t carried_cost(const EvidenceSet& e) {
  auto str = [](const std::string& x) { return sizeof(std::string) + (x.capacity() > 15 ? x.capacity() + 17 : 0); };
  size_t n = 0;
  for (const auto& r : e.collectors) {
    n += sizeof(CollectorReport) + str(r.collector) + str(r.source) + str(r.status) + str(r.reason);
    for (const auto* v : {&r.nodes_expected, &r.nodes_covered, &r.errors})
      for (const auto& x : *v) n += str(x);
  }
  for (const auto* v : {&e.ignored_files, &e.warnings})
    for (const auto& x : *v) n += str(x);
  for (const auto& f : e.refused_files) n += str(f.path) + str(f.reason) + str(f.path);  // a warning is made of it too
  return 2 * n;  // the verdict's coverage holds a copy
}

bool parse_context(const json& j, WorkloadContext& ctx, std::string& text, BodyError& err, const std::string& pointer) {
  if (!j.is_object()) {
    err = {400, "schema_violation", "the context must be a JSON object", {{"pointer", pointer}}};
    return false;
  }
  // The tree is at most limits::kJsonDepth deep (parse_json_input), so
  // serializing it is safe; its size is bounded like a context.json's.
  text = j.dump();
  if (text.size() > limits::kContextBytes) {
    err = limit_error("context_bytes",
                      limits::exceeded("context_bytes", limits::kContextBytes, fmt::format("the context is {} bytes", text.size())),
                      {{"pointer", pointer}});
    return false;
  }
  std::string why;
  if (!culprit::parse_context(j, ctx, why)) {
    std::string lim = limit_in_message(why);
    if (!lim.empty()) err = limit_error(lim, why, {{"pointer", pointer}});
    else err = {400, "schema_violation", "invalid context: " + why, {{"pointer", pointer}}};
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

// The `unread` of a one-shot request (runtime/unread_json.h): what the
// caller's carrier found but could not read, listed in the verdict's coverage.
bool parse_unread(const json& j, EvidenceSet& out, BodyError& err, const std::string& pointer) {
  std::string why;
  if (unread_from_json(j, out, why)) return true;
  std::string lim = limit_in_message(why);
  if (!lim.empty()) err = limit_error(lim, why, {{"pointer", pointer}});
  else err = {400, "schema_violation", "invalid unread: " + why, {{"pointer", pointer}}};
  return false;
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
      err.details["name"] = status == 413 ? "max_session_bytes" : "max_total_bytes";
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

// What parsing a body will hold at its peak, estimated from the body before
// it is parsed, so that a request is admitted or refused (429) as a whole:
// charging only as it parses lets many concurrent requests each take part
// of the budget and all fail half way. NDJSON: one observation per line;
// JSON: the document tree too (an object per observation, a few members
// each), as long as it lives. Compressed bodies cannot be counted: 0 (they
// are charged as they parse).
size_t estimate_parse_cost(const RequestBody& body, bool ndjson) {
  if (body.encoded()) return 0;
  constexpr size_t kTreePerObject = 640;  // std::map nodes, keys and values of ~5 members
  if (ndjson) return body.size() + (body.count('\n') + 1) * observation_overhead();
  return 2 * body.size() + body.count('{') * (observation_overhead() + kTreePerObject);
}

// What the events of one attribution can hold: each line that matches an
// extractor becomes an event (its record, fields and provenance, about 1 KiB,
// and its text up to limits::kEvidenceText), and an attribution keeps at most
// limits::kEventsPerRequest of them (DiagnoseOptions::max_events), so this
// is known before the scan and charged with the observations.
size_t event_allowance(size_t observations, size_t text_bytes) {
  constexpr size_t kEventRecord = 1024;
  if (observations == 0) return 0;
  size_t per_line = std::min(text_bytes / observations + 16, limits::kEvidenceText);
  return std::min(observations, limits::kEventsPerRequest) * (kEventRecord + per_line);
}

// A reservation on the shared budget, returned when it goes out of scope.
struct Reservation {
  MemoryBudget& budget;
  size_t bytes = 0;
  ~Reservation() { budget.release(bytes); }
  bool grow_to(size_t total, size_t step = 1u << 20) {
    if (total <= bytes) return true;
    size_t more = std::max(total - bytes, step);
    if (!budget.reserve(more)) return false;
    bytes += more;
    return true;
  }
};

const char* method_label(const std::string& m) {
  // Client input: only known methods become label values.
  for (const char* k : {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"})
    if (m == k) return k;
  return "other";
}

// ------------------------------------------------------------ the service

class Service : public HttpHandler {
 public:
  explicit Service(const ServiceConfig& cfg)
      : cfg_(cfg), hosts_(cfg.host, cfg.allow_hosts), budget_(cfg.max_total_bytes),
        store_(SessionLimits{cfg.max_sessions, cfg.max_session_bytes, cfg.session_ttl}, budget_) {}

  int run();
  // For InProcessService: an already open catalog.
  void set_attributor(std::shared_ptr<const Attributor> a) {
    attributor_ = std::move(a);
    build_catalog_json(nullptr);
    ready_ = true;
  }

  // HttpHandler
  bool on_head(HttpRequest& req, HttpResponse& res) override;
  bool reserve_body(size_t bytes) override { return budget_.reserve(bytes); }
  void release(size_t bytes) override { budget_.release(bytes); }
  void handle(HttpRequest& req, HttpResponse& res) override;
  void protocol_error(const std::string& message, const std::string& limit, HttpResponse& res) override;
  void answered(const HttpRequest& req, const HttpResponse& res, double seconds) override;

  MemoryBudget& budget() { return budget_; }

 private:
  bool load_catalog_and_test();
  void build_catalog_json(const TestReport* report);

  // Reads a whole body (decoded, bounded by max_body) into `body`.
  bool read_body(HttpRequest& req, std::string& body, BodyError& err);
  // Streams observations (JSON array or NDJSON) into `sink`. With
  // `ndjson_context`, the first NDJSON line is the context (one-shot).
  bool read_observations(HttpRequest& req, ObservationSink& sink, json* ndjson_context, BodyError& err);

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
  ojson session_json(Session& s);
  void send_body_error(HttpResponse& res, const BodyError& e) { send_error(res, e.status, e.code, e.message, e.details); }
  void answer_fast_route(const Route& r, HttpResponse& res);

  const ServiceConfig& cfg_;
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

bool Service::read_body(HttpRequest& req, std::string& body, BodyError& err) {
  auto st = req.body.read(
      [&](const char* d, size_t n) {
        body.append(d, n);
        return true;
      },
      cfg_.max_body);
  if (st == RequestBody::ReadStatus::TooLarge) {
    err = limit_error("max_body", fmt::format("the request body exceeds {} bytes", cfg_.max_body), ojson::object());
    err.details["limit"] = cfg_.max_body;
    return false;
  }
  if (st == RequestBody::ReadStatus::BadEncoding) {
    err = {400, "bad_request", "the request body is not valid gzip/deflate data"};
    return false;
  }
  return true;
}

bool Service::read_observations(HttpRequest& req, ObservationSink& sink, json* ndjson_context, BodyError& err) {
  BodyKind kind = body_kind(req);
  if (kind == BodyKind::Ndjson) {
    // The reader every carrier shares (runtime/observation_reader.h): plain
    // log observations skip the JSON tree, and errors read the same as for
    // a bundle's observations.jsonl.
    NdjsonObservationReader::Options ropt;
    ropt.first_line_is_context = ndjson_context != nullptr;
    NdjsonObservationReader ndjson(
        [&](Observation&& o, int64_t line) { return sink.add(std::move(o), err, {{"line", line}}); }, ropt);
    auto st = req.body.read([&](const char* d, size_t n) { return ndjson.feed(d, n); }, cfg_.max_body);
    bool ok = st == RequestBody::ReadStatus::Ok && ndjson.finish();
    if (!ok) {
      const auto& e = ndjson.error();
      using K = ObservationReadError::Kind;
      if (st == RequestBody::ReadStatus::TooLarge) {
        err = limit_error("max_body", fmt::format("the request body exceeds {} bytes", cfg_.max_body), ojson::object());
        err.details["limit"] = cfg_.max_body;
      } else if (st == RequestBody::ReadStatus::BadEncoding) {
        err = {400, "bad_request", "the request body is not valid gzip/deflate data"};
      } else if (e.kind == K::InvalidJson) {
        err = {400, "invalid_json", fmt::format("line {} is {}", e.line, e.message), {{"line", e.line}, {"byte", e.byte}}};
      } else if (e.kind == K::Schema) {
        err = {400, "schema_violation",
               fmt::format("line {}: {}", e.line, ndjson_context && !ndjson.context() ? e.message : "invalid observation: " + e.message),
               {{"line", e.line}}};
      } else if (e.kind == K::TooDeep) {
        err = limit_error("json_depth", fmt::format("line {}: {}", e.line, e.message), {{"line", e.line}});
      } else if (e.kind == K::LineTooLong) {
        err = limit_error("observation_line", fmt::format("line {}: {}", e.line, e.message), {{"line", e.line}});
      }
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
  if (!read_body(req, body, err)) return false;
  json j;
  if (!parse_json_text(body, j, err, "the body ")) return false;
  std::string().swap(body);
  if (!j.is_array()) {
    err = {400, "schema_violation", "the body must be a JSON array of observations (or NDJSON)", {{"pointer", ""}}};
    return false;
  }
  for (size_t i = 0; i < j.size(); ++i)
    if (!sink.add(j[i], err, {{"pointer", fmt::format("/{}", i)}})) return false;
  return true;
}

void Service::attribute(const HttpRequest& req, HttpResponse& res, WorkloadContext ctx, EvidenceSet evidence) {
  DiagnoseRequest dr;
  static_cast<EvidenceSet&>(dr) = std::move(evidence);
  dr.context = std::move(ctx);
  DiagnoseOptions opt;
  opt.threads = 1;  // the worker pool is the parallelism; one scan thread per request
  opt.max_events = limits::kEventsPerRequest;  // what the request was charged for (event_allowance)
  bool explain = req.param("explain") == "true" || req.param("explain") == "1";
  // ?schema=v1 serves the verdict without the recommendation, for readers
  // of culprit.verdict/v1 (docs/service.md); v2 is the default.
  VerdictSchema schema = VerdictSchema::V2;
  if (std::string sp = req.param("schema"); !sp.empty() && !parse_verdict_schema(sp, schema)) {
    send_error(res, 400, "bad_request", "the schema parameter must be v2 or v1");
    return;
  }
  opt.trail = true;  // metrics count rule firings from the trail
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
  res.status = 200;
  if (req.header("accept").find("text/plain") != std::string::npos) {
    TextOptions t;
    t.explain = explain;
    t.color = req.param("color") == "true" || req.param("color") == "1";
    t.cascade = req.param("cascade") == "true" || req.param("cascade") == "1";
    // The columns to fit (the client's terminal); absent or invalid: no limit.
    if (std::string w = req.param("width"); !w.empty()) t.width = std::min<size_t>(std::strtoul(w.c_str(), nullptr, 10), 100000);
    res.set_content(verdict_to_text(v, t), "text/plain; charset=utf-8");
  } else {
    res.set_content(verdict_to_json_text(v, explain, schema), "application/json");
  }
}

void Service::handle_attributions(HttpRequest& req, HttpResponse& res) {
  BodyError err;
  WorkloadContext ctx;
  // In-flight one-shot evidence is charged to the shared budget too: first
  // what parsing the body will take, as a whole, then as it turns out.
  Reservation held{budget_};
  bool ndjson = body_kind(req) == BodyKind::Ndjson;
  size_t guess_lines = req.body.encoded() ? 0 : ndjson ? req.body.count('\n') + 1 : req.body.count('{');
  size_t estimate = estimate_parse_cost(req.body, ndjson) + event_allowance(guess_lines, req.body.size());
  if (!held.grow_to(std::min(estimate, cfg_.max_session_bytes), 0))
    return send_error(res, 429, "too_many_requests", "the service's memory budget is exhausted; retry later",
                      {{"name", "max_total_bytes"}, {"limit", cfg_.max_total_bytes}});
  size_t context_charge = 0;
  // What the caller's collectors gathered and its carrier could not read
  // (culprit run with a service, culprit diagnose --server).
  EvidenceSet carried;
  ObservationSink sink([&](size_t total) {
    if (total + context_charge > cfg_.max_session_bytes) return 413;
    if (!held.grow_to(total + context_charge)) return 429;
    return 0;
  });
  std::string context_text;
  if (ndjson) {
    json context;
    if (!read_observations(req, sink, &context, err)) return send_body_error(res, err);
    // The first line is the bare context, or {"context": ..., "collectors":
    // [...], "unread": {...}} (the last two optional).
    if (context.is_object() && context.contains("context") &&
        context.size() == 1u + context.contains("collectors") + context.contains("unread")) {
      if (context.contains("collectors") && !parse_collectors(context["collectors"], carried.collectors, err, "line 1"))
        return send_body_error(res, err);
      if (context.contains("unread") && !parse_unread(context["unread"], carried, err, "line 1"))
        return send_body_error(res, err);
      json inner = std::move(context["context"]);
      context = std::move(inner);
    }
    if (!parse_context(context, ctx, context_text, err, "line 1")) return send_body_error(res, err);
  } else {
    std::string body;
    if (!read_body(req, body, err)) return send_body_error(res, err);
    json j;
    if (!parse_json_text(body, j, err, "the body ")) return send_body_error(res, err);
    std::string().swap(body);
    struct FreeTree {  // the document is not needed once its observations are taken
      json& j;
      ~FreeTree() { json().swap(j); }
    } free_tree{j};
    if (!j.is_object())
      return send_error(res, 400, "schema_violation", "the body must be a JSON object {context, observations}",
                        {{"pointer", ""}});
    for (auto it = j.begin(); it != j.end(); ++it)
      if (it.key() != "context" && it.key() != "observations" && it.key() != "collectors" && it.key() != "unread")
        return send_error(res, 400, "schema_violation",
                          fmt::format("unknown key '{}'", truncate_utf8(sanitize_utf8(it.key()), 64)),
                          {{"pointer", "/" + it.key()}});
    if (!j.contains("context"))
      return send_error(res, 400, "schema_violation", "missing 'context'", {{"pointer", "/context"}});
    if (!parse_context(j["context"], ctx, context_text, err, "/context")) return send_body_error(res, err);
    if (j.contains("collectors") && !parse_collectors(j["collectors"], carried.collectors, err, "/collectors"))
      return send_body_error(res, err);
    if (j.contains("unread") && !parse_unread(j["unread"], carried, err, "/unread")) return send_body_error(res, err);
    context_charge = context_cost(ctx, context_text.size()) + carried_cost(carried);
    if (j.contains("observations")) {
      const auto& arr = j["observations"];
      if (!arr.is_array())
        return send_error(res, 400, "schema_violation", "'observations' must be an array", {{"pointer", "/observations"}});
      for (size_t i = 0; i < arr.size(); ++i)
        if (!sink.add(arr[i], err, {{"pointer", fmt::format("/observations/{}", i)}})) return send_body_error(res, err);
    }
    json().swap(j);
  }
  size_t text_bytes = 0;
  for (const auto& o : sink.obs) text_bytes += o.text.size();
  context_charge = context_cost(ctx, context_text.size()) + carried_cost(carried) +
                   event_allowance(sink.obs.size(), text_bytes);
  if (sink.cost() + context_charge > cfg_.max_session_bytes)
    return send_error(res, 413, "payload_too_large", "the workload's evidence exceeds the per-request memory limit",
                      {{"name", "max_session_bytes"}, {"limit", cfg_.max_session_bytes}});
  if (!held.grow_to(sink.cost() + context_charge, 0))
    return send_error(res, 429, "too_many_requests", "the service's memory budget is exhausted; retry later",
                      {{"name", "max_total_bytes"}, {"limit", cfg_.max_total_bytes}});
  // Same defaults as a bundle's observations.jsonl: the carrier's name and
  // the position in it, so arrival order is kept and provenance is stable.
  int64_t n = 0;
  for (auto& o : sink.obs) {
    ++n;
    if (o.file.empty()) o.file = "observations.jsonl";
    if (o.line == 0) o.line = n;
  }
  carried.observations = std::move(sink.obs);
  attribute(req, res, std::move(ctx), std::move(carried));
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

void Service::handle_create(HttpRequest& req, HttpResponse& res) {
  std::string body;
  BodyError err;
  if (!read_body(req, body, err)) return send_body_error(res, err);
  json j;
  if (!parse_json_text(body, j, err, "the body ")) return send_body_error(res, err);
  if (j.is_object() && j.contains("context") && j.size() == 1) j = std::move(j["context"]);
  WorkloadContext ctx;
  std::string text;
  if (!parse_context(j, ctx, text, err, "")) return send_body_error(res, err);
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
  if (!read_observations(req, sink, nullptr, err)) return send_body_error(res, err);
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
  if (!read_body(req, ignored, err)) return send_body_error(res, err);
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

bool Service::on_head(HttpRequest& req, HttpResponse& res) {
  std::string id;
  const Route* r = find_route(req.path, id);
  if (!r) {
    send_error(res, 404, "not_found", "no such route", {{"path", truncate_utf8(sanitize_utf8(req.path), 256)}});
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

HttpServerConfig server_config(const ServiceConfig& cfg) {
  HttpServerConfig h;
  h.host = cfg.host;
  h.port = cfg.port;
  h.threads = cfg.threads;
  h.parse_limits = {limits::kRequestHead, limits::kHeaderLine, limits::kHeaderCount, cfg.max_body};
  h.max_connections = cfg.max_connections;
  h.max_requests_per_connection = cfg.max_requests_per_connection;
  h.header_timeout_s = cfg.header_timeout_s;
  h.request_timeout_s = cfg.request_timeout_s;
  h.write_timeout_s = cfg.write_timeout_s;
  h.keep_alive_s = cfg.keep_alive_s;
  h.drain_timeout_s = cfg.drain_timeout_s;
  return h;
}

int Service::run() {
  // Said before binding, so that it is said even when binding fails.
  if (cfg_.token.empty() && !is_loopback_host(cfg_.host))
    std::cerr << fmt::format("culprit serve: warning: --listen {} is not a loopback address and there is no "
                             "--token-file: anyone who can reach it can post evidence and read every verdict; give "
                             "--token-file, or listen on 127.0.0.1\n",
                             is_wildcard_host(cfg_.host) ? cfg_.host + " (every interface)" : cfg_.host);
  HttpServer server(server_config(cfg_), *this);
  std::string error;
  int port = server.bind(error);
  if (port <= 0) {
    std::cerr << fmt::format("culprit serve: cannot listen on {}:{}: {}\n", cfg_.host, cfg_.port, error);
    return 2;
  }
  std::atomic<bool> server_done{false};
  std::thread loop([&] {
    server.run();
    server_done = true;
  });
  // Stops the server once asked (signal or failed start-up) and expires
  // idle sessions once a second.
  std::thread janitor([&] {
    auto last_reap = Clock::now();
    while (!server_done.load()) {
      if (g_stop.load() && !server.stopping()) {
        if (ready_.load())
          std::cerr << fmt::format("{{\"event\":\"draining\",\"deadline_seconds\":{}}}\n", cfg_.drain_timeout_s);
        server.stop();
      }
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
    rc = start_failure_;
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
  loop.join();
  janitor.join();
  if (size_t n = server.abandoned()) {
    // A worker is still computing an answer nobody will receive: do not
    // wait for it (the drain deadline is a promise), and do not run
    // destructors under its feet.
    std::cerr << fmt::format("{{\"event\":\"stopped\",\"reason\":\"drain deadline\",\"abandoned\":{}}}\n", n);
    std::fflush(stderr);
    std::_Exit(rc);
  }
  if (rc == 0) std::cerr << "{\"event\":\"stopped\",\"reason\":\"signal\"}\n";
  return rc;
}

}  // namespace

// ------------------------------------------------------------ in-process

struct InProcessService::Impl {
  ServiceConfig cfg;
  Service service;
  explicit Impl(const ServiceConfig& c) : cfg(c), service(cfg) {}
};

InProcessService::InProcessService(const ServiceConfig& config, std::shared_ptr<const Attributor> attributor)
    : impl_(std::make_unique<Impl>(config)) {
  impl_->cfg.access_log = false;
  impl_->service.set_attributor(std::move(attributor));
}

InProcessService::~InProcessService() = default;

std::string InProcessService::handle_bytes(std::string_view bytes) {
  // The event loop's steps for one connection, without the socket.
  const ServiceConfig& cfg = impl_->cfg;
  Service& svc = impl_->service;
  RequestParser parser({limits::kRequestHead, limits::kHeaderLine, limits::kHeaderCount, cfg.max_body});
  std::string out;
  size_t charged = 0;
  auto finish = [&](HttpResponse& res, bool keep, bool head_only = false) {
    out += serialize_response(res, head_only, keep);
    return keep;
  };
  while (!bytes.empty()) {
    size_t used = parser.feed(bytes.data(), bytes.size());
    bytes.remove_prefix(used);
    if (parser.state() == RequestParser::State::Error) {
      HttpResponse res;
      res.status = parser.error_status();
      svc.protocol_error(parser.error_message(), parser.error_limit(), res);
      finish(res, false);
      break;
    }
    size_t have = parser.request().body.size();
    if (have > charged) {
      if (!svc.reserve_body(have - charged)) {
        HttpResponse res;
        res.status = 429;
        svc.protocol_error("the service's memory budget is exhausted; retry later", "max_total_bytes", res);
        finish(res, false);
        break;
      }
      charged = have;
    }
    if (parser.state() != RequestParser::State::Complete) {
      if (used == 0) break;
      continue;
    }
    HttpRequest req = parser.take();
    req.remote_addr = "in-process";
    req.body.set_charge(&svc, charged);
    charged = 0;
    HttpResponse res;
    if (!svc.on_head(req, res)) svc.handle(req, res);
    if (!finish(res, req.keep_alive() && !res.close, req.method == "HEAD")) break;
  }
  if (charged) svc.release(charged);
  return out;
}

size_t InProcessService::budget_in_use() const { return impl_->service.budget().used(); }

void request_stop() { g_stop.store(true); }

int run_server(const ServiceConfig& config) {
  signal(SIGPIPE, SIG_IGN);  // a client that hangs up is a failed write, not a dead process
#ifdef __GLIBC__
  // With glibc's malloc (the executable may bring mimalloc instead, on which
  // this is a no-op), few malloc arenas: memory freed by one worker is reused by the next
  // request on another, so RSS follows what requests hold instead of growing
  // with every thread that once held a large request.
  mallopt(M_ARENA_MAX, 2);
#endif
  // In-flight requests finish when SIGTERM/SIGINT arrive (base/stop_signals.h).
  return run_until_stop_signal(g_stop, "culprit serve", [&] {
    Service service(config);
    return service.run();
  });
}

}  // namespace culprit::service
