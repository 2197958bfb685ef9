// The Loki collector: log lines of an attempt's nodes and window from
// Grafana Loki (docs/blueprint-config.md, "collectors.loki").
//
// For each configured stream selector, node batch (`nodes_per_query` node
// names per matcher) and time chunk (`chunk`), it sends
//   GET /loki/api/v1/query_range?query=Q&start=S&end=E&limit=L&direction=forward
// with Q = the selector plus `HOST=~"(?:node-01|node-02)(?:\..*)?"` (a node
// also matches its FQDN) and, with push-down, `|~ "(?i)atom|atom|..."`: the
// catalog's literal atoms for the stream's sources (push_down.h), so only
// lines an extractor can match cross the network. A full page (L entries)
// is followed by the next one starting at its last timestamp (Loki's start
// is inclusive), with the entries of that nanosecond already seen dropped;
// more than L entries in one nanosecond cannot be paged and is an error.
// 429 and 5xx are retried with backoff (http_client.h). Loki's own limits
// (max_entries_limit_per_query, max_query_length) come back as 400 with a
// text body, which the report quotes.
//
// Coverage: which nodes have a stream at all in the window comes from
// POST /loki/api/v1/series (label sets only), so a node whose lines were
// all filtered out still counts as covered, and a node with no stream is
// reported missing (that degrades the verdict instead of blaming the nodes
// that did report).
//
// Each entry becomes an observation with Loki's timestamp as its time, host
// = the node its host label names, source = the stream's (fixed, or from a
// label via `source_map`), file = "loki:{labels}" of its stream, line = its
// position among the entries fetched from that stream.
//
// Thread-safety: immutable; collect() may run concurrently.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blueprint/collect/collector.h"
#include "blueprint/connector.h"
#include "blueprint/net/http_client.h"

namespace culprit::blueprint {

// One `collectors.loki.streams` entry.
struct LokiStreamConfig {
  std::string selector;                 // a LogQL stream selector, e.g. {job="node-logs"}
  std::string source;                   // the log source its lines feed, or:
  std::string source_label;             // a stream label whose value names the source
  std::map<std::string, std::string> source_map;  // label value -> source (values not listed are used as they are)
  std::string host_label;               // overrides collectors.loki.host_label
  int line = 0;
};

struct LokiCollectorConfig : ConnectorConfig {
  std::string url;
  std::string tenant;                   // X-Scope-OrgID ("" = none)
  HttpAuthConfig auth;
  TlsFilesConfig tls;
  std::string host_label = "host";
  std::vector<LokiStreamConfig> streams;
  bool push_down = true;                // the catalog's atoms as a line filter
  int limit = 5000;                     // entries per request (Loki's max_entries_limit_per_query defaults to 5000)
  int64_t chunk = 3600LL * 1000000000;  // the window is queried in chunks of this length
  int nodes_per_query = 50;             // node names per label matcher
  int64_t timeout = 60LL * 1000000000;
  int retries = 5;
  // Requests to this backend on the wire at once, all attempts in flight
  // together (http_client.h, "One backend, many attempts").
  int max_in_flight = 16;
  std::string summary() const override;
};

// The `collectors.loki` section (registered in blueprint/connectors.cpp): its reader,
// which validates as it reads, and its factory.
std::shared_ptr<ConnectorConfig> read_loki_collector_config(ConfigReader& r, const YAML::Node& n);
bool make_loki_collector(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string& error);

class LokiCollector final : public Collector {
 public:
  // `token` and `password` are the secrets already read (may be "").
  LokiCollector(LokiCollectorConfig config, const std::string& token, const std::string& password);
  std::string name() const override { return "loki"; }
  void collect(const CollectRequest& request, Collected& out) const override;

 private:
  LokiCollectorConfig config_;
  std::unique_ptr<HttpClient> http_;
};

// The LogQL query for one selector, host matcher and line filter (exposed
// for tests). `hosts` are node names; `line_filter` "" for none;
// `extra_matcher` (`source=~"app"`) is added to the selector when given.
std::string loki_query(const std::string& selector, const std::string& host_label, const std::vector<std::string>& hosts,
                       const std::string& line_filter,
                       const std::string& extra_matcher = "");

struct LokiEntry {
  std::vector<std::pair<std::string, std::string>> labels;  // the stream's, sorted by name
  int64_t ts = 0;
  std::string line;
};

// Parses a query_range answer of resultType "streams" (exposed for tests).
bool parse_loki_streams(const std::string& body, std::vector<LokiEntry>& out, std::string& error);

// The node a host label value names ("" when none): the value itself, or
// its first DNS label when the node list holds that (FQDNs), or a value
// with its ":port" removed (Prometheus instance labels).
std::string node_for_host(const std::string& value, const std::vector<std::string>& nodes);

}  // namespace culprit::blueprint
