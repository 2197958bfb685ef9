// Durable pod -> node placement of Kubernetes workloads.
//
// Pods disappear after a failure (Kueue deletes a preempted job's pods, a
// Job's ttlSecondsAfterFinished removes them, a JobSet restart replaces
// them), and Events expire after an hour by default, so a post-hoc
// attribution can lose the one thing it cannot do without: which nodes ran
// the workload. `culprit run --record-placement` writes what it sees while
// workloads run into the store (blueprint/store/store.h, table `placements`), and
// Kueue discovery reads it back when the pods are gone.
//
// A discovery whose workloads have pods implements PlacementRecorder as
// well as Discovery (blueprint/discovery/kueue_discovery.h); the runner
// finds it with dynamic_cast, so discoveries without pods carry none of it.
//
// Ownership: the store is the PlacementBook and outlives every recorder
// that points at it. Errors are values (false with `error`).
// Thread-safety: implementations are used from the runner's thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace culprit::blueprint {

struct PlacementRecord {
  std::string workload_uid;        // the Kueue Workload's metadata.uid
  std::string namespace_, workload;
  int64_t admitted_ns = 0;         // when this admission began (Admitted / QuotaReserved condition time)
  std::string pod, pod_uid, node;
  int64_t first_seen_ns = 0, last_seen_ns = 0;
};

class PlacementBook {
 public:
  virtual ~PlacementBook() = default;
  // Inserts new placements, extends last_seen of known ones (idempotent).
  virtual bool record_placements(const std::vector<PlacementRecord>& records, std::string& error) = 0;
  // Every recorded placement of a Workload, sorted by (admitted_ns, pod).
  virtual bool placements(const std::string& workload_uid, std::vector<PlacementRecord>& out, std::string& error) = 0;
};

// A discovery that sees where running workloads' pods are placed.
class PlacementRecorder {
 public:
  virtual ~PlacementRecorder() = default;
  // Where recorded placements are read from when the pods are gone (not owned).
  virtual void set_placement_book(PlacementBook* book) = 0;
  // One snapshot of the running workloads' pods for `--record-placement`;
  // `recorded` counts the placements written.
  virtual bool record_placement(PlacementBook& book, int64_t& recorded, std::string& error) = 0;
  // Between snapshots under --watch; 0: only once per poll.
  virtual int64_t placement_interval() const = 0;
};

}  // namespace culprit::blueprint
