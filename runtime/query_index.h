// Query indexes: how the rule engine answers a query without walking every
// event or symptom of its kinds, and keeps the values of queries whose
// inputs have not changed.
//
// Each query of the catalog has a plan (compiler/query_plan.h) naming an
// index signature: the kinds, whether candidates are grouped by node
// (`on same node`), and key expressions on the candidate's side. At run time
// one index per signature holds the candidates in buckets by node and key
// bytes, each bucket in the query order (events: canonical; symptoms: first,
// then id), so a probe is a hash look-up and a `within` is a binary search;
// a symptom bucket walked by a priority range also keeps a copy ordered by
// priority (built on first use), so the range is a binary search too.
// Event indexes are built on first use and rebuilt when derived events of
// their kinds join; symptom indexes are built on first use and then kept up
// to date as symptoms are created, moved, demoted or scrubbed (those leave
// their buckets in batches, once they are a quarter of a bucket or walks
// have stepped over as many, so removal costs O(1) amortised) or given a
// new priority. Memoized queries keep their
// value (closed, or per parameter tuple) while the versions of the events,
// symptoms and outcome they read stand still; values kept during a native
// attempt that bails are undone (World::begin_attempt).
//
// Internal to the engine (runtime/engine.cpp), which owns one per run.
// Ownership: owns its indexes and memos. It borrows, for its whole life, the
// Program (plans, regexes, native code), the World its key expressions run
// in, the event store, the engine's symptoms by kind and the node numbers.
// Thread-safety: none; one run on one thread.
// Errors: none. A key value of a type other than the static one (never
// expected) turns that index's keys off, so it groups by node only: slower,
// never different.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/query_plan.h"
#include "runtime/event_store.h"
#include "runtime/interpreter.h"
#include "runtime/model.h"
#include "runtime/program.h"
#include "runtime/string_map.h"

namespace culprit {

// Nodes and hosts, numbered as they are met: index keys hold the number,
// not the name, and the engine tells the workload's nodes (numbered first)
// from other hosts by it.
class NodeNumbers {
 public:
  // The node's number, given it when new.
  int32_t number(std::string_view node) { return *ids_.try_emplace(node, static_cast<int32_t>(ids_.size())).first; }
  // Its number, or -1 when it has none.
  int32_t find(std::string_view node) const {
    const int32_t* id = ids_.find(node);
    return id ? *id : -1;
  }
  size_t size() const { return ids_.size(); }
  // f(name, number) for each, in numbering order.
  template <class F>
  void for_each(F&& f) const {
    ids_.for_each(f);
  }

 private:
  StringMap<int32_t> ids_;
};

class QueryIndexes {
 public:
  QueryIndexes(const Program& program, const World& world, const EventStore& events,
               const std::vector<std::vector<const Symptom*>>& symptoms_by_kind, NodeNumbers& nodes);
  ~QueryIndexes();
  QueryIndexes(const QueryIndexes&) = delete;
  QueryIndexes& operator=(const QueryIndexes&) = delete;

  // World::candidates through the query's index. False when the query has
  // no plan (the catalog's never lack one): the caller then scans.
  bool candidates(const ir::Query& q, Env& env, CandidateVisitor each);

  // World::recall and World::remember. remember() returns whether it added
  // to the undo log (only while `attempt_open`).
  const Value* recall(const ir::Query& q, Env& env, bool* keep);
  bool remember(const ir::Query& q, const Value& v, bool attempt_open);
  // World::undo_memos: undoes the memos logged after the first `keep`
  // entries (SIZE_MAX: clears the log, undoing nothing).
  void undo_memos(size_t keep);
  size_t undo_log_size() const;

  // What memoized values and built indexes depend on changed.
  void events_changed(int32_t kind);    // derived events of the kind joined
  void symptoms_changed(int32_t kind);  // a symptom of the kind was created or changed
  void outcome_changed();
  void symptom_left(const Symptom* s);  // it was demoted or scrubbed (never active again)
  void symptom_reprioritized();         // a symptom's priority changed (`set priority`)
  void symptom_created(const Symptom* s);
  void symptom_moved(const Symptom* s);  // its `first` changed
  void events_freed(int32_t kind);       // EventStore::free_dead_kinds freed the kind

  // Frees every index (the events they point to are about to go).
  void clear();

 private:
  struct Index;
  struct PlanState;
  struct MemoUndo;

  PlanState* state_for(const ir::Query& q);
  Index* index_of(PlanState& ps);
  Index* new_index(const plan::QueryPlan& p);
  Index* unkeyed(Index& ix);
  uint64_t inputs_version(const plan::QueryPlan& p) const;
  bool candidate_key(Index& ix, const Item& item, std::string& key);
  void fresh(Index& ix);
  void build_symptom_index(Index& ix);
  void add_symptom(Index& ix, const Symptom* s);

  const Program& program_;
  const ir::Catalog& cat_;
  const World& world_;
  const EventStore& events_;
  const std::vector<std::vector<const Symptom*>>& symptoms_by_kind_;  // creation order
  NodeNumbers& nodes_;

  std::vector<std::unique_ptr<Index>> indexes_;
  std::vector<PlanState> plan_states_;           // by plan, as in program_.query_plans()
  std::vector<Index*> index_by_id_;              // by QueryPlan::index_id; null until first used
  std::vector<std::vector<Index*>> ev_indexes_;  // by event kind: indexes over it
  std::vector<std::vector<Index*>> sy_indexes_;  // by symptom kind: built indexes over it
  // What remember() changed while a native attempt was open, to undo it if
  // the attempt bails.
  std::vector<MemoUndo> memo_undo_;
  Value key_value_;          // candidate_key() scratch
  std::string scratch_key_;
  // Versions of what memoized query values depend on; they only grow.
  std::vector<uint64_t> ev_version_, sy_version_;
  uint64_t outcome_version_ = 0, global_version_ = 0;
  uint64_t priority_changes_ = 0;  // `set priority` changes so far (Bucket::by_priority_stamp)
};

}  // namespace culprit
