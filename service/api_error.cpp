#include "service/api_error.h"

#include "base/limits.h"

namespace culprit::service {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

void send_error(HttpResponse& res, int status, const std::string& code, const std::string& message,
                ojson details) {
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

uint64_t limit_value(std::string_view name) {
  for (const auto& e : limits::all())
    if (e.name == name) return e.value;
  return 0;
}

std::string limit_in_message(const std::string& message) {
  size_t at = message.find("limit ");
  if (at == std::string::npos) return {};
  size_t end = message.find(" exceeded", at + 6);
  if (end == std::string::npos) return {};
  std::string name = message.substr(at + 6, end - at - 6);
  return limit_value(name) ? name : std::string();
}

BodyError limit_error(const std::string& name, const std::string& message, ojson where) {
  bool size = name == "max_body" || name == "observation_line" || name == "context_bytes" || name == "max_session_bytes";
  BodyError e{size ? 413 : 400, size ? "payload_too_large" : "limit_exceeded", message, std::move(where)};
  e.details["name"] = name;
  e.details["limit"] = limit_value(name);
  return e;
}

}  // namespace culprit::service
