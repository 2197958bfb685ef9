#include "runtime/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <tuple>

#include "base/limits.h"
#include "base/sha256.h"
#include "base/text_util.h"
#include "compiler/query_plan.h"
#include "runtime/interpreter.h"
#include "runtime/string_map.h"

namespace culprit {

namespace {
constexpr size_t kMaxEvidencePerSymptom = 20;
constexpr size_t kMaxDerivedEvidence = 32;

bool time_less(const std::optional<int64_t>& a, const std::optional<int64_t>& b) {
  if (a.has_value() != b.has_value()) return a.has_value();  // timed before untimed
  return a && *a < *b;
}
}  // namespace

bool event_canonical_less(const Event& a, const Event& b) {
  if (a.where.ts != b.where.ts) return time_less(a.where.ts, b.where.ts);
  if (std::tie(a.host, a.where.source, a.where.file, a.where.line, a.producer, a.kind) !=
      std::tie(b.host, b.where.source, b.where.file, b.where.line, b.producer, b.kind))
    return std::tie(a.host, a.where.source, a.where.file, a.where.line, a.producer, a.kind) <
           std::tie(b.host, b.where.source, b.where.file, b.where.line, b.producer, b.kind);
  // Same place (e.g. metric samples of one instant, observations without a
  // line number): order by content so input order never matters.
  if (a.where.text != b.where.text) return a.where.text < b.where.text;
  return std::lexicographical_compare(a.fields.begin(), a.fields.end(), b.fields.begin(), b.fields.end(), value_less);
}

namespace {

// Whether (host "/" source "/" file, line) of `e` sorts before (place, line),
// without building the joined string.
bool place_before(const Evidence& e, std::string_view place, int64_t line) {
  const std::string_view parts[] = {e.host, "/", e.source, "/", e.file};
  size_t pos = 0;
  for (std::string_view part : parts) {
    const size_t n = std::min(part.size(), place.size() - pos);
    if (int c = part.substr(0, n).compare(place.substr(pos, n))) return c < 0;
    if (n < part.size()) return false;  // `place` is a proper prefix: it sorts first
    pos += n;
  }
  if (pos < place.size()) return true;  // a proper prefix of `place`
  return e.line < line;
}

// Adds `source` to the symptom's sorted source list. A symptom draws on one
// or two sources, so the linear look-up costs less than any set would.
void note_source(Symptom& s, std::string_view source) {
  auto& v = s.evidence_sources;
  auto it = v.begin();
  while (it != v.end() && std::string_view(*it) < source) ++it;
  if (it != v.end() && *it == source) return;
  v.insert(it, std::string(source));
}

bool symptom_order(const Symptom* a, const Symptom* b) {
  if (a->first != b->first) return time_less(a->first, b->first);
  return a->id < b->id;
}

// For every event kind, the index (in run order, i.e. catalog order) of the
// last rule with an event query over it: `for`, queries inside expressions,
// and action queries. -1 when no rule reads the kind.
std::vector<int64_t> last_event_readers(const ir::Catalog& cat) {
  std::vector<int64_t> last(cat.event_kinds.size(), -1);
  auto note = [&](const ir::Query& q, int64_t rule) {
    if (q.symptom) return;
    for (int32_t k : q.kinds)
      if (k >= 0 && static_cast<size_t>(k) < last.size()) last[static_cast<size_t>(k)] = std::max(last[static_cast<size_t>(k)], rule);
  };
  for (size_t i = 0; i < cat.rules.size(); ++i) {
    const auto& r = cat.rules[i];
    auto idx = static_cast<int64_t>(i);
    if (r.for_query) note(*r.for_query, idx);
    for (const auto& q : r.queries) note(q, idx);
    for (const auto& a : r.actions)
      if (a.query) note(*a.query, idx);
  }
  return last;
}

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
  uint64_t swept = 0;    // symptoms only: Engine::state_changes_ when inactive ones were last removed
};

// The run-time state of one index signature (query_plan.h): candidates of
// the plan's kinds, grouped into buckets by node and key values. Event
// indexes are built on first use and rebuilt when derived events of their
// kinds join (rarely: once per emitting rule); symptom indexes are built on
// first use and then kept up to date as symptoms are created or merged
// (a state change does not touch them: inactive symptoms are skipped).
struct Index {
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
struct PlanState {
  const plan::QueryPlan* plan = nullptr;
  Index* index = nullptr;
  std::vector<Value> probe;
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
// permutation, is consumed), one cycle at a time: each element is moved
// once, and no second container is needed.
template <class Container>
void permute(Container& items, std::vector<size_t>& from) {
  constexpr size_t kDone = static_cast<size_t>(-1);
  for (size_t start = 0; start < from.size(); ++start) {
    if (from[start] == kDone) continue;
    if (from[start] == start) {
      from[start] = kDone;
      continue;
    }
    auto held = std::move(items[start]);
    size_t at = start;
    while (true) {
      const size_t next = from[at];
      from[at] = kDone;
      if (next == start) {
        items[at] = std::move(held);
        break;
      }
      items[at] = std::move(items[next]);
      at = next;
    }
  }
}

class Engine final : public World {
 public:
  Engine(const Program& program, const WorkloadContext& ctx, const std::vector<std::pair<std::string, std::string>>& hs,
         bool collect_trail, bool use_indexes, uint64_t step_budget)
      : program_(program), cat_(program.catalog()), ctx_(ctx), nodes_(ctx.nodes.begin(), ctx.nodes.end()),
        collect_trail_(collect_trail), use_indexes_(use_indexes), step_budget_(step_budget) {
    for (const auto& n : nodes_) node_names_ += (node_names_.empty() ? "" : ",") + n;
    for (int f = 0; f < 6; ++f) workload_values_.push_back(workload(f));  // none changes during a run
    for (const auto& [source, host] : hs) host_sources_.insert({source, host});
    by_kind_.resize(cat_.event_kinds.size());
    storage_.resize(cat_.event_kinds.size());
    last_reader_ = last_event_readers(cat_);
    symptoms_by_kind_.resize(cat_.symptom_kinds.size());
    ev_version_.assign(cat_.event_kinds.size(), 0);
    sy_version_.assign(cat_.symptom_kinds.size(), 0);
    ev_indexes_.resize(cat_.event_kinds.size());
    sy_indexes_.resize(cat_.symptom_kinds.size());
    for (const auto& n : ctx_.nodes) node_id(n);
    workload_node_ids_ = static_cast<int32_t>(node_ids_.size());  // ids below it are workload nodes
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

  // The index of a plan's signature, made the first time one of its plans runs.
  Index* index_of(PlanState& ps) const {
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

  // Events stay where the scanner put them (their batches); the engine works
  // on pointers in canonical order, kind by kind. An event of a kind that
  // no rule (or no later rule, see last_reader_) reads is emptied in place:
  // its strings and fields go, its fixed-size shell stays until the end.
  // (Moving events into storage by kind cost a move per event and, since
  // freed heap memory stays resident, a second copy of every shell at the
  // peak.) Derived events are kept in storage_, by kind; neither moves an
  // event once it is there (EventList).
  EngineResult run(std::vector<EventList> batches) {
    batches_ = std::move(batches);
    size_t total = 0, received = 0;
    for (const auto& b : batches_) received += b.size();
    if (step_budget_ == 0) step_budget_ = limits::eval_steps_for(received);
    for (auto& b : batches_)
      for (auto& e : b) {
        if (live(e.kind)) ++total;
        else drop(e);  // no rule reads it
      }
    sort_into_kinds(total);
    bool outcome_done = false;
    rule_ms_.assign(cat_.rules.size(), 0.0);
    for (const auto& rule : cat_.rules) {
      if (!outcome_done && rule.stage == ir::Stage::PostOutcome) {
        compute_outcome();
        outcome_done = true;
      }
      const auto t0 = std::chrono::steady_clock::now();
      run_rule(rule);
      rule_ms_[static_cast<size_t>(rule_index_)] =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (exhausted_) {
        // What this rule found is incomplete, and every later rule would
        // build on it: evaluation stops here, and nothing is attributed.
        exhausted_rule_ = rule.name;
        break;
      }
      free_dead_kinds();
      ++rule_index_;
    }
    if (exhausted_) {
      Outcome o;
      o.status = "unattributed";
      outcome_ = std::move(o);
    } else if (!outcome_done) {
      compute_outcome();
    }

    // Symptoms copied their evidence; the events are no longer needed, and
    // freeing them first keeps them from overlapping with the result.
    indexes_.clear();
    by_kind_ = {};
    storage_ = {};
    batches_ = {};
    EngineResult out;
    out.rule_ms = std::move(rule_ms_);
    out.steps = steps_;
    out.step_budget = step_budget_;
    out.budget_exhausted_by = exhausted_rule_;
    // The result is the engine's own deque, sorted by id in place: moving
    // 130,000 symptoms (about 900 bytes each) into a fresh vector faulted in
    // over 100 MB of new pages. Affected nodes are marked by node id (a hash
    // lookup) rather than gathered in an ordered set of names.
    const size_t n = symptoms_.size();
    std::vector<std::pair<std::string_view, size_t>> by_id;  // (id, where it is now)
    by_id.reserve(n);
    std::vector<char> affected(node_ids_.size(), 0);
    for (size_t i = 0; i < n; ++i) {
      Symptom& s = symptoms_[i];
      by_id.emplace_back(s.id, i);
      if (s.state != SymptomState::Scrubbed && !s.node.empty()) {
        const int32_t id = find_node(s.node);
        if (id >= 0 && id < workload_node_ids_) affected[static_cast<size_t>(id)] = 1;
      }
      for (const auto& f : cat_.symptom_kinds[static_cast<size_t>(s.kind)].fields) s.field_names.push_back(f.name);
    }
    std::sort(by_id.begin(), by_id.end());  // ids are unique
    std::vector<size_t> from(n);  // position p takes the symptom now at from[p]
    for (size_t p = 0; p < n; ++p) from[p] = by_id[p].second;
    by_id = {};  // its views die with the moves below
    permute(symptoms_, from);
    node_ids_.for_each([&](std::string_view name, int32_t id) {
      if (id < workload_node_ids_ && affected[static_cast<size_t>(id)]) out.affected_nodes.emplace_back(name);
    });
    std::sort(out.affected_nodes.begin(), out.affected_nodes.end());
    symptom_ids_.clear();
    out.symptoms = std::move(symptoms_);
    out.outcome = std::move(outcome_);
    out.trail = std::move(trail_);
    return out;
  }

  // ------------------------------------------------------------- World
  // Every candidate handed out, and every event a scan looks at, is one
  // step of the attribution's budget (EngineResult::steps). The interpreter
  // and the native code both reach the events only through here, so neither
  // can run past it; once it is spent, every query answers at once with no
  // candidate (World::out_of_budget) and run() stops after the rule.
  bool step() const {
    if (exhausted_) return false;
    if (++steps_ <= step_budget_) return true;
    exhausted_ = true;
    return false;
  }

  void candidates(const ir::Query& q, Env& env, CandidateVisitor each) const override {
    if (exhausted_ || !step()) return;  // the call itself is a step: it may find nothing, many times over
    auto counted = [&]() { return step() && each(); };
    visit_candidates(q, env, CandidateVisitor(counted));
  }

  void visit_candidates(const ir::Query& q, Env& env, CandidateVisitor each) const {
    PlanState* ps = use_indexes_ ? state_for(q) : nullptr;
    if (!ps) return scan(q, env, each);
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
        if (v.is_null()) return;  // `==` with null is false: no candidate passes
        if (v.type != p.keys[i].probe->type) keyed = false;
      }
      if (!keyed) {
        ix = unkeyed(*ix);
        fresh(*ix);
      }
    }
    std::string& key = ps->key;
    key.clear();
    if (p.by_node) {
      int32_t id = find_node(rel_node);
      if (id < 0) return;
      append_node(key, id);
    }
    if (keyed)
      for (const Value& v : ps->probe) append_value(key, v);
    auto& slot = env.slots[static_cast<size_t>(q.bind_slot)];
    std::optional<int64_t> lo, hi;
    if (q.has_within) {
      auto anchor = env.slots[static_cast<size_t>(q.anchor_slot)].time();
      if (!anchor) return;  // no candidate is within a window of no time
      lo = q.direction == ir::WithinDirection::After ? *anchor : *anchor - q.within_ns;
      hi = q.direction == ir::WithinDirection::Before ? *anchor : *anchor + q.within_ns;
    }
    if (q.symptom) {
      Bucket<const Symptom*>* found = ix->symptoms.find(key);
      if (!found) return;
      Bucket<const Symptom*>& b = *found;
      if (b.swept != state_changes_) {
        // A demoted or scrubbed symptom never becomes active again, and no
        // state changes while a query walks: drop them here, once, so that a
        // rule demoting the symptoms of a kind for every binding walks only
        // what is left, not everything ever demoted (order is kept).
        std::erase_if(b.items, [](const Symptom* x) { return x->state != SymptomState::Active; });
        b.swept = state_changes_;
      }
      if (!b.sorted) {
        std::sort(b.items.begin(), b.items.end(), symptom_order);
        b.sorted = true;
      }
      auto begin = b.items.begin(), end = b.items.end();
      if (lo) {
        // Timed symptoms come first, by `first`: narrow by binary search.
        auto timed_end = std::partition_point(begin, end, [](const Symptom* x) { return x->first.has_value(); });
        begin = std::lower_bound(begin, timed_end, *lo, [](const Symptom* x, int64_t t) { return *x->first < t; });
        end = std::upper_bound(begin, timed_end, *hi, [](int64_t t, const Symptom* x) { return t < *x->first; });
      }
      for (auto i = begin; i != end; ++i) {
        const Symptom* x = *i;
        if (x->state != SymptomState::Active) continue;
        if (q.relation == ir::NodeRelation::Other && x->node == rel_node) continue;
        slot = Item{nullptr, x};
        if (!each()) return;
      }
      return;
    }
    const std::vector<const Event*>* found = ix->alias;
    if (!found) {
      const Bucket<const Event*>* b = ix->events.find(key);
      if (!b) return;
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
      if (!each()) return;
    }
  }

  const Value* recall(const ir::Query& q, Env& env, bool* keep) const override {
    PlanState* ps = use_indexes_ ? state_for(q) : nullptr;
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

  void remember(const ir::Query& q, Env& /*env*/, const Value& v) const override {
    PlanState* ps = use_indexes_ ? state_for(q) : nullptr;
    if (!ps || !ps->plan->memoized) return;
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
      if (m && attempts_open_ > 0) {
        memo_undo_.push_back(MemoUndo{ps, m, {}, false, 0, 0});
        undo_count_ = memo_undo_.size();
      }
      return;
    }
    if (attempts_open_ > 0) {
      memo_undo_.push_back(MemoUndo{ps, nullptr, ps->memo, ps->memo_valid, ps->memo_stamp, ps->memo_inputs});
      undo_count_ = memo_undo_.size();
    }
    ps->memo = v;
    ps->memo_valid = true;
    ps->memo_stamp = global_version_;
    ps->memo_inputs = inputs_version(*ps->plan);
  }

  void undo_memos(size_t keep) const override {
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
    undo_count_ = memo_undo_.size();
  }

  Value terminal(int field) const override {
    if (field == 0) return ctx_.terminal.state.empty() ? Value::null() : Value::string(ctx_.terminal.state);
    return ctx_.terminal.exit_code ? Value::integer(*ctx_.terminal.exit_code) : Value::null();
  }
  Value outcome(int field) const override {
    switch (field) {
      case 0: return Value::string(outcome_.status);
      case 1: return outcome_.domain.empty() ? Value::null() : Value::string(outcome_.domain);
      case 2: return outcome_.sub_domain.empty() ? Value::null() : Value::string(outcome_.sub_domain);
      default: return Value::integer(static_cast<int64_t>(outcome_.culprit_nodes.size()));
    }
  }
  Value workload(int field) const override {
    switch (field) {
      case 0: return Value::integer(static_cast<int64_t>(ctx_.nodes.size()));
      case 1: return Value::string(ctx_.workload_id);
      case 2: return ctx_.start ? Value::time(*ctx_.start) : Value::null();
      case 3: return ctx_.end ? Value::time(*ctx_.end) : Value::null();
      case 4: return Value::string(ctx_.scheduler);
      case 5: return Value::string(node_names_);
    }
    return Value::null();
  }
  const Value* workload_ref(int field) const override {
    if (field < 0 || static_cast<size_t>(field) >= workload_values_.size()) return nullptr;
    return &workload_values_[static_cast<size_t>(field)];
  }
  bool is_node(std::string_view name) const override { return workload_node(name); }
  bool covered(const std::string& source, const std::string& node) const override {
    return host_sources_.count({source, node}) > 0;
  }
  double coverage(const std::string& source) const override {
    if (ctx_.nodes.empty()) return 0.0;
    size_t n = 0;
    for (const auto& node : ctx_.nodes) n += host_sources_.count({source, node});
    return static_cast<double>(n) / static_cast<double>(ctx_.nodes.size());
  }

 private:
  // Whether a rule not yet run (or running) reads events of kind k.
  bool live(int32_t k) const { return last_reader_[static_cast<size_t>(k)] >= rule_index_; }
  // Whether a rule after the running one reads kind k (derived events join after their rule).
  bool read_later(int32_t k) const { return last_reader_[static_cast<size_t>(k)] > rule_index_; }

  // Rules reach events only through queries, so a kind no later rule queries
  // can never be seen again: its events, and their index entries, go.
  void free_dead_kinds() {
    for (size_t k = 0; k < storage_.size(); ++k) {
      if (last_reader_[k] != rule_index_) continue;
      // In address order: the list is in time order, which on many nodes
      // jumps across the heap at every step, and each drop touches the
      // event, its line and its fields (a cache and TLB miss each, out of
      // order). The scanner made them in address order.
      auto& dead = by_kind_[k];
      std::sort(dead.begin(), dead.end(), std::less<const Event*>());
      // The blocks an event owns (its fields, its line) lie elsewhere; ask
      // for them a few events ahead, as candidates() does for its filters.
      constexpr size_t kPrefetchShell = 12, kPrefetchOwned = 6;
      for (size_t i = 0; i < dead.size(); ++i) {
        if (i + kPrefetchShell < dead.size()) {
          const char* shell = reinterpret_cast<const char*>(dead[i + kPrefetchShell]);
          __builtin_prefetch(shell);
          __builtin_prefetch(shell + 64);
          __builtin_prefetch(shell + 128);
        }
        if (i + kPrefetchOwned < dead.size()) {
          const Event* ahead = dead[i + kPrefetchOwned];
          __builtin_prefetch(ahead->fields.data());
          __builtin_prefetch(ahead->where.text.data());
        }
        drop(*const_cast<Event*>(dead[i]));  // the engine owns every event
      }
      storage_[k] = {};
      by_kind_[k] = {};
      for (Index* ix : ev_indexes_[k]) {
        ix->events = {};
        ix->alias = nullptr;
        ix->built = false;
      }
    }
  }

  void index(const Event* e) { by_kind_[static_cast<size_t>(e->kind)].push_back(e); }

  // Frees what an event holds; kind -1 marks it as gone.
  static void drop(Event& e) {
    e = Event();
    e.kind = -1;
  }

  // Puts every kind's events into by_kind_ in canonical order. Rules see
  // events only kind by kind, so each kind is sorted on its own, and on a
  // key that decides nearly every comparison with integers: (timed, ts,
  // rank of (host, source, file), line); only events of one line (several
  // extractors) fall through to the full comparison.
  void sort_into_kinds(size_t total) {
    (void)total;
    // Number the (host, source, file) triples; a batch's events share one,
    // so most events reuse the previous event's number.
    using Triple = std::tuple<std::string_view, std::string_view, std::string_view>;
    std::map<Triple, int32_t> ids;
    std::vector<std::vector<int32_t>> file_of(by_kind_.size());  // by kind, like by_kind_: the triple's number
    const Event* prev = nullptr;
    int32_t prev_id = -1;
    for (const auto& batch : batches_)
      for (const auto& e : batch) {
        if (e.kind < 0) continue;
        if (!prev || e.host != prev->host || e.where.source != prev->where.source || e.where.file != prev->where.file) {
          prev_id = ids.try_emplace(Triple(e.host, e.where.source, e.where.file), static_cast<int32_t>(ids.size())).first->second;
          prev = &e;
        }
        by_kind_[static_cast<size_t>(e.kind)].push_back(&e);
        file_of[static_cast<size_t>(e.kind)].push_back(prev_id);
      }
    std::vector<int32_t> rank(ids.size());
    int32_t next = 0;
    for (const auto& [triple, id] : ids) rank[static_cast<size_t>(id)] = next++;  // the map is in lexicographic order
    // One kind at a time, so the keys of only one kind exist at once. A
    // key is two words and the event: its time (sign bit flipped, so that
    // unsigned order is signed order) and its place, the file's rank in the
    // high bits and the line in the low ones. Untimed events sort after
    // all timed ones and are keyed apart, so no time value stands for
    // "none". A place is a monotone image of (file, line): a line or rank
    // too large for its bits is clamped, and events whose places tie are
    // ordered by event_canonical_less, which decides exactly.
    struct Key {
      uint64_t t;
      uint64_t place;
      const Event* e;
    };
    constexpr int kLineBits = 40;
    constexpr uint64_t kMaxLine = (uint64_t{1} << kLineBits) - 1;
    constexpr uint64_t kMaxRank = (uint64_t{1} << (64 - kLineBits)) - 1;
    auto place_of = [&](uint64_t file_rank, int64_t line) {
      if (file_rank >= kMaxRank) return (kMaxRank << kLineBits) | kMaxLine;  // all such places tie
      const uint64_t l = line < 0 ? 0 : std::min<uint64_t>(static_cast<uint64_t>(line), kMaxLine);
      return (file_rank << kLineBits) | l;
    };
    auto less = [](const Key& a, const Key& b) {
      if (a.t != b.t) return a.t < b.t;
      if (a.place != b.place) return a.place < b.place;
      return event_canonical_less(*a.e, *b.e);
    };
    std::vector<Key> keys, untimed;
    for (size_t k = 0; k < by_kind_.size(); ++k) {
      auto& list = by_kind_[k];
      keys.clear();
      untimed.clear();
      keys.reserve(list.size());
      for (size_t i = 0; i < list.size(); ++i) {
        const Event& e = *list[i];
        const uint64_t place = place_of(static_cast<uint64_t>(rank[static_cast<size_t>(file_of[k][i])]), e.where.line);
        if (e.where.ts) keys.push_back({static_cast<uint64_t>(*e.where.ts) ^ (uint64_t{1} << 63), place, &e});
        else untimed.push_back({0, place, &e});
      }
      file_of[k] = {};
      std::sort(keys.begin(), keys.end(), less);
      std::sort(untimed.begin(), untimed.end(), less);
      size_t at = 0;
      for (const Key& key : keys) list[at++] = key.e;
      for (const Key& key : untimed) list[at++] = key.e;
    }
  }


  // ------------------------------------------------------------ plans
  PlanState* state_for(const ir::Query& q) const {
    const auto& plans = program_.query_plans();
    const plan::QueryPlan* p = plans.find(&q);
    return p ? &plan_states_[static_cast<size_t>(p - plans.plans().data())] : nullptr;
  }

  // The versions a memoized plan's value depends on, summed (they only grow).
  uint64_t inputs_version(const plan::QueryPlan& p) const {
    uint64_t v = p.reads_outcome ? outcome_version_ : 0;
    for (int32_t k : p.event_inputs) v += ev_version_[static_cast<size_t>(k)];
    for (int32_t k : p.symptom_inputs) v += sy_version_[static_cast<size_t>(k)];
    return v;
  }
  void changed_symptoms(int32_t kind) {
    ++sy_version_[static_cast<size_t>(kind)];
    ++global_version_;
  }
  void changed_outcome() {
    ++outcome_version_;
    ++global_version_;
  }

  int32_t node_id(std::string_view node) const {
    return *node_ids_.try_emplace(node, static_cast<int32_t>(node_ids_.size())).first;
  }
  // Whether `name` is a node of the workload (a hash lookup, not the ordered set's compares).
  bool workload_node(std::string_view name) const {
    const int32_t id = find_node(name);
    return id >= 0 && id < workload_node_ids_;
  }
  int32_t find_node(std::string_view node) const {
    const int32_t* id = node_ids_.find(node);
    return id ? *id : -1;
  }

  Index* new_index(const plan::QueryPlan& p) const {
    indexes_.push_back(std::make_unique<Index>());
    Index* ix = indexes_.back().get();
    ix->plan = &p;
    ix->env.catalog = &cat_;
    ix->env.regexes = &program_.expression_regexes();
    ix->env.rule = p.rule;
    ix->env.world = this;
    ix->env.native = program_.native();
    ix->env.slots.resize(static_cast<size_t>(std::max(1, p.rule->slot_count)));
    return ix;
  }

  Index* unkeyed(Index& ix) const {
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
  bool candidate_key(Index& ix, const Item& item, std::string& key) const {
    const plan::QueryPlan& p = *ix.plan;
    key.clear();
    if (p.by_node) append_node(key, node_id(item.node()));
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

  // How many infixes one candidate may be filed under; beyond, the index
  // drops its keys (by node only), as for a key of an unexpected type.
  static constexpr size_t kMaxInfixes = 256;

  // Calls f(x) for every x such that `hay` contains prefix + x + suffix
  // (each x once per position pair; duplicates are the caller's to skip).
  // False when there are more than kMaxInfixes.
  template <class F>
  static bool for_each_infix(std::string_view hay, const std::string& prefix, const std::string& suffix, F&& f) {
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

  // Builds (or rebuilds) an index that is missing or stale.
  void fresh(Index& ix) const {
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
      ix.alias = &by_kind_[static_cast<size_t>(q.kinds[0])];
      ix.version = v;
      ix.built = true;
      return;
    }
    std::string key, infix_key;
    bool keys_before = ix.use_keys;
    const plan::KeyPart* infix = ix.use_keys && !ix.plan->keys.empty() && ix.plan->keys.back().infix ? &ix.plan->keys.back() : nullptr;
    Value part = Value::string("");
    for (const Event* e : merged_events(q.kinds)) {
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

  void build_symptom_index(Index& ix) const {
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

  void add_symptom(Index& ix, const Symptom* s) const {
    std::string& key = scratch_key_;
    if (!candidate_key(ix, Item{nullptr, s}, key)) return;
    Bucket<const Symptom*>& b = ix.symptoms[key];
    if (!b.items.empty() && !symptom_order(b.items.back(), s)) b.sorted = false;
    b.items.push_back(s);
  }

  // A new symptom joins every index built over its kind.
  void symptom_created(const Symptom* s) {
    for (Index* ix : sy_indexes_[static_cast<size_t>(s->kind)]) {
      bool keys_before = ix->use_keys;
      add_symptom(*ix, s);
      if (keys_before && !ix->use_keys) build_symptom_index(*ix);
    }
  }

  // A symptom's `first` changed: its buckets must be re-sorted before use.
  void symptom_moved(const Symptom* s) {
    std::string& key = scratch_key_;
    for (Index* ix : sy_indexes_[static_cast<size_t>(s->kind)]) {
      if (!candidate_key(*ix, Item{nullptr, s}, key)) continue;
      if (Bucket<const Symptom*>* b = ix->symptoms.find(key)) b->sorted = false;
    }
  }

  // The events of `kinds` in canonical order (each kind's list already is).
  std::vector<const Event*> merged_events(const std::vector<int32_t>& kinds) const {
    std::vector<const Event*> out;
    auto less = [](const Event* a, const Event* b) { return event_canonical_less(*a, *b); };
    for (int32_t k : kinds) {
      const auto& list = by_kind_[static_cast<size_t>(k)];
      size_t mid = out.size();
      out.insert(out.end(), list.begin(), list.end());
      if (mid > 0) std::inplace_merge(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(mid), out.end(), less);
    }
    return out;
  }

  // Without indexes (use_indexes_ false, or a query without a plan, which
  // the catalog never has): every candidate of the kinds, the relation and
  // `within` applied here, in the query's order.
  void scan(const ir::Query& q, Env& env, CandidateVisitor each) const {
    const bool related = q.relation != ir::NodeRelation::Any;
    const std::string_view rel_node = related ? env.slots[static_cast<size_t>(q.relation_slot)].node() : std::string_view();
    auto& slot = env.slots[static_cast<size_t>(q.bind_slot)];
    auto node_ok = [&](std::string_view node) {
      return !related || (q.relation == ir::NodeRelation::Same) == (node == rel_node);
    };
    if (q.symptom) {
      std::vector<const Symptom*> list;
      for (int32_t k : q.kinds)
        for (const Symptom* x : symptoms_by_kind_[static_cast<size_t>(k)])
          if (x->state == SymptomState::Active && node_ok(x->node) && within_window(q, env, x->first)) list.push_back(x);
      std::sort(list.begin(), list.end(), symptom_order);
      for (const Symptom* x : list) {
        slot = Item{nullptr, x};
        if (!each()) return;
      }
      return;
    }
    for (const Event* e : merged_events(q.kinds)) {
      if (!step()) return;
      if (!node_ok(e->host) || !within_window(q, env, e->ts())) continue;
      slot = Item{e, nullptr};
      if (!each()) return;
    }
  }

  Env make_env(const ir::Rule& r) {
    Env env;
    env.catalog = &cat_;
    env.regexes = &program_.expression_regexes();
    env.rule = &r;
    env.world = this;
    env.native = program_.native();
    env.slots.resize(static_cast<size_t>(std::max(1, r.slot_count)));
    return env;
  }

  // Records what a rule did, for --explain. `describe` returns the entry's
  // (target, detail) and runs only when a trail is collected: formatting an
  // entry costs more than most of the actions it describes, and a normal
  // run emits and demotes hundreds of thousands of times.
  template <class Describe>
  void trail(const ir::Rule& r, const char* action, Describe&& describe) {
    if (!collect_trail_) return;
    auto [target, detail] = describe();
    trail_.push_back({ir::kStageNames[static_cast<size_t>(r.stage)], r.name, action, std::move(target), std::move(detail)});
  }

  // The time an item carried itself (see Symptom::own_first): not a time
  // inherited from a neighbour line.
  static std::optional<int64_t> own_time_of(const Item& it) {
    if (it.event) return own_event_time(*it.event) ? it.event->where.ts : std::nullopt;
    if (it.symptom) return it.symptom->own_first;
    return std::nullopt;
  }

  // Calls f(evidence) for each piece of evidence of an item, without copying.
  template <class F>
  static void for_each_evidence(const Item& it, F&& f) {
    if (it.event) {
      if (it.event->derived_from.empty()) f(it.event->where);
      else
        for (const auto& e : it.event->derived_from) f(e);
    } else if (it.symptom) {
      for (const auto& e : it.symptom->evidence) f(e);
    }
  }

  void run_rule(const ir::Rule& r) {
    Env env = make_env(r);
    std::vector<Item> items;
    if (r.for_query) {
      auto keep = [&]() {
        if (passes_filter(*r.for_query, env)) items.push_back(env.slots[0]);
        return true;
      };
      candidates(*r.for_query, env, keep);
    } else {
      items.push_back(Item{});
    }
    std::vector<Item> kept;
    for (const Item& it : items) {
      if (exhausted_) return;
      env.slots[0] = it;
      bool ok = true;
      for (const auto& w : r.wheres) {
        if (!run_expression(w, env).truthy()) {
          ok = false;
          break;
        }
      }
      // A value computed while the budget ran out depends on the order in
      // which an engine evaluated the operands (native code and the
      // interpreter may differ there): it is never acted on.
      if (exhausted_) return;
      if (ok) kept.push_back(it);
    }
    if (!r.grouped) {
      std::vector<Item> one(1);
      for (const Item& it : kept) {
        if (exhausted_) return;
        if (it.symptom && it.symptom->state != SymptomState::Active) continue;  // changed by this rule
        one[0] = it;
        run_actions(r, env, one, false);
      }
    } else {
      std::map<std::vector<Value>, std::vector<Item>, bool (*)(const std::vector<Value>&, const std::vector<Value>&)> parts(
          [](const std::vector<Value>& a, const std::vector<Value>& b) {
            return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), value_less);
          });
      for (const Item& it : kept) {
        env.slots[0] = it;
        std::vector<Value> key;
        for (const auto& k : r.group_keys) key.push_back(run_expression(k, env));
        if (exhausted_) return;
        parts[key].push_back(it);
      }
      for (auto& [key, members] : parts) {
        std::vector<Item> group;
        std::optional<int64_t> prev;
        for (const Item& it : members) {
          auto t = it.time();
          if (r.group_within_ns > 0 && t && prev && *t - *prev > r.group_within_ns && !group.empty()) {
            run_actions(r, env, group, true);
            group.clear();
          }
          if (t) prev = t;
          group.push_back(it);
        }
        if (!group.empty()) run_actions(r, env, group, true);
      }
    }
    // Derived events join the store after the rule, so a rule never sees
    // its own output while it runs.
    if (!pending_events_.empty()) {
      // Sorted by pointer (an Event is large to move), then moved once into
      // its kind's list in that order.
      std::vector<Event*> order;
      order.reserve(pending_events_.size());
      std::map<int32_t, size_t> touched;  // kind -> derived events of it that a later rule reads
      for (auto& e : pending_events_)
        if (read_later(e.kind)) {
          ++touched[e.kind];
          order.push_back(&e);
        }
      auto less = [](const Event* a, const Event* b) { return event_canonical_less(*a, *b); };
      std::stable_sort(order.begin(), order.end(), less);
      std::map<int32_t, size_t> old_size;  // kind -> its events before these
      for (const auto& [k, n] : touched) old_size[k] = by_kind_[static_cast<size_t>(k)].size();
      for (Event* e : order) {
        auto& list = storage_[static_cast<size_t>(e->kind)];
        list.push_back(std::move(*e));
        index(&list.back());
      }
      pending_events_.clear();
      for (const auto& [k, n] : touched) {
        // Both parts are in canonical order: a stable merge is the stable sort.
        auto& list = by_kind_[static_cast<size_t>(k)];
        std::inplace_merge(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(old_size[k]), list.end(), less);
        ++ev_version_[static_cast<size_t>(k)];  // indexes over the kind rebuild on next use
        ++global_version_;
      }
    }
  }

  Symptom* mutable_symptom(const Symptom* s) {
    // The engine owns every symptom; Items carry const pointers so that
    // expressions cannot change them, and only actions (here) do.
    return const_cast<Symptom*>(s);
  }

  // Reasons and summaries interpolate captures, which can be long: they are
  // cut to limits::kSummaryBytes (evidence lines are cut at kEvidenceText).
  std::string reason_text(const ir::Action& a, Env& env) {
    return a.reason ? truncate_utf8(run_expression(*a.reason, env).s, limits::kSummaryBytes) : std::string();
  }

  void change_state(const ir::Rule& r, const ir::Action& a, Env& env, const Symptom* target, const Item& cause) {
    Symptom* s = mutable_symptom(target);
    if (s->state != SymptomState::Active) return;
    if (cause.symptom == target) return;  // a cause never explains itself
    StateChange c{r.name, reason_text(a, env), cause.symptom ? cause.symptom->id : std::string()};
    bool demote = a.kind == ir::ActionKind::Demote;
    s->state = demote ? SymptomState::Demoted : SymptomState::Scrubbed;
    ++state_changes_;
    (demote ? s->demoted_by : s->scrubbed_by) = c;
    changed_symptoms(s->kind);
    trail(r, demote ? "demote" : "scrub", [&] {
      return std::pair(s->id, c.cause.empty() ? c.reason : fmt::format("{} (cause: {})", c.reason, c.cause));
    });
  }

  void run_actions(const ir::Rule& r, Env& env, const std::vector<Item>& group, bool grouped) {
    env.slots[0] = group.front();
    env.group = grouped ? &group : nullptr;
    const Item cause = group.front();
    for (const auto& a : r.actions) {
      switch (a.kind) {
        case ir::ActionKind::Emit: emit(r, a, env, group); break;
        case ir::ActionKind::Symptom: symptom(r, a, env, group); break;
        case ir::ActionKind::Demote:
        case ir::ActionKind::Scrub: {
          if (a.query) {
            std::vector<const Symptom*> hits;
            auto hit = [&]() {
              if (passes_filter(*a.query, env)) hits.push_back(env.slots[static_cast<size_t>(a.query->bind_slot)].symptom);
              return true;
            };
            candidates(*a.query, env, hit);
            for (const Symptom* s : hits) {
              env.slots[static_cast<size_t>(a.query->bind_slot)] = Item{nullptr, s};
              change_state(r, a, env, s, cause);
            }
          } else if (const Symptom* s = env.slots[static_cast<size_t>(a.target_slot)].symptom) {
            // `demote x because ...`: the bound symptom itself has no cause link.
            change_state(r, a, env, s, Item{});
          }
          break;
        }
        case ir::ActionKind::SetPriority: {
          const Symptom* s = env.slots[static_cast<size_t>(a.target_slot)].symptom;
          Value v = run_expression(*a.value, env);
          if (s && !v.is_null() && s->priority != v.i) {
            trail(r, "priority", [&] { return std::pair(s->id, fmt::format("{} -> {}", s->priority, v.i)); });
            mutable_symptom(s)->priority = v.i;
            changed_symptoms(s->kind);
          }
          break;
        }
        case ir::ActionKind::Classify: {
          const Symptom* s = env.slots[static_cast<size_t>(a.target_slot)].symptom;
          if (s && s->state == SymptomState::Active && !s->classification) {
            mutable_symptom(s)->classification = std::make_pair(a.domain, a.sub_domain);
            trail(r, "classify", [&] { return std::pair(s->id, a.domain + " / " + a.sub_domain); });
          }
          break;
        }
        case ir::ActionKind::SetOutcome: {
          std::string reason = reason_text(a, env);
          outcome_.status = a.status;
          if (!a.domain.empty()) {
            outcome_.domain = a.domain;
            outcome_.sub_domain = a.sub_domain;
          }
          if (a.status != "attributed" && a.status != "ambiguous") {
            if (a.domain.empty()) {
              outcome_.domain.clear();
              outcome_.sub_domain.clear();
            }
            outcome_.culprit_nodes.clear();
            if (a.status == "no_failure") {
              outcome_.root_cause.clear();
              outcome_.root_cause_summary.clear();
            }
          }
          outcome_.overridden_by = r.name;
          outcome_.override_reason = reason;
          changed_outcome();
          trail(r, "set outcome", [&] { return std::pair(a.status, reason); });
          break;
        }
      }
    }
    env.group = nullptr;
  }

  void emit(const ir::Rule& r, const ir::Action& a, Env& env, const std::vector<Item>& group) {
    Event ev;
    ev.kind = a.kind_id;
    ev.producer = r.name;
    const Item& first = group.front();
    std::string node(first.node());
    if (a.on_job) node.clear();
    if (a.node) node = run_expression(*a.node, env).s;
    ev.control_plane = !node.empty() && !workload_node(node);
    size_t evidence = 0;
    for (const Item& it : group) {
      for_each_evidence(it, [&](const Evidence&) { ++evidence; });
      if (evidence >= kMaxDerivedEvidence) break;
    }
    ev.derived_from.reserve(std::min(evidence, kMaxDerivedEvidence));
    for (const Item& it : group)
      for_each_evidence(it, [&](const Evidence& e) {
        if (ev.derived_from.size() < kMaxDerivedEvidence) ev.derived_from.push_back(e);
      });
    if (!ev.derived_from.empty()) ev.where = ev.derived_from.front();
    // The node's name, shared with the first item's when it is the same.
    if (first.event && first.event->host == node) ev.host = first.event->host;
    else if (ev.where.host == node) ev.host = ev.where.host;
    else ev.host = node;
    ev.where.host = ev.host;
    std::optional<int64_t> t, own;
    for (const Item& it : group) {
      auto ti = it.time();
      if (ti && (!t || *ti < *t)) t = ti;
      auto oi = own_time_of(it);
      if (oi && (!own || *oi < *own)) own = oi;
    }
    ev.where.ts = t;
    // A derived event's time is its own when its earliest item's was.
    if (t) ev.where.ts_origin = own && *own == *t ? "rule" : "inherited";
    ev.fields.assign(cat_.event_kinds[static_cast<size_t>(a.kind_id)].fields.size(), Value::null());
    for (const auto& f : a.fields) ev.fields[static_cast<size_t>(f.slot)] = run_expression(f.value, env);
    trail(r, "emit", [&] {
      return std::pair(fmt::format("{}@{}", cat_.event_kinds[static_cast<size_t>(a.kind_id)].name, node.empty() ? "job" : node),
                       fmt::format("from {} item{}", group.size(), group.size() == 1 ? "" : "s"));
    });
    pending_events_.push_back(std::move(ev));
  }

  void symptom(const ir::Rule& r, const ir::Action& a, Env& env, const std::vector<Item>& group) {
    const Item& first = group.front();
    std::string node(first.node());
    if (a.on_job) node.clear();
    if (a.node) node = run_expression(*a.node, env).s;
    std::string key;
    if (a.key) {
      Value k = run_expression(*a.key, env);
      if (!k.is_null()) key = value_to_text(k);
      // A key is part of the symptom's id, printed wherever it is named: a
      // long one (a capture) keeps its head and a digest of the whole, so
      // ids stay short and distinct keys stay distinct.
      if (key.size() > 256) key = truncate_utf8(key, 200) + sha256_hex(key).substr(0, 16);
    }
    const std::string& kind_name = cat_.symptom_kinds[static_cast<size_t>(a.kind_id)].name;
    // KIND@NODE[#KEY], built in a buffer kept across calls: most calls merge
    // into an existing symptom and need the id only to find it.
    std::string& id = id_buf_;
    id.assign(kind_name);
    id += '@';
    id += node.empty() ? std::string_view("job") : std::string_view(node);
    if (!key.empty()) {
      id += '#';
      id += key;
    }
    Symptom** known = symptom_ids_.find(id);
    Symptom* s = nullptr;
    bool created = false;
    if (!known) {
      Symptom fresh;
      fresh.id = id;
      fresh.kind = a.kind_id;
      fresh.kind_name = kind_name;
      fresh.node = node;
      fresh.control_plane = !node.empty() && !workload_node(node);
      fresh.key = key;
      fresh.rule = r.name;
      if (a.priority) {
        Value p = run_expression(*a.priority, env);
        if (!p.is_null()) fresh.priority = p.i;
      }
      fresh.fields.assign(cat_.symptom_kinds[static_cast<size_t>(a.kind_id)].fields.size(), Value::null());
      for (const auto& f : a.fields) fresh.fields[static_cast<size_t>(f.slot)] = run_expression(f.value, env);
      fresh.summary = truncate_utf8(a.summary ? run_expression(*a.summary, env).s : id, limits::kSummaryBytes);
      symptoms_.push_back(std::move(fresh));
      s = &symptoms_.back();
      symptom_ids_.try_emplace(id, s);
      symptoms_by_kind_[static_cast<size_t>(a.kind_id)].push_back(s);
      trail(r, "symptom", [&] { return std::pair(s->id, s->summary); });
      created = true;
    } else {
      s = *known;
    }
    // `at` gives the time of this evidence (e.g. the instant a banner states),
    // instead of the items' line times; it counts as their own time.
    std::optional<int64_t> at;
    if (a.at) {
      Value v = run_expression(*a.at, env);
      if (v.type == Type::Time) at = v.i;
    }
    std::optional<int64_t> first_before = s->first;
    for (const Item& item : group) {
      auto t = at ? at : item.time();
      auto own = at ? at : own_time_of(item);
      if (t && (!s->first || *t < *s->first)) s->first = t;
      if (t && (!s->last || *t > *s->last)) s->last = t;
      if (own && (!s->own_first || *own < *s->own_first)) s->own_first = own;
      s->count += item.symptom ? item.symptom->count : 1;
      for_each_evidence(item, [&](const Evidence& e) {
        // The place is that of the earliest evidence item in canonical order
        // (time, untimed last, then file and line), whatever order rules add it in.
        // Compared in place: most items are not earlier, and need no string.
        if (s->evidence_total == 0 || time_less(e.ts, s->place_ts) ||
            (e.ts == s->place_ts && place_before(e, s->place, s->place_line))) {
          s->place.clear();
          s->place.append(e.host).append("/").append(e.source).append("/").append(e.file);
          s->place_line = e.line;
          s->place_ts = e.ts;
          s->place_boot = e.boot;
          s->file = e.file;
          s->source = e.source;
        }
        ++s->evidence_total;
        if (s->evidence.size() < kMaxEvidencePerSymptom) s->evidence.push_back(e);
        note_source(*s, e.source);
      });
    }
    changed_symptoms(s->kind);
    if (created) symptom_created(s);
    else if (s->first != first_before) symptom_moved(s);
  }

  void compute_outcome() {
    std::map<std::pair<std::string, std::string>, std::vector<const Symptom*>> classes;
    for (const auto& s : symptoms_)
      if (s.state == SymptomState::Active && s.classification) classes[*s.classification].push_back(&s);
    Outcome o;
    for (auto& [cls, list] : classes) {
      Candidate c;
      c.domain = cls.first;
      c.sub_domain = cls.second;
      std::set<std::string> nodes;
      for (const Symptom* s : list) {
        if (!s->node.empty() && !s->control_plane) nodes.insert(s->node);
        c.symptoms.push_back(s->id);
      }
      std::sort(c.symptoms.begin(), c.symptoms.end());
      c.nodes.assign(nodes.begin(), nodes.end());
      o.candidates.push_back(std::move(c));
    }
    if (classes.empty()) {
      bool completed = ctx_.terminal.state == "COMPLETED" && ctx_.terminal.exit_code.value_or(0) == 0;
      o.status = completed ? "no_failure" : "unattributed";
    } else if (classes.size() == 1) {
      auto& [cls, list] = *classes.begin();
      o.status = "attributed";
      o.domain = cls.first;
      o.sub_domain = cls.second;
      o.culprit_nodes = o.candidates.front().nodes;
      std::vector<const Symptom*> sorted = list;
      std::sort(sorted.begin(), sorted.end(), symptom_order);
      o.root_cause = sorted.front()->id;
      o.root_cause_summary = sorted.front()->summary;
    } else {
      o.status = "ambiguous";
    }
    outcome_ = std::move(o);
    changed_outcome();
  }

  const Program& program_;
  const ir::Catalog& cat_;
  const WorkloadContext& ctx_;
  std::set<std::string> nodes_;        // the workload's nodes, in order (for node_names_)
  std::string node_names_;             // workload.node_names: the nodes, sorted, joined with ','
  std::vector<Value> workload_values_; // workload(f) for every field, for workload_ref()
  std::set<std::pair<std::string, std::string>> host_sources_;
  std::vector<EventList> batches_;     // the events as scanned; see run()
  std::vector<EventList> storage_;     // by kind: derived events (they never move once added)
  std::vector<int64_t> last_reader_;   // by event kind: index of the last rule that queries it, -1 for none
  int64_t rule_index_ = 0;             // the rule running now (index into cat_.rules)
  std::vector<double> rule_ms_;        // by rule: its wall time (EngineResult::rule_ms)
  bool collect_trail_ = true;
  bool use_indexes_ = true;            // false: every query scans (the reference the indexes must agree with)
  uint64_t step_budget_ = 0;           // evaluation steps this run may take (limits::eval_steps_for)
  // (steps_ and exhausted_, the steps taken and whether the budget is spent,
  // are World's: a bailed native attempt restores them.)
  // What remember() changed while a native attempt was open, to undo it if
  // the attempt bails (World::begin_attempt): a parameter memo entry to mark
  // not valid, or a closed memo's previous state.
  struct MemoUndo {
    PlanState* ps;
    PlanState::ParamMemo* param;  // null: the closed memo, restored from below
    Value memo;
    bool valid;
    uint64_t stamp, inputs;
  };
  mutable std::vector<MemoUndo> memo_undo_;
  std::string exhausted_rule_;         // the rule that was running when it ran out
  std::vector<Event> pending_events_;
  std::vector<std::vector<const Event*>> by_kind_;   // canonical order
  std::deque<Symptom> symptoms_;
  StringMap<Symptom*> symptom_ids_;
  std::vector<std::vector<const Symptom*>> symptoms_by_kind_;  // creation order

  // Query plans and their indexes (candidates() builds lazily, hence mutable).
  mutable std::vector<std::unique_ptr<Index>> indexes_;
  mutable std::vector<PlanState> plan_states_;              // by plan, as in program_.query_plans()
  mutable std::vector<Index*> index_by_id_;                 // by QueryPlan::index_id; null until first used
  mutable std::vector<std::vector<Index*>> ev_indexes_;     // by event kind: indexes over it
  mutable std::vector<std::vector<Index*>> sy_indexes_;     // by symptom kind: built indexes over it
  mutable StringMap<int32_t> node_ids_;  // nodes and hosts, numbered as met
  int32_t workload_node_ids_ = 0;  // node_ids_ below this are the workload's nodes
  mutable Value key_value_;                                 // candidate_key() scratch
  std::string id_buf_;                                      // symptom(): the id being looked up
  mutable std::string scratch_key_;
  // Versions of what memoized query values depend on; they only grow.
  std::vector<uint64_t> ev_version_, sy_version_;
  uint64_t outcome_version_ = 0, global_version_ = 0;
  uint64_t state_changes_ = 0;         // symptoms demoted or scrubbed so far (Bucket::swept)
  Outcome outcome_;
  std::vector<TrailEntry> trail_;
};

}  // namespace

EngineResult run_engine(const Program& program, const WorkloadContext& context,
                        const std::vector<std::pair<std::string, std::string>>& host_sources, std::vector<Event> events) {
  std::vector<EventList> batches(1);
  for (auto& e : events) batches[0].push_back(std::move(e));
  events = {};
  return run_engine(program, context, host_sources, std::move(batches));
}

EngineResult run_engine(const Program& program, const WorkloadContext& context,
                        const std::vector<std::pair<std::string, std::string>>& host_sources,
                        std::vector<EventList> batches, bool collect_trail, bool use_indexes, uint64_t step_budget) {
  Engine engine(program, context, host_sources, collect_trail, use_indexes, step_budget);
  return engine.run(std::move(batches));
}

}  // namespace culprit
