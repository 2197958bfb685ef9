// Workload conditions -> attempts. The condition types and reasons are
// Kueue's (apis/kueue/v1beta1/workload_types.go: Finished with Succeeded /
// Failed / AdmissionChecksRejected / OutOfSync; Evicted with Preempted,
// PodsReadyTimeout, AdmissionCheck, ClusterQueueStopped, LocalQueueStopped,
// Deactivated, InactiveWorkload; reasons of Kueue before v0.6 such as
// JobFinished are read too). A condition keeps only its last transition, so
// an attempt that ended and was followed by another one is visible only as
// long as its condition stays True: run with --watch to see every cycle.
#include "blueprint/discovery/kueue_discovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>

#include "base/vocabulary.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "base/vocabulary.h"
#include "blueprint/config_reader.h"
#include "blueprint/node_names.h"

namespace culprit::blueprint {

using json = nlohmann::json;
using kube_json::arr;
using kube_json::obj;
using kube_json::str;

namespace {

constexpr int64_t kSecond = 1000000000;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Condition {
  bool present = false, is_true = false;
  std::string reason, message;
  std::optional<int64_t> time;
};

std::map<std::string, Condition> conditions_of(const json& wl) {
  std::map<std::string, Condition> out;
  for (const auto& c : arr(obj(wl, "status"), "conditions")) {
    Condition x;
    x.present = true;
    x.is_true = str(c, "status") == "True";
    x.reason = str(c, "reason");
    x.message = str(c, "message");
    x.time = kube_time(c.value("lastTransitionTime", json()));
    out[str(c, "type")] = x;
  }
  return out;
}

const json& controller_owner(const json& meta) {
  static const json none = json::object();
  const json& refs = arr(meta, "ownerReferences");
  for (const auto& r : refs)
    if (r.is_object() && r.value("controller", false)) return r;
  return refs.empty() ? none : refs[0];
}

std::optional<int64_t> event_time(const json& e) {
  for (const char* k : {"lastTimestamp", "eventTime", "firstTimestamp"})
    if (auto t = kube_time(e.value(k, json()))) return t;
  if (auto t = kube_time(obj(e, "series").value("lastObservedTime", json()))) return t;
  return kube_time(obj(e, "metadata").value("creationTimestamp", json()));
}

AttemptPod attempt_pod(const json& pod) {
  AttemptPod p;
  const json& meta = obj(pod, "metadata");
  const json& spec = obj(pod, "spec");
  const json& st = obj(pod, "status");
  p.name = str(meta, "name");
  p.uid = str(meta, "uid");
  p.node = str(spec, "nodeName");
  p.phase = str(st, "phase");
  std::map<std::string, const json*> statuses;
  for (const char* k : {"initContainerStatuses", "containerStatuses"})
    for (const auto& cs : arr(st, k)) statuses[str(cs, "name")] = &cs;
  for (const auto& [key, init] : {std::pair{"initContainers", true}, std::pair{"containers", false}})
    for (const auto& c : arr(spec, key)) {
      AttemptContainer ac;
      ac.name = str(c, "name");
      ac.init = init;
      auto it = statuses.find(ac.name);
      if (it != statuses.end()) {
        const json& cs = *it->second;
        ac.restarts = cs.value("restartCount", 0);
        const json& state = obj(cs, "state");
        const json& last = obj(cs, "lastState");
        ac.started = state.contains("running") || state.contains("terminated") || last.contains("terminated") || ac.restarts > 0;
      }
      p.containers.push_back(std::move(ac));
    }
  return p;
}

// The exit code of the container that failed first (non-zero exit), or
// nullopt when no container says.
std::optional<int64_t> first_failure_exit(const std::vector<const json*>& pods) {
  std::optional<int64_t> best_t, code;
  for (const json* pod : pods)
    for (const auto& cs : arr(obj(*pod, "status"), "containerStatuses"))
      for (const char* which : {"state", "lastState"}) {
        const json& term = obj(obj(cs, which), "terminated");
        if (term.empty() || !term.contains("exitCode") || !term["exitCode"].is_number_integer()) continue;
        int64_t e = term["exitCode"].get<int64_t>();
        if (e == 0) continue;
        auto t = kube_time(term.value("finishedAt", json()));
        int64_t tv = t.value_or(INT64_MAX);
        if (!best_t || tv < *best_t) {
          best_t = tv;
          code = e;
        }
      }
  return code;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string pod_selector_for(const json& wl, const std::string& configured, bool& owners_are_pods) {
  owners_are_pods = false;
  const json& meta = obj(wl, "metadata");
  const json& owner = controller_owner(meta);
  std::string kind = str(owner, "kind"), api = str(owner, "apiVersion"), name = str(owner, "name"), uid = str(owner, "uid");
  if (!configured.empty()) {
    std::string s = configured;
    auto rep = [&](const std::string& from, const std::string& to) {
      for (size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size())) s.replace(i, from.size(), to);
    };
    rep("{owner_name}", name);
    rep("{owner_uid}", uid);
    rep("{workload}", str(meta, "name"));
    return s;
  }
  if (kind == "Pod" && api == "v1") {
    owners_are_pods = true;
    return "";
  }
  if (kind == "Job" && api.rfind("batch/", 0) == 0) return "batch.kubernetes.io/controller-uid=" + uid;
  if (kind == "JobSet") return "jobset.sigs.k8s.io/jobset-name=" + name;
  if (api.rfind("kubeflow.org/", 0) == 0) return "training.kubeflow.org/job-name=" + name;
  return "";
}

void workload_attempts(const json& wl, const std::vector<json>& pods, const std::vector<PlacementRecord>& recorded,
                       const KueueDiscoveryConfig& config, const std::string& cluster, const DiscoveryWindow& window,
                       DiscoveryResult& out) {
  const json& meta = obj(wl, "metadata");
  const json& status = obj(wl, "status");
  std::string ns = str(meta, "namespace"), name = str(meta, "name"), uid = str(meta, "uid");
  if (name.empty()) {
    out.warnings.push_back("a Workload without metadata.name was skipped");
    return;
  }
  auto conds = conditions_of(wl);
  struct End {
    int64_t t;
    std::string state, reason, message, condition;
  };
  std::vector<End> ends;
  const Condition& fin = conds["Finished"];
  if (fin.present && fin.is_true) {
    std::string state;
    std::string msg = lower(fin.message);
    if (fin.reason == "Failed")
      state = msg.find("active longer than specified deadline") != std::string::npos || msg.find("deadlineexceeded") != std::string::npos
                  ? vocab::state::kTimeout
                  : vocab::state::kFailed;
    else if (fin.reason == "Succeeded") state = vocab::state::kCompleted;
    else if (fin.reason == "AdmissionChecksRejected" || fin.reason == "OutOfSync") state = "";  // never ran
    else state = msg.find("finished successfully") != std::string::npos || msg.find("succeeded") != std::string::npos ? vocab::state::kCompleted
                                                                                                                     : vocab::state::kFailed;
    if (!fin.time) out.warnings.push_back(fmt::format("Workload {}/{}: Finished has no lastTransitionTime", ns, name));
    else if (state.empty()) ++out.ignored;
    else ends.push_back({*fin.time, state, fin.reason, fin.message, "Finished"});
  }
  const Condition& ev = conds["Evicted"];
  if (ev.present && ev.is_true && ev.time && !(fin.present && fin.is_true && fin.time == ev.time)) {
    static const std::map<std::string, std::string> kEvicted = {
        {"Preempted", vocab::state::kPreempted},          {"MaximumExecutionTimeExceeded", vocab::state::kTimeout},
        {"ClusterQueueStopped", vocab::state::kCancelled}, {"LocalQueueStopped", vocab::state::kCancelled},
        {"Deactivated", vocab::state::kCancelled},         {"InactiveWorkload", vocab::state::kCancelled}};
    auto it = kEvicted.find(ev.reason);
    std::string state = it == kEvicted.end() ? vocab::state::kEvicted : it->second;
    // A deactivation that Kueue itself decided after too many requeues is an eviction, not a cancellation.
    if (state == vocab::state::kCancelled && ev.message.find("RequeuingLimitExceeded") != std::string::npos) state = vocab::state::kEvicted;
    ends.push_back({*ev.time, state, ev.reason, ev.message, "Evicted"});
  }
  std::sort(ends.begin(), ends.end(), [](const End& a, const End& b) { return a.t < b.t; });

  const json& owner = controller_owner(meta);
  std::string owner_name = str(owner, "name");
  int requeues = obj(status, "requeueState").value("count", 0);
  std::vector<std::string> tas_nodes;
  for (const auto& psa : arr(obj(status, "admission"), "podSetAssignments")) {
    const json& ta = obj(psa, "topologyAssignment");
    const json& levels = arr(ta, "levels");
    if (levels.empty() || !levels.back().is_string() || levels.back().get<std::string>() != "kubernetes.io/hostname") continue;
    for (const auto& d : arr(ta, "domains")) {
      const json& v = arr(d, "values");
      if (!v.empty() && v.back().is_string()) tas_nodes.push_back(v.back().get<std::string>());
    }
  }
  for (size_t i = 0; i < ends.size(); ++i) {
    const End& e = ends[i];
    if ((window.since && e.t < *window.since) || (window.until && e.t > *window.until)) {
      ++out.ignored;
      continue;
    }
    if (std::find(config.states.begin(), config.states.end(), e.state) == config.states.end()) {
      ++out.ignored;
      continue;
    }
    std::optional<int64_t> prev = i > 0 ? std::optional<int64_t>(ends[i - 1].t) : std::nullopt;
    auto in_cycle = [&](std::optional<int64_t> t) { return t && *t <= e.t && (!prev || *t > *prev); };
    Attempt a;
    a.context.scheduler = "kubernetes";
    a.cluster = cluster;
    a.context.workload_id = ns + "/" + name;
    a.job_id = owner_name.empty() ? name : owner_name;
    a.name = a.job_id;
    a.partition = str(obj(status, "admission"), "clusterQueue");
    if (a.partition.empty()) a.partition = str(obj(wl, "spec"), "queueName");
    a.key = fmt::format("kueue/{}/{}/{}@{}", cluster, ns, name, e.t / kSecond);
    a.context.end = e.t;
    a.context.terminal.state = e.state;
    a.evidence_after = prev;
    a.attempt = static_cast<int>(i) + 1 + std::max(0, requeues - static_cast<int>(ends.size() - 1));
    a.kubernetes.namespace_name = ns;
    a.kubernetes.workload = name;
    a.kubernetes.workload_uid = uid;
    a.kubernetes.owner_kind = str(owner, "kind");
    a.kubernetes.owner_name = owner_name;
    a.kubernetes.owner_uid = str(owner, "uid");
    if (auto t = kube_time(meta.value("creationTimestamp", json()))) a.submit = t;

    // The pods of this cycle: created before it ended, not before the previous one ended.
    std::vector<const json*> mine;
    for (const auto& p : pods) {
      auto created = kube_time(obj(p, "metadata").value("creationTimestamp", json()));
      if (created && (*created > e.t + 60 * kSecond || (prev && *created < *prev - 60 * kSecond))) continue;
      mine.push_back(&p);
    }
    // Start: recorded admission, live conditions, pods, creation.
    std::optional<int64_t> start;
    for (const auto& r : recorded)
      if (in_cycle(r.admitted_ns)) start = std::max(start.value_or(r.admitted_ns), r.admitted_ns);
    for (const char* c : {"Admitted", "QuotaReserved"}) {
      const Condition& x = conds[c];
      if (!start && x.present && x.is_true && in_cycle(x.time)) start = x.time;
    }
    if (!start)
      for (const json* p : mine) {
        auto t = kube_time(obj(*p, "status").value("startTime", json()));
        if (in_cycle(t)) start = std::min(start.value_or(*t), *t);
      }
    if (!start && !prev && a.submit && *a.submit <= e.t) start = a.submit;
    a.context.start = start;

    std::set<std::string> nodes;
    for (const json* p : mine) {
      AttemptPod ap = attempt_pod(*p);
      if (!ap.node.empty()) nodes.insert(ap.node);
      a.kubernetes.pods.push_back(std::move(ap));
    }
    if (nodes.empty()) {
      // The pods are gone: the placement recorded for this cycle's admission.
      std::optional<int64_t> adm;
      for (const auto& r : recorded)
        if (in_cycle(r.admitted_ns)) adm = std::max(adm.value_or(r.admitted_ns), r.admitted_ns);
      std::set<std::string> seen;
      for (const auto& r : recorded)
        if (adm && r.admitted_ns == *adm && seen.insert(r.pod_uid.empty() ? r.pod : r.pod_uid).second) {
          nodes.insert(r.node);
          AttemptPod ap;
          ap.name = r.pod;
          ap.uid = r.pod_uid;
          ap.node = r.node;
          ap.phase = "gone";
          ap.gone = true;
          a.kubernetes.pods.push_back(std::move(ap));
        }
    }
    if (nodes.empty())
      for (const auto& n : tas_nodes) nodes.insert(n);
    a.context.nodes.assign(nodes.begin(), nodes.end());
    std::sort(a.kubernetes.pods.begin(), a.kubernetes.pods.end(), [](const AttemptPod& x, const AttemptPod& y) { return x.name < y.name; });
    a.context.terminal.exit_code = first_failure_exit(mine);
    // Node names come from the API server (a pod's spec.nodeName, a recorded
    // placement, a topology assignment) and fill path templates and the
    // drain command: a list that breaks the context's rule is never passed
    // on (blueprint/node_names.h).
    if (std::string problem = node_list_problem(a.context.nodes); !problem.empty()) {
      out.warnings.push_back(fmt::format("{} skipped: {}", escape_for_terminal(a.key), problem));
      continue;
    }
    out.attempts.push_back(std::move(a));
  }
}

struct KueueDiscovery::EventIndex {
  bool loaded = false;
  std::map<std::string, std::vector<std::string>> created;              // owner object name -> pod names
  std::map<std::string, std::vector<std::pair<int64_t, std::string>>> scheduled;  // pod name -> (time, node)
};

bool KueueDiscovery::list_workloads(std::vector<json>& out, std::string& error) const {
  out.clear();
  std::string query = config_.label_selector.empty() ? "" : "labelSelector=" + HttpClient::escape(config_.label_selector);
  std::vector<std::string> paths;
  if (config_.namespaces.empty()) paths.push_back("/apis/kueue.x-k8s.io/v1beta1/workloads");
  for (const auto& ns : config_.namespaces)
    paths.push_back(fmt::format("/apis/kueue.x-k8s.io/v1beta1/namespaces/{}/workloads", HttpClient::escape(ns)));
  for (const auto& p : paths) {
    std::vector<json> items;
    KubeError ke;
    if (!client_->list(p, query, items, ke)) {
      error = fmt::format("listing {}: {}", p, ke.describe());
      return false;
    }
    for (auto& i : items) out.push_back(std::move(i));
  }
  return true;
}

bool KueueDiscovery::pods_of(const json& wl, std::vector<json>& pods, std::string& error) const {
  pods.clear();
  const json& meta = obj(wl, "metadata");
  std::string ns = str(meta, "namespace");
  bool owners_are_pods = false;
  std::string selector = pod_selector_for(wl, config_.pod_selector, owners_are_pods);
  KubeError ke;
  if (owners_are_pods) {
    for (const auto& r : arr(meta, "ownerReferences")) {
      if (str(r, "kind") != "Pod") continue;
      json pod;
      if (client_->get(fmt::format("/api/v1/namespaces/{}/pods/{}", HttpClient::escape(ns), HttpClient::escape(str(r, "name"))),
                       pod, ke)) {
        if (str(obj(pod, "metadata"), "uid") == str(r, "uid")) pods.push_back(std::move(pod));
      } else if (ke.code != 404) {
        error = fmt::format("pod {}/{}: {}", ns, str(r, "name"), ke.describe());
        return false;
      }
    }
    return true;
  }
  if (selector.empty()) return true;
  std::string path = fmt::format("/api/v1/namespaces/{}/pods", HttpClient::escape(ns));
  if (!client_->list(path, "labelSelector=" + HttpClient::escape(selector), pods, ke)) {
    error = fmt::format("listing the pods of {}/{}: {}", ns, str(meta, "name"), ke.describe());
    return false;
  }
  const json& owner = controller_owner(meta);
  if (pods.empty() && str(owner, "kind") == "Job") {
    // Clusters before Kubernetes 1.27 label Job pods with controller-uid only.
    if (!client_->list(path, "labelSelector=" + HttpClient::escape("controller-uid=" + str(owner, "uid")), pods, ke)) {
      error = fmt::format("listing the pods of {}/{}: {}", ns, str(meta, "name"), ke.describe());
      return false;
    }
  }
  return true;
}

bool KueueDiscovery::discover(const DiscoveryWindow& window, DiscoveryResult& out, std::string& error) {
  std::vector<json> workloads;
  if (!list_workloads(workloads, error)) return false;
  std::map<std::string, EventIndex> events;  // by namespace, loaded when an attempt needs it
  for (const auto& wl : workloads) {
    const json& meta = obj(wl, "metadata");
    // Only Workloads with an ending condition can give attempts: skip the
    // pod listing for the rest.
    auto conds = conditions_of(wl);
    bool ended = (conds["Finished"].present && conds["Finished"].is_true) || (conds["Evicted"].present && conds["Evicted"].is_true);
    if (!ended) {
      ++out.ignored;
      continue;
    }
    std::vector<json> pods;
    std::string perr;
    if (!pods_of(wl, pods, perr)) out.warnings.push_back(perr);
    std::vector<PlacementRecord> recorded;
    std::string uid = str(meta, "uid");
    if (book_ && !uid.empty() && !book_->placements(uid, recorded, perr))
      out.warnings.push_back(fmt::format("recorded placements of {}: {}", uid, perr));
    DiscoveryResult one;
    workload_attempts(wl, pods, recorded, config_, cluster_, window, one);
    for (auto& w : one.warnings) out.warnings.push_back(std::move(w));
    out.ignored += one.ignored;
    for (auto& a : one.attempts) {
      if (a.context.nodes.empty() && config_.events) {
        // Last resort: which pods the job controller created, and where the scheduler put them.
        EventIndex& ix = events[a.kubernetes.namespace_name];
        if (!ix.loaded) {
          ix.loaded = true;
          std::string path = fmt::format("/api/v1/namespaces/{}/events", HttpClient::escape(a.kubernetes.namespace_name));
          for (const char* reason : {"SuccessfulCreate", "SuccessfulCreatePod"}) {
            std::vector<json> items;
            KubeError ke;
            if (!client_->list(path, "fieldSelector=" + HttpClient::escape(std::string("reason=") + reason), items, ke)) {
              out.warnings.push_back(fmt::format("events of {}: {}", a.kubernetes.namespace_name, ke.describe()));
              continue;
            }
            for (const auto& e : items) {
              std::string msg = str(e, "message");
              const std::string tag = "Created pod: ";
              if (msg.rfind(tag, 0) != 0) continue;
              ix.created[str(obj(e, "involvedObject"), "name")].push_back(msg.substr(tag.size()));
            }
          }
          std::vector<json> items;
          KubeError ke;
          if (!client_->list(path, "fieldSelector=" + HttpClient::escape("involvedObject.kind=Pod,reason=Scheduled"), items, ke)) {
            out.warnings.push_back(fmt::format("events of {}: {}", a.kubernetes.namespace_name, ke.describe()));
          } else {
            for (const auto& e : items) {
              // default-scheduler: "Successfully assigned NAMESPACE/POD to NODE"
              std::string msg = str(e, "message");
              size_t to = msg.rfind(" to ");
              auto t = event_time(e);
              if (msg.rfind("Successfully assigned ", 0) != 0 || to == std::string::npos || !t) continue;
              ix.scheduled[str(obj(e, "involvedObject"), "name")].push_back({*t, msg.substr(to + 4)});
            }
          }
        }
        std::set<std::string> pod_names;
        for (const auto& [object, created] : ix.created) {
          bool owned = object == a.kubernetes.owner_name ||
                       (a.kubernetes.owner_kind == "JobSet" && object.rfind(a.kubernetes.owner_name + "-", 0) == 0);  // the JobSet's child Jobs
          if (owned) pod_names.insert(created.begin(), created.end());
        }
        std::set<std::string> nodes;
        for (const auto& p : pod_names) {
          auto it = ix.scheduled.find(p);
          if (it == ix.scheduled.end()) continue;
          std::optional<std::pair<int64_t, std::string>> best;
          for (const auto& s : it->second)
            if (s.first <= *a.context.end && (!a.evidence_after || s.first > *a.evidence_after) && (!best || s.first > best->first)) best = s;
          if (!best) continue;
          nodes.insert(best->second);
          AttemptPod ap;
          ap.name = p;
          ap.node = best->second;
          ap.phase = "gone";
          ap.gone = true;
          a.kubernetes.pods.push_back(std::move(ap));
          if (!a.context.start || best->first < *a.context.start) a.context.start = best->first;
        }
        std::sort(a.kubernetes.pods.begin(), a.kubernetes.pods.end(), [](const AttemptPod& x, const AttemptPod& y) { return x.name < y.name; });
        a.context.nodes.assign(nodes.begin(), nodes.end());
      }
      if (a.context.nodes.empty())
        out.warnings.push_back(fmt::format("{}: no node is known (pods gone, nothing recorded, no Events): attributed "
                                           "without nodes; run with --record-placement to keep placements",
                                           a.key));
      if (std::string problem = node_list_problem(a.context.nodes); !problem.empty()) {  // nodes named by Scheduled events
        out.warnings.push_back(fmt::format("{} skipped: {}", escape_for_terminal(a.key), problem));
        continue;
      }
      out.attempts.push_back(std::move(a));
    }
  }
  std::sort(out.attempts.begin(), out.attempts.end(), [](const Attempt& x, const Attempt& y) { return x.key < y.key; });
  return true;
}

bool KueueDiscovery::record_placement(PlacementBook& book, int64_t& recorded, std::string& error) {
  recorded = 0;
  std::vector<json> workloads;
  if (!list_workloads(workloads, error)) return false;
  std::vector<PlacementRecord> records;
  int64_t now = now_ns();
  for (const auto& wl : workloads) {
    auto conds = conditions_of(wl);
    if (conds["Finished"].is_true) continue;
    std::optional<int64_t> admitted;
    for (const char* c : {"Admitted", "QuotaReserved"})
      if (!admitted && conds[c].is_true) admitted = conds[c].time;
    if (!admitted) continue;
    std::vector<json> pods;
    std::string perr;
    if (!pods_of(wl, pods, perr)) {
      error = perr;
      return false;
    }
    const json& meta = obj(wl, "metadata");
    for (const auto& p : pods) {
      AttemptPod ap = attempt_pod(p);
      if (ap.node.empty()) continue;
      PlacementRecord r;
      r.workload_uid = str(meta, "uid");
      r.namespace_ = str(meta, "namespace");
      r.workload = str(meta, "name");
      r.admitted_ns = *admitted;
      r.pod = ap.name;
      r.pod_uid = ap.uid;
      r.node = ap.node;
      r.first_seen_ns = r.last_seen_ns = now;
      records.push_back(std::move(r));
    }
  }
  if (!book.record_placements(records, error)) return false;
  recorded = static_cast<int64_t>(records.size());
  return true;
}

// Configuration: the `discovery.kueue` section (blueprint/connector.h). It lives here,
// with the code that uses it, so that the connector is one file.

std::string KueueDiscoveryConfig::summary() const {
  return namespaces.empty() ? std::string("every namespace")
                            : fmt::format("{} namespace{}", namespaces.size(), namespaces.size() == 1 ? "" : "s");
}

std::shared_ptr<ConnectorConfig> read_kueue_discovery_config(ConfigReader& r, const YAML::Node& n) {
  auto config = std::make_shared<KueueDiscoveryConfig>();
  KueueDiscoveryConfig& out = *config;
  r.map(n, "discovery.kueue", {"namespaces", "label_selector", "states", "lookback", "pod_selector", "events", "placement_interval"},
        [&](const std::string& k, const YAML::Node& v) {
          if (k == "namespaces") r.strings(v, k, out.namespaces);
          else if (k == "label_selector") r.string(v, k, out.label_selector);
          else if (k == "states") read_states(r, v, out.states);
          else if (k == "lookback") r.duration(v, k, out.lookback, 1000000000LL);
          else if (k == "pod_selector") {
            if (r.string(v, k, out.pod_selector)) {
              static const std::vector<std::string> kVars = {"owner_name", "owner_uid", "workload"};
              for (size_t i = out.pod_selector.find('{'); i != std::string::npos; i = out.pod_selector.find('{', i + 1)) {
                size_t close = out.pod_selector.find('}', i);
                std::string var = close == std::string::npos ? "" : out.pod_selector.substr(i + 1, close - i - 1);
                if (std::find(kVars.begin(), kVars.end(), var) == kVars.end())
                  r.error("B0104", v, fmt::format("unknown placeholder '{{{}}}' in 'pod_selector' (known: {{owner_name}} "
                                                  "{{owner_uid}} {{workload}})", var));
              }
            }
          } else if (k == "events") r.boolean(v, k, out.events);
          else if (k == "placement_interval") r.duration(v, k, out.placement_interval, 1000000000LL);
        });
  return config;
}

bool make_kueue_discovery(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string&) {
  out.discovery = std::make_unique<KueueDiscovery>(static_cast<const KueueDiscoveryConfig&>(config), env.cluster, env.kube);
  return true;
}

}  // namespace culprit::blueprint
