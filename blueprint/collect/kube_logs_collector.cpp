// Pod logs are read with the kubelet's own timestamps (timestamps=true puts
// an RFC 3339 time with nanoseconds and one space before every line), so a
// line's time is exact even when the program printed none, and the log can
// be cut at the end of the scope while it streams.
#include "blueprint/collect/kube_logs_collector.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/byte_size.h"
#include "base/timestamp.h"
#include "blueprint/config_reader.h"
#include "blueprint/task_pool.h"

namespace culprit::blueprint {

using json = nlohmann::json;
using kube_json::arr;
using kube_json::obj;
using kube_json::str;

namespace {

const char* kControlPlane = "kubernetes";
// Container logs of one attempt asked for at once: each waits on the API
// server and the kubelet behind it.
constexpr size_t kLogsAtOnce = 4;

std::optional<int64_t> event_time(const json& e) {
  for (const char* k : {"lastTimestamp", "eventTime", "firstTimestamp"})
    if (auto t = kube_time(e.value(k, json()))) return t;
  if (auto t = kube_time(obj(e, "series").value("lastObservedTime", json()))) return t;
  return kube_time(obj(e, "metadata").value("creationTimestamp", json()));
}

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

struct Line {
  int64_t ts;
  std::string host, file, text;
};

}  // namespace

bool PodLogLineSplitter::emit(std::string_view raw,
                              const std::function<bool(std::optional<int64_t>, std::string_view, int64_t)>& line) {
  int64_t off = offset_;
  offset_ += static_cast<int64_t>(raw.size());
  size_t sp = raw.find(' ');
  std::optional<int64_t> ts;
  std::string_view text = raw;
  if (sp != std::string_view::npos && sp <= 40) {
    ts = parse_rfc3339(std::string(raw.substr(0, sp)));
    if (ts) text = raw.substr(sp + 1);
  }
  return line(ts, text, off);
}

bool PodLogLineSplitter::feed(std::string_view data,
                              const std::function<bool(std::optional<int64_t>, std::string_view, int64_t)>& line) {
  size_t pos = 0;
  while (pos < data.size()) {
    size_t nl = data.find('\n', pos);
    if (nl == std::string_view::npos) {
      carry_.append(data.substr(pos));
      if (carry_.size() > (16u << 20)) {  // a 16 MiB line: hand it over rather than grow without bound
        std::string l = std::move(carry_);
        carry_.clear();
        return emit(l, line);
      }
      return true;
    }
    bool ok;
    if (!carry_.empty()) {
      carry_.append(data.substr(pos, nl + 1 - pos));
      std::string l = std::move(carry_);
      carry_.clear();
      ok = emit(l, line);
    } else {
      ok = emit(data.substr(pos, nl + 1 - pos), line);
    }
    if (!ok) return false;
    pos = nl + 1;
  }
  return true;
}

bool PodLogLineSplitter::finish(const std::function<bool(std::optional<int64_t>, std::string_view, int64_t)>& line) {
  if (carry_.empty()) return true;
  std::string l = std::move(carry_);
  carry_.clear();
  return emit(l, line);
}

std::string event_line(const json& e) {
  auto t = event_time(e);
  if (!t) return "";
  const json& io = obj(e, "involvedObject");
  std::string kind = str(io, "kind");
  for (auto& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string component = str(obj(e, "source"), "component");
  if (component.empty()) component = str(e, "reportingComponent");
  int count = e.contains("count") && e["count"].is_number_integer() ? e["count"].get<int>() : 0;
  if (e.contains("series") && obj(e, "series").contains("count")) count = obj(e, "series").value("count", count);
  return fmt::format("{} {} {} {}/{}/{}{}{}: {}", format_rfc3339(*t), str(e, "type").empty() ? "Normal" : str(e, "type"),
                     str(e, "reason"), kind, str(io, "namespace"), str(io, "name"),
                     component.empty() ? "" : " (" + component + ")", count > 1 ? fmt::format(" x{}", count) : "",
                     one_line(str(e, "message")));
}

void KubeLogsCollector::collect(const CollectRequest& req, Collected& out) const {
  const Attempt& a = *req.attempt;
  if (a.kubernetes.namespace_name.empty()) return;  // not a Kubernetes attempt: nothing to ask the API
  if (config_.logs) collect_logs(req, out);
  if (config_.events) collect_events(req, out);
}

void KubeLogsCollector::collect_logs(const CollectRequest& req, Collected& out) const {
  const Attempt& a = *req.attempt;
  CollectorReport rep;
  rep.collector = "kubernetes-pod-logs";
  rep.source = config_.source;
  rep.nodes_expected = a.context.nodes;
  if (!req.wanted_sources.empty() && !req.wanted_sources.count(config_.source)) {
    rep.status = "empty";
    rep.reason = fmt::format("not read: no extractor of the catalog reads source '{}'", config_.source);
    out.collectors.push_back(std::move(rep));
    return;
  }
  std::set<std::string> covered;
  std::vector<std::string> gone;
  int64_t obs_before = static_cast<int64_t>(out.observations.size());
  // One request per container instance (the previous one first: time
  // order). They are independent: up to kLogsAtOnce run at once, and their
  // lines are appended in this order, so the result is the sequential one.
  struct LogRequest {
    const AttemptPod* pod = nullptr;
    const AttemptContainer* container = nullptr;
    bool previous = false;
    std::vector<Observation> lines;
    int64_t bytes = 0;
    bool ok = false, ran = false;
    std::string error;
  };
  std::vector<LogRequest> todo;
  for (const auto& pod : a.kubernetes.pods) {
    if (pod.gone) {
      gone.push_back(pod.name);
      continue;
    }
    for (const auto& c : pod.containers) {
      if (!config_.containers.empty() &&
          std::find(config_.containers.begin(), config_.containers.end(), c.name) == config_.containers.end())
        continue;
      if (!c.started) continue;  // never ran: no log to ask for
      for (bool previous : {true, false}) {
        if (previous && !(config_.previous && c.restarts > 0)) continue;
        LogRequest r;
        r.pod = &pod;
        r.container = &c;
        r.previous = previous;
        todo.push_back(std::move(r));
      }
    }
  }
  auto fetch = [&](LogRequest& r) {
    if (req.stop && req.stop->load()) return;
    r.ran = true;
    const AttemptPod& pod = *r.pod;
    const AttemptContainer& c = *r.container;
    std::string q = fmt::format("container={}&timestamps=true", HttpClient::escape(c.name));
    if (r.previous) q += "&previous=true";
    if (req.scope_start) q += "&sinceTime=" + HttpClient::escape(format_rfc3339(*req.scope_start - *req.scope_start % 1000000000));
    if (config_.max_bytes_per_container) q += fmt::format("&limitBytes={}", config_.max_bytes_per_container);
    std::string file = fmt::format("k8s:{}/{}/{}{}", a.kubernetes.namespace_name, pod.name, c.name, r.previous ? "#previous" : "");
    int64_t line_no = 0;
    bool past_end = false;
    PodLogLineSplitter split;
    auto on_line = [&](std::optional<int64_t> ts, std::string_view text, int64_t offset) {
      if (ts && req.scope_end && *ts > *req.scope_end) {
        past_end = true;
        return false;
      }
      ++line_no;
      if (ts && req.scope_start && *ts < *req.scope_start) return true;  // sinceTime has second precision
      Observation o;
      o.host = pod.node.empty() ? kControlPlane : pod.node;
      o.source = config_.source;
      o.file = file;
      o.line = line_no;
      o.offset = offset;
      o.ts = ts;
      o.text.assign(text.data(), text.size());
      r.bytes += static_cast<int64_t>(o.text.size());
      r.lines.push_back(std::move(o));
      return true;
    };
    KubeError ke;
    int64_t wire = 0;
    r.ok = client_->pod_log(a.kubernetes.namespace_name, pod.name, q, [&](std::string_view d) { return split.feed(d, on_line); },
                            ke, wire, req.stop);
    if (r.ok && !past_end) split.finish(on_line);
    if (!r.ok)
      r.error = fmt::format("{}/{} container {}{}: {}", a.kubernetes.namespace_name, pod.name, c.name, r.previous ? " (previous)" : "",
                            ke.describe());
  };
  for_each_at_once(todo.size(), kLogsAtOnce, [&](size_t i) { fetch(todo[i]); });
  int64_t requests = 0;
  for (auto& r : todo) {
    if (!r.ran) continue;
    ++requests;
    rep.bytes += r.bytes;
    for (auto& o : r.lines) out.observations.push_back(std::move(o));
    std::vector<Observation>().swap(r.lines);
    if (r.ok) {
      if (!r.pod->node.empty()) covered.insert(r.pod->node);
    } else {
      rep.errors.push_back(std::move(r.error));
    }
  }
  rep.observations = static_cast<int64_t>(out.observations.size()) - obs_before;
  out.bytes += rep.bytes;
  for (const auto& n : a.context.nodes)
    if (covered.count(n)) rep.nodes_covered.push_back(n);
  std::vector<std::string> missing;
  for (const auto& n : a.context.nodes)
    if (!covered.count(n)) missing.push_back(n);
  std::sort(rep.errors.begin(), rep.errors.end());
  if (req.stop && req.stop->load()) {
    rep.status = "partial";
    rep.reason = "stopped before every log was read";
  } else if (a.kubernetes.pods.empty()) {
    rep.status = "empty";
    rep.reason = "no pod of the workload is known";
  } else if (covered.empty()) {
    rep.status = rep.errors.empty() && gone.empty() && requests == 0 ? "empty" : "failed";
    rep.reason = !gone.empty() && rep.errors.empty()
                     ? fmt::format("the pods are gone ({}): their logs went with them", fmt::join(gone, ", "))
                     : requests == 0 ? "no container of the pods has run" : fmt::format("no log could be read ({} error{})", rep.errors.size(), rep.errors.size() == 1 ? "" : "s");
  } else if (!missing.empty()) {
    rep.status = "partial";
    rep.reason = fmt::format("no pod log from {} of {} nodes: {}{}", missing.size(), a.context.nodes.size(), fmt::join(missing, ", "),
                             gone.empty() ? "" : fmt::format(" (pods gone: {})", fmt::join(gone, ", ")));
  } else if (!rep.errors.empty()) {
    rep.status = "partial";
    rep.reason = fmt::format("{} log request{} failed", rep.errors.size(), rep.errors.size() == 1 ? "" : "s");
  }
  out.collectors.push_back(std::move(rep));
}

void KubeLogsCollector::collect_events(const CollectRequest& req, Collected& out) const {
  const Attempt& a = *req.attempt;
  CollectorReport rep;
  rep.collector = "kubernetes-events";
  rep.source = config_.events_source;
  if (!req.wanted_sources.empty() && !req.wanted_sources.count(config_.events_source)) {
    rep.status = "empty";
    rep.reason = fmt::format("not read: no extractor of the catalog reads source '{}'", config_.events_source);
    out.collectors.push_back(std::move(rep));
    return;
  }
  std::vector<Line> lines;
  auto in_scope = [&](int64_t t) {
    return (!req.scope_start || t >= *req.scope_start) && (!req.scope_end || t <= *req.scope_end);
  };
  auto add = [&](int64_t t, const std::string& host, const std::string& file, std::string text) {
    if (in_scope(t)) lines.push_back({t, host, file, std::move(text)});
  };
  std::string ns_path = fmt::format("/api/v1/namespaces/{}", HttpClient::escape(a.kubernetes.namespace_name));
  std::map<std::string, std::string> pod_node;
  for (const auto& p : a.kubernetes.pods) pod_node[p.name] = p.node;
  // Container terminations and the pod's status, from the live pods.
  for (const auto& p : a.kubernetes.pods) {
    if (p.gone || (req.stop && req.stop->load())) continue;
    json pod;
    KubeError ke;
    if (!client_->get(ns_path + "/pods/" + HttpClient::escape(p.name), pod, ke)) {
      if (ke.code != 404) rep.errors.push_back(fmt::format("pod {}/{}: {}", a.kubernetes.namespace_name, p.name, ke.describe()));
      continue;
    }
    std::string host = p.node.empty() ? kControlPlane : p.node;
    std::string file = fmt::format("k8s-status:{}/{}", a.kubernetes.namespace_name, p.name);
    const json& st = obj(pod, "status");
    for (const char* k : {"initContainerStatuses", "containerStatuses"})
      for (const auto& cs : arr(st, k)) {
        std::optional<int64_t> t;
        for (const char* which : {"state", "lastState"}) {
          auto ft = kube_time(obj(obj(cs, which), "terminated").value("finishedAt", json()));
          if (ft && (!t || *ft > *t)) t = ft;
        }
        if (!t) continue;
        add(*t, host, file,
            fmt::format("{} pod {}/{} container {} terminated: {}", format_rfc3339(*t), a.kubernetes.namespace_name, p.name,
                        str(cs, "name"), cs.dump()));
      }
    if (!str(st, "reason").empty()) {
      std::optional<int64_t> t;
      for (const auto& c : arr(st, "conditions"))
        if (auto ct = kube_time(c.value("lastTransitionTime", json())); ct && (!t || *ct > *t)) t = ct;
      if (t)
        add(*t, host, file,
            fmt::format("{} pod {}/{} status {}: {}", format_rfc3339(*t), a.kubernetes.namespace_name, p.name, str(st, "reason"),
                        one_line(str(st, "message"))));
    }
  }
  // Events about the pods, the Workload, its owner and the nodes.
  struct Subject {
    std::string kind, name, ns, host;
  };
  std::vector<Subject> subjects;
  for (const auto& p : a.kubernetes.pods) subjects.push_back({"Pod", p.name, a.kubernetes.namespace_name, p.node.empty() ? kControlPlane : p.node});
  if (!a.kubernetes.workload.empty()) subjects.push_back({"Workload", a.kubernetes.workload, a.kubernetes.namespace_name, kControlPlane});
  if (!a.kubernetes.owner_name.empty() && a.kubernetes.owner_kind != "Pod")
    subjects.push_back({a.kubernetes.owner_kind, a.kubernetes.owner_name, a.kubernetes.namespace_name, kControlPlane});
  for (const auto& n : a.context.nodes) subjects.push_back({"Node", n, "", n});  // node events live in "default" or any namespace
  int64_t asked = 0, answered = 0;
  for (const auto& s : subjects) {
    if (req.stop && req.stop->load()) break;
    std::string path = s.kind == "Node" ? "/api/v1/events" : ns_path + "/events";
    std::string sel = fmt::format("involvedObject.kind={},involvedObject.name={}", s.kind, s.name);
    std::vector<json> items;
    KubeError ke;
    ++asked;
    if (!client_->list(path, "fieldSelector=" + HttpClient::escape(sel), items, ke, req.stop)) {
      rep.errors.push_back(fmt::format("events of {} {}: {}", s.kind, s.name, ke.describe()));
      continue;
    }
    ++answered;
    std::string file = fmt::format("k8s-events:{}/{}/{}", s.ns.empty() ? "-" : s.ns, s.kind, s.name);
    for (const auto& e : items) {
      auto t = event_time(e);
      std::string text = event_line(e);
      if (t && !text.empty()) add(*t, s.host, file, std::move(text));
    }
  }
  // The Workload's conditions say why Kueue ended it (eviction, preemption, finish).
  if (!a.kubernetes.workload.empty() && !(req.stop && req.stop->load())) {
    json wl;
    KubeError ke;
    std::string path = fmt::format("/apis/kueue.x-k8s.io/v1beta1/namespaces/{}/workloads/{}", HttpClient::escape(a.kubernetes.namespace_name),
                                   HttpClient::escape(a.kubernetes.workload));
    if (client_->get(path, wl, ke)) {
      std::string file = fmt::format("k8s-workload:{}/{}", a.kubernetes.namespace_name, a.kubernetes.workload);
      for (const auto& c : arr(obj(wl, "status"), "conditions")) {
        auto t = kube_time(c.value("lastTransitionTime", json()));
        std::string type = str(c, "type");
        if (!t || str(c, "status") != "True" || type == "QuotaReserved" || type == "Admitted" || type == "PodsReady") continue;
        add(*t, kControlPlane, file,
            fmt::format("{} Workload {}/{} condition {}: {}", format_rfc3339(*t), a.kubernetes.namespace_name, a.kubernetes.workload, type,
                        one_line(str(c, "message"))));
      }
    } else if (ke.code != 404) {
      rep.errors.push_back(fmt::format("Workload {}/{}: {}", a.kubernetes.namespace_name, a.kubernetes.workload, ke.describe()));
    }
  }
  std::sort(lines.begin(), lines.end(), [](const Line& x, const Line& y) {
    return std::tie(x.file, x.ts, x.text) < std::tie(y.file, y.ts, y.text);
  });
  std::map<std::string, int64_t> numbers;
  std::set<std::string> hosts;
  for (auto& l : lines) {
    Observation o;
    o.host = l.host;
    o.source = config_.events_source;
    o.file = l.file;
    o.line = ++numbers[l.file];
    o.ts = l.ts;
    o.text = std::move(l.text);
    rep.bytes += static_cast<int64_t>(o.text.size());
    hosts.insert(o.host);
    out.observations.push_back(std::move(o));
  }
  rep.observations = static_cast<int64_t>(lines.size());
  out.bytes += rep.bytes;
  std::sort(rep.errors.begin(), rep.errors.end());
  if (req.stop && req.stop->load()) {
    rep.status = "partial";
    rep.reason = "stopped before every event was read";
  } else if (asked > 0 && answered == 0) {
    rep.status = "failed";
    rep.reason = fmt::format("no event list could be read ({} error{})", rep.errors.size(), rep.errors.size() == 1 ? "" : "s");
  } else if (!rep.errors.empty()) {
    rep.status = "partial";
    rep.reason = fmt::format("{} request{} failed", rep.errors.size(), rep.errors.size() == 1 ? "" : "s");
  } else if (lines.empty()) {
    rep.status = "empty";
    rep.reason = "no event or termination of the workload inside its window (Events expire after an hour by default)";
  }
  out.collectors.push_back(std::move(rep));
}

// Configuration: the `collectors.kubernetes` section (blueprint/connector.h). It lives here,
// with the code that uses it, so that the connector is one file.

std::string KubernetesCollectorConfig::summary() const {
  if (logs && events) return "pod logs and events";
  return logs ? "pod logs" : events ? "events" : "nothing";
}

std::shared_ptr<ConnectorConfig> read_kube_logs_collector_config(ConfigReader& r, const YAML::Node& n) {
  auto config = std::make_shared<KubernetesCollectorConfig>();
  KubernetesCollectorConfig& out = *config;
  r.map(n, "collectors.kubernetes",
        {"logs", "source", "containers", "previous", "events", "events_source", "max_bytes_per_container"},
        [&](const std::string& k, const YAML::Node& v) {
          if (k == "logs") r.boolean(v, k, out.logs);
          else if (k == "source" || k == "events_source") {
            std::string& dst = k == "source" ? out.source : out.events_source;
            if (r.string(v, k, dst) && !source_name_ok(dst))
              r.error("B0104", v, fmt::format("'{}' must be a lowercase name ([a-z0-9_-]+)", k));
          } else if (k == "containers") r.strings(v, k, out.containers);
          else if (k == "previous") r.boolean(v, k, out.previous);
          else if (k == "events") r.boolean(v, k, out.events);
          else if (k == "max_bytes_per_container") {
            std::string s;
            if (r.scalar(v, k, s)) {
              auto sz = parse_byte_size(s);
              if (!sz) r.error("B0104", v, "'max_bytes_per_container' must be a size such as 256MiB, 1GiB or 0 (no limit)");
              else out.max_bytes_per_container = *sz;
            }
          }
        });
  return config;
}

bool make_kube_logs_collector(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string&) {
  out.collector = std::make_unique<KubeLogsCollector>(static_cast<const KubernetesCollectorConfig&>(config), env.kube);
  return true;
}

}  // namespace culprit::blueprint
