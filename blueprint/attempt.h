// A workload attempt as discovery finds it: the execution context of one run
// of one workload, before any evidence is collected.
//
// Discovery (blueprint/discovery.h) produces these; collectors
// (blueprint/collector.h) gather their evidence; the store
// (blueprint/store.h) keys everything it writes on `key`. An Attempt is a
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

struct Attempt {
  // Stable identity, unique across schedulers and clusters and constant from
  // one discovery to the next: "slurm/CLUSTER/JOBID@START", "static/ID". The
  // store never attributes the same key twice.
  std::string key;
  std::string scheduler = "static";  // "slurm", "static", (later) "kubernetes"
  std::string cluster;               // "" when the scheduler has none
  std::string workload_id;           // the scheduler's job id ("42", "42_3" for an array task, "42.0" for a step attempt)
  std::string job_id;                // the raw job id the scheduler names files by (Slurm %j: "42", "57" for task 42_3); = workload_id when it has none
  std::string name;                  // job name, "" when unknown
  std::string user, partition;       // "" when unknown
  int attempt = 1;                   // 1 for the first run; requeued runs of a job count up (as far as discovery saw them)
  std::optional<int64_t> submit, start, end;  // ns since the epoch, UTC
  // For a requeued run: the end of the run before it. Evidence from before
  // then belongs to that run, so collectors read nothing earlier, whatever
  // the slack.
  std::optional<int64_t> evidence_after;
  std::vector<std::string> nodes;    // sorted, unique
  std::string state;                 // terminal state, upper case: FAILED, TIMEOUT, NODE_FAIL, ...
  std::optional<int64_t> exit_code;  // see slurm_discovery.h for how Slurm's "E:S" maps to it
  std::string work_dir;              // the job's working directory, "" when unknown
  std::vector<AttemptStep> steps;    // sorted by id
  // Where the evidence already is, for workloads given as bundle directories
  // (static discovery): the bundle root, else "".
  std::string bundle_dir;

  // The runtime's view of it: what the verdict's "workload" says.
  WorkloadContext context() const;
};

}  // namespace culprit::blueprint
