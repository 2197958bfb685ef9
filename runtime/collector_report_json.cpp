#include "runtime/collector_report_json.h"

#include <fmt/format.h>

#include <algorithm>

namespace culprit {

nlohmann::ordered_json collector_report_to_json(const CollectorReport& c) {
  nlohmann::ordered_json r;
  r["collector"] = c.collector;
  r["source"] = c.source;
  r["status"] = c.status;
  r["reason"] = c.reason;
  r["nodes_expected"] = c.nodes_expected;
  r["nodes_covered"] = c.nodes_covered;
  r["observations"] = c.observations;
  r["bytes"] = c.bytes;
  r["errors"] = c.errors;
  return r;
}

bool collector_report_from_json(const nlohmann::json& j, CollectorReport& out, std::string& error) {
  out = CollectorReport{};
  if (!j.is_object()) {
    error = "a collector report must be an object";
    return false;
  }
  auto strings = [&](const nlohmann::json& v, const std::string& key, std::vector<std::string>& dst) {
    if (!v.is_array()) {
      error = fmt::format("'{}' must be an array of strings", key);
      return false;
    }
    for (const auto& s : v) {
      if (!s.is_string()) {
        error = fmt::format("'{}' must be an array of strings", key);
        return false;
      }
      dst.push_back(s.get<std::string>());
    }
    return true;
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const auto& v = it.value();
    if (k == "collector" || k == "source" || k == "status" || k == "reason") {
      if (!v.is_string()) {
        error = fmt::format("'{}' must be a string", k);
        return false;
      }
      std::string s = v.get<std::string>();
      if (k == "collector") out.collector = s;
      else if (k == "source") out.source = s;
      else if (k == "status") out.status = s;
      else out.reason = s;
    } else if (k == "nodes_expected" || k == "nodes_covered" || k == "errors") {
      if (!strings(v, k, k == "nodes_expected" ? out.nodes_expected : k == "nodes_covered" ? out.nodes_covered : out.errors))
        return false;
    } else if (k == "observations" || k == "bytes") {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) {
        error = fmt::format("'{}' must be a non-negative integer", k);
        return false;
      }
      (k == "observations" ? out.observations : out.bytes) = v.get<int64_t>();
    } else {
      error = fmt::format("unknown key '{}'", k);
      return false;
    }
  }
  if (out.collector.empty()) {
    error = "'collector' is required";
    return false;
  }
  static const char* kStatus[] = {"ok", "partial", "empty", "failed"};
  if (std::find(std::begin(kStatus), std::end(kStatus), out.status) == std::end(kStatus)) {
    error = "'status' must be ok, partial, empty or failed";
    return false;
  }
  return true;
}

}  // namespace culprit
