// Handing a verdict's recommendations to the cluster (`culprit run`;
// docs/recovery.md, "Hand-off").
//
// For each newly stored verdict, every recommended action (the job's and
// each culprit node's, from the verdict's `recommendation`, plus
// replace_suspect when the policy's repeat rule holds) is
//   1. decided by the policy (blueprint/recovery_policy.h): act or hold;
//   2. for a Slurm attempt, a node `drain` that acts becomes the command
//        scontrol update nodename=NODE state=drain reason='culprit: SUB_DOMAIN ATTEMPT_KEY'
//      (shell-quoted: blueprint/shell_quote.h; the key's control characters encoded)
//      which is printed, and run only with `apply` (its exit status and
//      stderr are reported);
//   3. POSTed to the webhook (JSON, one document per action; retried on
//      transport errors, 429 and 5xx; a failure is reported, never dropped);
//   4. written as one JSON line to `emit` (with what 2 and 3 did);
//   5. returned as a RecommendationRecord for the store.
// A verdict of schema v1 has no recommendation: nothing is handed off.
//
// Thread-safety: one Handoff per run loop; not synchronized.
#pragma once

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "blueprint/attempt.h"
#include "blueprint/recovery_policy.h"
#include "blueprint/store.h"

namespace culprit::blueprint {

class HttpClient;

struct HandoffConfig {
  const RecoveryPolicy* policy = nullptr;  // null: every recommendation acts
  std::ostream* emit = nullptr;            // --emit-recommendations: JSON lines
  std::string webhook_url;                 // --webhook: "" for none
  int webhook_retries = 3;
  int64_t webhook_timeout_ns = 10LL * 1000000000;
  bool apply = false;                      // --apply: run the scontrol commands
  std::string slurm_conf;                  // SLURM_CONF for scontrol ("" = the environment's)
  std::string scontrol = "scontrol";       // the command (tests may point it elsewhere)
};

struct HandoffResult {
  std::vector<RecommendationRecord> records;
  std::vector<std::string> lines;          // for the progress log, one per command or failure
  int64_t acted = 0, held = 0, failed = 0; // failed: a command or a webhook call that did not succeed
};

class Handoff {
 public:
  // False with `error` when the webhook URL is not an http(s) URL.
  static std::unique_ptr<Handoff> make(HandoffConfig config, std::string& error);
  ~Handoff();

  // Decides and hands off the recommendations of `verdict` (just stored for
  // `attempt`). False with `error` only when the history cannot be read;
  // hand-off failures are counted in `out.failed` and described in `out.lines`.
  bool handle(const Attempt& attempt, const nlohmann::ordered_json& verdict, FaultHistory& history, HandoffResult& out,
              std::string& error);

  // The JSON document of one record (what --emit-recommendations writes and
  // the webhook receives), schema "culprit.recommendation/v1".
  static nlohmann::ordered_json record_json(const Attempt& attempt, const nlohmann::ordered_json& verdict,
                                            const nlohmann::ordered_json& action, const RecommendationRecord& r,
                                            const std::string& command);

 private:
  explicit Handoff(HandoffConfig config) : config_(std::move(config)) {}
  HandoffConfig config_;
  std::unique_ptr<HttpClient> webhook_;
  std::string webhook_path_;
};

}  // namespace culprit::blueprint
