// Reading the blueprint's YAML configuration: the top-level and shared
// sections here, each connector's section by its own reader (connectors.cpp).
// yaml-cpp's exceptions stop at parse_config, which runs every reader inside
// one try. Validation walks the document once with a table of known keys
// per mapping, so every unknown key, wrong type and bad value is reported
// with its position, not only the first one.
#include "blueprint/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <string_view>

#include "base/operator_file.h"
#include "base/limits.h"
#include "base/read_full.h"
#include "blueprint/config_reader.h"
#include "blueprint/yaml_document.h"

namespace culprit::blueprint {

namespace fs = std::filesystem;

namespace {

void read_kubernetes(ConfigReader& r, const YAML::Node& n, KubernetesConfig& out) {
  out.enabled = true;
  auto& c = out.connection;
  r.map(n, "kubernetes", {"kubeconfig", "context", "in_cluster", "service_account_dir", "timeout", "retries", "page_size"},
        [&](const std::string& k, const YAML::Node& v) {
          if (k == "kubeconfig") {
            if (r.string(v, k, c.kubeconfig)) c.kubeconfig = r.path(c.kubeconfig);
          } else if (k == "context") r.string(v, k, c.context);
          else if (k == "in_cluster") r.boolean(v, k, c.in_cluster);
          else if (k == "service_account_dir") {
            if (r.string(v, k, c.service_account_dir)) c.service_account_dir = r.path(c.service_account_dir);
          } else if (k == "timeout") r.duration(v, k, c.timeout, 1000000000LL);
          else if (k == "retries") {
            int64_t x = 0;
            if (r.integer(v, k, x, 0, 20)) c.retries = static_cast<int>(x);
          } else if (k == "page_size") {
            int64_t x = 0;
            if (r.integer(v, k, x, 1, 10000)) c.page_size = static_cast<int>(x);
          }
        });
  if (c.in_cluster && !c.kubeconfig.empty())
    r.error("B0104", n, "'kubernetes' takes either 'in_cluster: true' or 'kubeconfig', not both");
}

void read_service(ConfigReader& r, const YAML::Node& n, ServiceClientConfig& out) {
  r.require(n, "attribution.service", {"url"});
  r.map(n, "attribution.service", {"url", "token_file", "token_env", "timeout", "token"},
        [&](const std::string& k, const YAML::Node& v) {
          if (k == "url") {
            if (r.string(v, k, out.url) && out.url.rfind("http://", 0) != 0 && out.url.rfind("https://", 0) != 0)
              r.error("B0104", v, "'url' must start with http:// or https://");
          } else if (k == "token_file") {
            if (r.string(v, k, out.token_file)) out.token_file = r.path(out.token_file);
          } else if (k == "token_env") r.string(v, k, out.token_env);
          else if (k == "timeout") r.duration(v, k, out.timeout, 1000000000LL);
          else if (k == "token")
            r.error("B0106", v, "secrets are never read from the configuration: use 'token_file' or 'token_env'");
        });
}

void read_store(ConfigReader& r, const YAML::Node& n, StoreConfig& out) {
  auto url = [&](const YAML::Node& v) {
    if (!r.string(v, "url", out.url)) return;
    if (out.url.rfind("sqlite:", 0) == 0) {
      std::string p = out.url.substr(7);
      if (p.empty()) r.error("B0104", v, "'sqlite:' needs a path, such as sqlite:culprit.db");
      else out.url = "sqlite:" + r.path(p);
    } else if (out.url.rfind("postgresql://", 0) == 0 || out.url.rfind("postgres://", 0) == 0) {
      std::string rest = out.url.substr(out.url.find("://") + 3);
      size_t at = rest.find('@'), slash = rest.find('/');
      std::string userinfo = at != std::string::npos && (slash == std::string::npos || at < slash) ? rest.substr(0, at) : "";
      if (userinfo.find(':') != std::string::npos || out.url.find("password=") != std::string::npos)
        r.error("B0106", v, "the store URL carries a password: put it in 'password_file' or 'password_env' "
                            "(or libpq's PGPASSFILE/PGPASSWORD) instead");
    } else {
      r.error("B0104", v, "'url' must be sqlite:PATH or postgresql://[user@]host[:port]/database");
    }
  };
  if (n.IsScalar()) {
    url(n);
    return;
  }
  r.map(n, "store", {"url", "password_file", "password_env", "password"}, [&](const std::string& k, const YAML::Node& v) {
    if (k == "url") url(v);
    else if (k == "password_file") {
      if (r.string(v, k, out.password_file)) out.password_file = r.path(out.password_file);
    } else if (k == "password_env") r.string(v, k, out.password_env);
    else if (k == "password")
      r.error("B0106", v, "secrets are never read from the configuration: use 'password_file' or 'password_env'");
  });
}

// `discovery:` or `collectors:`: each key is a connector's section, read by
// that connector's reader (blueprint/connectors.cpp); the known keys, in
// messages, are the registry's, in its order.
void read_connectors(ConfigReader& r, const std::string& top, const YAML::Node& n,
                     std::vector<std::shared_ptr<ConnectorConfig>>& read) {
  std::vector<std::string> known;
  for (const Connector& c : connectors()) {
    std::string_view section = c.section;
    if (section.size() > top.size() && section.substr(0, top.size()) == top && section[top.size()] == '.')
      known.emplace_back(section.substr(top.size() + 1));
  }
  r.map(n, top, known, [&](const std::string& k, const YAML::Node& x) {
    std::string section = top + "." + k;
    for (size_t i = 0; i < connectors().size(); ++i)
      if (section == connectors()[i].section) read[i] = connectors()[i].read(r, x);
  });
}

}  // namespace

bool parse_config(const std::string& path, const std::string& text, BlueprintConfig& out, Diagnostics& diags) {
  auto file = make_source_file(path, text);
  diags.keep(file);
  out = BlueprintConfig{};
  out.path = path;
  std::error_code ec;
  out.dir = fs::absolute(fs::path(path).parent_path(), ec).lexically_normal().string();
  if (out.dir.empty()) out.dir = fs::current_path(ec).string();
  ConfigReader r(file, diags, out.dir);
  // Each connector section read, by registry index (kept in registry order).
  std::vector<std::shared_ptr<ConnectorConfig>> read(connectors().size());
  YAML::Node root;
  if (!load_yaml_document(file, "B0101", diags, root)) return false;
  if (root.IsNull()) {
    diags.error("B0103", SourceRange{file.get(), 1, 1, 1, 2},
                "the configuration is empty: it needs keys such as discovery, collectors, store");
    return false;
  }
  if (!root.IsMap()) {
    diags.error("B0103", r.at(root), "the configuration must be a mapping with keys such as discovery, collectors, store");
    return false;
  }
  try {
    r.map(root, "the configuration", {"cluster", "kubernetes", "discovery", "collectors", "attribution", "store", "output", "watch"},
          [&](const std::string& key, const YAML::Node& v) {
            if (key == "cluster") r.string(v, key, out.cluster);
            else if (key == "kubernetes") read_kubernetes(r, v, out.kubernetes);
            else if (key == "discovery" || key == "collectors") read_connectors(r, key, v, read);
            else if (key == "attribution") {
              r.map(v, "attribution", {"rules", "stdlib", "engine", "threads", "slack_before", "slack_after", "service"},
                    [&](const std::string& k, const YAML::Node& x) {
                      auto& a = out.attribution;
                      if (k == "rules") {
                        if (r.strings(x, k, a.rules))
                          for (auto& p : a.rules) p = r.path(p);
                      } else if (k == "stdlib") r.boolean(x, k, a.stdlib);
                      else if (k == "engine") r.oneof(x, k, {"jit", "interp"}, a.engine);
                      else if (k == "threads") {
                        int64_t t = 0;
                        if (r.integer(x, k, t, 1, 1024)) a.threads = static_cast<unsigned>(t);
                      } else if (k == "slack_before") r.duration(x, k, a.slack_before);
                      else if (k == "slack_after") r.duration(x, k, a.slack_after);
                      else if (k == "service") {
                        a.service.emplace();
                        read_service(r, x, *a.service);
                      }
                    });
            } else if (key == "store") read_store(r, v, out.store);
            else if (key == "output") {
              r.map(v, "output", {"stdout", "explain"}, [&](const std::string& k, const YAML::Node& x) {
                if (k == "stdout") r.oneof(x, k, {"jsonl", "text", "none"}, out.output.stdout_format);
                else r.boolean(x, k, out.output.explain);
              });
            } else if (key == "watch") {
              r.map(v, "watch", {"interval", "overlap"}, [&](const std::string& k, const YAML::Node& x) {
                if (k == "interval") r.duration(x, k, out.watch.interval, 1000000000LL);
                else r.duration(x, k, out.watch.overlap);
              });
            }
          });
  } catch (const std::exception& e) {
    // yaml-cpp's conversions throw; the walk uses none, but nothing may
    // leave this file as an exception.
    diags.error("B0101", SourceRange{file.get(), 1, 1, 1, 2}, std::string("cannot read the configuration: ") + e.what());
    return false;
  }
  bool discovers = false, uses_kubernetes = false;
  for (size_t i = 0; i < read.size(); ++i) {
    if (!read[i]) continue;
    const Connector& c = connectors()[i];
    out.connectors.push_back(ConfiguredConnector{&c, std::move(read[i])});
    discovers = discovers || c.kind == ConnectorKind::discovery;
    uses_kubernetes = uses_kubernetes || c.needs_kubernetes;
  }
  if (!diags.has_errors() && !discovers)
    diags.error("B0105", SourceRange{file.get(), 1, 1, 1, 2},
                "nothing to discover: add 'discovery.static', 'discovery.slurm' or 'discovery.kueue'");
  if (!diags.has_errors() && uses_kubernetes && !out.kubernetes.enabled)
    out.kubernetes.enabled = true;  // the defaults: $KUBECONFIG or ~/.kube/config
  return !diags.has_errors();
}

bool load_config(const std::string& path, BlueprintConfig& out, Diagnostics& diags, std::string& io_error) {
  std::string text;
  if (!read_regular_file(path, limits::kConfigFileBytes, "config_file_bytes", "the configuration", text, io_error))
    return false;
  return parse_config(path, text, out, diags);
}

}  // namespace culprit::blueprint
