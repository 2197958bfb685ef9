#include "runtime/unread_json.h"

#include <fmt/format.h>

#include "base/limits.h"

namespace culprit {

nlohmann::ordered_json unread_to_json(const EvidenceSet& e) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!e.ignored_files.empty()) j["ignored_files"] = e.ignored_files;
  if (!e.refused_files.empty()) {
    auto& arr = j["refused_files"] = nlohmann::ordered_json::array();
    for (const auto& f : e.refused_files) arr.push_back({{"path", f.path}, {"reason", f.reason}});
  }
  if (!e.warnings.empty()) j["warnings"] = e.warnings;
  if (j.empty()) return nullptr;
  return j;
}

namespace {

// A string of `unread`, within its bound.
bool bounded_string(const nlohmann::json& v, const std::string& where, std::string& out, std::string& error) {
  if (!v.is_string()) {
    error = fmt::format("'{}' must be a string", where);
    return false;
  }
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > limits::kUnreadEntryBytes) {
    error = limits::exceeded("unread_entry_bytes", limits::kUnreadEntryBytes, fmt::format("a string of {} bytes", s.size()),
                             where);
    return false;
  }
  out = s;
  return true;
}

}  // namespace

bool unread_from_json(const nlohmann::json& j, EvidenceSet& e, std::string& error) {
  if (!j.is_object()) {
    error = "'unread' must be an object {ignored_files, refused_files, warnings}";
    return false;
  }
  size_t entries = 0;
  auto count = [&](size_t n) {
    entries += n;
    if (entries <= limits::kUnreadEntries) return true;
    error = limits::exceeded("unread_entries", limits::kUnreadEntries, fmt::format("{} entries or more", entries));
    return false;
  };
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const auto& v = it.value();
    if (k != "ignored_files" && k != "refused_files" && k != "warnings") {
      error = fmt::format("unknown key '{}' in 'unread'", k.substr(0, 64));
      return false;
    }
    if (!v.is_array()) {
      error = fmt::format("'{}' must be an array", k);
      return false;
    }
    if (!count(v.size())) return false;
    for (size_t i = 0; i < v.size(); ++i) {
      std::string where = fmt::format("{}/{}", k, i);
      if (k == "refused_files") {
        const auto& x = v[i];
        if (!x.is_object() || x.size() != 2 || !x.contains("path") || !x.contains("reason")) {
          error = fmt::format("'{}' must be an object {{path, reason}}", where);
          return false;
        }
        RefusedFile f;
        if (!bounded_string(x["path"], where + "/path", f.path, error) ||
            !bounded_string(x["reason"], where + "/reason", f.reason, error))
          return false;
        e.refused_files.push_back(std::move(f));
      } else {
        std::string s;
        if (!bounded_string(v[i], where, s, error)) return false;
        (k == "warnings" ? e.warnings : e.ignored_files).push_back(std::move(s));
      }
    }
  }
  return true;
}

}  // namespace culprit
