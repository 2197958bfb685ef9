#include "blueprint/run_steps.h"

#include <fmt/format.h>

#include <chrono>

#include "base/vocabulary.h"
#include "blueprint/placement.h"

namespace culprit::blueprint::run_steps {

using ojson = nlohmann::ordered_json;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} {}", b, units[u]) : fmt::format("{:.1f} {}", b, units[u]);
}

namespace {

ojson attempt_json(const Attempt& a) {
  ojson j;
  j["key"] = a.key;
  j["scheduler"] = a.context.scheduler;
  j["cluster"] = a.cluster;
  j["workload_id"] = a.context.workload_id;
  j["attempt"] = a.attempt;
  j["state"] = a.context.terminal.state;
  j["exit_code"] = a.context.terminal.exit_code ? ojson(*a.context.terminal.exit_code) : ojson(nullptr);
  j["start"] = a.context.start ? ojson(format_rfc3339(*a.context.start)) : ojson(nullptr);
  j["end"] = a.context.end ? ojson(format_rfc3339(*a.context.end)) : ojson(nullptr);
  j["nodes"] = a.context.nodes;
  return j;
}

std::string verdict_line(const ojson& v) {
  std::string status = v.value("status", "");
  std::string what = status;
  if (v["domain"].is_string()) what += fmt::format(" {}/{}", v["domain"].get<std::string>(),
                                                   v["sub_domain"].is_string() ? v["sub_domain"].get<std::string>() : "");
  if (!v["culprit_nodes"].empty()) {
    std::vector<std::string> n;
    for (const auto& x : v["culprit_nodes"]) n.push_back(x.get<std::string>());
    what += fmt::format(" on {}", fmt::join(n, ","));
  }
  // An ambiguous verdict says between what: the operator's next question.
  if (status == vocab::status::kAmbiguous && v.contains("candidates") && v["candidates"].is_array()) {
    std::vector<std::string> c;
    for (const auto& x : v["candidates"]) {
      std::vector<std::string> nodes;
      if (x.contains("nodes") && x["nodes"].is_array())
        for (const auto& n : x["nodes"]) nodes.push_back(n.is_string() ? n.get<std::string>() : "?");
      c.push_back(fmt::format("{}/{}{}", x.value("domain", "?"), x.value("sub_domain", "?"),
                              nodes.empty() ? "" : fmt::format(" on {}", fmt::join(nodes, ","))));
    }
    if (!c.empty()) what += fmt::format(" between {}", fmt::join(c, " and "));
  }
  return what;
}

// Every line is escaped (escape_for_terminal): keys, node names, summaries
// and warnings come from the scheduler and the evidence.
void write_text(std::ostream& out, const Attempt& a, const ojson& v) {
  out << escape_for_terminal(fmt::format("{}  {}{}  nodes {}", a.key, a.context.terminal.state.empty() ? "?" : a.context.terminal.state,
                                         a.context.terminal.exit_code ? fmt::format(" exit {}", *a.context.terminal.exit_code) : "", fmt::join(a.context.nodes, ",")))
      << "\n";
  out << "  " << escape_for_terminal(verdict_line(v)) << "\n";
  if (v["root_cause"].is_object()) out << "  " << escape_for_terminal(v["root_cause"].value("summary", "")) << "\n";
  for (const auto& w : v["coverage"]["warnings"]) out << "  warning: " << escape_for_terminal(w.get<std::string>()) << "\n";
}

// What the policy decided for each recommendation (stdout jsonl: "recovery").
ojson recovery_json(const std::vector<RecommendationRecord>& records) {
  ojson list = ojson::array();
  for (const auto& r : records) {
    ojson j;
    j["scope"] = r.scope;
    j["node"] = r.node.empty() ? ojson(nullptr) : ojson(r.node);
    j["action"] = r.action;
    j["decision"] = r.decision;
    j["decided_by"] = r.decided_by;
    j["reason"] = r.decision_reason;
    j["id"] = r.id;
    j["handoff"] = r.state == "pending" ? "pending" : r.handoff;
    list.push_back(std::move(j));
  }
  return list;
}

// One line per recommended action, in words that say what happened to the
// node: "would drain node-02 (dry run; --apply runs scontrol)" and never a
// bare "drain node-02 -> act", which reads as if it was done. The job's
// `none` says nothing and has no line.
void write_recovery_text(std::ostream& out, const std::vector<RecommendationRecord>& records) {
  for (const auto& r : records) {
    if (r.action == vocab::job_action::kNone) continue;
    std::string what = r.action + (r.node.empty() ? "" : " " + r.node);
    std::string line;
    if (r.decision == "hold") line = fmt::format("held: {} ({})", what, r.decided_by);
    else if (r.handoff.rfind("printed: ", 0) == 0) line = fmt::format("would {} (dry run; --apply runs scontrol)", what);
    else if (r.handoff.rfind("applied: ", 0) == 0) line = fmt::format("done: {} ({})", what, r.handoff.substr(9));
    else if (r.handoff.rfind("failed", 0) == 0) line = fmt::format("failed: {} ({})", what, r.handoff);
    else line = fmt::format("recommended: {} ({}; handed off, not done by culprit)", what, r.decided_by);
    out << "  " << escape_for_terminal(line) << "\n";
  }
}

// One line per attempt (text without --verbose): the attempt, how it ended,
// the verdict and what follows from it, said as write_recovery_text says it.
void write_text_line(std::ostream& out, const Attempt& a, const ojson& v, const std::vector<RecommendationRecord>& records) {
  std::vector<std::string> next;
  for (const auto& r : records) {
    if (r.action == vocab::job_action::kNone) continue;
    std::string what = r.action + (r.node.empty() ? "" : " " + r.node);
    if (r.decision == "hold") next.push_back("held: " + what);
    else if (r.handoff.rfind("printed: ", 0) == 0) next.push_back("would " + what + " (dry run)");
    else if (r.handoff.rfind("applied: ", 0) == 0) next.push_back("done: " + what);
    else if (r.handoff.rfind("failed", 0) == 0) next.push_back("failed: " + what);
    else next.push_back("recommended: " + what);
  }
  out << escape_for_terminal(fmt::format("{}  {}{}  {}{}", a.key, a.context.terminal.state.empty() ? "?" : a.context.terminal.state,
                                         a.context.terminal.exit_code ? fmt::format(" {}", *a.context.terminal.exit_code) : "",
                                         verdict_line(v), next.empty() ? "" : fmt::format("  -> {}", fmt::join(next, "; "))))
      << "\n";
}

}  // namespace

// How long after the job's end its verdict came: "2.4 s" while seconds
// matter, then in the duration notation the rest of the output uses
// ("209d3h4m5s"), whole seconds.
std::string human_latency(int64_t ns) {
  if (ns < 120LL * 1000000000) return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
  return format_duration(ns - ns % 1000000000);
}

namespace {

// Hands off the pending recommendations of verdict `verdict_id` in order
// and records each outcome; a deferred one (the webhook's breaker is open)
// stays pending and is counted in `deferred`. False only on a store error.
bool deliver_recommendations(RunSetup& s, int64_t verdict_id, std::vector<RecommendationRecord>& records,
                             std::vector<std::string>& lines, int& status, int64_t& deferred, std::string& err) {
  for (auto& r : records) {
    if (r.state != "pending") continue;
    bool failed = false;
    if (!s.handoff->deliver(r, lines, failed)) {
      ++deferred;
      continue;
    }
    if (failed) status = 1;
    if (!s.store->finish_handoff(verdict_id, r.ordinal, r.handoff, err)) return false;
  }
  return true;
}

}  // namespace

// Delivers what an interrupted run (killed between storing verdicts and
// handing off their recommendations) or an earlier poll (the webhook's
// breaker) left pending. False only on a store error.
bool resume_handoffs(RunSetup& s, Progress& p, int& status, int64_t& deferred, std::string& err) {
  std::vector<PendingHandoff> pending;
  if (!s.store->pending_handoffs(s.config->cluster, pending, err)) return false;
  if (pending.empty()) return true;
  p.line(fmt::format("resuming {} pending hand-off{} of stored verdicts", pending.size(), pending.size() == 1 ? "" : "s"));
  for (auto& one : pending) {
    std::vector<RecommendationRecord> records{std::move(one.record)};
    std::vector<std::string> lines;
    bool ok = deliver_recommendations(s, one.verdict_id, records, lines, status, deferred, err);
    for (const auto& l : lines) p.line(l);
    if (!ok) return false;
  }
  return true;
}

// One placement snapshot of every discovery that records placement.
void record_placements(RunSetup& s, Progress& p, const std::atomic<bool>& stop) {
  for (auto& d : s.discoveries) {
    auto* recorder = dynamic_cast<PlacementRecorder*>(d.get());
    if (stop.load() || !recorder) continue;
    int64_t n = 0;
    std::string err;
    if (!recorder->record_placement(*s.store, n, err)) p.line(fmt::format("{} placement: {}", d->name(), err));
    else if (n) p.line(fmt::format("{} placement: {} pod{} placed", d->name(), n, n == 1 ? "" : "s"));
  }
}

// The part of an attempt that needs no store: on a pool thread.
void collect_and_attribute(RunSetup& s, const BlueprintConfig& cfg, const std::atomic<bool>& stop, Discovery& d, InFlight& f) {
  const Attempt& a = *f.attempt;
  const int64_t started_at = now_ns();
  const auto t0 = std::chrono::steady_clock::now();
  CollectRequest req;
  req.attempt = &a;
  if (a.context.start) req.scope_start = *a.context.start - cfg.attribution.slack_before;
  if (a.evidence_after) req.scope_start = std::max(req.scope_start.value_or(*a.evidence_after), *a.evidence_after);
  if (a.context.end) req.scope_end = *a.context.end + cfg.attribution.slack_after;
  req.wanted_sources = s.wanted_sources;
  if (s.line_filters) req.line_filters = &*s.line_filters;
  req.stop = &stop;
  Collected ev;
  if (!a.bundle_dir.empty() && d.own_collector()) d.own_collector()->collect(req, ev);
  else
    for (const auto& c : s.collectors) {
      Collected one;
      c->collect(req, one);
      ev.merge(std::move(one));
    }
  int64_t bytes = ev.bytes, wire = ev.wire_bytes;
  ojson verdict;
  AttributionError aerr;
  const auto t1 = std::chrono::steady_clock::now();
  bool ok = s.attribution->attribute(a, std::move(ev), verdict, aerr);
  const auto t2 = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(f.mu);
  f.started_at = started_at;
  f.collect_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
  f.attribute_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count();
  f.bytes = bytes;
  f.wire = wire;
  f.ok = ok;
  f.verdict = std::move(verdict);
  f.aerr = std::move(aerr);
  f.done = true;
  f.cv.notify_one();
}

bool store_finished(RunSetup& s, Progress& p, const std::string& discovered_by, InFlight& f, int& status,
                    int64_t& deferred, std::string& err) {
  {
    std::unique_lock<std::mutex> lock(f.mu);
    f.cv.wait(lock, [&] { return f.done; });
  }
  const BlueprintConfig& cfg = *s.config;
  const Attempt& a = *f.attempt;
  ojson& verdict = f.verdict;
  const bool ok = f.ok;
  const auto store_t0 = std::chrono::steady_clock::now();
  // One line per attempt settled, success or failure (RunSetup::timings).
  auto write_timings = [&] {
    if (!s.timings) return;
    ojson t;
    t["key"] = a.key;
    t["ok"] = ok;
    t["end_ns"] = a.context.end ? ojson(*a.context.end) : ojson(nullptr);
    t["queued_ns"] = f.queued_at ? ojson(f.queued_at) : ojson(nullptr);
    t["started_ns"] = f.started_at;
    t["collect_ms"] = static_cast<double>(f.collect_ns) / 1e6;
    t["attribute_ms"] = static_cast<double>(f.attribute_ns) / 1e6;
    t["store_ms"] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - store_t0).count();
    t["stored_ns"] = now_ns();
    t["nodes"] = a.context.nodes.size();
    t["wire_bytes"] = f.wire;
    *s.timings << t.dump() << "\n";
    s.timings->flush();
  };
    p.bytes += f.bytes;
  int64_t wire = f.wire;
  bool inserted = false;
  int64_t verdict_id = 0;
  // The recommendations are decided and stored `pending` in the
  // verdict's transaction, then handed off: a kill in between leaves
  // them pending, and the next start delivers them (resume_handoffs).
  // Only a verdict stored now is handed off: a re-run never drains twice.
  std::vector<RecommendationRecord> recommendations;
  RecommendationDecider decider;
  if (s.handoff)
    decider = [&](FaultHistory& history, std::vector<RecommendationRecord>& out, std::string& e) {
      if (!s.handoff->decide(a, verdict, history, out, e)) return false;
      for (auto& r : out) r.owner = cfg.cluster;
      return true;
    };
  if (ok && !s.store->record_verdict(a, discovered_by, verdict, s.attribution->describe(), inserted, err, &verdict_id,
             decider, &recommendations)) {
    p.line(fmt::format("store error for {}: {}", a.key, err));
    return false;
  }
  std::vector<std::string> handoff_lines;
  if (ok && inserted && s.handoff &&
      !deliver_recommendations(s, verdict_id, recommendations, handoff_lines, status, deferred, err)) {
    for (const auto& l : handoff_lines) p.line(l);
    p.line(fmt::format("store error for {}: {}", a.key, err));
    return false;
  }
  if (!ok) {
    ++p.counts.failed;
    status = 1;
    p.line(fmt::format("{}: not attributed ({}): {}", a.key, f.aerr.retry ? "will retry" : "evidence refused", f.aerr.message));
    if (!s.store->record_failure(a, discovered_by, f.aerr.message, err)) {
      p.line("store error: " + err);
      return false;
    }
    write_timings();
    return true;
  }
  ++p.counts.attributed;
  std::string latency = a.context.end ? fmt::format(", {} after the job ended", human_latency(now_ns() - *a.context.end)) : "";
  p.attempt_line(fmt::format("{} {}: {}{}{}{}", a.key, a.context.terminal.state, verdict_line(verdict), inserted ? "" : " (already stored)", latency,
                             wire ? fmt::format(", {} over the network", human_bytes(static_cast<double>(wire))) : ""));
  for (const auto& l : handoff_lines) p.line(l);
  if (s.out) {
    if (cfg.output.stdout_format == "jsonl") {
      ojson line;
      line["attempt"] = attempt_json(a);
      line["verdict"] = verdict;
      if (!recommendations.empty()) line["recovery"] = recovery_json(recommendations);
      *s.out << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    } else if (cfg.output.stdout_format == "text" && !cfg.output.verbose) {
      write_text_line(*s.out, a, verdict, recommendations);
    } else if (cfg.output.stdout_format == "text") {
      write_text(*s.out, a, verdict);
      write_recovery_text(*s.out, recommendations);
    }
    s.out->flush();
  }
  write_timings();
  return true;
}

}  // namespace culprit::blueprint::run_steps
