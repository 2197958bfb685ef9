// Service metrics, rendered in the Prometheus text exposition format (0.0.4).
//
// One Metrics object lives for the whole service. Every method is
// thread-safe (one mutex: updates are a few map operations, far cheaper than
// the requests they count). Label values are bounded sets chosen by the
// service (route patterns, not raw paths; rule names from the catalog), so the
// number of series cannot grow with client input.
//
// Series (all prefixed culprit_):
//   http_requests_total{route,method,code}            counter
//   http_request_duration_seconds{route}              histogram
//   verdicts_total{status,domain}                     counter
//   rule_firings_total{rule}                          counter (derivation-trail entries per rule)
//   scan_bytes_total                                  counter (coverage bytes_read of every verdict)
//   sessions_active, session_bytes                    gauges (set by the caller at scrape time)
//   sessions_created_total, sessions_expired_total, sessions_deleted_total   counters
//   catalog_info{name,version,digest} 1, ready 0|1    gauges
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace culprit::service {

class Metrics {
 public:
  void request(const std::string& route, const std::string& method, int code, double seconds);
  // One attribution: status/domain of its outcome, the rules named in its
  // trail, and the bytes its scan read.
  void verdict(const std::string& status, const std::string& domain, const std::vector<std::string>& trail_rules,
               int64_t scan_bytes);
  void session_created();
  void session_expired(size_t n);
  void session_deleted();
  void set_catalog(const std::string& name, const std::string& version, const std::string& digest);
  void set_ready(bool ready);

  // The whole exposition; the gauges passed in are read by the caller from
  // the session store at scrape time.
  std::string render(size_t sessions_active, size_t session_bytes) const;

 private:
  static const std::vector<double>& buckets();
  struct Histogram {
    std::vector<uint64_t> counts;  // per bucket (not cumulative), + Inf at the end
    double sum = 0;
    uint64_t count = 0;
  };
  mutable std::mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::pair<std::string, std::string>, uint64_t> verdicts_;
  std::map<std::string, uint64_t> firings_;
  uint64_t scan_bytes_ = 0, created_ = 0, expired_ = 0, deleted_ = 0;
  std::string cat_name_, cat_version_, cat_digest_;
  bool ready_ = false;
};

}  // namespace culprit::service
