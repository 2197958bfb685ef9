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
// Thread-safety: immutable; collect() may run concurrently.
#pragma once

#include <memory>

#include "blueprint/collect/collector.h"
#include "blueprint/config.h"
#include "blueprint/net/http_client.h"

namespace culprit::blueprint {

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
