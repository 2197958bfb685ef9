// Walking a YAML document an operator wrote, one key at a time, with every
// mistake reported at its `file:line:col` and reading continued, so that one
// run names every problem of the file.
//
// The blueprint's configuration (config.cpp and each connector's reader) and
// the recovery policy (recovery_policy.cpp) read their documents through this
// class, so an unknown key, a key given twice, a merge key, a bad duration or
// a misspelt choice gets the same message and the same "did you mean" in
// both; each file family keeps its own diagnostic codes (YamlCodes).
//
//   YamlReader r(file, diags, kConfigCodes, dir_of_file);
//   r.map(root["store"], "store", {"url", "password_file"}, [&](const std::string& k, const YAML::Node& v) {
//     if (k == "url") r.string(v, k, cfg.url);
//     else if (r.string(v, k, cfg.password_file)) cfg.password_file = r.path(cfg.password_file);
//   });
//
// Every typed accessor (string, duration, integer, ...) reports its own error
// and returns false, leaving `out` unchanged unless said otherwise; callers
// only branch on the result when a later check depends on the value.
//
// The document comes from load_yaml_document (yaml_document.h), which has
// already refused anchors, aliases, tabs and excessive depth.
// Thread-safety: one reader per document and thread. No exceptions (yaml-cpp
// is asked only questions that cannot throw on a loaded tree).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/diagnostics.h"

namespace culprit::blueprint {

// The codes a family of files reports under.
struct YamlCodes {
  const char* shape;         // a mapping or list where another was expected; bad keys; merge keys
  const char* unknown_key;   // a key the mapping does not have
  const char* repeated_key;  // a key given twice
  const char* single_value;  // a list or mapping where one value is expected
  const char* bad_choice;    // a value not among the allowed words, or empty
  const char* bad_quantity;  // a malformed or out-of-range number, duration, time or size
};

class YamlReader {
 public:
  // `dir` resolves relative paths (path()); "" leaves them as written.
  YamlReader(std::shared_ptr<const SourceFile> file, Diagnostics& diags, YamlCodes codes, std::string dir = {});

  // The node's place in the file; `width` columns wide (0: the scalar's).
  SourceRange at(const YAML::Node& n, size_t width = 0) const;
  // "policy.yaml:4": the node's file name and line, for messages that are
  // not diagnostics (a rule quoting where it was written).
  std::string where(const YAML::Node& n) const;
  void error(const char* code, const YAML::Node& n, std::string message, std::string help = {});
  void warning(const char* code, const YAML::Node& n, std::string message, std::string help = {});
  const YamlCodes& codes() const { return codes_; }

  // Calls `handle(key, value)` for each key of the mapping `n`, in document
  // order. `what` names the mapping in messages ("discovery.slurm", "a
  // rule"). A null node (the key was given with no value) is an empty
  // mapping; another non-mapping is an error. Non-scalar keys, merge keys
  // (`<<`), keys not in `known` (with the nearest known key, or the list)
  // and repeated keys are errors and are not handed on.
  void map(const YAML::Node& n, const std::string& what, const std::vector<std::string>& known,
           const std::function<void(const std::string&, const YAML::Node&)>& handle);

  bool scalar(const YAML::Node& n, const std::string& key, std::string& out);
  // A scalar; an empty one is an error unless `allow_empty`.
  bool string(const YAML::Node& n, const std::string& key, std::string& out, bool allow_empty = false);
  // One of `values` (with "did you mean" for a near miss).
  bool oneof(const YAML::Node& n, const std::string& key, const std::vector<std::string>& values, std::string& out);
  // A duration (base/timestamp.h parse_bounded_duration) of at least `min`.
  bool duration(const YAML::Node& n, const std::string& key, int64_t& out, int64_t min = 0);
  // An RFC 3339 time with a zone, in ns since the epoch.
  bool time(const YAML::Node& n, const std::string& key, std::optional<int64_t>& out);
  bool integer(const YAML::Node& n, const std::string& key, int64_t& out, int64_t lo, int64_t hi);
  // true/false (yes/no, on/off accepted).
  bool boolean(const YAML::Node& n, const std::string& key, bool& out);
  // A list of non-empty strings; a single string is a list of one. `out` is
  // cleared first.
  bool strings(const YAML::Node& n, const std::string& key, std::vector<std::string>& out);
  // A byte size (base/byte_size.h: 256MiB, 64M, 10MB, 0 ...).
  bool byte_size(const YAML::Node& n, const std::string& key, uint64_t& out);

  // `p` relative to the document's directory (absolute and "" unchanged).
  std::string path(const std::string& p) const;
  // An error on `map_node` for each of `keys` it lacks (`missing` code).
  void require(const YAML::Node& map_node, const std::string& what, std::initializer_list<const char*> keys,
               const char* missing_code);

 private:
  std::shared_ptr<const SourceFile> file_;
  Diagnostics& diags_;
  YamlCodes codes_;
  std::string dir_;
};

}  // namespace culprit::blueprint
