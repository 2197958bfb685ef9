// Workload bundles: the static execution context and its local log files.
//
//   BUNDLE/context.json                 the workload (see docs/bundle.md)
//   BUNDLE/logs/<host>/<source>.log     one file per host and log source
//   BUNDLE/observations.jsonl           optional normalized observations
//
// load_bundle only reads context.json and lists files; logs are streamed
// later by the scanner. Hosts not in context.nodes are control-plane hosts.
// Errors are returned as text (no exceptions escape).
#pragma once

#include <string>
#include <vector>

#include "runtime/model.h"

namespace culprit {

struct LogFile {
  std::string host, source;
  std::string display_path;   // as reported in evidence: "logs/node-01/app.log"
  std::string path;           // to open
  bool control_plane = false;
  uint64_t size = 0;
};

struct Bundle {
  std::string root;
  WorkloadContext context;
  std::vector<LogFile> files;           // sorted by (host, source)
  std::string observations_path;        // "" when absent
  std::vector<std::string> ignored_files;
};

// Parses a context document (the same JSON the service accepts). Unknown
// keys are rejected so typos do not silently change a verdict; so is a
// terminal state that looks like a misspelt known one ("COMPLETD"), with the
// state it probably meant. A node is a host name or {"name": ..., "aliases":
// [...]} (other names of it: FQDNs, IP addresses).
bool parse_context_json(const std::string& text, WorkloadContext& out, std::string& error);

bool load_bundle(const std::string& dir, Bundle& out, std::string& error);

// The workload node a host name of the evidence stands for: the node itself;
// an alias the context gives it ("nodes": [{"name": "node-02", "aliases":
// ["10.0.0.2"]}]); an FQDN whose first label is a node's name
// ("node-02.cluster.local" for node-02); or the short name of a node given
// as an FQDN. Compared without regard to case (DNS names are not). "" when
// the host is none of the nodes (a control-plane host), or when its short
// name would fit two nodes (then `how` says so). `how` is "" for the node
// itself, else "alias", "short name" or "FQDN".
std::string canonical_host(const WorkloadContext& ctx, const std::string& host, std::string* how = nullptr);

// A source name must be a lowercase identifier ([a-z0-9_-]+); host names
// follow RFC 1123 labels plus '.' and '_'.
bool valid_source_name(std::string_view s);
bool valid_host_name(std::string_view s);

}  // namespace culprit
