#include "dashboard/server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include "base/sha256.h"
#include "base/stop_signals.h"
#include "base/timestamp.h"
#include "blueprint/store_reader.h"
#include "dashboard/assets.h"
#include "dashboard/pages.h"

namespace culprit::dashboard {

namespace {

using Clock = std::chrono::steady_clock;
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

class Dashboard {
 public:
  explicit Dashboard(const DashboardConfig& cfg) : cfg_(cfg), pool_(cfg.store_url, cfg.password, std::max(1u, cfg.threads)) {}
  int run();

 private:
  struct Timing {
    Clock::time_point start = Clock::now();
    double db_ms = 0;
  };
  // Runs `fn(reader)` with a pooled connection, timing it. On failure the
  // response is a 503 page (or JSON) that says the store could not be read;
  // the database's own message goes to the log only.
  template <typename Fn>
  bool with_store(const httplib::Request& req, httplib::Response& res, Timing& t, bool json, Fn&& fn);
  void finish(httplib::Response& res, const Timing& t);
  void send_page(httplib::Response& res, int status, const std::string& html);
  void send_json(httplib::Response& res, int status, const ojson& j);
  void send_error(const httplib::Request& req, httplib::Response& res, int status, const std::string& message);
  bool facets(blueprint::StoreReader& r, blueprint::StoreFacets& f, std::string& error);
  PageFrame frame(const std::string& title, const std::string& nav) const;
  void install_routes();
  void log_request(const httplib::Request& req, const httplib::Response& res);

  void handle_list(const httplib::Request& req, httplib::Response& res, bool json);
  void handle_workload(const httplib::Request& req, httplib::Response& res);
  // The verdict of the route's id into `d`; false when the response (404, 503) is already made.
  bool load_verdict(const httplib::Request& req, httplib::Response& res, Timing& t, blueprint::VerdictDetail& d);
  void handle_verdict_json(const httplib::Request& req, httplib::Response& res);
  void handle_timeline(const httplib::Request& req, httplib::Response& res);
  void handle_fleet(const httplib::Request& req, httplib::Response& res, const std::string& what);
  void handle_offenders(const httplib::Request& req, httplib::Response& res);
  void handle_asset(const httplib::Request& req, httplib::Response& res);

  DashboardConfig cfg_;
  ReaderPool pool_;
  std::string warning_;
  httplib::Server svr_;
  std::mutex log_mu_;
  // The filter form's choices, refreshed at most every few seconds.
  std::mutex facets_mu_;
  std::optional<blueprint::StoreFacets> facets_;
  Clock::time_point facets_at_;
  std::vector<std::string> asset_etags_;
};

PageFrame Dashboard::frame(const std::string& title, const std::string& nav) const {
  PageFrame f;
  f.title = title;
  f.nav = nav;
  f.store_url = pool_.url();
  f.notice = warning_;
  return f;
}

void Dashboard::finish(httplib::Response& res, const Timing& t) {
  res.set_header("Server-Timing", fmt::format("db;dur={:.2f}, total;dur={:.2f}", t.db_ms, ms_since(t.start)));
}

void Dashboard::send_page(httplib::Response& res, int status, const std::string& html) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(html, "text/html; charset=utf-8");
}

void Dashboard::send_json(httplib::Response& res, int status, const ojson& j) {
  res.status = status;
  res.set_header("Cache-Control", "no-store");
  res.set_content(j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
}

void Dashboard::send_error(const httplib::Request& req, httplib::Response& res, int status, const std::string& message) {
  bool json = req.path.rfind("/api/", 0) == 0 ||
              (req.path.size() > 5 && req.path.compare(req.path.size() - 5, 5, ".json") == 0);
  if (json) {
    const char* code = status == 400 ? "bad_request" : status == 404 ? "not_found" : status == 405 ? "method_not_allowed"
                       : status == 503                               ? "store_unavailable"
                                                                     : "error";
    send_json(res, status, {{"error", {{"code", code}, {"message", message}}}});
  } else {
    send_page(res, status, error_page(frame("Error", ""), status, message));
  }
}

template <typename Fn>
bool Dashboard::with_store(const httplib::Request& req, httplib::Response& res, Timing& t, bool json, Fn&& fn) {
  auto t0 = Clock::now();
  std::string error;
  auto lease = pool_.acquire(error);
  bool ok = lease && fn(*lease.operator->(), error);
  t.db_ms += ms_since(t0);
  if (ok) return true;
  if (lease) lease.broken();
  {
    std::lock_guard<std::mutex> lock(log_mu_);
    std::cerr << fmt::format("culprit dashboard: {} {}: store error: {}\n", req.method, req.path, error);
  }
  (void)json;
  send_error(req, res, 503, "The store could not be read just now; the dashboard's log says why. Try again shortly.");
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

void Dashboard::handle_list(const httplib::Request& req, httplib::Response& res, bool json) {
  Timing t;
  ListQuery q;
  std::string error;
  if (!parse_list_query(req.params, q, error)) return send_error(req, res, 400, error);
  std::vector<blueprint::VerdictSummary> rows;
  int64_t total = 0;
  blueprint::StoreFacets f;
  if (!with_store(req, res, t, json, [&](blueprint::StoreReader& r, std::string& e) {
        return r.list(q.filter, q.page, rows, total, e) && (json || facets(r, f, e));
      }))
    return;
  if (json) send_json(res, 200, list_json(q, rows, total));
  else send_page(res, 200, list_page(frame("Workloads", "workloads"), q, f, rows, total));
  finish(res, t);
}

bool parse_id(const std::string& s, int64_t& id) {
  if (s.empty() || s.size() > 18) return false;
  id = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    id = id * 10 + (c - '0');
  }
  return true;
}

void Dashboard::handle_workload(const httplib::Request& req, httplib::Response& res) {
  Timing t;
  int64_t id = 0;
  if (!parse_id(req.matches[1], id)) return send_error(req, res, 404, "No such workload verdict.");
  blueprint::VerdictDetail d;
  std::vector<blueprint::RelatedVerdict> related;
  bool found = false;
  if (!with_store(req, res, t, false, [&](blueprint::StoreReader& r, std::string& e) {
        return r.verdict(id, d, found, e) && (!found || r.related(id, related, e));
      }))
    return;
  if (!found) return send_error(req, res, 404, fmt::format("There is no verdict {} in this store.", id));
  VerdictView view;
  std::string error;
  if (!make_verdict_view(d.verdict_json, view, error)) return send_error(req, res, 500, error);
  send_page(res, 200, workload_page(frame("Job " + d.summary.workload_id, "workloads"), d, view, related));
  finish(res, t);
}

bool Dashboard::load_verdict(const httplib::Request& req, httplib::Response& res, Timing& t, blueprint::VerdictDetail& d) {
  int64_t id = 0;
  if (!parse_id(req.matches[1], id)) {
    send_error(req, res, 404, "no such verdict");
    return false;
  }
  bool found = false;
  if (!with_store(req, res, t, true, [&](blueprint::StoreReader& r, std::string& e) { return r.verdict(id, d, found, e); }))
    return false;
  if (!found) send_error(req, res, 404, fmt::format("there is no verdict {} in this store", id));
  return found;
}

void Dashboard::handle_verdict_json(const httplib::Request& req, httplib::Response& res) {
  Timing t;
  blueprint::VerdictDetail d;
  if (!load_verdict(req, res, t, d)) return;
  res.set_header("Cache-Control", "no-store");
  res.set_header("Content-Disposition", fmt::format("inline; filename=\"verdict-{}.json\"", d.summary.id));
  res.set_content(d.verdict_json, "application/json");  // exactly the stored bytes
  finish(res, t);
}

void Dashboard::handle_timeline(const httplib::Request& req, httplib::Response& res) {
  Timing t;
  blueprint::VerdictDetail d;
  if (!load_verdict(req, res, t, d)) return;
  VerdictView view;
  std::string error;
  if (!make_verdict_view(d.verdict_json, view, error)) return send_error(req, res, 500, error);
  send_json(res, 200, timeline_json(view));
  finish(res, t);
}

// The repeat offenders of a window back from now (or `until`): the same
// document as `culprit offenders --format json`.
void Dashboard::handle_offenders(const httplib::Request& req, httplib::Response& res) {
  Timing t;
  for (const auto& [k, v] : req.params)
    if (k != "since" && k != "until" && k != "min")
      return send_error(req, res, 400, fmt::format("unknown parameter '{}' (since, until, min)", k));
  OffendersQuery q;
  std::string error;
  if (!parse_offenders_query(req.get_param_value("since"), req.get_param_value("until"), req.get_param_value("min"), now_ns(),
                             q, error))
    return send_error(req, res, 400, error);
  std::vector<blueprint::Offender> offenders;
  if (!with_store(req, res, t, true, [&](blueprint::StoreReader& r, std::string& e) {
        return r.offenders(q.from_ns, q.until_ns, q.min_attempts, -1, offenders, e);
      }))
    return;
  send_json(res, 200, offenders_window_json(q.from_ns, q.until_ns, q.min_attempts, offenders));
  finish(res, t);
}

void Dashboard::handle_fleet(const httplib::Request& req, httplib::Response& res, const std::string& what) {
  Timing t;
  blueprint::StoreFacets f;
  FleetQuery q;
  std::string error;
  std::vector<blueprint::OutcomeCount> outcomes;
  std::vector<blueprint::Offender> offenders;
  bool bad = false;
  if (!with_store(req, res, t, what != "page", [&](blueprint::StoreReader& r, std::string& e) {
        if (!facets(r, f, e)) return false;
        if (!parse_fleet_query(req.params, f.first_end_ns, f.last_end_ns, now_ns(), q, error)) {
          bad = true;
          return true;
        }
        if (what != "offenders" && !r.outcomes(q.from_ns, q.before_ns, q.bucket_ns, outcomes, e)) return false;
        if ((what == "page" || what == "offenders") && !r.offenders(q.from_ns, q.before_ns, q.min_attempts, 50, offenders, e))
          return false;
        return true;
      }))
    return;
  if (bad) return send_error(req, res, 400, error);
  if (what == "page") send_page(res, 200, fleet_page(frame("Fleet", "fleet"), q, f, outcomes, offenders));
  else if (what == "domains") send_json(res, 200, domains_json(q, outcomes));
  else if (what == "unattributed") send_json(res, 200, unattributed_json(q, outcomes));
  else send_json(res, 200, offenders_json(q, offenders));
  finish(res, t);
}

void Dashboard::handle_asset(const httplib::Request& req, httplib::Response& res) {
  for (size_t i = 0; i < kAssetCount; ++i) {
    const Asset& a = kAssets[i];
    if (req.path != a.path) continue;
    const std::string& etag = asset_etags_[i];
    res.set_header("ETag", etag);
    res.set_header("Cache-Control", "no-cache");  // revalidate: cheap with the ETag, and never stale after an upgrade
    if (req.get_header_value("If-None-Match") == etag) {
      res.status = 304;
      return;
    }
    res.set_content(reinterpret_cast<const char*>(a.data), a.size, a.content_type);
    return;
  }
  send_error(req, res, 404, "No such asset.");
}

void Dashboard::log_request(const httplib::Request& req, const httplib::Response& res) {
  if (!cfg_.access_log) return;
  ojson j;
  j["ts"] = format_rfc3339(now_ns());
  j["remote"] = req.remote_addr;
  j["method"] = req.method;
  j["path"] = req.path;
  j["status"] = res.status;
  j["bytes_out"] = res.body.size();
  std::string timing = res.get_header_value("Server-Timing");
  size_t at = timing.find("total;dur=");
  if (at != std::string::npos) j["ms"] = std::atof(timing.c_str() + at + 10);
  std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard<std::mutex> lock(log_mu_);
  std::fwrite(line.data(), 1, line.size(), stderr);
}

void Dashboard::install_routes() {
  svr_.set_default_headers({{"Content-Security-Policy", kSecurityPolicy},
                            {"X-Content-Type-Options", "nosniff"},
                            {"Referrer-Policy", "no-referrer"},
                            {"X-Frame-Options", "DENY"},
                            {"Cross-Origin-Resource-Policy", "same-origin"}});
  // Nothing here writes: any method but GET and HEAD is refused on every
  // path before a route (or a body) is looked at.
  svr_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD") {
      bool body = req.has_header("Content-Length") ? req.get_header_value("Content-Length") != "0"
                                                   : req.has_header("Transfer-Encoding");
      if (!body) return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("Connection", "close");
      send_error(req, res, 400, "A GET request has no body.");
      return httplib::Server::HandlerResponse::Handled;
    }
    res.set_header("Allow", "GET, HEAD");
    res.set_header("Connection", "close");  // whatever body came is not read
    send_error(req, res, 405, fmt::format("{} is not allowed: the dashboard is read-only (GET and HEAD only).", req.method));
    return httplib::Server::HandlerResponse::Handled;
  });
  svr_.set_logger([this](const httplib::Request& q, const httplib::Response& s) { log_request(q, s); });
  svr_.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    int status = res.status;
    send_error(req, res, status,
               status == 404 ? "There is no such page." : fmt::format("The request was not understood (HTTP {}).", status));
    return httplib::Server::HandlerResponse::Handled;
  }));
  svr_.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    {
      std::lock_guard<std::mutex> lock(log_mu_);
      std::cerr << fmt::format("culprit dashboard: {} {}: internal error: {}\n", req.method, req.path, what);
    }
    send_error(req, res, 500, "Internal error; the dashboard's log has the details.");
  });

  svr_.Get("/", [](const httplib::Request& req, httplib::Response& res) {
    std::string query = req.target.find('?') == std::string::npos ? "" : req.target.substr(req.target.find('?'));
    res.set_redirect("/workloads" + query, 302);
  });
  svr_.Get("/workloads", [this](const httplib::Request& q, httplib::Response& s) { handle_list(q, s, false); });
  svr_.Get("/api/workloads", [this](const httplib::Request& q, httplib::Response& s) { handle_list(q, s, true); });
  svr_.Get(R"(/workloads/([0-9]{1,18}))", [this](const httplib::Request& q, httplib::Response& s) { handle_workload(q, s); });
  svr_.Get(R"(/workloads/([0-9]{1,18})/verdict\.json)",
           [this](const httplib::Request& q, httplib::Response& s) { handle_verdict_json(q, s); });
  svr_.Get(R"(/api/workloads/([0-9]{1,18})/timeline)",
           [this](const httplib::Request& q, httplib::Response& s) { handle_timeline(q, s); });
  svr_.Get("/fleet", [this](const httplib::Request& q, httplib::Response& s) { handle_fleet(q, s, "page"); });
  svr_.Get("/api/fleet/domains", [this](const httplib::Request& q, httplib::Response& s) { handle_fleet(q, s, "domains"); });
  svr_.Get("/api/fleet/unattributed",
           [this](const httplib::Request& q, httplib::Response& s) { handle_fleet(q, s, "unattributed"); });
  svr_.Get("/api/fleet/offenders", [this](const httplib::Request& q, httplib::Response& s) { handle_fleet(q, s, "offenders"); });
  svr_.Get("/api/offenders", [this](const httplib::Request& q, httplib::Response& s) { handle_offenders(q, s); });
  svr_.Get(R"(/assets/[A-Za-z0-9._-]+)", [this](const httplib::Request& q, httplib::Response& s) { handle_asset(q, s); });
  svr_.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200, {{"status", "ok"}, {"store", pool_.url()}, {"schema_version", pool_.schema_version()}, {"read_only", true}});
  });
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

  svr_.new_task_queue = [n = std::max(1u, cfg_.threads)] { return new httplib::ThreadPool(n); };
  svr_.set_read_timeout(cfg_.read_timeout_s, 0);
  svr_.set_write_timeout(cfg_.write_timeout_s, 0);
  svr_.set_keep_alive_timeout(cfg_.keep_alive_s);
  svr_.set_keep_alive_max_count(100);
  svr_.set_payload_max_length(0);
  svr_.set_tcp_nodelay(true);
  install_routes();

  int port = cfg_.port;
  if (port == 0) port = svr_.bind_to_any_port(cfg_.host);
  else if (!svr_.bind_to_port(cfg_.host, port)) port = -1;
  if (port <= 0) {
    std::cerr << fmt::format("culprit dashboard: cannot listen on {}:{}\n", cfg_.host, cfg_.port);
    return 2;
  }
  std::atomic<bool> done{false};
  std::thread server([&] {
    svr_.listen_after_bind();
    done = true;
  });
  std::thread stopper([&] {
    while (!done.load()) {
      if (g_stop.load()) svr_.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  std::string host = cfg_.host.find(':') != std::string::npos ? "[" + cfg_.host + "]" : cfg_.host;
  std::cerr << fmt::format("culprit dashboard: serving {} (read-only, schema {}) on http://{}:{}/\n", pool_.url(),
                           pool_.schema_version(), host, port);
  if (!cfg_.port_file.empty()) {
    std::ofstream pf(cfg_.port_file + ".tmp");
    pf << port << "\n";
    pf.close();
    std::rename((cfg_.port_file + ".tmp").c_str(), cfg_.port_file.c_str());
  }
  server.join();
  stopper.join();
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
