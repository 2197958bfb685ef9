// Discovery: finding the workload attempts that ended and resolving their
// execution context (window, nodes, terminal state).
//
// A Discovery is asked for the attempts that ended in a time range
// [since, until] (unbounded ends allowed: static discovery ignores them)
// and returns them sorted by key. It reports scheduler problems as an error
// (the poll is retried; nothing is marked done) and oddities that do not stop
// it (a record it could not parse) as warnings.
//
// Implementations: static (blueprint/discovery/static_discovery.h), Slurm
// (blueprint/discovery/slurm_discovery.h) and Kueue (blueprint/discovery/kueue_discovery.h).
//
// A discovery whose workloads run in pods also implements PlacementRecorder
// (blueprint/placement.h); the runner asks for it with dynamic_cast.
//
// Thread-safety: discover() is called from one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "blueprint/attempt.h"
#include "blueprint/collect/collector.h"

namespace culprit::blueprint {

struct DiscoveryWindow {
  std::optional<int64_t> since, until;  // ns since the epoch; attempts whose end lies in [since, until]
};

struct DiscoveryResult {
  std::vector<Attempt> attempts;          // sorted by key
  std::vector<std::string> warnings;
  int64_t ignored = 0;                    // records seen but not wanted (still running, a state not configured)
};

class Discovery {
 public:
  virtual ~Discovery() = default;
  virtual std::string name() const = 0;   // "static", "slurm"
  // False with `error` when the scheduler could not be asked.
  virtual bool discover(const DiscoveryWindow& window, DiscoveryResult& out, std::string& error) = 0;
  // The collector for attempts that carry their evidence with them (a
  // bundle's own files, Attempt::bundle_dir), or null. The runner uses it
  // instead of the configured collectors for those attempts.
  virtual const Collector* own_collector() const { return nullptr; }
  // How far back --once (and the first --watch poll) looks; 0: everything.
  virtual int64_t lookback() const { return 0; }
};

}  // namespace culprit::blueprint
