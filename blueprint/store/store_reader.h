// Reading the store without writing it: what the dashboard (and any other
// reader, such as a repeat-offenders report) asks of the verdicts that
// `culprit run` recorded (docs/blueprint.md, "The store"; docs/dashboard.md).
//
// A StoreReader opens the store read-only and proves it: SQLite with
// SQLITE_OPEN_READONLY (mode=ro) and `PRAGMA query_only`, PostgreSQL in a
// session whose transactions are READ ONLY (checked with
// `SHOW transaction_read_only` before the first query). It never migrates
// and never creates an index: a store last written by an older culprit is
// read as it is (without the readers' indexes that every writer of this
// one adds, store.cpp, so larger stores list more slowly; open() says so in
// `warning`), a store whose schema is newer than this binary is refused.
//
// Every value from a caller reaches SQL as a bound parameter; the only text
// spliced into a statement comes from fixed tables in store_reader.cpp
// (column lists, ORDER BY clauses, index names). A page of the list is two
// steps: its ids from an index (each filter and sort key has one ending in
// `end_ns`, and `verdicts_list` holds them all for combinations; schema
// version 1 and the readers' indexes), then those rows, so the rows (each with its verdict JSON) are
// read for the page only, never to filter or sort.
//
// Thread-safety: a StoreReader is one connection; use it from one thread at
// a time (the dashboard keeps a pool of them). Errors are values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/vocabulary.h"
#include "blueprint/store/sql.h"

namespace culprit::blueprint {

// The list's filters. Empty strings and empty vectors mean "any".
// The domain filter's word for verdicts that name no domain (every status
// but attributed).
inline constexpr char kNoDomain[] = "none";

struct VerdictFilter {
  std::optional<int64_t> end_from_ns;       // the attempt ended at or after
  std::optional<int64_t> end_before_ns;     // ... and before
  std::vector<std::string> statuses;        // statuses (base/vocabulary.h); empty = any
  std::string domain;                       // a domain (base/vocabulary.h), or kNoDomain
  std::string sub_domain;
  std::string node;                         // the attempt ran on this node
  bool node_is_culprit = false;             // ... and it is one of the culprit nodes
  std::string scheduler;
  std::string catalog_version;
  std::string workload_prefix;              // the workload (job) id, or its beginning
};

// Sort keys of the list; each has a deterministic tie-break (then the id).
enum class VerdictSort { End, Workload, Status, Cause, Nodes, Scheduler, State };

struct VerdictPage {
  VerdictSort sort = VerdictSort::End;
  bool descending = true;
  int64_t offset = 0;
  int64_t limit = 50;
};

struct VerdictSummary {
  int64_t id = 0;
  std::string scheduler, cluster, workload_id, attempt_key, state;
  int64_t attempt_no = 0;
  std::optional<int64_t> start_ns, end_ns;
  int64_t node_count = 0;
  std::string status, domain, sub_domain, culprit_nodes, root_cause, root_cause_summary;
  std::string catalog_name, catalog_version;
};

// One verdict with its attempt, as the workload page shows it.
struct VerdictDetail {
  VerdictSummary summary;
  std::string attempt_state;
  std::optional<int64_t> exit_code, submit_ns;
  std::string nodes;            // comma-joined, sorted
  std::string steps_json;       // the attempt's steps (JSON array)
  std::string discovered_by, attributed_by, evaluator, catalog_digest, verdict_sha256;
  std::string workload_name, user_name, partition_name;
  int64_t attributed_ns = 0;
  std::string verdict_json;     // exactly as stored
};

// Other verdicts of the same workload (its requeued runs, other catalogs).
struct RelatedVerdict {
  int64_t id = 0;
  std::string attempt_key, status, domain, sub_domain, catalog_version;
  std::optional<int64_t> end_ns;
};

// Distinct values the filters can take, for the list's form.
struct StoreFacets {
  std::vector<std::string> statuses, domains, sub_domains, schedulers, catalog_versions;
  std::optional<int64_t> first_end_ns, last_end_ns;
  int64_t verdicts = 0;
};

// Verdicts that ended in one time bucket, by outcome.
struct OutcomeCount {
  int64_t bucket_start_ns = 0;
  std::string status, domain;
  int64_t count = 0;
};

// A node that was the culprit of attributed verdicts in a window.
struct Offender {
  std::string node;
  int64_t attempts = 0;                                 // attempts whose attributed verdicts name it a culprit
  std::vector<std::pair<std::string, int64_t>> causes;  // "domain/sub_domain" -> count, most first
  std::optional<int64_t> last_end_ns;
};

class StoreReader {
 public:
  // Opens `url` (sqlite:PATH | postgresql://...) read-only. Null with
  // `error` when it cannot be opened, is not a Culprit store, or is newer
  // than this binary; a SQLite path (or its -wal, -shm, -journal) that
  // exists but is not a regular file (a FIFO, a directory, a device) is
  // refused before SQLite opens it, so it never blocks. `warning` is set (and the reader still returned) when
  // the store lacks the readers' indexes.
  static std::unique_ptr<StoreReader> open(const std::string& url, const std::string& password, std::string& error,
                                           std::string& warning);

  const std::string& url() const { return url_; }  // password redacted
  int schema_version() const { return version_; }
  bool indexed() const { return indexed_; }
  std::string dialect() const { return db_->dialect(); }

  // One page of the list and the number of verdicts the filter matches.
  bool list(const VerdictFilter& filter, const VerdictPage& page, std::vector<VerdictSummary>& rows, int64_t& total,
            std::string& error);
  // The verdict `id`; `found` is false when there is none.
  bool verdict(int64_t id, VerdictDetail& out, bool& found, std::string& error);
  // Every verdict of the workload of verdict `id` except `id` itself, newest first.
  bool related(int64_t id, std::vector<RelatedVerdict>& out, std::string& error);
  bool facets(StoreFacets& out, std::string& error);
  // Verdicts with end in [from, before), counted per `bucket_ns` bucket
  // (buckets start at multiples of bucket_ns since the epoch, UTC).
  bool outcomes(int64_t from_ns, int64_t before_ns, int64_t bucket_ns, std::vector<OutcomeCount>& out,
                std::string& error);
  // Nodes named culprit of at least `min_attempts` attempts (by attributed
  // verdicts whose domain is one of `domains`; empty: any) with end in
  // [from, before), most often first (then by name), at most `limit` (-1:
  // all). Causes: (domain/sub_domain, attempts), most first.
  bool offenders(int64_t from_ns, int64_t before_ns, int64_t min_attempts, int64_t limit,
                 const std::vector<std::string>& domains, std::vector<Offender>& out, std::string& error);

  // The query plan of the list's page query for `filter` (SQLite's EXPLAIN
  // QUERY PLAN, PostgreSQL's EXPLAIN), one line per step: for tests.
  bool explain_list(const VerdictFilter& filter, const VerdictPage& page, std::vector<std::string>& plan,
                    std::string& error);

 private:
  StoreReader() = default;
  std::string list_hint(const VerdictFilter& filter, const VerdictPage& page) const;
  std::unique_ptr<SqlConnection> db_;
  std::string url_;
  int version_ = 0;
  bool indexed_ = false;  // the readers' indexes are there
  bool bytewise_ = true;  // text compares bytewise (SQLite; PostgreSQL under the C collation)
};

}  // namespace culprit::blueprint
