// The reader every part of the blueprint's configuration goes through: the
// top-level sections (config.cpp) and each connector's own section
// (blueprint/connector.h). It is the shared YAML walk (yaml_reader.h) with
// the configuration's diagnostic codes (kConfigCodes: B0102 unknown key,
// B0103 shape, B0104 bad value, B0105 missing key, B0108 repeated key),
// mappings named by their key path in messages ("unknown key 'x' in
// 'discovery.slurm'"), node lists bounded over the whole file, and the
// pieces several connectors share: terminal states, source names, HTTP
// credentials and TLS files.
//
// Ownership: one reader per configuration file, alive while it is read; the
// structs below are plain values. Errors are diagnostics (every problem
// reported, reading continues); nothing throws. Thread-safety: one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "blueprint/connector.h"
#include "blueprint/yaml_reader.h"

namespace culprit::blueprint {

// The codes of the configuration's diagnostics (docs/blueprint-config.md).
inline constexpr YamlCodes kConfigCodes = {"B0103", "B0102", "B0108", "B0103", "B0104", "B0104"};

class ConfigReader : public YamlReader {
 public:
  ConfigReader(std::shared_ptr<const SourceFile> file, Diagnostics& d, std::string dir)
      : YamlReader(std::move(file), d, kConfigCodes, std::move(dir)) {}

  // The mapping `where` ("discovery.slurm"), quoted in messages.
  void map(const YAML::Node& n, const std::string& where, const std::vector<std::string>& known,
           const std::function<void(const std::string&, const YAML::Node&)>& handle) {
    YamlReader::map(n, "'" + where + "'", known, handle);
  }
  // B0105 for each of `keys` the mapping lacks.
  void require(const YAML::Node& map_node, const std::string& where, std::initializer_list<const char*> keys) {
    YamlReader::require(map_node, "'" + where + "'", keys, "B0105");
  }
  // A list of hostlists ("n[01-04]"), expanded, sorted, unique, each name
  // checked (blueprint/node_names.h); bounded per workload and per file.
  bool nodes(const YAML::Node& n, const std::string& key, std::vector<std::string>& out);

 private:
  size_t total_nodes_ = 0;  // node names expanded so far (limits::kConfigNodes)
};

// The terminal states a `states` key may name (upper case).
const std::vector<std::string>& terminal_states();
// Upper-cases and checks a list of terminal states into `out` (sorted).
void read_states(ConfigReader& r, const YAML::Node& v, std::vector<std::string>& out);
// A log source name: [a-z0-9_-]+.
bool source_name_ok(const std::string& s);

// The credentials keys of an HTTP connector (to add to its known keys), and
// their reader: true when `k` was one of them.
const std::vector<std::string>& auth_keys();
bool read_auth(ConfigReader& r, const std::string& k, const YAML::Node& v, HttpAuthConfig& a);
// A `tls` mapping named `where` ("collectors.loki.tls").
void read_tls(ConfigReader& r, const YAML::Node& n, const std::string& where, TlsFilesConfig& t);
// An http:// or https:// URL, trailing slashes removed.
bool http_url(ConfigReader& r, const YAML::Node& v, const std::string& key, std::string& out);

}  // namespace culprit::blueprint
