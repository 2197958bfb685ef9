#include "blueprint/store/work_queue.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "blueprint/attempt_codec.h"

namespace culprit::blueprint {

namespace {

// Leases are on the database's clock, not the replicas': replicas whose
// clocks disagree still agree on when a lease expired.
constexpr const char* kNow = "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000000 AS BIGINT)";

// The discovery lock's key (pg_try_advisory_lock); the migration lock is
// 7411390219 (store.cpp).
constexpr int64_t kDiscoveryLock = 7411390220;

std::string with_now(std::string sql) {
  for (size_t i = sql.find("{now}"); i != std::string::npos; i = sql.find("{now}", i)) sql.replace(i, 5, kNow);
  return sql;
}

int64_t to_int(const std::optional<std::string>& v) { return v && !v->empty() ? std::stoll(*v) : 0; }

}  // namespace

std::unique_ptr<WorkQueue> WorkQueue::open(const std::string& url, const std::string& password, const std::string& worker,
                                           int64_t lease_ns, std::string& error) {
  std::unique_ptr<WorkQueue> q(new WorkQueue());
  q->worker_ = worker;
  q->lease_ns_ = lease_ns;
  q->db_ = open_sql(url, password, false, error);
  if (!q->db_) return nullptr;
  if (q->db_->dialect() != "postgresql") {
    error = "the shared work queue needs a PostgreSQL store (--store postgresql://...); SQLite serves one process";
    return nullptr;
  }
  q->beat_db_ = open_sql(url, password, false, error);
  if (!q->beat_db_) return nullptr;
  return q;
}

WorkQueue::~WorkQueue() { stop_heartbeat(); }

bool WorkQueue::enqueue(const std::vector<const Attempt*>& attempts, const std::string& discovered_by, int64_t& added,
                        std::string& error) {
  added = 0;
  if (attempts.empty()) return true;
  if (!db_->exec("BEGIN", error)) return false;
  static const std::string sql = with_now(
      "INSERT INTO work_queue (attempt_key, discovered_by, end_ns, attempt_json, state, owner, lease_until_ns, claims, "
      "not_before_ns, enqueued_ns, finished_ns, last_error) VALUES (?, ?, ?, ?, 'queued', '', 0, 0, 0, {now}, NULL, '') "
      "ON CONFLICT (attempt_key) DO UPDATE SET state = 'queued', attempt_json = excluded.attempt_json, "
      "discovered_by = excluded.discovered_by, not_before_ns = 0, owner = '', finished_ns = NULL "
      "WHERE work_queue.state = 'failed'");
  for (const Attempt* a : attempts) {
    std::vector<SqlValue> params{a->key, discovered_by, nullptr, attempt_to_json(*a).dump()};
    if (a->context.end) params[2] = *a->context.end;
    if (!db_->query(sql, params, nullptr, error)) {
      std::string e;
      db_->exec("ROLLBACK", e);
      return false;
    }
    added += db_->changes();
  }
  return db_->exec("COMMIT", error);
}

bool WorkQueue::try_lock_discovery(bool& taken, std::string& error) {
  std::vector<SqlRow> rows;
  if (!db_->query(fmt::format("SELECT pg_try_advisory_lock({})", kDiscoveryLock), {}, &rows, error)) return false;
  taken = !rows.empty() && rows[0][0] && *rows[0][0] == "t";
  return true;
}

bool WorkQueue::unlock_discovery(std::string& error) {
  return db_->exec(fmt::format("SELECT pg_advisory_unlock({})", kDiscoveryLock), error);
}

bool WorkQueue::claim(size_t n, std::vector<QueuedAttempt>& out, std::vector<std::string>& refused, std::string& error) {
  out.clear();
  refused.clear();
  if (n == 0) return true;
  // One statement: the inner SELECT locks the rows it picks and skips those
  // another replica is claiming at this instant; the UPDATE leases them.
  static const std::string sql = with_now(
      "UPDATE work_queue SET state = 'leased', owner = ?, lease_until_ns = {now} + ?, claims = claims + 1 "
      "WHERE id IN (SELECT id FROM work_queue WHERE (state = 'queued' AND not_before_ns <= {now}) "
      "OR (state = 'leased' AND lease_until_ns < {now}) ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED) "
      "RETURNING id, attempt_key, discovered_by, attempt_json, claims, enqueued_ns");
  std::vector<SqlRow> rows;
  if (!db_->query(sql, {worker_, lease_ns_, static_cast<int64_t>(n)}, &rows, error)) return false;
  // RETURNING follows no order: the queue's order is the id's.
  std::sort(rows.begin(), rows.end(), [](const SqlRow& a, const SqlRow& b) { return to_int(a[0]) < to_int(b[0]); });
  for (const auto& r : rows) {
    QueuedAttempt q;
    std::string why;
    const std::string key = r[1].value_or("");
    if (!attempt_from_json(r[3].value_or(""), q.attempt, why)) {
      bool ours = false;
      if (!finish(key, "failed", why, 0, ours, error)) return false;
      refused.push_back(fmt::format("{}: {}", key, why));
      continue;
    }
    q.discovered_by = r[2].value_or("");
    q.claims = to_int(r[4]);
    q.enqueued_ns = to_int(r[5]);
    out.push_back(std::move(q));
  }
  return true;
}

bool WorkQueue::finish(const std::string& key, const std::string& state, const std::string& message,
                       int64_t retry_after_ns, bool& still_ours, std::string& error) {
  static const std::string done_sql = with_now(
      "UPDATE work_queue SET state = ?, owner = '', lease_until_ns = 0, finished_ns = {now}, last_error = ? "
      "WHERE attempt_key = ? AND owner = ? AND state = 'leased'");
  static const std::string retry_sql = with_now(
      "UPDATE work_queue SET state = 'queued', owner = '', lease_until_ns = 0, not_before_ns = {now} + ?, last_error = ? "
      "WHERE attempt_key = ? AND owner = ? AND state = 'leased'");
  bool ok = retry_after_ns > 0 ? db_->query(retry_sql, {retry_after_ns, message, key, worker_}, nullptr, error)
                               : db_->query(done_sql, {state, message, key, worker_}, nullptr, error);
  if (!ok) return false;
  still_ours = db_->changes() > 0;
  return true;
}

bool WorkQueue::backlog(QueueBacklog& out, std::string& error) {
  out = QueueBacklog{};
  static const std::string sql = with_now(
      "SELECT COALESCE(SUM(CASE WHEN state = 'queued' AND not_before_ns <= {now} THEN 1 ELSE 0 END), 0), "
      "COALESCE(SUM(CASE WHEN state = 'queued' AND not_before_ns > {now} THEN 1 ELSE 0 END), 0), "
      "COALESCE(SUM(CASE WHEN state = 'leased' AND lease_until_ns >= {now} THEN 1 ELSE 0 END), 0), "
      "COALESCE(SUM(CASE WHEN state = 'leased' AND lease_until_ns < {now} THEN 1 ELSE 0 END), 0), "
      // A bigint advisory key shows in pg_locks as its high and low halves.
      "(SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = ? AND objid = ? "
      "AND objsubid = 1 AND pid <> pg_backend_pid()) "
      "FROM work_queue WHERE state IN ('queued', 'leased')");
  std::vector<SqlRow> rows;
  if (!db_->query(sql, {static_cast<int64_t>(kDiscoveryLock >> 32), static_cast<int64_t>(kDiscoveryLock & 0xffffffffLL)}, &rows, error)) return false;
  if (rows.empty()) return true;
  out.discovering = to_int(rows[0][4]) > 0;
  out.ready = to_int(rows[0][0]);
  out.delayed = to_int(rows[0][1]);
  out.leased = to_int(rows[0][2]);
  out.expired = to_int(rows[0][3]);
  return true;
}

bool WorkQueue::prune(int64_t age_ns, int64_t& removed, std::string& error) {
  static const std::string sql =
      with_now("DELETE FROM work_queue WHERE state IN ('done', 'given_up') AND finished_ns < {now} - ?");
  if (!db_->query(sql, {age_ns}, nullptr, error)) return false;
  removed = db_->changes();
  return true;
}

void WorkQueue::start_heartbeat() {
  std::lock_guard<std::mutex> lock(mu_);
  if (beat_.joinable()) return;
  beat_stop_ = false;
  beat_ = std::thread([this] { heartbeat_loop(); });
}

void WorkQueue::stop_heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    beat_stop_ = true;
  }
  cv_.notify_all();
  if (beat_.joinable()) beat_.join();
}

std::string WorkQueue::heartbeat_error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return beat_error_;
}

void WorkQueue::heartbeat_loop() {
  static const std::string sql =
      with_now("UPDATE work_queue SET lease_until_ns = {now} + ? WHERE owner = ? AND state = 'leased'");
  const auto every = std::chrono::nanoseconds(std::max<int64_t>(lease_ns_ / 3, 1000000));
  std::unique_lock<std::mutex> lock(mu_);
  while (!beat_stop_) {
    if (cv_.wait_for(lock, every, [this] { return beat_stop_; })) break;
    lock.unlock();
    std::string e;
    bool ok = beat_db_->query(sql, {lease_ns_, worker_}, nullptr, e);
    lock.lock();
    beat_error_ = ok ? "" : e;
  }
}

}  // namespace culprit::blueprint
