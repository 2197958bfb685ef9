#include "runtime/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <set>

#include "base/limits.h"
#include "base/sha256.h"
#include "base/text_util.h"
#include "base/vocabulary.h"
#include "runtime/bundle.h"
#include "runtime/canonical_order.h"
#include "runtime/event_store.h"
#include "runtime/interpreter.h"
#include "runtime/outcome.h"
#include "runtime/query_index.h"
#include "runtime/string_map.h"

namespace culprit {

namespace {

constexpr size_t kMaxEvidencePerSymptom = 20;
constexpr size_t kMaxDerivedEvidence = 32;

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
        collect_trail_(collect_trail), use_indexes_(use_indexes), step_budget_(step_budget), events_(cat_),
        indexes_(program, *this, events_, symptoms_by_kind_, node_numbers_) {
    for (const auto& n : nodes_) node_names_ += (node_names_.empty() ? "" : ",") + n;
    for (int f = 0; f < 6; ++f) workload_values_.push_back(workload(f));  // none changes during a run
    for (const auto& [source, host] : hs) host_sources_.insert({source, host});
    symptoms_by_kind_.resize(cat_.symptom_kinds.size());
    for (const auto& n : ctx_.nodes) node_numbers_.number(n);
    workload_node_ids_ = static_cast<int32_t>(node_numbers_.size());  // ids below it are workload nodes
  }

  // Runs the rules in catalog order (which is stage order), the outcome
  // computed before the first post_outcome rule; a rule that spends the
  // step budget ends the run. The events live in the EventStore, which
  // frees each kind after its last reader, so memory falls as the stages
  // advance.
  EngineResult run(std::vector<EventList> batches) {
    const size_t received = events_.take(std::move(batches));
    if (step_budget_ == 0) step_budget_ = limits::eval_steps_for(received);
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
      for (int32_t k : events_.free_dead_kinds(rule_index_)) indexes_.events_freed(k);
      ++rule_index_;
    }
    if (exhausted_) {
      Outcome o;
      o.status = vocab::status::kUnattributed;
      outcome_ = std::move(o);
    } else if (!outcome_done) {
      compute_outcome();
    }

    // Symptoms copied their evidence; the events are no longer needed, and
    // freeing them first keeps them from overlapping with the result.
    indexes_.clear();
    events_.clear();
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
    std::vector<char> affected(node_numbers_.size(), 0);
    for (size_t i = 0; i < n; ++i) {
      Symptom& s = symptoms_[i];
      by_id.emplace_back(s.id, i);
      if (s.state != SymptomState::Scrubbed && !s.node.empty()) {
        const int32_t id = node_numbers_.find(s.node);
        if (id >= 0 && id < workload_node_ids_) affected[static_cast<size_t>(id)] = 1;
      }
      for (const auto& f : cat_.symptom_kinds[static_cast<size_t>(s.kind)].fields) s.field_names.push_back(f.name);
    }
    std::sort(by_id.begin(), by_id.end());  // ids are unique
    std::vector<size_t> from(n);  // position p takes the symptom now at from[p]
    for (size_t p = 0; p < n; ++p) from[p] = by_id[p].second;
    by_id = {};  // its views die with the moves below
    permute(symptoms_, from);
    node_numbers_.for_each([&](std::string_view name, int32_t id) {
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
    if (!use_indexes_ || !indexes_.candidates(q, env, each)) scan(q, env, each);
  }

  // Memoized query values live with the indexes; without indexes nothing
  // is memoized (the plain evaluation the indexes must agree with).
  const Value* recall(const ir::Query& q, Env& env, bool* keep) const override {
    if (!use_indexes_) {
      *keep = false;
      return nullptr;
    }
    return indexes_.recall(q, env, keep);
  }

  void remember(const ir::Query& q, Env& /*env*/, const Value& v) const override {
    if (use_indexes_ && indexes_.remember(q, v, attempts_open_ > 0)) undo_count_ = indexes_.undo_log_size();
  }

  void undo_memos(size_t keep) const override {
    indexes_.undo_memos(keep);
    undo_count_ = indexes_.undo_log_size();
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
      case 3: return Value::integer(static_cast<int64_t>(outcome_.culprit_nodes.size()));
      default: return Value::string(outcome_.basis);
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
  std::string_view host_node(std::string_view host) const override {
    auto it = host_nodes_.find(host);
    if (it == host_nodes_.end()) {
      std::string node = canonical_host(ctx_, std::string(host));
      if (node.starts_with(kAmbiguousHost)) node.clear();  // two nodes' short name: not guessed
      it = host_nodes_.emplace(std::string(host), std::move(node)).first;
    }
    return it->second;
  }
  std::string_view rank_node(int64_t rank) const override { return culprit::rank_node(ctx_, rank); }
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
  void changed_symptoms(int32_t kind) { indexes_.symptoms_changed(kind); }
  void changed_outcome() { indexes_.outcome_changed(); }

  // Whether `name` is a node of the workload (a hash lookup, not the ordered set's compares).
  bool workload_node(std::string_view name) const {
    const int32_t id = node_numbers_.find(name);
    return id >= 0 && id < workload_node_ids_;
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
    for (const Event* e : events_.merged(q.kinds)) {
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
    std::string at;
    if (r.where.file && r.where.line) {
      std::string_view path = r.where.file->path;
      size_t slash = path.find_last_of('/');
      at = fmt::format("{}:{}", slash == std::string_view::npos ? path : path.substr(slash + 1), r.where.line);
    }
    trail_.push_back({ir::kStageNames[static_cast<size_t>(r.stage)], r.name, action, std::move(target), std::move(detail), std::move(at)});
  }

  // The time an item carried itself (see Symptom::own_first): not a time
  // inherited from a neighbour line.
  static std::optional<int64_t> own_time_of(const Item& it) {
    if (it.event) return own_event_time(*it.event) ? it.event->where.ts : std::nullopt;
    if (it.symptom) return it.symptom->own_first;
    return std::nullopt;
  }

  // Whether an item's node is only where its lines were collected (Event::unplaced).
  static bool item_unplaced(const Item& it) {
    if (it.event) return it.event->unplaced;
    return it.symptom && it.symptom->node_unplaced;
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
    for (int32_t k : events_.add_derived(pending_events_, rule_index_)) indexes_.events_changed(k);
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
    indexes_.symptom_left(s);
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
            indexes_.symptom_reprioritized();
          }
          break;
        }
        case ir::ActionKind::Classify: {
          const Symptom* s = env.slots[static_cast<size_t>(a.target_slot)].symptom;
          if (s && s->state == SymptomState::Active && !s->classification) {
            mutable_symptom(s)->classification = std::make_pair(a.domain, a.sub_domain);
            mutable_symptom(s)->generic = a.generic;
            mutable_symptom(s)->class_on_job = a.on_job;
            trail(r, "classify", [&] { return std::pair(s->id, a.domain + " / " + a.sub_domain); });
          }
          break;
        }
        case ir::ActionKind::SetOutcome: {
          std::string reason = reason_text(a, env);
          set_outcome(outcome_, a, r.name, reason);
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
    // Unplaced when it was put on its items' node and none of them says it
    // was written there.
    ev.unplaced = !a.node && !a.on_job && !node.empty() &&
                  std::all_of(group.begin(), group.end(), [&](const Item& it) { return item_unplaced(it) && it.node() == node; });
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
    // Its node is known when a rule named it (`on`, a job-level symptom) or
    // any of its items was written on its node (not only collected there:
    // Event::unplaced, Symptom::node_unplaced).
    bool placed = a.node || a.on_job || node.empty() || (!created && !s->node_unplaced);
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
      placed = placed || !item_unplaced(item) || item.node() != node;
    }
    s->node_unplaced = !placed;
    changed_symptoms(s->kind);
    if (created) indexes_.symptom_created(s);
    else if (s->first != first_before) indexes_.symptom_moved(s);
  }

  void compute_outcome() {
    outcome_ = outcome_of(symptoms_, ctx_, [this](const std::string& source, const std::string& node) {
      return host_sources_.count({source, node}) > 0;
    });
    changed_outcome();
  }

  const Program& program_;
  const ir::Catalog& cat_;
  const WorkloadContext& ctx_;
  std::set<std::string> nodes_;        // the workload's nodes, in order (for node_names_)
  std::string node_names_;             // workload.node_names: the nodes, sorted, joined with ','
  // host_node()'s answers, by host as the evidence wrote it (canonical_host
  // is a walk over the nodes and their aliases; a rule asks about the same
  // few hosts many times).
  mutable std::map<std::string, std::string, std::less<>> host_nodes_;
  std::vector<Value> workload_values_; // workload(f) for every field, for workload_ref()
  std::set<std::pair<std::string, std::string>> host_sources_;
  int64_t rule_index_ = 0;             // the rule running now (index into cat_.rules)
  std::vector<double> rule_ms_;        // by rule: its wall time (EngineResult::rule_ms)
  bool collect_trail_ = true;
  bool use_indexes_ = true;            // false: every query scans (the reference the indexes must agree with)
  uint64_t step_budget_ = 0;           // evaluation steps this run may take (limits::eval_steps_for)
  // (steps_ and exhausted_, the steps taken and whether the budget is spent,
  // are World's: a bailed native attempt restores them.)
  std::string exhausted_rule_;         // the rule that was running when it ran out
  EventStore events_;                  // scanned and derived events, by kind
  std::vector<Event> pending_events_;  // derived by the running rule; they join after it
  std::deque<Symptom> symptoms_;
  StringMap<Symptom*> symptom_ids_;
  std::vector<std::vector<const Symptom*>> symptoms_by_kind_;  // creation order
  NodeNumbers node_numbers_;           // nodes and hosts, numbered as met
  int32_t workload_node_ids_ = 0;      // node numbers below this are the workload's nodes
  // Indexes and memos over the events and symptoms above (candidates()
  // builds them lazily, hence mutable).
  mutable QueryIndexes indexes_;
  std::string id_buf_;                 // symptom(): the id being looked up
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
