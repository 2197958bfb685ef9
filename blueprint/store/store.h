// The store: where `culprit run` records attempts and verdicts, and what the
// dashboard reads. SQLite (embedded, the default) or
// PostgreSQL (one store shared by several blueprints), one schema for both
// (docs/blueprint.md, "The store").
//
// Opening a store applies the migrations it lacks, each in its own
// transaction, under a lock (PostgreSQL: an advisory lock; SQLite: BEGIN
// IMMEDIATE), so blueprints that start together migrate once. A store whose
// schema is newer than this binary is refused, never written.
//
// Idempotence: an attempt is identified by its key (Attempt::key), a verdict
// by (attempt, catalog digest). record_verdict() writes the attempt, its
// verdict, symptoms, evidence, coverage and the recommendations decided for
// it (hand-off `pending`) in one transaction: a run killed at any point
// leaves each attempt either wholly stored or absent, and storing the same
// verdict again changes nothing. A recommendation stays `pending` until
// finish_handoff() records what its hand-off did; pending_handoffs() is how
// a restarted blueprint finds those a kill interrupted (docs/recovery.md,
// "Hand-off").
//
// Thread-safety: a Store is one connection; use it from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "blueprint/attempt.h"
#include "blueprint/placement.h"
#include "blueprint/recovery_policy.h"
#include "blueprint/store/sql.h"

namespace culprit::blueprint {

// The schema version this binary writes (docs/blueprint.md lists each one).
inline constexpr int kStoreSchemaVersion = 5;

// One recommended action as `culprit run` stored it (table recommendations):
// what the verdict recommended, what the policy decided, what was done.
struct RecommendationRecord {
  int64_t ordinal = 0;                 // its place among the verdict's recommendations (0: the job's)
  std::string id;                      // stable across re-deliveries: consumers de-duplicate on it
  std::string scope, node, action;     // scope "job" | "node"; node "" for the job
  std::string target_json;             // the action's target (or, for the job, its nodes), as JSON
  std::string rule, basis, reason;     // from the verdict's recommendation
  std::string decision, decided_by, decision_reason;  // blueprint/recovery_policy.h
  std::string document;                // what is handed off: the culprit.recommendation/v1 JSON, as decided
  std::string owner;                   // the cluster name of the blueprint that decided it (and resumes it)
  std::string state = "pending";       // hand-off: "pending" until it was delivered, then "done"
  std::string handoff;                 // what was done: "printed: scontrol ...", "applied: ...", "webhook: HTTP 200", "failed: ..."
};

// A recommendation whose hand-off a kill interrupted (pending_handoffs()).
struct PendingHandoff {
  int64_t verdict_id = 0;
  RecommendationRecord record;
};

// Decides the recommendations of the verdict being stored, reading the
// fault history through the storing transaction (so the verdict counts).
using RecommendationDecider =
    std::function<bool(FaultHistory& history, std::vector<RecommendationRecord>& out, std::string& error)>;

// What Store::begin_attempt found and did (see there).
struct AttemptStart {
  bool proceed = false;          // collect and attribute it now (the mark is written)
  bool attributed = false;       // it already has a verdict: nothing was written
  bool given_up = false;         // not to be tried: it died limits::kCollectionStarts times
  bool given_up_now = false;     // ... and this call gave it up
  int64_t died = 0;              // earlier starts that did not finish, counted against it
  bool died_shared = false;      // the last start ended with the process while others were in flight
  std::string message;           // last_error as written (the mark, or why it was given up)
};

struct RunCounts {
  int64_t discovered = 0, skipped = 0, attributed = 0, failed = 0;
};

class Store final : public PlacementBook, public FaultHistory {
 public:
  // Opens (creating and migrating as needed). Null with `error`.
  static std::unique_ptr<Store> open(const std::string& url, const std::string& password, std::string& error);

  const std::string& url() const { return url_; }   // with any password redacted
  int schema_version() const { return version_; }

  // Whether `key` already has a verdict (from any catalog).
  bool attributed(const std::string& key, bool& yes, std::string& error);
  // Stores the verdict of an attempt (culprit.verdict/v2 or v1 JSON).
  // `inserted` is false when this verdict (attempt, catalog digest) was
  // already there; when it is true, `verdict_id` (if given) is its row id
  // and, with `decide`, the recommendations it returned are stored in the
  // same transaction, numbered in order, `pending`, and copied to
  // `recommendations` (if given). When `decide` fails nothing is stored.
  bool record_verdict(const Attempt& attempt, const std::string& discovered_by, const nlohmann::ordered_json& verdict,
                      const std::string& attributed_by, bool& inserted, std::string& error, int64_t* verdict_id = nullptr,
                      const RecommendationDecider& decide = {}, std::vector<RecommendationRecord>* recommendations = nullptr);
  // Records what the hand-off of recommendation (verdict_id, ordinal) did; it
  // is `done` from then on.
  bool finish_handoff(int64_t verdict_id, int64_t ordinal, const std::string& handoff, std::string& error);
  // The recommendations decided by blueprint `owner` whose hand-off is still
  // `pending`, oldest verdict first, in order.
  bool pending_handoffs(const std::string& owner, std::vector<PendingHandoff>& out, std::string& error);
  // FaultHistory: attempts whose attributed verdicts name `node` a culprit
  // (the recovery policy's "faults in a window"), each attempt counted once.
  bool culprit_attempts(const std::string& node, const std::string& domain, const std::string& sub_domain,
                        int64_t from_ns, int64_t until_ns, int64_t& count, std::string& error) override;
  // Notes a failed attempt (collection or attribution error) so it shows in
  // the store; it stays unattributed and is tried again by the next run.
  bool record_failure(const Attempt& attempt, const std::string& discovered_by, const std::string& message,
                      std::string& error);

  // Marks an attempt as started before its collection, so that a process
  // that dies collecting or attributing it (a crash, the OOM killer,
  // SIGKILL) leaves a row saying so: status 'error', last_error
  // "collection did not finish (start K, run R)". record_verdict or
  // record_failure overwrite it when the attempt ends either way; a mark
  // still there at the next start means start K died. Then the runs row R
  // it died in is closed (status 'died'), and after limits::kCollectionStarts
  // starts that died the attempt is given up instead: last_error
  // "collection died N times; not tried again", `failures` counted once,
  // and every later call answers given_up without writing. A start that
  // died is not counted in `failures`, so a store resumed after a kill holds
  // the rows an uninterrupted run writes. One transaction; an attributed
  // attempt is never touched. Assumes one process works on a given attempt
  // at a time: one blueprint per scheduler, or replicas that take attempts
  // from the shared queue under a lease (blueprint/store/work_queue.h).
  //
  // `shared`: other attempts may be in flight in this process while this one
  // is (culprit run --concurrency). Its mark then says so ("..., run R, with
  // others in flight)"), and a start that died with such a mark is not
  // counted against the attempt (any of them may have ended the process):
  // `died_shared` tells the caller to run it alone next, so that a death is
  // charged to the attempt that caused it.
  bool begin_attempt(const Attempt& attempt, const std::string& discovered_by, int64_t run_id, AttemptStart& out,
                     std::string& error, bool shared = false);

  // Whether the attempt's last start died (its mark is still there), without
  // writing anything: the run loop runs such an attempt alone.
  bool start_died(const std::string& attempt_key, bool& died, std::string& error);

  // --watch progress: the end of the last window fully processed, per discovery.
  bool cursor(const std::string& name, std::optional<int64_t>& value, std::string& error);
  bool set_cursor(const std::string& name, int64_t value, std::string& error);

  // One row per `culprit run` poll (what it did, for operators).
  bool begin_run(const std::string& mode, int64_t& run_id, std::string& error);
  bool finish_run(int64_t run_id, const RunCounts& counts, const std::string& status, std::string& error);

  // Pod placements of Kubernetes workloads (--record-placement; placement.h).
  bool record_placements(const std::vector<PlacementRecord>& records, std::string& error) override;
  bool placements(const std::string& workload_uid, std::vector<PlacementRecord>& out, std::string& error) override;

 private:
  Store() = default;
  bool migrate(std::string& error);
  // `count_failure`: whether an 'error' adds one to `failures` (a start's
  // mark does not).
  bool upsert_attempt(const Attempt& a, const std::string& discovered_by, const std::string& status,
                      const std::string& last_error, int64_t& attempt_id, std::string& error, bool count_failure = true);

  std::unique_ptr<SqlConnection> db_;
  std::string url_;
  int version_ = 0;
};

}  // namespace culprit::blueprint
