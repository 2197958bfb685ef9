// The blueprint's configuration: one YAML file (docs/blueprint-config.md).
//
// load_config() reads and validates the whole file before anything runs.
// Every problem is a diagnostic with a stable code (B01xx), `file:line:col`,
// the source line and a caret; an unknown key also names the nearest known
// one ("unknown key 'lokii' (did you mean 'loki'?)"). Relative paths are
// resolved against the directory of the file. Secrets never live in the
// file: tokens and passwords are named by `*_file` / `*_env` keys and read
// when used, and a store URL that carries a password is refused.
//
// config.cpp reads the top-level and shared sections (cluster, kubernetes,
// attribution, store, output, watch) and hands each `discovery.*` and
// `collectors.*` section to its connector's reader (blueprint/connector.h).
// yaml-cpp is fenced in the configuration's readers: no YAML type leaves
// them through this header, and no exception leaves load_config().
// Thread-safety: the result is a value; copies share the connectors' configurations, which are
// immutable once read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blueprint/connector.h"
#include "blueprint/net/kube_client.h"
#include "compiler/diagnostics.h"

namespace culprit::blueprint {

// How to reach the Kubernetes API (top-level `kubernetes`), shared by Kueue
// discovery and the Kubernetes collector.
struct KubernetesConfig {
  bool enabled = false;
  KubeConnectionConfig connection;
};

struct ServiceClientConfig {
  std::string url;                    // http(s)://host:port of a `culprit serve`
  std::string token_file, token_env;  // the bearer token: first line of the file, or the variable
  int64_t timeout = 300LL * 1000000000;
};

struct AttributionConfig {
  std::vector<std::string> rules;     // extra rule directories or files
  bool stdlib = true;
  std::string engine;                 // "" (default: jit, or $CULPRIT_ENGINE), "jit", "interp"
  unsigned threads = 0;               // scan threads per attempt (0: all cores)
  int64_t slack_before = 10LL * 60 * 1000000000;
  int64_t slack_after = 30LL * 60 * 1000000000;
  std::optional<ServiceClientConfig> service;  // attribute through a service instead of in-process
};

struct StoreConfig {
  std::string url;                    // sqlite:PATH | postgresql://... ; "" = sqlite:culprit.db in the working directory
  std::string password_file, password_env;  // PostgreSQL password (libpq's PGPASSWORD/PGPASSFILE also work)
};

struct OutputConfig {
  std::string stdout_format = "jsonl";  // jsonl | text | none
  bool verbose = false;                 // text: a block per attempt (warnings, each action) instead of one line
  bool explain = false;                 // store and print the derivation trail
};

struct WatchConfig {
  int64_t interval = 60LL * 1000000000; // between polls
  int64_t overlap = 10LL * 60 * 1000000000;  // each poll looks this far before the last one's end (sacct lags)
};

// A connector section that was given, and what its reader made of it.
struct ConfiguredConnector {
  const Connector* connector = nullptr;          // its registry entry
  std::shared_ptr<const ConnectorConfig> config;  // never null
};

struct BlueprintConfig {
  std::string path;                   // the file, as given
  std::string dir;                    // its directory (absolute)
  std::string cluster;                // a name for this blueprint's cluster ("" when not given)
  KubernetesConfig kubernetes;
  // The discoveries and collectors configured, in registry order
  // (blueprint/connector.h); each one's settings live with its code.
  std::vector<ConfiguredConnector> connectors;
  AttributionConfig attribution;
  StoreConfig store;
  OutputConfig output;
  WatchConfig watch;

  // The configuration of connector type T (LokiCollectorConfig, ...), or
  // null when its section is not in the file.
  template <class T>
  const T* connector() const {
    for (const auto& c : connectors)
      if (const T* t = dynamic_cast<const T*>(c.config.get())) return t;
    return nullptr;
  }
};

// Reads and validates `path`. False when it has an error; `diags` holds
// every problem found (warnings too) and `io_error` an I/O failure.
bool load_config(const std::string& path, BlueprintConfig& out, Diagnostics& diags, std::string& io_error);
// The same from text (tests); `path` is used in messages and to resolve
// relative paths.
bool parse_config(const std::string& path, const std::string& text, BlueprintConfig& out, Diagnostics& diags);


}  // namespace culprit::blueprint
