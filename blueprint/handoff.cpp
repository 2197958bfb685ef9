#include "blueprint/handoff.h"

#include <fmt/format.h>

#include <chrono>

#include "runtime/json_input.h"
#include "base/vocabulary.h"
#include "base/sha256.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "blueprint/net/http_client.h"
#include "blueprint/process.h"
#include "blueprint/shell_quote.h"

namespace culprit::blueprint {

using ojson = nlohmann::ordered_json;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The command as a person would type it: each argument shell-quoted, so
// that pasting it runs exactly `argv` (blueprint/shell_quote.h).
std::string shell_text(const std::vector<std::string>& argv) { return shell_command(argv); }

// The drain reason. The attempt key carries scheduler- and bundle-supplied
// text (a workload id, a cluster name): control characters and newlines are
// encoded (\n, \x1b) so the reason stays one visible line in the printed
// command, in scontrol's record and on a terminal.
std::string drain_reason(const std::string& what, const std::string& key) {
  return fmt::format("reason=culprit: {} {}", escape_for_terminal(what), escape_for_terminal(key));
}

std::string first_line(const std::string& s) {
  std::string t = s.substr(0, s.find('\n'));
  while (!t.empty() && (t.back() == '\r' || t.back() == ' ')) t.pop_back();
  return t;
}

// The scontrol command of a node drain: built when deciding (shown in the
// document) and again when applying, from the same values.
std::vector<std::string> drain_argv(const std::string& scontrol, const std::string& node, const std::string& what,
                                    const std::string& key) {
  return {scontrol, "update", "nodename=" + node, "state=drain", drain_reason(what, key)};
}

}  // namespace

Handoff::~Handoff() = default;

std::unique_ptr<Handoff> Handoff::make(HandoffConfig config, std::string& error) {
  std::unique_ptr<Handoff> h(new Handoff(std::move(config)));
  const std::string& url = h->config_.webhook_url;
  if (!url.empty()) {
    auto scheme = url.find("://");
    if (scheme == std::string::npos || (url.compare(0, scheme, "http") != 0 && url.compare(0, scheme, "https") != 0)) {
      error = fmt::format("--webhook must be an http:// or https:// URL, not '{}'", url);
      return nullptr;
    }
    auto slash = url.find('/', scheme + 3);
    HttpClientConfig hc;
    hc.base_url = slash == std::string::npos ? url : url.substr(0, slash);
    h->webhook_path_ = slash == std::string::npos ? "/" : url.substr(slash);
    hc.retries = h->config_.webhook_retries;
    hc.timeout_ns = h->config_.webhook_timeout_ns;
    hc.connect_timeout_ns = std::min<int64_t>(hc.timeout_ns, 5LL * 1000000000);
    hc.backoff_base_ns = 200000000;
    hc.backoff_max_ns = 2LL * 1000000000;
    h->webhook_ = std::make_unique<HttpClient>(hc);
  }
  return h;
}

ojson Handoff::record_json(const Attempt& a, const ojson& verdict, const ojson& action, const RecommendationRecord& r,
                           const std::string& command) {
  ojson j;
  j["schema"] = "culprit.recommendation/v1";
  j["id"] = r.id;
  ojson at;
  at["key"] = a.key;
  at["scheduler"] = a.context.scheduler;
  at["cluster"] = a.cluster;
  at["workload_id"] = a.context.workload_id;
  at["end"] = a.context.end ? ojson(format_rfc3339(*a.context.end)) : ojson(nullptr);
  j["attempt"] = at;
  ojson v;
  v["status"] = verdict.value("status", "");
  v["domain"] = verdict.contains("domain") ? verdict["domain"] : ojson(nullptr);
  v["sub_domain"] = verdict.contains("sub_domain") ? verdict["sub_domain"] : ojson(nullptr);
  v["catalog_digest"] = verdict.contains("engine") ? string_member_or(verdict["engine"]["catalog"], "digest") : "";
  j["verdict"] = v;
  j["scope"] = r.scope;
  j["node"] = r.node.empty() ? ojson(nullptr) : ojson(r.node);
  j["action"] = r.action;
  if (r.scope == "job") j["nodes"] = action.contains("nodes") ? action["nodes"] : ojson::array();
  else j["target"] = action.contains("target") ? action["target"] : ojson::object();
  j["rule"] = action.contains("rule") ? action["rule"] : ojson(nullptr);
  j["basis"] = r.basis;
  j["reason"] = r.reason;
  j["symptoms"] = action.contains("symptoms") ? action["symptoms"] : ojson::array();
  j["evidence"] = action.contains("evidence") ? action["evidence"] : ojson::array();
  j["decision"] = r.decision;
  j["decided_by"] = r.decided_by;
  j["decision_reason"] = r.decision_reason;
  j["command"] = command.empty() ? ojson(nullptr) : ojson(command);
  return j;
}

std::string Handoff::record_id(const std::string& attempt_key, const std::string& catalog_digest, int64_t ordinal) {
  // Length-prefixed, so no two (key, digest) pairs share a preimage.
  std::string in = fmt::format("culprit.recommendation/v1\n{}:{}\n{}:{}\n{}", attempt_key.size(), attempt_key,
                               catalog_digest.size(), catalog_digest, ordinal);
  return "rec-" + sha256_hex(in).substr(0, 32);
}

bool Handoff::decide(const Attempt& a, const ojson& verdict, FaultHistory& history, std::vector<RecommendationRecord>& out,
                     std::string& error) const {
  out.clear();
  if (!verdict.contains("recommendation") || !verdict["recommendation"].is_object()) return true;  // a v1 verdict
  const ojson& rec = verdict["recommendation"];
  std::string status = string_member_or(verdict, "status"), domain = string_member_or(verdict, "domain"), sub = string_member_or(verdict, "sub_domain");
  std::string digest = verdict.contains("engine") ? string_member_or(verdict["engine"]["catalog"], "digest") : "";
  int64_t end = a.context.end ? *a.context.end : now_ns();
  // The actions in the order they are handed off: the job's, then the nodes'.
  std::vector<ojson> actions;
  ojson job = rec["job"];
  job["scope"] = "job";
  actions.push_back(job);
  for (const auto& n : rec["nodes"]) {
    ojson x = n;
    x["scope"] = "node";
    actions.push_back(std::move(x));
  }
  // The policy's repeat rule: a node that keeps failing is a suspect part.
  const RecoveryPolicy* policy = config_.policy;
  if (policy && policy->replace_suspect && status == vocab::status::kAttributed && domain == policy->replace_suspect->domain) {
    const ReplacePolicy& rp = *policy->replace_suspect;
    for (const auto& node : verdict["culprit_nodes"]) {
      std::string name = node.get<std::string>();
      bool already = false;
      for (const auto& x : actions)
        if (string_member_or(x, "node") == name && string_member_or(x, "action") == vocab::node_action::kReplaceSuspect) already = true;
      if (already) continue;
      int64_t n = 0;
      if (!history.culprit_attempts(name, rp.domain, "", end - rp.within_ns, end, n, error)) return false;
      if (n < rp.faults) continue;
      ojson x;
      x["scope"] = "node";
      x["node"] = name;
      x["action"] = vocab::node_action::kReplaceSuspect;
      x["target"] = ojson::object();
      x["rule"] = job.contains("rule") ? job["rule"] : ojson(nullptr);
      x["basis"] = "policy " + rp.where;
      x["reason"] = fmt::format("replace the suspect part of {}: the culprit of {} {} attempts in {} ({} needs {})", name, n,
                                rp.domain, format_duration(rp.within_ns), rp.where, rp.faults);
      x["symptoms"] = job["symptoms"];
      x["evidence"] = job["evidence"];
      actions.push_back(std::move(x));
    }
  }

  for (const auto& x : actions) {
    RecommendationRecord r;
    r.ordinal = static_cast<int64_t>(out.size());
    r.id = record_id(a.key, digest, r.ordinal);
    r.scope = string_member_or(x, "scope");
    r.node = string_member_or(x, "node");
    r.action = string_member_or(x, "action");
    r.target_json = (r.scope == "job" ? (x.contains("nodes") ? x["nodes"] : ojson::array())
                                      : (x.contains("target") ? x["target"] : ojson::object()))
                        .dump();
    r.rule = string_member_or(x, "rule");
    r.basis = string_member_or(x, "basis");
    r.reason = string_member_or(x, "reason");
    PolicyDecision d;
    if (!blueprint::decide(policy, r.action, r.node, domain, sub, end, history, d, error)) return false;
    r.decision = d.decision;
    r.decided_by = d.decided_by;
    r.decision_reason = d.reason;
    std::string command;
    if (r.decision == "act" && r.scope == "node" && r.action == vocab::node_action::kDrain && a.context.scheduler == "slurm") {
      std::vector<std::string> shown = drain_argv("scontrol", r.node, sub.empty() ? domain : sub, a.key);
      command = shell_text(shown);
    }
    r.document = record_json(a, verdict, x, r, command).dump(-1, ' ', false, ojson::error_handler_t::replace);
    out.push_back(std::move(r));
  }
  return true;
}

bool Handoff::deliver(RecommendationRecord& r, std::vector<std::string>& lines, bool& failed) {
  failed = false;
  if (webhook_ && webhook_down_) return false;  // the breaker is open: the next poll delivers it
  auto doc = ojson::parse(r.document, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc["attempt"].is_object() || !doc["verdict"].is_object()) {
    // Not deferred: retrying cannot repair it, and nothing is dropped silently.
    failed = true;
    lines.push_back(fmt::format("recommendation {}: the stored document is not a culprit.recommendation/v1 JSON "
                                "object; not handed off", r.id));
    r.handoff = "failed: the stored document is unreadable";
    r.state = "done";
    return true;
  }
  std::string key = string_member_or(doc["attempt"], "key"), scheduler = string_member_or(doc["attempt"], "scheduler");
  std::string sub = string_member_or(doc["verdict"], "sub_domain"), domain = string_member_or(doc["verdict"], "domain");
  std::string command = string_member_or(doc, "command");
  if (r.decision == "hold" && r.scope == "node")
    lines.push_back(fmt::format("{}: {} {} held: {}", key, r.action, r.node, r.decision_reason));

  std::vector<std::string> done;
  if (r.decision == "act" && r.scope == "node" && r.action == vocab::node_action::kDrain && scheduler == "slurm") {
    if (!config_.apply) {
      lines.push_back(fmt::format("{}: to drain {} (--apply runs it): {}", key, r.node, command));
      done.push_back("printed: " + command);
    } else {
      // Draining a node that is already draining changes nothing: a record
      // delivered again after a kill is harmless.
      std::vector<std::string> argv = drain_argv(config_.scontrol, r.node, sub.empty() ? domain : sub, key);
      std::map<std::string, std::string> env;
      if (!config_.slurm_conf.empty()) env["SLURM_CONF"] = config_.slurm_conf;
      ProcessResult pr;
      std::string perr;
      if (!run_process(argv, env, 30LL * 1000000000, pr, perr)) {
        failed = true;
        lines.push_back(fmt::format("{}: could not run {}: {}", key, command, perr));
        done.push_back(fmt::format("failed: {}: {}", command, perr));
      } else if (pr.exit_status != 0) {
        failed = true;
        std::string why = pr.timed_out ? "timed out" : pr.signal ? fmt::format("killed by signal {}", pr.signal)
                                                                 : fmt::format("exited {}", pr.exit_status);
        lines.push_back(fmt::format("{}: {} {}: {}", key, command, why, first_line(pr.err)));
        done.push_back(fmt::format("failed: {} {}: {}", command, why, first_line(pr.err)));
      } else {
        lines.push_back(fmt::format("{}: drained {}: {}", key, r.node, command));
        done.push_back("applied: " + command);
      }
    }
  }
  if (webhook_) {
    HttpResponse resp = webhook_->post_json(webhook_path_, r.document);
    if (resp.ok()) {
      done.push_back(fmt::format("webhook: HTTP {}{}", resp.status,
                                 resp.attempts > 1 ? fmt::format(" after {} attempts", resp.attempts) : ""));
    } else {
      failed = true;
      std::string why = fmt::format("{} ({} attempt{})", resp.describe(), resp.attempts, resp.attempts == 1 ? "" : "s");
      lines.push_back(fmt::format("{}: webhook {} failed for {} {}: {}", key, config_.webhook_url, r.action,
                                  r.node.empty() ? "(job)" : r.node, why));
      done.push_back("webhook failed: " + why);
      if (resp.status == 0) {
        // No answer at all (timed out, refused): the receiver will not
        // answer the next action of this poll either.
        webhook_down_ = true;
        lines.push_back(fmt::format("webhook {} did not answer: the other hand-offs of this poll stay pending for the next",
                                    config_.webhook_url));
      }
    }
  }
  if (done.empty()) done.push_back(r.decision == "act" ? "recorded" : "held");
  r.handoff.clear();
  for (const auto& s : done) r.handoff += (r.handoff.empty() ? "" : "; ") + s;
  if (config_.emit) {
    doc["handoff"] = r.handoff;
    *config_.emit << doc.dump(-1, ' ', false, ojson::error_handler_t::replace) << "\n";
    config_.emit->flush();
  }
  r.state = "done";
  return true;
}

}  // namespace culprit::blueprint
