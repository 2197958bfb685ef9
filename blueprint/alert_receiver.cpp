#include "blueprint/alert_receiver.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "base/limits.h"
#include "base/text_util.h"
#include "runtime/json_input.h"
#include "service/http_server.h"

namespace culprit::blueprint {

namespace {

// Alertmanager sends a group of alerts per POST; a thousand alerts with
// their labels and annotations stay well under this.
constexpr size_t kMaxPayload = 1u << 20;

void json_answer(service::HttpResponse& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

void error_answer(service::HttpResponse& res, int status, const std::string& message) {
  json_answer(res, status, {{"error", {{"code", status}, {"message", message}}}});
}

// The token is a secret: compared in time independent of where it differs.
bool same_secret(const std::string& given, const std::string& token) {
  if (given.size() != token.size() || token.empty()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < token.size(); ++i) diff |= static_cast<unsigned char>(given[i] ^ token[i]);
  return diff == 0;
}

}  // namespace

class AlertHandler final : public service::HttpHandler {
 public:
  AlertHandler(AlertReceiver& receiver, std::string token) : receiver_(receiver), token_(std::move(token)) {}

  bool on_head(service::HttpRequest& req, service::HttpResponse& res) override {
    if (req.path == "/healthz") {
      if (req.method != "GET" && req.method != "HEAD") {
        res.set_header("Allow", "GET, HEAD");
        error_answer(res, 405, "use GET");
      } else {
        json_answer(res, 200, {{"status", "ok"}});
      }
      return true;
    }
    if (req.path != "/v1/alertmanager") {
      error_answer(res, 404, "no such route; Alertmanager's webhook_config url is http://HOST:PORT/v1/alertmanager");
      return true;
    }
    if (req.method != "POST") {
      res.set_header("Allow", "POST");
      error_answer(res, 405, "use POST (Alertmanager's webhook payload)");
      return true;
    }
    if (!token_.empty()) {
      const std::string& auth = req.header("authorization");
      const std::string prefix = "Bearer ";
      if (auth.rfind(prefix, 0) != 0 || !same_secret(auth.substr(prefix.size()), token_)) {
        res.set_header("WWW-Authenticate", "Bearer");
        error_answer(res, 401, "a bearer token is required (webhook_config http_config.authorization)");
        return true;
      }
    }
    if (!req.has_body()) {
      error_answer(res, 400, "no payload");
      return true;
    }
    return false;
  }
  bool reserve_body(size_t) override { return true; }  // bounded by the parser's max_body
  void release(size_t) override {}
  void handle(service::HttpRequest& req, service::HttpResponse& res) override {
    std::string body;
    auto st = req.body.read(
        [&](const char* p, size_t n) {
          body.append(p, n);
          return true;
        },
        kMaxPayload);
    if (st == service::RequestBody::ReadStatus::TooLarge) return error_answer(res, 413, "payload over 1 MiB");
    if (st != service::RequestBody::ReadStatus::Ok) return error_answer(res, 400, "the payload could not be read");
    std::string answer;
    int status = receiver_.accept_payload(body, answer);
    res.status = status;
    res.set_content(answer, "application/json");
  }
  void protocol_error(const std::string& message, const std::string&, service::HttpResponse& res) override {
    error_answer(res, res.status, message);
  }
  void answered(const service::HttpRequest&, const service::HttpResponse&, double) override {}

 private:
  AlertReceiver& receiver_;
  std::string token_;
};

std::unique_ptr<AlertReceiver> AlertReceiver::start(const AlertReceiverConfig& config, std::string& error) {
  std::unique_ptr<AlertReceiver> r(new AlertReceiver());
  r->config_ = config;
  r->handler_ = std::make_unique<AlertHandler>(*r, config.token);
  service::HttpServerConfig hc;
  hc.host = config.host;
  hc.port = config.port;
  hc.threads = 1;
  hc.parse_limits = {limits::kRequestHead, limits::kHeaderLine, limits::kHeaderCount, kMaxPayload};
  hc.max_connections = 64;
  r->server_ = std::make_unique<service::HttpServer>(hc, *r->handler_);
  r->port_ = r->server_->bind(error);
  if (r->port_ < 0) {
    error = fmt::format("the alert receiver cannot listen on {}:{}: {}", config.host, config.port, error);
    return nullptr;
  }
  r->thread_ = std::thread([srv = r->server_.get()] { srv->run(); });
  return r;
}

AlertReceiver::~AlertReceiver() {
  if (server_) server_->stop();
  if (thread_.joinable()) thread_.join();
}

int AlertReceiver::accept_payload(const std::string& body, std::string& answer) {
  nlohmann::json j;
  std::string why;
  auto refuse = [&](const std::string& message) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_.refused;
    answer = nlohmann::json{{"error", {{"code", 400}, {"message", message}}}}.dump();
    return 400;
  };
  if (!parse_remote_json(body, j, why)) return refuse("the payload is not JSON: " + why);
  if (!j.is_object() || !j.contains("alerts") || !j["alerts"].is_array())
    return refuse("not an Alertmanager webhook payload: no 'alerts' array");
  AlertCounts add;
  add.payloads = 1;
  std::vector<std::pair<std::string, std::string>> named;  // (workload id, alert name)
  for (const auto& a : j["alerts"]) {
    if (!a.is_object() || !a.contains("labels") || !a["labels"].is_object())
      return refuse("an alert without a 'labels' object");
    const auto& labels = a["labels"];
    if (string_member_or(a, "status") != "firing") {
      ++add.resolved;
      continue;
    }
    if (labels.contains(config_.cluster_label) && string_member_or(labels, config_.cluster_label) != config_.cluster) {
      ++add.other_cluster;
      continue;
    }
    std::string id;
    for (const auto& l : config_.workload_labels) {
      id = string_member_or(labels, l);
      if (!id.empty()) break;
    }
    if (id.empty() || id.size() > 256) {
      ++add.unnamed;
      continue;
    }
    ++add.accepted;
    named.emplace_back(id, string_member_or(labels, "alertname"));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts_.payloads += add.payloads;
    counts_.accepted += add.accepted;
    counts_.resolved += add.resolved;
    counts_.other_cluster += add.other_cluster;
    counts_.unnamed += add.unnamed;
    for (const auto& [id, alertname] : named) {
      auto& w = wanted_[id];
      w = Wanted{};
      arrived_lines_.push_back(fmt::format("alert {} for workload {}: polling now", alertname.empty() ? "(unnamed)" : alertname, id));
    }
    if (!named.empty()) poll_now_ = true;
  }
  cv_.notify_all();
  answer = nlohmann::json{{"accepted", add.accepted}, {"resolved", add.resolved}, {"other_cluster", add.other_cluster},
                          {"without_workload", add.unnamed}}
               .dump();
  return 200;
}

bool AlertReceiver::wait(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(mu_);
  auto due = [&] {
    if (poll_now_) return true;
    auto now = std::chrono::steady_clock::now();
    for (const auto& [id, w] : wanted_)
      if (!w.fresh && w.due <= now) return true;
    return false;
  };
  return cv_.wait_for(lock, d, due);
}

std::vector<std::string> AlertReceiver::take(std::vector<std::string>& lines) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> ids;
  auto now = std::chrono::steady_clock::now();
  for (auto& [id, w] : wanted_)
    if (w.fresh || w.due <= now) {
      w.fresh = false;
      w.due = std::chrono::steady_clock::time_point::max();  // until settle() says when
      ids.push_back(id);
    }
  lines = std::move(arrived_lines_);
  arrived_lines_.clear();
  poll_now_ = false;
  return ids;
}

void AlertReceiver::settle(const std::set<std::string>& discovered, std::vector<std::string>& lines) {
  std::lock_guard<std::mutex> lock(mu_);
  auto now = std::chrono::steady_clock::now();
  for (auto it = wanted_.begin(); it != wanted_.end();) {
    Wanted& w = it->second;
    if (w.fresh || w.due != std::chrono::steady_clock::time_point::max()) {
      ++it;  // not looked for by this poll
      continue;
    }
    if (discovered.count(it->first)) {
      it = wanted_.erase(it);
      continue;
    }
    ++w.tries;
    if (w.tries > 4) {
      lines.push_back(fmt::format("workload {} (named by an alert) not discovered after {} polls; the regular polls will "
                                  "find it once the scheduler reports it ended",
                                  it->first, w.tries));
      it = wanted_.erase(it);
      continue;
    }
    const int seconds = 1 << w.tries;
    w.due = now + std::chrono::seconds(seconds);
    lines.push_back(fmt::format("workload {} (named by an alert) not discovered yet; polling again in {} s", it->first, seconds));
    ++it;
  }
}

AlertCounts AlertReceiver::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

}  // namespace culprit::blueprint
