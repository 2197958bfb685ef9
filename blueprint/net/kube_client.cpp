// The kubeconfig is YAML: yaml-cpp reads it here (fenced like in config.cpp:
// its exceptions stop in this file). Lists are paged with the API's own
// `limit`/`continue` protocol; nothing here knows about Kueue.
#include "blueprint/net/kube_client.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/json_input.h"
#include "base/timestamp.h"

namespace culprit::blueprint {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

bool read_file(const std::string& path, std::string& out, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("cannot read {}", path);
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

bool base64_decode(const std::string& in, std::string& out) {
  static int table[256];
  static bool init = [] {
    for (int& t : table) t = -1;
    const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) table[static_cast<unsigned char>(a[i])] = i;
    return true;
  }();
  (void)init;
  out.clear();
  int val = 0, bits = -8;
  for (unsigned char c : in) {
    if (c == '=' || c == '\n' || c == '\r' || c == ' ') continue;
    if (table[c] < 0) return false;
    val = (val << 6) + table[c];
    bits += 6;
    if (bits >= 0) {
      out += static_cast<char>((val >> bits) & 0xFF);
      bits -= 8;
    }
  }
  return true;
}

std::string rel(const std::string& dir, const std::string& p) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  return (fs::path(dir) / p).lexically_normal().string();
}

const YAML::Node find_named(const YAML::Node& list, const std::string& name, const char* what) {
  if (list && list.IsSequence())
    for (const auto& item : list)
      if (item["name"] && item["name"].IsScalar() && item["name"].Scalar() == name && item[what]) return item[what];
  return YAML::Node();
}

std::string scalar(const YAML::Node& n, const char* key) {
  return n && n[key] && n[key].IsScalar() ? n[key].Scalar() : std::string();
}

}  // namespace

std::string KubeError::describe() const {
  if (code == 0) return message;
  return fmt::format("{} ({}{}{})", message.empty() ? "no message" : message, reason, reason.empty() ? "" : ", ", code);
}

bool kube_endpoint_from_kubeconfig(const std::string& text, const std::string& dir, const std::string& want_context,
                                   KubeEndpoint& out, std::string& error) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) {
      error = "the kubeconfig is not a YAML mapping";
      return false;
    }
    std::string ctx_name = want_context.empty() ? scalar(root, "current-context") : want_context;
    if (ctx_name.empty()) {
      error = "the kubeconfig has no current-context: name one with 'kubernetes.context'";
      return false;
    }
    YAML::Node ctx = find_named(root["contexts"], ctx_name, "context");
    if (!ctx) {
      error = fmt::format("the kubeconfig has no context '{}'", ctx_name);
      return false;
    }
    std::string cluster_name = scalar(ctx, "cluster"), user_name = scalar(ctx, "user");
    YAML::Node cluster = find_named(root["clusters"], cluster_name, "cluster");
    if (!cluster) {
      error = fmt::format("context '{}' names cluster '{}', which the kubeconfig does not define", ctx_name, cluster_name);
      return false;
    }
    out = KubeEndpoint{};
    out.namespace_ = scalar(ctx, "namespace");
    HttpClientConfig& h = out.http;
    h.base_url = scalar(cluster, "server");
    if (h.base_url.rfind("https://", 0) != 0 && h.base_url.rfind("http://", 0) != 0) {
      error = fmt::format("cluster '{}' has no usable 'server' URL", cluster_name);
      return false;
    }
    std::string ca_data = scalar(cluster, "certificate-authority-data");
    if (!ca_data.empty()) {
      if (!base64_decode(ca_data, h.tls.ca_pem)) {
        error = fmt::format("cluster '{}': certificate-authority-data is not base64", cluster_name);
        return false;
      }
    } else {
      h.tls.ca_file = rel(dir, scalar(cluster, "certificate-authority"));
    }
    h.tls.insecure_skip_verify = scalar(cluster, "insecure-skip-tls-verify") == "true";
    h.tls.server_name = scalar(cluster, "tls-server-name");
    if (cluster["proxy-url"]) {
      error = fmt::format("cluster '{}': proxy-url is not supported", cluster_name);
      return false;
    }
    if (!user_name.empty()) {
      YAML::Node user = find_named(root["users"], user_name, "user");
      if (!user) {
        error = fmt::format("context '{}' names user '{}', which the kubeconfig does not define", ctx_name, user_name);
        return false;
      }
      if (user["exec"] || user["auth-provider"]) {
        error = fmt::format("user '{}' uses an {} plugin, which culprit does not run: give it a token "
                            "('tokenFile') or a client certificate instead",
                            user_name, user["exec"] ? "exec" : "auth-provider");
        return false;
      }
      std::string cert_data = scalar(user, "client-certificate-data"), key_data = scalar(user, "client-key-data");
      if (!cert_data.empty() && !base64_decode(cert_data, h.tls.cert_pem)) {
        error = fmt::format("user '{}': client-certificate-data is not base64", user_name);
        return false;
      }
      if (!key_data.empty() && !base64_decode(key_data, h.tls.key_pem)) {
        error = fmt::format("user '{}': client-key-data is not base64", user_name);
        return false;
      }
      if (cert_data.empty()) h.tls.cert_file = rel(dir, scalar(user, "client-certificate"));
      if (key_data.empty()) h.tls.key_file = rel(dir, scalar(user, "client-key"));
      bool has_cert = !h.tls.cert_pem.empty() || !h.tls.cert_file.empty();
      bool has_key = !h.tls.key_pem.empty() || !h.tls.key_file.empty();
      if (has_cert != has_key) {
        error = fmt::format("user '{}' has a client certificate without its key, or a key without its certificate", user_name);
        return false;
      }
      h.token = scalar(user, "token");
      h.token_file = rel(dir, scalar(user, "tokenFile"));
      h.username = scalar(user, "username");
      h.password = scalar(user, "password");
    }
    out.description = fmt::format("context {} ({})", ctx_name, h.base_url);
    return true;
  } catch (const std::exception& e) {
    error = std::string("cannot read the kubeconfig: ") + e.what();
    return false;
  }
}

bool resolve_kube_endpoint(const KubeConnectionConfig& c, KubeEndpoint& out, std::string& error) {
  if (c.in_cluster) {
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host || !port || !*port) {
      error = "in_cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set (not running in a pod?)";
      return false;
    }
    out = KubeEndpoint{};
    std::string h = host;
    if (h.find(':') != std::string::npos && h[0] != '[') h = "[" + h + "]";  // IPv6
    out.http.base_url = fmt::format("https://{}:{}", h, port);
    std::string dir = c.service_account_dir;
    out.http.token_file = dir + "/token";
    out.http.tls.ca_file = dir + "/ca.crt";
    std::error_code ec;
    if (!fs::exists(out.http.token_file, ec)) {
      error = fmt::format("in_cluster: no service-account token at {}", out.http.token_file);
      return false;
    }
    std::string ns, e2;
    if (read_file(dir + "/namespace", ns, e2)) {
      while (!ns.empty() && (ns.back() == '\n' || ns.back() == ' ')) ns.pop_back();
      out.namespace_ = ns;
    }
    out.description = fmt::format("in-cluster service account ({})", out.http.base_url);
  } else {
    std::string path = c.kubeconfig;
    if (path.empty()) {
      const char* env = std::getenv("KUBECONFIG");
      if (env && *env) {
        path = env;
        if (path.find(':') != std::string::npos) path = path.substr(0, path.find(':'));  // the first file of a list
      } else if (const char* home = std::getenv("HOME")) {
        path = std::string(home) + "/.kube/config";
      }
    }
    std::string text;
    if (path.empty() || !read_file(path, text, error)) {
      error = fmt::format("cannot read the kubeconfig {}", path.empty() ? "(no KUBECONFIG, no HOME)" : path);
      return false;
    }
    std::error_code ec;
    std::string dir = fs::absolute(fs::path(path).parent_path(), ec).string();
    if (!kube_endpoint_from_kubeconfig(text, dir, c.context, out, error)) {
      error = path + ": " + error;
      return false;
    }
  }
  out.http.timeout_ns = c.timeout;
  out.http.retries = c.retries;
  return true;
}

std::optional<int64_t> kube_time(const json& j) {
  if (!j.is_string()) return std::nullopt;
  std::string s = j.get<std::string>();
  if (s.empty()) return std::nullopt;
  return parse_rfc3339(s);
}

KubeClient::KubeClient(KubeEndpoint endpoint, int page_size)
    : endpoint_(std::move(endpoint)), page_size_(page_size), http_(std::make_unique<HttpClient>(endpoint_.http)) {}

KubeError KubeClient::error_of(const HttpResponse& r) const {
  KubeError e;
  if (!r.error.empty()) {
    e.message = r.error;
    return e;
  }
  e.code = r.status;
  json j;
  std::string why;
  if (parse_remote_json(r.body, j, why) && string_member_or(j, "kind") == "Status") {
    e.reason = string_member_or(j, "reason");
    e.message = string_member_or(j, "message");
  } else {
    e.message = r.body.substr(0, 300);
    while (!e.message.empty() && (e.message.back() == '\n' || e.message.back() == '\r')) e.message.pop_back();
  }
  return e;
}

bool KubeClient::get(const std::string& path, json& out, KubeError& error, const std::atomic<bool>* stop) const {
  HttpResponse r = http_->get(path, stop);
  wire_bytes_ += r.wire_bytes;
  if (r.stopped) {
    error = {0, "", "stopped"};
    return false;
  }
  if (!r.ok()) {
    error = error_of(r);
    return false;
  }
  std::string why;
  if (!parse_remote_json(r.body, out, why)) {
    error = {r.status, "", fmt::format("GET {}: {}", path, why)};
    return false;
  }
  return true;
}

bool KubeClient::list(const std::string& path, const std::string& query, std::vector<json>& items, KubeError& error,
                      const std::atomic<bool>* stop) const {
  items.clear();
  std::string cont;
  bool restarted = false;
  for (int page = 0; page < 100000; ++page) {
    std::string q = fmt::format("?limit={}", page_size_);
    if (!query.empty()) q += "&" + query;
    if (!cont.empty()) q += "&continue=" + HttpClient::escape(cont);
    HttpResponse r = http_->get(path + q, stop);
    wire_bytes_ += r.wire_bytes;
    if (r.stopped) {
      error = {0, "", "stopped"};
      return false;
    }
    if (r.status == 410 && !cont.empty() && !restarted) {
      // The continue token expired between pages: list again from the top.
      restarted = true;
      cont.clear();
      items.clear();
      continue;
    }
    if (!r.ok()) {
      error = error_of(r);
      return false;
    }
    json j;
    std::string why;
    if (!parse_remote_json(r.body, j, why) || !j.contains("items") || !(j["items"].is_array() || j["items"].is_null())) {
      error = {r.status, "", fmt::format("LIST {}: the answer is not a list{}", path, why.empty() ? "" : " (" + why + ")")};
      return false;
    }
    if (j["items"].is_array())
      for (auto& it : j["items"]) items.push_back(std::move(it));
    cont = j.contains("metadata") ? string_member_or(j["metadata"], "continue") : "";
    if (cont.empty()) return true;
  }
  error = {0, "", fmt::format("LIST {}: too many pages", path)};
  return false;
}

bool KubeClient::pod_log(const std::string& ns, const std::string& pod, const std::string& query,
                         const std::function<bool(std::string_view)>& on_data, KubeError& error, int64_t& wire_bytes,
                         const std::atomic<bool>* stop) const {
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/log?{}", HttpClient::escape(ns), HttpClient::escape(pod), query);
  auto sink = [&](std::string_view d) { return on_data(d); };
  HttpResponse r = http_->get(path, stop, sink);
  wire_bytes += r.wire_bytes;
  wire_bytes_ += r.wire_bytes;
  if (r.stopped && r.status >= 200 && r.status < 300) return true;  // the caller had enough
  if (r.stopped) {
    error = {0, "", "stopped"};
    return false;
  }
  if (!r.ok()) {
    error = error_of(r);
    return false;
  }
  return true;
}

}  // namespace culprit::blueprint
