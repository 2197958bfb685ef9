#include "dashboard/verdict_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "runtime/json_input.h"
#include "base/timestamp.h"

namespace culprit::dashboard {

namespace {

int64_t i_or(const ojson& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}
std::optional<int64_t> t_or(const ojson& j, const char* key) {
  std::string s = string_member_or(j, key);
  if (s.empty()) return std::nullopt;
  auto t = parse_rfc3339(s);
  return t ? std::optional<int64_t>(*t) : std::nullopt;
}
std::vector<std::string> names(const ojson& j, const char* key) {
  std::vector<std::string> out;
  if (!j.is_object() || !j.contains(key) || !j[key].is_array()) return out;
  for (const auto& x : j[key])
    if (x.is_string()) out.push_back(x.get<std::string>());
  return out;
}
std::string join(const std::vector<std::string>& v, const char* sep = ", ") { return fmt::format("{}", fmt::join(v, sep)); }

std::string anchor_of(const std::string& id, size_t index) {
  std::string a = "sym-";
  for (char c : id) a += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '-';
  return a + "-" + std::to_string(index);
}

// What a log source holds, for saying what its absence hides.
std::string source_meaning(const std::string& source) {
  static const std::map<std::string, std::string> m = {
      {"kernel", "GPU XIDs, PCIe and kernel errors"},
      {"app", "NCCL, PyTorch and application errors"},
      {"fabricmanager", "NVSwitch and Fabric Manager faults"},
      {"imex", "IMEX channel faults"},
      {"scheduler", "the scheduler's view of the nodes"},
      {"network", "InfiniBand and Ethernet port events"},
      {"k8s", "Kubernetes pod and node events"},
      {"metrics", "GPU and host metrics"},
  };
  auto it = m.find(source);
  return it == m.end() ? "its events" : it->second;
}

void coverage_sentences(const ojson& cov, std::vector<std::string>& out) {
  if (!cov.is_object()) return;
  auto without = names(cov, "nodes_without_logs");
  if (!without.empty())
    out.push_back(fmt::format("No logs at all from {} ({} node{}): nothing that happened there could be seen.",
                              join(without), without.size(), without.size() == 1 ? "" : "s"));
  std::vector<std::string> absent;
  if (cov.contains("sources") && cov["sources"].is_object()) {
    for (auto it = cov["sources"].begin(); it != cov["sources"].end(); ++it) {
      const std::string& source = it.key();
      const ojson& sc = it.value();
      int64_t expected = i_or(sc, "nodes_expected");
      auto with = names(sc, "nodes_with_data");
      auto missing = names(sc, "nodes_missing");
      if (expected > 0 && with.empty() && i_or(sc, "files") == 0) {
        absent.push_back(source);
      } else if (!missing.empty()) {
        // Nodes already reported as having no logs at all are not repeated.
        std::vector<std::string> rest;
        for (const auto& n : missing)
          if (std::find(without.begin(), without.end(), n) == without.end()) rest.push_back(n);
        const auto& list = rest.empty() ? missing : rest;
        out.push_back(fmt::format("No {} log from {} (read on {} of {} nodes): {} there could not be seen.", source,
                                  join(list), with.size(), expected, source_meaning(source)));
      }
      for (const auto& e : names(sc, "errors")) out.push_back(fmt::format("Reading the {} logs failed: {}.", source, e));
      if (int64_t n = i_or(sc, "lines_truncated"))
        out.push_back(fmt::format("{} {} line{} longer than the line limit were cut; only their beginning was matched.", n,
                                  source, n == 1 ? " was" : "s were"));
      if (int64_t n = i_or(sc, "lines_invalid_utf8"))
        out.push_back(fmt::format("{} {} line{} not valid UTF-8 and were read with the bad bytes replaced.", n, source,
                                  n == 1 ? " was" : "s were"));
      if (int64_t n = i_or(sc, "events_without_time"))
        out.push_back(fmt::format("{} {} event{} no timestamp: kept, but ordered only by position in the file.", n, source,
                                  n == 1 ? " had" : "s had"));
    }
  }
  if (cov.contains("collectors") && cov["collectors"].is_array())
    for (const auto& c : cov["collectors"]) {
      std::string status = string_member_or(c, "status");
      if (status == "ok" || status.empty()) continue;
      std::string what = string_member_or(c, "source").empty() ? string_member_or(c, "collector")
                                                   : fmt::format("{} ({})", string_member_or(c, "collector"), string_member_or(c, "source"));
      std::string verb = status == "failed" ? "failed" : status == "empty" ? "found nothing" : "was partial";
      std::string reason = string_member_or(c, "reason");
      out.push_back(fmt::format("The {} collector {}{}.", what, verb, reason.empty() ? "" : ": " + reason));
      for (const auto& e : names(c, "errors")) out.push_back(fmt::format("The {} collector reported: {}.", what, e));
    }
  auto ignored = names(cov, "ignored_files");
  if (!ignored.empty())
    out.push_back(fmt::format("{} file{} in the evidence {} not read (not a log of a known host and source): {}.",
                              ignored.size(), ignored.size() == 1 ? "" : "s", ignored.size() == 1 ? "was" : "were",
                              join(ignored)));
  if (!absent.empty())
    out.push_back(fmt::format("Not collected for any node: {} logs. Rules that read them could not fire; if this cluster "
                              "has them, add a collector.",
                              join(absent)));
}

}  // namespace


bool make_verdict_view(const std::string& text, VerdictView& view, std::string& error) {
  view.verdict = ojson::parse(text, nullptr, false);
  const ojson& v = view.verdict;
  if (v.is_discarded() || !v.is_object() || !v.contains("schema") || !v["schema"].is_string() ||
      v["schema"].get<std::string>().rfind("culprit.verdict/", 0) != 0) {
    error = "the stored verdict is not a culprit.verdict document";
    return false;
  }
  std::string root = v.contains("root_cause") ? string_member_or(v["root_cause"], "symptom") : "";
  std::set<std::string> candidate_symptoms;
  if (v.contains("candidates") && v["candidates"].is_array())
    for (const auto& c : v["candidates"])
      for (const auto& s : names(c, "symptoms")) candidate_symptoms.insert(s);

  std::map<std::string, size_t> by_id;
  if (v.contains("symptoms") && v["symptoms"].is_array()) {
    for (const auto& s : v["symptoms"]) {
      SymptomItem it;
      it.json = &s;
      it.id = string_member_or(s, "id");
      it.kind = string_member_or(s, "kind");
      it.node = string_member_or(s, "node");
      it.state = string_member_or(s, "state");
      it.first_ns = t_or(s, "first");
      it.last_ns = t_or(s, "last");
      it.count = i_or(s, "count");
      const ojson* change = nullptr;
      if (s.contains("demoted_by") && s["demoted_by"].is_object()) change = &s["demoted_by"];
      else if (s.contains("scrubbed_by") && s["scrubbed_by"].is_object()) change = &s["scrubbed_by"];
      if (change) {
        it.rule = string_member_or(*change, "rule");
        it.reason = string_member_or(*change, "reason");
        it.cause = string_member_or(*change, "cause");
      }
      it.root_cause = !root.empty() && it.id == root;
      it.candidate = candidate_symptoms.count(it.id) > 0;
      it.anchor = anchor_of(it.id, view.symptoms.size());
      by_id.emplace(it.id, view.symptoms.size());
      view.symptoms.push_back(std::move(it));
    }
  }
  // Parent links, with loops cut: walk up from each symptom; a chain that
  // comes back to where it started does not get that last edge.
  std::vector<std::optional<size_t>> parent(view.symptoms.size());
  for (size_t i = 0; i < view.symptoms.size(); ++i) {
    const auto& c = view.symptoms[i].cause;
    auto it = c.empty() ? by_id.end() : by_id.find(c);
    if (it == by_id.end() || it->second == i) continue;
    std::set<size_t> seen{i};
    bool loops = false;
    for (std::optional<size_t> p = it->second; p; p = parent[*p]) {
      if (!seen.insert(*p).second) {
        loops = true;
        break;
      }
    }
    if (!loops) parent[i] = it->second;
  }
  for (size_t i = 0; i < view.symptoms.size(); ++i)
    if (parent[i]) view.symptoms[*parent[i]].children.push_back(i);

  // The timeline's focus: the cause (or the candidates) and what they explain.
  std::vector<size_t> stack;
  for (size_t i = 0; i < view.symptoms.size(); ++i)
    if (view.symptoms[i].root_cause || (view.symptoms[i].candidate && view.symptoms[i].state == "active")) stack.push_back(i);
  while (!stack.empty()) {
    size_t i = stack.back();
    stack.pop_back();
    if (view.symptoms[i].focus) continue;
    view.symptoms[i].focus = true;
    for (size_t c : view.symptoms[i].children) stack.push_back(c);
  }

  auto rank = [&](size_t i) {
    const auto& s = view.symptoms[i];
    bool classified = s.json->contains("classification") && (*s.json)["classification"].is_object();
    if (s.root_cause) return 0;
    if (s.state == "active" && (classified || s.candidate)) return 1;
    if (s.state == "active") return 2;
    if (s.state == "demoted") return 3;
    return 4;
  };
  for (int r = 0; r <= 4; ++r)
    for (size_t i = 0; i < view.symptoms.size(); ++i)
      if (!parent[i] && rank(i) == r) view.roots.push_back(i);

  // Timeline rows: the workload's nodes, then other hosts (control plane),
  // then job-level symptoms.
  auto workload_nodes = v.contains("workload") ? names(v["workload"], "nodes") : std::vector<std::string>{};
  std::set<std::string> listed(workload_nodes.begin(), workload_nodes.end());
  view.timeline_nodes = workload_nodes;
  std::set<std::string> others;
  bool job = false;
  for (const auto& s : view.symptoms) {
    if (s.node.empty()) job = true;
    else if (!listed.count(s.node)) others.insert(s.node);
  }
  view.timeline_nodes.insert(view.timeline_nodes.end(), others.begin(), others.end());
  if (job) view.timeline_nodes.push_back("job");
  if (v.contains("workload")) {
    view.window_start_ns = t_or(v["workload"], "start");
    view.window_end_ns = t_or(v["workload"], "end");
  }
  coverage_sentences(v.contains("coverage") ? v["coverage"] : ojson(), view.coverage_gaps);
  return true;
}

ojson timeline_json(const VerdictView& view) {
  ojson j;
  auto t = [](std::optional<int64_t> ns) { return ns ? ojson(format_rfc3339(*ns)) : ojson(nullptr); };
  j["status"] = string_member_or(view.verdict, "status");
  j["start"] = t(view.window_start_ns);
  j["end"] = t(view.window_end_ns);
  j["rows"] = view.timeline_nodes;
  ojson list = ojson::array();
  for (const auto& s : view.symptoms) {
    ojson x;
    x["id"] = s.id;
    x["anchor"] = s.anchor;
    x["kind"] = s.kind;
    x["row"] = s.node.empty() ? "job" : s.node;
    x["state"] = s.state;
    x["first"] = t(s.first_ns);
    x["last"] = t(s.last_ns);
    x["count"] = s.count;
    x["cause"] = s.root_cause;
    x["candidate"] = s.candidate;
    x["focus"] = s.focus;
    x["rule"] = s.rule.empty() ? string_member_or(*s.json, "rule") : s.rule;
    x["reason"] = s.reason;
    list.push_back(std::move(x));
  }
  j["symptoms"] = std::move(list);
  return j;
}

}  // namespace culprit::dashboard
