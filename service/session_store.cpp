#include "service/session_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

namespace culprit::service {

namespace {

// What malloc gives a string's buffer (glibc: 8 bytes of header, 16-byte
// granules, 32 at least); nothing for strings kept inside the object.
size_t heap_block(const std::string& s) {
  if (s.capacity() <= 15) return 0;
  return std::max<size_t>(32, (s.capacity() + 1 + 8 + 15) / 16 * 16);
}

// diagnose()'s per-line stream entries: std::string + line + optional time
// + offset, in the stream and in its sorted copy, plus the sort index.
constexpr size_t kScanEntry = 2 * (sizeof(std::string) + 8 + 16 + 8) + 8;

}  // namespace

size_t observation_overhead() { return 2 * sizeof(Observation) + kScanEntry; }

size_t observation_cost(const Observation& o) {
  return 2 * sizeof(Observation) + heap_block(o.host) + heap_block(o.source) + heap_block(o.text) +
         heap_block(o.metric) + heap_block(o.labels) + heap_block(o.file) + kScanEntry;
}

bool MemoryBudget::reserve(size_t n) {
  size_t cur = used_.load();
  do {
    if (cur + n > limit_ || cur + n < cur) return false;
  } while (!used_.compare_exchange_weak(cur, cur + n));
  return true;
}

void MemoryBudget::release(size_t n) { used_.fetch_sub(n); }

std::string new_session_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  return fmt::format("{:016x}{:016x}", rng(), rng());
}

SessionStore::~SessionStore() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = sessions_.begin(); it != sessions_.end();) drop_locked(it++);
}

SessionStore::Status SessionStore::create(const WorkloadContext& ctx, const std::string& context_json, size_t cost,
                                          std::shared_ptr<Session>& out, std::string& existing) {
  expire();
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = by_workload_.find(ctx.workload_id); it != by_workload_.end()) {
    existing = it->second;
    return Status::Conflict;
  }
  if (sessions_.size() >= limits_.max_sessions) return Status::TooManySessions;
  auto s = std::make_shared<Session>();
  s->id = new_session_id();
  s->context = ctx;
  s->context_json = context_json;
  s->created = s->last_used = Clock::now();
  s->created_wall = std::chrono::system_clock::now();
  size_t base = sizeof(Session) + cost;
  if (!budget_.reserve(base)) return Status::BudgetFull;
  s->bytes = base;
  bytes_ += base;
  sessions_[s->id] = s;
  by_workload_[ctx.workload_id] = s->id;
  out = s;
  return Status::Ok;
}

std::shared_ptr<Session> SessionStore::get(const std::string& id) {
  std::shared_ptr<Session> s;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = sessions_.find(id);
    if (it == sessions_.end()) return nullptr;
    s = it->second;
  }
  std::lock_guard<std::mutex> sl(s->mu);
  if (s->closed || Clock::now() - s->last_used > limits_.ttl) return nullptr;
  s->last_used = Clock::now();
  return s;
}

void SessionStore::drop_locked(std::map<std::string, std::shared_ptr<Session>>::iterator it) {
  auto s = it->second;
  {
    std::lock_guard<std::mutex> sl(s->mu);
    s->closed = true;
    budget_.release(s->bytes);
    bytes_ -= s->bytes;
    s->bytes = 0;
    // Free the evidence now, not when the last request holding the session ends.
    std::vector<Observation>().swap(s->observations);
  }
  if (auto w = by_workload_.find(s->context.workload_id); w != by_workload_.end() && w->second == s->id)
    by_workload_.erase(w);
  sessions_.erase(it);
}

bool SessionStore::remove(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  drop_locked(it);
  return true;
}

SessionStore::Status SessionStore::check_room(Session& s, size_t pending, size_t more) {
  if (s.bytes + pending + more > limits_.max_session_bytes) return Status::SessionFull;
  if (budget_.used() + more > budget_.limit()) return Status::BudgetFull;
  return Status::Ok;
}

SessionStore::Status SessionStore::append(Session& s, std::vector<Observation>& obs, size_t cost) {
  std::lock_guard<std::mutex> sl(s.mu);
  if (s.closed) return Status::NotFound;
  if (s.bytes + cost > limits_.max_session_bytes) return Status::SessionFull;
  int64_t ordinal = static_cast<int64_t>(s.observations.size());
  s.observations.reserve(s.observations.size() + obs.size());
  for (auto& o : obs) {
    ++ordinal;
    if (o.file.empty()) o.file = "observations.jsonl";
    if (o.line == 0) o.line = ordinal;
    s.observations.push_back(std::move(o));
  }
  s.bytes += cost;
  bytes_ += cost;
  ++s.posts;
  s.last_used = Clock::now();
  return Status::Ok;
}

size_t SessionStore::expire() {
  auto now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    bool idle;
    {
      std::lock_guard<std::mutex> sl(it->second->mu);
      idle = now - it->second->last_used > limits_.ttl;
    }
    if (idle) {
      drop_locked(it++);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

size_t SessionStore::count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sessions_.size();
}

size_t SessionStore::bytes() const { return bytes_.load(); }

}  // namespace culprit::service
