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
// Stopping: when `stop` is set (SIGTERM/SIGINT), the attempt in progress is
// finished and stored (collectors stop early and say "partial"), then
// run() returns. Nothing is half-written: each attempt is one transaction.
//
// Progress goes to `log`: on a terminal one status line redrawn in place
// (workloads discovered/skipped/attributed/failed, bytes, rate, the attempt
// in progress) with failures and poll summaries above it; otherwise plain
// lines, one per stored or failed attempt and one per poll.
#pragma once

#include <atomic>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "blueprint/attribution.h"
#include "blueprint/collector.h"
#include "blueprint/config.h"
#include "blueprint/discovery.h"
#include "blueprint/store.h"

namespace culprit::blueprint {

struct RunSetup {
  const BlueprintConfig* config = nullptr;
  std::vector<std::unique_ptr<Discovery>> discoveries;
  std::vector<std::unique_ptr<Collector>> collectors;  // for attempts without a bundle
  std::unique_ptr<Attribution> attribution;
  std::unique_ptr<Store> store;
  std::set<std::string> wanted_sources;                // the catalog's sources ("" = unknown: all)
  bool watch = false;
  int max_polls = 0;                                   // --watch: stop after this many polls (0: never; tests)
  std::ostream* out = nullptr;                         // stdout sink (verdicts), or null
  std::ostream* log = nullptr;                         // progress and messages
  bool log_is_terminal = false;
};

// Exit status: 0 every attempt attributed (or skipped); 1 some attempt
// failed and was left for the next run; 3 discovery or the store failed.
int run_blueprint(RunSetup& setup, const std::atomic<bool>& stop);

// Builds the discoveries and collectors a configuration asks for.
void make_pipeline(const BlueprintConfig& config, RunSetup& setup);

}  // namespace culprit::blueprint
