#include "blueprint/attribution.h"

#include <fmt/format.h>
#include <httplib.h>

#include <fstream>

#include "base/text_util.h"
#include "base/timestamp.h"
#include "runtime/collector_report_json.h"
#include "runtime/verdict_json.h"

namespace culprit::blueprint {

using ojson = nlohmann::ordered_json;

ojson context_json(const WorkloadContext& c) {
  ojson j;
  j["workload_id"] = c.workload_id;
  j["scheduler"] = c.scheduler;
  if (c.start) j["start"] = format_rfc3339(*c.start);
  if (c.end) j["end"] = format_rfc3339(*c.end);
  j["nodes"] = c.nodes;
  ojson t = ojson::object();
  if (!c.terminal.state.empty()) t["state"] = c.terminal.state;
  if (c.terminal.exit_code) t["exit_code"] = *c.terminal.exit_code;
  if (!t.empty()) j["terminal"] = t;
  return j;
}

bool InProcessAttribution::attribute(const Attempt& attempt, Collected&& ev, ojson& verdict, AttributionError& error) const {
  DiagnoseRequest r;
  r.context = attempt.context();
  r.files = std::move(ev.files);
  r.ignored_files = std::move(ev.ignored_files);
  r.observations = std::move(ev.observations);
  r.collectors = std::move(ev.reports);
  DiagnoseOptions opt = options_;
  opt.trail = explain_;
  Verdict v;
  if (!attributor_->attribute(std::move(r), opt, v, error.message)) {
    error.retry = false;
    return false;
  }
  verdict = verdict_to_json(v, explain_);
  return true;
}

std::unique_ptr<ServiceAttribution> ServiceAttribution::make(const ServiceClientConfig& c, bool explain, std::string& error) {
  auto s = std::unique_ptr<ServiceAttribution>(new ServiceAttribution());
  s->url_ = c.url;
  while (!s->url_.empty() && s->url_.back() == '/') s->url_.pop_back();
  s->timeout_ns_ = c.timeout;
  s->explain_ = explain;
  if (!c.token_file.empty() || !c.token_env.empty())
    if (!read_secret(c.token_file, c.token_env, s->token_, error)) return nullptr;
  httplib::Client probe(s->url_);
  if (!probe.is_valid()) {
    error = fmt::format("'{}' is not a usable service URL (http://HOST:PORT or https://...)", c.url);
    return nullptr;
  }
  return s;
}

namespace {

// Produces the NDJSON body piece by piece, so a large attempt is never held
// twice in memory.
class BodyWriter {
 public:
  BodyWriter(std::string head, std::vector<Observation>&& obs, std::vector<LogFile>&& files)
      : head_(std::move(head)), obs_(std::move(obs)), files_(std::move(files)) {}

  // The next chunk (about 1 MiB), or false at the end / on a read error.
  bool next(std::string& chunk) {
    chunk.clear();
    if (!head_.empty()) {
      chunk = std::move(head_);
      head_.clear();
      return true;
    }
    while (chunk.size() < (1u << 20)) {
      if (obs_i_ < obs_.size()) {
        const Observation& o = obs_[obs_i_++];
        ojson j;
        j["host"] = o.host;
        j["source"] = o.source;
        if (o.ts) j["ts"] = format_rfc3339(*o.ts);
        if (o.is_metric) {
          j["metric"] = o.metric;
          j["value"] = o.value;
          ojson labels = ojson::object();
          for (auto kv : split(o.labels, ',')) {
            size_t eq = kv.find('=');
            if (eq != std::string_view::npos) labels[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
          }
          j["labels"] = labels;
        } else {
          j["text"] = o.text;
        }
        if (!o.file.empty()) j["file"] = o.file;
        if (o.line > 0) j["line"] = o.line;
        if (o.offset > 0) j["offset"] = o.offset;
        chunk += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        chunk += '\n';
        continue;
      }
      if (file_i_ >= files_.size()) break;
      if (!in_.is_open()) {
        in_.open(files_[file_i_].path, std::ios::binary);
        line_ = 0;
        offset_ = 0;
        if (!in_) {
          error_ = "cannot read " + files_[file_i_].path;
          return false;
        }
      }
      std::string text;
      if (!std::getline(in_, text)) {
        in_.close();
        ++file_i_;
        continue;
      }
      bool had_newline = !in_.eof();
      if (had_newline) text += '\n';
      const LogFile& f = files_[file_i_];
      ojson j;
      j["host"] = f.host;
      j["source"] = f.source;
      j["file"] = f.display_path;
      j["line"] = ++line_;
      j["offset"] = offset_;
      offset_ += static_cast<int64_t>(text.size());
      j["text"] = std::move(text);
      chunk += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      chunk += '\n';
    }
    return !chunk.empty();
  }
  const std::string& error() const { return error_; }

 private:
  std::string head_;
  std::vector<Observation> obs_;
  std::vector<LogFile> files_;
  size_t obs_i_ = 0, file_i_ = 0;
  std::ifstream in_;
  int64_t line_ = 0, offset_ = 0;
  std::string error_;
};

}  // namespace

bool ServiceAttribution::ready(std::string& error) const {
  httplib::Client c(url_);
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(10, 0);
  auto r = c.Get("/readyz");
  if (!r) {
    error = fmt::format("cannot reach {}: {}", url_, httplib::to_string(r.error()));
    return false;
  }
  if (r->status != 200) {
    error = fmt::format("{} is not ready (HTTP {})", url_, r->status);
    return false;
  }
  return true;
}

bool ServiceAttribution::authorized(std::string& error) const {
  httplib::Client c(url_);
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(10, 0);
  httplib::Headers headers;
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  auto r = c.Get("/v1/catalog", headers);
  if (!r) {
    error = fmt::format("cannot reach {}: {}", url_, httplib::to_string(r.error()));
    return false;
  }
  if (r->status == 401) {
    error = fmt::format("{} refused {} (HTTP 401): give its token with --token-file or attribution.service.token_file",
                        url_, token_.empty() ? "a request without a token" : "the token");
    return false;
  }
  return true;
}

bool ServiceAttribution::attribute(const Attempt& attempt, Collected&& ev, ojson& verdict, AttributionError& error) const {
  ojson head;
  head["context"] = context_json(attempt.context());
  ojson reports = ojson::array();
  for (const auto& r : ev.reports) reports.push_back(collector_report_to_json(r));
  head["collectors"] = reports;
  auto writer = std::make_shared<BodyWriter>(head.dump() + "\n", std::move(ev.observations), std::move(ev.files));
  httplib::Client c(url_);
  int64_t secs = std::max<int64_t>(1, timeout_ns_ / 1000000000);
  c.set_connection_timeout(10, 0);
  c.set_read_timeout(static_cast<time_t>(secs), 0);
  c.set_write_timeout(static_cast<time_t>(secs), 0);
  httplib::Headers headers;
  if (!token_.empty()) headers.emplace("Authorization", "Bearer " + token_);
  std::string path = std::string("/v1/attributions?explain=") + (explain_ ? "true" : "false");
  auto r = c.Post(
      path.c_str(), headers,
      [writer](size_t, httplib::DataSink& sink) {
        std::string chunk;
        if (writer->next(chunk)) return sink.write(chunk.data(), chunk.size());
        if (!writer->error().empty()) return false;
        sink.done();
        return true;
      },
      "application/x-ndjson");
  if (!writer->error().empty()) {
    error = {writer->error(), true};
    return false;
  }
  if (!r) {
    error = {fmt::format("cannot reach the service {}: {}", url_, httplib::to_string(r.error())), true};
    return false;
  }
  if (r->status != 200) {
    auto j = nlohmann::json::parse(r->body, nullptr, false);
    std::string msg = r->body.substr(0, 300);
    if (!j.is_discarded() && j.contains("error") && j["error"].contains("message")) msg = j["error"]["message"].get<std::string>();
    error = {fmt::format("the service answered {}: {}", r->status, msg),
             r->status == 429 || r->status == 503 || r->status >= 500 || r->status == 401};
    return false;
  }
  verdict = ojson::parse(r->body, nullptr, false);
  if (verdict.is_discarded() || !verdict.is_object()) {
    error = {"the service's verdict is not JSON", true};
    return false;
  }
  return true;
}

}  // namespace culprit::blueprint
