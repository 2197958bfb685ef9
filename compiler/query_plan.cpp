#include "compiler/query_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace culprit::plan {

namespace {

using ir::Op;

bool is_query_op(Op op) {
  return op == Op::QueryExists || op == Op::QueryNone || op == Op::QueryCount || op == Op::QueryNodes || op == Op::QueryMax ||
         op == Op::QueryMin;
}
bool is_group_op(Op op) {
  return op == Op::GroupCount || op == Op::GroupDistinct || op == Op::GroupValues || op == Op::GroupFirstTs || op == Op::GroupLastTs;
}

void add_unique(std::vector<int32_t>& v, int32_t x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// What an expression reads, nested queries included.
struct Reads {
  std::vector<int32_t> slots;   // bindings read: fields, and nested queries' relation and `within` anchors
  std::vector<int32_t> bound;   // bindings introduced by the queries inside it
  bool group = false, capture = false, outcome = false, query = false;
  bool mutable_symptom_field = false;  // first, last, count or priority of a symptom (they change as symptoms merge)
  std::vector<int32_t> event_kinds, symptom_kinds;

  // The bindings read that the expression does not bind itself.
  std::vector<int32_t> free() const {
    std::vector<int32_t> out;
    for (int32_t s : slots)
      if (std::find(bound.begin(), bound.end(), s) == bound.end()) out.push_back(s);
    return out;
  }
};

void collect(const ir::Expr& e, const ir::Rule& r, Reads& out);

void collect_query(const ir::Query& q, const ir::Rule& r, Reads& out) {
  out.query = true;
  for (int32_t k : q.kinds) add_unique(q.symptom ? out.symptom_kinds : out.event_kinds, k);
  if (q.relation != ir::NodeRelation::Any) add_unique(out.slots, q.relation_slot);
  if (q.has_within) add_unique(out.slots, q.anchor_slot);
  add_unique(out.bound, q.bind_slot);
  if (q.filter) collect(*q.filter, r, out);
}

void collect(const ir::Expr& e, const ir::Rule& r, Reads& out) {
  switch (e.op) {
    case Op::EventField: add_unique(out.slots, e.a); break;
    case Op::SymptomField:
      add_unique(out.slots, e.a);
      if (e.b == ir::kSyFirst || e.b == ir::kSyLast || e.b == ir::kSyCount || e.b == ir::kSyPriority) out.mutable_symptom_field = true;
      break;
    case Op::Capture: out.capture = true; break;
    case Op::Outcome: out.outcome = true; break;
    default: break;
  }
  if (is_group_op(e.op)) out.group = true;
  if (is_query_op(e.op) && e.a >= 0 && static_cast<size_t>(e.a) < r.queries.size())
    collect_query(r.queries[static_cast<size_t>(e.a)], r, out);
  for (const auto& k : e.kids) collect(k, r, out);
}

Reads reads_of(const ir::Expr& e, const ir::Rule& r) {
  Reads out;
  collect(e, r, out);
  return out;
}

void conjuncts(const ir::Expr& e, std::vector<const ir::Expr*>& out) {
  if (e.op == Op::And && e.kids.size() == 2) {
    conjuncts(e.kids[0], out);
    conjuncts(e.kids[1], out);
    return;
  }
  out.push_back(&e);
}

// Types whose equality the index can decide byte for byte: compare() of two
// values of one of these types is 0 exactly when their payloads are equal.
bool keyable(Type t) {
  return t == Type::Bool || t == Type::Int || t == Type::String || t == Type::Time || t == Type::Duration;
}

// A side that reads the candidate and nothing else that could change while
// the index lives: no other binding, no query, group, capture or outcome,
// and for symptoms none of the fields that merging changes.
bool candidate_side(const ir::Expr& e, const ir::Rule& r, const ir::Query& q) {
  Reads x = reads_of(e, r);
  if (x.slots.size() != 1 || x.slots[0] != q.bind_slot) return false;
  if (x.query || x.group || x.capture || x.outcome) return false;
  if (q.symptom && x.mutable_symptom_field) return false;
  return true;
}

// A side that does not read the candidate (it may read anything else).
bool probe_side(const ir::Expr& e, const ir::Rule& r, const ir::Query& q) {
  Reads x = reads_of(e, r);
  if (x.capture) return false;
  return std::find(x.slots.begin(), x.slots.end(), q.bind_slot) == x.slots.end();
}

// The parts of a chain of string `+` (left to right).
void concat_parts(const ir::Expr& e, std::vector<const ir::Expr*>& out) {
  if (e.op == Op::Add && e.type == Type::String && e.kids.size() == 2) {
    concat_parts(e.kids[0], out);
    concat_parts(e.kids[1], out);
    return;
  }
  out.push_back(&e);
}

bool non_empty_text(const ir::Expr& e) { return e.op == Op::Const && e.constant.type == Type::String && !e.constant.s.empty(); }

// contains(CANDIDATE, "P" + PROBE + "S") as an infix key (KeyPart).
bool infix_key(const ir::Expr& c, const ir::Rule& r, const ir::Query& q, std::vector<KeyPart>& keys) {
  if (c.op != Op::Call || static_cast<ir::Builtin>(c.a) != ir::Builtin::Contains || c.kids.size() != 2) return false;
  const ir::Expr& hay = c.kids[0];
  const ir::Expr& needle = c.kids[1];
  if (hay.type != Type::String || needle.type != Type::String) return false;
  std::vector<const ir::Expr*> parts;
  concat_parts(needle, parts);
  if (parts.size() != 3 || !non_empty_text(*parts[0]) || !non_empty_text(*parts[2])) return false;
  const ir::Expr& probe = *parts[1];
  if (probe.type != Type::String || !candidate_side(hay, r, q) || !probe_side(probe, r, q)) return false;
  KeyPart k;
  k.candidate = &hay;
  k.probe = &probe;
  k.infix = true;
  k.prefix = parts[0]->constant.s;
  k.suffix = parts[2]->constant.s;
  keys.push_back(std::move(k));
  return true;
}

void fingerprint(const ir::Expr& e, int32_t bind_slot, std::string& out) {
  out += fmt::format("({} {} ", static_cast<int>(e.op), static_cast<int>(e.type));
  if ((e.op == Op::EventField || e.op == Op::SymptomField) && e.a == bind_slot) out += "c";
  else out += std::to_string(e.a);
  out += fmt::format(" {}", e.b);
  if (e.op == Op::Const) out += fmt::format(" {}:{}:{}", static_cast<int>(e.constant.type), e.constant.s.size(), value_to_text(e.constant));
  for (const auto& k : e.kids) fingerprint(k, bind_slot, out);
  out += ")";
}

// The expression of each of a rule's expression queries (Op::Query*.a -> expr).
void find_query_exprs(const ir::Expr& e, std::vector<const ir::Expr*>& out) {
  if (is_query_op(e.op) && e.a >= 0 && static_cast<size_t>(e.a) < out.size()) out[static_cast<size_t>(e.a)] = &e;
  for (const auto& k : e.kids) find_query_exprs(k, out);
}

std::vector<const ir::Expr*> query_exprs(const ir::Rule& r) {
  std::vector<const ir::Expr*> out(r.queries.size(), nullptr);
  auto visit = [&](const std::optional<ir::Expr>& e) {
    if (e) find_query_exprs(*e, out);
  };
  if (r.for_query) visit(r.for_query->filter);
  for (const auto& w : r.wheres) find_query_exprs(w, out);
  for (const auto& k : r.group_keys) find_query_exprs(k, out);
  for (const auto& q : r.queries) visit(q.filter);
  for (const auto& a : r.actions) {
    visit(a.node);
    visit(a.key);
    visit(a.priority);
    visit(a.summary);
    for (const auto& f : a.fields) find_query_exprs(f.value, out);
    if (a.query) visit(a.query->filter);
    visit(a.reason);
    visit(a.value);
  }
  return out;
}

// The outer reads of a query expression (see QueryPlan::params): each field
// read of a slot in `free`, once per (op, slot, field), and each free slot a
// nested query compares nodes with. False when a free slot is read any other
// way (a `within` anchor): its value then varies with every binding.
bool collect_params(const ir::Expr& e, const ir::Rule& r, const std::vector<int32_t>& free,
                    std::vector<const ir::Expr*>& params, std::vector<int32_t>& node_slots) {
  auto is_free = [&](int32_t s) { return std::find(free.begin(), free.end(), s) != free.end(); };
  if ((e.op == Op::EventField || e.op == Op::SymptomField) && is_free(e.a)) {
    bool seen = std::any_of(params.begin(), params.end(),
                            [&](const ir::Expr* p) { return p->op == e.op && p->a == e.a && p->b == e.b; });
    if (!seen) params.push_back(&e);
  }
  if (is_query_op(e.op) && e.a >= 0 && static_cast<size_t>(e.a) < r.queries.size()) {
    const ir::Query& nested = r.queries[static_cast<size_t>(e.a)];
    if (nested.has_within && is_free(nested.anchor_slot)) return false;
    if (nested.relation != ir::NodeRelation::Any && is_free(nested.relation_slot)) add_unique(node_slots, nested.relation_slot);
    if (nested.filter && !collect_params(*nested.filter, r, free, params, node_slots)) return false;
  }
  for (const auto& k : e.kids)
    if (!collect_params(k, r, free, params, node_slots)) return false;
  return true;
}

// Whether the parameters pin one item of an outer binding: its file and its
// line (what the temporal order construct `a after e` reads), or a
// symptom's id. Every binding then has a tuple of its own, so a memo by
// parameters would never be hit: it would only build a key and grow a map
// per call.
bool params_name_one_item(const std::vector<const ir::Expr*>& params) {
  auto has = [&](ir::Op op, int32_t slot, int32_t field) {
    return std::any_of(params.begin(), params.end(),
                       [&](const ir::Expr* p) { return p->op == op && p->a == slot && p->b == field; });
  };
  for (const ir::Expr* p : params) {
    if (p->op == Op::EventField && has(Op::EventField, p->a, ir::kEvPlace) && has(Op::EventField, p->a, ir::kEvLine))
      return true;
    if (p->op == Op::SymptomField &&
        (p->b == ir::kSyId || (has(Op::SymptomField, p->a, ir::kSyPlace) && has(Op::SymptomField, p->a, ir::kSyPlaceLine))))
      return true;
  }
  return false;
}

// CANDIDATE.priority OP PROBE (or PROBE OP CANDIDATE.priority) with OP one of
// < <= > >= and an Int probe that never reads the candidate. A symptom's
// priority is never null, so the comparison is false exactly when the probe
// is null or out of range: the range holds every candidate that can pass.
std::optional<PriorityRange> priority_range(const ir::Expr& c, const ir::Rule& r, const ir::Query& q) {
  if (!q.symptom || c.kids.size() != 2) return std::nullopt;
  if (c.op != Op::Lt && c.op != Op::Le && c.op != Op::Gt && c.op != Op::Ge) return std::nullopt;
  auto is_priority = [&](const ir::Expr& e) {
    return e.op == Op::SymptomField && e.a == q.bind_slot && e.b == ir::kSyPriority && e.type == Type::Int;
  };
  auto probe_ok = [&](const ir::Expr& e) { return e.type == Type::Int && probe_side(e, r, q); };
  if (is_priority(c.kids[0]) && probe_ok(c.kids[1])) return PriorityRange{c.op, &c.kids[1]};
  if (is_priority(c.kids[1]) && probe_ok(c.kids[0])) {
    // PROBE < c.priority is c.priority > PROBE, and so on.
    Op flipped = c.op == Op::Lt ? Op::Gt : c.op == Op::Le ? Op::Ge : c.op == Op::Gt ? Op::Lt : Op::Le;
    return PriorityRange{flipped, &c.kids[0]};
  }
  return std::nullopt;
}

QueryPlan plan_one(const ir::Rule& r, const ir::Query& q, const ir::Expr* expr, std::string role) {
  QueryPlan p;
  p.rule = &r;
  p.query = &q;
  p.expr = expr;
  p.role = std::move(role);
  p.by_node = q.relation == ir::NodeRelation::Same;
  p.time_window = q.has_within;
  p.first_hit = expr && (expr->op == Op::QueryExists || expr->op == Op::QueryNone);
  if (q.filter) {
    std::vector<const ir::Expr*> parts;
    conjuncts(*q.filter, parts);
    for (const ir::Expr* c : parts) {
      if (!q.symptom && infix_key(*c, r, q, p.keys)) continue;
      if (!p.priority_range && !q.has_within)
        if ((p.priority_range = priority_range(*c, r, q))) continue;
      if (c->op != Op::Eq || c->kids.size() != 2) continue;
      const ir::Expr& a = c->kids[0];
      const ir::Expr& b = c->kids[1];
      if (a.type != b.type || !keyable(a.type)) continue;
      if (candidate_side(a, r, q) && probe_side(b, r, q)) p.keys.push_back(KeyPart{&a, &b, false, {}, {}});
      else if (candidate_side(b, r, q) && probe_side(a, r, q)) p.keys.push_back(KeyPart{&b, &a, false, {}, {}});
    }
  }
  // At most one infix key, and last: its candidate-side values are appended
  // after the others' (runtime/engine.cpp builds the bucket keys so).
  auto infix = std::stable_partition(p.keys.begin(), p.keys.end(), [](const KeyPart& k) { return !k.infix; });
  if (infix != p.keys.end()) p.keys.erase(std::next(infix), p.keys.end());
  if (expr) {
    Reads x = reads_of(*expr, r);
    std::vector<const ir::Expr*> params;
    std::vector<int32_t> node_slots;
    if (!x.group && !x.capture && collect_params(*expr, r, x.free(), params, node_slots) && !params_name_one_item(params)) {
      p.memoized = true;
      p.params = std::move(params);
      p.param_node_slots = std::move(node_slots);
      std::sort(p.param_node_slots.begin(), p.param_node_slots.end());
      p.reads_outcome = x.outcome;
      p.event_inputs = x.event_kinds;
      p.symptom_inputs = x.symptom_kinds;
      std::sort(p.event_inputs.begin(), p.event_inputs.end());
      std::sort(p.symptom_inputs.begin(), p.symptom_inputs.end());
    }
  }
  std::string sig = q.symptom ? "S" : "E";
  for (int32_t k : q.kinds) sig += fmt::format(" {}", k);
  sig += p.by_node ? " | node" : " |";
  for (const auto& k : p.keys) {
    sig += " | ";
    if (k.infix) sig += fmt::format("infix {}:{} {}:{} ", k.prefix.size(), k.prefix, k.suffix.size(), k.suffix);
    fingerprint(*k.candidate, q.bind_slot, sig);
  }
  p.index_signature = std::move(sig);
  return p;
}

}  // namespace

std::string kinds_text(const ir::Query& q, const ir::Catalog& cat) {
  const auto& kinds = q.symptom ? cat.symptom_kinds : cat.event_kinds;
  auto name = [&](int32_t k) -> std::string {
    return k >= 0 && static_cast<size_t>(k) < kinds.size() ? kinds[static_cast<size_t>(k)].name : "?";
  };
  if (q.kinds.size() == 1) return name(q.kinds[0]);
  // As written where possible: `*`, or a family `a.b.*` the kinds are exactly.
  auto matching = [&](const std::string& prefix) {
    std::vector<int32_t> out;
    for (size_t k = 0; k < kinds.size(); ++k)
      if (kinds[k].name.compare(0, prefix.size(), prefix) == 0) out.push_back(static_cast<int32_t>(k));
    return out;
  };
  if (q.kinds == matching("")) return "*";
  std::string common = name(q.kinds[0]);
  for (int32_t k : q.kinds) {
    std::string n = name(k);
    size_t i = 0;
    while (i < common.size() && i < n.size() && common[i] == n[i]) ++i;
    common.resize(i);
  }
  size_t dot = common.rfind('.');
  if (dot != std::string::npos && q.kinds == matching(common.substr(0, dot + 1))) return common.substr(0, dot + 1) + "*";
  std::string out;
  for (size_t i = 0; i < q.kinds.size() && i < 4; ++i) out += (i ? ", " : "") + name(q.kinds[i]);
  if (q.kinds.size() > 4) out += fmt::format(", ... ({} kinds)", q.kinds.size());
  return "{" + out + "}";
}


const QueryPlan* CatalogPlans::find(const ir::Query* q) const {
  auto it = std::lower_bound(by_address_.begin(), by_address_.end(), q,
                             [](const std::pair<const ir::Query*, size_t>& a, const ir::Query* b) { return a.first < b; });
  return it != by_address_.end() && it->first == q ? &plans_[it->second] : nullptr;
}

std::vector<const ir::Expr*> CatalogPlans::key_expressions() const {
  std::vector<const ir::Expr*> out;
  for (const auto& p : plans_) {
    for (const auto& k : p.keys) {
      out.push_back(k.candidate);
      out.push_back(k.probe);
    }
    if (p.priority_range) out.push_back(p.priority_range->probe);
  }
  return out;
}

CatalogPlans plan_catalog(const ir::Catalog& catalog) {
  CatalogPlans out;
  for (const auto& r : catalog.rules) {
    if (r.for_query) out.plans_.push_back(plan_one(r, *r.for_query, nullptr, "for"));
    std::vector<const ir::Expr*> exprs = query_exprs(r);
    for (size_t i = 0; i < r.queries.size(); ++i) out.plans_.push_back(plan_one(r, r.queries[i], exprs[i], "query"));
    for (const auto& a : r.actions)
      if (a.query) out.plans_.push_back(plan_one(r, *a.query, nullptr, a.kind == ir::ActionKind::Scrub ? "scrub" : "demote"));
  }
  std::map<std::string_view, int32_t> ids;
  for (auto& p : out.plans_) p.index_id = ids.try_emplace(p.index_signature, static_cast<int32_t>(ids.size())).first->second;
  out.index_count_ = ids.size();
  for (size_t i = 0; i < out.plans_.size(); ++i) out.by_address_.emplace_back(out.plans_[i].query, i);
  std::sort(out.by_address_.begin(), out.by_address_.end());
  return out;
}

namespace {

// Whether every call of the query walks all events of its kinds.
bool unindexed_event_scan(const ir::Query& q, const QueryPlan* p) {
  if (q.symptom || !p) return false;
  if (!p->keys.empty() || p->by_node || p->time_window) return false;
  // A closed memoized query is computed once per rule, not once per call.
  return !(p->memoized && p->params.empty() && p->param_node_slots.empty());
}

void walk_nesting(const ir::Catalog& catalog, const CatalogPlans& plans, const ir::Rule& r, const ir::Expr& e,
                  const ir::Query* outer, Diagnostics& diags) {
  switch (e.op) {
    case Op::QueryExists: case Op::QueryNone: case Op::QueryCount: case Op::QueryNodes:
    case Op::QueryMax: case Op::QueryMin: {
      if (e.a < 0 || static_cast<size_t>(e.a) >= r.queries.size()) break;
      const ir::Query& q = r.queries[static_cast<size_t>(e.a)];
      const bool scan = unindexed_event_scan(q, plans.find(&q));
      if (scan && outer) {
        diags.warning("E0801", e.where,
                      fmt::format("this query walks every {} event once per candidate of the query around it, which "
                                  "walks every {} event too: no index narrows either",
                                  kinds_text(q, catalog), kinds_text(*outer, catalog)),
                      "compare a field of each with '==' (an index key), or add 'on same node' or 'within'; the "
                      "evaluation budget (eval_steps) stops such a rule on large inputs");
      }
      if (q.filter) walk_nesting(catalog, plans, r, *q.filter, scan ? &q : nullptr, diags);
      break;
    }
    default: break;
  }
  for (const auto& k : e.kids) walk_nesting(catalog, plans, r, k, outer, diags);
}

}  // namespace

void warn_unindexed_nesting(const ir::Catalog& catalog, const CatalogPlans& plans, Diagnostics& diags,
                            const std::function<bool(const ir::Rule&)>& skip) {
  for (const auto& r : catalog.rules) {
    if (skip && skip(r)) continue;
    const ir::Query* outer = r.for_query && unindexed_event_scan(*r.for_query, plans.find(&*r.for_query)) ? &*r.for_query : nullptr;
    if (r.for_query && r.for_query->filter) walk_nesting(catalog, plans, r, *r.for_query->filter, outer, diags);
    for (const auto& w : r.wheres) walk_nesting(catalog, plans, r, w, outer, diags);
    for (const auto& a : r.actions)
      if (a.query && a.query->filter) walk_nesting(catalog, plans, r, *a.query->filter, nullptr, diags);
  }
}

// What a field read by the temporal order construct stands for (it reads
// fields rules cannot name, and the line; compiler/sema.cpp), else null.
const char* hidden_field_name(const ir::Expr& e) {
  if (e.op == Op::EventField) {
    switch (e.b) {
      case ir::kEvOwnTs: return "own time";
      case ir::kEvPlace: return "file";
      case ir::kEvBoot: return "boot time";
      case ir::kEvLine: return "line";  // nameable (`e.line`, `e.ts`); see expression_text
      case ir::kEvTs: return "time";
      default: return nullptr;
    }
  }
  if (e.op == Op::SymptomField) {
    switch (e.b) {
      case ir::kSyOwnFirst: return "own first time";
      case ir::kSyFirst: return "first time";  // nameable (`s.first`)
      case ir::kSyPlace: return "first evidence file";
      case ir::kSyPlaceLine: return "first evidence line";
      case ir::kSyPlaceBoot: return "first evidence boot time";
      default: return nullptr;
    }
  }
  return nullptr;
}

// The source text of a range, joined onto one line; "" without a range.
std::string range_text(const SourceRange& w) {
  std::string out;
  if (w.file && w.line > 0 && w.end_line >= w.line && (w.end_line > w.line || w.end_col > w.col)) {
    for (uint32_t line = w.line; line <= w.end_line; ++line) {
      std::string_view t = w.file->line_text(line);
      size_t from = line == w.line ? std::min<size_t>(w.col - 1, t.size()) : 0;
      size_t to = line == w.end_line ? std::min<size_t>(w.end_col - 1, t.size()) : t.size();
      if (to < from) to = from;
      std::string_view part = t.substr(from, to - from);
      if (line > w.line) {
        while (!part.empty() && (part.front() == ' ' || part.front() == '\t')) part.remove_prefix(1);
        out += ' ';
      }
      out += part;
    }
  }
  return out;
}

std::string expression_text(const ir::Expr& e, const ir::Catalog& catalog) {
  // Its range is the binding's name (`e` in `a after e`): say which part of it.
  // (A read written `e.line` or `e.ts` has its own text; one the construct
  // added has only the binding's.)
  if (const char* hidden = hidden_field_name(e)) {
    std::string binding = range_text(e.where);
    if (binding.find('.') == std::string::npos)
      return fmt::format("{} of {}", hidden, binding.empty() ? fmt::format("${}", e.a) : binding);
  }
  if (std::string text = range_text(e.where); !text.empty()) return text;
  // No source range: a compact rendering that still names the fields.
  switch (e.op) {
    case Op::Const: return e.constant.type == Type::String ? "\"" + e.constant.s + "\"" : value_to_text(e.constant);
    case Op::EventField:
    case Op::SymptomField:
      return e.b >= 0 && static_cast<size_t>(e.b) < catalog.field_names.size()
                 ? fmt::format("${}.{}", e.a, catalog.field_names[static_cast<size_t>(e.b)])
                 : fmt::format("${}.<builtin {}>", e.a, -e.b);
    default: {
      std::string out = fmt::format("<op {}>(", static_cast<int>(e.op));
      for (size_t i = 0; i < e.kids.size(); ++i) out += (i ? ", " : "") + expression_text(e.kids[i], catalog);
      return out + ")";
    }
  }
}

std::string describe(const QueryPlan& p, const ir::Catalog& catalog) {
  const ir::Query& q = *p.query;
  std::string src = q.symptom ? "symptom" : "event";
  std::string out;
  if (!p.by_node && p.keys.empty()) {
    out = fmt::format("scan all {}s of {}", src, kinds_text(q, catalog));
    if (q.relation == ir::NodeRelation::Other) out += " (skipping the binding's node)";
  } else {
    out = fmt::format("index ({}: {}", src, kinds_text(q, catalog));
    if (p.by_node) out += ", node";
    for (const auto& k : p.keys) {
      if (k.infix)
        out += fmt::format(", {} holds \"{}\" + {} + \"{}\" (by infix)", expression_text(*k.candidate, catalog), k.prefix,
                           expression_text(*k.probe, catalog), k.suffix);
      else
        out += fmt::format(", {} = {}", expression_text(*k.candidate, catalog), expression_text(*k.probe, catalog));
    }
    out += ")";
    if (q.relation == ir::NodeRelation::Other) out += ", skipping the binding's node";
  }
  if (q.symptom) out += ", active only";
  if (p.time_window) out += "; `within` by binary search on time";
  if (p.priority_range) {
    const char* op = p.priority_range->op == Op::Lt ? "<" : p.priority_range->op == Op::Le ? "<=" : p.priority_range->op == Op::Gt ? ">" : ">=";
    out += fmt::format("; priority {} {} by binary search", op, expression_text(*p.priority_range->probe, catalog));
  }
  if (p.first_hit) out += "; stops at the first hit";
  if (p.memoized && p.params.empty() && p.param_node_slots.empty()) out += "; closed: computed once while its kinds do not change";
  if (p.memoized && (!p.params.empty() || !p.param_node_slots.empty())) {
    std::string by;
    for (const ir::Expr* e : p.params) by += (by.empty() ? "" : ", ") + expression_text(*e, catalog);
    if (!p.param_node_slots.empty()) by += std::string(by.empty() ? "" : ", ") + "the binding's node";
    out += "; kept per value of " + by + " while its kinds do not change";
  }
  return out;
}

}  // namespace culprit::plan
