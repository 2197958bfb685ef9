// The store: where `culprit run` records attempts and verdicts, and what the
// dashboard and `culprit offenders` read. SQLite (embedded, the default) or
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
// verdict, symptoms, evidence and coverage in one transaction: a run killed
// at any point leaves each attempt either wholly stored or absent, and
// storing the same verdict again changes nothing.
//
// Thread-safety: a Store is one connection; use it from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "blueprint/attempt.h"
#include "blueprint/sql.h"

namespace culprit::blueprint {

// The schema version this binary writes (docs/blueprint.md lists each one).
inline constexpr int kStoreSchemaVersion = 1;

struct RunCounts {
  int64_t discovered = 0, skipped = 0, attributed = 0, failed = 0;
};

class Store {
 public:
  // Opens (creating and migrating as needed). Null with `error`.
  static std::unique_ptr<Store> open(const std::string& url, const std::string& password, std::string& error);

  const std::string& url() const { return url_; }   // with any password redacted
  int schema_version() const { return version_; }

  // Whether `key` already has a verdict (from any catalog).
  bool attributed(const std::string& key, bool& yes, std::string& error);
  // Stores the verdict of an attempt (culprit.verdict/v1 JSON). `inserted`
  // is false when this verdict (attempt, catalog digest) was already there.
  bool record_verdict(const Attempt& attempt, const std::string& discovered_by, const nlohmann::ordered_json& verdict,
                      const std::string& attributed_by, bool& inserted, std::string& error);
  // Notes a failed attempt (collection or attribution error) so it shows in
  // the store; it stays unattributed and is tried again by the next run.
  bool record_failure(const Attempt& attempt, const std::string& discovered_by, const std::string& message,
                      std::string& error);

  // --watch progress: the end of the last window fully processed, per discovery.
  bool cursor(const std::string& name, std::optional<int64_t>& value, std::string& error);
  bool set_cursor(const std::string& name, int64_t value, std::string& error);

  // One row per `culprit run` poll (what it did, for operators).
  bool begin_run(const std::string& mode, int64_t& run_id, std::string& error);
  bool finish_run(int64_t run_id, const RunCounts& counts, const std::string& status, std::string& error);

 private:
  Store() = default;
  bool migrate(std::string& error);
  bool upsert_attempt(const Attempt& a, const std::string& discovered_by, const std::string& status,
                      const std::string& last_error, int64_t& attempt_id, std::string& error);

  std::unique_ptr<SqlConnection> db_;
  std::string url_;
  int version_ = 0;
};

}  // namespace culprit::blueprint
