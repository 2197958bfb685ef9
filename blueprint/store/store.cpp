#include "blueprint/store/store.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "runtime/json_input.h"
#include "base/vocabulary.h"
#include "base/limits.h"
#include "base/sha256.h"
#include "base/timestamp.h"

namespace culprit::blueprint {

using ojson = nlohmann::ordered_json;

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Migration {
  int version;
  const char* description;
  const char* sql;  // `{id}` is the dialect's auto-increment primary key
};

// Never edit a published migration: add the next one.
const Migration kMigrations[] = {
    {1, "workloads, attempts, verdicts, symptoms, evidence, coverage, catalogs, watch state, runs", R"SQL(
CREATE TABLE catalogs (
  id {id},
  name TEXT NOT NULL,
  version TEXT NOT NULL,
  digest TEXT NOT NULL UNIQUE
);
CREATE TABLE workloads (
  id {id},
  scheduler TEXT NOT NULL,
  cluster TEXT NOT NULL,
  workload_id TEXT NOT NULL,
  name TEXT NOT NULL,
  user_name TEXT NOT NULL,
  partition_name TEXT NOT NULL,
  UNIQUE (scheduler, cluster, workload_id)
);
CREATE TABLE attempts (
  id {id},
  workload_ref BIGINT NOT NULL REFERENCES workloads (id),
  attempt_key TEXT NOT NULL UNIQUE,
  attempt_no INTEGER NOT NULL,
  state TEXT NOT NULL,
  exit_code BIGINT,
  submit_ns BIGINT,
  start_ns BIGINT,
  end_ns BIGINT,
  nodes TEXT NOT NULL,
  node_count INTEGER NOT NULL,
  steps TEXT NOT NULL,
  discovered_by TEXT NOT NULL,
  status TEXT NOT NULL,
  last_error TEXT NOT NULL,
  failures INTEGER NOT NULL,
  updated_ns BIGINT NOT NULL
);
CREATE INDEX attempts_workload ON attempts (workload_ref);
CREATE INDEX attempts_status ON attempts (status, end_ns);
CREATE TABLE attempt_nodes (
  attempt_ref BIGINT NOT NULL REFERENCES attempts (id),
  node TEXT NOT NULL,
  PRIMARY KEY (attempt_ref, node)
);
CREATE INDEX attempt_nodes_node ON attempt_nodes (node, attempt_ref);
CREATE TABLE verdicts (
  id {id},
  attempt_ref BIGINT NOT NULL REFERENCES attempts (id),
  catalog_ref BIGINT NOT NULL REFERENCES catalogs (id),
  scheduler TEXT NOT NULL,
  cluster TEXT NOT NULL,
  workload_id TEXT NOT NULL,
  state TEXT NOT NULL,
  start_ns BIGINT,
  end_ns BIGINT,
  node_count INTEGER NOT NULL,
  status TEXT NOT NULL,
  domain TEXT NOT NULL,
  sub_domain TEXT NOT NULL,
  culprit_nodes TEXT NOT NULL,
  root_cause TEXT NOT NULL,
  root_cause_summary TEXT NOT NULL,
  evaluator TEXT NOT NULL,
  attributed_by TEXT NOT NULL,
  attributed_ns BIGINT NOT NULL,
  verdict_sha256 TEXT NOT NULL,
  verdict_json TEXT NOT NULL,
  UNIQUE (attempt_ref, catalog_ref)
);
CREATE INDEX verdicts_end ON verdicts (end_ns, id);
CREATE INDEX verdicts_status_end ON verdicts (status, end_ns);
CREATE INDEX verdicts_domain_end ON verdicts (domain, sub_domain, end_ns);
CREATE INDEX verdicts_scheduler_end ON verdicts (scheduler, end_ns);
CREATE INDEX verdicts_catalog_end ON verdicts (catalog_ref, end_ns);
CREATE INDEX verdicts_workload ON verdicts (workload_id);
CREATE TABLE verdict_culprits (
  verdict_ref BIGINT NOT NULL REFERENCES verdicts (id),
  node TEXT NOT NULL,
  domain TEXT NOT NULL,
  sub_domain TEXT NOT NULL,
  status TEXT NOT NULL,
  end_ns BIGINT,
  PRIMARY KEY (verdict_ref, node)
);
CREATE INDEX verdict_culprits_node_end ON verdict_culprits (node, end_ns);
CREATE INDEX verdict_culprits_end ON verdict_culprits (end_ns, node);
CREATE TABLE symptoms (
  verdict_ref BIGINT NOT NULL REFERENCES verdicts (id),
  symptom_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  node TEXT,
  control_plane INTEGER NOT NULL,
  state TEXT NOT NULL,
  rule TEXT NOT NULL,
  summary TEXT NOT NULL,
  priority BIGINT NOT NULL,
  first_ns BIGINT,
  last_ns BIGINT,
  count BIGINT NOT NULL,
  domain TEXT,
  sub_domain TEXT,
  changed_by_rule TEXT,
  changed_reason TEXT,
  changed_cause TEXT,
  evidence_total BIGINT NOT NULL,
  fields TEXT NOT NULL,
  PRIMARY KEY (verdict_ref, symptom_id)
);
CREATE INDEX symptoms_kind ON symptoms (kind, verdict_ref);
CREATE INDEX symptoms_node ON symptoms (node, verdict_ref);
CREATE TABLE evidence (
  verdict_ref BIGINT NOT NULL REFERENCES verdicts (id),
  symptom_id TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  host TEXT NOT NULL,
  source TEXT NOT NULL,
  file TEXT NOT NULL,
  line BIGINT NOT NULL,
  byte_offset BIGINT NOT NULL,
  ts_ns BIGINT,
  ts_origin TEXT,
  text TEXT NOT NULL,
  PRIMARY KEY (verdict_ref, symptom_id, ordinal)
);
CREATE TABLE coverage (
  verdict_ref BIGINT NOT NULL REFERENCES verdicts (id),
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  source TEXT NOT NULL,
  status TEXT NOT NULL,
  reason TEXT NOT NULL,
  nodes_expected INTEGER NOT NULL,
  nodes_covered INTEGER NOT NULL,
  nodes_missing TEXT NOT NULL,
  files BIGINT NOT NULL,
  bytes BIGINT NOT NULL,
  lines BIGINT NOT NULL,
  observations BIGINT NOT NULL,
  events BIGINT NOT NULL,
  errors TEXT NOT NULL,
  PRIMARY KEY (verdict_ref, kind, name, source)
);
CREATE TABLE watch_state (
  name TEXT PRIMARY KEY,
  value_ns BIGINT NOT NULL,
  updated_ns BIGINT NOT NULL
);
CREATE TABLE runs (
  id {id},
  mode TEXT NOT NULL,
  started_ns BIGINT NOT NULL,
  finished_ns BIGINT,
  discovered BIGINT NOT NULL,
  skipped BIGINT NOT NULL,
  attributed BIGINT NOT NULL,
  failed BIGINT NOT NULL,
  status TEXT NOT NULL
);
)SQL"},
    {2, "placements: pod -> node placement of Kubernetes workloads (culprit run --record-placement)", R"SQL(
CREATE TABLE placements (
  workload_uid TEXT NOT NULL,
  namespace TEXT NOT NULL,
  workload TEXT NOT NULL,
  admitted_ns BIGINT NOT NULL,
  pod TEXT NOT NULL,
  pod_uid TEXT NOT NULL,
  node TEXT NOT NULL,
  first_seen_ns BIGINT NOT NULL,
  last_seen_ns BIGINT NOT NULL,
  PRIMARY KEY (workload_uid, admitted_ns, pod_uid)
);
CREATE INDEX placements_workload ON placements (namespace, workload);
CREATE INDEX placements_node ON placements (node, admitted_ns);
)SQL"},
    {3, "recommendations: what each verdict recommended, what the policy decided and what was handed off (culprit run)", R"SQL(
CREATE TABLE recommendations (
  verdict_ref BIGINT NOT NULL REFERENCES verdicts (id),
  ordinal INTEGER NOT NULL,
  scope TEXT NOT NULL,
  node TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  rule TEXT NOT NULL,
  basis TEXT NOT NULL,
  reason TEXT NOT NULL,
  decision TEXT NOT NULL,
  decided_by TEXT NOT NULL,
  decision_reason TEXT NOT NULL,
  handoff TEXT NOT NULL,
  decided_ns BIGINT NOT NULL,
  PRIMARY KEY (verdict_ref, ordinal)
);
CREATE INDEX recommendations_node ON recommendations (node, decided_ns);
)SQL"},
    {4, "recommendations: stored with their verdict, hand-off pending until delivered (a killed run resumes it)", R"SQL(
ALTER TABLE recommendations ADD COLUMN record_id TEXT NOT NULL DEFAULT '';
ALTER TABLE recommendations ADD COLUMN document TEXT NOT NULL DEFAULT '';
ALTER TABLE recommendations ADD COLUMN owner TEXT NOT NULL DEFAULT '';
ALTER TABLE recommendations ADD COLUMN handoff_state TEXT NOT NULL DEFAULT 'done';
ALTER TABLE recommendations ADD COLUMN handed_ns BIGINT;
CREATE INDEX recommendations_pending ON recommendations (owner, verdict_ref, ordinal) WHERE handoff_state = 'pending';
)SQL"},
    {5, "work_queue: discovered attempts shared by the replicas of culprit run --queue (PostgreSQL)", R"SQL(
CREATE TABLE work_queue (
  id {id},
  attempt_key TEXT NOT NULL UNIQUE,
  discovered_by TEXT NOT NULL,
  end_ns BIGINT,
  attempt_json TEXT NOT NULL,
  state TEXT NOT NULL,
  owner TEXT NOT NULL,
  lease_until_ns BIGINT NOT NULL,
  claims INTEGER NOT NULL,
  not_before_ns BIGINT NOT NULL,
  enqueued_ns BIGINT NOT NULL,
  finished_ns BIGINT,
  last_error TEXT NOT NULL
);
CREATE INDEX work_queue_open ON work_queue (state, id);
)SQL"},
};

// Indexes that serve readers only (the dashboard's list and fleet view,
// docs/dashboard.md) are not migrations: every writer that opens a store
// creates those it lacks, so adding one changes no schema version, and a
// store written by an older culprit gains them at its next `culprit run`.
// One index ending in end_ns for each filter and sort key that version 1
// leaves without one (a domain alone, a sub_domain alone, the terminal
// state, the node count), and verdicts_list, which holds every filter and
// sort column, so that a page with several filters, or sorted on another
// column than the one it filters, is found in an index alone: verdicts rows
// carry the whole verdict JSON, and reading thousands of them to sort is
// what makes a list slow (measured in docs/dashboard.md); and one that
// answers the fleet view's repeat offenders from the index alone.
const char* kReaderIndexes = R"SQL(
CREATE INDEX IF NOT EXISTS verdicts_domain_only_end ON verdicts (domain, end_ns);
CREATE INDEX IF NOT EXISTS verdicts_sub_domain_end ON verdicts (sub_domain, end_ns);
CREATE INDEX IF NOT EXISTS verdicts_state_end ON verdicts (state, end_ns);
CREATE INDEX IF NOT EXISTS verdicts_node_count_end ON verdicts (node_count, end_ns);
CREATE INDEX IF NOT EXISTS verdicts_list ON verdicts (end_ns, status, domain, sub_domain, scheduler, catalog_ref, state,
                                                      node_count, workload_id, attempt_ref);
CREATE INDEX IF NOT EXISTS verdict_culprits_fleet ON verdict_culprits (status, end_ns, node, domain, sub_domain);
)SQL";

std::string dialect_sql(const std::string& sql, const std::string& dialect) {
  std::string id = dialect == "sqlite" ? "INTEGER PRIMARY KEY" : "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY";
  std::string out = sql;
  for (size_t i = out.find("{id}"); i != std::string::npos; i = out.find("{id}", i)) out.replace(i, 4, id);
  return out;
}

SqlValue opt_int(const std::optional<int64_t>& v) { return v ? SqlValue(*v) : SqlValue(nullptr); }
SqlValue json_time(const ojson& j) {
  if (!j.is_string()) return nullptr;
  auto t = parse_rfc3339(j.get<std::string>());
  return t ? SqlValue(*t) : SqlValue(nullptr);
}
SqlValue json_str(const ojson& j) { return j.is_string() ? SqlValue(j.get<std::string>()) : SqlValue(nullptr); }
std::string join(const ojson& arr, const char* sep) {
  std::string out;
  if (!arr.is_array()) return out;
  for (const auto& x : arr) {
    if (!out.empty()) out += sep;
    out += x.is_string() ? x.get<std::string>() : x.dump();
  }
  return out;
}
int64_t json_int(const ojson& j, const char* key) {
  return j.contains(key) && j[key].is_number_integer() ? j[key].get<int64_t>() : 0;
}

// Rolls back unless committed.
class Transaction {
 public:
  Transaction(SqlConnection& db, bool immediate) : db_(db) {
    std::string e;
    ok_ = db_.exec(db_.dialect() == "sqlite" && immediate ? "BEGIN IMMEDIATE" : "BEGIN", e);
    if (!ok_) error_ = e;
  }
  ~Transaction() {
    std::string e;
    if (ok_ && !done_) db_.exec("ROLLBACK", e);
  }
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  bool commit(std::string& e) {
    done_ = true;
    return db_.exec("COMMIT", e);
  }

 private:
  SqlConnection& db_;
  bool ok_ = false, done_ = false;
  std::string error_;
};

}  // namespace

std::unique_ptr<Store> Store::open(const std::string& url, const std::string& password, std::string& error) {
  std::unique_ptr<Store> s(new Store());
  s->url_ = redact_url(url);
  s->db_ = open_sql(url, password, false, error);
  if (!s->db_) return nullptr;
  if (!s->migrate(error)) {
    error = fmt::format("store {}: {}", s->url_, error);
    return nullptr;
  }
  return s;
}

bool Store::migrate(std::string& error) {
  SqlConnection& db = *db_;
  bool pg = db.dialect() == "postgresql";
  // One migrator at a time, across processes.
  if (pg && !db.exec("SELECT pg_advisory_lock(7411390219)", error)) return false;
  struct Unlock {
    SqlConnection& db;
    bool pg;
    ~Unlock() {
      std::string e;
      if (pg) db.exec("SELECT pg_advisory_unlock(7411390219)", e);
    }
  } unlock{db, pg};
  if (!db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, description TEXT NOT NULL, "
               "applied_ns BIGINT NOT NULL)",
               error))
    return false;
  std::vector<SqlRow> rows;
  if (!db.query("SELECT COALESCE(MAX(version), 0) FROM schema_version", {}, &rows, error)) return false;
  int have = rows.empty() || !rows[0][0] ? 0 : std::stoi(*rows[0][0]);
  if (have > kStoreSchemaVersion) {
    error = fmt::format("its schema is version {}, newer than this culprit writes ({}); upgrade culprit", have,
                        kStoreSchemaVersion);
    return false;
  }
  for (const auto& m : kMigrations) {
    if (m.version <= have) continue;
    Transaction tx(db, true);
    if (!tx.ok()) {
      error = tx.error();
      return false;
    }
    // Another process may have applied it between our read and our lock (SQLite).
    rows.clear();
    if (!db.query("SELECT COUNT(*) FROM schema_version WHERE version = ?", {int64_t{m.version}}, &rows, error)) return false;
    if (!rows.empty() && rows[0][0] && *rows[0][0] != "0") continue;
    if (!db.exec(dialect_sql(m.sql, db.dialect()), error)) {
      error = fmt::format("migration {} failed: {}", m.version, error);
      return false;
    }
    if (!db.query("INSERT INTO schema_version (version, description, applied_ns) VALUES (?, ?, ?)",
                  {int64_t{m.version}, std::string(m.description), now_ns()}, nullptr, error))
      return false;
    if (!tx.commit(error)) return false;
  }
  {
    Transaction tx(db, true);
    if (!tx.ok()) {
      error = tx.error();
      return false;
    }
    if (!db.exec(kReaderIndexes, error) || !tx.commit(error)) {
      error = "creating the readers' indexes: " + error;
      return false;
    }
  }
  version_ = kStoreSchemaVersion;
  return true;
}

bool Store::attributed(const std::string& key, bool& yes, std::string& error) {
  std::vector<SqlRow> rows;
  if (!db_->query("SELECT COUNT(*) FROM verdicts v JOIN attempts a ON a.id = v.attempt_ref WHERE a.attempt_key = ?",
                  {key}, &rows, error))
    return false;
  yes = !rows.empty() && rows[0][0] && *rows[0][0] != "0";
  return true;
}

bool Store::upsert_attempt(const Attempt& a, const std::string& discovered_by, const std::string& status,
                           const std::string& last_error, int64_t& attempt_id, std::string& error, bool count_failure) {
  SqlConnection& db = *db_;
  std::vector<SqlRow> rows;
  if (!db.query("INSERT INTO workloads (scheduler, cluster, workload_id, name, user_name, partition_name) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (scheduler, cluster, workload_id) DO NOTHING",
                {a.context.scheduler, a.cluster, a.context.workload_id, a.name, a.user, a.partition}, nullptr, error))
    return false;
  if (!db.query("SELECT id FROM workloads WHERE scheduler = ? AND cluster = ? AND workload_id = ?",
                {a.context.scheduler, a.cluster, a.context.workload_id}, &rows, error))
    return false;
  if (rows.empty() || !rows[0][0]) {
    error = "workload row vanished";
    return false;
  }
  int64_t workload = std::stoll(*rows[0][0]);
  ojson steps = ojson::array();
  for (const auto& s : a.steps) {
    ojson j;
    j["id"] = s.id;
    j["name"] = s.name;
    j["state"] = s.state;
    j["exit_code"] = s.exit_code ? ojson(*s.exit_code) : ojson(nullptr);
    j["signal"] = s.signal ? ojson(*s.signal) : ojson(nullptr);
    j["start"] = s.start ? ojson(format_rfc3339(*s.start)) : ojson(nullptr);
    j["end"] = s.end ? ojson(format_rfc3339(*s.end)) : ojson(nullptr);
    j["nodes"] = s.nodes;
    steps.push_back(j);
  }
  std::string nodes;
  for (const auto& n : a.context.nodes) nodes += (nodes.empty() ? "" : ",") + n;
  int64_t failures = status == "error" && count_failure ? 1 : 0;
  rows.clear();
  if (!db.query("INSERT INTO attempts (workload_ref, attempt_key, attempt_no, state, exit_code, submit_ns, start_ns, end_ns, "
                "nodes, node_count, steps, discovered_by, status, last_error, failures, updated_ns) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (attempt_key) DO UPDATE SET status = excluded.status, last_error = excluded.last_error, "
                "failures = attempts.failures + excluded.failures, updated_ns = excluded.updated_ns "
                "RETURNING id",
                {workload, a.key, int64_t{a.attempt}, a.context.terminal.state, opt_int(a.context.terminal.exit_code), opt_int(a.submit), opt_int(a.context.start),
                 opt_int(a.context.end), nodes, static_cast<int64_t>(a.context.nodes.size()), steps.dump(), discovered_by, status,
                 last_error, failures, now_ns()},
                &rows, error))
    return false;
  if (rows.empty() || !rows[0][0]) {
    error = "attempt row vanished";
    return false;
  }
  attempt_id = std::stoll(*rows[0][0]);
  for (const auto& n : a.context.nodes)
    if (!db.query("INSERT INTO attempt_nodes (attempt_ref, node) VALUES (?, ?) ON CONFLICT DO NOTHING", {attempt_id, n},
                  nullptr, error))
      return false;
  return true;
}

bool Store::record_failure(const Attempt& a, const std::string& discovered_by, const std::string& message,
                           std::string& error) {
  Transaction tx(*db_, true);
  if (!tx.ok()) {
    error = tx.error();
    return false;
  }
  bool already = false;
  if (!attributed(a.key, already, error)) return false;
  if (already) return tx.commit(error);  // never downgrade an attributed attempt
  int64_t id = 0;
  if (!upsert_attempt(a, discovered_by, "error", message, id, error)) return false;
  return tx.commit(error);
}

namespace {
const std::string kStartMark = "collection did not finish (start ";
const std::string kSharedSuffix = ", with others in flight)";
}  // namespace

bool Store::start_died(const std::string& key, bool& died, std::string& error) {
  died = false;
  std::vector<SqlRow> rows;
  if (!db_->query("SELECT status, last_error FROM attempts WHERE attempt_key = ?", {key}, &rows, error)) return false;
  died = !rows.empty() && rows[0][0] && *rows[0][0] == "error" && rows[0][1] && rows[0][1]->rfind(kStartMark, 0) == 0;
  return true;
}

bool Store::begin_attempt(const Attempt& a, const std::string& discovered_by, int64_t run_id, AttemptStart& out,
                          std::string& error, bool shared) {
  out = AttemptStart{};
  Transaction tx(*db_, true);
  if (!tx.ok()) {
    error = tx.error();
    return false;
  }
  if (!attributed(a.key, out.attributed, error)) return false;
  if (out.attributed) return tx.commit(error);
  std::vector<SqlRow> rows;
  if (!db_->query("SELECT status, last_error FROM attempts WHERE attempt_key = ?", {a.key}, &rows, error)) return false;
  std::string status = !rows.empty() && rows[0][0] ? *rows[0][0] : "";
  std::string last = !rows.empty() && rows[0][1] ? *rows[0][1] : "";
  const std::string& kMark = kStartMark;
  static const std::string kDied = "collection died ";
  if (status == "error" && last.rfind(kDied, 0) == 0) {
    out.given_up = true;
    out.message = last;
    return tx.commit(error);
  }
  if (status == "error" && last.rfind(kMark, 0) == 0) {
    long long k = 0, died_in = 0;
    if (std::sscanf(last.c_str() + kMark.size(), "%lld, run %lld", &k, &died_in) >= 1 && k > 0) out.died = k;
    else out.died = 1;
    // A start beside others in flight is not counted: it runs alone next.
    if (last.size() >= kSharedSuffix.size() && last.compare(last.size() - kSharedSuffix.size(), kSharedSuffix.size(), kSharedSuffix) == 0) {
      out.died -= 1;
      out.died_shared = true;
    }
    // The poll that was collecting it ended with the process: close its row.
    if (died_in > 0 && died_in != run_id &&
        !db_->query("UPDATE runs SET finished_ns = ?, status = 'died' WHERE id = ? AND status = 'running'",
                    {now_ns(), static_cast<int64_t>(died_in)}, nullptr, error))
      return false;
  }
  int64_t id = 0;
  if (out.died >= static_cast<int64_t>(limits::kCollectionStarts)) {
    out.given_up = out.given_up_now = true;
    out.message = fmt::format("collection died {} times; not tried again ({})", out.died,
                              limits::exceeded("collection_starts", limits::kCollectionStarts,
                                               "the process ended during each start of this attempt"));
    if (!upsert_attempt(a, discovered_by, "error", out.message, id, error)) return false;
    return tx.commit(error);
  }
  out.proceed = true;
  out.message = fmt::format("{}{}, run {}{}", kMark, out.died + 1, run_id, shared ? kSharedSuffix : std::string(")"));
  if (!upsert_attempt(a, discovered_by, "error", out.message, id, error, false)) return false;
  return tx.commit(error);
}

bool Store::record_verdict(const Attempt& a, const std::string& discovered_by, const ojson& v,
                           const std::string& attributed_by, bool& inserted, std::string& error, int64_t* verdict_id,
                           const RecommendationDecider& decide, std::vector<RecommendationRecord>* recommendations) {
  inserted = false;
  SqlConnection& db = *db_;
  Transaction tx(db, true);
  if (!tx.ok()) {
    error = tx.error();
    return false;
  }
  int64_t attempt_id = 0;
  if (!upsert_attempt(a, discovered_by, vocab::status::kAttributed, "", attempt_id, error)) return false;

  const ojson& cat = v["engine"]["catalog"];
  std::string digest = string_member_or(cat, "digest");
  std::vector<SqlRow> rows;
  if (!db.query("INSERT INTO catalogs (name, version, digest) VALUES (?, ?, ?) ON CONFLICT (digest) DO NOTHING",
                {string_member_or(cat, "name"), string_member_or(cat, "version"), digest}, nullptr, error))
    return false;
  if (!db.query("SELECT id FROM catalogs WHERE digest = ?", {digest}, &rows, error) || rows.empty() || !rows[0][0]) {
    if (error.empty()) error = "catalog row vanished";
    return false;
  }
  int64_t catalog_id = std::stoll(*rows[0][0]);

  std::string text = v.dump(2) + "\n";
  std::string status = string_member_or(v, "status"), domain = string_member_or(v, "domain"), sub = string_member_or(v, "sub_domain");
  std::string root, summary;
  if (v["root_cause"].is_object()) {
    root = string_member_or(v["root_cause"], "symptom");
    summary = string_member_or(v["root_cause"], "summary");
  }
  rows.clear();
  if (!db.query("INSERT INTO verdicts (attempt_ref, catalog_ref, scheduler, cluster, workload_id, state, start_ns, end_ns, "
                "node_count, status, domain, sub_domain, culprit_nodes, root_cause, root_cause_summary, evaluator, "
                "attributed_by, attributed_ns, verdict_sha256, verdict_json) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (attempt_ref, catalog_ref) DO NOTHING RETURNING id",
                {attempt_id, catalog_id, a.context.scheduler, a.cluster, a.context.workload_id, a.context.terminal.state, opt_int(a.context.start), opt_int(a.context.end),
                 static_cast<int64_t>(a.context.nodes.size()), status, domain, sub, join(v["culprit_nodes"], ","), root, summary,
                 string_member_or(v["engine"], "evaluator"), attributed_by, now_ns(), "sha256:" + sha256_hex(text), text},
                &rows, error))
    return false;
  if (rows.empty()) return tx.commit(error);  // stored before (by this or another blueprint)
  int64_t vid = std::stoll(*rows[0][0]);
  if (verdict_id) *verdict_id = vid;

  for (const auto& n : v["culprit_nodes"])
    if (!db.query("INSERT INTO verdict_culprits (verdict_ref, node, domain, sub_domain, status, end_ns) VALUES (?, ?, ?, ?, ?, ?)",
                  {vid, n.get<std::string>(), domain, sub, status, opt_int(a.context.end)}, nullptr, error))
      return false;
  for (const auto& s : v["symptoms"]) {
    std::string sid = string_member_or(s, "id");
    const ojson& cls = s["classification"];
    const ojson& change = s["demoted_by"].is_object() ? s["demoted_by"] : s["scrubbed_by"];
    if (!db.query("INSERT INTO symptoms (verdict_ref, symptom_id, kind, node, control_plane, state, rule, summary, priority, "
                  "first_ns, last_ns, count, domain, sub_domain, changed_by_rule, changed_reason, changed_cause, "
                  "evidence_total, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  {vid, sid, string_member_or(s, "kind"), json_str(s["node"]), int64_t{s["control_plane"].get<bool>() ? 1 : 0},
                   string_member_or(s, "state"), string_member_or(s, "rule"), string_member_or(s, "summary"), json_int(s, "priority"),
                   json_time(s["first"]), json_time(s["last"]), json_int(s, "count"),
                   cls.is_object() ? json_str(cls["domain"]) : SqlValue(nullptr),
                   cls.is_object() ? json_str(cls["sub_domain"]) : SqlValue(nullptr),
                   change.is_object() ? json_str(change["rule"]) : SqlValue(nullptr),
                   change.is_object() ? json_str(change["reason"]) : SqlValue(nullptr),
                   change.is_object() ? json_str(change["cause"]) : SqlValue(nullptr), json_int(s, "evidence_total"),
                   s["fields"].dump()},
                  nullptr, error))
      return false;
    int64_t ord = 0;
    for (const auto& e : s["evidence"])
      if (!db.query("INSERT INTO evidence (verdict_ref, symptom_id, ordinal, host, source, file, line, byte_offset, ts_ns, "
                    "ts_origin, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    {vid, sid, ord++, string_member_or(e, "host"), string_member_or(e, "source"), string_member_or(e, "file"),
                     json_int(e, "line"), json_int(e, "offset"), json_time(e["ts"]), json_str(e["ts_origin"]),
                     string_member_or(e, "text")},
                    nullptr, error))
        return false;
  }
  const ojson& cov = v["coverage"];
  if (cov.contains("sources"))
    for (auto it = cov["sources"].begin(); it != cov["sources"].end(); ++it) {
      const ojson& sc = it.value();
      int64_t expected = json_int(sc, "nodes_expected");
      int64_t with = sc["nodes_with_data"].is_array() ? static_cast<int64_t>(sc["nodes_with_data"].size()) : 0;
      std::string st = with == expected ? "ok" : with == 0 ? "missing" : "partial";
      if (!db.query("INSERT INTO coverage (verdict_ref, kind, name, source, status, reason, nodes_expected, nodes_covered, "
                    "nodes_missing, files, bytes, lines, observations, events, errors) "
                    "VALUES (?, 'source', ?, ?, ?, '', ?, ?, ?, ?, ?, ?, 0, ?, ?)",
                    {vid, it.key(), it.key(), st, expected, with, join(sc["nodes_missing"], ","), json_int(sc, "files"),
                     json_int(sc, "bytes_read"), json_int(sc, "lines_read"), json_int(sc, "events"), join(sc["errors"], "\n")},
                    nullptr, error))
        return false;
    }
  if (cov.contains("collectors"))
    for (const auto& c : cov["collectors"]) {
      if (!db.query("INSERT INTO coverage (verdict_ref, kind, name, source, status, reason, nodes_expected, nodes_covered, "
                    "nodes_missing, files, bytes, lines, observations, events, errors) "
                    "VALUES (?, 'collector', ?, ?, ?, ?, ?, ?, '', 0, ?, 0, ?, 0, ?) ON CONFLICT DO NOTHING",
                    {vid, string_member_or(c, "collector"), string_member_or(c, "source"), string_member_or(c, "status"),
                     string_member_or(c, "reason"), static_cast<int64_t>(c["nodes_expected"].size()),
                     static_cast<int64_t>(c["nodes_covered"].size()), json_int(c, "bytes"), json_int(c, "observations"),
                     join(c["errors"], "\n")},
                    nullptr, error))
        return false;
    }
  if (decide) {
    // Inside the transaction: the policy's history counts this verdict, and
    // the recommendations are stored with it or not at all.
    std::vector<RecommendationRecord> recs;
    if (!decide(*this, recs, error)) return false;
    int64_t ord = 0, now = now_ns();
    for (auto& r : recs) {
      r.ordinal = ord++;
      r.state = "pending";
      r.handoff.clear();
      if (!db.query("INSERT INTO recommendations (verdict_ref, ordinal, scope, node, action, target, rule, basis, reason, "
                    "decision, decided_by, decision_reason, handoff, decided_ns, record_id, document, owner, handoff_state) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, '', ?, ?, ?, ?, 'pending')",
                    {vid, r.ordinal, r.scope, r.node, r.action, r.target_json, r.rule, r.basis, r.reason, r.decision,
                     r.decided_by, r.decision_reason, now, r.id, r.document, r.owner},
                    nullptr, error))
        return false;
    }
    if (recommendations) *recommendations = std::move(recs);
  }
  if (!tx.commit(error)) return false;
  inserted = true;
  return true;
}

bool Store::cursor(const std::string& name, std::optional<int64_t>& value, std::string& error) {
  std::vector<SqlRow> rows;
  if (!db_->query("SELECT value_ns FROM watch_state WHERE name = ?", {name}, &rows, error)) return false;
  value.reset();
  if (!rows.empty() && rows[0][0]) value = std::stoll(*rows[0][0]);
  return true;
}

bool Store::set_cursor(const std::string& name, int64_t value, std::string& error) {
  return db_->query("INSERT INTO watch_state (name, value_ns, updated_ns) VALUES (?, ?, ?) "
                    "ON CONFLICT (name) DO UPDATE SET value_ns = excluded.value_ns, updated_ns = excluded.updated_ns",
                    {name, value, now_ns()}, nullptr, error);
}

bool Store::begin_run(const std::string& mode, int64_t& run_id, std::string& error) {
  std::vector<SqlRow> rows;
  if (!db_->query("INSERT INTO runs (mode, started_ns, discovered, skipped, attributed, failed, status) "
                  "VALUES (?, ?, 0, 0, 0, 0, 'running') RETURNING id",
                  {mode, now_ns()}, &rows, error))
    return false;
  run_id = rows.empty() || !rows[0][0] ? 0 : std::stoll(*rows[0][0]);
  return true;
}

bool Store::finish_run(int64_t run_id, const RunCounts& c, const std::string& status, std::string& error) {
  return db_->query("UPDATE runs SET finished_ns = ?, discovered = ?, skipped = ?, attributed = ?, failed = ?, status = ? "
                    "WHERE id = ?",
                    {now_ns(), c.discovered, c.skipped, c.attributed, c.failed, status, run_id}, nullptr, error);
}

bool Store::record_placements(const std::vector<PlacementRecord>& records, std::string& error) {
  if (records.empty()) return true;
  Transaction tx(*db_, true);
  if (!tx.ok()) {
    error = tx.error();
    return false;
  }
  for (const auto& r : records)
    if (!db_->query("INSERT INTO placements (workload_uid, namespace, workload, admitted_ns, pod, pod_uid, node, first_seen_ns, "
                    "last_seen_ns) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (workload_uid, admitted_ns, pod_uid) DO UPDATE "
                    "SET last_seen_ns = excluded.last_seen_ns, node = excluded.node",
                    {r.workload_uid, r.namespace_, r.workload, r.admitted_ns, r.pod, r.pod_uid, r.node, r.first_seen_ns,
                     r.last_seen_ns},
                    nullptr, error))
      return false;
  return tx.commit(error);
}

bool Store::placements(const std::string& workload_uid, std::vector<PlacementRecord>& out, std::string& error) {
  std::vector<SqlRow> rows;
  out.clear();
  if (!db_->query("SELECT workload_uid, namespace, workload, admitted_ns, pod, pod_uid, node, first_seen_ns, last_seen_ns "
                  "FROM placements WHERE workload_uid = ? ORDER BY admitted_ns, pod, pod_uid",
                  {workload_uid}, &rows, error))
    return false;
  for (const auto& row : rows) {
    PlacementRecord r;
    auto str = [&](size_t i) { return row[i] ? *row[i] : std::string(); };
    auto num = [&](size_t i) { return row[i] ? std::stoll(*row[i]) : int64_t{0}; };
    r.workload_uid = str(0);
    r.namespace_ = str(1);
    r.workload = str(2);
    r.admitted_ns = num(3);
    r.pod = str(4);
    r.pod_uid = str(5);
    r.node = str(6);
    r.first_seen_ns = num(7);
    r.last_seen_ns = num(8);
    out.push_back(std::move(r));
  }
  return true;
}

bool Store::culprit_attempts(const std::string& node, const std::string& domain, const std::string& sub_domain,
                             int64_t from_ns, int64_t until_ns, int64_t& count, std::string& error) {
  // Distinct attempts: a workload attributed by two catalogs is one fault.
  std::string sql =
      "SELECT COUNT(DISTINCT v.attempt_ref) FROM verdict_culprits c JOIN verdicts v ON v.id = c.verdict_ref "
      "WHERE c.node = ? AND c.status = 'attributed' AND c.end_ns >= ? AND c.end_ns <= ?";
  std::vector<SqlValue> args = {node, from_ns, until_ns};
  if (!domain.empty()) {
    sql += " AND c.domain = ?";
    args.push_back(domain);
  }
  if (!sub_domain.empty() && sub_domain != "*") {
    if (sub_domain.size() > 2 && sub_domain.compare(sub_domain.size() - 2, 2, ".*") == 0) {
      std::string stem = sub_domain.substr(0, sub_domain.size() - 2);
      // '_' of sub_domains is a LIKE wildcard: escape it (and '%', '\\').
      std::string like;
      for (char ch : stem) {
        if (ch == '_' || ch == '%' || ch == '\\') like += '\\';
        like += ch;
      }
      sql += " AND (c.sub_domain = ? OR c.sub_domain LIKE ? ESCAPE '\\')";
      args.push_back(stem);
      args.push_back(like + ".%");
    } else {
      sql += " AND c.sub_domain = ?";
      args.push_back(sub_domain);
    }
  }
  std::vector<SqlRow> rows;
  if (!db_->query(sql, args, &rows, error)) return false;
  count = rows.empty() || !rows[0][0] ? 0 : std::stoll(*rows[0][0]);
  return true;
}

bool Store::finish_handoff(int64_t verdict_id, int64_t ordinal, const std::string& handoff, std::string& error) {
  return db_->query("UPDATE recommendations SET handoff = ?, handoff_state = 'done', handed_ns = ? "
                    "WHERE verdict_ref = ? AND ordinal = ?",
                    {handoff, now_ns(), verdict_id, ordinal}, nullptr, error);
}

bool Store::pending_handoffs(const std::string& owner, std::vector<PendingHandoff>& out, std::string& error) {
  out.clear();
  std::vector<SqlRow> rows;
  if (!db_->query("SELECT verdict_ref, ordinal, record_id, scope, node, action, target, rule, basis, reason, decision, "
                  "decided_by, decision_reason, document, owner FROM recommendations "
                  "WHERE handoff_state = 'pending' AND owner = ? ORDER BY verdict_ref, ordinal",
                  {owner}, &rows, error))
    return false;
  for (const auto& row : rows) {
    auto str = [&](size_t i) { return row[i] ? *row[i] : std::string(); };
    PendingHandoff p;
    p.verdict_id = row[0] ? std::stoll(*row[0]) : 0;
    RecommendationRecord& r = p.record;
    r.ordinal = row[1] ? std::stoll(*row[1]) : 0;
    r.id = str(2);
    r.scope = str(3);
    r.node = str(4);
    r.action = str(5);
    r.target_json = str(6);
    r.rule = str(7);
    r.basis = str(8);
    r.reason = str(9);
    r.decision = str(10);
    r.decided_by = str(11);
    r.decision_reason = str(12);
    r.document = str(13);
    r.owner = str(14);
    r.state = "pending";
    out.push_back(std::move(p));
  }
  return true;
}

}  // namespace culprit::blueprint
