// Workload sessions: evidence that arrives in pieces, attributed on demand.
//
// A session holds one workload's context and the observations posted so far,
// in arrival order. Memory is accounted per observation (its strings plus a
// fixed overhead) against two bounds: a per-session limit (exceeding it is
// 413: that workload sent too much) and a total budget shared by all sessions
// and by in-flight one-shot requests (exceeding it is 429: the service is
// full, retry later). The number of sessions is bounded too (429). Nothing is
// allocated for an observation before its bytes are accounted, so the bounds
// hold however many clients post at once.
//
// Sessions expire after an idle TTL (no request touched them); expire() is
// called by the service's reaper thread and also lazily on access.
//
// Thread-safety: every public method is safe to call from any thread. The
// store's mutex guards the map and the budget; each session has its own mutex
// so that attributing one workload (a scan, milliseconds to seconds) never
// blocks requests for another.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/model.h"
#include "runtime/observation.h"

namespace culprit::service {

using Clock = std::chrono::steady_clock;

// Bytes an observation is charged for: what holding it really costs, from
// the moment it is parsed until its attribution is done, so that the budget
// bounds the process's memory: its record (twice: a vector's growth leaves
// up to as much again unused, and doubles while it moves), the heap blocks
// of its strings as malloc rounds them (strings of 15 bytes or fewer live
// inside the record), and the per-line entries diagnose() builds to scan it
// (runtime/diagnose.cpp: the line, its number, time and offset, held twice
// while a stream is put in order).
size_t observation_cost(const Observation& o);
// The part of observation_cost() that does not depend on the strings.
size_t observation_overhead();

// A shared byte budget. reserve() never over-commits; release() returns bytes.
class MemoryBudget {
 public:
  explicit MemoryBudget(size_t limit) : limit_(limit) {}
  bool reserve(size_t n);
  void release(size_t n);
  size_t used() const { return used_.load(); }
  size_t limit() const { return limit_; }

 private:
  const size_t limit_;
  std::atomic<size_t> used_{0};
};

struct Session {
  std::string id;
  WorkloadContext context;
  std::string context_json;  // as posted (echoed by GET)
  std::mutex mu;             // guards everything below
  std::vector<Observation> observations;
  size_t bytes = 0;          // charged to the budget
  int64_t posts = 0, attributions = 0;
  Clock::time_point created, last_used;
  std::chrono::system_clock::time_point created_wall;
  bool closed = false;       // deleted or expired: refuse further use
};

struct SessionLimits {
  size_t max_sessions = 1000;
  size_t max_session_bytes = 256u << 20;
  std::chrono::seconds ttl{900};
};

class SessionStore {
 public:
  SessionStore(SessionLimits limits, MemoryBudget& budget) : limits_(limits), budget_(budget) {}
  ~SessionStore();

  enum class Status { Ok, NotFound, Conflict, TooManySessions, SessionFull, BudgetFull };

  // Creates a session; Conflict when an open session already has this
  // workload_id (`existing` is then its id).
  // `cost` is what the context is charged (the caller's estimate of what
  // it holds); the session's record is added to it.
  Status create(const WorkloadContext& ctx, const std::string& context_json, size_t cost, std::shared_ptr<Session>& out,
                std::string& existing);
  // The session, with its idle timer reset; null when unknown or expired.
  std::shared_ptr<Session> get(const std::string& id);
  bool remove(const std::string& id);
  // Appends all of `obs` or none. `cost` is what they were charged while
  // being parsed (a reservation on the budget made by the caller through
  // reserve()); on success it moves to the session, on failure the caller
  // still owns the reservation. Observations without a line number get their
  // 1-based ordinal in the session, so arrival order is kept.
  Status append(Session& s, std::vector<Observation>& obs, size_t cost);
  // For streaming parsers: may `more` bytes still fit this session (given
  // `pending` already parsed)?  SessionFull / BudgetFull otherwise.
  Status check_room(Session& s, size_t pending, size_t more);
  // Removes idle sessions; returns how many.
  size_t expire();
  size_t count() const;
  size_t bytes() const;
  const SessionLimits& limits() const { return limits_; }
  MemoryBudget& budget() { return budget_; }

 private:
  void drop_locked(std::map<std::string, std::shared_ptr<Session>>::iterator it);
  const SessionLimits limits_;
  MemoryBudget& budget_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
  std::map<std::string, std::string> by_workload_;  // workload_id -> session id
  std::atomic<size_t> bytes_{0};
};

// 128 random bits, hex: unguessable, so ids double as capabilities.
std::string new_session_id();

}  // namespace culprit::service
