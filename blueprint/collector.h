// Collectors: the components that fetch one workload attempt's evidence from
// where the cluster keeps it, and say what they found.
//
// A collector is given the attempt and the time scope to read (the window
// widened by the attribution slack) and returns, in Collected:
//   * `files`: local files to stream whole (the scanner reads them in 4 MiB
//     windows and applies the scope line by line; nothing is copied);
//   * `observations`: lines or metric samples it read itself (a window cut
//     out of a larger file, a decompressed rotation, and later Loki streams,
//     pod logs, PromQL samples), each with its provenance (file, line,
//     offset) so evidence points at the original;
//   * `reports`: one CollectorReport per source it was configured for,
//     which lands in the verdict's coverage.collectors. A collector that
//     fails or finds nothing says so there ("failed"/"empty" with a reason);
//     it never stops the run.
//
// Remote collectors (Loki, Kubernetes pod logs, PromQL) implement the same
// interface: they fill `observations`, use `hints` to push the catalog's
// sources down into their queries, and check `stop` between pages.
//
// Thread-safety: collect() may run for several attempts at once; an
// implementation keeps no per-call state in the object. No exception
// escapes collect().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "blueprint/attempt.h"
#include "runtime/bundle.h"
#include "runtime/model.h"
#include "runtime/observation.h"

namespace culprit::blueprint {

struct CollectRequest {
  const Attempt* attempt = nullptr;
  // The instants to read, inclusive: the attempt's window widened by the
  // attribution slack. Unset ends mean "unbounded" (a workload without a window).
  std::optional<int64_t> scope_start, scope_end;
  // The log sources the catalog reads (a collector may skip the others).
  std::set<std::string> wanted_sources;
  const std::atomic<bool>* stop = nullptr;  // set on SIGTERM: return early, report "partial"
};

struct Collected {
  std::vector<LogFile> files;
  std::vector<Observation> observations;
  std::vector<CollectorReport> reports;
  int64_t bytes = 0;              // evidence bytes gathered (files' sizes and observations' text)
  int64_t files_out_of_scope = 0; // files skipped because they end before or start after the scope
  std::vector<std::string> ignored_files;  // found but not read as logs (listed in coverage)

  void merge(Collected&& other);
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string name() const = 0;
  virtual void collect(const CollectRequest& request, Collected& out) const = 0;
};

}  // namespace culprit::blueprint
