// Prometheus' HTTP API (docs/querying/api.md): query_range answers
// {"status":"success","data":{"resultType":"matrix","result":[{"metric":
// {...},"values":[[<unix seconds>,"<value>"],...]}]}}; errors answer
// {"status":"error","errorType":"bad_data|execution|timeout|...","error":"..."}
// with 400, 422 or 503. A range is limited to 11,000 points per series.
#include "blueprint/collect/promql_collector.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/timestamp.h"
#include "blueprint/collect/loki_collector.h"
#include "blueprint/config_reader.h"
#include "blueprint/task_pool.h"
#include "runtime/json_input.h"

namespace culprit::blueprint {

using json = nlohmann::json;

namespace {

constexpr int64_t kMaxPoints = 10000;  // below Prometheus' 11,000 per series and request
// Queries of one attempt in flight at once: a remote Prometheus answers each
// in its round trip, and a handful at once is what one attempt should ask.
constexpr size_t kQueriesAtOnce = 4;

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
  set_http_access(config_.auth, config_.tls, token, password, h);
  h.timeout_ns = config_.timeout;
  h.retries = config_.retries;
  h.max_in_flight = config_.max_in_flight;
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
  // The queries are independent: up to kQueriesAtOnce run at once (each
  // query's chunks in order), and their answers are merged in the
  // configuration's order, so the result is the sequential one.
  struct QueryResult {
    std::vector<PromSample> samples;
    std::vector<std::string> errors;
    int64_t skipped = 0, wire = 0;
    bool ok = true, ran = false;
  };
  std::vector<QueryResult> results(config_.queries.size());
  auto run_query = [&](size_t i) {
    const PromQueryConfig& q = config_.queries[i];
    QueryResult& res = results[i];
    if (req.stop && req.stop->load()) return;
    res.ran = true;
    std::string text = promql_text(q, config_.hostname_label, a.context.nodes);
    int64_t chunk = config_.step * kMaxPoints;
    for (int64_t c0 = *req.scope_start; c0 <= *req.scope_end && res.ok; c0 += chunk + config_.step) {
      int64_t c1 = std::min(*req.scope_end, c0 + chunk);
      std::string form = form_encode({{"query", text},
                                      {"start", seconds_text(c0)},
                                      {"end", seconds_text(c1)},
                                      {"step", seconds_text(config_.step)}});
      HttpResponse r = http_->post_form("/api/v1/query_range", form, req.stop);
      res.wire += r.wire_bytes;
      std::string err;
      // Prometheus answers errors with a JSON body too: read it for the message.
      if (r.error.empty() && !r.body.empty() &&
          flatten_matrix(r.body, q, config_.hostname_label, a.context.nodes, res.samples, res.skipped, err) && r.ok())
        continue;
      res.ok = false;
      res.errors.push_back(fmt::format("{}: {}", text, !r.error.empty() ? r.error : !err.empty() ? fmt::format("HTTP {}: {}", r.status, err) : r.describe()));
    }
  };
  for_each_at_once(results.size(), kQueriesAtOnce, run_query);
  std::vector<PromSample> samples;
  for (size_t i = 0; i < results.size(); ++i) {
    QueryResult& res = results[i];
    out.wire_bytes += res.wire;
    skipped += res.skipped;
    for (auto& e : res.errors) rep.errors.push_back(std::move(e));
    if (!res.ran) continue;
    if (!res.ok) ++failed;
    else if (res.samples.empty()) empty_queries.push_back(config_.queries[i].query);
    for (auto& x : res.samples) samples.push_back(std::move(x));
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

// Configuration: the `collectors.promql` section (blueprint/connector.h). It lives here,
// with the code that uses it, so that the connector is one file.

std::string PromqlCollectorConfig::summary() const {
  size_t n = queries.empty() ? default_promql_queries().size() : queries.size();
  return fmt::format("{} quer{}", n, n == 1 ? "y" : "ies");
}

std::shared_ptr<ConnectorConfig> read_promql_collector_config(ConfigReader& r, const YAML::Node& n) {
  auto config = std::make_shared<PromqlCollectorConfig>();
  PromqlCollectorConfig& out = *config;
  r.require(n, "collectors.promql", {"url"});
  std::vector<std::string> keys = {"url", "hostname_label", "source", "step", "queries", "timeout", "retries", "max_in_flight", "tls"};
  keys.insert(keys.end(), auth_keys().begin(), auth_keys().end());
  bool queries_given = false;
  r.map(n, "collectors.promql", keys, [&](const std::string& k, const YAML::Node& v) {
    if (read_auth(r, k, v, out.auth)) return;
    if (k == "url") http_url(r, v, k, out.url);
    else if (k == "hostname_label") r.string(v, k, out.hostname_label);
    else if (k == "source") {
      if (r.string(v, k, out.source) && !source_name_ok(out.source))
        r.error("B0104", v, "'source' must be a lowercase name ([a-z0-9_-]+)");
    } else if (k == "step") r.duration(v, k, out.step, 1000000000LL);
    else if (k == "timeout") r.duration(v, k, out.timeout, 1000000000LL);
    else if (k == "retries") {
      int64_t x = 0;
      if (r.integer(v, k, x, 0, 20)) out.retries = static_cast<int>(x);
    } else if (k == "max_in_flight") {
      int64_t x = 0;
      if (r.integer(v, k, x, 1, 256)) out.max_in_flight = static_cast<int>(x);
    } else if (k == "tls") read_tls(r, v, "collectors.promql.tls", out.tls);
    else if (k == "queries") {
      queries_given = true;
      if (!v.IsSequence()) {
        r.error("B0103", v, "'queries' must be a list of metric names or {query, name, labels, hostname_label} entries");
        return;
      }
      for (const auto& e : v) {
        PromQueryConfig q;
        q.line = e.Mark().line + 1;
        if (e.IsScalar()) {
          q.query = e.Scalar();
        } else {
          r.require(e, "collectors.promql.queries[]", {"query"});
          r.map(e, "collectors.promql.queries[]", {"query", "name", "labels", "hostname_label"},
                [&](const std::string& kk, const YAML::Node& x) {
                  if (kk == "query") r.string(x, kk, q.query);
                  else if (kk == "name") r.string(x, kk, q.name);
                  else if (kk == "hostname_label") r.string(x, kk, q.hostname_label);
                  else if (kk == "labels") {
                    q.labels_given = true;
                    if (x.IsSequence() && x.size() == 0) q.labels.clear();
                    else r.strings(x, kk, q.labels);
                  }
                });
        }
        for (size_t i = q.query.find('{'); i != std::string::npos; i = q.query.find('{', i + 1)) {
          size_t close = q.query.find('}', i);
          std::string var = close == std::string::npos ? "" : q.query.substr(i + 1, close - i - 1);
          bool ident = !var.empty() && var.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos;
          if (ident && var != "nodes" && var != "hostname_label")
            r.error("B0104", e, fmt::format("unknown placeholder '{{{}}}' in 'query' (known: {{nodes}} {{hostname_label}})", var));
        }
        if (!q.query.empty()) out.queries.push_back(std::move(q));
      }
    }
  });
  if (!queries_given) out.queries = default_promql_queries();
  return config;
}

std::vector<PromQueryConfig> default_promql_queries() {
  // DCGM exporter fields (dcgm-exporter default-counters.csv names) and the
  // node exporter's InfiniBand counters; stdlib-rules/metrics.attr reads them.
  std::vector<PromQueryConfig> q;
  for (const char* m : {"DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
                        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"}) {
    PromQueryConfig c;
    c.query = m;
    c.labels = {"gpu"};
    c.labels_given = true;
    q.push_back(c);
  }
  for (const char* m : {"node_infiniband_symbol_error_total", "node_infiniband_link_downed_total",
                        "node_infiniband_link_error_recovery_total", "node_infiniband_port_errors_received_total",
                        "node_infiniband_local_link_integrity_errors_total",
                        "node_infiniband_port_receive_remote_physical_errors_total"}) {
    PromQueryConfig c;
    c.query = m;
    c.labels = {"device", "port"};
    c.labels_given = true;
    q.push_back(c);
  }
  return q;
}

bool make_promql_collector(const ConnectorConfig& config, const ConnectorEnv&, ConnectorParts& out, std::string& error) {
  const auto& c = static_cast<const PromqlCollectorConfig&>(config);
  std::string token, password;
  if (!read_http_credentials(c.auth, "collectors.promql", token, password, error)) return false;
  out.collector = std::make_unique<PromqlCollector>(c, token, password);
  return true;
}

}  // namespace culprit::blueprint
