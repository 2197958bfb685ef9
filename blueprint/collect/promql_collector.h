// The PromQL collector: metric samples of an attempt's nodes and window
// from Prometheus (or anything that serves its HTTP API: Thanos, Mimir,
// VictoriaMetrics), as metric observations (docs/bundle.md) that rules see
// as `metric.sample` events (docs/blueprint-config.md, "collectors.promql").
//
// Each configured query is sent as
//   POST /api/v1/query_range  query=Q&start=S&end=E&step=STEP
// (form-encoded: long node lists do not fit a URL). A bare metric name gets
// the node matcher `{HOSTNAME_LABEL=~"(?:node-01|node-02)(?:[.:].*)?"}`
// (FQDNs and `host:port` instances match too); other queries can
// place it themselves with {nodes} (the escaped node alternation) and
// {hostname_label}; results are kept only for the attempt's nodes either
// way. Windows longer than 11,000 steps (Prometheus' limit per series) are
// queried in chunks. 429 and 5xx are retried with backoff; an error answer
// ({"status":"error","errorType":...,"error":...}) is quoted in the report.
//
// The matrix is flattened: every [time, "value"] of every series becomes
// one observation with metric = the series' __name__ (or the query's
// `name`, since functions and aggregations drop __name__), host = the node
// its hostname label names (an instance's ":port" removed, an FQDN's
// domain ignored), labels = the labels asked for (`labels`; all but
// __name__ and the hostname label by default), ts = the sample's time.
// NaN and infinities are skipped and counted.
//
// Coverage: one report "promql" for the configured source; a node no query
// returned a sample for is missing, a query that failed is an error, so the
// verdict says when metrics were unavailable.
//
// The queries of one attempt are independent: up to four run at once (each
// query's time chunks in order), and their answers are merged in the
// configuration's order, so the result does not depend on it.
//
// Thread-safety: immutable; collect() may run concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "blueprint/collect/collector.h"
#include "blueprint/connector.h"
#include "blueprint/net/http_client.h"

namespace culprit::blueprint {

// One `collectors.promql.queries` entry.
struct PromQueryConfig {
  std::string query;                    // a metric name, or PromQL with {nodes} / {hostname_label}
  std::string name;                     // the metric name for results without __name__ ("" = the query's)
  std::string hostname_label;           // "" = collectors.promql.hostname_label
  std::vector<std::string> labels;      // labels to keep (besides the host); empty with labels_given=false: all
  bool labels_given = false;
  int line = 0;
};

struct PromqlCollectorConfig : ConnectorConfig {
  std::string url;
  HttpAuthConfig auth;
  TlsFilesConfig tls;
  std::string hostname_label = "Hostname";  // the DCGM exporter's
  std::string source = "metrics";
  int64_t step = 30LL * 1000000000;
  std::vector<PromQueryConfig> queries;     // empty after loading means the defaults (default_promql_queries())
  int64_t timeout = 60LL * 1000000000;
  int retries = 5;
  // Requests to this backend on the wire at once, all attempts in flight
  // together (http_client.h, "One backend, many attempts").
  int max_in_flight = 16;
  std::string summary() const override;
};

// The queries used when `collectors.promql.queries` is not given.
std::vector<PromQueryConfig> default_promql_queries();

// The `collectors.promql` section (registered in blueprint/connectors.cpp): its reader,
// which validates as it reads, and its factory.
std::shared_ptr<ConnectorConfig> read_promql_collector_config(ConfigReader& r, const YAML::Node& n);
bool make_promql_collector(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string& error);

class PromqlCollector final : public Collector {
 public:
  PromqlCollector(PromqlCollectorConfig config, const std::string& token, const std::string& password);
  std::string name() const override { return "promql"; }
  void collect(const CollectRequest& request, Collected& out) const override;

 private:
  PromqlCollectorConfig config_;
  std::unique_ptr<HttpClient> http_;
};

// The PromQL text of a configured query for these nodes (exposed for tests).
std::string promql_text(const PromQueryConfig& q, const std::string& hostname_label, const std::vector<std::string>& nodes);

struct PromSample {
  std::string metric, host;
  std::string labels;    // "k=v,k=v", sorted by key
  int64_t ts = 0;
  double value = 0;
};

// Flattens a query_range answer (resultType matrix) into samples of the
// given nodes (exposed for tests). `skipped` counts non-finite values and
// series of other hosts.
bool flatten_matrix(const std::string& body, const PromQueryConfig& q, const std::string& hostname_label,
                    const std::vector<std::string>& nodes, std::vector<PromSample>& out, int64_t& skipped, std::string& error);

}  // namespace culprit::blueprint
