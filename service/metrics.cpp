#include "service/metrics.h"

#include <fmt/format.h>

namespace culprit::service {

namespace {

// Label values are escaped as the exposition format requires.
std::string esc(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

}  // namespace

const std::vector<double>& Metrics::buckets() {
  static const std::vector<double> b = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                        0.1,    0.25,  0.5,    1,     2.5,  5,     10};
  return b;
}

void Metrics::request(const std::string& route, const std::string& method, int code, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{route, method, code}];
  auto& h = latency_[route];
  if (h.counts.empty()) h.counts.assign(buckets().size() + 1, 0);
  size_t i = 0;
  while (i < buckets().size() && seconds > buckets()[i]) ++i;
  ++h.counts[i];
  h.sum += seconds;
  ++h.count;
}

void Metrics::verdict(const std::string& status, const std::string& domain, const std::vector<std::string>& trail_rules,
                      int64_t scan_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  ++verdicts_[{status, domain}];
  for (const auto& r : trail_rules) ++firings_[r];
  if (scan_bytes > 0) scan_bytes_ += static_cast<uint64_t>(scan_bytes);
}

void Metrics::session_created() {
  std::lock_guard<std::mutex> lock(mu_);
  ++created_;
}
void Metrics::session_expired(size_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  expired_ += n;
}
void Metrics::session_deleted() {
  std::lock_guard<std::mutex> lock(mu_);
  ++deleted_;
}
void Metrics::set_catalog(const std::string& name, const std::string& version, const std::string& digest) {
  std::lock_guard<std::mutex> lock(mu_);
  cat_name_ = name;
  cat_version_ = version;
  cat_digest_ = digest;
}
void Metrics::set_ready(bool ready) {
  std::lock_guard<std::mutex> lock(mu_);
  ready_ = ready;
}

std::string Metrics::render(size_t sessions_active, size_t session_bytes) const {
  std::lock_guard<std::mutex> lock(mu_);
  fmt::memory_buffer o;
  auto out = fmt::appender(o);
  fmt::format_to(out, "# HELP culprit_http_requests_total HTTP requests by route pattern, method and status code.\n"
                      "# TYPE culprit_http_requests_total counter\n");
  for (const auto& [k, n] : requests_)
    fmt::format_to(out, "culprit_http_requests_total{{route=\"{}\",method=\"{}\",code=\"{}\"}} {}\n", esc(std::get<0>(k)),
                   esc(std::get<1>(k)), std::get<2>(k), n);
  fmt::format_to(out, "# HELP culprit_http_request_duration_seconds Request latency (headers read to response written).\n"
                      "# TYPE culprit_http_request_duration_seconds histogram\n");
  for (const auto& [route, h] : latency_) {
    uint64_t cum = 0;
    for (size_t i = 0; i < buckets().size(); ++i) {
      cum += h.counts[i];
      fmt::format_to(out, "culprit_http_request_duration_seconds_bucket{{route=\"{}\",le=\"{}\"}} {}\n", esc(route),
                     buckets()[i], cum);
    }
    fmt::format_to(out, "culprit_http_request_duration_seconds_bucket{{route=\"{}\",le=\"+Inf\"}} {}\n", esc(route), h.count);
    fmt::format_to(out, "culprit_http_request_duration_seconds_sum{{route=\"{}\"}} {}\n", esc(route), h.sum);
    fmt::format_to(out, "culprit_http_request_duration_seconds_count{{route=\"{}\"}} {}\n", esc(route), h.count);
  }
  fmt::format_to(out, "# HELP culprit_verdicts_total Verdicts returned, by outcome status and domain.\n"
                      "# TYPE culprit_verdicts_total counter\n");
  for (const auto& [k, n] : verdicts_)
    fmt::format_to(out, "culprit_verdicts_total{{status=\"{}\",domain=\"{}\"}} {}\n", esc(k.first), esc(k.second), n);
  fmt::format_to(out, "# HELP culprit_rule_firings_total Derivation-trail entries per rule over all verdicts.\n"
                      "# TYPE culprit_rule_firings_total counter\n");
  for (const auto& [r, n] : firings_) fmt::format_to(out, "culprit_rule_firings_total{{rule=\"{}\"}} {}\n", esc(r), n);
  fmt::format_to(out, "# HELP culprit_scan_bytes_total Log bytes scanned for verdicts.\n# TYPE culprit_scan_bytes_total counter\n"
                      "culprit_scan_bytes_total {}\n", scan_bytes_);
  fmt::format_to(out, "# HELP culprit_sessions_active Open workload sessions.\n# TYPE culprit_sessions_active gauge\n"
                      "culprit_sessions_active {}\n", sessions_active);
  fmt::format_to(out, "# HELP culprit_session_bytes Accounted memory held by sessions.\n# TYPE culprit_session_bytes gauge\n"
                      "culprit_session_bytes {}\n", session_bytes);
  fmt::format_to(out, "# HELP culprit_sessions_created_total Sessions created.\n# TYPE culprit_sessions_created_total counter\n"
                      "culprit_sessions_created_total {}\n", created_);
  fmt::format_to(out, "# HELP culprit_sessions_expired_total Sessions removed after their idle TTL.\n"
                      "# TYPE culprit_sessions_expired_total counter\nculprit_sessions_expired_total {}\n", expired_);
  fmt::format_to(out, "# HELP culprit_sessions_deleted_total Sessions deleted by clients.\n"
                      "# TYPE culprit_sessions_deleted_total counter\nculprit_sessions_deleted_total {}\n", deleted_);
  fmt::format_to(out, "# HELP culprit_ready 1 when the catalog is compiled and self-tested.\n# TYPE culprit_ready gauge\n"
                      "culprit_ready {}\n", ready_ ? 1 : 0);
  if (!cat_digest_.empty())
    fmt::format_to(out, "# HELP culprit_catalog_info The catalog being served.\n# TYPE culprit_catalog_info gauge\n"
                        "culprit_catalog_info{{name=\"{}\",version=\"{}\",digest=\"{}\"}} 1\n",
                   esc(cat_name_), esc(cat_version_), esc(cat_digest_));
  return fmt::to_string(o);
}

}  // namespace culprit::service
