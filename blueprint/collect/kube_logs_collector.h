// The Kubernetes collector: the logs of a Kueue attempt's pods and what
// the cluster recorded about them (docs/blueprint-config.md,
// "collectors.kubernetes").
//
// Pod logs (report "kubernetes-pod-logs"): for every pod and every
// container (init containers too) that ran,
//   GET /api/v1/namespaces/NS/pods/POD/log?container=C&timestamps=true
//       &sinceTime=SCOPE_START[&previous=true][&limitBytes=N]
// and, for a container that restarted, its previous instance as well. The
// answer is read as it streams (chunked); each line starts with the
// kubelet's RFC 3339 timestamp, which becomes the observation's time, and
// reading stops at the first line past the scope (pod logs have no "until").
// A line's host is the pod's node. Pods that are gone (known only from the
// placement record or Events) have no logs any more: they and their nodes
// are reported missing, which degrades the verdict instead of blaming the
// nodes that did report.
//
// Events (report "kubernetes-events", source `events_source`): each pod's
// container terminations (the containerStatuses entry, verbatim JSON, so
// OOMKilled and exit codes are read as the API gives them), the pod's
// status reason (Evicted, Preempted), the Events about the pods, the
// Workload, its owner and the attempt's Nodes (OOMKilling, Evicted,
// FailedScheduling, BackOff, Killing, NodeNotReady, Preempted, ...) and the
// Workload's own conditions, one line each:
//   2026-11-30T10:05:01Z Warning Evicted pod/train/trainer-0 (kubelet): The node was low on resource: memory. ...
//   2026-11-30T10:05:03Z Workload train/job-trainer-4c1 condition Evicted: Preempted to accommodate a ...
// Lines about a pod are on its node; the rest are on the control-plane host
// "kubernetes" (evidence, never a culprit).
//
// An attempt's container logs are asked for up to four at once and their
// lines appended in pod and container order, so the result does not depend
// on it.
//
// Thread-safety: immutable; collect() may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blueprint/collect/collector.h"
#include "blueprint/connector.h"
#include "blueprint/net/kube_client.h"

namespace culprit::blueprint {

// `collectors.kubernetes`: pod logs and Events (KubeLogsCollector below).
struct KubernetesCollectorConfig : ConnectorConfig {
  bool logs = true;
  std::string source = "app";           // the log source pod logs feed
  std::vector<std::string> containers;  // empty: every container (init containers too)
  bool previous = true;                 // also the previous instance of restarted containers
  bool events = true;                   // pod/Workload Events and container terminations as evidence
  std::string events_source = "k8s";
  uint64_t max_bytes_per_container = 256ULL << 20;  // limitBytes per log request (0: none)
  std::string summary() const override;
};

// The `collectors.kubernetes` section (registered in blueprint/connectors.cpp): its reader,
// which validates as it reads, and its factory.
std::shared_ptr<ConnectorConfig> read_kube_logs_collector_config(ConfigReader& r, const YAML::Node& n);
bool make_kube_logs_collector(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string& error);

class KubeLogsCollector final : public Collector {
 public:
  KubeLogsCollector(KubernetesCollectorConfig config, std::shared_ptr<const KubeClient> client)
      : config_(std::move(config)), client_(std::move(client)) {}
  std::string name() const override { return "kubernetes"; }
  void collect(const CollectRequest& request, Collected& out) const override;

 private:
  void collect_logs(const CollectRequest& request, Collected& out) const;
  void collect_events(const CollectRequest& request, Collected& out) const;
  KubernetesCollectorConfig config_;
  std::shared_ptr<const KubeClient> client_;
};

// Splits a `timestamps=true` pod-log stream into (time, text) lines as data
// arrives (exposed for tests). Text keeps its newline.
class PodLogLineSplitter {
 public:
  // Calls `line(ts, text, offset)` for every complete line; returns false
  // when `line` does.
  bool feed(std::string_view data,
            const std::function<bool(std::optional<int64_t>, std::string_view, int64_t)>& line);
  bool finish(const std::function<bool(std::optional<int64_t>, std::string_view, int64_t)>& line);

 private:
  bool emit(std::string_view raw, const std::function<bool(std::optional<int64_t>, std::string_view, int64_t)>& line);
  std::string carry_;
  int64_t offset_ = 0;  // of the next line in the stream
};

// The line an Event becomes (exposed for tests); "" for an event without a time.
std::string event_line(const nlohmann::json& event);

}  // namespace culprit::blueprint
