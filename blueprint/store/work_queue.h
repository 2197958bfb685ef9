// The shared work queue: how several `culprit run --queue` replicas split the
// attempts of one cluster between them through the PostgreSQL store they
// share (docs/blueprint.md, "Replicas").
//
// Each discovered attempt that is not attributed yet becomes one row of the
// store's `work_queue` table, holding the whole attempt
// (blueprint/attempt_codec.h), so that any replica can collect and attribute
// it, not only the one that discovered it. A replica claims rows with
// `SELECT ... FOR UPDATE SKIP LOCKED` (replicas claiming at once never wait
// on each other nor take the same row) and holds each under a lease: an
// owner and an expiry on the database's clock, renewed by a heartbeat
// thread every third of the lease. A replica that dies (SIGKILL, the OOM
// killer, a lost node) stops renewing; when its leases expire, any other
// replica claims those rows again and finishes them. What happens to an
// attempt a dead replica had started is the store's business
// (Store::begin_attempt: the start is charged, and an attempt that kills
// every replica that takes it is given up).
//
// Nothing is attributed twice: the store writes a verdict once per
// (attempt, catalog) whoever writes it, and hands off only a verdict it has
// just inserted; finishing a row checks the lease is still this replica's
// (a replica that lost its lease learns so and leaves the row to the new
// owner).
//
// Row states: queued (waiting; `not_before` delays a retry) -> leased ->
// done | failed (attribution failed; a later discovery queues it again) |
// given_up (it ended the process that took it limits::kCollectionStarts
// times). Discovery is run by one replica at a time: the one that takes the
// queue's discovery lock for that poll (a session advisory lock, released
// when the session ends, so a dead replica never holds it); the others see
// that it is held (QueueBacklog::discovering) and wait for its rows.
//
// PostgreSQL only: SQLite has neither SKIP LOCKED nor a server that outlives
// a process, and stays the single-process default.
//
// Thread-safety: the queue's methods are called from one thread (the run
// loop); its heartbeat thread uses its own connection.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "blueprint/attempt.h"
#include "blueprint/store/sql.h"

namespace culprit::blueprint {

struct QueuedAttempt {
  Attempt attempt;
  std::string discovered_by;  // the discovery that queued it (its name)
  int64_t claims = 0;         // times a replica claimed it, this claim included
  int64_t enqueued_ns = 0;    // when it was queued (the database's clock)
};

// How many rows are not finished, for a replica deciding whether to wait.
struct QueueBacklog {
  int64_t ready = 0;          // queued and due: claimable now
  int64_t delayed = 0;        // queued, to be retried later
  int64_t leased = 0;         // under a live lease (some replica works on them)
  int64_t expired = 0;        // under a lease that expired: claimable now
  bool discovering = false;   // another replica holds the discovery lock (more rows may come)
};

class WorkQueue {
 public:
  // Opens two connections to the store at `url` (one for the heartbeat).
  // `worker` names this replica in leases and messages; `lease_ns` is how long
  // a claim holds without renewal. Null with `error` when the store is not
  // PostgreSQL or cannot be reached.
  static std::unique_ptr<WorkQueue> open(const std::string& url, const std::string& password, const std::string& worker,
                                         int64_t lease_ns, std::string& error);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  const std::string& worker() const { return worker_; }
  int64_t lease_ns() const { return lease_ns_; }

  // Queues `attempts` (all discovered by `discovered_by`), in the order given;
  // an attempt already queued, leased or done is left as it is, a failed one
  // is queued again. `added`: rows queued by this call. One transaction.
  bool enqueue(const std::vector<const Attempt*>& attempts, const std::string& discovered_by, int64_t& added,
               std::string& error);

  // Takes the discovery lock if no other replica holds it (`taken`), or
  // releases it. Held by this session only; a dead replica's is released by
  // PostgreSQL.
  bool try_lock_discovery(bool& taken, std::string& error);
  bool unlock_discovery(std::string& error);

  // Claims up to `n` rows, oldest queued first: queued and due, or leased
  // under an expired lease. Each is leased to this replica from now on and
  // renewed by the heartbeat until finish(). Rows whose document cannot be
  // read are finished as failed here, with why, and reported in `refused`.
  bool claim(size_t n, std::vector<QueuedAttempt>& out, std::vector<std::string>& refused, std::string& error);

  // Ends this replica's lease on `key`: state "done", "failed" or "given_up";
  // `retry_after_ns` > 0 queues it again after that long instead (a failed
  // attempt while watching). `still_ours` is false when the lease had
  // expired and another replica had claimed the row: nothing is written.
  bool finish(const std::string& key, const std::string& state, const std::string& message, int64_t retry_after_ns,
              bool& still_ours, std::string& error);

  bool backlog(QueueBacklog& out, std::string& error);

  // Deletes the rows that finished (done, given_up) more than `age_ns` ago,
  // so the table holds the recent past, not every attempt ever: an attempt
  // discovered again after is skipped by the store (attributed) or given up
  // again by it (Store::begin_attempt), never attributed twice. `removed`:
  // rows deleted.
  bool prune(int64_t age_ns, int64_t& removed, std::string& error);

  // Starts and stops the heartbeat thread (stop also joins it).
  void start_heartbeat();
  void stop_heartbeat();
  // The last error of the heartbeat, "" when it renews fine.
  std::string heartbeat_error() const;

 private:
  WorkQueue() = default;
  void heartbeat_loop();

  std::unique_ptr<SqlConnection> db_, beat_db_;
  std::string worker_;
  int64_t lease_ns_ = 0;
  std::thread beat_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool beat_stop_ = false;
  std::string beat_error_;
};

}  // namespace culprit::blueprint
