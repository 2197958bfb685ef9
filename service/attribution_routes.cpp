// POST /v1/attributions (the evidence of one workload in one request,
// JSON or NDJSON), and the engine run every attribution ends in, one-shot
// or a session's. Routes are members of Service (service/service_handler.h)
// because they share its budget, catalog and metrics.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/limits.h"
#include "base/suggest.h"
#include "base/text_util.h"
#include "runtime/verdict_json.h"
#include "runtime/verdict_text.h"
#include "service/api_error.h"
#include "service/memory_admission.h"
#include "service/request_body.h"
#include "service/service_handler.h"

namespace culprit::service {

namespace {

// An unknown top-level key of a one-shot JSON body. A context's own key
// ('workload_id', 'end', ...) means the context was posted bare, the first
// mistake of a new client: say what the body looks like.
std::string unknown_body_key(const std::string& key) {
  static const std::vector<std::string> context_keys = {"workload_id", "scheduler", "start", "end", "nodes", "terminal"};
  std::string shown = truncate_utf8(sanitize_utf8(key), 64);
  if (std::find(context_keys.begin(), context_keys.end(), key) != context_keys.end())
    return fmt::format("unknown key '{}': this looks like a bare workload context; the body is "
                       "{{\"context\": {{...}}, \"observations\": [...]}}, e.g. {{\"context\": {{\"workload_id\": \"42\", "
                       "\"nodes\": [\"node-01\"]}}, \"observations\": [{{\"host\": \"node-01\", \"source\": \"app\", "
                       "\"text\": \"...\"}}]}} (or create a session with POST /v1/workloads)",
                       shown);
  std::string hint = did_you_mean(key, {"context", "observations", "collectors", "unread"});
  return fmt::format("unknown key '{}'{}{} (the keys are context, observations, collectors, unread)", shown,
                     hint.empty() ? "" : ": ", hint);
}

}  // namespace

using json = nlohmann::json;

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
    if (!read_observations(req, cfg_.max_body, sink, &context, err)) return send_error(res, err);
    // The first line is the bare context, or {"context": ..., "collectors":
    // [...], "unread": {...}} (the last two optional).
    if (context.is_object() && context.contains("context") &&
        context.size() == 1u + context.contains("collectors") + context.contains("unread")) {
      if (context.contains("collectors") && !parse_collectors(context["collectors"], carried.collectors, err, "line 1"))
        return send_error(res, err);
      if (context.contains("unread") && !parse_unread(context["unread"], carried, err, "line 1"))
        return send_error(res, err);
      json inner = std::move(context["context"]);
      context = std::move(inner);
    }
    if (!parse_context(context, ctx, context_text, err, "line 1")) return send_error(res, err);
  } else {
    std::string body;
    if (!read_body(req, cfg_.max_body, body, err)) return send_error(res, err);
    json j;
    if (!parse_json_text(body, j, err, "the body ")) return send_error(res, err);
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
        return send_error(res, 400, "schema_violation", unknown_body_key(it.key()), {{"pointer", "/" + it.key()}});
    if (!j.contains("context"))
      return send_error(res, 400, "schema_violation", "missing 'context'", {{"pointer", "/context"}});
    if (!parse_context(j["context"], ctx, context_text, err, "/context")) return send_error(res, err);
    if (j.contains("collectors") && !parse_collectors(j["collectors"], carried.collectors, err, "/collectors"))
      return send_error(res, err);
    if (j.contains("unread") && !parse_unread(j["unread"], carried, err, "/unread")) return send_error(res, err);
    context_charge = context_cost(ctx, context_text.size()) + carried_cost(carried);
    if (j.contains("observations")) {
      const auto& arr = j["observations"];
      if (!arr.is_array())
        return send_error(res, 400, "schema_violation", "'observations' must be an array", {{"pointer", "/observations"}});
      for (size_t i = 0; i < arr.size(); ++i)
        if (!sink.add(arr[i], err, {{"pointer", fmt::format("/observations/{}", i)}})) return send_error(res, err);
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

}  // namespace culprit::service
