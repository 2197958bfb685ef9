// HTTP(S) for every outbound call Culprit makes, over libcurl: the remote
// collectors and Kubernetes discovery (Loki, Prometheus, the Kubernetes API),
// webhooks, and the clients of `culprit serve` (`culprit run` with
// attribution.service, `culprit diagnose --server`).
//
// One HttpClient holds what every request to one server shares: the base
// URL, TLS material (a CA, a client certificate and key, as files or as
// PEM text from a kubeconfig), the authentication (a bearer token, read
// again from its file when it changes, as Kubernetes rotates service-account
// tokens; or basic auth), extra headers (Loki's X-Scope-OrgID) and the
// retry policy. Connections, DNS results and TLS sessions are shared
// between requests (a libcurl share), so paging through a result reuses
// one connection.
//
// Retries: a transport failure (refused, reset, timed out), 429 and 5xx
// are retried (set `retries` to 0 for requests that must not be repeated,
// such as a POST that creates something) with exponential backoff (0.5 s, 1 s, 2 s, ... up to 30 s,
// jittered, at most `retries` times), honouring Retry-After; other answers
// are returned as they are. The `stop` flag ends waiting and retrying.
//
// One backend, many attempts: every request through one HttpClient (one
// per configured backend, shared by the attempts in flight) passes one
// gate. At most `max_in_flight` requests are on the wire at once (0: no
// limit). An overload answer (429, 503) pauses every request of the client
// for the back-off it earned, so a burst of attempts backs off together
// instead of retrying in step. And retries spend a budget: kRetryBudget
// tokens, one per retry, a tenth of one earned back by each answer that
// needed none, so that a failing backend gets at most about one retry per
// ten requests once the budget is spent (the answer is then the failure,
// with `retry_budget_spent`), never a multiple of the load it already
// cannot carry.
//
// Every response counts the bytes that crossed the network (request,
// response headers and body as received), which is how the Loki collector
// measures what its push-down saves.
//
// libcurl is loaded when the process makes its first HttpClient
// (blueprint/net/curl_library.h), not at start. When it cannot be loaded, every
// request of every client fails at once, without retries, with an error
// naming the library and its Debian package.
//
// Thread-safety: an HttpClient may be used from several threads at once.
// No exception escapes: failures are values.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace culprit::blueprint {

struct TlsConfig {
  std::string ca_file, ca_pem;      // trust these CAs (else the system's)
  std::string cert_file, cert_pem;  // client certificate (mutual TLS)
  std::string key_file, key_pem;    // its private key
  bool insecure_skip_verify = false;
  std::string server_name;          // verify the server's certificate for this name (kubeconfig tls-server-name)
};

struct HttpClientConfig {
  std::string base_url;             // scheme://host[:port][/prefix], no trailing slash
  TlsConfig tls;
  std::string token;                // bearer token (used when token_file is "")
  std::string token_file;           // re-read when its modification time changes
  std::string username, password;   // basic auth (when no token)
  std::vector<std::pair<std::string, std::string>> headers;  // sent with every request
  int64_t timeout_ns = 60LL * 1000000000;          // per attempt of a request; 0: no limit
  int64_t stall_timeout_ns = 0;     // give up when no byte moved for this long; 0: never
  int64_t connect_timeout_ns = 10LL * 1000000000;
  int retries = 5;                  // of a request that failed with a transport error, 429 or 5xx
  int64_t backoff_base_ns = 500000000;             // first wait; doubles each retry
  int64_t backoff_max_ns = 30LL * 1000000000;
  int max_in_flight = 0;            // requests on the wire at once, all threads together (0: no limit)
};

// Retry tokens of one HttpClient (see "One backend, many attempts").
inline constexpr int kRetryBudget = 10;

// What kind of transport failure ended a request, for callers that word
// it themselves (`culprit diagnose --server`).
enum class HttpFailure {
  none,
  resolve,        // the host name does not resolve
  connect,        // no connection (os_error says why: refused, unreachable)
  timeout,        // connecting or the whole request took too long
  tls,            // the TLS handshake failed
  tls_untrusted,  // the server's certificate is not trusted
  send,           // the connection broke while sending, or the body source gave up
  receive,        // the connection broke while reading the answer
  other,
};

// One request, for what get/post_form/post_json do not cover.
struct HttpRequest {
  std::string method = "GET";       // GET, POST or DELETE
  std::string path;                 // appended to base_url ("/v1/x?y=z")
  std::string content_type;         // of a POST's body
  std::string body;                 // a POST's body, unless body_source is set
  // A POST's body, produced while it is sent (chunked transfer encoding):
  // called for the next piece, which it appends to the (empty) string; an
  // empty piece ends the body; false aborts the request (HttpFailure::send).
  // A request whose source has been called is not retried.
  std::function<bool(std::string& piece)> body_source;
  std::vector<std::pair<std::string, std::string>> headers;  // besides the client's (an Accept here replaces the default)
  // As for get(): the body of a 2xx answer, handed over as it arrives.
  std::function<bool(std::string_view)> on_body;
  int64_t timeout_ns = -1;          // per attempt; -1: the client's timeout_ns
};

struct HttpResponse {
  long status = 0;                  // 0: no HTTP answer (see error)
  std::map<std::string, std::string> headers;   // lower-case names; the last value of a repeated header
  std::string body;                 // empty when a body callback consumed it
  std::string error;                // transport error, "" when an answer came
  HttpFailure failure = HttpFailure::none;  // its kind
  int os_error = 0;                 // errno of a failed connect (ECONNREFUSED), else 0
  int attempts = 0;                 // 1 + retries made
  int64_t wire_bytes = 0;           // request + response headers + body, summed over the attempts
  bool stopped = false;             // the body callback asked to stop, or `stop` was set
  bool retry_budget_spent = false;  // a retry was due but the backend's retry budget is spent
  bool ok() const { return error.empty() && status >= 200 && status < 300; }
  // "HTTP 404: <first line of the body>" or the transport error, for messages.
  std::string describe() const;
  // A transport failure in words, without the URL: "cannot connect:
  // Connection refused", "the server's TLS certificate is not trusted"; ""
  // when an answer came.
  std::string transport_problem() const;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientConfig config);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  const std::string& base_url() const { return config_.base_url; }
  bool has_token() const { return !config_.token.empty() || !config_.token_file.empty(); }

  // GET base_url + path_and_query. With `on_body`, the body of a 2xx answer
  // is handed over as it arrives (chunked pod logs) instead of being kept
  // (an error's body is kept in `body`); returning false stops the transfer
  // (response.stopped). A request whose body callback has run is not
  // retried (its data was already taken).
  HttpResponse get(const std::string& path_and_query, const std::atomic<bool>* stop = nullptr,
                   const std::function<bool(std::string_view)>& on_body = {}) const;
  // POST an application/x-www-form-urlencoded body (Prometheus, Loki series).
  HttpResponse post_form(const std::string& path, const std::string& form, const std::atomic<bool>* stop = nullptr) const;
  // POST a JSON document (webhooks). Retried as any request is: a transport
  // error, 429 or 5xx, up to `retries` times with backoff.
  HttpResponse post_json(const std::string& path, const std::string& json, const std::atomic<bool>* stop = nullptr) const;

  // Any request (DELETE, a streamed POST, per-request headers).
  HttpResponse send(const HttpRequest& request, const std::atomic<bool>* stop = nullptr) const;

  // True when `url` can be a base_url: http:// or https://, a host, no
  // spaces or control characters. Otherwise false and `why`.
  static bool usable_base_url(std::string_view url, std::string& why);

  // Percent-encodes one query-string value or form field.
  static std::string escape(std::string_view s);

 private:
  std::string bearer_token(std::string& error) const;

  HttpClientConfig config_;
  struct Share;
  std::unique_ptr<Share> share_;
  struct Gate;
  std::unique_ptr<Gate> gate_;
  mutable std::mutex token_mu_;
  mutable std::string cached_token_;
  mutable int64_t cached_token_mtime_ = -1;
};

// "a=b&c=d" from pairs, each value escaped.
std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace culprit::blueprint
