// Reading request bodies: the JSON documents (a context, a one-shot
// request, an array of observations) and the NDJSON stream of
// observations, into the runtime's types.
//
// Bodies arrive decoded (gzip/deflate undone by RequestBody) and bounded by
// max_body. A JSON body is parsed whole, with the depth and duplicate-key
// checks of runtime/json_input.h; an NDJSON body is streamed line by line
// through the reader every carrier shares (runtime/observation_reader.h),
// so its errors read as they do for a bundle's observations.jsonl.
// Observations go into an ObservationSink, which asks the caller for room
// as each one is costed (service/memory_admission.h): a body is refused the
// moment it no longer fits, not after it has been held.
//
// Ownership: the caller owns every output; nothing here keeps state.
// Thread-safety: call from one thread per request. Errors are BodyError
// values (service/api_error.h), never exceptions.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runtime/diagnose.h"
#include "runtime/model.h"
#include "runtime/observation.h"
#include "service/api_error.h"
#include "service/http.h"

namespace culprit::service {

enum class BodyKind { None, Json, Ndjson, Other };

// The body's media type, from Content-Type.
BodyKind body_kind(const HttpRequest& req);

// The content coding of a body: "" (none), "gzip" or "deflate"; false for
// anything else (br, compress, stacked codings).
bool content_coding(const HttpRequest& req, std::string& coding);

// Parses a JSON document; `where` prefixes a syntax error's message ("the body ").
bool parse_json_text(const std::string& text, nlohmann::json& out, BodyError& err, const std::string& where);

// A workload context; `text` receives it serialized (what a session echoes).
bool parse_context(const nlohmann::json& j, WorkloadContext& ctx, std::string& text, BodyError& err,
                   const std::string& pointer);

// The `collectors` of a one-shot request: the caller's collector reports,
// which the verdict carries in coverage.collectors.
bool parse_collectors(const nlohmann::json& j, std::vector<CollectorReport>& out, BodyError& err,
                      const std::string& pointer);

// The `unread` of a one-shot request (runtime/unread_json.h): what the
// caller's carrier found but could not read, listed in the verdict's coverage.
bool parse_unread(const nlohmann::json& j, EvidenceSet& out, BodyError& err, const std::string& pointer);

// Collects observations with their cost, checking a limit as they come in.
// `room(total_cost)` returns 0 while they fit, else the status to answer.
class ObservationSink {
 public:
  explicit ObservationSink(std::function<int(size_t)> room) : room_(std::move(room)) {}
  bool add(const nlohmann::json& j, BodyError& err, nlohmann::ordered_json where);
  bool add(Observation o, BodyError& err, nlohmann::ordered_json where);
  std::vector<Observation> obs;
  size_t cost() const { return cost_; }

 private:
  std::function<int(size_t)> room_;
  size_t cost_ = 0;
};

// Reads a whole body (decoded, bounded by `max_body`) into `body`.
bool read_body(HttpRequest& req, size_t max_body, std::string& body, BodyError& err);

// Streams observations (JSON array or NDJSON) into `sink`. With
// `ndjson_context`, the first NDJSON line is the context (one-shot).
bool read_observations(HttpRequest& req, size_t max_body, ObservationSink& sink, nlohmann::json* ndjson_context,
                       BodyError& err);

}  // namespace culprit::service
