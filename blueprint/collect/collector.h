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
//   * `collectors`: one CollectorReport per source it was configured for,
//     which lands in the verdict's coverage.collectors. A collector that
//     fails or finds nothing says so there ("failed"/"empty" with a reason);
//     it never stops the run;
//   * `ignored_files`, `refused_files`, `warnings`: what it found but did not
//     read, and problems of its own, which reach coverage as a bundle's do.
//
// Remote collectors (Loki, Kubernetes pod logs, PromQL) implement the same
// interface: they fill `observations`, use `wanted_sources` and
// `line_filters` to push the catalog's needs down into their queries, and
// check `stop` between pages.
//
// Thread-safety: collect() may run for several attempts at once; an
// implementation keeps no per-call state in the object. No exception
// escapes collect().
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "blueprint/attempt.h"
#include "blueprint/collect/push_down.h"
#include "runtime/evidence_set.h"
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
  // Per source, a filter every line an extractor can match passes
  // (push_down.h); null when unknown (a service's catalog that differs from
  // the local one): then every line is needed.
  const std::map<std::string, LineFilter>* line_filters = nullptr;
  const std::atomic<bool>* stop = nullptr;  // set on SIGTERM: return early, report "partial"
};

// What collectors gathered for one attempt: the evidence record diagnose
// consumes (runtime/evidence_set.h; `collectors` holds one report per configured
// source), plus the figures the run reports.
struct Collected : EvidenceSet {
  int64_t bytes = 0;              // evidence bytes gathered (files' sizes and observations' text)
  int64_t wire_bytes = 0;         // bytes remote collectors moved over the network for it (requests and answers)
  int64_t files_out_of_scope = 0; // files skipped because they end before or start after the scope

  void merge(Collected&& other);
};

class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string name() const = 0;
  virtual void collect(const CollectRequest& request, Collected& out) const = 0;
};

}  // namespace culprit::blueprint
