// libcurl is used only here, through the functions blueprint/net/curl_library.h
// loads when the first client is made. Each request gets its own easy handle
// (handles are not thread-safe); what makes paging cheap, the connection
// cache, TLS sessions and DNS results, lives in one share per client, guarded
// by the lock callbacks libcurl asks for.
#include "base/operator_file.h"
#include "blueprint/net/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>
#include <strings.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include "blueprint/net/curl_library.h"

namespace culprit::blueprint {

namespace {

struct Body {
  std::string* data = nullptr;
  const std::function<bool(std::string_view)>* on_body = nullptr;
  bool stopped = false;
  bool delivered = false;  // the callback saw data (the request can no longer be retried)
  const std::atomic<bool>* stop = nullptr;
  CURL* handle = nullptr;
  const CurlLibrary* curl = nullptr;
};

size_t on_write(char* ptr, size_t size, size_t n, void* user) {
  auto* b = static_cast<Body*>(user);
  size_t len = size * n;
  if (b->stop && b->stop->load()) {
    b->stopped = true;
    return 0;
  }
  long status = 0;
  b->curl->easy_getinfo(b->handle, CURLINFO_RESPONSE_CODE, &status);
  // Only a successful answer is streamed; an error's body is kept for the message.
  if (b->on_body && *b->on_body && status >= 200 && status < 300) {
    b->delivered = true;
    if (!(*b->on_body)(std::string_view(ptr, len))) {
      b->stopped = true;
      return 0;  // libcurl aborts the transfer (CURLE_WRITE_ERROR)
    }
    return len;
  }
  b->data->append(ptr, len);
  return len;
}

// A streamed request body: pieces from the caller's source, handed to
// libcurl as it asks for them.
struct Upload {
  const std::function<bool(std::string&)>* source = nullptr;
  std::string piece;
  size_t offset = 0;
  bool called = false;   // the source has been read: the request cannot be retried
  bool aborted = false;  // the source said stop
  bool ended = false;
};

size_t on_read(char* buffer, size_t size, size_t n, void* user) {
  auto* u = static_cast<Upload*>(user);
  size_t room = size * n;
  while (u->offset == u->piece.size() && !u->ended) {
    u->piece.clear();
    u->offset = 0;
    u->called = true;
    if (!(*u->source)(u->piece)) {
      u->aborted = true;
      return CURL_READFUNC_ABORT;
    }
    if (u->piece.empty()) u->ended = true;
  }
  size_t len = std::min(room, u->piece.size() - u->offset);
  std::memcpy(buffer, u->piece.data() + u->offset, len);
  u->offset += len;
  return len;  // 0 once ended: the last chunk
}

HttpFailure failure_of(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return HttpFailure::resolve;
    case CURLE_COULDNT_CONNECT: return HttpFailure::connect;
    case CURLE_OPERATION_TIMEDOUT: return HttpFailure::timeout;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_ENGINE_NOTFOUND: return HttpFailure::tls;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE: return HttpFailure::tls_untrusted;
    case CURLE_SEND_ERROR:
    case CURLE_READ_ERROR:
    case CURLE_ABORTED_BY_CALLBACK: return HttpFailure::send;
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE: return HttpFailure::receive;
    default: return HttpFailure::other;
  }
}

size_t on_header(char* ptr, size_t size, size_t n, void* user) {
  auto* h = static_cast<std::map<std::string, std::string>*>(user);
  std::string_view line(ptr, size * n);
  if (line.rfind("HTTP/", 0) == 0) h->clear();  // a new response (after 100 Continue or a redirect)
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view v = line.substr(colon + 1);
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
    (*h)[name] = std::string(v);
  }
  return size * n;
}

bool sleep_unless_stopped(int64_t ns, const std::atomic<bool>* stop) {
  auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns);
  while (std::chrono::steady_clock::now() < until) {
    if (stop && stop->load()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min<int64_t>(50, ns / 1000000 + 1)));
  }
  return !(stop && stop->load());
}

// scheme://host[:port] -> (host, port), for CONNECT_TO.
bool split_host_port(const std::string& url, std::string& host, std::string& port) {
  size_t s = url.find("://");
  if (s == std::string::npos) return false;
  std::string scheme = url.substr(0, s);
  size_t start = s + 3, end = url.find('/', start);
  std::string hp = url.substr(start, end == std::string::npos ? std::string::npos : end - start);
  size_t colon = hp.rfind(':');
  if (!hp.empty() && hp[0] == '[') {  // [v6]:port
    size_t close = hp.find(']');
    host = hp.substr(0, close + 1);
    port = close + 1 < hp.size() && hp[close + 1] == ':' ? hp.substr(close + 2) : "";
  } else if (colon != std::string::npos) {
    host = hp.substr(0, colon);
    port = hp.substr(colon + 1);
  } else {
    host = hp;
    port = "";
  }
  if (port.empty()) port = scheme == "https" ? "443" : "80";
  return true;
}

}  // namespace

std::string HttpResponse::describe() const {
  const char* held = retry_budget_spent ? " (not retried: this backend's retry budget is spent)" : "";
  if (!error.empty()) return error + held;
  std::string first = body.substr(0, body.find('\n'));
  if (first.size() > 300) first = first.substr(0, 300) + "...";
  return (first.empty() ? fmt::format("HTTP {}", status) : fmt::format("HTTP {}: {}", status, first)) + held;
}

std::string HttpResponse::transport_problem() const {
  switch (failure) {
    case HttpFailure::none: return "";
    case HttpFailure::resolve: return "the host name does not resolve";
    case HttpFailure::connect: return os_error ? fmt::format("cannot connect: {}", std::strerror(os_error)) : "cannot connect";
    case HttpFailure::timeout: return "the connection timed out";
    case HttpFailure::tls: return "the TLS handshake failed";
    case HttpFailure::tls_untrusted: return "the server's TLS certificate is not trusted";
    case HttpFailure::send: return "the connection broke while sending the request";
    case HttpFailure::receive: return "the connection broke while reading the answer";
    case HttpFailure::other: break;
  }
  return error;
}

struct HttpClient::Share {
  const CurlLibrary* curl = nullptr;  // null when libcurl could not be loaded (load_error says why)
  std::string load_error;
  CURLSH* sh = nullptr;
  std::mutex mu[CURL_LOCK_DATA_LAST];
  static void lock(CURL*, curl_lock_data d, curl_lock_access, void* user) {
    static_cast<Share*>(user)->mu[d].lock();
  }
  static void unlock(CURL*, curl_lock_data d, void* user) { static_cast<Share*>(user)->mu[d].unlock(); }
};

// What every request to this backend shares beyond connections: the
// requests in flight (max_in_flight), the pause after an overload answer,
// and the retry budget (http_client.h, "One backend, many attempts").
struct HttpClient::Gate {
  std::mutex mu;
  std::condition_variable cv;
  int in_flight = 0;
  std::chrono::steady_clock::time_point pause_until{};
  int retry_tenths = kRetryBudget * 10;  // tokens in tenths: earned back exactly
  int64_t retries_refused = 0;

  // Waits for a free slot and for any pause to pass. False: stopped.
  bool enter(int max_in_flight, const std::atomic<bool>* stop) {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      if (stop && stop->load()) return false;
      auto now = std::chrono::steady_clock::now();
      if (now < pause_until) {
        cv.wait_until(lock, std::min(pause_until, now + std::chrono::milliseconds(50)));
        continue;
      }
      if (max_in_flight > 0 && in_flight >= max_in_flight) {
        cv.wait_for(lock, std::chrono::milliseconds(50));
        continue;
      }
      ++in_flight;
      return true;
    }
  }
  void leave() {
    {
      std::lock_guard<std::mutex> lock(mu);
      --in_flight;
    }
    cv.notify_all();
  }
  // The backend said it is overloaded: every request waits `ns` first.
  void pause(int64_t ns) {
    std::lock_guard<std::mutex> lock(mu);
    pause_until = std::max(pause_until, std::chrono::steady_clock::now() + std::chrono::nanoseconds(ns));
  }
  // A retry costs a token; an answer that needed none earns a tenth of one.
  bool take_retry() {
    std::lock_guard<std::mutex> lock(mu);
    if (retry_tenths < 10) {
      ++retries_refused;
      return false;
    }
    retry_tenths -= 10;
    return true;
  }
  void earned() {
    std::lock_guard<std::mutex> lock(mu);
    retry_tenths = std::min(kRetryBudget * 10, retry_tenths + 1);
  }
};

HttpClient::HttpClient(HttpClientConfig config)
    : config_(std::move(config)), share_(std::make_unique<Share>()), gate_(std::make_unique<Gate>()) {
  while (!config_.base_url.empty() && config_.base_url.back() == '/') config_.base_url.pop_back();
  // Loads libcurl and runs curl_global_init on the process's first client.
  share_->curl = curl_library(share_->load_error);
  if (!share_->curl) return;  // every request answers with load_error
  const CurlLibrary& curl = *share_->curl;
  share_->sh = curl.share_init();
  if (share_->sh) {
    curl.share_setopt(share_->sh, CURLSHOPT_LOCKFUNC, &Share::lock);
    curl.share_setopt(share_->sh, CURLSHOPT_UNLOCKFUNC, &Share::unlock);
    curl.share_setopt(share_->sh, CURLSHOPT_USERDATA, share_.get());
    curl.share_setopt(share_->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl.share_setopt(share_->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl.share_setopt(share_->sh, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
  }
}

HttpClient::~HttpClient() {
  if (share_ && share_->sh) share_->curl->share_cleanup(share_->sh);
}

std::string HttpClient::escape(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3 / 2);
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') out += static_cast<char>(c);
    else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string form_encode(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [k, v] : fields) {
    if (!out.empty()) out += '&';
    out += HttpClient::escape(k);
    out += '=';
    out += HttpClient::escape(v);
  }
  return out;
}

std::string HttpClient::bearer_token(std::string& error) const {
  if (config_.token_file.empty()) return config_.token;
  struct stat st {};
  std::lock_guard<std::mutex> lock(token_mu_);
  if (stat(config_.token_file.c_str(), &st) != 0) {
    error = fmt::format("cannot read the token file {}: {}", config_.token_file, std::strerror(errno));
    return "";
  }
  int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (mtime != cached_token_mtime_) {
    // A projected service-account token is rotated in place: read it the
    // way every secret is read (regular file, bounded, first line).
    std::string t;
    if (!read_secret(config_.token_file, "", t, error)) return "";
    cached_token_ = t;
    cached_token_mtime_ = mtime;
  }
  return cached_token_;
}

HttpResponse HttpClient::get(const std::string& path, const std::atomic<bool>* stop,
                             const std::function<bool(std::string_view)>& on_body) const {
  HttpRequest r;
  r.path = path;
  r.on_body = on_body;
  return send(r, stop);
}

namespace {

HttpRequest post_request(const std::string& path, const char* content_type, const std::string& body) {
  HttpRequest r;
  r.method = "POST";
  r.path = path;
  r.content_type = content_type;
  r.body = body;
  return r;
}

}  // namespace

HttpResponse HttpClient::post_form(const std::string& path, const std::string& form, const std::atomic<bool>* stop) const {
  return send(post_request(path, "application/x-www-form-urlencoded", form), stop);
}

HttpResponse HttpClient::post_json(const std::string& path, const std::string& json, const std::atomic<bool>* stop) const {
  return send(post_request(path, "application/json", json), stop);
}

bool HttpClient::usable_base_url(std::string_view url, std::string& why) {
  std::string_view rest;
  if (url.rfind("http://", 0) == 0) rest = url.substr(7);
  else if (url.rfind("https://", 0) == 0) rest = url.substr(8);
  else {
    why = "it must start with http:// or https://";
    return false;
  }
  for (unsigned char c : url)
    if (c <= ' ' || c == 0x7f) {
      why = "it holds a space or a control character";
      return false;
    }
  std::string_view host = rest.substr(0, rest.find_first_of("/?#"));
  if (size_t at = host.rfind('@'); at != std::string_view::npos) host = host.substr(at + 1);
  if (host.empty() || host[0] == ':') {
    why = "it names no host";
    return false;
  }
  return true;
}

HttpResponse HttpClient::send(const HttpRequest& request, const std::atomic<bool>* stop) const {
  HttpResponse res;
  std::string url = config_.base_url + request.path;
  std::string connect_to;
  if (!config_.tls.server_name.empty()) {
    // Verify the certificate for tls-server-name while connecting to the
    // configured address: ask for the name, route it to the address.
    std::string host, port;
    if (split_host_port(config_.base_url, host, port)) {
      size_t s = url.find("://") + 3;
      size_t e = url.find_first_of(":/", s);
      if (!host.empty() && host[0] == '[') e = url.find(']', s) + 1;
      url = url.substr(0, s) + config_.tls.server_name + url.substr(e);
      connect_to = fmt::format("{}:{}:{}:{}", config_.tls.server_name, port, host, port);
    }
  }
  if (!share_->curl) {
    res.attempts = 1;
    res.error = share_->load_error;  // not retried: the library does not appear by waiting
    res.failure = HttpFailure::other;
    return res;
  }
  const CurlLibrary& curl = *share_->curl;
  std::mt19937_64 rng(std::random_device{}());
  int64_t backoff = config_.backoff_base_ns;
  for (int attempt = 0;; ++attempt) {
    res.attempts = attempt + 1;
    res.status = 0;
    res.error.clear();
    res.failure = HttpFailure::none;
    res.os_error = 0;
    res.body.clear();
    res.headers.clear();
    std::string token_error;
    std::string token = bearer_token(token_error);
    if (!token_error.empty()) {
      res.error = token_error;
      res.failure = HttpFailure::other;
      return res;
    }
    CURL* h = curl.easy_init();
    if (!h) {
      res.error = "cannot create an HTTP request (libcurl)";
      res.failure = HttpFailure::other;
      return res;
    }
    char errbuf[CURL_ERROR_SIZE] = {0};
    Body sink{&res.body, request.on_body ? &request.on_body : nullptr, false, false, stop, h, &curl};
    Upload upload;
    upload.source = request.body_source ? &request.body_source : nullptr;
    curl.easy_setopt(h, CURLOPT_URL, url.c_str());
    curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl.easy_setopt(h, CURLOPT_SHARE, share_->sh);
    curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_write);
    curl.easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
    curl.easy_setopt(h, CURLOPT_HEADERDATA, &res.headers);
    int64_t timeout = request.timeout_ns >= 0 ? request.timeout_ns : config_.timeout_ns;
    curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout / 1000000));
    if (config_.stall_timeout_ns > 0) {
      // Under one byte a second for the whole period: the peer is gone.
      curl.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
      curl.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, std::max(1L, static_cast<long>(config_.stall_timeout_ns / 1000000000)));
    }
    curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(config_.connect_timeout_ns / 1000000));
    curl.easy_setopt(h, CURLOPT_USERAGENT, "culprit-blueprint");
    curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_slist* connect_list = nullptr;
    if (!connect_to.empty()) {
      connect_list = curl.slist_append(connect_list, connect_to.c_str());
      curl.easy_setopt(h, CURLOPT_CONNECT_TO, connect_list);
    }
    // TLS.
    const TlsConfig& t = config_.tls;
    curl_blob ca{}, cert{}, key{};
    if (!t.ca_pem.empty()) {
      ca = {const_cast<char*>(t.ca_pem.data()), t.ca_pem.size(), CURL_BLOB_NOCOPY};
      curl.easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
    } else if (!t.ca_file.empty()) {
      curl.easy_setopt(h, CURLOPT_CAINFO, t.ca_file.c_str());
    }
    if (!t.cert_pem.empty()) {
      cert = {const_cast<char*>(t.cert_pem.data()), t.cert_pem.size(), CURL_BLOB_NOCOPY};
      curl.easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert);
      curl.easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (!t.cert_file.empty()) {
      curl.easy_setopt(h, CURLOPT_SSLCERT, t.cert_file.c_str());
    }
    if (!t.key_pem.empty()) {
      key = {const_cast<char*>(t.key_pem.data()), t.key_pem.size(), CURL_BLOB_NOCOPY};
      curl.easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key);
      curl.easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (!t.key_file.empty()) {
      curl.easy_setopt(h, CURLOPT_SSLKEY, t.key_file.c_str());
    }
    if (t.insecure_skip_verify) {
      curl.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      curl.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    // Authentication and headers.
    curl_slist* headers = nullptr;
    std::string auth;
    if (!token.empty()) {
      auth = "Authorization: Bearer " + token;
      headers = curl.slist_append(headers, auth.c_str());
    } else if (!config_.username.empty()) {
      curl.easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
      curl.easy_setopt(h, CURLOPT_USERNAME, config_.username.c_str());
      curl.easy_setopt(h, CURLOPT_PASSWORD, config_.password.c_str());
    }
    std::vector<std::string> lines;
    bool accept = false;
    for (const auto& [k, v] : config_.headers) lines.push_back(k + ": " + v);
    for (const auto& [k, v] : request.headers) {
      lines.push_back(k + ": " + v);
      accept = accept || strcasecmp(k.c_str(), "Accept") == 0;
    }
    if (!accept) lines.push_back("Accept: application/json, */*");
    if (request.method == "POST") {
      lines.push_back("Content-Type: " + request.content_type);
      // libcurl would wait up to a second for "100 Continue" before a large
      // or streamed body; the servers here read the body either way.
      lines.push_back("Expect:");
      curl.easy_setopt(h, CURLOPT_POST, 1L);
      if (upload.source) {
        lines.push_back("Transfer-Encoding: chunked");
        curl.easy_setopt(h, CURLOPT_READFUNCTION, &on_read);
        curl.easy_setopt(h, CURLOPT_READDATA, &upload);
      } else {
        curl.easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
        curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
      }
    } else if (request.method != "GET") {
      curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
    }
    for (const auto& l : lines) headers = curl.slist_append(headers, l.c_str());
    curl.easy_setopt(h, CURLOPT_HTTPHEADER, headers);

    if (!gate_->enter(config_.max_in_flight, stop)) {
      curl.slist_free_all(headers);
      curl.slist_free_all(connect_list);
      curl.easy_cleanup(h);
      res.stopped = true;
      return res;
    }
    CURLcode rc = curl.easy_perform(h);
    gate_->leave();
    long status = 0;
    curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    long req_size = 0, header_size = 0;
    curl_off_t down = 0;
    long os_error = 0;
    curl.easy_getinfo(h, CURLINFO_OS_ERRNO, &os_error);
    curl.easy_getinfo(h, CURLINFO_REQUEST_SIZE, &req_size);
    curl.easy_getinfo(h, CURLINFO_HEADER_SIZE, &header_size);
    curl.easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &down);
    res.wire_bytes += req_size + header_size + static_cast<int64_t>(down);
    curl.slist_free_all(headers);
    curl.slist_free_all(connect_list);
    curl.easy_cleanup(h);

    if (sink.stopped) {
      res.stopped = true;
      res.status = status;
      return res;
    }
    bool transport_failed = rc != CURLE_OK;
    if (upload.aborted) {
      res.error = fmt::format("{}: the request's body could not be produced", config_.base_url);
      res.failure = HttpFailure::send;
      return res;
    }
    if (transport_failed) {
      res.error = fmt::format("{}: {}", config_.base_url, errbuf[0] ? errbuf : curl.easy_strerror(rc));
      res.failure = failure_of(rc);
      res.os_error = res.failure == HttpFailure::connect ? static_cast<int>(os_error) : 0;
    } else {
      res.status = status;
    }
    bool retryable = transport_failed || status == 429 || (status >= 500 && status <= 599);
    // Certificate and option problems do not get better by trying again.
    if (transport_failed && (rc == CURLE_SSL_CACERT_BADFILE || rc == CURLE_PEER_FAILED_VERIFICATION ||
                             rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL ||
                             rc == CURLE_SSL_CONNECT_ERROR))
      retryable = false;
    if (!retryable) gate_->earned();
    if (!retryable || sink.delivered || upload.called || attempt >= config_.retries) return res;
    int64_t wait = backoff + static_cast<int64_t>(rng() % static_cast<uint64_t>(std::max<int64_t>(1, backoff / 4)));
    auto ra = res.headers.find("retry-after");
    if (ra != res.headers.end()) {
      char* end = nullptr;
      long secs = std::strtol(ra->second.c_str(), &end, 10);
      if (end && *end == 0 && secs >= 0) wait = std::max<int64_t>(wait, secs * 1000000000LL);
    }
    wait = std::min(wait, config_.backoff_max_ns);
    backoff = std::min(backoff * 2, config_.backoff_max_ns);
    // Overloaded (429, 503): every request to this backend waits, not only
    // this one, so a burst of attempts backs off together instead of
    // retrying in step. Beyond the budget, the failure is the answer.
    if (status == 429 || status == 503) gate_->pause(wait);
    if (!gate_->take_retry()) {
      res.retry_budget_spent = true;
      return res;
    }
    if (!sleep_unless_stopped(wait, stop)) {
      res.stopped = true;
      return res;
    }
  }
}

}  // namespace culprit::blueprint
