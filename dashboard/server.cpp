#include "dashboard/server.h"

#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <thread>

#include "base/vocabulary.h"
#include "base/limits.h"
#include "base/sha256.h"
#include "base/stop_signals.h"
#include "base/timestamp.h"
#include "blueprint/store/store_reader.h"
#include "dashboard/assets.h"
#include "dashboard/host_allow.h"
#include "dashboard/pages.h"
#include "service/http_server.h"

namespace culprit::dashboard {

namespace {

using Clock = std::chrono::steady_clock;
using service::HttpRequest;
using service::HttpResponse;
std::atomic<bool> g_stop{false};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Read-only store connections, one per request in flight. A connection
// that fails a query is dropped (the server may have restarted) and a new
// one is opened for the next request.
class ReaderPool {
 public:
  ReaderPool(std::string url, std::string password, size_t max) : url_(std::move(url)), password_(std::move(password)), max_(max) {}

  // The first connection, opened at start so that a bad store stops the
  // command before it serves anything.
  bool start(std::string& error, std::string& warning) {
    auto r = blueprint::StoreReader::open(url_, password_, error, warning);
    if (!r) return false;
    redacted_ = r->url();
    version_ = r->schema_version();
    free_.push_back(std::move(r));
    open_ = 1;
    return true;
  }

  class Lease {
   public:
    Lease(ReaderPool* pool, std::unique_ptr<blueprint::StoreReader> r) : pool_(pool), r_(std::move(r)) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), r_(std::move(o.r_)), broken_(o.broken_) { o.pool_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (pool_) pool_->give_back(std::move(r_), broken_);
    }
    blueprint::StoreReader* operator->() { return r_.get(); }
    explicit operator bool() const { return r_ != nullptr; }
    void broken() { broken_ = true; }

   private:
    ReaderPool* pool_;
    std::unique_ptr<blueprint::StoreReader> r_;
    bool broken_ = false;
  };

  Lease acquire(std::string& error) {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      if (!free_.empty()) {
        auto r = std::move(free_.back());
        free_.pop_back();
        return Lease(this, std::move(r));
      }
      if (open_ < max_) {
        ++open_;
        lock.unlock();
        std::string warning;
        auto r = blueprint::StoreReader::open(url_, password_, error, warning);
        if (!r) {
          lock.lock();
          --open_;
          cv_.notify_one();
          return Lease(nullptr, nullptr);
        }
        return Lease(this, std::move(r));
      }
      if (!cv_.wait_for(lock, std::chrono::seconds(10), [&] { return !free_.empty() || open_ < max_; })) {
        error = "every store connection is busy";
        return Lease(nullptr, nullptr);
      }
    }
  }

  const std::string& url() const { return redacted_; }
  int schema_version() const { return version_; }

 private:
  void give_back(std::unique_ptr<blueprint::StoreReader> r, bool broken) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken || !r) --open_;
    else free_.push_back(std::move(r));
    cv_.notify_one();
  }

  std::string url_, password_, redacted_;
  size_t max_;
  int version_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<blueprint::StoreReader>> free_;
  size_t open_ = 0;
};

const char* kSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// No request body is ever read: on_head refuses every request that has one
// (405 or 400). The parser's own body limit must therefore not pre-empt that
// answer with a 413, whatever Content-Length says.
constexpr uint64_t kNoBodyLimit = uint64_t{1} << 62;

// The query string of `target`: every `key=value` pair, percent-decoded ('+' a space), repeated keys kept.
Params query_params(const std::string& target) {
  Params out;
  size_t q = target.find('?');
  if (q == std::string::npos) return out;
  std::string_view rest = std::string_view(target).substr(q + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key = service::url_decode(pair.substr(0, eq));
    std::string value = eq == std::string_view::npos ? std::string() : service::url_decode(pair.substr(eq + 1));
    if (!key.empty()) out.emplace(std::move(key), std::move(value));
  }
  return out;
}

// The first value of `key`, or "".
std::string first_param(const Params& p, const std::string& key) {
  auto it = p.find(key);
  return it == p.end() ? std::string() : it->second;
}

// "123" (1 to 18 digits) into `id`.
bool parse_id(std::string_view s, int64_t& id) {
  if (s.empty() || s.size() > 18) return false;
  id = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    id = id * 10 + (c - '0');
  }
  return true;
}

// `path` with `prefix` removed, when it starts with it.
bool strip_prefix(std::string_view path, std::string_view prefix, std::string_view& rest) {
  if (path.substr(0, prefix.size()) != prefix) return false;
  rest = path.substr(prefix.size());
  return true;
}

bool is_digits(std::string_view s) {
  if (s.empty() || s.size() > 18) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// A request as the pages see it: the HTTP request and its parsed query.
struct Call {
  const HttpRequest& req;
  Params params;
  std::string id;  // the route's workload id, when it has one
};

class Dashboard : public service::HttpHandler {
 public:
  explicit Dashboard(const DashboardConfig& cfg)
      : cfg_(cfg), pool_(cfg.store_url, cfg.password, std::max(1u, cfg.threads)), hosts_(cfg.host, cfg.allowed_hosts) {}
  int run();

  // service::HttpHandler: on the loop, the request's head.
  bool on_head(HttpRequest& req, HttpResponse& res) override;
  // Nothing is charged: no body is kept (on_head refuses them), and the few
  // bytes that arrive with a head go with its connection.
  bool reserve_body(size_t) override { return true; }
  void release(size_t) override {}
  // On a worker: a page, a JSON document or an asset.
  void handle(HttpRequest& req, HttpResponse& res) override;
  void protocol_error(const std::string& message, const std::string& limit, HttpResponse& res) override;
  void answered(const HttpRequest& req, const HttpResponse& res, double seconds) override;

 private:
  struct Timing {
    Clock::time_point start = Clock::now();
    double db_ms = 0;
  };
  // Runs `fn(reader)` with a pooled connection, timing it. On failure the
  // response is a 503 page (or JSON) that says the store could not be read;
  // the database's own message goes to the log only.
  template <typename Fn>
  bool with_store(const Call& call, HttpResponse& res, Timing& t, Fn&& fn);
  void finish(HttpResponse& res, const Timing& t);
  void send_page(HttpResponse& res, int status, const std::string& html);
  void send_json(HttpResponse& res, int status, const ojson& j);
  void send_error(const std::string& path, HttpResponse& res, int status, const std::string& message);
  bool facets(blueprint::StoreReader& r, blueprint::StoreFacets& f, std::string& error);
  PageFrame frame(const std::string& title, const std::string& nav) const;
  void log_line(const std::string& line);
  void route(Call& call, HttpResponse& res);

  void handle_list(const Call& call, HttpResponse& res, bool json);
  void handle_workload(const Call& call, HttpResponse& res);
  // The verdict of the route's id into `d`; false when the response (404, 503) is already made.
  bool load_verdict(const Call& call, HttpResponse& res, Timing& t, blueprint::VerdictDetail& d);
  void handle_verdict_json(const Call& call, HttpResponse& res);
  void handle_timeline(const Call& call, HttpResponse& res);
  void handle_fleet(const Call& call, HttpResponse& res, const std::string& what);
  void handle_offenders(const Call& call, HttpResponse& res);
  void handle_asset(const Call& call, HttpResponse& res);

  DashboardConfig cfg_;
  ReaderPool pool_;
  HostAllowList hosts_;
  std::string warning_;
  std::mutex log_mu_;
  // The filter form's choices, refreshed at most every few seconds.
  std::mutex facets_mu_;
  std::optional<blueprint::StoreFacets> facets_;
  Clock::time_point facets_at_;
  std::vector<std::string> asset_etags_;
};

// Every answer, refusals and protocol errors included, carries these.
void security_headers(HttpResponse& res) {
  res.set_header("Content-Security-Policy", kSecurityPolicy);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Cross-Origin-Resource-Policy", "same-origin");
}

PageFrame Dashboard::frame(const std::string& title, const std::string& nav) const {
  PageFrame f;
  f.title = title;
  f.nav = nav;
  f.store_url = pool_.url();
  f.notice = warning_;
  return f;
}

void Dashboard::log_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mu_);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void Dashboard::finish(HttpResponse& res, const Timing& t) {
  res.set_header("Server-Timing", fmt::format("db;dur={:.2f}, total;dur={:.2f}", t.db_ms, ms_since(t.start)));
}

void Dashboard::send_page(HttpResponse& res, int status, const std::string& html) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(html, "text/html; charset=utf-8");
}

void Dashboard::send_json(HttpResponse& res, int status, const ojson& j) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
}

void Dashboard::send_error(const std::string& path, HttpResponse& res, int status, const std::string& message) {
  bool json = path.rfind("/api/", 0) == 0 || (path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0);
  if (json) {
    const char* code = status == 400   ? "bad_request"
                       : status == 404 ? "not_found"
                       : status == 405 ? "method_not_allowed"
                       : status == 421 ? "misdirected_request"
                       : status == 503 ? "store_unavailable"
                                       : "error";
    send_json(res, status, {{"error", {{"code", code}, {"message", message}}}});
  } else {
    send_page(res, status, error_page(frame("Error", ""), status, message));
  }
}

template <typename Fn>
bool Dashboard::with_store(const Call& call, HttpResponse& res, Timing& t, Fn&& fn) {
  auto t0 = Clock::now();
  std::string error;
  auto lease = pool_.acquire(error);
  bool ok = lease && fn(*lease.operator->(), error);
  t.db_ms += ms_since(t0);
  if (ok) return true;
  if (lease) lease.broken();
  log_line(fmt::format("culprit dashboard: {} {}: store error: {}\n", call.req.method, call.req.path, error));
  send_error(call.req.path, res, 503, "The store could not be read just now; the dashboard's log says why. Try again shortly.");
  return false;
}

bool Dashboard::facets(blueprint::StoreReader& r, blueprint::StoreFacets& f, std::string& error) {
  {
    std::lock_guard<std::mutex> lock(facets_mu_);
    if (facets_ && Clock::now() - facets_at_ < std::chrono::seconds(5)) {
      f = *facets_;
      return true;
    }
  }
  if (!r.facets(f, error)) return false;
  std::lock_guard<std::mutex> lock(facets_mu_);
  facets_ = f;
  facets_at_ = Clock::now();
  return true;
}

void Dashboard::handle_list(const Call& call, HttpResponse& res, bool json) {
  Timing t;
  ListQuery q;
  std::string error;
  if (!parse_list_query(call.params, q, error)) return send_error(call.req.path, res, 400, error);
  std::vector<blueprint::VerdictSummary> rows;
  int64_t total = 0;
  blueprint::StoreFacets f;
  if (!with_store(call, res, t, [&](blueprint::StoreReader& r, std::string& e) {
        return r.list(q.filter, q.page, rows, total, e) && (json || facets(r, f, e));
      }))
    return;
  if (json) send_json(res, 200, list_json(q, rows, total));
  else send_page(res, 200, list_page(frame("Workloads", "workloads"), q, f, rows, total));
  finish(res, t);
}

void Dashboard::handle_workload(const Call& call, HttpResponse& res) {
  Timing t;
  int64_t id = 0;
  if (!parse_id(call.id, id)) return send_error(call.req.path, res, 404, "No such workload verdict.");
  blueprint::VerdictDetail d;
  std::vector<blueprint::RelatedVerdict> related;
  bool found = false;
  if (!with_store(call, res, t, [&](blueprint::StoreReader& r, std::string& e) {
        return r.verdict(id, d, found, e) && (!found || r.related(id, related, e));
      }))
    return;
  if (!found) return send_error(call.req.path, res, 404, fmt::format("There is no verdict {} in this store.", id));
  VerdictView view;
  std::string error;
  if (!make_verdict_view(d.verdict_json, view, error)) return send_error(call.req.path, res, 500, error);
  send_page(res, 200, workload_page(frame("Job " + d.summary.workload_id, "workloads"), d, view, related));
  finish(res, t);
}

bool Dashboard::load_verdict(const Call& call, HttpResponse& res, Timing& t, blueprint::VerdictDetail& d) {
  int64_t id = 0;
  if (!parse_id(call.id, id)) {
    send_error(call.req.path, res, 404, "no such verdict");
    return false;
  }
  bool found = false;
  if (!with_store(call, res, t, [&](blueprint::StoreReader& r, std::string& e) { return r.verdict(id, d, found, e); }))
    return false;
  if (!found) send_error(call.req.path, res, 404, fmt::format("there is no verdict {} in this store", id));
  return found;
}

void Dashboard::handle_verdict_json(const Call& call, HttpResponse& res) {
  Timing t;
  blueprint::VerdictDetail d;
  if (!load_verdict(call, res, t, d)) return;
  res.set_header("Cache-Control", "no-store");
  res.set_header("Content-Disposition", fmt::format("inline; filename=\"verdict-{}.json\"", d.summary.id));
  res.set_content(d.verdict_json, "application/json");  // exactly the stored bytes
  finish(res, t);
}

void Dashboard::handle_timeline(const Call& call, HttpResponse& res) {
  Timing t;
  blueprint::VerdictDetail d;
  if (!load_verdict(call, res, t, d)) return;
  VerdictView view;
  std::string error;
  if (!make_verdict_view(d.verdict_json, view, error)) return send_error(call.req.path, res, 500, error);
  send_json(res, 200, timeline_json(view));
  finish(res, t);
}

// The repeat offenders of a window back from now (or `until`): the same
// document as `culprit offenders --format json`.
void Dashboard::handle_offenders(const Call& call, HttpResponse& res) {
  Timing t;
  std::vector<std::string> domains;
  bool all = false;
  for (const auto& [k, v] : call.params) {
    if (k == "domain") domains.push_back(v);
    else if (k == "all") all = v == "true" || v == "1";
    else if (k != "since" && k != "until" && k != "min")
      return send_error(call.req.path, res, 400, fmt::format("unknown parameter '{}' (since, until, min, domain, all)", k));
  }
  OffendersQuery q;
  std::string error;
  std::vector<blueprint::Offender> offenders;
  bool bad = false;
  if (!with_store(call, res, t, [&](blueprint::StoreReader& r, std::string& e) {
        if (!parse_offenders_query(first_param(call.params, "since"), first_param(call.params, "until"),
                                   first_param(call.params, "min"), domains, all, now_ns(), q, error)) {
          bad = true;
          return true;
        }
        if (first_param(call.params, "since").empty() && first_param(call.params, "until").empty()) {
          blueprint::StoreFacets f;
          if (!facets(r, f, e)) return false;
          offenders_stale_store_window(f.first_end_ns, f.last_end_ns, now_ns(), q);
        }
        return r.offenders(q.from_ns, q.until_ns, q.min_attempts, -1, q.domains, offenders, e);
      }))
    return;
  if (bad) return send_error(call.req.path, res, 400, error);
  send_json(res, 200, offenders_window_json(q.from_ns, q.until_ns, q.min_attempts, q.domains, offenders));
  finish(res, t);
}

void Dashboard::handle_fleet(const Call& call, HttpResponse& res, const std::string& what) {
  Timing t;
  blueprint::StoreFacets f;
  FleetQuery q;
  std::string error;
  std::vector<blueprint::OutcomeCount> outcomes;
  std::vector<blueprint::Offender> offenders;
  bool bad = false;
  if (!with_store(call, res, t, [&](blueprint::StoreReader& r, std::string& e) {
        if (!facets(r, f, e)) return false;
        if (!parse_fleet_query(call.params, f.first_end_ns, f.last_end_ns, now_ns(), q, error)) {
          bad = true;
          return true;
        }
        if (what != "offenders" && !r.outcomes(q.from_ns, q.before_ns, q.bucket_ns, outcomes, e)) return false;
        if ((what == "page" || what == "offenders") && !r.offenders(q.from_ns, q.before_ns, q.min_attempts, 50, node_fault_domains(), offenders, e))
          return false;
        return true;
      }))
    return;
  if (bad) return send_error(call.req.path, res, 400, error);
  if (what == "page") send_page(res, 200, fleet_page(frame("Fleet", "fleet"), q, f, outcomes, offenders));
  else if (what == "domains") send_json(res, 200, domains_json(q, outcomes));
  else if (what == vocab::status::kUnattributed) send_json(res, 200, unattributed_json(q, outcomes));
  else send_json(res, 200, offenders_json(q, offenders));
  finish(res, t);
}

void Dashboard::handle_asset(const Call& call, HttpResponse& res) {
  for (size_t i = 0; i < kAssetCount; ++i) {
    const Asset& a = kAssets[i];
    if (call.req.path != a.path) continue;
    const std::string& etag = asset_etags_[i];
    res.set_header("ETag", etag);
    res.set_header("Cache-Control", "no-cache");  // revalidate: cheap with the ETag, and never stale after an upgrade
    if (call.req.header("if-none-match") == etag) {
      res.status = 304;
      return;
    }
    res.set_content(std::string(reinterpret_cast<const char*>(a.data), a.size), a.content_type);
    return;
  }
  send_error(call.req.path, res, 404, "No such asset.");
}

// Routes by the path as sent (not percent-decoded): every link the pages
// make is plain ASCII, and a workload id is digits.
void Dashboard::route(Call& call, HttpResponse& res) {
  const std::string& path = call.req.path;
  std::string_view rest;
  if (path == "/") {
    size_t q = call.req.target.find('?');
    res.status = 302;
    res.set_header("Location", "/workloads" + (q == std::string::npos ? std::string() : call.req.target.substr(q)));
    return;
  }
  if (path == "/workloads") return handle_list(call, res, false);
  if (path == "/api/workloads") return handle_list(call, res, true);
  if (path == "/fleet") return handle_fleet(call, res, "page");
  if (path == "/api/fleet/domains") return handle_fleet(call, res, "domains");
  if (path == "/api/fleet/unattributed") return handle_fleet(call, res, vocab::status::kUnattributed);
  if (path == "/api/fleet/offenders") return handle_fleet(call, res, "offenders");
  if (path == "/api/offenders") return handle_offenders(call, res);
  if (strip_prefix(path, "/workloads/", rest)) {
    size_t slash = rest.find('/');
    std::string_view id = rest.substr(0, slash), tail = slash == std::string_view::npos ? "" : rest.substr(slash);
    if (is_digits(id) && tail.empty()) {
      call.id = std::string(id);
      return handle_workload(call, res);
    }
    if (is_digits(id) && tail == "/verdict.json") {
      call.id = std::string(id);
      return handle_verdict_json(call, res);
    }
  }
  if (strip_prefix(path, "/api/workloads/", rest)) {
    size_t slash = rest.find('/');
    std::string_view id = rest.substr(0, slash), tail = slash == std::string_view::npos ? "" : rest.substr(slash);
    if (is_digits(id) && tail == "/timeline") {
      call.id = std::string(id);
      return handle_timeline(call, res);
    }
  }
  if (strip_prefix(path, "/assets/", rest) && !rest.empty()) return handle_asset(call, res);
  send_error(path, res, 404, "There is no such page.");
}

bool Dashboard::on_head(HttpRequest& req, HttpResponse& res) {
  security_headers(res);
  // Nothing here writes: any method but GET and HEAD is refused on every
  // path before a route (or a body) is looked at.
  if (req.method != "GET" && req.method != "HEAD") {
    res.set_header("Allow", "GET, HEAD");
    res.close = true;  // whatever body came is not read
    send_error(req.path, res, 405,
               fmt::format("{} is not allowed: the dashboard is read-only (GET and HEAD only).",
                           req.method.size() <= 32 ? req.method : req.method.substr(0, 32)));
    return true;
  }
  if (req.has_body()) {
    res.close = true;
    send_error(req.path, res, 400, "A GET request has no body.");
    return true;
  }
  if (req.path == "/healthz") {
    // On the loop: it answers however busy (or slowly fed) the workers are,
    // whatever the Host (health checkers address the pod or the address).
    send_json(res, 200, {{"status", "ok"}, {"store", pool_.url()}, {"schema_version", pool_.schema_version()}, {"read_only", true}});
    return true;
  }
  // DNS rebinding: a page of another site whose name was made to resolve
  // here sends its own name as Host (dashboard/host_allow.h).
  if (!req.has_header("host")) {
    if (req.minor_version == 0) return false;  // HTTP/1.0 may omit it; no browser does
    res.close = true;
    send_error(req.path, res, 400, "An HTTP/1.1 request needs a Host header (RFC 9112, section 3.2).");
    return true;
  }
  if (!hosts_.allows(req.header("host"))) {
    send_error(req.path, res, 421,
               "This dashboard does not answer for that host name (the request's Host header): browse it by its "
               "loopback or --listen address, or start it with --allow-host NAME.");
    return true;
  }
  return false;
}

void Dashboard::handle(HttpRequest& req, HttpResponse& res) {
  Call call{req, query_params(req.target), {}};
  try {
    route(call, res);
  } catch (const std::exception& e) {
    log_line(fmt::format("culprit dashboard: {} {}: internal error: {}\n", req.method, req.path, e.what()));
    res = HttpResponse{};
    send_error(req.path, res, 500, "Internal error; the dashboard's log has the details.");
  }
  security_headers(res);
}

// Malformed requests, limits, timeouts and the 503 of a full server: the
// request (if any) is not known here, so the answer is plain text.
void Dashboard::protocol_error(const std::string& message, const std::string&, HttpResponse& res) {
  security_headers(res);
  res.set_header("Cache-Control", "no-store");
  res.set_content(message + "\n", "text/plain; charset=utf-8");
}

void Dashboard::answered(const HttpRequest& req, const HttpResponse& res, double seconds) {
  if (!cfg_.access_log) return;
  ojson j;
  j["ts"] = format_rfc3339(now_ns());
  j["remote"] = req.remote_addr;
  j["method"] = req.method.substr(0, 32);
  j["path"] = req.path.substr(0, 512);
  j["status"] = res.status;
  j["bytes_out"] = req.method == "HEAD" ? 0 : res.body.size();
  j["ms"] = std::round(seconds * 1e6) / 1e3;
  log_line(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

int Dashboard::run() {
  std::string error;
  if (!pool_.start(error, warning_)) {
    std::cerr << "culprit dashboard: " << error << "\n";
    return 3;
  }
  if (!warning_.empty()) std::cerr << "culprit dashboard: warning: " << warning_ << "\n";
  for (size_t i = 0; i < kAssetCount; ++i)
    asset_etags_.push_back(
        "\"" + sha256_hex(std::string_view(reinterpret_cast<const char*>(kAssets[i].data), kAssets[i].size)).substr(0, 16) + "\"");

  std::string host = cfg_.host.find(':') != std::string::npos ? "[" + cfg_.host + "]" : cfg_.host;
  if (!is_loopback_host(cfg_.host))
    std::cerr << fmt::format(
        "culprit dashboard: warning: listening on {}, which is not a loopback address: the dashboard has no login, so "
        "anyone who can reach it reads every verdict; prefer 127.0.0.1 behind a reverse proxy with authentication. "
        "Requests that name another host than loopback, {} or an --allow-host name get 421.\n",
        host, host);

  service::HttpServerConfig hc;
  hc.host = cfg_.host;
  hc.port = cfg_.port;
  hc.threads = std::max(1u, cfg_.threads);
  hc.parse_limits = {limits::kRequestHead, limits::kHeaderLine, limits::kHeaderCount, kNoBodyLimit};
  hc.max_connections = cfg_.max_connections;
  hc.max_requests_per_connection = 100;
  // No bodies: a request is its head, so both deadlines are the read timeout.
  hc.header_timeout_s = hc.request_timeout_s = cfg_.read_timeout_s;
  hc.write_timeout_s = cfg_.write_timeout_s;
  hc.keep_alive_s = cfg_.keep_alive_s;
  hc.drain_timeout_s = cfg_.drain_timeout_s;
  service::HttpServer server(hc, *this);
  int port = server.bind(error);
  if (port <= 0) {
    std::cerr << fmt::format("culprit dashboard: cannot listen on {}:{}: {}\n", host, cfg_.port, error);
    return 2;
  }
  std::atomic<bool> done{false};
  std::thread loop([&] {
    server.run();
    done = true;
  });
  // Turns SIGTERM/SIGINT (g_stop, set by the signal waiter) into the drain.
  std::thread stopper([&] {
    while (!done.load()) {
      if (g_stop.load() && !server.stopping()) server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  std::cerr << fmt::format("culprit dashboard: serving {} (read-only, schema {}) on http://{}:{}/\n", pool_.url(),
                           pool_.schema_version(), host, port);
  if (!cfg_.port_file.empty()) {
    std::ofstream pf(cfg_.port_file + ".tmp");
    pf << port << "\n";
    pf.close();
    std::rename((cfg_.port_file + ".tmp").c_str(), cfg_.port_file.c_str());
  }
  loop.join();
  stopper.join();
  if (size_t n = server.abandoned()) {
    // A worker still builds a page nobody will receive: the drain deadline
    // is a promise, so do not wait for it nor run destructors under it.
    std::cerr << fmt::format("culprit dashboard: stopped at the drain deadline ({} request{} abandoned)\n", n,
                             n == 1 ? "" : "s");
    std::fflush(stderr);
    std::_Exit(0);
  }
  std::cerr << "culprit dashboard: stopped\n";
  return 0;
}

}  // namespace

void request_stop() { g_stop.store(true); }

int run_dashboard(const DashboardConfig& config) {
  signal(SIGPIPE, SIG_IGN);  // a browser that goes away is a failed write, not a dead process
  return run_until_stop_signal(g_stop, "culprit dashboard", [&] {
    Dashboard d(config);
    return d.run();
  });
}

}  // namespace culprit::dashboard
