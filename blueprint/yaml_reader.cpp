#include "blueprint/yaml_reader.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "base/byte_size.h"
#include "base/suggest.h"
#include "base/timestamp.h"

namespace culprit::blueprint {

namespace fs = std::filesystem;

YamlReader::YamlReader(std::shared_ptr<const SourceFile> file, Diagnostics& diags, YamlCodes codes, std::string dir)
    : file_(std::move(file)), diags_(diags), codes_(codes), dir_(std::move(dir)) {}

SourceRange YamlReader::at(const YAML::Node& n, size_t width) const {
  SourceRange r;
  r.file = file_.get();
  YAML::Mark m = n.Mark();
  if (m.is_null()) return r;
  r.line = r.end_line = static_cast<uint32_t>(m.line + 1);
  r.col = static_cast<uint32_t>(m.column + 1);
  r.end_col = r.col + static_cast<uint32_t>(width ? width : (n.IsScalar() ? std::max<size_t>(1, n.Scalar().size()) : 1));
  return r;
}

std::string YamlReader::where(const YAML::Node& n) const {
  return fmt::format("{}:{}", fs::path(file_->path).filename().string(), n.Mark().line + 1);
}

void YamlReader::error(const char* code, const YAML::Node& n, std::string message, std::string help) {
  diags_.error(code, at(n), std::move(message), std::move(help));
}

void YamlReader::warning(const char* code, const YAML::Node& n, std::string message, std::string help) {
  diags_.warning(code, at(n), std::move(message), std::move(help));
}

void YamlReader::map(const YAML::Node& n, const std::string& what, const std::vector<std::string>& known,
                     const std::function<void(const std::string&, const YAML::Node&)>& handle) {
  if (n.IsNull()) return;
  if (!n.IsMap()) {
    error(codes_.shape, n, fmt::format("{} must be a mapping of keys to values", what));
    return;
  }
  std::map<std::string, int> seen;  // key -> the line it was first given on
  for (auto it = n.begin(); it != n.end(); ++it) {
    // Copies: yaml-cpp's iterator hands out a temporary pair, so a reference
    // to its `first` dangles after this statement (ASan's
    // stack-use-after-scope). Nodes are reference-counted handles.
    const YAML::Node key = it->first;
    const YAML::Node value = it->second;
    if (!key.IsScalar()) {
      error(codes_.shape, key, fmt::format("the keys of {} must be plain names", what));
      continue;
    }
    const std::string& k = key.Scalar();
    if (k == "<<") {
      // yaml-cpp does not merge; reading `<<` as a key would drop the
      // merged values in silence.
      error(codes_.shape, key, fmt::format("merge keys ('<<') are not supported in {}: write the keys out", what));
      continue;
    }
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      std::string hint = did_you_mean(k, known);
      error(codes_.unknown_key, key, fmt::format("unknown key '{}' in {}", k, what),
            hint.empty() ? fmt::format("the keys of {} are {}", what, fmt::join(known, ", ")) : hint);
      continue;
    }
    if (auto first = seen.find(k); first != seen.end()) {
      error(codes_.repeated_key, key, fmt::format("'{}' is given twice in {} (first on line {})", k, what, first->second));
      continue;
    }
    seen[k] = key.Mark().line + 1;
    handle(k, value);
  }
}

bool YamlReader::scalar(const YAML::Node& n, const std::string& key, std::string& out) {
  if (!n.IsScalar()) {
    error(codes_.single_value, n, fmt::format("'{}' must be a single value", key));
    return false;
  }
  out = n.Scalar();
  return true;
}

bool YamlReader::string(const YAML::Node& n, const std::string& key, std::string& out, bool allow_empty) {
  std::string s;
  if (!scalar(n, key, s)) return false;
  if (s.empty() && !allow_empty) {
    error(codes_.bad_choice, n, fmt::format("'{}' must not be empty", key));
    return false;
  }
  out = std::move(s);
  return true;
}

bool YamlReader::oneof(const YAML::Node& n, const std::string& key, const std::vector<std::string>& values,
                       std::string& out) {
  std::string s;
  if (!scalar(n, key, s)) return false;
  if (std::find(values.begin(), values.end(), s) == values.end()) {
    std::string hint = did_you_mean(s, values);
    error(codes_.bad_choice, n, fmt::format("'{}' is not a valid value for '{}'", s, key),
          hint.empty() ? fmt::format("one of {}", fmt::join(values, ", ")) : hint);
    return false;
  }
  out = std::move(s);
  return true;
}

bool YamlReader::duration(const YAML::Node& n, const std::string& key, int64_t& out, int64_t min) {
  std::string s;
  if (!scalar(n, key, s)) return false;
  int64_t d = 0;
  // Bounded: an instant plus or minus any duration of a document stays
  // inside int64 nanoseconds.
  DurationCheck c = parse_bounded_duration(s, d);
  if (c == DurationCheck::range) {
    error(codes_.bad_quantity, n, duration_error(c, key));
    return false;
  }
  if (c != DurationCheck::ok || d < min) {
    error(codes_.bad_quantity, n,
          fmt::format("'{}' must be a duration such as 90s, 10m or 24h{}", key,
                      min > 0 ? fmt::format(" (at least {})", format_duration(min)) : ""));
    return false;
  }
  out = d;
  return true;
}

bool YamlReader::time(const YAML::Node& n, const std::string& key, std::optional<int64_t>& out) {
  std::string s;
  if (!scalar(n, key, s)) return false;
  auto t = parse_rfc3339(s);
  if (!t) {
    std::string hint = rfc3339_hint(s);
    error(codes_.bad_quantity, n,
          hint.empty() ? fmt::format("'{}' must be an RFC 3339 time with a zone, such as 2026-03-14T01:30:00Z", key)
                       : fmt::format("'{}' is not an RFC 3339 time: {}", key, hint));
    return false;
  }
  out = *t;
  return true;
}

bool YamlReader::integer(const YAML::Node& n, const std::string& key, int64_t& out, int64_t lo, int64_t hi) {
  std::string s;
  if (!scalar(n, key, s)) return false;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || errno || v < lo || v > hi) {
    error(codes_.bad_quantity, n, fmt::format("'{}' must be an integer from {} to {}", key, lo, hi));
    return false;
  }
  out = v;
  return true;
}

bool YamlReader::boolean(const YAML::Node& n, const std::string& key, bool& out) {
  std::string s;
  if (!scalar(n, key, s)) return false;
  if (s == "true" || s == "yes" || s == "on") out = true;
  else if (s == "false" || s == "no" || s == "off") out = false;
  else {
    error(codes_.bad_choice, n, fmt::format("'{}' must be true or false", key));
    return false;
  }
  return true;
}

bool YamlReader::strings(const YAML::Node& n, const std::string& key, std::vector<std::string>& out) {
  out.clear();
  if (n.IsScalar()) {
    out.push_back(n.Scalar());
    return true;
  }
  if (!n.IsSequence()) {
    error(codes_.shape, n, fmt::format("'{}' must be a value or a list of values", key));
    return false;
  }
  bool ok = true;
  for (const auto& item : n) {
    std::string s;
    if (string(item, key, s)) out.push_back(s);
    else ok = false;
  }
  return ok;
}

bool YamlReader::byte_size(const YAML::Node& n, const std::string& key, uint64_t& out) {
  std::string s;
  if (!scalar(n, key, s)) return false;
  auto v = parse_byte_size(s);
  if (!v) {
    error(codes_.bad_quantity, n, fmt::format("'{}' must be a size such as 256MiB, 64M, 1GiB or 0", key));
    return false;
  }
  out = *v;
  return true;
}

std::string YamlReader::path(const std::string& p) const {
  if (p.empty() || dir_.empty() || fs::path(p).is_absolute()) return p;
  return (fs::path(dir_) / p).lexically_normal().string();
}

void YamlReader::require(const YAML::Node& map_node, const std::string& what, std::initializer_list<const char*> keys,
                         const char* missing_code) {
  if (!map_node.IsMap()) return;
  for (const char* k : keys)
    if (!map_node[k]) error(missing_code, map_node, fmt::format("{} needs the key '{}'", what, k));
}

}  // namespace culprit::blueprint
