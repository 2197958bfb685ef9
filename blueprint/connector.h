// Connectors: the discoveries and collectors a blueprint configuration
// names, one section each ("discovery.slurm", "collectors.loki").
//
// A connector keeps everything of its own in its own file, next to its
// implementation: its configuration struct (derived from ConnectorConfig),
// the reader of its YAML section, which validates as it reads and reports
// through the ConfigReader (blueprint/config_reader.h), and its factory. The
// registry (connectors.cpp) lists each connector once; load_config() walks
// it to read the `discovery:` and `collectors:` sections, and the runner
// walks what was configured to build the objects. Adding a connector is one
// file and one registry line (docs/architecture.md, "Adding a connector").
//
// Ownership: a configured connector's ConnectorConfig is shared, immutable
// once read (BlueprintConfig copies share it); a factory returns objects the
// caller owns. Errors: readers report diagnostics and never throw; a factory
// returns false with `error` (a secret it could not read). Thread-safety:
// the registry is immutable; readers and factories run on the caller's thread.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "blueprint/collect/collector.h"
#include "blueprint/discovery/discovery.h"

namespace YAML {
class Node;
}

namespace culprit::blueprint {

class ConfigReader;
class KubeClient;

// The base of every connector's configuration struct.
struct ConnectorConfig {
  ConnectorConfig() = default;
  ConnectorConfig(const ConnectorConfig&) = default;
  ConnectorConfig& operator=(const ConnectorConfig&) = default;
  virtual ~ConnectorConfig() = default;
  // What `culprit run --check` says of it after the section's name, e.g.
  // "2 bundles, 3 workloads" ("" for nothing). Has no side effect.
  virtual std::string summary() const { return ""; }
};

// TLS material for an HTTPS connector, as files.
struct HttpClientConfig;

struct TlsFilesConfig {
  std::string ca_file, cert_file, key_file, server_name;
  bool insecure_skip_verify = false;
};

// The credentials of an HTTP connector (never the secrets themselves).
struct HttpAuthConfig {
  std::string token_file, token_env;         // bearer
  std::string username, password_file, password_env;  // basic
};

enum class ConnectorKind { discovery, collector };

// What a factory gets besides its own configuration.
struct ConnectorEnv {
  std::string cluster;                     // the configuration's `cluster`
  std::shared_ptr<const KubeClient> kube;  // set when the connector needs_kubernetes
};

// What a factory built: a discovery or a collector (or nothing, e.g. a
// `collectors.files` with no source).
struct ConnectorParts {
  std::unique_ptr<Discovery> discovery;
  std::unique_ptr<Collector> collector;
};

struct Connector {
  const char* section;    // "collectors.loki": the top-level key ("discovery", "collectors"), a dot, its own key
  ConnectorKind kind;
  bool needs_kubernetes;  // uses the top-level `kubernetes` connection
  // Reads and validates the section's value; never null (a section with
  // errors yields what could be read, and the diagnostics stop the run).
  std::shared_ptr<ConnectorConfig> (*read)(ConfigReader& reader, const YAML::Node& node);
  // Builds the connector from what `read` returned.
  bool (*make)(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string& error);
};

// Every connector, discoveries first, in the order the runner builds them.
std::span<const Connector> connectors();

// The bearer token and basic-auth password an HTTP connector's `auth` names
// (`*_file` / `*_env`, base/operator_file.h read_secret); each "" when not
// configured. False with "SECTION token: why" (or "password").
bool read_http_credentials(const HttpAuthConfig& auth, const char* section, std::string& token, std::string& password,
                           std::string& error);

// Fills the credentials and TLS files of `client` from an HTTP connector's
// configuration and the secrets read_http_credentials returned.
void set_http_access(const HttpAuthConfig& auth, const TlsFilesConfig& tls, const std::string& token,
                     const std::string& password, HttpClientConfig& client);

}  // namespace culprit::blueprint
