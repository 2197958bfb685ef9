// Kueue discovery: the Kubernetes workloads Kueue admitted that then
// finished or were evicted, from the Workload objects
// (kueue.x-k8s.io/v1beta1), with the pods they ran and their nodes.
//
// An attempt ends at the last transition of one of the Workload's
// conditions (docs/blueprint-config.md, "discovery.kueue"):
//   * Finished=True: reason Failed -> FAILED (TIMEOUT when the job's
//     message says it was active longer than its deadline), Succeeded ->
//     COMPLETED; AdmissionChecksRejected and OutOfSync never ran (ignored);
//   * Evicted=True: Preempted -> PREEMPTED, MaximumExecutionTimeExceeded ->
//     TIMEOUT, ClusterQueueStopped / LocalQueueStopped / Deactivated /
//     InactiveWorkload -> CANCELLED, PodsReadyTimeout, AdmissionCheck,
//     RequeuingLimitExceeded and others -> EVICTED.
// Key: "kueue/CLUSTER/NAMESPACE/WORKLOAD@END" (END in Unix seconds), so
// an eviction and the later failure of the same Workload are two attempts;
// the later one reads no evidence from before the eviction.
//
// Start of the attempt: the admission the placement recorder saw, else the
// Admitted / QuotaReserved condition while it is still True, else the
// earliest pod start, else the Workload's creation.
//
// Pods: the Workload's controlling owner (the job Kueue admitted) selects
// them: batch/v1 Job by `batch.kubernetes.io/controller-uid` (and the
// legacy `controller-uid`), JobSet by `jobset.sigs.k8s.io/jobset-name`,
// Kubeflow jobs by `training.kubeflow.org/job-name`, pods and pod groups by
// the owner references themselves; `pod_selector` overrides this. Nodes
// come from the pods' spec.nodeName; when the pods are gone, from the
// recorded placement, from a topology assignment that names hostnames
// (TAS), and from Events (job-controller "Created pod: NAME", the
// scheduler's "Successfully assigned NS/NAME to NODE").
//
// Thread-safety: discover() and record_placement() run on one thread.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

#include "base/vocabulary.h"
#include "blueprint/connector.h"
#include "blueprint/discovery/discovery.h"
#include "blueprint/net/kube_client.h"
#include "blueprint/placement.h"

namespace culprit::blueprint {

// `discovery.kueue`: Kueue Workloads (kueue.x-k8s.io/v1beta1) that finished
// or were evicted (KueueDiscovery below).
struct KueueDiscoveryConfig : ConnectorConfig {
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
  std::string summary() const override;
};

// The `discovery.kueue` section (registered in blueprint/connectors.cpp): its reader,
// which validates as it reads, and its factory.
std::shared_ptr<ConnectorConfig> read_kueue_discovery_config(ConfigReader& r, const YAML::Node& n);
bool make_kueue_discovery(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string& error);

class KueueDiscovery final : public Discovery, public PlacementRecorder {
 public:
  KueueDiscovery(KueueDiscoveryConfig config, std::string cluster, std::shared_ptr<const KubeClient> client)
      : config_(std::move(config)), cluster_(std::move(cluster)), client_(std::move(client)) {}
  std::string name() const override { return "kueue"; }
  bool discover(const DiscoveryWindow& window, DiscoveryResult& out, std::string& error) override;
  int64_t lookback() const override { return config_.lookback; }
  void set_placement_book(PlacementBook* book) override { book_ = book; }
  bool record_placement(PlacementBook& book, int64_t& recorded, std::string& error) override;
  int64_t placement_interval() const override { return config_.placement_interval; }

 private:
  struct EventIndex;  // a namespace's pod-creation and scheduling Events, read once per poll
  bool list_workloads(std::vector<nlohmann::json>& out, std::string& error) const;
  bool pods_of(const nlohmann::json& workload, std::vector<nlohmann::json>& pods, std::string& error) const;

  KueueDiscoveryConfig config_;
  std::string cluster_;
  std::shared_ptr<const KubeClient> client_;
  PlacementBook* book_ = nullptr;
};

// The attempts one Workload object gives, with the pods already listed
// (exposed for tests). `now` bounds nothing; `window` filters by end.
// Never fails: an oddity becomes a warning.
void workload_attempts(const nlohmann::json& workload, const std::vector<nlohmann::json>& pods,
                       const std::vector<PlacementRecord>& recorded, const KueueDiscoveryConfig& config,
                       const std::string& cluster, const DiscoveryWindow& window, DiscoveryResult& out);

// The label selector for a Workload's pods ("" when its owner's kind is not
// known and no template is configured), and whether the owner references
// name the pods themselves (Kueue's pod integration).
std::string pod_selector_for(const nlohmann::json& workload, const std::string& configured, bool& owners_are_pods);

}  // namespace culprit::blueprint
