// The operator's recovery policy (`culprit run --policy FILE`, YAML;
// docs/recovery.md, "The policy file"): what the cluster does with each
// recommendation of a verdict.
//
// A verdict recommends (runtime/recovery.h); the policy decides. Each
// recommendation is either `act` (handed off: the webhook is told to act,
// the Slurm drain is run with --apply) or `hold` (recorded and reported, not
// acted on). Rules are tried in order; the first whose filters match and
// whose history condition holds decides, e.g.
//
//   rules:
//     - action: drain            # drain only after 2 faults in 7 days
//       faults: 2
//       within: 7d
//       then: act
//     - action: drain
//       then: hold
//   default: act
//
// The history (how many attempts a node was the culprit of) comes from the
// store, through FaultHistory. Every decision says which rule made it
// (file:line) and why, and unmet conditions are named in the reason.
//
// Errors: load/parse never throw; every problem is a coded diagnostic
// (B0901-B0906) with file:line:col. Thread-safety: a RecoveryPolicy is
// immutable once parsed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/vocabulary.h"
#include "compiler/diagnostics.h"

namespace culprit::blueprint {

struct PolicyRule {
  std::string action = "*";        // a job or node action (runtime/recovery.h), or "*"
  std::string domain;              // "" any, else hardware | software | infrastructure | user
  std::string sub_domain;          // "" any; "gpu.*" matches gpu and everything under it
  int64_t faults = 0;              // > 0: the node was the culprit of at least this many attempts
  int64_t within_ns = 0;           // ... that ended at most this long before this one (this one included)
  std::string then = "act";        // act | hold
  std::string where;               // "policy.yaml:4"
};

// Adds replace_suspect for a node that keeps failing: a culprit of at least
// `faults` attributed attempts of `domain` within `within_ns`.
struct ReplacePolicy {
  int64_t faults = 0;
  int64_t within_ns = 0;
  std::string domain = vocab::domain::kHardware;
  std::string where;
};

struct RecoveryPolicy {
  std::string path;
  std::vector<PolicyRule> rules;
  std::optional<ReplacePolicy> replace_suspect;
  std::string default_decision = "act";
  std::string default_where;       // "policy.yaml:9", or "" when the file gives no default
};

// Reads and validates `path`. False when it has an error (all in `diags`)
// or cannot be read (`io_error`).
bool load_recovery_policy(const std::string& path, RecoveryPolicy& out, Diagnostics& diags, std::string& io_error);
// The same from text (tests).
bool parse_recovery_policy(const std::string& path, const std::string& text, RecoveryPolicy& out, Diagnostics& diags);

// How often a node was the culprit, from the store.
class FaultHistory {
 public:
  virtual ~FaultHistory() = default;
  // Attempts with an attributed verdict naming `node` a culprit, of
  // `domain` ("" any) and `sub_domain` pattern ("" any, "gpu.*"), that ended
  // in [from_ns, until_ns].
  virtual bool culprit_attempts(const std::string& node, const std::string& domain, const std::string& sub_domain,
                                int64_t from_ns, int64_t until_ns, int64_t& count, std::string& error) = 0;
};

struct PolicyDecision {
  std::string decision = "act";    // act | hold
  std::string decided_by;          // "policy.yaml:4", "policy.yaml (default)", "no policy"
  std::string reason;
};

// The decision for one recommended action of a verdict of (domain,
// sub_domain) that ended at `end_ns`; `node` is "" for the job's action.
// Without a policy every recommendation is `act` ("no policy"). False with
// `error` when the history cannot be read.
bool decide(const RecoveryPolicy* policy, const std::string& action, const std::string& node, const std::string& domain,
            const std::string& sub_domain, int64_t end_ns, FaultHistory& history, PolicyDecision& out, std::string& error);

// Whether `pattern` ("" any, "gpu.*", "gpu.memory") matches `sub_domain`.
bool sub_domain_matches(const std::string& pattern, const std::string& sub_domain);

}  // namespace culprit::blueprint
