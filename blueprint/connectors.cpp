// The registry of connectors (blueprint/connector.h). A connector is added
// by writing its file and one line here; config.cpp and runner.cpp walk the
// table and know no connector by name. The order is the order of the
// known-keys lists in messages and the order the runner builds them in.
#include "blueprint/connector.h"
#include "blueprint/net/http_client.h"

#include <fmt/format.h>

#include "base/operator_file.h"
#include "blueprint/collect/files_collector.h"
#include "blueprint/collect/kube_logs_collector.h"
#include "blueprint/collect/loki_collector.h"
#include "blueprint/collect/promql_collector.h"
#include "blueprint/discovery/kueue_discovery.h"
#include "blueprint/discovery/slurm_discovery.h"
#include "blueprint/discovery/static_discovery.h"

namespace culprit::blueprint {

// One-file connectors: no header, their entry points declared here.
std::shared_ptr<ConnectorConfig> read_command_collector_config(ConfigReader&, const YAML::Node&);
bool make_command_collector(const ConnectorConfig&, const ConnectorEnv&, ConnectorParts&, std::string&);

namespace {

using K = ConnectorKind;

// {section, kind, needs the `kubernetes` connection, reader, factory}
constexpr Connector kConnectors[] = {
    {"discovery.static", K::discovery, false, read_static_discovery_config, make_static_discovery},
    {"discovery.slurm", K::discovery, false, read_slurm_discovery_config, make_slurm_discovery},
    {"discovery.kueue", K::discovery, true, read_kueue_discovery_config, make_kueue_discovery},
    {"collectors.files", K::collector, false, read_files_collector_config, make_files_collector},
    {"collectors.kubernetes", K::collector, true, read_kube_logs_collector_config, make_kube_logs_collector},
    {"collectors.loki", K::collector, false, read_loki_collector_config, make_loki_collector},
    {"collectors.promql", K::collector, false, read_promql_collector_config, make_promql_collector},
    {"collectors.command", K::collector, false, read_command_collector_config, make_command_collector},
};

}  // namespace

std::span<const Connector> connectors() { return kConnectors; }

bool read_http_credentials(const HttpAuthConfig& auth, const char* section, std::string& token, std::string& password,
                           std::string& error) {
  auto one = [&](const std::string& file, const std::string& env, const char* what, std::string& out) {
    if (file.empty() && env.empty()) return true;
    std::string err;
    if (read_secret(file, env, out, err)) return true;
    error = fmt::format("{} {}: {}", section, what, err);
    return false;
  };
  return one(auth.token_file, auth.token_env, "token", token) &&
         one(auth.password_file, auth.password_env, "password", password);
}

void set_http_access(const HttpAuthConfig& auth, const TlsFilesConfig& tls, const std::string& token,
                     const std::string& password, HttpClientConfig& client) {
  client.token = token;
  client.username = auth.username;
  client.password = password;
  client.tls.ca_file = tls.ca_file;
  client.tls.cert_file = tls.cert_file;
  client.tls.key_file = tls.key_file;
  client.tls.server_name = tls.server_name;
  client.tls.insecure_skip_verify = tls.insecure_skip_verify;
}

}  // namespace culprit::blueprint
