// Reading the recovery policy (YAML). Like blueprint/config.cpp, yaml-cpp's
// exceptions stop here, and the whole document is checked in one walk so
// every mistake is reported with its position.
#include "blueprint/recovery_policy.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "base/limits.h"
#include "base/suggest.h"
#include "base/timestamp.h"
#include "blueprint/config.h"
#include "blueprint/yaml_document.h"
#include "runtime/recovery.h"

namespace culprit::blueprint {

namespace {

const std::vector<std::string> kTopKeys = {"rules", "replace_suspect", "default"};
const std::vector<std::string> kRuleKeys = {"action", "domain", "sub_domain", "faults", "within", "then"};
const std::vector<std::string> kReplaceKeys = {"faults", "within", "domain"};
const std::vector<std::string> kDecisions = {"act", "hold"};
const std::vector<std::string> kDomains = {"hardware", "software", "infrastructure", "user"};

class PolicyReader {
 public:
  PolicyReader(std::shared_ptr<const SourceFile> f, Diagnostics& d) : file_(std::move(f)), d_(d) {
    base_ = std::filesystem::path(file_->path).filename().string();
  }

  SourceRange at(const YAML::Node& n) const {
    SourceRange r;
    r.file = file_.get();
    YAML::Mark m = n.Mark();
    if (m.is_null()) return r;
    r.line = r.end_line = static_cast<uint32_t>(m.line + 1);
    r.col = static_cast<uint32_t>(m.column + 1);
    r.end_col = r.col + static_cast<uint32_t>(n.IsScalar() ? std::max<size_t>(1, n.Scalar().size()) : 1);
    return r;
  }
  std::string where(const YAML::Node& n) const { return fmt::format("{}:{}", base_, n.Mark().line + 1); }
  void error(const char* code, const YAML::Node& n, std::string msg, std::string help = {}) {
    d_.error(code, at(n), std::move(msg), std::move(help));
  }

  // Each key of the mapping `n` (named `what`), unknown keys reported.
  template <typename F>
  void keys(const YAML::Node& n, const std::string& what, const std::vector<std::string>& known, F&& handle) {
    if (!n.IsMap()) {
      error("B0902", n, fmt::format("'{}' must be a mapping of keys to values", what));
      return;
    }
    std::map<std::string, int> seen;  // key -> its line
    for (auto it = n.begin(); it != n.end(); ++it) {
      // Copies: yaml-cpp's iterator hands out a temporary pair.
      const YAML::Node key = it->first;
      const YAML::Node value = it->second;
      if (!key.IsScalar()) {
        error("B0902", key, fmt::format("the keys of {} must be plain names", what));
        continue;
      }
      std::string k = key.Scalar();
      if (k == "<<") {
        error("B0902", key, fmt::format("merge keys ('<<') are not supported in {}: write the keys out", what));
        continue;
      }
      if (std::find(known.begin(), known.end(), k) == known.end()) {
        std::string hint = did_you_mean(k, known);
        std::string list;
        for (const auto& x : known) list += (list.empty() ? "" : ", ") + x;
        error("B0902", key, fmt::format("unknown key '{}' in {}", k, what),
              hint.empty() ? fmt::format("the keys of {} are {}", what, list) : hint);
        continue;
      }
      if (seen.count(k)) {
        error("B0902", key, fmt::format("'{}' is given twice in {} (first on line {})", k, what, seen[k]));
        continue;
      }
      seen[k] = key.Mark().line + 1;
      handle(k, value);
    }
  }

  bool scalar(const YAML::Node& n, const std::string& what, std::string& out) {
    if (!n.IsScalar()) {
      error("B0903", n, fmt::format("'{}' must be a single value", what));
      return false;
    }
    out = n.Scalar();
    return true;
  }
  bool choice(const YAML::Node& n, const std::string& what, const std::vector<std::string>& allowed, std::string& out) {
    if (!scalar(n, what, out)) return false;
    if (std::find(allowed.begin(), allowed.end(), out) != allowed.end()) return true;
    std::string hint = did_you_mean(out, allowed), list;
    for (const auto& x : allowed) list += (list.empty() ? "" : ", ") + x;
    error("B0904", n, fmt::format("'{}' is not a valid {}", out, what), hint.empty() ? "one of " + list : hint);
    return false;
  }
  bool count(const YAML::Node& n, const std::string& what, int64_t& out) {
    std::string s;
    if (!scalar(n, what, s)) return false;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end || v < 1 || v > 1000000) {
      error("B0905", n, fmt::format("'{}' must be a whole number of attempts from 1", what), "for example: faults: 2");
      return false;
    }
    out = v;
    return true;
  }
  // Bounded (parse_bounded_duration): `end - within` stays inside int64.
  bool duration(const YAML::Node& n, const std::string& what, int64_t& out) {
    std::string s;
    if (!scalar(n, what, s)) return false;
    int64_t d = 0;
    DurationCheck c = parse_bounded_duration(s, d);
    if (c == DurationCheck::range) {
      error("B0905", n, duration_error(c, what), "for example: within: 30d");
      return false;
    }
    if (c != DurationCheck::ok || d <= 0) {
      error("B0905", n, fmt::format("'{}' must be a positive duration", what), "for example: within: 7d (d, h, m, s)");
      return false;
    }
    out = d;
    return true;
  }

 private:
  std::shared_ptr<const SourceFile> file_;
  Diagnostics& d_;
  std::string base_;
};

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
  PolicyReader rd(file, diags);
  if (root.IsNull()) return true;  // an empty policy: every recommendation acts
  try {
    rd.keys(root, "the policy", kTopKeys, [&](const std::string& k, const YAML::Node& v) {
      if (k == "default") {
        rd.choice(v, "decision", kDecisions, out.default_decision);
        out.default_where = rd.where(v);
      } else if (k == "replace_suspect") {
        ReplacePolicy rp;
        rp.where = rd.where(v);
        rd.keys(v, "replace_suspect", kReplaceKeys, [&](const std::string& rk, const YAML::Node& rv) {
          if (rk == "faults") rd.count(rv, "faults", rp.faults);
          else if (rk == "within") rd.duration(rv, "within", rp.within_ns);
          else rd.choice(rv, "domain", kDomains, rp.domain);
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
          rd.keys(item, "a rule", kRuleKeys, [&](const std::string& rk, const YAML::Node& rv) {
            if (rk == "action") {
              rd.choice(rv, "action", all_actions(), r.action);
              action_node = rv;
            } else if (rk == "domain") {
              rd.choice(rv, "domain", kDomains, r.domain);
            } else if (rk == "sub_domain") {
              rd.scalar(rv, "sub_domain", r.sub_domain);
            } else if (rk == "faults") {
              has_faults = rd.count(rv, "faults", r.faults);
            } else if (rk == "within") {
              has_within = rd.duration(rv, "within", r.within_ns);
            } else {
              rd.choice(rv, "decision", kDecisions, r.then);
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
