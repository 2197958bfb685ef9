// `culprit run --queue`: one replica of several sharing the store's work
// queue (runner.h, "Replicas"; blueprint/store/work_queue.h).
#include <fmt/format.h>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "base/limits.h"
#include "blueprint/run_steps.h"
#include "blueprint/task_pool.h"

namespace culprit::blueprint::run_steps {

namespace {

constexpr int64_t kFinishedRowsKept = 24LL * 3600 * 1000000000;

// An attempt claimed from the queue, from its claim to its settlement.
struct Claimed {
  QueuedAttempt q;
  InFlight f;
};

class QueueWorker {
 public:
  QueueWorker(RunSetup& s, const std::atomic<bool>& stop)
      : s_(s), cfg_(*s.config), stop_(stop), q_(*s.queue), p_(s.log, s.log_is_terminal),
        concurrency_(s.concurrency < 1 ? 1 : static_cast<size_t>(s.concurrency)) {
    for (auto& d : s_.discoveries) by_name_[d->name()] = d.get();
  }

  int run();

 private:
  bool discover(bool& failed, std::set<std::string>& seen);
  bool work(int64_t run_id, bool drain);
  bool start(QueuedAttempt&& q, int64_t run_id, bool alone, TaskPool& pool);
  bool settle_front();
  bool finish_row(const std::string& key, const std::string& state, const std::string& message, int64_t retry_after);

  RunSetup& s_;
  const BlueprintConfig& cfg_;
  const std::atomic<bool>& stop_;
  WorkQueue& q_;
  Progress p_;
  const size_t concurrency_;
  std::map<std::string, Discovery*> by_name_;
  std::deque<std::unique_ptr<Claimed>> window_;  // in flight, oldest claim first
  int status_ = 0;
  int64_t deferred_ = 0, ignored_ = 0, queued_ = 0;
  std::string err_;
};

bool QueueWorker::finish_row(const std::string& key, const std::string& state, const std::string& message,
                             int64_t retry_after) {
  bool ours = false;
  if (!q_.finish(key, state, message, retry_after, ours, err_)) {
    p_.line(fmt::format("queue error for {}: {}", key, err_));
    return false;
  }
  if (!ours)
    p_.line(fmt::format("{}: this replica's lease had expired and another replica claimed it; the row is left to that one",
                        key));
  return true;
}

// Queues what each discovery found that the store has not attributed.
bool QueueWorker::discover(bool& failed, std::set<std::string>& seen) {
  for (auto& d : s_.discoveries) {
    if (stop_.load()) break;
    int64_t until = now_ns();
    DiscoveryWindow w;
    w.until = until;
    std::string cursor_name = "cursor:" + d->name();
    std::optional<int64_t> cursor;
    if (s_.watch && !s_.store->cursor(cursor_name, cursor, err_)) {
      p_.line("store error: " + err_);
      return false;
    }
    if (cursor) w.since = *cursor - cfg_.watch.overlap;
    else if (d->lookback() > 0) w.since = until - d->lookback();
    DiscoveryResult found;
    if (!d->discover(w, found, err_)) {
      p_.line(fmt::format("{} discovery failed: {}", d->name(), err_));
      failed = true;
      continue;
    }
    for (const auto& warn : found.warnings) p_.line(fmt::format("{} discovery: warning: {}", d->name(), warn));
    std::vector<const Attempt*> fresh;
    for (const auto& a : found.attempts) {
      seen.insert({a.context.workload_id, a.job_id});
      ++p_.counts.discovered;
      bool done = false;
      if (!s_.store->attributed(a.key, done, err_)) {
        p_.line("store error: " + err_);
        return false;
      }
      if (done) ++p_.counts.skipped;
      else fresh.push_back(&a);
    }
    int64_t added = 0;
    if (!q_.enqueue(fresh, d->name(), added, err_)) {
      p_.line("queue error: " + err_);
      return false;
    }
    queued_ += added;
    ignored_ += found.ignored;
    // The queue holds what was found: the cursor moves past it, and a
    // failed attempt is retried from its row, not by discovering it again.
    if (s_.watch && (!cursor || until > *cursor) && !s_.store->set_cursor(cursor_name, until, err_)) {
      p_.line("store error: " + err_);
      return false;
    }
  }
  return true;
}

// Marks a claimed attempt started in the store and hands it to the pool,
// or settles its row at once (attributed meanwhile, given up).
bool QueueWorker::start(QueuedAttempt&& q, int64_t run_id, bool alone, TaskPool& pool) {
  const std::string key = q.attempt.key;
  auto it = by_name_.find(q.discovered_by);
  if (it == by_name_.end()) {
    // Replicas of one cluster share a configuration; this one lacks the
    // discovery that queued the attempt, so it cannot collect it as that
    // discovery would. The row fails here and a later discovery queues it
    // again for a replica that has it.
    ++p_.counts.failed;
    status_ = 1;
    std::string why = fmt::format("queued by discovery '{}', which this replica's configuration does not have", q.discovered_by);
    p_.line(fmt::format("{}: not attributed: {}", key, why));
    return finish_row(key, "failed", why, 0);
  }
  AttemptStart started;
  if (!s_.store->begin_attempt(q.attempt, q.discovered_by, run_id, started, err_, concurrency_ > 1 && !alone)) {
    p_.line(fmt::format("store error for {}: {}", key, err_));
    return false;
  }
  if (started.attributed) {
    ++p_.counts.skipped;
    p_.draw();
    return finish_row(key, "done", "", 0);
  }
  if (started.given_up) {
    if (started.given_up_now) {
      ++p_.counts.failed;
      status_ = 1;
      p_.line(fmt::format("{}: not attributed (given up): {}", key, started.message));
    } else {
      ++p_.counts.skipped;
      p_.line(fmt::format("{}: skipped, given up earlier: {}", key, started.message));
    }
    return finish_row(key, "given_up", started.message, 0);
  }
  if (started.died_shared)
    p_.line(fmt::format("{}: the process that had it ended while other attempts were in flight; trying it again alone, start {} of at most {}",
                        key, started.died + 1, limits::kCollectionStarts));
  else if (started.died)
    p_.line(fmt::format("{}: {} earlier start{} did not finish (the process ended); trying again, start {} of at most {}", key,
                        started.died, started.died == 1 ? "" : "s", started.died + 1, limits::kCollectionStarts));
  auto c = std::make_unique<Claimed>();
  c->q = std::move(q);
  c->f.attempt = &c->q.attempt;
  c->f.queued_at = c->q.enqueued_ns;
  Claimed* cp = c.get();
  Discovery* d = it->second;
  window_.push_back(std::move(c));
  p_.current = window_.front()->q.attempt.key + (window_.size() > 1 ? fmt::format(" (+{} in flight)", window_.size() - 1) : "");
  p_.draw();
  RunSetup& s = s_;
  const BlueprintConfig& cfg = cfg_;
  const std::atomic<bool>& stop = stop_;
  pool.submit([&s, &cfg, &stop, d, cp] { collect_and_attribute(s, cfg, stop, *d, cp->f); });
  return true;
}

// Stores the oldest attempt in flight and settles its row.
bool QueueWorker::settle_front() {
  std::unique_ptr<Claimed> c = std::move(window_.front());
  window_.pop_front();
  p_.current = window_.empty() ? "" : window_.front()->q.attempt.key;
  if (!store_finished(s_, p_, c->q.discovered_by, c->f, status_, deferred_, err_)) return false;
  if (c->f.ok) return finish_row(c->q.attempt.key, "done", "", 0);
  // Failed: retried at the next poll while watching, by the next run's
  // discovery otherwise (it queues failed rows again).
  return finish_row(c->q.attempt.key, "failed", c->f.aerr.message, s_.watch ? cfg_.watch.interval : 0);
}

// Claims and works attempts until nothing is claimable; with `drain`, until
// no other replica holds a live lease either (their attempts may come back
// when a lease expires). False: the store or the queue failed.
bool QueueWorker::work(int64_t run_id, bool drain) {
  bool ok = true;
  {
    TaskPool pool(concurrency_);
    while (ok) {
      std::vector<QueuedAttempt> got;
      std::vector<std::string> refused;
      if (!stop_.load() && window_.size() < concurrency_ &&
          !q_.claim(concurrency_ - window_.size(), got, refused, err_)) {
        p_.line("queue error: " + err_);
        ok = false;
        break;
      }
      for (const auto& r : refused) {
        ++p_.counts.failed;
        status_ = 1;
        p_.line("not attributed: " + r);
      }
      for (auto& q : got) {
        if (!ok) {
          // Not started: its lease expires and another replica (or this
          // one's next start) takes it.
          continue;
        }
        // An attempt whose last start ended with its process runs alone,
        // so that a death is charged to the attempt that caused it
        // (Store::begin_attempt).
        bool alone = false;
        if (concurrency_ > 1 && !s_.store->start_died(q.attempt.key, alone, err_)) {
          p_.line(fmt::format("store error for {}: {}", q.attempt.key, err_));
          ok = false;
          continue;
        }
        while (ok && alone && !window_.empty()) ok = settle_front();
        if (ok) ok = start(std::move(q), run_id, alone, pool);
        while (ok && alone && !window_.empty()) ok = settle_front();
      }
      if (!ok) break;
      if (got.empty() && refused.empty() && window_.empty()) {
        if (!drain || stop_.load()) break;
        QueueBacklog b;
        if (!q_.backlog(b, err_)) {
          p_.line("queue error: " + err_);
          ok = false;
          break;
        }
        if (b.ready + b.expired + b.leased == 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        continue;
      }
      if (!window_.empty() && (got.empty() || window_.size() >= concurrency_)) ok = settle_front();
    }
    // The pool joins here: nothing in flight outlives the attempts it uses.
  }
  window_.clear();
  return ok;
}

int QueueWorker::run() {
  int polls = 0;
  p_.line(fmt::format("store {} (schema v{}), attribution {}, replica {} of a shared queue (lease {}), {}", s_.store->url(),
                      s_.store->schema_version(), s_.attribution->describe(), q_.worker(), format_duration(q_.lease_ns()),
                      s_.watch ? fmt::format("watching every {}", format_duration(cfg_.watch.interval)) : "once"));
  for (auto& d : s_.discoveries)
    if (auto* recorder = dynamic_cast<PlacementRecorder*>(d.get())) recorder->set_placement_book(s_.store.get());
  q_.start_heartbeat();
  struct StopBeat {
    WorkQueue& q;
    ~StopBeat() { q.stop_heartbeat(); }
  } stop_beat{q_};
  while (!stop_.load()) {
    ++polls;
    int64_t run_id = 0;
    if (!s_.store->begin_run(s_.watch ? "watch" : "once", run_id, err_)) {
      p_.line("store error: " + err_);
      return 3;
    }
    RunCounts before = p_.counts;
    const int64_t queued_before = queued_, ignored_before = ignored_;
    // One replica discovers per poll while watching; with --once every
    // replica does, and queuing the same attempt twice changes nothing.
    if (s_.alerts) {
      std::vector<std::string> lines;
      s_.alerts->take(lines);
      for (const auto& l : lines) p_.line(l);
    }
    std::set<std::string> seen;  // workloads this poll discovered, for the alerts that named them
    bool leader = true, discovery_failed = false;
    if (s_.watch && !q_.try_lock_discovery(leader, err_)) {
      p_.line("queue error: " + err_);
      return 3;
    }
    if (leader) {
      if (s_.record_placement) record_placements(s_, p_, stop_);
      if (s_.handoff) {
        s_.handoff->begin_poll();
        if (!resume_handoffs(s_, p_, status_, deferred_, err_)) {
          p_.line("store error: " + err_);
          return 3;
        }
      }
      bool ok = discover(discovery_failed, seen);
      // Finished rows are kept a day (for operators' queries), then dropped.
      int64_t pruned = 0;
      if (ok && !q_.prune(kFinishedRowsKept, pruned, err_)) {
        p_.line("queue error: " + err_);
        ok = false;
      }
      if (s_.watch && !q_.unlock_discovery(err_)) {
        p_.line("queue error: " + err_);
        return 3;
      }
      if (!ok) return 3;
      p_.line(fmt::format("poll {}: discovered {}, skipped {} already stored, queued {}{}", polls,
                          p_.counts.discovered - before.discovered, p_.counts.skipped - before.skipped,
                          queued_ - queued_before,
                          ignored_ > ignored_before ? fmt::format(" ({} other record{} not to attribute)", ignored_ - ignored_before,
                                                                  ignored_ - ignored_before == 1 ? "" : "s")
                                                    : ""));
    }
    if (!work(run_id, !s_.watch)) return 3;
    if (s_.alerts) {
      std::vector<std::string> lines;
      s_.alerts->settle(seen, lines);
      for (const auto& l : lines) p_.line(l);
    }
    // Between polls, claim what other replicas queue (every second).
    auto wake = std::chrono::steady_clock::now() + std::chrono::nanoseconds(cfg_.watch.interval);
    bool last = !s_.watch || (s_.max_polls && polls >= s_.max_polls);
    for (int tick = 1; !last && !stop_.load() && std::chrono::steady_clock::now() < wake; ++tick) {
      if (!s_.alerts) std::this_thread::sleep_for(std::chrono::milliseconds(250));
      else if (s_.alerts->wait(std::chrono::milliseconds(250))) break;  // an alert: poll now
      if (tick % 4 == 0 && !work(run_id, false)) return 3;
    }
    if (std::string beat = q_.heartbeat_error(); !beat.empty()) p_.line("queue heartbeat: " + beat);
    if (deferred_) {
      status_ = 1;
      p_.line(fmt::format("{} hand-off{} left pending (the webhook did not answer); the next {} delivers {}", deferred_,
                          deferred_ == 1 ? "" : "s", s_.watch ? "poll" : "run", deferred_ == 1 ? "it" : "them"));
      deferred_ = 0;
    }
    RunCounts delta{p_.counts.discovered - before.discovered, p_.counts.skipped - before.skipped,
                    p_.counts.attributed - before.attributed, p_.counts.failed - before.failed};
    std::string run_status = discovery_failed ? "discovery failed" : stop_.load() ? "stopped" : delta.failed ? "partial" : "ok";
    if (!s_.store->finish_run(run_id, delta, run_status, err_)) {
      p_.line("store error: " + err_);
      return 3;
    }
    p_.line(fmt::format("poll {}: attributed {}, failed {} by this replica", polls, delta.attributed, delta.failed));
    if (discovery_failed && !s_.watch) return 3;
    if (last) break;
  }
  if (stop_.load()) p_.line("stopped by a signal; progress is in the store and the queue");
  p_.end();
  return status_;
}

}  // namespace

int run_queue_worker(RunSetup& s, const std::atomic<bool>& stop) {
  QueueWorker w(s, stop);
  return w.run();
}

}  // namespace culprit::blueprint::run_steps
