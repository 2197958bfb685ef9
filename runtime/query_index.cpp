#include "runtime/query_index.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "runtime/canonical_order.h"

namespace culprit {

namespace {

// ---------------------------------------------------------------- indexes
// A bucket key: the node id (for `on same node`) and the key values of a
// query plan, as bytes. Values of one keyable type are equal exactly when
// their bytes are (query_plan.cpp: keyable()).
void append_node(std::string& key, int32_t id) { key.append(reinterpret_cast<const char*>(&id), sizeof id); }

void append_value(std::string& key, const Value& v) {
  key.push_back(static_cast<char>(v.type));
  if (v.type == Type::Bool) {
    key.push_back(v.b ? '\1' : '\0');
  } else if (v.type == Type::String) {
    auto n = static_cast<uint32_t>(v.s.size());
    key.append(reinterpret_cast<const char*>(&n), sizeof n);
    key.append(v.s);
  } else {
    key.append(reinterpret_cast<const char*>(&v.i), sizeof v.i);
  }
}


template <class T>
struct Bucket {
  std::vector<T> items;  // in the query order (events: canonical; symptoms: first, then id)
  bool sorted = true;    // symptoms only: false after an insertion or a `first` out of order
  // Symptoms only: how many of `items` were demoted or scrubbed since they
  // were last removed (QueryIndexes::symptom_left). They are removed once
  // they are a quarter of the bucket, not before every walk: a rule that
  // demotes one symptom per binding would otherwise pay for the whole
  // bucket at every binding, however narrow its walks.
  size_t dead = 0;
  // Symptoms only: inactive entries walks stepped over since the last
  // removal. Once they add up to the bucket's size, removing them costs no
  // more than walking past them has cost already.
  size_t wasted = 0;
  // Symptoms only: walks of this bucket in progress. A walk's visitor may
  // run a query over the same bucket (`for x: symptom * where x.priority ==
  // max(y: symptom *, ...)`); that inner walk must not remove entries under
  // the outer one, and `wasted` grows while the outer one walks.
  int walks = 0;
  // Symptoms only, built on the first walk of a priority range
  // (QueryPlan::priority_range): `items` ordered by priority, then in the
  // query order. Valid while `by_priority_valid` and no priority changed
  // since `by_priority_stamp` (QueryIndexes::priority_changes_).
  std::vector<T> by_priority;
  bool by_priority_valid = false;
  uint64_t by_priority_stamp = 0;
};

// Removes the symptoms that are no longer active from a bucket (order kept)
// once they are a quarter of it, or walks have stepped over as many entries
// as it holds: a removal is paid for by the deaths or by the walks.
void sweep(Bucket<const Symptom*>& b) {
  if (b.walks > 0 || b.dead == 0 || (b.dead * 4 < b.items.size() && b.wasted < b.items.size())) return;
  auto inactive = [](const Symptom* x) { return x->state != SymptomState::Active; };
  std::erase_if(b.items, inactive);
  if (b.by_priority_valid) std::erase_if(b.by_priority, inactive);
  b.dead = 0;
  b.wasted = 0;
}

// The part of `by` (ordered by priority) whose priority p satisfies
// `p OP bound`.
std::pair<std::vector<const Symptom*>::const_iterator, std::vector<const Symptom*>::const_iterator> priority_span(
    const std::vector<const Symptom*>& by, ir::Op op, int64_t bound) {
  auto lower = std::lower_bound(by.begin(), by.end(), bound, [](const Symptom* x, int64_t v) { return x->priority < v; });
  auto upper = std::upper_bound(by.begin(), by.end(), bound, [](int64_t v, const Symptom* x) { return v < x->priority; });
  switch (op) {
    case ir::Op::Lt: return {by.begin(), lower};
    case ir::Op::Le: return {by.begin(), upper};
    case ir::Op::Gt: return {upper, by.end()};
    default: return {lower, by.end()};  // Ge
  }
}

// How many parameter tuples one query keeps at most (beyond, values are
// computed each time, as without memoization).
constexpr size_t kMaxParamMemo = 1 << 16;

// Appends a value to a memo key, unambiguously (type, then a fixed-size or
// length-prefixed payload).
void append_key(std::string& key, const Value& v) {
  key += static_cast<char>(v.type);
  auto bytes = [&](const void* p, size_t n) { key.append(static_cast<const char*>(p), n); };
  switch (v.type) {
    case Type::Bool: key += v.b ? '1' : '0'; break;
    case Type::Int:
    case Type::Time:
    case Type::Duration: bytes(&v.i, sizeof v.i); break;
    case Type::Float: bytes(&v.f, sizeof v.f); break;
    case Type::String: {
      const size_t n = v.s.size();
      bytes(&n, sizeof n);
      key += v.s;
      break;
    }
    default: break;
  }
}

// Reorders `items` so that position p holds what was at from[p] (`from`, a

// How many infixes one candidate may be filed under; beyond, the index
// drops its keys (by node only), as for a key of an unexpected type.
constexpr size_t kMaxInfixes = 256;

// Calls f(x) for every x such that `hay` contains prefix + x + suffix
// (each x once per position pair; duplicates are the caller's to skip).
// False when there are more than kMaxInfixes.
template <class F>
bool for_each_infix(std::string_view hay, const std::string& prefix, const std::string& suffix, F&& f) {
  size_t n = 0;
  for (size_t i = hay.find(prefix); i != std::string_view::npos; i = hay.find(prefix, i + 1)) {
    const size_t from = i + prefix.size();
    size_t j = hay.find(suffix, from);
    // No suffix after this prefix means none after any later one: stop,
    // so a long value full of prefixes costs one pass, not one per prefix.
    if (j == std::string_view::npos) break;
    for (; j != std::string_view::npos; j = hay.find(suffix, j + 1)) {
      if (++n > kMaxInfixes) return false;
      f(hay.substr(from, j - from));
    }
  }
  return true;
}

}  // namespace

// The run-time state of one index signature (query_plan.h): candidates of
// the plan's kinds, grouped into buckets by node and key values. Event
// indexes are built on first use and rebuilt when derived events of their
// kinds join (rarely: once per emitting rule); symptom indexes are built on
// first use and then kept up to date as symptoms are created or merged
// (a state change does not touch them: inactive symptoms are skipped).
struct QueryIndexes::Index {
  const plan::QueryPlan* plan = nullptr;  // the first plan with this signature: kinds, node grouping, keys
  bool use_keys = true;   // false once a candidate's key had an unexpected type: then by node only
  bool built = false;
  uint64_t version = 0;   // events: the kinds' versions summed when built
  Env env;                // evaluates the plan's candidate-side keys (slots of plan->rule)
  StringMap<Bucket<const Event*>> events;
  const std::vector<const Event*>* alias = nullptr;  // events of one kind, no node or key: the kind's list itself
  StringMap<Bucket<const Symptom*>> symptoms;
  Index* unkeyed = nullptr;  // the same grouping without keys, for a probe of an unexpected type
};

// Per query plan: its index and scratch for its probes (a plan never runs
// inside itself, so the scratch is never in use twice), and its memo.
struct QueryIndexes::PlanState {
  const plan::QueryPlan* plan = nullptr;
  Index* index = nullptr;
  std::vector<Value> probe;
  Value priority_probe;                   // QueryPlan::priority_range's probe, this call
  std::vector<const Symptom*> in_range;   // the candidates of a priority range, put back in query order
  std::string key;
  bool memo_valid = false;
  uint64_t memo_stamp = 0;   // global version when last confirmed
  uint64_t memo_inputs = 0;  // the inputs' versions summed when computed
  Value memo;
  // Memoized by parameters (QueryPlan::params): one value per parameter
  // tuple, all computed while the inputs stood at `by_params_inputs`. An
  // entry a bailed native attempt made is only marked not `valid` (the map
  // removes nothing one by one; World::begin_attempt).
  struct ParamMemo {
    Value value;
    bool valid = true;
  };
  StringMap<ParamMemo> by_params;
  uint64_t by_params_inputs = 0;
  std::string param_key;     // recall()'s key, for the remember() that follows
};

// What remember() changed while a native attempt was open (World::
// begin_attempt): a parameter memo entry to mark not valid, or a closed
// memo's previous state.
struct QueryIndexes::MemoUndo {
  PlanState* ps;
  PlanState::ParamMemo* param;  // null: the closed memo, restored from below
  Value memo;
  bool valid;
  uint64_t stamp, inputs;
};

QueryIndexes::QueryIndexes(const Program& program, const World& world, const EventStore& events,
                           const std::vector<std::vector<const Symptom*>>& symptoms_by_kind, NodeNumbers& nodes)
    : program_(program), cat_(program.catalog()), world_(world), events_(events), symptoms_by_kind_(symptoms_by_kind),
      nodes_(nodes) {
  ev_version_.assign(cat_.event_kinds.size(), 0);
  sy_version_.assign(cat_.symptom_kinds.size(), 0);
  ev_indexes_.resize(cat_.event_kinds.size());
  sy_indexes_.resize(cat_.symptom_kinds.size());
  // One Index per signature; plans with equal signatures share it.
  const auto& plans = program_.query_plans().plans();
  // Indexes are made on a plan's first use (index_of): most runs (a
  // scenario, a small bundle) use few of them.
  plan_states_.resize(plans.size());
  index_by_id_.assign(program_.query_plans().index_count(), nullptr);
  for (size_t i = 0; i < plans.size(); ++i) {
    plan_states_[i].plan = &plans[i];
    plan_states_[i].probe.resize(plans[i].keys.size());
  }
}

QueryIndexes::~QueryIndexes() = default;

QueryIndexes::PlanState* QueryIndexes::state_for(const ir::Query& q) {
  const auto& plans = program_.query_plans();
  const plan::QueryPlan* p = plans.find(&q);
  return p ? &plan_states_[static_cast<size_t>(p - plans.plans().data())] : nullptr;
}


// The index of a plan's signature, made the first time one of its plans runs.
QueryIndexes::Index* QueryIndexes::index_of(PlanState& ps) {
  if (ps.index) return ps.index;
  const plan::QueryPlan& p = *ps.plan;
  Index*& ix = index_by_id_[static_cast<size_t>(p.index_id)];
  if (!ix) {
    ix = new_index(p);
    if (!p.query->symptom)
      for (int32_t k : p.query->kinds) ev_indexes_[static_cast<size_t>(k)].push_back(ix);
  }
  return ps.index = ix;
}

bool QueryIndexes::candidates(const ir::Query& q, Env& env, CandidateVisitor each) {
  PlanState* ps = state_for(q);
  if (!ps) return false;
  const plan::QueryPlan& p = *ps->plan;
  const std::string_view rel_node =
      q.relation != ir::NodeRelation::Any ? env.slots[static_cast<size_t>(q.relation_slot)].node() : std::string_view();
  Index* ix = index_of(*ps);
  fresh(*ix);
  bool keyed = ix->use_keys && !p.keys.empty();
  if (keyed) {
    // Probes first: they may run queries of their own (which use other plans).
    for (size_t i = 0; i < p.keys.size(); ++i) {
      Value& v = ps->probe[i];
      run_expression_into(*p.keys[i].probe, env, v);
      if (v.is_null()) return true;  // `==` with null is false: no candidate passes
      if (v.type != p.keys[i].probe->type) keyed = false;
    }
    if (!keyed) {
      ix = unkeyed(*ix);
      fresh(*ix);
    }
  }
  // The priority range's probe, also before any bucket is touched. A null
  // probe makes the comparison false for every candidate.
  bool by_priority = false;
  if (p.priority_range && !q.has_within) {
    run_expression_into(*p.priority_range->probe, env, ps->priority_probe);
    if (ps->priority_probe.is_null()) return true;
    by_priority = ps->priority_probe.type == Type::Int;
  }
  std::string& key = ps->key;
  key.clear();
  if (p.by_node) {
    int32_t id = nodes_.find(rel_node);
    if (id < 0) return true;
    append_node(key, id);
  }
  if (keyed)
    for (const Value& v : ps->probe) append_value(key, v);
  auto& slot = env.slots[static_cast<size_t>(q.bind_slot)];
  std::optional<int64_t> lo, hi;
  if (q.has_within) {
    auto anchor = env.slots[static_cast<size_t>(q.anchor_slot)].time();
    if (!anchor) return true;  // no candidate is within a window of no time
    lo = q.direction == ir::WithinDirection::After ? *anchor : *anchor - q.within_ns;
    hi = q.direction == ir::WithinDirection::Before ? *anchor : *anchor + q.within_ns;
  }
  if (q.symptom) {
    Bucket<const Symptom*>* found = ix->symptoms.find(key);
    if (!found) return true;
    Bucket<const Symptom*>& b = *found;
    // A demoted or scrubbed symptom never becomes active again, and no
    // state changes while a query walks: once they are a quarter of the
    // bucket they are dropped here (order kept), so that a rule demoting
    // the symptoms of a kind for every binding walks mostly what is left.
    sweep(b);
    if (!b.sorted) {
      std::sort(b.items.begin(), b.items.end(), symptom_order);
      b.sorted = true;
      b.by_priority_valid = false;
    }
    struct Walking {
      int& n;
      ~Walking() { --n; }
    } walking{++b.walks};
    auto visit = [&](const Symptom* x) {
      if (x->state != SymptomState::Active) {
        ++b.wasted;
        return true;
      }
      if (q.relation == ir::NodeRelation::Other && x->node == rel_node) return true;
      slot = Item{nullptr, x};
      return each();
    };
    if (by_priority) {
      if (!b.by_priority_valid || b.by_priority_stamp != priority_changes_) {
        b.by_priority = b.items;  // in query order: the stable sort keeps it among equal priorities
        std::stable_sort(b.by_priority.begin(), b.by_priority.end(),
                         [](const Symptom* x, const Symptom* y) { return x->priority < y->priority; });
        b.by_priority_valid = true;
        b.by_priority_stamp = priority_changes_;
      }
      auto [from, to] = priority_span(b.by_priority, p.priority_range->op, ps->priority_probe.i);
      const size_t n = static_cast<size_t>(to - from);
      // A range that holds most of the bucket is cheaper walked in place
      // than copied and sorted back into query order.
      if (n * 2 <= b.items.size()) {
        std::vector<const Symptom*>& in_range = ps->in_range;
        in_range.clear();
        for (auto i = from; i != to; ++i) {
          if ((*i)->state == SymptomState::Active) in_range.push_back(*i);
          else ++b.wasted;
        }
        std::sort(in_range.begin(), in_range.end(), symptom_order);
        for (const Symptom* x : in_range)
          if (!visit(x)) return true;
        return true;
      }
    }
    auto begin = b.items.begin(), end = b.items.end();
    if (lo) {
      // Timed symptoms come first, by `first`: narrow by binary search.
      auto timed_end = std::partition_point(begin, end, [](const Symptom* x) { return x->first.has_value(); });
      begin = std::lower_bound(begin, timed_end, *lo, [](const Symptom* x, int64_t t) { return *x->first < t; });
      end = std::upper_bound(begin, timed_end, *hi, [](int64_t t, const Symptom* x) { return t < *x->first; });
    }
    for (auto i = begin; i != end; ++i)
      if (!visit(*i)) return true;
    return true;
  }
  const std::vector<const Event*>* found = ix->alias;
  if (!found) {
    const Bucket<const Event*>* b = ix->events.find(key);
    if (!b) return true;
    found = &b->items;
  }
  const std::vector<const Event*>& list = *found;
  auto begin = list.begin(), end = list.end();
  if (lo) {
    // Timed events come first and are sorted by time: narrow by binary search.
    auto timed_end = std::partition_point(begin, end, [](const Event* e) { return e->where.ts.has_value(); });
    begin = std::lower_bound(begin, timed_end, *lo, [](const Event* e, int64_t t) { return *e->where.ts < t; });
    end = std::upper_bound(begin, timed_end, *hi, [](int64_t t, const Event* e) { return t < *e->where.ts; });
  }
  // The list is in time order; on many nodes consecutive events lie far
  // apart in the heap, and the first read of each (its shell, then its
  // fields) was a cache and TLB miss the filter waited for. Ask for them
  // ahead: the shell kPrefetchShell events ahead, its fields (through the
  // shell, by then cached) kPrefetchFields ahead.
  constexpr ptrdiff_t kPrefetchShell = 12, kPrefetchFields = 6;
  for (auto i = begin; i != end; ++i) {
    if (end - i > kPrefetchShell) {
      const char* shell = reinterpret_cast<const char*>(i[kPrefetchShell]);
      __builtin_prefetch(shell);
      __builtin_prefetch(shell + 64);
      __builtin_prefetch(shell + 128);
    }
    if (end - i > kPrefetchFields) __builtin_prefetch(i[kPrefetchFields]->fields.data());
    if (q.relation == ir::NodeRelation::Other && (*i)->host == rel_node) continue;
    slot = Item{*i, nullptr};
    if (!each()) return true;
  }
  return true;
}

const Value* QueryIndexes::recall(const ir::Query& q, Env& env, bool* keep) {
  PlanState* ps = state_for(q);
  *keep = ps && ps->plan->memoized;
  if (!*keep) return nullptr;
  const plan::QueryPlan& p = *ps->plan;
  if (!p.params.empty() || !p.param_node_slots.empty()) {
    const uint64_t in = inputs_version(p);
    if (ps->by_params_inputs != in) {
      ps->by_params.clear();
      ps->by_params_inputs = in;
    }
    std::string& key = ps->param_key;
    key.clear();
    for (const ir::Expr* e : p.params) append_key(key, run_expression(*e, env));
    for (int32_t s : p.param_node_slots) {
      std::string_view n = env.slots[static_cast<size_t>(s)].node();
      const size_t len = n.size();
      key.append(reinterpret_cast<const char*>(&len), sizeof len);
      key.append(n);
    }
    const PlanState::ParamMemo* m = ps->by_params.find(key);
    return m && m->valid ? &m->value : nullptr;
  }
  if (!ps->memo_valid) return nullptr;
  if (ps->memo_stamp == global_version_) return &ps->memo;
  if (ps->memo_inputs != inputs_version(*ps->plan)) return nullptr;
  ps->memo_stamp = global_version_;  // something else changed, not its inputs
  return &ps->memo;
}

bool QueryIndexes::remember(const ir::Query& q, const Value& v, bool attempt_open) {
  PlanState* ps = state_for(q);
  if (!ps || !ps->plan->memoized) return false;
  if (!ps->plan->params.empty() || !ps->plan->param_node_slots.empty()) {
    // The inputs cannot have changed since recall(): evaluating a query
    // changes no event or symptom.
    PlanState::ParamMemo* m = ps->by_params.find(ps->param_key);
    if (m) {
      m->value = v;  // an entry a bailed attempt left (it was not valid)
      m->valid = true;
    } else if (ps->by_params.size() < kMaxParamMemo) {
      m = ps->by_params.try_emplace(ps->param_key, PlanState::ParamMemo{v, true}).first;
    }
    if (m && attempt_open) {
      memo_undo_.push_back(MemoUndo{ps, m, {}, false, 0, 0});
      return true;
    }
    return false;
  }
  bool logged = false;
  if (attempt_open) {
    memo_undo_.push_back(MemoUndo{ps, nullptr, ps->memo, ps->memo_valid, ps->memo_stamp, ps->memo_inputs});
    logged = true;
  }
  ps->memo = v;
  ps->memo_valid = true;
  ps->memo_stamp = global_version_;
  ps->memo_inputs = inputs_version(*ps->plan);
  return logged;
}

void QueryIndexes::undo_memos(size_t keep) {
  if (keep == SIZE_MAX) memo_undo_.clear();  // the attempts succeeded: their memos stay
  else
    while (memo_undo_.size() > keep) {
      MemoUndo& u = memo_undo_.back();
      if (u.param) {
        u.param->valid = false;
      } else {
        u.ps->memo = std::move(u.memo);
        u.ps->memo_valid = u.valid;
        u.ps->memo_stamp = u.stamp;
        u.ps->memo_inputs = u.inputs;
      }
      memo_undo_.pop_back();
    }
}

size_t QueryIndexes::undo_log_size() const { return memo_undo_.size(); }

uint64_t QueryIndexes::inputs_version(const plan::QueryPlan& p) const {
  uint64_t v = p.reads_outcome ? outcome_version_ : 0;
  for (int32_t k : p.event_inputs) v += ev_version_[static_cast<size_t>(k)];
  for (int32_t k : p.symptom_inputs) v += sy_version_[static_cast<size_t>(k)];
  return v;
}

void QueryIndexes::events_changed(int32_t kind) {
  ++ev_version_[static_cast<size_t>(kind)];  // indexes over the kind rebuild on next use
  ++global_version_;
}

void QueryIndexes::symptoms_changed(int32_t kind) {
  ++sy_version_[static_cast<size_t>(kind)];
  ++global_version_;
}

void QueryIndexes::outcome_changed() {
  ++outcome_version_;
  ++global_version_;
}

// The symptom is counted dead in its bucket of every index over its kind
// (sweep() removes it later). Its key fields do not change after creation
// (query_plan.cpp: candidate_side), so its bucket is found again.
void QueryIndexes::symptom_left(const Symptom* s) {
  std::string& key = scratch_key_;
  for (Index* ix : sy_indexes_[static_cast<size_t>(s->kind)]) {
    if (!candidate_key(*ix, Item{nullptr, s}, key)) continue;
    if (Bucket<const Symptom*>* b = ix->symptoms.find(key)) ++b->dead;
  }
}

void QueryIndexes::symptom_reprioritized() { ++priority_changes_; }

// Rules reach events only through queries: once a kind's events are freed,
// no index over it is asked again, and its entries would point at nothing.
void QueryIndexes::events_freed(int32_t kind) {
  for (Index* ix : ev_indexes_[static_cast<size_t>(kind)]) {
    ix->events = {};
    ix->alias = nullptr;
    ix->built = false;
  }
}

void QueryIndexes::clear() { indexes_.clear(); }

QueryIndexes::Index* QueryIndexes::new_index(const plan::QueryPlan& p) {
  indexes_.push_back(std::make_unique<Index>());
  Index* ix = indexes_.back().get();
  ix->plan = &p;
  ix->env.catalog = &cat_;
  ix->env.regexes = &program_.expression_regexes();
  ix->env.rule = p.rule;
  ix->env.world = &world_;
  ix->env.native = program_.native();
  ix->env.slots.resize(static_cast<size_t>(std::max(1, p.rule->slot_count)));
  return ix;
}

QueryIndexes::Index* QueryIndexes::unkeyed(Index& ix) {
  if (!ix.unkeyed) {
    ix.unkeyed = new_index(*ix.plan);
    ix.unkeyed->use_keys = false;
    if (!ix.plan->query->symptom)
      for (int32_t k : ix.plan->query->kinds) ev_indexes_[static_cast<size_t>(k)].push_back(ix.unkeyed);
  }
  return ix.unkeyed;
}

// The bucket key of a candidate; false when it belongs in no bucket (a
// null key value can equal nothing). A key value of a type other than
// the static one (never expected) turns the index's keys off.
bool QueryIndexes::candidate_key(Index& ix, const Item& item, std::string& key) {
  const plan::QueryPlan& p = *ix.plan;
  key.clear();
  if (p.by_node) append_node(key, nodes_.number(item.node()));
  if (!ix.use_keys) return true;
  auto& slot = ix.env.slots[static_cast<size_t>(p.query->bind_slot)];
  slot = item;
  for (const auto& k : p.keys) {
    run_expression_into(*k.candidate, ix.env, key_value_);
    if (key_value_.is_null()) return false;
    if (key_value_.type != k.candidate->type) {
      ix.use_keys = false;
      return false;
    }
    if (k.infix) break;  // last; the caller files the candidate under each infix of key_value_
    append_value(key, key_value_);
  }
  return true;
}

// Builds (or rebuilds) an index that is missing or stale.
void QueryIndexes::fresh(Index& ix) {
  const ir::Query& q = *ix.plan->query;
  if (q.symptom) {
    if (ix.built) return;
    build_symptom_index(ix);
    return;
  }
  uint64_t v = 0;
  for (int32_t k : q.kinds) v += ev_version_[static_cast<size_t>(k)];
  if (ix.built && ix.version == v) return;
  ix.events.clear();
  ix.alias = nullptr;
  if (q.kinds.size() == 1 && !ix.plan->by_node && (ix.plan->keys.empty() || !ix.use_keys)) {
    // One kind, no grouping: the kind's own list is the index.
    ix.alias = &events_.of_kind(q.kinds[0]);
    ix.version = v;
    ix.built = true;
    return;
  }
  std::string key, infix_key;
  bool keys_before = ix.use_keys;
  const plan::KeyPart* infix = ix.use_keys && !ix.plan->keys.empty() && ix.plan->keys.back().infix ? &ix.plan->keys.back() : nullptr;
  Value part = Value::string("");
  for (const Event* e : events_.merged(q.kinds)) {
    if (!candidate_key(ix, Item{e, nullptr}, key)) {
      if (keys_before && !ix.use_keys) return fresh(ix);  // start over without keys
      continue;
    }
    if (!infix) {
      ix.events[key].items.push_back(e);
      continue;
    }
    bool ok = for_each_infix(key_value_.s, infix->prefix, infix->suffix, [&](std::string_view x) {
      infix_key.assign(key);
      part.s.assign(x);
      append_value(infix_key, part);
      auto& items = ix.events[infix_key].items;
      if (items.empty() || items.back() != e) items.push_back(e);  // once per candidate, in order
    });
    if (!ok) {
      ix.use_keys = false;
      return fresh(ix);  // start over without keys
    }
  }
  ix.version = v;
  ix.built = true;
}

void QueryIndexes::build_symptom_index(Index& ix) {
  ix.symptoms.clear();
  bool keys_before = ix.use_keys;
  for (int32_t k : ix.plan->query->kinds) {
    for (const Symptom* s : symptoms_by_kind_[static_cast<size_t>(k)]) {
      add_symptom(ix, s);
      if (keys_before && !ix.use_keys) return build_symptom_index(ix);  // start over without keys
    }
  }
  if (!ix.built)
    for (int32_t k : ix.plan->query->kinds) sy_indexes_[static_cast<size_t>(k)].push_back(&ix);
  ix.built = true;
}

void QueryIndexes::add_symptom(Index& ix, const Symptom* s) {
  std::string& key = scratch_key_;
  if (!candidate_key(ix, Item{nullptr, s}, key)) return;
  Bucket<const Symptom*>& b = ix.symptoms[key];
  if (!b.items.empty() && !symptom_order(b.items.back(), s)) b.sorted = false;
  b.items.push_back(s);
  b.by_priority_valid = false;
  // An index built after demotions (in `final`, say) files the demoted
  // too: they count as dead from the start, and the first walks sweep them.
  if (s->state != SymptomState::Active) ++b.dead;
}

// A new symptom joins every index built over its kind.
void QueryIndexes::symptom_created(const Symptom* s) {
  for (Index* ix : sy_indexes_[static_cast<size_t>(s->kind)]) {
    bool keys_before = ix->use_keys;
    add_symptom(*ix, s);
    if (keys_before && !ix->use_keys) build_symptom_index(*ix);
  }
}

// A symptom's `first` changed: its buckets must be re-sorted before use.
void QueryIndexes::symptom_moved(const Symptom* s) {
  std::string& key = scratch_key_;
  for (Index* ix : sy_indexes_[static_cast<size_t>(s->kind)]) {
    if (!candidate_key(*ix, Item{nullptr, s}, key)) continue;
    if (Bucket<const Symptom*>* b = ix->symptoms.find(key)) b->sorted = false;
  }
}

}  // namespace culprit
