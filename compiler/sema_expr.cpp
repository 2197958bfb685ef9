// Semantic analysis, expressions pass: names, fields, operators, calls,
// queries and string interpolation are resolved, typed and lowered to IR.

#include "compiler/sema_internal.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/limits.h"
#include "base/suggest.h"
#include "base/text_util.h"

namespace culprit::sema_internal {

struct BuiltinFn { const char* name; ir::Builtin id; int min_args, max_args; };
constexpr BuiltinFn kFunctions[] = {
    {"int", ir::Builtin::Int, 1, 1},         {"hex", ir::Builtin::Hex, 1, 1},
    {"float", ir::Builtin::Float, 1, 1},     {"duration", ir::Builtin::Duration, 2, 2},
    {"seconds", ir::Builtin::Seconds, 1, 1}, {"lower", ir::Builtin::Lower, 1, 1},
    {"upper", ir::Builtin::Upper, 1, 1},     {"trim", ir::Builtin::Trim, 1, 1},
    {"len", ir::Builtin::Len, 1, 1},         {"contains", ir::Builtin::Contains, 2, 2},
    {"starts_with", ir::Builtin::StartsWith, 2, 2}, {"ends_with", ir::Builtin::EndsWith, 2, 2},
    {"str", ir::Builtin::Str, 1, 1},         {"coalesce", ir::Builtin::Coalesce, 1, 16},
    {"covered", ir::Builtin::Covered, 2, 2}, {"coverage", ir::Builtin::Coverage, 1, 1},
    {"if", ir::Builtin::If, 3, 3},         {"time", ir::Builtin::Time, 1, 1},
    {"is_node", ir::Builtin::IsNode, 1, 1}, {"rank_node", ir::Builtin::RankNode, 1, 1},
    {"gaps", ir::Builtin::Gaps, 1, 1},      {"host_node", ir::Builtin::HostNode, 1, 1},
};

// The part of a one-line literal token that bytes [begin, end) of its value
// came from, so a caret can sit under a placeholder or a regex fragment
// instead of the whole literal. `string_literal` says how the token's text maps to
// the value: a string literal (escapes as the parser unquotes them) or a
// regex literal (only `\/` is shortened). Falls back to the literal.
SourceRange literal_sub_range(const SourceRange& lit, size_t begin, size_t end, bool string_literal) {
  if (!lit.file || lit.line == 0 || lit.end_line != lit.line) return lit;
  std::string_view src = lit.file->line_text(lit.line);
  size_t pos = lit.col;  // 0-based index just after the opening quote or slash
  size_t decoded = 0;
  uint32_t col_begin = 0, col_end = 0;
  auto mark = [&](size_t at) {
    if (decoded == begin && !col_begin) col_begin = static_cast<uint32_t>(at + 1);
    if (decoded == end && !col_end) col_end = static_cast<uint32_t>(at + 1);
  };
  size_t limit = std::min<size_t>(src.size(), lit.end_col > 0 ? lit.end_col - 1 : src.size());
  while (pos < limit) {
    mark(pos);
    if (col_end) break;
    char c = src[pos];
    size_t src_len = 1, dec_len = 1;
    if (c == '\\' && pos + 1 < limit) {
      char e = src[pos + 1];
      if (string_literal) {
        if (e == 'x' && pos + 3 < limit && std::isxdigit(static_cast<unsigned char>(src[pos + 2])) &&
            std::isxdigit(static_cast<unsigned char>(src[pos + 3]))) src_len = 4;
        else if (e == 'n' || e == 't' || e == 'r' || e == '"' || e == '\\') src_len = 2;
        else src_len = dec_len = 2;  // kept verbatim
      } else if (e == '/') {
        src_len = 2;
      } else {
        src_len = dec_len = 2;
      }
    }
    pos += src_len;
    decoded += dec_len;
  }
  mark(pos);
  if (!col_begin || !col_end || col_end <= col_begin) return lit;
  return SourceRange{lit.file, lit.line, col_begin, lit.line, col_end};
}

// The last `len` bytes of a one-line range (a field name after its dot).
SourceRange tail_range(const SourceRange& r, size_t len) {
  if (!r.file || r.end_line != r.line || r.end_col < len + r.col) return r;
  return SourceRange{r.file, r.line, static_cast<uint32_t>(r.end_col - len), r.line, r.end_col};
}

// The first `len` bytes of a one-line range (a function's name).
SourceRange head_range(const SourceRange& r, size_t len) {
  if (!r.file || r.end_line != r.line || r.col + len > r.end_col) return r;
  return SourceRange{r.file, r.line, r.col, r.line, static_cast<uint32_t>(r.col + len)};
}

// The names an expression can start with, for suggestions.
std::vector<std::string> Analyzer::scope_names(const Scope& s, bool with_records) {
  std::vector<std::string> out;
  for (const auto& b : s.bindings) out.push_back(b.name);
  if (with_records)
    for (const char* r : {"terminal", "outcome", "workload"}) out.emplace_back(r);
  return out;
}

ir::Expr Analyzer::field_of_binding(const Binding& b, const std::string& field, const SourceRange& where) {
  const auto* begin = b.symptom ? std::begin(kSymptomBuiltins) : std::begin(kEventBuiltins);
  const auto* end = b.symptom ? std::end(kSymptomBuiltins) : std::end(kEventBuiltins);
  for (const auto* it = begin; it != end; ++it) {
    if (field == it->name) {
      auto e = make(b.symptom ? Op::SymptomField : Op::EventField, it->type, where);
      e.a = b.slot;
      e.b = it->sel;
      return e;
    }
  }
  auto fid = field_ids_.find(field);
  const auto& kinds = b.symptom ? cat_.symptom_kinds : cat_.event_kinds;
  Type t = Type::Null;
  bool ok = fid != field_ids_.end() && !b.kinds.empty();
  std::string missing_in;
  for (int32_t k : b.kinds) {
    const auto& schema = kinds[static_cast<size_t>(k)];
    int32_t slot = ok ? schema.slot(fid->second) : -1;
    if (slot < 0) {
      ok = false;
      missing_in = schema.name;
      break;
    }
    Type ft = schema.fields[static_cast<size_t>(slot)].type;
    if (t == Type::Null) t = ft;
    else if (ft != Type::Null && ft != t) {
      err("E0303", where, fmt::format("field '{}' has different types across the kinds bound to '{}'", field, b.name));
      return bad(where);
    }
  }
  if (!ok) {
    if (b.kinds.empty()) return bad(where);  // kind error already reported
    std::vector<std::string> known;
    for (const auto* it = begin; it != end; ++it) known.emplace_back(it->name);
    for (int32_t k : b.kinds)
      for (const auto& f : kinds[static_cast<size_t>(k)].fields) known.push_back(f.name);
    err("E0204", tail_range(where, field.size()), missing_in.empty() || b.kinds.size() == 1
                            ? fmt::format("'{}' has no field '{}'", missing_in.empty() ? b.name : missing_in, field)
                            : fmt::format("field '{}' is not present in every kind bound to '{}' (missing in '{}')",
                                          field, b.name, missing_in),
        did_you_mean(field, known));
    return bad(where);
  }
  auto e = make(b.symptom ? Op::SymptomField : Op::EventField, t, where);
  e.a = b.slot;
  e.b = fid->second;
  return e;
}

ir::Expr Analyzer::lower_field(const ast::Expr& x, Scope& s) {
  const ast::Expr& base = *x.args[0];
  if (base.kind == ExprKind::Name) {
    if (const Binding* b = s.find(base.text)) return field_of_binding(*b, x.text, x.where);
    if (base.text == "terminal") {
      if (x.text == "state") { auto e = make(Op::Terminal, Type::String, x.where); e.a = 0; return e; }
      if (x.text == "exit_code") { auto e = make(Op::Terminal, Type::Int, x.where); e.a = 1; return e; }
      err("E0204", tail_range(x.where, x.text.size()), fmt::format("'terminal' has no field '{}' (it has state, exit_code)", x.text),
          did_you_mean(x.text, {"state", "exit_code"}));
      return bad(x.where);
    }
    if (base.text == "outcome") {
      if (!s.outcome_visible) {
        err("E0601", x.where, "'outcome' is only known in the post_outcome stage");
        return bad(x.where);
      }
      static const std::pair<const char*, Type> fields[] = {
          {"status", Type::String}, {"domain", Type::String}, {"sub_domain", Type::String}, {"culprits", Type::Int},
          {"basis", Type::String}};
      for (int i = 0; i < 5; ++i)
        if (x.text == fields[i].first) { auto e = make(Op::Outcome, fields[i].second, x.where); e.a = i; return e; }
      err("E0204", tail_range(x.where, x.text.size()),
          fmt::format("'outcome' has no field '{}' (it has status, domain, sub_domain, culprits, basis)", x.text),
          did_you_mean(x.text, {"status", "domain", "sub_domain", "culprits", "basis"}));
      return bad(x.where);
    }
    if (base.text == "workload") {
      if (x.text == "nodes") { auto e = make(Op::Workload, Type::Int, x.where); e.a = 0; return e; }
      if (x.text == "id") { auto e = make(Op::Workload, Type::String, x.where); e.a = 1; return e; }
      if (x.text == "start") { auto e = make(Op::Workload, Type::Time, x.where); e.a = 2; return e; }
      if (x.text == "end") { auto e = make(Op::Workload, Type::Time, x.where); e.a = 3; return e; }
      if (x.text == "scheduler") { auto e = make(Op::Workload, Type::String, x.where); e.a = 4; return e; }
      if (x.text == "node_names") { auto e = make(Op::Workload, Type::String, x.where); e.a = 5; return e; }
      err("E0204", tail_range(x.where, x.text.size()), fmt::format("'workload' has no field '{}' (it has nodes, id, start, end, scheduler, node_names)", x.text),
          did_you_mean(x.text, {"nodes", "id", "start", "end", "scheduler", "node_names"}));
      return bad(x.where);
    }
  }
  err("E0202", base.where, fmt::format("'{}' is not a binding; fields can only be read from a binding, "
                                       "'terminal', 'outcome' or 'workload'",
                                       base.kind == ExprKind::Name ? base.text : std::string("this expression")),
      base.kind == ExprKind::Name ? did_you_mean(base.text, scope_names(s, true)) : std::string());
  return bad(x.where);
}

ir::Expr Analyzer::lower_binary(const ast::Expr& x, Scope& s) {
  ir::Expr l = lower(*x.args[0], s), r = lower(*x.args[1], s);
  const std::string& op = x.op;
  Type a = l.type, b = r.type;
  auto result = [&](Op o, Type t) {
    auto e = make(o, t, x.where);
    e.kids.push_back(std::move(l));
    e.kids.push_back(std::move(r));
    return e;
  };
  auto mismatch = [&]() {
    err("E0301", x.where, fmt::format("operator '{}' cannot take {} and {}", op, type_name(a), type_name(b)));
    return bad(x.where);
  };
  bool any_null = a == Type::Null || b == Type::Null;
  if (op == "and" || op == "or") {
    if ((a != Type::Bool && a != Type::Null) || (b != Type::Bool && b != Type::Null)) return mismatch();
    return result(op == "and" ? Op::And : Op::Or, Type::Bool);
  }
  if (op == "==" || op == "!=" || op == "<" || op == "<=" || op == ">" || op == ">=") {
    if (x.args[0]->kind == ExprKind::NullLit || x.args[1]->kind == ExprKind::NullLit) {
      err("E0301", x.where, "a comparison with null is never true; use 'is null' or 'is not null'");
      return bad(x.where);
    }
    bool same = a == b || (numeric(a) && numeric(b)) || any_null;
    bool ordered = op != "==" && op != "!=";
    if (!same || (ordered && a == Type::Bool)) return mismatch();
    Op o = op == "==" ? Op::Eq : op == "!=" ? Op::Ne : op == "<" ? Op::Lt : op == "<=" ? Op::Le : op == ">" ? Op::Gt : Op::Ge;
    return result(o, Type::Bool);
  }
  if (op == "+") {
    if (a == Type::Int && b == Type::Int) return result(Op::Add, Type::Int);
    if (numeric(a) && numeric(b)) return result(Op::Add, Type::Float);
    if ((a == Type::Time && b == Type::Duration) || (a == Type::Duration && b == Type::Time)) return result(Op::Add, Type::Time);
    if (a == Type::Duration && b == Type::Duration) return result(Op::Add, Type::Duration);
    if (a == Type::String && b == Type::String) return result(Op::Add, Type::String);
    if (any_null) return result(Op::Add, a == Type::Null ? b : a);
    return mismatch();
  }
  if (op == "-") {
    if (a == Type::Int && b == Type::Int) return result(Op::Sub, Type::Int);
    if (numeric(a) && numeric(b)) return result(Op::Sub, Type::Float);
    if (a == Type::Time && b == Type::Time) return result(Op::Sub, Type::Duration);
    if (a == Type::Time && b == Type::Duration) return result(Op::Sub, Type::Time);
    if (a == Type::Duration && b == Type::Duration) return result(Op::Sub, Type::Duration);
    if (any_null && a != Type::String && b != Type::String) return result(Op::Sub, a == Type::Null ? b : a);
    return mismatch();
  }
  if (op == "*") {
    if (a == Type::Int && b == Type::Int) return result(Op::Mul, Type::Int);
    if (numeric(a) && numeric(b)) return result(Op::Mul, Type::Float);
    if ((a == Type::Duration && b == Type::Int) || (a == Type::Int && b == Type::Duration)) return result(Op::Mul, Type::Duration);
    if (any_null && (numeric(a) || numeric(b))) return result(Op::Mul, a == Type::Null ? b : a);
    return mismatch();
  }
  // % << >> & ^ | : integers only
  if ((a != Type::Int && a != Type::Null) || (b != Type::Int && b != Type::Null)) return mismatch();
  Op o = op == "%" ? Op::Mod : op == "<<" ? Op::Shl : op == ">>" ? Op::Shr : op == "&" ? Op::BitAnd : op == "^" ? Op::BitXor : Op::BitOr;
  return result(o, Type::Int);
}

ir::Expr Analyzer::lower_call(const ast::Expr& x, Scope& s) {
  // Group aggregates first: they only exist inside a `group by` rule's actions.
  static const std::pair<const char*, Op> group_fns[] = {
      {"count", Op::GroupCount}, {"distinct", Op::GroupDistinct}, {"values", Op::GroupValues},
      {"first_ts", Op::GroupFirstTs}, {"last_ts", Op::GroupLastTs}};
  for (const auto& [name, op] : group_fns) {
    if (x.text != name) continue;
    size_t want = (op == Op::GroupDistinct || op == Op::GroupValues) ? 1 : 0;
    if (!s.grouped) {
      err("E0304", x.where, fmt::format("'{}()' is a group aggregate: it needs 'group by' and can only be used in actions", name));
      return bad(x.where);
    }
    if (x.args.size() != want) {
      err("E0302", x.where, fmt::format("'{}' takes {} argument{}", name, want, want == 1 ? "" : "s"));
      return bad(x.where);
    }
    Type t = op == Op::GroupCount || op == Op::GroupDistinct ? Type::Int : op == Op::GroupValues ? Type::String : Type::Time;
    auto e = make(op, t, x.where);
    if (want) {
      // The argument is evaluated per group member, with slot 0 bound to it.
      e.kids.push_back(lower(*x.args[0], s));
    }
    return e;
  }
  if (x.text == "lookup") return lower_lookup(x, s);  // sema_tables.cpp
  const BuiltinFn* fn = nullptr;
  for (const auto& f : kFunctions)
    if (x.text == f.name) fn = &f;
  if (!fn) {
    std::vector<std::string> fns;
    for (const auto& f : kFunctions) fns.emplace_back(f.name);
    for (const auto& [name, op] : group_fns) fns.emplace_back(name);
    for (const char* q : {"exists", "none", "nodes", "max", "min", "lookup"}) fns.emplace_back(q);
    err("E0202", head_range(x.where, x.text.size()), fmt::format("unknown function '{}'", x.text), did_you_mean(x.text, fns));
    for (const auto& a : x.args) lower(*a, s);  // mistakes inside the arguments are mistakes of their own
    return bad(x.where);
  }
  if (static_cast<int>(x.args.size()) < fn->min_args || static_cast<int>(x.args.size()) > fn->max_args) {
    err("E0302", x.where, fn->min_args == fn->max_args
                              ? fmt::format("'{}' takes {} argument{}", fn->name, fn->min_args, fn->min_args == 1 ? "" : "s")
                              : fmt::format("'{}' takes {} to {} arguments", fn->name, fn->min_args, fn->max_args));
    return bad(x.where);
  }
  auto e = make(Op::Call, Type::Null, x.where);
  e.a = static_cast<int32_t>(fn->id);
  if (fn->id == ir::Builtin::Covered || fn->id == ir::Builtin::Coverage) {
    // The source is written as a bare name (`covered(kernel, e.node)`).
    const ast::Expr& src = *x.args[0];
    if (src.kind != ExprKind::Name && src.kind != ExprKind::StringLit) {
      err("E0301", src.where, fmt::format("the first argument of '{}' is a source name such as kernel or app", fn->name));
      return bad(x.where);
    }
    auto c = make(Op::Const, Type::String, src.where);
    c.constant = Value::string(src.text);
    e.kids.push_back(std::move(c));
    if (fn->id == ir::Builtin::Covered) {
      auto n = lower(*x.args[1], s);
      if (n.type != Type::String && n.type != Type::Null) {
        err("E0301", x.args[1]->where, "the node argument of 'covered' must be a string");
        return bad(x.where);
      }
      e.kids.push_back(std::move(n));
      e.type = Type::Bool;
    } else {
      e.type = Type::Float;
    }
    return e;
  }
  for (const auto& a : x.args) e.kids.push_back(lower(*a, s));
  auto arg = [&](size_t i) { return e.kids[i].type; };
  auto want = [&](size_t i, std::initializer_list<Type> ok) {
    if (arg(i) == Type::Null) return true;
    for (Type t : ok)
      if (arg(i) == t) return true;
    std::string names;
    for (Type t : ok) names += (names.empty() ? "" : " or ") + std::string(type_name(t));
    err("E0301", x.args[i]->where, fmt::format("argument {} of '{}' must be {}, not {}", i + 1, fn->name, names, type_name(arg(i))));
    return false;
  };
  bool ok = true;
  switch (fn->id) {
    case ir::Builtin::Int: ok = want(0, {Type::String, Type::Int, Type::Float}); e.type = Type::Int; break;
    case ir::Builtin::Hex: ok = want(0, {Type::String, Type::Int}); e.type = Type::Int; break;
    case ir::Builtin::Float: ok = want(0, {Type::String, Type::Int, Type::Float}); e.type = Type::Float; break;
    case ir::Builtin::Duration:
      ok = want(0, {Type::Int, Type::Float, Type::String});
      if (x.args[1]->kind != ExprKind::StringLit || !one_of(x.args[1]->text, std::array{"ns", "us", "ms", "s", "m", "h"})) {
        err("E0301", x.args[1]->where, "the unit of 'duration' must be one of \"ns\", \"us\", \"ms\", \"s\", \"m\", \"h\"");
        ok = false;
      }
      e.type = Type::Duration;
      break;
    case ir::Builtin::Seconds: ok = want(0, {Type::Duration}); e.type = Type::Float; break;
    case ir::Builtin::Lower: case ir::Builtin::Upper: case ir::Builtin::Trim:
      ok = want(0, {Type::String}); e.type = Type::String; break;
    case ir::Builtin::Len: ok = want(0, {Type::String}); e.type = Type::Int; break;
    case ir::Builtin::Contains: case ir::Builtin::StartsWith: case ir::Builtin::EndsWith:
      ok = want(0, {Type::String}) && want(1, {Type::String}); e.type = Type::Bool; break;
    case ir::Builtin::Str: e.type = Type::String; break;
    case ir::Builtin::Time: ok = want(0, {Type::String}); e.type = Type::Time; break;
    case ir::Builtin::IsNode: ok = want(0, {Type::String}); e.type = Type::Bool; break;
    case ir::Builtin::RankNode: ok = want(0, {Type::Int}); e.type = Type::String; break;
    case ir::Builtin::Gaps: ok = want(0, {Type::String}); e.type = Type::String; break;
    case ir::Builtin::HostNode: ok = want(0, {Type::String}); e.type = Type::String; break;
    case ir::Builtin::If: {
      ok = want(0, {Type::Bool});
      Type a = arg(1), b = arg(2);
      if (a != Type::Null && b != Type::Null && a != b && !(numeric(a) && numeric(b))) {
        err("E0301", x.where, fmt::format("'if' branches must share one type ({} vs {})", type_name(a), type_name(b)));
        ok = false;
      }
      e.type = a == Type::Null ? b : (numeric(a) && numeric(b) && a != b) ? Type::Float : a;
      break;
    }
    case ir::Builtin::Coalesce: {
      Type t = Type::Null;
      for (size_t i = 0; i < e.kids.size(); ++i) {
        Type k = arg(i);
        if (k == Type::Null) continue;
        if (t == Type::Null) t = k;
        else if (k != t) {
          err("E0301", x.args[i]->where, fmt::format("'coalesce' arguments must share one type ({} vs {})", type_name(t), type_name(k)));
          ok = false;
        }
      }
      e.type = t;
      break;
    }
    default: break;
  }
  return ok ? std::move(e) : bad(x.where);
}

ir::Query Analyzer::lower_query(const ast::Query& q, const std::string& binding, const SourceRange& binding_range, Scope& s,
                      Binding* bound_out) {
  ir::Query out;
  out.symptom = q.symptom;
  out.kinds = resolve_kinds(q.symptom, q.kind_pattern, q.kind_range);
  out.relation = q.relation == ast::NodeRelation::Same ? ir::NodeRelation::Same
               : q.relation == ast::NodeRelation::Other ? ir::NodeRelation::Other : ir::NodeRelation::Any;
  if (out.relation != ir::NodeRelation::Any) {
    const Binding* f = s.bindings.empty() ? nullptr : &s.bindings.front();
    if (!f || f->slot != 0) {
      err("E0602", q.where, "'on same node' / 'on other nodes' compare with the rule's 'for' binding, and this rule has none");
    }
    out.relation_slot = 0;
  }
  if (q.has_within) {
    const Binding* anchor = s.find(q.anchor);
    if (!anchor) {
      err("E0602", q.anchor_range, fmt::format("'within ... {}' needs a binding named '{}'", q.anchor, q.anchor),
          did_you_mean(q.anchor, scope_names(s, false)));
    } else {
      out.anchor_slot = anchor->slot;
      out.anchor_is_symptom = anchor->symptom;
    }
    out.has_within = true;
    out.within_ns = q.within_ns;
    out.direction = q.direction == ast::WithinDirection::Before ? ir::WithinDirection::Before
                  : q.direction == ast::WithinDirection::After ? ir::WithinDirection::After : ir::WithinDirection::Around;
  }
  Binding b{binding, (*s.next_slot)++, q.symptom, out.kinds};
  s.slot_is_symptom->push_back(q.symptom);
  out.bind_slot = b.slot;
  if (s.find(binding)) err("E0101", binding_range, fmt::format("binding '{}' is already defined in this rule", binding));
  if (q.filter) {
    Scope inner = s;
    inner.bindings.push_back(b);
    inner.grouped = false;
    auto f = lower(*q.filter, inner);
    if (f.type != Type::Bool && f.type != Type::Null)
      err("E0301", q.filter->where, fmt::format("a 'where' condition must be bool, not {}", type_name(f.type)));
    out.filter = std::move(f);
  }
  if (bound_out) *bound_out = b;
  return out;
}

ir::Expr Analyzer::lower_interpolation(const std::string& text, const SourceRange& where, Scope& s) {
  auto e = make(Op::Interpolate, Type::String, where);
  std::string lit;
  auto flush = [&]() {
    if (lit.empty()) return;
    auto c = make(Op::Const, Type::String, where);
    c.constant = Value::string(lit);
    e.kids.push_back(std::move(c));
    lit.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{' && i + 1 < text.size() && text[i + 1] == '{') { lit += '{'; ++i; continue; }
    if (text[i] == '}' && i + 1 < text.size() && text[i + 1] == '}') { lit += '}'; ++i; continue; }
    if (text[i] != '{') { lit += text[i]; continue; }
    size_t close = text.find('}', i);
    if (close == std::string::npos) {
      err("E0001", literal_sub_range(where, i, i + 1, true), "unclosed '{' in string interpolation",
          "close it with '}', or write '{{' for a literal brace");
      return bad(where);
    }
    SourceRange at = literal_sub_range(where, i, close + 1, true);
    std::string path(trim(std::string_view(text).substr(i + 1, close - i - 1)));
    auto parts = split(path, '.');
    bool valid = !parts.empty();
    for (auto p : parts)
      valid = valid && !p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!valid) {
      err("E0001", at, fmt::format("'{{{}}}' is not an interpolation path like {{x.node}}", path),
          "write a binding's field such as {x.node}, or '{{' and '}}' for literal braces");
      return bad(where);
    }
    if (parts.size() > limits::kExprDepth) {
      err("E0703", where, limits::exceeded("expr_depth", limits::kExprDepth, "the interpolation path has more fields"));
      return bad(where);
    }
    // Build the path as an expression so it resolves like written code.
    auto node = std::make_unique<ast::Expr>();
    node->kind = ExprKind::Name;
    // Each part's range is the placeholder up to the end of that part, so
    // a bad name or field is underlined where it is written.
    size_t inner = text.find_first_not_of(" \t", i + 1);
    node->text = std::string(parts[0]);
    node->where = literal_sub_range(where, inner, inner + parts[0].size(), true);
    size_t upto = inner + parts[0].size();
    for (size_t k = 1; k < parts.size(); ++k) {
      auto f = std::make_unique<ast::Expr>();
      f->kind = ExprKind::Field;
      f->text = std::string(parts[k]);
      upto += 1 + parts[k].size();
      f->where = literal_sub_range(where, inner, upto, true);
      f->args.push_back(std::move(node));
      node = std::move(f);
    }
    flush();
    e.kids.push_back(lower(*node, s));
    i = close;
  }
  flush();
  return e;
}

ir::Expr Analyzer::lower(const ast::Expr& x, Scope& s) {
  switch (x.kind) {
    case ExprKind::IntLit: { auto e = make(Op::Const, Type::Int, x.where); e.constant = Value::integer(x.int_value); return e; }
    case ExprKind::FloatLit: { auto e = make(Op::Const, Type::Float, x.where); e.constant = Value::real(x.float_value); return e; }
    case ExprKind::DurationLit: { auto e = make(Op::Const, Type::Duration, x.where); e.constant = Value::duration(x.int_value); return e; }
    case ExprKind::BoolLit: { auto e = make(Op::Const, Type::Bool, x.where); e.constant = Value::boolean(x.bool_value); return e; }
    case ExprKind::NullLit: return make(Op::Const, Type::Null, x.where);
    case ExprKind::StringLit: {
      if (x.text.find('{') != std::string::npos || x.text.find('}') != std::string::npos)
        return lower_interpolation(x.text, x.where, s);
      auto e = make(Op::Const, Type::String, x.where);
      e.constant = Value::string(x.text);
      return e;
    }
    case ExprKind::Name: {
      if (s.captures) {
        if (s.capture_clause) {
          if (auto e = capture_of_clauses(x, s)) return std::move(*e);
        }
        for (size_t i = 0; i < s.captures->size(); ++i) {
          if ((*s.captures)[i] == x.text) {
            auto e = make(Op::Capture, Type::String, x.where);
            e.a = static_cast<int32_t>(i);
            return e;
          }
        }
        if (!s.captures_unknown) {
          std::vector<std::string> caps;
          for (const auto& c : *s.captures)
            if (!c.empty()) caps.push_back(c);
          std::string help = did_you_mean(x.text, caps);
          if (help.empty()) help = "name the group in the regex: (?<" + x.text + ">...)";
          err("E0403", x.where, fmt::format("'{}' is not a named capture of this extractor's regex", x.text), help);
        }
        return bad(x.where);
      }
      if (s.find(x.text)) {
        err("E0301", x.where, fmt::format("'{}' is a binding; read one of its fields, such as {}.node or {}.ts", x.text, x.text, x.text));
        return bad(x.where);
      }
      if (x.text == "terminal" || x.text == "outcome" || x.text == "workload") {
        err("E0301", x.where, fmt::format("'{}' is a record; read one of its fields", x.text));
        return bad(x.where);
      }
      err("E0202", x.where, fmt::format("unknown name '{}'", x.text), did_you_mean(x.text, scope_names(s, true)));
      return bad(x.where);
    }
    case ExprKind::Field: return lower_field(x, s);
    case ExprKind::Unary: {
      auto k = lower(*x.args[0], s);
      if (x.op == "not") {
        if (k.type != Type::Bool && k.type != Type::Null) {
          err("E0301", x.where, fmt::format("'not' needs a bool, not {}", type_name(k.type)));
          return bad(x.where);
        }
        auto e = make(Op::Not, Type::Bool, x.where);
        e.kids.push_back(std::move(k));
        return e;
      }
      if (k.op == Op::Const && (k.type == Type::Int || k.type == Type::Float || k.type == Type::Duration)) {
        k.constant.i = -k.constant.i;
        k.constant.f = -k.constant.f;
        k.where = x.where;
        return k;
      }
      if (!numeric(k.type) && k.type != Type::Duration && k.type != Type::Null) {
        err("E0301", x.where, fmt::format("unary '-' needs a number or duration, not {}", type_name(k.type)));
        return bad(x.where);
      }
      auto e = make(Op::Neg, k.type, x.where);
      e.kids.push_back(std::move(k));
      return e;
    }
    case ExprKind::Binary: return lower_binary(x, s);
    case ExprKind::Matches: {
      auto k = lower(*x.args[0], s);
      if (k.type != Type::String && k.type != Type::Null) {
        err("E0301", x.where, fmt::format("'matches' needs a string, not {}", type_name(k.type)));
        return bad(x.where);
      }
      bool caseless = x.regex_flags.find('i') != std::string::npos;
      bool dotall = x.regex_flags.find('s') != std::string::npos;
      auto expanded = expand_table_refs(x.text, x.regex_range.file ? x.regex_range : x.where);
      if (!expanded) return bad(x.where);
      // With a column expanded, the engines' offsets are not the literal's.
      const bool as_written = *expanded == x.text;
      auto check = check_regex(*expanded, caseless, dotall, /*scanned=*/false);  // RE2 only
      if (!check.limit_error.empty()) {
        err(check.limit_code.c_str(), x.regex_range.file ? x.regex_range : x.where, check.limit_error);
        return bad(x.where);
      }
      if (!check.re2_error.empty()) {
        SourceRange at = x.regex_range.file ? x.regex_range : x.where;
        if (check.re2_error_offset >= 0 && as_written)
          at = literal_sub_range(at, static_cast<size_t>(check.re2_error_offset),
                                 static_cast<size_t>(check.re2_error_offset + std::max<int64_t>(1, check.re2_error_length)), false);
        err("E0402", at, fmt::format("RE2 rejects this regex: {}", check.re2_error), regex_help(check));
        return bad(x.where);
      }
      auto e = make(Op::Matches, Type::Bool, x.where);
      e.a = static_cast<int32_t>(cat_.regexes.size());
      cat_.regexes.push_back({check.re2_pattern, caseless, dotall});
      e.kids.push_back(std::move(k));
      return e;
    }
    case ExprKind::IsNull: {
      auto e = make(x.negated ? Op::IsNotNull : Op::IsNull, Type::Bool, x.where);
      e.kids.push_back(lower(*x.args[0], s));
      return e;
    }
    case ExprKind::In: {
      auto e = make(x.negated ? Op::NotIn : Op::In, Type::Bool, x.where);
      for (const auto& a : x.args) e.kids.push_back(lower(*a, s));
      Type t = e.kids[0].type;
      for (size_t i = 1; i < e.kids.size(); ++i) {
        Type k = e.kids[i].type;
        if (t != Type::Null && k != Type::Null && k != t && !(numeric(k) && numeric(t))) {
          err("E0301", x.args[i]->where, fmt::format("'in' list element is {} but the value is {}", type_name(k), type_name(t)));
          return bad(x.where);
        }
      }
      return e;
    }
    case ExprKind::Call: return lower_call(x, s);
    case ExprKind::Order: return lower_order(x, s);
    case ExprKind::QueryAggregate: {
      if (s.captures) {
        err("E0601", x.where, "queries over events and symptoms are not available in an extractor's emit");
        return bad(x.where);
      }
      Binding b;
      Scope outer = s;
      auto q = lower_query(*x.query, x.binding, x.binding_range, s, &b);
      Op op = x.text == "exists" ? Op::QueryExists : x.text == "none" ? Op::QueryNone : x.text == "count" ? Op::QueryCount
            : x.text == "nodes" ? Op::QueryNodes : x.text == "max" ? Op::QueryMax : Op::QueryMin;
      Type t = op == Op::QueryExists || op == Op::QueryNone ? Type::Bool : Type::Int;
      auto e = make(op, t, x.where);
      if (op == Op::QueryMax || op == Op::QueryMin) {
        Scope inner = outer;
        inner.bindings.push_back(b);
        inner.grouped = false;
        auto v = lower(*x.args[0], inner);
        if (!numeric(v.type) && v.type != Type::Time && v.type != Type::Duration && v.type != Type::String && v.type != Type::Null) {
          err("E0301", x.args[0]->where, fmt::format("'{}' needs an ordered value, not {}", x.text, type_name(v.type)));
          return bad(x.where);
        }
        e.type = v.type;
        e.kids.push_back(std::move(v));
      }
      // The index is taken only now: the value expression may have added
      // queries of its own.
      e.a = static_cast<int32_t>(queries_.size());
      queries_.push_back(std::move(q));
      return e;
    }
  }
  return bad(x.where);
}

std::optional<Value> Analyzer::constant_of(const ast::Expr& x) {
  switch (x.kind) {
    case ExprKind::IntLit: return Value::integer(x.int_value);
    case ExprKind::FloatLit: return Value::real(x.float_value);
    case ExprKind::DurationLit: return Value::duration(x.int_value);
    case ExprKind::StringLit: return Value::string(x.text);
    case ExprKind::BoolLit: return Value::boolean(x.bool_value);
    case ExprKind::NullLit: return Value::null();
    case ExprKind::Unary:
      if (x.op == "-") {
        auto v = constant_of(*x.args[0]);
        if (v && (v->type == Type::Int || v->type == Type::Duration)) { v->i = -v->i; return v; }
        if (v && v->type == Type::Float) { v->f = -v->f; return v; }
      }
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace culprit::sema_internal
