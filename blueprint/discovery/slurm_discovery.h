// Slurm discovery: the jobs (or job steps) that ended in a time range, from
// the accounting database through `sacct`.
//
// One call runs
//   sacct -P -n -D -a --delimiter=<US> -S SINCE -E UNTIL -o <fields> [-M CLUSTERS]
// with TZ=UTC and SLURM_TIME_FORMAT=standard, so every time is UTC and has
// one format. Parsable text, not --json: 22.05's JSON reports exit code 0 for
// jobs that exited non-zero. `-D` lists every run of a requeued job: each
// run is its own attempt (key "slurm/CLUSTER/JOBID@START"), numbered in start
// order. Steps (JOBID.batch, JOBID.0, ...) are attached to the run they
// follow; with `attempts: step` each step that ended in a configured state
// is an attempt of its own (its own window and nodes).
//
// Terminal state: sacct's State without the " by UID" of CANCELLED.
// Exit code: sacct's "E:S" is exit status E and signal S; the context's
// exit_code is E, or 128+S when E is 0 and a signal ended it (the shell's
// convention), or 0.
//
// Records still running (End Unknown), outside [since, until], in a state
// not configured, or that never ran (no nodes) are counted in `ignored`.
//
// Thread-safety: as every Discovery, discover() from one thread at a time;
// parse_sacct() is a pure function. Errors are values (sacct that fails or
// times out: false and its message); nothing throws.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/vocabulary.h"
#include "blueprint/connector.h"
#include "blueprint/discovery/discovery.h"

namespace culprit::blueprint {

struct SlurmDiscoveryConfig : ConnectorConfig {
  std::string sacct = "sacct";        // the sacct executable (a name is looked up in PATH)
  std::string slurm_conf;             // sets SLURM_CONF for sacct when not ""
  std::vector<std::string> clusters;  // sacct -M; empty: the local cluster
  // Terminal states to attribute; the rest (COMPLETED by default) are ignored.
  std::vector<std::string> states = {vocab::state::kBootFail,    vocab::state::kCancelled, vocab::state::kDeadline,
                                     vocab::state::kFailed,      vocab::state::kNodeFail,  vocab::state::kOutOfMemory,
                                     vocab::state::kPreempted,   vocab::state::kRequeued,  vocab::state::kTimeout};
  bool step_attempts = false;         // attempts: step (each srun step its own attempt) instead of job
  int64_t lookback = 24LL * 3600 * 1000000000;   // --once, and the first --watch poll: jobs ended this recently
  int64_t timeout = 60LL * 1000000000;           // a sacct call that takes longer is killed
  std::string summary() const override;
};

// The `discovery.slurm` section (registered in blueprint/connectors.cpp): its reader,
// which validates as it reads, and its factory.
std::shared_ptr<ConnectorConfig> read_slurm_discovery_config(ConfigReader& r, const YAML::Node& n);
bool make_slurm_discovery(const ConnectorConfig& config, const ConnectorEnv& env, ConnectorParts& out, std::string& error);

// The fields requested from sacct, in order.
extern const char* const kSacctFields;
// The delimiter between them (ASCII unit separator: never in a job name or path).
extern const char* const kSacctDelimiter;

class SlurmDiscovery final : public Discovery {
 public:
  explicit SlurmDiscovery(SlurmDiscoveryConfig config) : config_(std::move(config)) {}
  std::string name() const override { return "slurm"; }
  bool discover(const DiscoveryWindow& window, DiscoveryResult& out, std::string& error) override;
  int64_t lookback() const override { return config_.lookback; }

 private:
  SlurmDiscoveryConfig config_;
};

// Parses sacct output produced with kSacctFields and kSacctDelimiter
// (exposed for tests with recorded output). Never fails: a malformed record
// becomes a warning.
void parse_sacct(const std::string& text, const SlurmDiscoveryConfig& config, const DiscoveryWindow& window,
                 DiscoveryResult& out);

}  // namespace culprit::blueprint
