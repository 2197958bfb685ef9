// Prometheus' HTTP API (docs/querying/api.md): query_range answers
// {"status":"success","data":{"resultType":"matrix","result":[{"metric":
// {...},"values":[[<unix seconds>,"<value>"],...]}]}}; errors answer
// {"status":"error","errorType":"bad_data|execution|timeout|...","error":"..."}
// with 400, 422 or 503. A range is limited to 11,000 points per series.
#include "blueprint/collect/promql_collector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "runtime/json_input.h"
#include "base/timestamp.h"
#include "blueprint/collect/loki_collector.h"

namespace culprit::blueprint {

using json = nlohmann::json;

namespace {

constexpr int64_t kMaxPoints = 10000;  // below Prometheus' 11,000 per series and request

std::string node_regex(const std::vector<std::string>& nodes) {
  std::string alt;
  for (const auto& n : nodes) alt += (alt.empty() ? "" : "|") + regex_escape(n);
  return "(?:" + alt + ")(?:[.:].*)?";
}

bool bare_metric(const std::string& q) {
  if (q.empty() || std::isdigit(static_cast<unsigned char>(q[0]))) return false;
  for (char c : q)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':')) return false;
  return true;
}

std::string seconds_text(int64_t ns) { return fmt::format("{}.{:03d}", ns / 1000000000, static_cast<int>((ns % 1000000000) / 1000000)); }

}  // namespace

std::string promql_text(const PromQueryConfig& q, const std::string& hostname_label, const std::vector<std::string>& nodes) {
  std::string label = q.hostname_label.empty() ? hostname_label : q.hostname_label;
  if (bare_metric(q.query)) return fmt::format("{}{{{}=~{}}}", q.query, label, logql_quote(node_regex(nodes)));
  std::string s = q.query;
  auto rep = [&](const std::string& from, const std::string& to) {
    for (size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size())) s.replace(i, from.size(), to);
  };
  // {nodes} sits inside a string literal the user wrote: its backslashes must be doubled.
  std::string quoted = logql_quote(node_regex(nodes));
  rep("{nodes}", quoted.substr(1, quoted.size() - 2));
  rep("{hostname_label}", label);
  return s;
}

bool flatten_matrix(const std::string& body, const PromQueryConfig& q, const std::string& hostname_label,
                    const std::vector<std::string>& nodes, std::vector<PromSample>& out, int64_t& skipped, std::string& error) {
  std::string label = q.hostname_label.empty() ? hostname_label : q.hostname_label;
  json j;
  if (!parse_remote_json(body, j, error)) return false;
  if (string_member_or(j, "status") != "success") {
    error = fmt::format("{}: {}", string_member_or(j, "errorType", "error"), string_member_or(j, "error", "no message"));
    return false;
  }
  const json& data = j["data"];
  if (!data.is_object() || !data.contains("result") || !data["result"].is_array()) {
    error = "the answer has no data.result";
    return false;
  }
  std::string type = string_member_or(data, "resultType");
  if (type != "matrix") {
    error = fmt::format("the query gives a {}, not a range vector (matrix)", type.empty() ? "?" : type);
    return false;
  }
  for (const auto& series : data["result"]) {
    const json& metric = series.contains("metric") && series["metric"].is_object() ? series["metric"] : json::object();
    std::string host_value = metric.contains(label) && metric[label].is_string() ? metric[label].get<std::string>() : "";
    std::string node = node_for_host(host_value, nodes);
    const json& values = series.contains("values") && series["values"].is_array() ? series["values"] : json::array();
    if (node.empty()) {
      skipped += static_cast<int64_t>(values.size());
      continue;
    }
    std::string name = metric.contains("__name__") && metric["__name__"].is_string() ? metric["__name__"].get<std::string>() : "";
    if (name.empty()) name = q.name.empty() ? q.query : q.name;
    std::map<std::string, std::string> kept;
    for (auto it = metric.begin(); it != metric.end(); ++it) {
      if (it.key() == "__name__" || it.key() == label || !it.value().is_string()) continue;
      if (q.labels_given && std::find(q.labels.begin(), q.labels.end(), it.key()) == q.labels.end()) continue;
      kept[it.key()] = it.value().get<std::string>();
    }
    std::string labels;
    for (const auto& [k, v] : kept) labels += (labels.empty() ? "" : ",") + k + "=" + v;
    for (const auto& v : values) {
      if (!v.is_array() || v.size() != 2 || !v[0].is_number() || !v[1].is_string()) {
        error = "a sample is not [<unix seconds>, \"<value>\"]";
        return false;
      }
      const std::string& text = v[1].get_ref<const std::string&>();
      char* end = nullptr;
      double x = std::strtod(text.c_str(), &end);
      if (text.empty() || *end || !std::isfinite(x)) {
        ++skipped;
        continue;
      }
      PromSample s;
      s.metric = name;
      s.host = node;
      s.labels = labels;
      s.ts = static_cast<int64_t>(std::llround(v[0].get<double>() * 1000.0)) * 1000000;
      s.value = x;
      out.push_back(std::move(s));
    }
  }
  return true;
}

PromqlCollector::PromqlCollector(PromqlCollectorConfig config, const std::string& token, const std::string& password)
    : config_(std::move(config)) {
  HttpClientConfig h;
  h.base_url = config_.url;
  h.token = token;
  h.username = config_.auth.username;
  h.password = password;
  h.tls.ca_file = config_.tls.ca_file;
  h.tls.cert_file = config_.tls.cert_file;
  h.tls.key_file = config_.tls.key_file;
  h.tls.server_name = config_.tls.server_name;
  h.tls.insecure_skip_verify = config_.tls.insecure_skip_verify;
  h.timeout_ns = config_.timeout;
  h.retries = config_.retries;
  http_ = std::make_unique<HttpClient>(h);
}

void PromqlCollector::collect(const CollectRequest& req, Collected& out) const {
  const Attempt& a = *req.attempt;
  CollectorReport rep;
  rep.collector = "promql";
  rep.source = config_.source;
  rep.nodes_expected = a.context.nodes;
  std::set<std::string> covered;
  std::vector<std::string> empty_queries;
  int64_t skipped = 0;
  int failed = 0;
  if (a.context.nodes.empty()) {
    rep.status = "empty";
    rep.reason = "the attempt has no nodes to ask about";
    out.collectors.push_back(std::move(rep));
    return;
  }
  if (!req.scope_start || !req.scope_end) {
    rep.status = "failed";
    rep.reason = "the attempt has no time window: a range query needs one";
    out.collectors.push_back(std::move(rep));
    return;
  }
  std::vector<PromSample> samples;
  for (const auto& q : config_.queries) {
    if (req.stop && req.stop->load()) break;
    std::string text = promql_text(q, config_.hostname_label, a.context.nodes);
    size_t before = samples.size();
    bool ok = true;
    int64_t chunk = config_.step * kMaxPoints;
    for (int64_t c0 = *req.scope_start; c0 <= *req.scope_end && ok; c0 += chunk + config_.step) {
      int64_t c1 = std::min(*req.scope_end, c0 + chunk);
      std::string form = form_encode({{"query", text},
                                      {"start", seconds_text(c0)},
                                      {"end", seconds_text(c1)},
                                      {"step", seconds_text(config_.step)}});
      HttpResponse r = http_->post_form("/api/v1/query_range", form, req.stop);
      out.wire_bytes += r.wire_bytes;
      std::string err;
      // Prometheus answers errors with a JSON body too: read it for the message.
      if (r.error.empty() && !r.body.empty() && flatten_matrix(r.body, q, config_.hostname_label, a.context.nodes, samples, skipped, err) &&
          r.ok())
        continue;
      ok = false;
      rep.errors.push_back(fmt::format("{}: {}", text, !r.error.empty() ? r.error : !err.empty() ? fmt::format("HTTP {}: {}", r.status, err) : r.describe()));
    }
    if (!ok) ++failed;
    else if (samples.size() == before) empty_queries.push_back(q.query);
  }
  std::sort(samples.begin(), samples.end(), [](const PromSample& x, const PromSample& y) {
    return std::tie(x.host, x.metric, x.labels, x.ts) < std::tie(y.host, y.metric, y.labels, y.ts);
  });
  // Chunks meet at one instant: keep one sample per series and time.
  samples.erase(std::unique(samples.begin(), samples.end(),
                            [](const PromSample& x, const PromSample& y) {
                              return x.host == y.host && x.metric == y.metric && x.labels == y.labels && x.ts == y.ts;
                            }),
                samples.end());
  std::map<std::string, int64_t> line_of;
  for (auto& s : samples) {
    covered.insert(s.host);
    Observation o;
    o.is_metric = true;
    o.host = s.host;
    o.source = config_.source;
    o.metric = s.metric;
    o.labels = s.labels;
    o.value = s.value;
    o.ts = s.ts;
    o.file = "promql:" + config_.url;
    o.line = ++line_of[s.host];
    out.observations.push_back(std::move(o));
  }
  rep.observations = static_cast<int64_t>(samples.size());
  rep.bytes = 0;  // metric samples carry no log text
  for (const auto& n : a.context.nodes)
    if (covered.count(n)) rep.nodes_covered.push_back(n);
  std::sort(rep.errors.begin(), rep.errors.end());
  std::vector<std::string> missing;
  for (const auto& n : a.context.nodes)
    if (!covered.count(n)) missing.push_back(n);
  if (req.stop && req.stop->load()) {
    rep.status = "partial";
    rep.reason = "stopped before every query was answered";
  } else if (failed == static_cast<int>(config_.queries.size())) {
    rep.status = "failed";
    rep.reason = fmt::format("metrics unavailable: every query failed ({})", rep.errors.size());
  } else if (covered.empty()) {
    rep.status = failed ? "failed" : "empty";
    rep.reason = fmt::format("metrics unavailable: no sample for any of the {} nodes{}", a.context.nodes.size(),
                             failed ? fmt::format(" ({} quer{} failed)", failed, failed == 1 ? "y" : "ies") : "");
  } else if (!missing.empty()) {
    rep.status = "partial";
    rep.reason = fmt::format("no metric sample for {} of {} nodes: {}", missing.size(), a.context.nodes.size(), fmt::join(missing, ", "));
  } else if (failed) {
    rep.status = "partial";
    rep.reason = fmt::format("{} of {} queries failed", failed, config_.queries.size());
  }
  (void)skipped;
  out.collectors.push_back(std::move(rep));
}

}  // namespace culprit::blueprint
