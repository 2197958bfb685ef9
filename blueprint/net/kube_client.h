// A small Kubernetes API client for Kueue discovery and the pod-log
// collector: how to reach the API server (a kubeconfig or the pod's
// service account), GET of objects, paginated LISTs, and pod logs.
//
// Connection (KubeConnectionConfig):
//   * in-cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT,
//     the service-account token (re-read when the kubelet rotates it) and
//     CA from the service-account directory
//     (/var/run/secrets/kubernetes.io/serviceaccount);
//   * a kubeconfig: the chosen (or current) context's cluster `server`,
//     `certificate-authority[-data]`, `insecure-skip-tls-verify`,
//     `tls-server-name`, and its user's `client-certificate[-data]` +
//     `client-key[-data]`, `token` / `tokenFile`, or `username`/`password`.
//     Exec and auth-provider plugins are refused with a clear message
//     (they run programs; give a token file instead). Relative paths are
//     relative to the kubeconfig.
//
// Errors: an answer that is not 2xx is reported with the API's Status
// (`reason`, `message`, `code`), e.g. `pods "trainer-0" not found
// (NotFound, 404)`.
//
// Lists are read in pages (`limit`, `continue`); a continue token that
// expired (410 Gone, reason Expired) restarts the list once from the
// beginning, as the API conventions ask, so a slow reader still gets one
// consistent list.
//
// Thread-safety: a KubeClient may be used from several threads at once.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "blueprint/net/http_client.h"

namespace culprit::blueprint {

struct KubeConnectionConfig {
  bool in_cluster = false;
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  std::string kubeconfig;        // path; "" = $KUBECONFIG, else ~/.kube/config (when not in_cluster)
  std::string context;           // "" = the kubeconfig's current-context
  int64_t timeout = 60LL * 1000000000;
  int retries = 5;
  int page_size = 500;
};

// The resolved connection: HTTP settings and the default namespace.
struct KubeEndpoint {
  HttpClientConfig http;
  std::string namespace_;        // the context's (or service account's) namespace, "" when none
  std::string description;       // "context prod (https://10.0.0.1:6443)" for messages
};

// Resolves a connection. False with `error` (a missing file, a context that
// does not exist, an exec plugin).
bool resolve_kube_endpoint(const KubeConnectionConfig& config, KubeEndpoint& out, std::string& error);
// The same from kubeconfig text (tests); `dir` resolves relative paths.
bool kube_endpoint_from_kubeconfig(const std::string& text, const std::string& dir, const std::string& context,
                                   KubeEndpoint& out, std::string& error);

struct KubeError {
  long code = 0;                 // HTTP status, 0 for a transport error
  std::string reason;            // Status.reason: NotFound, Forbidden, Expired, ...
  std::string message;
  std::string describe() const;
};

class KubeClient {
 public:
  KubeClient(KubeEndpoint endpoint, int page_size);
  const KubeEndpoint& endpoint() const { return endpoint_; }

  // GET one object (path from /api or /apis).
  bool get(const std::string& path, nlohmann::json& out, KubeError& error, const std::atomic<bool>* stop = nullptr) const;
  // LIST every item of a collection, following `continue`. `query` holds
  // extra parameters already encoded ("labelSelector=...&fieldSelector=...").
  bool list(const std::string& path, const std::string& query, std::vector<nlohmann::json>& items, KubeError& error,
            const std::atomic<bool>* stop = nullptr) const;
  // A pod's log, streamed to `on_data` (return false to stop reading).
  // `query` holds container=, previous=, timestamps=, sinceTime=, ...
  bool pod_log(const std::string& ns, const std::string& pod, const std::string& query,
               const std::function<bool(std::string_view)>& on_data, KubeError& error, int64_t& wire_bytes,
               const std::atomic<bool>* stop = nullptr) const;
  // Bytes this client moved so far (requests, headers, bodies).
  int64_t wire_bytes() const { return wire_bytes_.load(); }

 private:
  KubeError error_of(const HttpResponse& r) const;
  KubeEndpoint endpoint_;
  int page_size_;
  std::unique_ptr<HttpClient> http_;
  mutable std::atomic<int64_t> wire_bytes_{0};
};

// Kubernetes times (RFC 3339, with or without fraction) to ns; nullopt for
// null, "" or malformed.
std::optional<int64_t> kube_time(const nlohmann::json& j);

// Field access on Kubernetes objects as the API serves them, where any field
// may be absent or of another type: the value when it is a string (object,
// array), else "" (an empty object, array) that lives for the program.
namespace kube_json {
inline std::string str(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}
inline const nlohmann::json& obj(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : empty;
}
inline const nlohmann::json& arr(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  return j.is_object() && j.contains(key) && j[key].is_array() ? j[key] : empty;
}
}  // namespace kube_json

}  // namespace culprit::blueprint
