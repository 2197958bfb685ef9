// Discovery: finding the workload attempts that ended and resolving their
// execution context (window, nodes, terminal state).
//
// A Discovery is asked for the attempts that ended in a time range
// [since, until] (unbounded ends allowed: static discovery ignores them)
// and returns them sorted by key. It reports scheduler problems as an error
// (the poll is retried; nothing is marked done) and oddities that do not stop
// it (a record it could not parse) as warnings.
//
// Implementations: static (blueprint/static_discovery.h) and Slurm
// (blueprint/slurm_discovery.h); Kubernetes/Kueue drops in behind the same
// interface.
//
// Thread-safety: discover() is called from one thread at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "blueprint/attempt.h"
#include "blueprint/collector.h"

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
  // Collectors that come with the attempts (a bundle's own files), or null.
  virtual const Collector* own_collector() const { return nullptr; }
};

}  // namespace culprit::blueprint
