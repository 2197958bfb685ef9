// Handing a verdict's recommendations to the cluster (`culprit run`;
// docs/recovery.md, "Hand-off"), in two steps so that a kill at any instant
// loses nothing:
//
// decide() (pure: reads the fault history, no side effect) turns every
// recommended action of a newly stored verdict (the job's and each culprit
// node's, from the verdict's `recommendation`, plus replace_suspect when the
// policy's repeat rule holds) into a RecommendationRecord: the policy's
// decision (blueprint/recovery_policy.h), a stable id, and the document to
// hand off (culprit.recommendation/v1; for a Slurm attempt, a node `drain`
// that acts carries the command
//   scontrol update nodename=NODE state=drain reason='culprit: SUB_DOMAIN ATTEMPT_KEY'
// shell-quoted (blueprint/shell_quote.h), the key's control characters encoded).
// The store writes these records `pending` in the verdict's own transaction.
//
// deliver() (side effects) then hands one record off:
//   1. the drain command is printed, and run only with `apply` (its exit
//      status and stderr are reported);
//   2. the document is POSTed to the webhook (retried on transport errors,
//      429 and 5xx; a failure is reported, never dropped);
//   3. one JSON line goes to `emit` (with what 1 and 2 did);
// and the caller records the outcome (Store::finish_handoff). A record left
// `pending` by a kill is delivered again after a restart: delivery is
// at-least-once (a drain run twice is harmless; a consumer of the JSON lines
// or the webhook de-duplicates on `id`).
//
// A webhook that does not answer (no HTTP response after its retries) opens
// a breaker for the rest of the poll: later deliveries are deferred (they
// stay `pending` and the next poll, or the next run, delivers them), so one
// hung receiver costs one action's retries × timeout per poll, not that for
// every action. begin_poll() closes it.
//
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
#include "blueprint/store/store.h"

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

class Handoff {
 public:
  // False with `error` when the webhook URL is not an http(s) URL.
  static std::unique_ptr<Handoff> make(HandoffConfig config, std::string& error);
  ~Handoff();

  // The recommendations of `verdict` (being stored for `attempt`), decided,
  // in hand-off order, each with its id and document; nothing is handed off.
  // False with `error` only when the history cannot be read.
  bool decide(const Attempt& attempt, const nlohmann::ordered_json& verdict, FaultHistory& history,
              std::vector<RecommendationRecord>& out, std::string& error) const;

  // Hands off one decided record (from decide() or the store): on return
  // true, `r.handoff` says what was done and `r.state` is "done"; `lines`
  // gets one line per command, hold or failure for the progress log, and
  // `failed` is set when a command or the webhook call did not succeed.
  // False when the delivery is deferred (the webhook's breaker is open):
  // nothing was done and the record stays pending.
  bool deliver(RecommendationRecord& r, std::vector<std::string>& lines, bool& failed);

  // A new poll: the webhook is tried again.
  void begin_poll() { webhook_down_ = false; }

  // The JSON document of one record (what --emit-recommendations writes and
  // the webhook receives), schema "culprit.recommendation/v1".
  static nlohmann::ordered_json record_json(const Attempt& attempt, const nlohmann::ordered_json& verdict,
                                            const nlohmann::ordered_json& action, const RecommendationRecord& r,
                                            const std::string& command);

  // The stable id of the `ordinal`th recommendation of the verdict of
  // `attempt_key` by catalog `catalog_digest`: "rec-" and 32 hex digits.
  static std::string record_id(const std::string& attempt_key, const std::string& catalog_digest, int64_t ordinal);

 private:
  explicit Handoff(HandoffConfig config) : config_(std::move(config)) {}
  HandoffConfig config_;
  std::unique_ptr<HttpClient> webhook_;
  std::string webhook_path_;
  bool webhook_down_ = false;  // the breaker: the webhook did not answer in this poll
};

}  // namespace culprit::blueprint
