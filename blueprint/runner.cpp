#include "blueprint/runner.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "base/operator_file.h"
#include "base/limits.h"
#include "base/text_util.h"
#include "base/timestamp.h"
#include "base/vocabulary.h"
#include "blueprint/config.h"
#include "blueprint/connector.h"
#include "blueprint/net/kube_client.h"
#include "blueprint/placement.h"
#include "blueprint/task_pool.h"

namespace culprit::blueprint {

using ojson = nlohmann::ordered_json;

namespace {

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

class Progress {
 public:
  Progress(std::ostream* log, bool terminal) : log_(log), terminal_(terminal), t0_(std::chrono::steady_clock::now()) {}
  RunCounts counts;
  int64_t bytes = 0;
  std::string current;

  // `text` quotes attempt keys, node names, verdicts and error messages
  // taken from the scheduler and the evidence: it is escaped whole, so a
  // control character in them can neither forge a line nor drive the terminal.
  void line(const std::string& text) {
    if (!log_) return;
    if (terminal_) *log_ << "\r\033[K";
    int64_t t = now_ns();
    *log_ << fmt::format("{} culprit run: {}\n", format_rfc3339(t - t % 1000000), escape_for_terminal(text));
    if (terminal_) draw();
    log_->flush();
  }
  // One line per stored attempt: the log when not on a terminal (there the
  // status line and stdout show it).
  void attempt_line(const std::string& text) {
    if (terminal_) draw();
    else line(text);
  }
  void draw() {
    if (!log_ || !terminal_) return;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    *log_ << fmt::format("\r\033[Kdiscovered {} · skipped {} · attributed {} · failed {} · {} ({}/s){}", counts.discovered,
                         counts.skipped, counts.attributed, counts.failed, human_bytes(static_cast<double>(bytes)),
                         human_bytes(secs > 0 ? static_cast<double>(bytes) / secs : 0),
                         current.empty() ? "" : " · " + escape_for_terminal(current));
    log_->flush();
  }
  void end() {
    if (log_ && terminal_) {
      *log_ << "\r\033[K";
      log_->flush();
    }
  }

 private:
  std::ostream* log_;
  bool terminal_;
  std::chrono::steady_clock::time_point t0_;
};

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

// How long after the job's end its verdict came: "2.4 s" while seconds
// matter, then in the duration notation the rest of the output uses
// ("209d3h4m5s"), whole seconds.
std::string human_latency(int64_t ns) {
  if (ns < 120LL * 1000000000) return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
  return format_duration(ns - ns % 1000000000);
}

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

}  // namespace

bool make_pipeline(const BlueprintConfig& c, RunSetup& s, std::string& error) {
  ConnectorEnv env;
  env.cluster = c.cluster;
  bool wants_kube = false;
  for (const auto& one : c.connectors) wants_kube = wants_kube || one.connector->needs_kubernetes;
  if (c.kubernetes.enabled && wants_kube) {
    KubeEndpoint ep;
    if (!resolve_kube_endpoint(c.kubernetes.connection, ep, error)) {
      error = "kubernetes: " + error;
      return false;
    }
    env.kube = std::make_shared<KubeClient>(std::move(ep), c.kubernetes.connection.page_size);
  }
  // Registry order: discoveries first, then collectors (connectors.cpp).
  for (const auto& one : c.connectors) {
    ConnectorParts parts;
    if (!one.connector->make(*one.config, env, parts, error)) return false;
    if (parts.discovery) s.discoveries.push_back(std::move(parts.discovery));
    if (parts.collector) s.collectors.push_back(std::move(parts.collector));
  }
  return true;
}

namespace {

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

}  // namespace

// One attempt between the run loop, which stores and prints it, and the
// pool's thread that collects and attributes it.
struct InFlight {
  const Attempt* attempt = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // under mu: the fields below are set
  int64_t bytes = 0, wire = 0;
  bool ok = false;
  ojson verdict;
  AttributionError aerr;
};

// The part of an attempt that needs no store: on a pool thread.
void collect_and_attribute(RunSetup& s, const BlueprintConfig& cfg, const std::atomic<bool>& stop, Discovery& d, InFlight& f) {
  const Attempt& a = *f.attempt;
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
  bool ok = s.attribution->attribute(a, std::move(ev), verdict, aerr);
  std::lock_guard<std::mutex> lock(f.mu);
  f.bytes = bytes;
  f.wire = wire;
  f.ok = ok;
  f.verdict = std::move(verdict);
  f.aerr = std::move(aerr);
  f.done = true;
  f.cv.notify_one();
}

int run_blueprint(RunSetup& s, const std::atomic<bool>& stop) {
  const BlueprintConfig& cfg = *s.config;
  Progress p(s.log, s.log_is_terminal);
  int status = 0;
  const size_t concurrency = s.concurrency < 1 ? 1 : static_cast<size_t>(s.concurrency);
  int polls = 0;
  std::string err;
  p.line(fmt::format("store {} (schema v{}), attribution {}, {}", s.store->url(), s.store->schema_version(),
                     s.attribution->describe(), s.watch ? fmt::format("watching every {}", format_duration(cfg.watch.interval)) : "once"));
  // Placement is a capability of some discoveries (Kueue's), not of all.
  int64_t placement_every = 0;
  for (auto& d : s.discoveries)
    if (auto* recorder = dynamic_cast<PlacementRecorder*>(d.get())) {
      recorder->set_placement_book(s.store.get());
      int64_t every = recorder->placement_interval();
      if (every > 0) placement_every = placement_every ? std::min(placement_every, every) : every;
    }
  while (!stop.load()) {
    ++polls;
    int64_t run_id = 0;
    if (!s.store->begin_run(s.watch ? "watch" : "once", run_id, err)) {
      p.line("store error: " + err);
      return 3;
    }
    if (s.record_placement) record_placements(s, p, stop);
    int64_t deferred = 0;  // hand-offs left pending by the webhook's breaker in this poll
    if (s.handoff) {
      s.handoff->begin_poll();
      if (!resume_handoffs(s, p, status, deferred, err)) {
        p.line("store error: " + err);
        return 3;
      }
    }
    RunCounts before = p.counts;
    int64_t ignored = 0;  // records discovery saw but does not attribute (running, unwanted states)
    bool poll_failed = false;
    for (auto& d : s.discoveries) {
      if (stop.load()) break;
      int64_t until = now_ns();
      DiscoveryWindow w;
      w.until = until;
      std::string cursor_name = "cursor:" + d->name();
      std::optional<int64_t> cursor;
      if (s.watch && !s.store->cursor(cursor_name, cursor, err)) {
        p.line("store error: " + err);
        return 3;
      }
      int64_t lookback = d->lookback();
      if (cursor) w.since = *cursor - cfg.watch.overlap;
      else if (lookback > 0) w.since = until - lookback;
      DiscoveryResult found;
      if (!d->discover(w, found, err)) {
        p.line(fmt::format("{} discovery failed: {}", d->name(), err));
        poll_failed = true;
        continue;
      }
      for (const auto& warn : found.warnings) p.line(fmt::format("{} discovery: warning: {}", d->name(), warn));
      std::optional<int64_t> retry_from;  // the earliest end among attempts to try again
      // Attempts in flight, oldest first; the pool after them, so that an
      // early return waits for its tasks before the attempts they use go.
      std::deque<std::unique_ptr<InFlight>> window;
      TaskPool pool(concurrency);
      // Waits for the oldest attempt in flight, then stores, hands off and
      // prints it. False: the store failed (the run ends with status 3).
      auto finish_front = [&]() -> bool {
        std::unique_ptr<InFlight> f = std::move(window.front());
        window.pop_front();
        {
          std::unique_lock<std::mutex> lock(f->mu);
          f->cv.wait(lock, [&] { return f->done; });
        }
        const Attempt& a = *f->attempt;
        ojson& verdict = f->verdict;
        const bool ok = f->ok;
        p.bytes += f->bytes;
        int64_t wire = f->wire;
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
        if (ok && !s.store->record_verdict(a, d->name(), verdict, s.attribution->describe(), inserted, err, &verdict_id,
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
          if (a.context.end) retry_from = std::min(retry_from.value_or(*a.context.end), *a.context.end);
          p.line(fmt::format("{}: not attributed ({}): {}", a.key, f->aerr.retry ? "will retry" : "evidence refused", f->aerr.message));
          if (!s.store->record_failure(a, d->name(), f->aerr.message, err)) {
            p.line("store error: " + err);
            return false;
          }
          p.current = window.empty() ? "" : window.front()->attempt->key;
          return true;
        }
        ++p.counts.attributed;
        std::string latency = a.context.end ? fmt::format(", {} after the job ended", human_latency(now_ns() - *a.context.end)) : "";
        p.current = window.empty() ? "" : window.front()->attempt->key;
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
        return true;
      };
      for (const auto& a : found.attempts) {
        if (stop.load()) {
          if (a.context.end) retry_from = std::min(retry_from.value_or(*a.context.end), *a.context.end);
          continue;
        }
        ++p.counts.discovered;
        bool done = false;
        if (!s.store->attributed(a.key, done, err)) {
          p.line("store error: " + err);
          return 3;
        }
        if (done) {
          ++p.counts.skipped;
          p.draw();
          continue;
        }
        // Marked before collection: if this process dies collecting or
        // attributing the attempt, the row says so, and after
        // limits::kCollectionStarts such starts it is given up, so no input
        // can crash every run and hold up the attempts after it.
        // An attempt whose last start ended with the process is run alone:
        // a death beside others in flight cannot say which one caused it,
        // so it is charged to none of them (Store::begin_attempt), and the
        // next start, alone, settles it.
        bool alone = false;
        if (concurrency > 1) {
          if (!s.store->start_died(a.key, alone, err)) {
            p.line(fmt::format("store error for {}: {}", a.key, err));
            return 3;
          }
          while (alone && !window.empty())
            if (!finish_front()) return 3;
        }
        AttemptStart started;
        if (!s.store->begin_attempt(a, d->name(), run_id, started, err, concurrency > 1 && !alone)) {
          p.line(fmt::format("store error for {}: {}", a.key, err));
          return 3;
        }
        if (started.attributed) {
          ++p.counts.skipped;
          p.draw();
          continue;
        }
        if (started.given_up) {
          // Not retried (the cursor moves past it); the store keeps why.
          if (started.given_up_now) {
            ++p.counts.failed;
            status = 1;
            p.line(fmt::format("{}: not attributed (given up): {}", a.key, started.message));
          } else {
            ++p.counts.skipped;
            p.line(fmt::format("{}: skipped, given up earlier: {}", a.key, started.message));
          }
          continue;
        }
        if (started.died_shared)
          p.line(fmt::format("{}: the process ended while it and other attempts were in flight; trying it again alone, start {} of at most {}",
                             a.key, started.died + 1, limits::kCollectionStarts));
        else if (started.died)
          p.line(fmt::format("{}: {} earlier start{} did not finish (the process ended); trying again, start {} of at most {}",
                             a.key, started.died, started.died == 1 ? "" : "s", started.died + 1, limits::kCollectionStarts));
        // Collected and attributed on the pool's threads; stored and
        // printed here, in discovery order, once the window is full.
        auto f = std::make_unique<InFlight>();
        f->attempt = &a;
        InFlight* fp = f.get();
        window.push_back(std::move(f));
        p.current = window.front()->attempt->key + (window.size() > 1 ? fmt::format(" (+{} in flight)", window.size() - 1) : "");
        p.draw();
        pool.submit([&s, &cfg, &stop, &d, fp] { collect_and_attribute(s, cfg, stop, *d, *fp); });
        while (alone ? !window.empty() : window.size() >= concurrency) {
          if (!finish_front()) return 3;
        }
      }
      while (!window.empty())
        if (!finish_front()) return 3;
      p.current.clear();
      if (s.watch) {
        int64_t next = retry_from ? std::min(*retry_from - 1, until) : until;
        if (!cursor || next > *cursor)
          if (!s.store->set_cursor(cursor_name, next, err)) {
            p.line("store error: " + err);
            return 3;
          }
      }
      ignored += found.ignored;
    }
    if (deferred) {
      status = 1;
      p.line(fmt::format("{} hand-off{} left pending (the webhook did not answer); the next {} delivers {}", deferred,
                         deferred == 1 ? "" : "s", s.watch ? "poll" : "run", deferred == 1 ? "it" : "them"));
    }
    RunCounts delta{p.counts.discovered - before.discovered, p.counts.skipped - before.skipped,
                    p.counts.attributed - before.attributed, p.counts.failed - before.failed};
    std::string run_status = poll_failed ? "discovery failed" : stop.load() ? "stopped" : delta.failed ? "partial" : "ok";
    if (!s.store->finish_run(run_id, delta, run_status, err)) {
      p.line("store error: " + err);
      return 3;
    }
    p.line(fmt::format("poll {}: discovered {}, skipped {} already stored, attributed {}, failed {}{}", polls, delta.discovered,
                       delta.skipped, delta.attributed, delta.failed,
                       ignored ? fmt::format(" ({} other record{} not to attribute)", ignored, ignored == 1 ? "" : "s") : ""));
    if (poll_failed && !s.watch) return 3;
    if (!s.watch || (s.max_polls && polls >= s.max_polls)) break;
    auto wake = std::chrono::steady_clock::now() + std::chrono::nanoseconds(cfg.watch.interval);
    auto next_placement = std::chrono::steady_clock::now() + std::chrono::nanoseconds(placement_every);
    while (!stop.load() && std::chrono::steady_clock::now() < wake) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (s.record_placement && placement_every && std::chrono::steady_clock::now() >= next_placement &&
          std::chrono::steady_clock::now() < wake) {
        record_placements(s, p, stop);
        next_placement = std::chrono::steady_clock::now() + std::chrono::nanoseconds(placement_every);
      }
    }
  }
  if (stop.load()) p.line("stopped by a signal; progress is in the store");
  p.end();
  return status;
}

}  // namespace culprit::blueprint
