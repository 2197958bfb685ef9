#include "service/request_body.h"

#include <fmt/format.h>

#include "base/limits.h"
#include "runtime/collector_report_json.h"
#include "runtime/json_input.h"
#include "runtime/observation_reader.h"
#include "runtime/unread_json.h"
#include "service/session_store.h"

namespace culprit::service {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

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

bool parse_unread(const json& j, EvidenceSet& out, BodyError& err, const std::string& pointer) {
  std::string why;
  if (unread_from_json(j, out, why)) return true;
  std::string lim = limit_in_message(why);
  if (!lim.empty()) err = limit_error(lim, why, {{"pointer", pointer}});
  else err = {400, "schema_violation", "invalid unread: " + why, {{"pointer", pointer}}};
  return false;
}

bool ObservationSink::add(const json& j, BodyError& err, ojson where) {
  Observation o;
  std::string why;
  if (!parse_observation(j, o, why)) {
    err = {400, "schema_violation", "invalid observation: " + why, std::move(where)};
    return false;
  }
  return add(std::move(o), err, std::move(where));
}

bool ObservationSink::add(Observation o, BodyError& err, ojson where) {
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

bool read_body(HttpRequest& req, size_t max_body, std::string& body, BodyError& err) {
  auto st = req.body.read(
      [&](const char* d, size_t n) {
        body.append(d, n);
        return true;
      },
      max_body);
  if (st == RequestBody::ReadStatus::TooLarge) {
    err = limit_error("max_body", fmt::format("the request body exceeds {} bytes", max_body), ojson::object());
    err.details["limit"] = max_body;
    return false;
  }
  if (st == RequestBody::ReadStatus::BadEncoding) {
    err = {400, "bad_request", "the request body is not valid gzip/deflate data"};
    return false;
  }
  return true;
}

bool read_observations(HttpRequest& req, size_t max_body, ObservationSink& sink, json* ndjson_context, BodyError& err) {
  BodyKind kind = body_kind(req);
  if (kind == BodyKind::Ndjson) {
    // The reader every carrier shares (runtime/observation_reader.h): plain
    // log observations skip the JSON tree, and errors read the same as for
    // a bundle's observations.jsonl.
    NdjsonObservationReader::Options ropt;
    ropt.first_line_is_context = ndjson_context != nullptr;
    NdjsonObservationReader ndjson(
        [&](Observation&& o, int64_t line) { return sink.add(std::move(o), err, {{"line", line}}); }, ropt);
    auto st = req.body.read([&](const char* d, size_t n) { return ndjson.feed(d, n); }, max_body);
    bool ok = st == RequestBody::ReadStatus::Ok && ndjson.finish();
    if (!ok) {
      const auto& e = ndjson.error();
      using K = ObservationReadError::Kind;
      if (st == RequestBody::ReadStatus::TooLarge) {
        err = limit_error("max_body", fmt::format("the request body exceeds {} bytes", max_body), ojson::object());
        err.details["limit"] = max_body;
      } else if (st == RequestBody::ReadStatus::BadEncoding) {
        err = {400, "bad_request", "the request body is not valid gzip/deflate data"};
      } else if (e.kind == K::InvalidJson) {
        // Several documents on one line is what `curl -d @file` makes of
        // NDJSON: it strips the newlines.
        std::string hint = e.message.find("expected end of input") != std::string::npos
                               ? " (one JSON document per line: were the newlines stripped? with curl, send the file "
                                 "with --data-binary @FILE, not -d)"
                               : "";
        err = {400, "invalid_json", fmt::format("line {} is {}{}", e.line, e.message, hint), {{"line", e.line}, {"byte", e.byte}}};
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
  if (!read_body(req, max_body, body, err)) return false;
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

}  // namespace culprit::service
