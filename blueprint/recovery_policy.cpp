// Reading the recovery policy (YAML). Like blueprint/config.cpp, yaml-cpp's
// exceptions stop here, and the whole document is checked in one walk so
// every mistake is reported with its position.
#include "blueprint/recovery_policy.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "base/operator_file.h"
#include "base/limits.h"
#include "base/suggest.h"
#include "base/timestamp.h"
#include "blueprint/config.h"
#include "blueprint/yaml_document.h"
#include "blueprint/yaml_reader.h"
#include "runtime/recovery.h"

namespace culprit::blueprint {

namespace {

const std::vector<std::string> kTopKeys = {"rules", vocab::node_action::kReplaceSuspect, "default"};
const std::vector<std::string> kRuleKeys = {"action", "domain", "sub_domain", "faults", "within", "then"};
const std::vector<std::string> kReplaceKeys = {"faults", "within", "domain"};
const std::vector<std::string> kDecisions = {"act", "hold"};
const std::vector<std::string> kDomains = vocab::words(vocab::domains());

// The codes of the policy's diagnostics (docs/recovery.md).
constexpr YamlCodes kPolicyCodes = {"B0902", "B0902", "B0902", "B0903", "B0904", "B0905"};

std::vector<std::string> all_actions() {
  std::vector<std::string> v = {"*"};
  for (const auto& a : job_actions()) v.push_back(a);
  for (const auto& a : node_actions()) v.push_back(a);
  return v;
}

}  // namespace

bool sub_domain_matches(const std::string& pattern, const std::string& sub) {
  if (pattern.empty() || pattern == "*") return true;
  if (pattern.size() > 2 && pattern.compare(pattern.size() - 2, 2, ".*") == 0) {
    std::string stem = pattern.substr(0, pattern.size() - 2);
    return sub == stem || sub.rfind(stem + ".", 0) == 0;
  }
  return pattern == sub;
}

bool parse_recovery_policy(const std::string& path, const std::string& text, RecoveryPolicy& out, Diagnostics& diags) {
  auto file = make_source_file(path, text);
  diags.keep(file);
  out = RecoveryPolicy{};
  out.path = path;
  size_t errors_before = diags.error_count();
  YAML::Node root;
  if (!load_yaml_document(file, "B0901", diags, root)) return false;
  YamlReader rd(file, diags, kPolicyCodes);
  if (root.IsNull()) return true;  // an empty policy: every recommendation acts
  try {
    rd.map(root, "the policy", kTopKeys, [&](const std::string& k, const YAML::Node& v) {
      if (k == "default") {
        rd.oneof(v, "decision", kDecisions, out.default_decision);
        out.default_where = rd.where(v);
      } else if (k == vocab::node_action::kReplaceSuspect) {
        ReplacePolicy rp;
        rp.where = rd.where(v);
        rd.map(v, vocab::node_action::kReplaceSuspect, kReplaceKeys, [&](const std::string& rk, const YAML::Node& rv) {
          if (rk == "faults") rd.integer(rv, "faults", rp.faults, 1, 1000000);
          else if (rk == "within") rd.duration(rv, "within", rp.within_ns, 1);
          else rd.oneof(rv, "domain", kDomains, rp.domain);
        });
        if (v.IsMap() && (!rp.faults || !rp.within_ns))
          rd.error("B0906", v, "replace_suspect needs both faults and within", "for example: {faults: 3, within: 30d}");
        out.replace_suspect = rp;
      } else {
        if (!v.IsSequence()) {
          rd.error("B0902", v, "'rules' must be a list of rules (each starts with '- ')");
          return;
        }
        for (const auto& item : v) {
          PolicyRule r;
          r.where = rd.where(item);
          bool has_faults = false, has_within = false;
          YAML::Node action_node;
          rd.map(item, "a rule", kRuleKeys, [&](const std::string& rk, const YAML::Node& rv) {
            if (rk == "action") {
              rd.oneof(rv, "action", all_actions(), r.action);
              action_node = rv;
            } else if (rk == "domain") {
              rd.oneof(rv, "domain", kDomains, r.domain);
            } else if (rk == "sub_domain") {
              rd.scalar(rv, "sub_domain", r.sub_domain);
            } else if (rk == "faults") {
              has_faults = rd.integer(rv, "faults", r.faults, 1, 1000000);
            } else if (rk == "within") {
              has_within = rd.duration(rv, "within", r.within_ns, 1);
            } else {
              rd.oneof(rv, "decision", kDecisions, r.then);
            }
          });
          if (!item.IsMap()) continue;
          if (has_faults != has_within && (item["faults"] || item["within"]))
            rd.error("B0906", item, "a rule with faults needs within, and one with within needs faults",
                     "for example: faults: 2 and within: 7d");
          bool job_action = std::find(job_actions().begin(), job_actions().end(), r.action) != job_actions().end();
          if (job_action && item["faults"])
            rd.error("B0906", action_node, fmt::format("'{}' is a job action: faults count a node's history", r.action),
                     "use faults with drain, reset_gpu, reboot, inspect_link or replace_suspect");
          if (!item["then"]) rd.error("B0906", item, "a rule needs 'then: act' or 'then: hold'");
          out.rules.push_back(std::move(r));
        }
      }
    });
  } catch (const std::exception& e) {
    // yaml-cpp's lookups and conversions throw; nothing leaves this file as an exception.
    diags.error("B0901", SourceRange{file.get(), 1, 1, 1, 2}, fmt::format("cannot read the policy: {}", e.what()));
  }
  return diags.error_count() == errors_before;
}

bool load_recovery_policy(const std::string& path, RecoveryPolicy& out, Diagnostics& diags, std::string& io_error) {
  std::string text;
  if (!read_regular_file(path, limits::kConfigFileBytes, "config_file_bytes", "the policy file", text, io_error)) return false;
  return parse_recovery_policy(path, text, out, diags);
}

bool decide(const RecoveryPolicy* policy, const std::string& action, const std::string& node, const std::string& domain,
            const std::string& sub_domain, int64_t end_ns, FaultHistory& history, PolicyDecision& out, std::string& error) {
  out = PolicyDecision{};
  if (!policy) {
    out.decision = "act";
    out.decided_by = "no policy";
    out.reason = "no policy file: every recommendation is handed off";
    return true;
  }
  std::vector<std::string> unmet;
  for (const auto& r : policy->rules) {
    if (r.action != "*" && r.action != action) continue;
    if (!r.domain.empty() && r.domain != domain) continue;
    if (!sub_domain_matches(r.sub_domain, sub_domain)) continue;
    if (r.faults > 0) {
      if (node.empty()) continue;  // a history condition is about a node
      int64_t n = 0;
      if (!history.culprit_attempts(node, r.domain, r.sub_domain, end_ns - r.within_ns, end_ns, n, error)) return false;
      if (n < r.faults) {
        unmet.push_back(fmt::format("{} needs {} faults of {} in {}, it had {}", r.where, r.faults, node,
                                    format_duration(r.within_ns), n));
        continue;
      }
      out.decision = r.then;
      out.decided_by = r.where;
      out.reason = fmt::format("{}: {} was the culprit of {} attempts in {} (the rule needs {}): {}", r.where, node, n,
                               format_duration(r.within_ns), r.faults, r.then);
      return true;
    }
    out.decision = r.then;
    out.decided_by = r.where;
    out.reason = fmt::format("{}: {}", r.where, r.then);
    break;
  }
  if (out.decided_by.empty()) {
    out.decision = policy->default_decision;
    out.decided_by = policy->default_where.empty() ? policy->path + " (default)" : policy->default_where;
    out.reason = fmt::format("no rule matched: the default, {}", policy->default_decision);
  }
  if (!unmet.empty()) {
    std::string u;
    for (const auto& s : unmet) u += (u.empty() ? "" : "; ") + s;
    out.reason = u + "; then " + out.reason;
  }
  return true;
}

}  // namespace culprit::blueprint
