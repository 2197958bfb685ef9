#include "blueprint/runner.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
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
#include "blueprint/run_steps.h"
#include "blueprint/task_pool.h"

namespace culprit::blueprint {

using namespace run_steps;
using ojson = nlohmann::ordered_json;

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

int run_blueprint(RunSetup& s, const std::atomic<bool>& stop) {
  if (s.queue) return run_queue_worker(s, stop);
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
    std::set<std::string> seen_workloads;  // what this poll discovered, for the alerts that named workloads
    if (s.alerts) {
      std::vector<std::string> lines;
      s.alerts->take(lines);
      for (const auto& l : lines) p.line(l);
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
      for (const auto& a : found.attempts) seen_workloads.insert({a.context.workload_id, a.job_id});
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
        p.current = window.empty() ? "" : window.front()->attempt->key;
        if (!store_finished(s, p, d->name(), *f, status, deferred, err)) return false;
        if (!f->ok && f->attempt->context.end)
          retry_from = std::min(retry_from.value_or(*f->attempt->context.end), *f->attempt->context.end);
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
    if (s.alerts) {
      std::vector<std::string> lines;
      s.alerts->settle(seen_workloads, lines);
      for (const auto& l : lines) p.line(l);
    }
    if (poll_failed && !s.watch) return 3;
    if (!s.watch || (s.max_polls && polls >= s.max_polls)) break;
    auto wake = std::chrono::steady_clock::now() + std::chrono::nanoseconds(cfg.watch.interval);
    auto next_placement = std::chrono::steady_clock::now() + std::chrono::nanoseconds(placement_every);
    while (!stop.load() && std::chrono::steady_clock::now() < wake) {
      if (!s.alerts) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      else if (s.alerts->wait(std::chrono::milliseconds(100))) break;  // an alert: poll now
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
