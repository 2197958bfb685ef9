// A workload attempt as discovery finds it: the execution context of one run
// of one workload, before any evidence is collected.
//
// Discovery (blueprint/discovery/discovery.h) produces these; collectors
// (blueprint/collect/collector.h) gather their evidence; the store
// (blueprint/store/store.h) keys everything it writes on `key`. An Attempt is a
// plain value: copy it freely, no thread-safety concerns.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/model.h"

namespace culprit::blueprint {

// One step of a Slurm job (`JOBID.batch`, `JOBID.0`, ...), kept for the
// record and for step-level attempts.
struct AttemptStep {
  std::string id;                     // "batch", "extern", "0", ...
  std::string name;
  std::string state;                  // sacct State, " by UID" removed
  std::optional<int64_t> exit_code;   // the process's exit status
  std::optional<int64_t> signal;      // the signal that ended it (0: none)
  std::optional<int64_t> start, end;  // ns since the epoch, UTC
  std::vector<std::string> nodes;     // expanded, sorted
};

// A pod of a Kubernetes workload attempt, as discovery saw it (or as the
// placement recorder stored it when the pod is gone).
struct AttemptContainer {
  std::string name;
  bool init = false;                  // an init container
  int restarts = 0;                   // restartCount: > 0 means a previous instance has a log
  bool started = false;               // it ran (has a log): running or terminated now or before
};

struct AttemptPod {
  std::string name, uid;
  std::string node;                   // spec.nodeName, "" when never scheduled
  std::string phase;                  // Pending, Running, Succeeded, Failed, Unknown, or "gone"
  std::vector<AttemptContainer> containers;  // init containers first, in spec order
  bool gone = false;                  // not in the API any more (placement from the recorder or Events)
};

// The Kubernetes objects of a Kueue workload attempt (Kueue discovery and
// the pod-logs collector read them; the store keeps the pods' placement).
struct KubernetesAttempt {
  std::string namespace_name;
  std::string workload, workload_uid;
  std::string owner_kind, owner_name, owner_uid;  // the job object Kueue admitted (Job, JobSet, PyTorchJob, Pod, ...)
  std::vector<AttemptPod> pods;                    // sorted by name
};

struct Attempt {
  // Stable identity, unique across schedulers and clusters and constant from
  // one discovery to the next: "slurm/CLUSTER/JOBID@START", "static/ID",
  // "bundle/CLUSTER/ID@DIR", "kueue/CLUSTER/NAMESPACE/WORKLOAD@END". The
  // store never attributes the same key twice.
  std::string key;
  std::string cluster;               // "" when the scheduler has none

  // What the runtime sees and the verdict's "workload" says: the scheduler
  // ("slurm", "static", "kubernetes"), the workload id ("42", "42_3" for an
  // array task, "42.0" for a step attempt), the window (ns since the epoch,
  // UTC), the nodes with their aliases, and the terminal state (upper case:
  // FAILED, TIMEOUT, NODE_FAIL, ...; see slurm_discovery.h for how Slurm's
  // "E:S" maps to the exit code). Held here once, not mirrored field by
  // field, so that a bundle's aliases reach the verdict as they do through
  // `culprit diagnose`.
  WorkloadContext context;

  // What the scheduler adds, for the store and the collectors' path templates.
  std::string job_id;                // the raw job id the scheduler names files by (Slurm %j: "42", "57" for task 42_3); = workload id when it has none
  std::string name;                  // job name, "" when unknown
  std::string user, partition;       // "" when unknown
  int attempt = 1;                   // 1 for the first run; requeued runs of a job count up (as far as discovery saw them)
  std::optional<int64_t> submit;     // ns since the epoch, UTC
  // For a requeued run: the end of the run before it. Evidence from before
  // then belongs to that run, so collectors read nothing earlier, whatever
  // the slack.
  std::optional<int64_t> evidence_after;
  std::string work_dir;              // the job's working directory, "" when unknown
  std::vector<AttemptStep> steps;    // Slurm job steps, sorted by id
  // Where the evidence already is, for workloads given as bundle directories
  // (static discovery): the bundle root, else "".
  std::string bundle_dir;
  KubernetesAttempt kubernetes;      // Kueue discovery only; empty otherwise
};

}  // namespace culprit::blueprint
