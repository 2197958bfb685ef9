// Semantic analysis, rules pass: stages, the `for` binding, conditions,
// grouping, and which actions each stage allows.

#include "compiler/sema_internal.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "base/suggest.h"

namespace culprit::sema_internal {

void Analyzer::register_rule_kinds(const ast::Rule& r) {
  for (const auto& a : r.actions) {
    if (a.kind == ast::ActionKind::Emit) register_kind(false, a.kind_name);
    if (a.kind == ast::ActionKind::Symptom) register_kind(true, a.kind_name);
  }
}

void Analyzer::analyze_rule(const ast::Rule& r, int32_t index) {
  ir::Rule out;
  queries_.clear();
  out.name = r.name;
  out.where = r.where;
  out.index = index;
  int stage = -1;
  for (size_t i = 0; i < ir::kStageNames.size(); ++i)
    if (r.stage == ir::kStageNames[i]) stage = static_cast<int>(i);
  if (stage < 0) {
    err("E0205", r.stage_range, fmt::format("unknown stage '{}' (stages: early, symptoms, scrub, aggregate, final, outcome, post_outcome)", r.stage),
        did_you_mean(r.stage, {"early", "symptoms", "scrub", "aggregate", "final", "outcome", "post_outcome"}));
    return;
  }
  out.stage = static_cast<ir::Stage>(stage);
  if (out.stage == ir::Stage::Extract) {
    err("E0601", r.stage_range, "the extract stage runs extractors only; give this rule a later stage");
    return;
  }
  Scope s;
  s.next_slot = &out.slot_count;
  s.slot_is_symptom = &out.slot_is_symptom;
  s.outcome_visible = out.stage == ir::Stage::PostOutcome;
  out.slot_count = 0;
  if (r.for_query) {
    Binding b;
    out.for_query = lower_query(*r.for_query, r.for_binding, r.for_binding_range, s, &b);
    s.bindings.push_back(b);
  } else {
    out.slot_count = 1;  // slot 0 stays reserved so query slots are stable
    out.slot_is_symptom.push_back(false);
  }
  for (const auto& w : r.wheres) {
    auto e = lower(*w, s);
    if (e.type != Type::Bool && e.type != Type::Null)
      err("E0301", w->where, fmt::format("a 'where' condition must be bool, not {}", type_name(e.type)));
    out.wheres.push_back(std::move(e));
  }
  if (r.has_group) {
    if (!r.for_query) err("E0304", r.group_range, "'group by' needs a 'for' binding to group");
    out.grouped = true;
    out.group_within_ns = r.group_within_ns;
    for (const auto& k : r.group_keys) out.group_keys.push_back(lower(*k, s));
  }
  s.grouped = r.has_group;
  const Binding* for_binding = r.for_query ? &s.bindings.front() : nullptr;

  auto allowed = [&](ast::ActionKind k) {
    using S = ir::Stage;
    switch (k) {
      case ast::ActionKind::Emit: return out.stage == S::Early;
      case ast::ActionKind::Symptom: return out.stage == S::Symptoms || out.stage == S::Aggregate;
      case ast::ActionKind::Scrub: return out.stage == S::Scrub || out.stage == S::Final;
      case ast::ActionKind::Demote: return out.stage == S::Final || out.stage == S::Aggregate;
      case ast::ActionKind::SetPriority:
        return out.stage == S::Symptoms || out.stage == S::Scrub || out.stage == S::Aggregate || out.stage == S::Final;
      case ast::ActionKind::Classify: return out.stage == S::Outcome;
      case ast::ActionKind::SetOutcome: return out.stage == S::PostOutcome;
    }
    return false;
  };
  static const char* action_names[] = {"emit", "symptom", "demote", "scrub", "set priority", "classify", "set outcome"};
  static const char* action_stages[] = {"early", "symptoms and aggregate", "final and aggregate", "scrub and final",
                                        "symptoms, scrub, aggregate and final", "outcome", "post_outcome"};

  auto symptom_binding = [&](const ast::Action& a) -> int32_t {
    const Binding* b = s.find(a.binding);
    if (!b) {
      err("E0202", a.binding_range, fmt::format("unknown binding '{}'", a.binding), did_you_mean(a.binding, scope_names(s, false)));
      return -1;
    }
    if (!b->symptom) {
      err("E0603", a.binding_range, fmt::format("'{}' is bound to events; only symptoms can be {}", a.binding,
                                                a.kind == ast::ActionKind::Classify ? "classified" : "changed"));
      return -1;
    }
    return b->slot;
  };

  for (const auto& a : r.actions) {
    if (!allowed(a.kind)) {
      err("E0601", a.where, fmt::format("'{}' is not allowed in stage '{}' (allowed in {})", action_names[static_cast<int>(a.kind)],
                                        r.stage, action_stages[static_cast<int>(a.kind)]));
      continue;
    }
    ir::Action act;
    act.where = a.where;
    switch (a.kind) {
      case ast::ActionKind::Emit:
      case ast::ActionKind::Symptom: {
        bool symptom = a.kind == ast::ActionKind::Symptom;
        act.kind = symptom ? ir::ActionKind::Symptom : ir::ActionKind::Emit;
        act.kind_id = register_kind(symptom, a.kind_name);
        act.on_job = a.on_job;
        if (a.node) {
          auto n = lower(*a.node, s);
          if (n.type != Type::String && n.type != Type::Null)
            err("E0301", a.node->where, fmt::format("'on' needs a node name (string), not {}", type_name(n.type)));
          act.node = std::move(n);
        } else if (!a.on_job && !for_binding) {
          err("E0602", a.kind_range, "this rule has no 'for' binding, so say where this goes: 'on job' or 'on EXPR'");
        }
        if (a.key) act.key = lower(*a.key, s);
        if (a.priority) {
          auto p = lower(*a.priority, s);
          if (p.type != Type::Int && p.type != Type::Null) err("E0301", a.priority->where, "priority must be an int");
          if (symptom && p.op == ir::Op::Const && p.type == Type::Int) {
            auto [it, fresh] = priority_max_.emplace(act.kind_id, p.constant.i);
            if (!fresh) it->second = std::max(it->second, p.constant.i);
          } else if (symptom) {
            priority_unknown_.insert(act.kind_id);
          }
          act.priority = std::move(p);
        } else if (symptom) {
          // No priority at all (0): a small catalog without a scale, not
          // one that put the kind among the noise.
          priority_unknown_.insert(act.kind_id);
        }
        if (a.at) {
          auto t = lower(*a.at, s);
          if (t.type != Type::Time && t.type != Type::Null)
            err("E0301", a.at->where, fmt::format("'at' must be a time, not {}", type_name(t.type)));
          act.at = std::move(t);
        }
        std::set<std::string> seen;
        for (const auto& f : a.fields) {
          if (!seen.insert(f.name).second) {
            err("E0103", f.where, fmt::format("field '{}' is given twice", f.name));
            continue;
          }
          auto v = lower(*f.value, s);
          if (symptom && f.name == "summary") {
            if (v.type != Type::String && v.type != Type::Null) err("E0301", f.value->where, "'summary' must be a string");
            act.summary = std::move(v);
            continue;
          }
          int32_t slot = add_field(symptom, act.kind_id, f.name, v.type, f.where);
          if (slot >= 0) act.fields.push_back({slot, std::move(v)});
        }
        break;
      }
      case ast::ActionKind::Demote:
      case ast::ActionKind::Scrub: {
        act.kind = a.kind == ast::ActionKind::Demote ? ir::ActionKind::Demote : ir::ActionKind::Scrub;
        if (a.query) {
          if (!a.query->symptom) {
            err("E0603", a.query->where, "only symptoms can be demoted or scrubbed; query 'symptom ...'");
            continue;
          }
          Binding b;
          act.query = lower_query(*a.query, a.binding, a.binding_range, s, &b);
          Scope inner = s;
          inner.bindings.push_back(b);
          act.reason = lower_interpolation(a.reason, a.reason_range, inner);
        } else {
          act.target_slot = symptom_binding(a);
          act.reason = lower_interpolation(a.reason, a.reason_range, s);
        }
        break;
      }
      case ast::ActionKind::SetPriority: {
        act.kind = ir::ActionKind::SetPriority;
        act.target_slot = symptom_binding(a);
        if (const Binding* b = s.find(a.binding)) priority_unknown_.insert(b->kinds.begin(), b->kinds.end());
        auto v = lower(*a.value, s);
        if (v.type != Type::Int && v.type != Type::Null) err("E0301", a.value->where, "priority must be an int");
        act.value = std::move(v);
        break;
      }
      case ast::ActionKind::Classify: {
        act.kind = ir::ActionKind::Classify;
        act.target_slot = symptom_binding(a);
        act.generic = a.generic;
        act.on_job = a.on_job;
        if (!one_of(a.domain, kDomains))
          err("E0206", a.domain_range, fmt::format("unknown domain '{}' ({})", a.domain, fmt::join(kDomains, ", ")),
              did_you_mean(a.domain, kDomains));
        if (a.sub_domain.empty()) err("E0206", a.domain_range, "a classification needs a sub_domain");
        else check_sub_domain_root(a.domain, a.sub_domain, a.sub_domain_range);
        // A rule that classifies only under conditions of its own (the
        // stdlib's thermal straggler: when the job hung and one node
        // throttled) has decided when the symptom is a cause; one without is
        // what E0209 is for.
        bool conditional = !r.wheres.empty() || (r.for_query && r.for_query->filter);
        if (const Binding* b = s.find(a.binding); b && b->symptom && !conditional)
          check_classified_priority(b->kinds, a.where);
        act.domain = a.domain;
        act.sub_domain = a.sub_domain;
        break;
      }
      case ast::ActionKind::SetOutcome: {
        act.kind = ir::ActionKind::SetOutcome;
        if (!one_of(a.status, kStatuses))
          err("E0206", a.where, fmt::format("unknown status '{}' ({})", a.status, fmt::join(kStatuses, ", ")),
              did_you_mean(a.status, kStatuses));
        if (!a.domain.empty() && !one_of(a.domain, kDomains))
          err("E0206", a.domain_range, fmt::format("unknown domain '{}' ({})", a.domain, fmt::join(kDomains, ", ")),
              did_you_mean(a.domain, kDomains));
        if (!a.sub_domain.empty()) check_sub_domain_root(a.domain, a.sub_domain, a.sub_domain_range);
        if (a.status == vocab::status::kAttributed && a.domain.empty())
          err("E0206", a.where, "'set outcome attributed' needs a domain and sub_domain");
        act.status = a.status;
        act.domain = a.domain;
        act.sub_domain = a.sub_domain;
        act.reason = lower_interpolation(a.reason, a.reason_range, s);
        break;
      }
    }
    out.actions.push_back(std::move(act));
  }
  out.queries = std::move(queries_);
  cat_.rules.push_back(std::move(out));
}

void Analyzer::check_classified_priority(const std::vector<int32_t>& kinds, const SourceRange& where) {
  // Only when every kind the binding can hold is known to stay under 50: a
  // computed or reset priority, or one kind of a family at 50 or more, may
  // be a cause.
  if (kinds.empty()) return;
  int64_t highest = 0;
  for (int32_t k : kinds) {
    auto it = priority_max_.find(k);
    if (priority_unknown_.count(k) || it == priority_max_.end()) return;
    highest = std::max(highest, it->second);
  }
  if (highest >= 50) return;
  std::string what = kinds.size() == 1 ? fmt::format("'{}'", cat_.symptom_kinds[kinds[0]].name) : "these symptoms";
  diags_.warning("E0209", where,
                 fmt::format("{} {} created with priority {} at most: under 50 is what is never a cause by itself, and "
                             "classifying it turns noise into a verdict",
                             what, kinds.size() == 1 ? "is" : "are", highest),
                 "give the kind a priority on the catalog's scale (docs/language.md §4.4), or classify the cause it points to");
}

void Analyzer::check_sub_domain_root(const std::string& domain, const std::string& sub_domain, const SourceRange& where) {
  // Only a near miss of a known root is reported: a site may classify
  // under roots of its own ("bmc"), and those stay silent. What this
  // catches is the misspelt root ("nvlnik"), which would otherwise start a
  // class of its own that no recovery-table line and no dashboard filter
  // knows.
  auto roots = vocab::sub_domain_roots(domain);
  std::string root = sub_domain.substr(0, sub_domain.find('.'));
  if (roots.empty() || vocab::contains(roots, root)) return;  // an unknown domain has its own error
  std::string hint = did_you_mean(root, vocab::words(roots));
  if (hint.empty()) return;
  diags_.warning("E0207", where,
                 fmt::format("'{}' is not a sub_domain root of {} (docs/vocabulary.md lists them)", root, domain), hint);
}

}  // namespace culprit::sema_internal
