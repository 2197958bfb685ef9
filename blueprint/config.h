// The blueprint's configuration: one YAML file (docs/blueprint-config.md).
//
// load_config() reads and validates the whole file before anything runs.
// Every problem is a diagnostic with a stable code (B01xx), `file:line:col`,
// the source line and a caret; an unknown key also names the nearest known
// one ("unknown key 'lokii' (did you mean 'loki'?)"). Relative paths are
// resolved against the directory of the file. Secrets never live in the
// file: tokens and passwords are named by `*_file` / `*_env` keys and read
// when used, and a store URL that carries a password is refused.
//
// yaml-cpp is fenced here: no YAML type or exception leaves config.cpp.
// Thread-safety: the result is a plain value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/vocabulary.h"
#include "blueprint/net/kube_client.h"
#include "compiler/diagnostics.h"

namespace culprit::blueprint {

// A workload listed in the configuration (static discovery).
struct StaticWorkloadConfig {
  std::string id;
  std::string scheduler = "static";
  std::string cluster;
  std::optional<int64_t> start, end;  // ns since the epoch
  std::vector<std::string> nodes;     // expanded from the hostlist(s) given
  std::string state;                  // upper case, "" when not given
  std::optional<int64_t> exit_code;
};

struct StaticDiscoveryConfig {
  bool enabled = false;
  std::vector<std::string> bundles;   // bundle directories (globs already expanded, sorted)
  std::vector<StaticWorkloadConfig> workloads;
};

struct SlurmDiscoveryConfig {
  bool enabled = false;
  std::string sacct = "sacct";        // the sacct executable (a name is looked up in PATH)
  std::string slurm_conf;             // sets SLURM_CONF for sacct when not ""
  std::vector<std::string> clusters;  // sacct -M; empty: the local cluster
  // Terminal states to attribute; the rest (COMPLETED by default) are ignored.
  std::vector<std::string> states = {vocab::state::kBootFail,    vocab::state::kCancelled, vocab::state::kDeadline,
                                     vocab::state::kFailed,      vocab::state::kNodeFail,  vocab::state::kOutOfMemory,
                                     vocab::state::kPreempted,   vocab::state::kRequeued,  vocab::state::kTimeout};
  bool step_attempts = false;         // attempts: step (each srun step its own attempt) instead of job
  int64_t lookback = 24LL * 3600 * 1000000000;   // --once, and the first --watch poll: jobs ended this recently
  int64_t timeout = 60LL * 1000000000;           // a sacct call that takes longer is killed
};

// One `collectors.files` entry: where one log source lives.
struct FileSourceConfig {
  std::string source;                 // log source name: kernel, app, fabricmanager, ...
  std::string path;                   // template with {node} {job_id} {source} {date} {cluster} {user} {work_dir}, globs
  std::string host;                   // the host of files whose path has no {node}: a control-plane host, or "{batch_node}"
  std::string format = "auto";        // auto | plain | gzip
  int line = 0;                       // where it was configured (for messages)
};

struct FilesCollectorConfig {
  std::vector<FileSourceConfig> sources;
  uint64_t max_file_bytes = 0;        // 0: no limit; larger files are read up to this many bytes of the window
};

// How to reach the Kubernetes API (top-level `kubernetes`), shared by Kueue
// discovery and the Kubernetes collector.
struct KubernetesConfig {
  bool enabled = false;
  KubeConnectionConfig connection;
};

// `discovery.kueue`: Kueue Workloads (kueue.x-k8s.io/v1beta1) that finished
// or were evicted (blueprint/discovery/kueue_discovery.h).
struct KueueDiscoveryConfig {
  bool enabled = false;
  std::vector<std::string> namespaces;  // empty: every namespace
  std::string label_selector;           // Workloads to consider ("" = all)
  // Terminal states to attribute (COMPLETED, from Finished/Succeeded, is not by default).
  std::vector<std::string> states = {vocab::state::kCancelled, vocab::state::kEvicted, vocab::state::kFailed,
                                     vocab::state::kPreempted, vocab::state::kTimeout};
  int64_t lookback = 24LL * 3600 * 1000000000;
  // The pods of a Workload: a label selector template with {owner_name},
  // {owner_uid}, {workload}; "" = by the owner's kind (Job, JobSet, Kubeflow
  // jobs, pod groups; see docs/blueprint-config.md).
  std::string pod_selector;
  bool events = true;                   // placement from Events when the pods are gone
  int64_t placement_interval = 10LL * 1000000000;  // --record-placement --watch: between snapshots
};

// `collectors.kubernetes`: pod logs and Events (blueprint/collect/kube_logs_collector.h).
struct KubernetesCollectorConfig {
  bool enabled = false;
  bool logs = true;
  std::string source = "app";           // the log source pod logs feed
  std::vector<std::string> containers;  // empty: every container (init containers too)
  bool previous = true;                 // also the previous instance of restarted containers
  bool events = true;                   // pod/Workload Events and container terminations as evidence
  std::string events_source = "k8s";
  uint64_t max_bytes_per_container = 256ULL << 20;  // limitBytes per log request (0: none)
};

// TLS material for an HTTPS connector, as files.
struct TlsFilesConfig {
  std::string ca_file, cert_file, key_file, server_name;
  bool insecure_skip_verify = false;
};

// The credentials of an HTTP connector (never the secrets themselves).
struct HttpAuthConfig {
  std::string token_file, token_env;         // bearer
  std::string username, password_file, password_env;  // basic
};

// One `collectors.loki.streams` entry.
struct LokiStreamConfig {
  std::string selector;                 // a LogQL stream selector, e.g. {job="node-logs"}
  std::string source;                   // the log source its lines feed, or:
  std::string source_label;             // a stream label whose value names the source
  std::map<std::string, std::string> source_map;  // label value -> source (values not listed are used as they are)
  std::string host_label;               // overrides collectors.loki.host_label
  int line = 0;
};

struct LokiCollectorConfig {
  bool enabled = false;
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
};

// One `collectors.promql.queries` entry.
struct PromQueryConfig {
  std::string query;                    // a metric name, or PromQL with {nodes} / {hostname_label}
  std::string name;                     // the metric name for results without __name__ ("" = the query's)
  std::string hostname_label;           // "" = collectors.promql.hostname_label
  std::vector<std::string> labels;      // labels to keep (besides the host); empty with labels_given=false: all
  bool labels_given = false;
  int line = 0;
};

struct PromqlCollectorConfig {
  bool enabled = false;
  std::string url;
  HttpAuthConfig auth;
  TlsFilesConfig tls;
  std::string hostname_label = "Hostname";  // the DCGM exporter's
  std::string source = "metrics";
  int64_t step = 30LL * 1000000000;
  std::vector<PromQueryConfig> queries;     // empty after loading means the defaults (default_promql_queries())
  int64_t timeout = 60LL * 1000000000;
  int retries = 5;
};

// The queries used when `collectors.promql.queries` is not given.
std::vector<PromQueryConfig> default_promql_queries();

struct ServiceClientConfig {
  std::string url;                    // http(s)://host:port of a `culprit serve`
  std::string token_file, token_env;  // the bearer token: first line of the file, or the variable
  int64_t timeout = 300LL * 1000000000;
};

struct AttributionConfig {
  std::vector<std::string> rules;     // extra rule directories or files
  bool stdlib = true;
  std::string engine;                 // "" (default: jit, or $CULPRIT_ENGINE), "jit", "interp"
  unsigned threads = 0;               // scan threads per attempt (0: all cores)
  int64_t slack_before = 10LL * 60 * 1000000000;
  int64_t slack_after = 30LL * 60 * 1000000000;
  std::optional<ServiceClientConfig> service;  // attribute through a service instead of in-process
};

struct StoreConfig {
  std::string url;                    // sqlite:PATH | postgresql://... ; "" = sqlite:culprit.db in the working directory
  std::string password_file, password_env;  // PostgreSQL password (libpq's PGPASSWORD/PGPASSFILE also work)
};

struct OutputConfig {
  std::string stdout_format = "jsonl";  // jsonl | text | none
  bool explain = false;                 // store and print the derivation trail
};

struct WatchConfig {
  int64_t interval = 60LL * 1000000000; // between polls
  int64_t overlap = 10LL * 60 * 1000000000;  // each poll looks this far before the last one's end (sacct lags)
};

struct BlueprintConfig {
  std::string path;                   // the file, as given
  std::string dir;                    // its directory (absolute)
  std::string cluster;                // a name for this blueprint's cluster ("" when not given)
  StaticDiscoveryConfig static_discovery;
  SlurmDiscoveryConfig slurm;
  KubernetesConfig kubernetes;
  KueueDiscoveryConfig kueue;
  FilesCollectorConfig files;
  KubernetesCollectorConfig kube_logs;
  LokiCollectorConfig loki;
  PromqlCollectorConfig promql;
  AttributionConfig attribution;
  StoreConfig store;
  OutputConfig output;
  WatchConfig watch;
};

// Reads and validates `path`. False when it has an error; `diags` holds
// every problem found (warnings too) and `io_error` an I/O failure.
bool load_config(const std::string& path, BlueprintConfig& out, Diagnostics& diags, std::string& io_error);
// The same from text (tests); `path` is used in messages and to resolve
// relative paths.
bool parse_config(const std::string& path, const std::string& text, BlueprintConfig& out, Diagnostics& diags);


}  // namespace culprit::blueprint
