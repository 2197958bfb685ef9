// The blueprint's loop: discover -> skip what the store has -> collect ->
// attribute -> store and print, once (`culprit run --once`) or as a daemon
// (`--watch`).
//
// --once looks back over each discovery's lookback (Slurm: jobs that ended
// in the last `lookback`) and exits. --watch polls every `watch.interval`;
// each poll asks for attempts that ended since the previous poll's window
// end (minus `watch.overlap`, because accounting lags), and that cursor
// lives in the store (watch_state), so a restarted blueprint goes on where
// it stopped. An attempt that failed (collection or attribution) is noted
// in the store and the cursor stays before it, so the next poll tries it
// again; attempts already attributed are skipped by key, so overlap and
// restarts never duplicate.
//
// Placement: with `record_placement`, every poll (and, with --watch, every
// discovery's placement_interval in between) first stores where the pods
// of the running Kubernetes workloads are (blueprint/placement.h), so a
// later attribution still knows their nodes when the pods are gone.
//
// Attempts that kill the process: before an attempt's collection starts,
// the store marks it (status 'error', "collection did not finish"; Store::
// begin_attempt), and storing its verdict or failure replaces the mark. A
// mark found at the next start means the process died on that attempt (a
// crash, the OOM killer, SIGKILL): the run row it died in is closed as
// 'died' and the attempt is tried again, up to limits::kCollectionStarts
// starts; then it is given up ("collection died N times"), counted failed
// in that poll and skipped after, and the cursor moves past it, so the
// attempts after it are attributed.
//
// Concurrency: up to `concurrency` attempts are collected and attributed at
// once on a pool of threads (blueprint/task_pool.h); each is marked in the
// store before its collection starts, and stored, handed off and printed by
// the run loop in the order discovery gave them, so a run's rows and output
// do not depend on it.
//
// Replicas (`queue` set, `culprit run --queue`): discovered attempts go into
// the store's shared work queue instead of straight to collection, and this
// process collects and attributes whatever it claims from the queue, whoever
// queued it. Each poll's discovery (and the resumption of pending
// hand-offs, and placement) is run by the one replica that takes the
// queue's discovery lock; with --once the others wait while it discovers,
// and each exits when the queue holds nothing claimable, no live lease and
// no discovery in progress, so the replicas that survive a killed one
// finish its attempts once its leases expire. While watching, a replica claims between polls
// too (every second), so an attempt queued by another replica waits less
// than a poll. A failed attempt is queued again for the next poll
// (--watch) or left failed for the next run (--once), as without a queue.
// Verdicts, rows and output per attempt are those of a single process;
// which replica stored an attempt, and so the order of the rows, is not.
//
// Stopping: when `stop` is set (SIGTERM/SIGINT), the attempts in progress are
// finished and stored (collectors stop early and say "partial"), then
// run() returns. Nothing is half-written: each attempt is one transaction.
//
// Progress goes to `log`: on a terminal one status line redrawn in place
// (workloads discovered/skipped/attributed/failed, bytes, rate, the attempt
// in progress) with failures and poll summaries above it; otherwise plain
// lines, one per stored or failed attempt and one per poll.
//
// Thread-safety: one Runner per process, run() from one thread (which alone
// uses the store, the hand-off and the outputs; collectors and attribution
// also run on its pool's threads, as their contracts allow); `stop` may be
// set from any thread or a signal waiter. Errors are values and progress
// lines; nothing throws out of run().
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "blueprint/alert_receiver.h"
#include "blueprint/attribution.h"
#include "blueprint/collect/collector.h"
#include "blueprint/config.h"
#include "blueprint/discovery/discovery.h"
#include "blueprint/handoff.h"
#include "blueprint/store/store.h"
#include "blueprint/store/work_queue.h"

namespace culprit::blueprint {

struct RunSetup {
  const BlueprintConfig* config = nullptr;
  std::vector<std::unique_ptr<Discovery>> discoveries;
  std::vector<std::unique_ptr<Collector>> collectors;  // for attempts without a bundle
  std::unique_ptr<Attribution> attribution;
  std::unique_ptr<Store> store;
  // Decides the recommendations of every newly stored verdict (stored
  // `pending` with it), hands them off and records the outcome; every poll
  // first hands off what a killed run left pending (blueprint/handoff.h);
  // null: none of it.
  std::unique_ptr<Handoff> handoff;
  std::set<std::string> wanted_sources;                // the catalog's sources ("" = unknown: all)
  // The catalog's line filters per source (push_down.h), for collectors that
  // push them down; unset when the catalog is not known here.
  std::optional<std::map<std::string, LineFilter>> line_filters;
  bool record_placement = false;                       // --record-placement: snapshot running workloads' pods
  bool watch = false;
  // Attempts collected and attributed at once (--concurrency, >= 1): while
  // one waits on a log store, others go on. The store, the hand-off and
  // stdout stay on the run loop's thread, in discovery order, so the stored
  // rows and the output are those of a run with 1. Memory grows with it,
  // not with the number of attempts discovered.
  int concurrency = 1;
  // --queue: this process is one replica of several sharing the PostgreSQL
  // store's work queue (blueprint/store/work_queue.h; "Replicas" above).
  // Null: the attempts are discovered and attributed here alone.
  std::unique_ptr<WorkQueue> queue;
  // --alerts-listen: Alertmanager's webhook starts a poll at once (and the
  // workloads it names are looked for again while discovery lags); owned
  // by the caller. Null: polls every watch.interval only.
  AlertReceiver* alerts = nullptr;
  // --attempt-timings FILE: one JSON line per attempt settled (stored or
  // failed), saying where its time went: key, ok, end_ns (the job's end),
  // queued_ns (put in the shared queue; null without one), started_ns
  // (collection began), collect_ms, attribute_ms, store_ms, stored_ns,
  // nodes, wire_bytes. Written by the run loop's thread; null: none.
  std::ostream* timings = nullptr;
  int max_polls = 0;                                   // --watch: stop after this many polls (0: never; tests)
  std::ostream* out = nullptr;                         // stdout sink (verdicts), or null
  std::ostream* log = nullptr;                         // progress and messages
  bool log_is_terminal = false;
};

// Exit status: 0 every attempt attributed (or skipped); 1 some attempt
// failed and was left for the next run, or a hand-off (scontrol, webhook)
// failed; 3 discovery or the store failed.
int run_blueprint(RunSetup& setup, const std::atomic<bool>& stop);

// Builds the discoveries and collectors a configuration asks for. False
// with `error` when one cannot be built (a kubeconfig that cannot be used,
// a secret that cannot be read).
bool make_pipeline(const BlueprintConfig& config, RunSetup& setup, std::string& error);

}  // namespace culprit::blueprint
