#include "blueprint/attempt_codec.h"

#include "runtime/bundle.h"
#include "runtime/json_input.h"

namespace culprit::blueprint {

using ojson = nlohmann::ordered_json;

namespace {

constexpr int kVersion = 1;

ojson opt(const std::optional<int64_t>& v) { return v ? ojson(*v) : ojson(nullptr); }

std::optional<int64_t> get_opt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<int64_t>();
}

std::string get_str(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? std::string() : it->get<std::string>();
}

std::vector<std::string> get_strings(const nlohmann::json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it != j.end())
    for (const auto& x : *it) out.push_back(x.get<std::string>());
  return out;
}

}  // namespace

ojson attempt_to_json(const Attempt& a) {
  ojson j;
  j["v"] = kVersion;
  j["key"] = a.key;
  j["cluster"] = a.cluster;
  j["context"] = context_to_json(a.context);
  j["job_id"] = a.job_id;
  j["name"] = a.name;
  j["user"] = a.user;
  j["partition"] = a.partition;
  j["attempt"] = a.attempt;
  j["submit"] = opt(a.submit);
  j["evidence_after"] = opt(a.evidence_after);
  j["work_dir"] = a.work_dir;
  j["bundle_dir"] = a.bundle_dir;
  ojson steps = ojson::array();
  for (const auto& s : a.steps) {
    ojson o;
    o["id"] = s.id;
    o["name"] = s.name;
    o["state"] = s.state;
    o["exit_code"] = opt(s.exit_code);
    o["signal"] = opt(s.signal);
    o["start"] = opt(s.start);
    o["end"] = opt(s.end);
    o["nodes"] = s.nodes;
    steps.push_back(std::move(o));
  }
  j["steps"] = std::move(steps);
  const KubernetesAttempt& k = a.kubernetes;
  ojson kj;
  kj["namespace"] = k.namespace_name;
  kj["workload"] = k.workload;
  kj["workload_uid"] = k.workload_uid;
  kj["owner_kind"] = k.owner_kind;
  kj["owner_name"] = k.owner_name;
  kj["owner_uid"] = k.owner_uid;
  ojson pods = ojson::array();
  for (const auto& p : k.pods) {
    ojson pj;
    pj["name"] = p.name;
    pj["uid"] = p.uid;
    pj["node"] = p.node;
    pj["phase"] = p.phase;
    pj["gone"] = p.gone;
    ojson cs = ojson::array();
    for (const auto& c : p.containers) cs.push_back({{"name", c.name}, {"init", c.init}, {"restarts", c.restarts}, {"started", c.started}});
    pj["containers"] = std::move(cs);
    pods.push_back(std::move(pj));
  }
  kj["pods"] = std::move(pods);
  j["kubernetes"] = std::move(kj);
  return j;
}

bool attempt_from_json(const std::string& text, Attempt& out, std::string& error) {
  nlohmann::json j;
  JsonInputError je;
  if (!parse_json_input(text, j, je)) {
    error = "queued attempt: " + je.message;
    return false;
  }
  if (!j.is_object() || !j.contains("v") || !j["v"].is_number_integer() || j["v"].get<int>() != kVersion) {
    error = "queued attempt: not a version-1 attempt document (written by another culprit version?)";
    return false;
  }
  // The document comes from another replica of this binary: a member of the
  // wrong type is a defect or a foreign writer, and is refused as a whole.
  try {
    Attempt a;
    a.key = get_str(j, "key");
    a.cluster = get_str(j, "cluster");
    if (!parse_context(j.at("context"), a.context, error)) {
      error = "queued attempt " + a.key + ": " + error;
      return false;
    }
    a.job_id = get_str(j, "job_id");
    a.name = get_str(j, "name");
    a.user = get_str(j, "user");
    a.partition = get_str(j, "partition");
    a.attempt = j.at("attempt").get<int>();
    a.submit = get_opt(j, "submit");
    a.evidence_after = get_opt(j, "evidence_after");
    a.work_dir = get_str(j, "work_dir");
    a.bundle_dir = get_str(j, "bundle_dir");
    for (const auto& s : j.at("steps")) {
      AttemptStep st;
      st.id = get_str(s, "id");
      st.name = get_str(s, "name");
      st.state = get_str(s, "state");
      st.exit_code = get_opt(s, "exit_code");
      st.signal = get_opt(s, "signal");
      st.start = get_opt(s, "start");
      st.end = get_opt(s, "end");
      st.nodes = get_strings(s, "nodes");
      a.steps.push_back(std::move(st));
    }
    const auto& kj = j.at("kubernetes");
    KubernetesAttempt& k = a.kubernetes;
    k.namespace_name = get_str(kj, "namespace");
    k.workload = get_str(kj, "workload");
    k.workload_uid = get_str(kj, "workload_uid");
    k.owner_kind = get_str(kj, "owner_kind");
    k.owner_name = get_str(kj, "owner_name");
    k.owner_uid = get_str(kj, "owner_uid");
    for (const auto& pj : kj.at("pods")) {
      AttemptPod p;
      p.name = get_str(pj, "name");
      p.uid = get_str(pj, "uid");
      p.node = get_str(pj, "node");
      p.phase = get_str(pj, "phase");
      p.gone = pj.at("gone").get<bool>();
      for (const auto& cj : pj.at("containers")) {
        AttemptContainer c;
        c.name = get_str(cj, "name");
        c.init = cj.at("init").get<bool>();
        c.restarts = cj.at("restarts").get<int>();
        c.started = cj.at("started").get<bool>();
        p.containers.push_back(std::move(c));
      }
      k.pods.push_back(std::move(p));
    }
    if (a.key.empty()) {
      error = "queued attempt: no key";
      return false;
    }
    out = std::move(a);
    return true;
  } catch (const nlohmann::json::exception& e) {
    error = std::string("queued attempt: malformed document: ") + e.what();
    return false;
  }
}

}  // namespace culprit::blueprint
