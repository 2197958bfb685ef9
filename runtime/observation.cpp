#include "runtime/observation.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "runtime/bundle.h"
#include "base/timestamp.h"

namespace culprit {

bool parse_observation(const nlohmann::json& j, Observation& out, std::string& error) {
  if (!j.is_object()) {
    error = "an observation must be a JSON object";
    return false;
  }
  static const std::set<std::string> known = {"host", "source", "ts", "text", "metric", "value", "labels", "file", "line",
                                                "offset"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!known.count(it.key())) {
      error = fmt::format("unknown key '{}'", it.key());
      return false;
    }
  Observation o;
  for (const char* key : {"host", "source"}) {
    if (!j.contains(key) || !j[key].is_string()) {
      error = fmt::format("'{}' must be a string", key);
      return false;
    }
  }
  o.host = j["host"].get<std::string>();
  o.source = j["source"].get<std::string>();
  if (!valid_host_name(o.host)) {
    error = fmt::format("invalid host name '{}'", o.host);
    return false;
  }
  if (!valid_source_name(o.source)) {
    error = fmt::format("invalid source name '{}' (lowercase letters, digits, '_' and '-')", o.source);
    return false;
  }
  if (j.contains("ts") && !j["ts"].is_null()) {
    if (!j["ts"].is_string() || !(o.ts = parse_rfc3339(j["ts"].get<std::string>()))) {
      error = "'ts' must be an RFC 3339 time string";
      return false;
    }
  }
  bool has_text = j.contains("text"), has_metric = j.contains("metric");
  if (has_text == has_metric) {
    error = "an observation has exactly one of 'text' (a log line) or 'metric' (a sample)";
    return false;
  }
  if (has_text) {
    if (!j["text"].is_string()) {
      error = "'text' must be a string";
      return false;
    }
    o.text = j["text"].get<std::string>();
    if (j.contains("value") || j.contains("labels")) {
      error = "'value' and 'labels' belong to metric observations";
      return false;
    }
  } else {
    o.is_metric = true;
    if (!j["metric"].is_string() || j["metric"].get<std::string>().empty()) {
      error = "'metric' must be a non-empty string";
      return false;
    }
    o.metric = j["metric"].get<std::string>();
    if (!j.contains("value") || !j["value"].is_number() || !std::isfinite(j["value"].get<double>())) {
      error = "a metric observation needs a finite numeric 'value'";
      return false;
    }
    o.value = j["value"].get<double>();
    if (!o.ts) {
      error = "a metric observation needs 'ts'";
      return false;
    }
    if (j.contains("labels")) {
      if (!j["labels"].is_object()) {
        error = "'labels' must be an object of strings";
        return false;
      }
      std::string canon;
      for (auto it = j["labels"].begin(); it != j["labels"].end(); ++it) {  // nlohmann sorts keys
        if (!it.value().is_string()) {
          error = fmt::format("label '{}' must be a string", it.key());
          return false;
        }
        canon += (canon.empty() ? "" : ",") + it.key() + "=" + it.value().get<std::string>();
      }
      o.labels = canon;
    }
  }
  if (j.contains("file")) {
    if (!j["file"].is_string()) {
      error = "'file' must be a string";
      return false;
    }
    o.file = j["file"].get<std::string>();
  }
  if (j.contains("line")) {
    if (!j["line"].is_number_integer() || j["line"].get<int64_t>() < 1) {
      error = "'line' must be a positive integer";
      return false;
    }
    o.line = j["line"].get<int64_t>();
  }
  if (j.contains("offset")) {
    if (!j["offset"].is_number_integer() || j["offset"].get<int64_t>() < 0) {
      error = "'offset' must be a non-negative integer";
      return false;
    }
    o.offset = j["offset"].get<int64_t>();
  }
  out = std::move(o);
  return true;
}

}  // namespace culprit
