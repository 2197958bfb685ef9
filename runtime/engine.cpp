#include "runtime/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <tuple>

#include "base/limits.h"
#include "base/sha256.h"
#include "base/text_util.h"
#include "runtime/interpreter.h"

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

class Engine final : public World {
 public:
  Engine(const Program& program, const WorkloadContext& ctx, const std::vector<std::pair<std::string, std::string>>& hs,
         bool collect_trail)
      : program_(program), cat_(program.catalog()), ctx_(ctx), nodes_(ctx.nodes.begin(), ctx.nodes.end()),
        collect_trail_(collect_trail) {
    for (const auto& [source, host] : hs) host_sources_.insert({source, host});
    by_kind_.resize(cat_.event_kinds.size());
    storage_.resize(cat_.event_kinds.size());
    last_reader_ = last_event_readers(cat_);
    symptoms_by_kind_.resize(cat_.symptom_kinds.size());
  }

  // Events are regrouped by kind (moved, not copied, each batch freed as
  // soon as it is emptied) so that a kind can be freed as a whole once the
  // last rule that reads it has run (see last_reader_); the engine works on
  // pointers in canonical order. Event buffers never move: only whole
  // vectors are added to storage_.
  EngineResult run(std::vector<std::vector<Event>> batches) {
    std::vector<size_t> per_kind(cat_.event_kinds.size(), 0);
    for (const auto& b : batches)
      for (const auto& e : b) ++per_kind[static_cast<size_t>(e.kind)];
    size_t total = 0;
    for (size_t k = 0; k < per_kind.size(); ++k) {
      if (!live(static_cast<int32_t>(k))) continue;  // no rule reads it: dropped with its batch
      storage_[k].emplace_back().reserve(per_kind[k]);
      total += per_kind[k];
    }
    for (auto& b : batches) {
      for (auto& e : b)
        if (live(e.kind)) storage_[static_cast<size_t>(e.kind)].back().push_back(std::move(e));
      b = {};
    }
    batches = {};
    std::vector<const Event*> order;
    order.reserve(total);
    for (const auto& chunks : storage_)
      for (const auto& chunk : chunks)
        for (const auto& e : chunk) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const Event* a, const Event* b) { return event_canonical_less(*a, *b); });
    for (const Event* e : order) index(e);
    order = {};
    bool outcome_done = false;
    for (const auto& rule : cat_.rules) {
      if (!outcome_done && rule.stage == ir::Stage::PostOutcome) {
        compute_outcome();
        outcome_done = true;
      }
      run_rule(rule);
      free_dead_kinds();
      ++rule_index_;
    }
    if (!outcome_done) compute_outcome();

    // Symptoms copied their evidence; the events are no longer needed, and
    // freeing them first keeps them from overlapping with the result.
    by_kind_ = {};
    by_kind_node_ = {};
    storage_ = {};
    EngineResult out;
    std::vector<Symptom*> all;
    all.reserve(symptoms_.size());
    for (auto& s : symptoms_) all.push_back(&s);
    std::sort(all.begin(), all.end(), [](const Symptom* a, const Symptom* b) { return a->id < b->id; });
    std::set<std::string> affected;
    out.symptoms.reserve(all.size());
    for (Symptom* s : all) {
      if (s->state != SymptomState::Scrubbed && !s->node.empty() && nodes_.count(s->node)) affected.insert(s->node);
      out.symptoms.push_back(std::move(*s));
      for (const auto& f : cat_.symptom_kinds[static_cast<size_t>(out.symptoms.back().kind)].fields)
        out.symptoms.back().field_names.push_back(f.name);
    }
    symptoms_.clear();
    symptom_ids_.clear();
    out.affected_nodes.assign(affected.begin(), affected.end());
    out.outcome = std::move(outcome_);
    out.trail = std::move(trail_);
    return out;
  }

  // ------------------------------------------------------------- World
  void candidates(const ir::Query& q, Env& env, const std::function<bool()>& each) const override {
    const std::string* rel_node = nullptr;
    if (q.relation != ir::NodeRelation::Any) rel_node = &env.slots[static_cast<size_t>(q.relation_slot)].node();
    auto& slot = env.slots[static_cast<size_t>(q.bind_slot)];
    if (q.symptom) {
      std::vector<const Symptom*> list;
      for (int32_t k : q.kinds)
        for (const Symptom* s : symptoms_by_kind_[static_cast<size_t>(k)]) {
          if (s->state != SymptomState::Active) continue;
          if (rel_node && (q.relation == ir::NodeRelation::Same) != (s->node == *rel_node)) continue;
          if (!within_window(q, env, s->first)) continue;
          list.push_back(s);
        }
      std::sort(list.begin(), list.end(), symptom_order);
      for (const Symptom* s : list) {
        slot = Item{nullptr, s};
        if (!each()) return;
      }
      return;
    }
    std::vector<const Event*> list;
    for (int32_t k : q.kinds) {
      const std::vector<const Event*>* src = &by_kind_[static_cast<size_t>(k)];
      if (q.relation == ir::NodeRelation::Same) {
        auto it = by_kind_node_.find({k, *rel_node});
        if (it == by_kind_node_.end()) continue;
        src = &it->second;
      }
      auto begin = src->begin(), end = src->end();
      if (q.has_within) {
        // Timed events come first and are sorted by time: narrow by binary search.
        auto anchor = env.slots[static_cast<size_t>(q.anchor_slot)].time();
        if (!anchor) continue;
        int64_t lo = q.direction == ir::WithinDirection::After ? *anchor : *anchor - q.within_ns;
        int64_t hi = q.direction == ir::WithinDirection::Before ? *anchor : *anchor + q.within_ns;
        auto timed_end = std::partition_point(begin, end, [](const Event* e) { return e->where.ts.has_value(); });
        begin = std::lower_bound(begin, timed_end, lo, [](const Event* e, int64_t t) { return *e->where.ts < t; });
        end = std::upper_bound(begin, timed_end, hi, [](int64_t t, const Event* e) { return t < *e->where.ts; });
      }
      for (auto it = begin; it != end; ++it) {
        if (q.relation == ir::NodeRelation::Other && (*it)->host == *rel_node) continue;
        list.push_back(*it);
      }
    }
    if (q.kinds.size() > 1)
      std::sort(list.begin(), list.end(), [](const Event* a, const Event* b) { return event_canonical_less(*a, *b); });
    for (const Event* e : list) {
      slot = Item{e, nullptr};
      if (!each()) return;
    }
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
    }
    return Value::null();
  }
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
      storage_[k] = {};
      by_kind_[k] = {};
      auto kind = static_cast<int32_t>(k);
      by_kind_node_.erase(by_kind_node_.lower_bound({kind, std::string()}), by_kind_node_.lower_bound({kind + 1, std::string()}));
    }
  }

  void index(const Event* e) {
    by_kind_[static_cast<size_t>(e->kind)].push_back(e);
    by_kind_node_[{e->kind, e->host}].push_back(e);
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

  void trail(const ir::Rule& r, std::string action, std::string target, std::string detail) {
    if (!collect_trail_) return;
    trail_.push_back({ir::kStageNames[static_cast<size_t>(r.stage)], r.name, std::move(action), std::move(target), std::move(detail)});
  }

  static std::vector<Evidence> evidence_of(const Item& it) {
    if (it.event) {
      if (!it.event->derived_from.empty()) return it.event->derived_from;
      return {it.event->where};
    }
    if (it.symptom) return it.symptom->evidence;
    return {};
  }

  void run_rule(const ir::Rule& r) {
    Env env = make_env(r);
    std::vector<Item> items;
    if (r.for_query) {
      candidates(*r.for_query, env, [&]() {
        if (passes_filter(*r.for_query, env)) items.push_back(env.slots[0]);
        return true;
      });
    } else {
      items.push_back(Item{});
    }
    std::vector<Item> kept;
    for (const Item& it : items) {
      env.slots[0] = it;
      bool ok = true;
      for (const auto& w : r.wheres) {
        if (!run_expression(w, env).truthy()) {
          ok = false;
          break;
        }
      }
      if (ok) kept.push_back(it);
    }
    if (!r.grouped) {
      for (const Item& it : kept) {
        if (it.symptom && it.symptom->state != SymptomState::Active) continue;  // changed by this rule
        std::vector<Item> one{it};
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
      std::sort(pending_events_.begin(), pending_events_.end(), event_canonical_less);
      std::map<int32_t, size_t> touched;  // kind -> derived events of it that a later rule reads
      for (const auto& e : pending_events_)
        if (read_later(e.kind)) ++touched[e.kind];
      for (const auto& [k, n] : touched) storage_[static_cast<size_t>(k)].emplace_back().reserve(n);
      for (auto& e : pending_events_) {
        if (!read_later(e.kind)) continue;
        auto& chunk = storage_[static_cast<size_t>(e.kind)].back();
        chunk.push_back(std::move(e));
        index(&chunk.back());
      }
      pending_events_.clear();
      auto less = [](const Event* a, const Event* b) { return event_canonical_less(*a, *b); };
      for (const auto& [k, n] : touched) std::stable_sort(by_kind_[static_cast<size_t>(k)].begin(), by_kind_[static_cast<size_t>(k)].end(), less);
      for (auto& [key, list] : by_kind_node_)
        if (touched.count(key.first)) std::stable_sort(list.begin(), list.end(), less);
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
    (demote ? s->demoted_by : s->scrubbed_by) = c;
    trail(r, demote ? "demote" : "scrub", s->id, c.cause.empty() ? c.reason : fmt::format("{} (cause: {})", c.reason, c.cause));
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
            candidates(*a.query, env, [&]() {
              if (passes_filter(*a.query, env)) hits.push_back(env.slots[static_cast<size_t>(a.query->bind_slot)].symptom);
              return true;
            });
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
            trail(r, "priority", s->id, fmt::format("{} -> {}", s->priority, v.i));
            mutable_symptom(s)->priority = v.i;
          }
          break;
        }
        case ir::ActionKind::Classify: {
          const Symptom* s = env.slots[static_cast<size_t>(a.target_slot)].symptom;
          if (s && s->state == SymptomState::Active && !s->classification) {
            mutable_symptom(s)->classification = std::make_pair(a.domain, a.sub_domain);
            trail(r, "classify", s->id, a.domain + " / " + a.sub_domain);
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
          trail(r, "set outcome", a.status, reason);
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
    std::string node = first.node();
    if (a.on_job) node.clear();
    if (a.node) node = run_expression(*a.node, env).s;
    ev.host = node;
    ev.control_plane = !node.empty() && !nodes_.count(node);
    for (const Item& it : group)
      for (auto& e : evidence_of(it))
        if (ev.derived_from.size() < kMaxDerivedEvidence) ev.derived_from.push_back(std::move(e));
    if (!ev.derived_from.empty()) ev.where = ev.derived_from.front();
    ev.where.host = node;
    std::optional<int64_t> t;
    for (const Item& it : group) {
      auto ti = it.time();
      if (ti && (!t || *ti < *t)) t = ti;
    }
    ev.where.ts = t;
    ev.fields.assign(cat_.event_kinds[static_cast<size_t>(a.kind_id)].fields.size(), Value::null());
    for (const auto& f : a.fields) ev.fields[static_cast<size_t>(f.slot)] = run_expression(f.value, env);
    trail(r, "emit", fmt::format("{}@{}", cat_.event_kinds[static_cast<size_t>(a.kind_id)].name, node.empty() ? "job" : node),
          fmt::format("from {} item{}", group.size(), group.size() == 1 ? "" : "s"));
    pending_events_.push_back(std::move(ev));
  }

  void symptom(const ir::Rule& r, const ir::Action& a, Env& env, const std::vector<Item>& group) {
    const Item& first = group.front();
    std::string node = first.node();
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
    std::string id = fmt::format("{}@{}{}{}", kind_name, node.empty() ? "job" : node, key.empty() ? "" : "#", key);
    auto it = symptom_ids_.find(id);
    Symptom* s = nullptr;
    if (it == symptom_ids_.end()) {
      Symptom fresh;
      fresh.id = id;
      fresh.kind = a.kind_id;
      fresh.kind_name = kind_name;
      fresh.node = node;
      fresh.control_plane = !node.empty() && !nodes_.count(node);
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
      symptom_ids_[id] = s;
      symptoms_by_kind_[static_cast<size_t>(a.kind_id)].push_back(s);
      trail(r, "symptom", id, s->summary);
    } else {
      s = it->second;
    }
    for (const Item& item : group) {
      auto t = item.time();
      if (t && (!s->first || *t < *s->first)) s->first = t;
      if (t && (!s->last || *t > *s->last)) s->last = t;
      s->count += item.symptom ? item.symptom->count : 1;
      for (auto& e : evidence_of(item)) {
        ++s->evidence_total;
        if (s->evidence.size() < kMaxEvidencePerSymptom) s->evidence.push_back(std::move(e));
      }
    }
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
  }

  const Program& program_;
  const ir::Catalog& cat_;
  const WorkloadContext& ctx_;
  std::set<std::string> nodes_;
  std::set<std::pair<std::string, std::string>> host_sources_;
  std::vector<std::vector<std::vector<Event>>> storage_;  // by kind: chunks of events; see run()
  std::vector<int64_t> last_reader_;   // by event kind: index of the last rule that queries it, -1 for none
  int64_t rule_index_ = 0;             // the rule running now (index into cat_.rules)
  bool collect_trail_ = true;
  std::vector<Event> pending_events_;
  std::vector<std::vector<const Event*>> by_kind_;
  std::map<std::pair<int32_t, std::string>, std::vector<const Event*>> by_kind_node_;
  std::deque<Symptom> symptoms_;
  std::map<std::string, Symptom*> symptom_ids_;
  std::vector<std::vector<const Symptom*>> symptoms_by_kind_;
  Outcome outcome_;
  std::vector<TrailEntry> trail_;
};

}  // namespace

EngineResult run_engine(const Program& program, const WorkloadContext& context,
                        const std::vector<std::pair<std::string, std::string>>& host_sources, std::vector<Event> events) {
  std::vector<std::vector<Event>> batches;
  batches.push_back(std::move(events));
  return run_engine(program, context, host_sources, std::move(batches));
}

EngineResult run_engine(const Program& program, const WorkloadContext& context,
                        const std::vector<std::pair<std::string, std::string>>& host_sources,
                        std::vector<std::vector<Event>> batches, bool collect_trail) {
  Engine engine(program, context, host_sources, collect_trail);
  return engine.run(std::move(batches));
}

}  // namespace culprit
