// The service's error answers: {"error": {"code", "message", "details"}}
// (docs/service.md, "Errors"), and the limits they name.
//
// Every route answers its refusals through send_error(), so that clients
// read one shape whatever refused them: the parser, a limit, a schema check
// or the engine. A BodyError is such an answer not yet sent, as the body
// readers (service/request_body.h) return it to the route that decides.
//
// Ownership: values only. Thread-safety: free functions without state. No
// exceptions: a message that quotes invalid UTF-8 from the client is
// repaired, never a reason to fail the answer.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "service/http.h"

namespace culprit::service {

// An error answer: `status`, and the JSON error object as the body.
void send_error(HttpResponse& res, int status, const std::string& code, const std::string& message,
                nlohmann::ordered_json details = nlohmann::ordered_json::object());
// A JSON document as the body, pretty-printed (two spaces).
void send_json(HttpResponse& res, int status, const nlohmann::ordered_json& j);

// The value of a limit of base/limits.h by name (0 if unknown).
uint64_t limit_value(std::string_view name);
// The limit a runtime message is about ("limit NAME exceeded: ..."), or "".
std::string limit_in_message(const std::string& message);

// What went wrong with a request, as an HTTP answer.
struct BodyError {
  int status = 400;
  std::string code, message;
  nlohmann::ordered_json details = nlohmann::ordered_json::object();
};

// A limit error: 413 payload_too_large for sizes, 400 limit_exceeded for
// structure; details name the limit, its value and where.
BodyError limit_error(const std::string& name, const std::string& message, nlohmann::ordered_json where);

inline void send_error(HttpResponse& res, const BodyError& e) { send_error(res, e.status, e.code, e.message, e.details); }

}  // namespace culprit::service
